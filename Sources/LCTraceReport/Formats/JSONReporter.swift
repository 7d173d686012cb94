import LCTraceFormat
import LCTraceModel

/// `--format json`: the document of rules.md, each finding with its identity, session context
/// and typed detail; under a baseline each finding says new or known and the document lists
/// what the baseline holds that was not seen (`fixed`).
package enum JSONReporter: Reporter {
    package static let id = "json"
    package static let summary = "one JSON document, the shape of rules.md"

    /// Keys of a finding, in order; CSV has the same columns (`detail` as JSON text).
    package static let columns = ["rule", "name", "severity", "session", "vc", "since", "class", "t", "message", "evidence",
                                 "confidence", "file", "identity", "identity_key", "app", "build", "device", "baseline", "detail"]

    package static func render(_ view: ReportView) -> String {
        var byRule: [String: Int] = [:]
        for f in view.findings { byRule[f.rule, default: 0] += 1 }
        var out = "{\"version\":1,\n \"findings\":["
        for (i, f) in view.findings.enumerated() {
            out += i == 0 ? "\n  " : ",\n  "
            out += "{" + zip(columns, values(f, state: view.state(ofFinding: i))).map { "\"\($0)\":\($1)" }.joined(separator: ",") + "}"
        }
        out += view.findings.isEmpty ? "],\n" : "\n ],\n"
        if let baseline = view.options.baseline {
            out += " \"baseline\":{\"file\":\(jsonString(baseline.file)),\"new\":\(view.newFindings),\"known\":\(view.knownFindings),"
            out += "\"fixed\":[" + view.fixed.map(\.json).joined(separator: ",") + "]},\n"
        }
        let rules = byRule.keys.sorted().map { "\(jsonString($0)):\(byRule[$0]!)" }.joined(separator: ",")
        out += " \"summary\":{\"sessions\":\(view.data.sessions.count),\"events\":\(view.data.events),\"findings\":\(view.findings.count),"
        out += "\"identities\":\(view.identities.count),\"by_rule\":{\(rules)}}}\n"
        return out
    }

    /// The JSON values of a finding, in `columns` order.
    package static func values(_ f: Finding, state: BaselineState?) -> [String] {
        func text(_ s: String?) -> String { s.map(jsonString) ?? "null" }
        func number(_ n: Int64?) -> String { n.map(String.init) ?? "null" }
        return [text(f.rule), text(f.name), text(f.severity.rawValue), text(f.session), text(f.vc), number(f.since),
                text(f.cls), number(f.t), text(f.message), "[" + f.evidence.map(String.init).joined(separator: ",") + "]",
                text(f.confidence), text(f.file), text(f.identity), text(f.identityKey), text(f.app), text(f.build),
                text(f.device), text(state?.rawValue), DetailValue.encode(f.detail)]
    }
}
