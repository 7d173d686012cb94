import LCTraceFormat
import LCTraceModel

/// `--format json`: the document of rules.md, each finding with its identity, session context
/// and typed detail; under a baseline each finding says new or known and the document lists
/// what the baseline holds that was not seen (`fixed`).
enum JSONReporter: StreamingReporter {
    package static let id = "json"
    package static let summary = "one JSON document, each finding as docs/rule-reference.md describes it"

    /// Keys of a finding, in order; CSV has the same columns (`detail` as JSON text).
    package static let columns = ["rule", "name", "severity", "session", "vc", "since", "class", "t", "message", "evidence",
                                 "confidence", "file", "identity", "identity_key", "app", "build", "device", "baseline", "detail"]

    package static func writer(_ options: ReportOptions, to sink: @escaping ([UInt8]) throws -> Void) -> any FindingWriter {
        Writer(sink)
    }

    /// The document: its findings as they come, then the baseline and the summary.
    final class Writer: FindingWriter {
        private var json: JSONWriter

        init(_ sink: @escaping ([UInt8]) throws -> Void) {
            json = JSONWriter(sink: sink)
            json.beginObject()
            json.key("version"); json.int(1)
            // A finding a line; the document's own keys each on a line of their own.
            json.layout("\n "); json.key("findings")
            json.beginArray()
        }

        func add(_ f: Finding, state: BaselineState?) throws {
            json.layout("\n  ")
            JSONReporter.finding(f, state: state, into: &json)
            try json.flushIfFull()
        }

        func finish(_ view: ReportView) throws {
            json.endArray(layout: "\n ")
            if let baseline = view.options.baseline {
                json.layout("\n "); json.key("baseline")
                json.beginObject()
                json.key("file"); json.string(baseline.file)
                json.key("new"); json.int(view.newFindings)
                json.key("known"); json.int(view.knownFindings)
                json.key("fixed")
                json.beginArray()
                for entry in view.fixed { entry.write(to: &json); try json.flushIfFull() }
                json.endArray()
                json.endObject()
            }
            json.layout("\n "); json.key("summary")
            json.beginObject()
            json.key("sessions"); json.int(view.data.sessions.count)
            json.key("events"); json.int(view.data.events)
            json.key("findings"); json.int(view.findings.count)
            json.key("identities"); json.int(view.identities.count)
            json.key("by_rule")
            json.beginObject()
            for rule in view.byRule.keys.sorted() { json.key(rule); json.int(view.byRule[rule]!) }
            json.endObject()
            json.endObject()
            json.endObject()
            json.raw("\n")
            try json.flush()
        }
    }

    /// A finding as an object, its keys those of `columns` in their order.
    static func finding(_ f: Finding, state: BaselineState?, into json: inout JSONWriter) {
        json.beginObject()
        json.key("rule"); json.string(f.rule)
        json.key("name"); json.string(f.name)
        json.key("severity"); json.string(f.severity.rawValue)
        json.key("session"); json.string(f.session)
        json.key("vc"); json.string(f.vc)
        json.key("since"); json.int(f.since)
        json.key("class"); json.string(f.cls)
        json.key("t"); json.int(f.t)
        json.key("message"); json.string(f.message)
        json.key("evidence")
        json.beginArray()
        for seq in f.evidence { json.int(seq) }
        json.endArray()
        json.key("confidence"); json.string(f.confidence)
        json.key("file"); json.string(f.file)
        json.key("identity"); json.string(f.identity)
        json.key("identity_key"); json.string(f.identityKey)
        json.key("app"); json.string(f.app)
        json.key("build"); json.string(f.build)
        json.key("device"); json.string(f.device)
        json.key("baseline"); json.string(state?.rawValue)
        json.key("detail"); json.detail(f.detail)
        json.endObject()
    }
}
