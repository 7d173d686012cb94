/// The machine-readable report of rules.md: one JSON document, or CSV with the same columns.
public enum MachineReport {
    /// Columns of a finding, in JSON key order and CSV column order.
    public static let columns = ["rule", "name", "severity", "session", "vc", "since", "class", "t",
                                 "message", "evidence", "confidence", "file"]

    public static func json(_ data: ReportData) -> String {
        var byRule: [String: Int] = [:]
        for f in data.findings { byRule[f.rule, default: 0] += 1 }
        var out = "{\"version\":1,\n \"findings\":["
        for (i, f) in data.findings.enumerated() {
            out += i == 0 ? "\n  " : ",\n  "
            out += "{\"rule\":\(jsonString(f.rule)),\"name\":\(jsonString(f.name)),\"severity\":\(jsonString(f.severity.rawValue)),"
            out += "\"session\":\(f.session.map(jsonString) ?? "null"),\"vc\":\(f.vc.map(jsonString) ?? "null"),"
            out += "\"since\":\(f.since.map(String.init) ?? "null"),\"class\":\(f.cls.map(jsonString) ?? "null"),"
            out += "\"t\":\(f.t.map(String.init) ?? "null"),\"message\":\(jsonString(f.message)),"
            out += "\"evidence\":[\(f.evidence.map(String.init).joined(separator: ","))],"
            out += "\"confidence\":\(jsonString(f.confidence)),\"file\":\(f.file.map(jsonString) ?? "null")"
            if !f.detail.isEmpty { out += ",\"detail\":\(encodeDetail(f.detail))" }
            out += "}"
        }
        out += data.findings.isEmpty ? "],\n" : "\n ],\n"
        let rules = byRule.keys.sorted().map { "\(jsonString($0)):\(byRule[$0]!)" }.joined(separator: ",")
        out += " \"summary\":{\"sessions\":\(data.sessions.count),\"events\":\(data.events),\"findings\":\(data.findings.count),\"by_rule\":{\(rules)}}}\n"
        return out
    }

    /// With `neutralizeFormulas`, cells a spreadsheet would run as formulas start with `'`
    /// (`--safe-csv`).
    public static func csv(_ data: ReportData, neutralizeFormulas: Bool = false) -> String {
        var out = columns.joined(separator: ",") + "\n"
        for f in data.findings {
            let cells: [String] = [
                f.rule, f.name, f.severity.rawValue, f.session ?? "", f.vc ?? "", f.since.map(String.init) ?? "",
                f.cls ?? "", f.t.map(String.init) ?? "", f.message,
                "[" + f.evidence.map(String.init).joined(separator: ",") + "]", f.confidence, f.file ?? "",
            ]
            out += cells.map { RowFormatter.csvField($0, neutralize: neutralizeFormulas) }.joined(separator: ",") + "\n"
        }
        return out
    }
}
