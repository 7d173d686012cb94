import LCTraceModel

/// `--format csv`: the JSON findings' columns, one row per finding, `detail` as a JSON object.
enum CSVReporter: Reporter {
    package static let id = "csv"
    package static let summary = "one row per finding, the JSON keys as columns"

    package static func render(_ view: ReportView) -> String {
        var out = JSONReporter.columns.joined(separator: ",") + "\n"
        for (i, f) in view.findings.enumerated() {
            let cells: [String] = [
                f.rule, f.name, f.severity.rawValue, f.session ?? "", f.vc ?? "", f.since.map(String.init) ?? "",
                f.cls ?? "", f.t.map(String.init) ?? "", f.message,
                "[" + f.evidence.map(String.init).joined(separator: ",") + "]", f.confidence, f.file ?? "",
                f.identity, f.identityKey, f.app ?? "", f.build ?? "", f.device ?? "", view.state(ofFinding: i)?.rawValue ?? "",
                DetailValue.encode(f.detail),
            ]
            out += cells.map { RowFormatter.csvField($0, neutralize: view.options.neutralizesFormulas) }.joined(separator: ",") + "\n"
        }
        return out
    }
}
