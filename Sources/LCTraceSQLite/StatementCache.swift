import LCTraceStore

/// Statements prepared once per connection and handed out reset: the per-file and
/// per-session bookkeeping of an ingest (preparing them anew cost the writer some 2,400
/// parses on 300 files).
final class StatementCache {
    private let db: SQLiteDatabase
    private var statements: [String: SQLiteStatement] = [:]

    package init(db: SQLiteDatabase) { self.db = db }

    /// The statement for `sql`, reset, prepared the first time.
    package func statement(_ sql: String) throws -> SQLiteStatement {
        if let known = statements[sql] {
            known.reset()
            return known
        }
        let made = try db.prepare(sql)
        statements[sql] = made
        return made
    }

    /// The first column of the first row, or nil.
    package func scalarInt(_ sql: String, _ bindings: [SQLValue]) throws -> Int64? {
        let q = try statement(sql)
        try q.bind(bindings)
        defer { q.reset() }
        return try q.step() ? q.optionalInt(0) : nil
    }

    package func scalarText(_ sql: String, _ bindings: [SQLValue]) throws -> String? {
        let q = try statement(sql)
        try q.bind(bindings)
        defer { q.reset() }
        return try q.step() ? q.text(0) : nil
    }
}
