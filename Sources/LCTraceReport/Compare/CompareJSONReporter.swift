import LCTraceModel
import LCTraceFormat

/// `compare --format json`: `{"base":{…},"head":{…},"new":[…],"fixed":[…],"persisting":[…],
/// "regressions":[…]}` in the shapes the README documents.
package enum CompareJSONReporter: ComparisonReporter {
    package static let id = "json"
    package static let summary = "one JSON document"

    package static func render(_ c: BuildComparison) -> String {
        func side(_ s: ComparisonSide) -> String { "{\"build\":\(jsonString(s.build)),\"sessions\":\(s.sessions)}" }
        func entry(_ e: ComparedIdentity) -> String {
            "{\"identity\":\(jsonString(e.identity)),\"identity_key\":\(jsonString(e.identityKey)),\"rule\":\(jsonString(e.rule.id)),"
                + "\"severity\":\(jsonString(e.rule.severity.rawValue)),\"class\":\(e.cls.map(jsonString) ?? "null"),"
                + "\"base_count\":\(e.baseCount),\"head_count\":\(e.headCount),"
                + "\"base_per_100\":\(DetailValue.double(e.basePer100).json),\"head_per_100\":\(DetailValue.double(e.headPer100).json)}"
        }
        func ms(_ ns: Int64) -> String { DetailValue.ms(ns).json }
        func regression(_ t: TimingComparison) -> String {
            "{\"class\":\(jsonString(t.cls)),\"animated\":\(t.animated),\"base_n\":\(t.baseN),\"head_n\":\(t.headN),"
                + "\"base_p50_ms\":\(ms(t.baseP50)),\"base_p90_ms\":\(ms(t.baseP90)),\"head_p50_ms\":\(ms(t.headP50)),"
                + "\"head_p90_ms\":\(ms(t.headP90)),\"p_value\":\(t.pValue)}"
        }
        func list(_ items: [String]) -> String { items.isEmpty ? "[]" : "[\n  " + items.joined(separator: ",\n  ") + "\n ]" }
        var out = "{\"base\":\(side(c.base)),\"head\":\(side(c.head)),\n"
        out += " \"new\":\(list(c.new.map(entry))),\n \"fixed\":\(list(c.fixed.map(entry))),\n"
        out += " \"persisting\":\(list(c.persisting.map(entry))),\n \"regressions\":\(list(c.regressions.map(regression)))}\n"
        return out
    }
}
