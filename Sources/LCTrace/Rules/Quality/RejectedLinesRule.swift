/// LC904 rejected-lines (warning). File-level: built from the `rejects` table, not a session.
///
/// Finds: lines rejected at ingest, per file, with the most common reasons; a damaged stream
/// (truncated or corrupt gzip) is reported in the same finding.
///
/// Does not flag: blank lines (ignored by the format); exact duplicates of stored events.
public enum RejectedLinesRule {
    public static let info = RuleInfo(id: "LC904", name: "rejected-lines", severity: .warning, family: .quality,
                                      summary: "lines rejected at ingest")

    /// One file's problems, as read from the database.
    public struct FileProblems {
        public var path: String
        public var rejects: Int
        public var conflicts: Int
        public var damage: String?
        /// (reason, count), most common first.
        public var reasons: [(String, Int)]
        public var lines: [Int64]
    }

    public static func check(_ file: FileProblems) -> Finding? {
        guard file.rejects > 0 || file.conflicts > 0 || file.damage != nil else { return nil }
        var parts: [String] = []
        if file.rejects > 0 {
            let top = file.reasons.prefix(3).map { "\($0.1) × \($0.0)" }.joined(separator: "; ")
            parts.append("\(file.rejects) line\(file.rejects == 1 ? "" : "s") rejected (\(top)\(file.reasons.count > 3 ? "; …" : ""))")
        }
        if file.conflicts > 0 { parts.append("\(file.conflicts) conflicting duplicate\(file.conflicts == 1 ? "" : "s")") }
        if let damage = file.damage { parts.append("damaged: \(damage)") }
        return Finding(rule: info, session: nil, t: nil, message: "\(file.path): " + parts.joined(separator: ", "),
                       evidence: [], file: file.path,
                       detail: ["lines": file.lines.prefix(20).map(String.init).joined(separator: ",")])
    }

    /// Strips positions from a reason so that equal problems group together.
    public static func group(_ reason: String) -> String {
        var text = reason
        if let r = text.range(of: " at column ") { text = String(text[..<r.lowerBound]) }
        if text.hasPrefix("line longer than") { return "line longer than the limit" }
        if text.hasPrefix("conflicting duplicate") { return "conflicting duplicate" }
        return text
    }
}
