import LCTraceModel
import LCTraceFormat

/// `compare --format json`: `{"base":{…},"head":{…},"new":[…],"fixed":[…],"persisting":[…],
/// "regressions":[…]}` in the shapes the README documents.
enum CompareJSONReporter: ComparisonReporter {
    package static let id = "json"
    package static let summary = "one JSON document"

    package static func render(_ c: BuildComparison) -> String {
        var json = JSONWriter(capacity: 1024)
        func side(_ s: ComparisonSide) {
            json.beginObject()
            json.key("build"); json.string(s.build)
            json.key("sessions"); json.int(s.sessions)
            json.endObject()
        }
        func entry(_ e: ComparedIdentity) {
            json.beginObject()
            json.key("identity"); json.string(e.identity)
            json.key("identity_key"); json.string(e.identityKey)
            json.key("rule"); json.string(e.rule.id)
            json.key("severity"); json.string(e.rule.severity.rawValue)
            json.key("class"); json.string(e.cls)
            json.key("base_count"); json.int(e.baseCount)
            json.key("head_count"); json.int(e.headCount)
            json.key("base_per_100"); json.double(e.basePer100)
            json.key("head_per_100"); json.double(e.headPer100)
            json.endObject()
        }
        func regression(_ t: TimingComparison) {
            json.beginObject()
            json.key("class"); json.string(t.cls)
            json.key("animated"); json.bool(t.animated)
            json.key("base_n"); json.int(t.baseN)
            json.key("head_n"); json.int(t.headN)
            json.key("base_p50_ms"); json.value(.ms(t.baseP50))
            json.key("base_p90_ms"); json.value(.ms(t.baseP90))
            json.key("head_p50_ms"); json.value(.ms(t.headP50))
            json.key("head_p90_ms"); json.value(.ms(t.headP90))
            json.key("p_value"); json.double(t.pValue)
            json.endObject()
        }
        /// A list an element a line; the document's keys each on a line of their own.
        func list<T>(_ key: String, _ items: [T], _ write: (T) -> Void) {
            json.layout("\n ")
            json.key(key)
            json.beginArray()
            for item in items {
                json.layout("\n  ")
                write(item)
            }
            json.endArray(layout: "\n ")
        }
        json.beginObject()
        json.key("base"); side(c.base)
        json.key("head"); side(c.head)
        list("new", c.new, entry)
        list("fixed", c.fixed, entry)
        list("persisting", c.persisting, entry)
        list("regressions", c.regressions, regression)
        json.endObject()
        json.raw("\n")
        return json.text
    }
}
