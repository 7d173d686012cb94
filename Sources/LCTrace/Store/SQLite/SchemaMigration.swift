/// Migrations of older databases, run by the writing commands (`Schema.openForWriting`)
/// inside their first write transaction; read-only commands refuse an older database and
/// say how to migrate it.
extension SQLiteSchema {
    /// Brings a database of schema version `from` to `version` in place.
    static func migrate(_ db: SQLiteDatabase, from: Int64, path: String) throws {
        guard from == 1 else {
            throw VersionError(description: "\(path) has schema version \(from) and no migration to \(version) exists: re-ingest into a new database")
        }
        // Version 2 gives every finding its identity, which only the rules can compute from
        // the model: the findings table is made anew and every session marked for analysis,
        // so the command's analysis (or the next one) rebuilds model and findings.
        try db.execute("DROP VIEW IF EXISTS findings_v")
        try db.execute("DROP TABLE findings")
        for statement in statements(creating: ["findings", "findings_by_session", "findings_by_identity",
                                               "findings_v", "identities_v"]) {
            try db.execute(statement)
        }
        try db.execute("UPDATE sessions SET dirty = 1")
        try db.execute("PRAGMA user_version = \(version)")
    }

    /// The statements of `ddl` that create the named tables, indexes and views, in DDL order.
    static func statements(creating names: Set<String>) -> [String] {
        var out: [String] = []
        var current: [Substring] = []
        for line in ddl.split(separator: "\n", omittingEmptySubsequences: false) {
            if current.isEmpty && !line.hasPrefix("CREATE ") { continue }
            current.append(line)
            // A statement ends with a line ending in `;` outside a comment.
            let code = line.components(separatedBy: "--")[0].trimmingCharacters(in: .whitespaces)
            guard code.hasSuffix(";") else { continue }
            let words = current[0].split(separator: " ")
            let name = words.count > 2 ? String(words[2]) : ""
            if names.contains(name) { out.append(current.joined(separator: "\n")) }
            current = []
        }
        return out
    }
}

import Foundation
