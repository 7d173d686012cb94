import LCTraceModel

/// LC904 rejected-lines (warning). File-level: built from the `rejects` table, not a session.
///
/// Finds: lines rejected at ingest, per file and kind of reason (not JSON, a missing key, a
/// wrong type, …), with the most common reasons; a damaged stream (truncated or corrupt
/// gzip) and conflicting duplicates are reported the same way. One finding per file and
/// kind, so that each has one identity (`LC904|?|not-json`: a file belongs to no session, so
/// its app is not known).
///
/// Does not flag: blank lines (ignored by the format); exact duplicates of stored events.
package enum RejectedLinesRule {
    package static let info = RuleInfo(id: "LC904", name: "rejected-lines", severity: .warning, family: .quality,
                                      summary: "lines rejected at ingest",
                                      explanation: "Lines rejected at ingest (not JSON, a missing required key, a wrong type, a newer format version, …), conflicting duplicates of stored events and damaged streams (truncated or corrupt gzip), per file and kind of problem, with the most common reasons. The rest of each file was loaded; the lines themselves are in the rejects table. Not flagged: blank lines (the format ignores them); exact duplicates of stored events.",
                                      help: "Fix the recorder or the transfer that wrote the file (lctrace query \"SELECT line, reason FROM rejects …\" lists every line).",
                               report: ReportNeeds(sourcePlace: .none),
                               keyParts: "the kind of problem: `not-json`, `not-utf8`, `too-deep`, `cut-line`, `line-too-long`, `too-many-keys`, `duplicate-key`, `missing-key`, `wrong-type`, `newer-version`, `bad-value`, `conflicting-duplicate`, `truncated-gzip`, `damaged-gzip`, `inflation-limit`, `read-error`; (1.2) the app is that of the file's sessions, `?` when they have none or several",
                               keyExample: "LC904|com.example.shop|missing-key")

    /// Problems of one kind in one file, as read from the database.
    package struct Problems: Sendable {
        package var kind: String
        package var count: Int
        /// (reason, count), most common first.
        package var reasons: [(String, Int)]
        /// The first line numbers (at most 20).
        package var lines: [Int64]

        package init(kind: String, count: Int, reasons: [(String, Int)], lines: [Int64]) {
            self.kind = kind; self.count = count; self.reasons = reasons; self.lines = lines
        }
    }

    /// One file's problems, by kind in order of first appearance.
    package struct FileProblems: Sendable {
        package var path: String
        package var kinds: [Problems]
        /// (1.2) The app of the file's sessions when they have one (`file_sessions`): its
        /// findings' identity names it; nil (`?`) for a file of no session or of several apps.
        package var app: String?

        package init(path: String, kinds: [Problems], app: String? = nil) {
            self.path = path; self.kinds = kinds; self.app = app
        }
    }

    /// The findings of every file's problems, with the file row each is about.
    package static func check(_ files: [(Int64, FileProblems)]) -> [(file: Int64, finding: Finding)] {
        files.flatMap { id, problems in check(problems).map { (file: id, finding: $0) } }
    }

    /// One finding per kind of problem of `file`.
    package static func check(_ file: FileProblems) -> [Finding] {
        file.kinds.map { p in
            let top = p.reasons.prefix(3).map { "\($0.1) × \($0.0)" }.joined(separator: "; ") + (p.reasons.count > 3 ? "; …" : "")
            let what: String
            switch p.kind {
            case "conflicting-duplicate":
                what = "\(p.count) conflicting duplicate\(p.count == 1 ? "" : "s") of stored events (the first copy kept)"
            case _ where damageKinds.contains(p.kind):
                what = "damaged: \(p.reasons.first?.0 ?? p.kind)"
            default:
                what = "\(p.count) line\(p.count == 1 ? "" : "s") rejected (\(top))"
            }
            return Finding(rule: info, session: nil, t: nil, message: "\(file.path): \(what)", evidence: [], file: file.path,
                           key: [p.kind], app: file.app,
                           detail: ["kind": .text(p.kind), "count": .int(Int64(p.count)), "lines": .ints(p.lines)])
        }
    }

    static let damageKinds: Set<String> = ["truncated-gzip", "damaged-gzip", "inflation-limit", "read-error"]

    /// The kind of a problem (the last part of LC904's identity key), from the `rejects` row's
    /// kind (`line`, `conflict`, `damage`) and reason.
    package static func kind(_ rowKind: String, _ reason: String) -> String {
        switch rowKind {
        case "conflict": return "conflicting-duplicate"
        case "damage":
            if reason.contains("truncated") || reason.contains("ends early") { return "truncated-gzip" }
            if reason.contains("inflates more") { return "inflation-limit" }
            if reason.hasPrefix("read error") { return "read-error" }
            return "damaged-gzip"
        default: break
        }
        let kinds: [(String, String)] = [
            ("cut last line", "cut-line"), ("line cut by damaged gzip data", "cut-line"), ("not valid UTF-8", "not-utf8"), ("nested deeper", "too-deep"),
            ("not valid JSON", "not-json"), ("not a JSON object", "not-json"), ("empty line", "not-json"),
            ("line longer than", "line-too-long"), ("more than", "too-many-keys"), ("duplicate key", "duplicate-key"),
            ("missing required key", "missing-key"), ("needs key", "missing-key"),
            ("unsupported format version", "newer-version"), (": expected ", "wrong-type"),
        ]
        for (text, kind) in kinds where kind == "cut-line" ? reason.hasPrefix(text) : reason.contains(text) { return kind }
        return "bad-value"
    }

    /// Strips positions from a reason so that equal problems group together.
    package static func group(_ reason: String) -> String {
        var text = reason
        if let r = text.range(of: " at column ") { text = String(text[..<r.lowerBound]) }
        if text.hasPrefix("line longer than") { return "line longer than the limit" }
        if text.hasPrefix("conflicting duplicate") { return "conflicting duplicate" }
        return text
    }
}
