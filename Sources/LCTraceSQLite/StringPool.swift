/// Interns text into the `strings` table, caching ids. Used inside write transactions.
final class StringPool {
    private let db: SQLiteDatabase
    private var ids: [String: Int64] = [:]
    private let insert: SQLiteStatement
    private let select: SQLiteStatement

    /// Ids kept before the cache is emptied.
    package let maxCached: Int

    package init(db: SQLiteDatabase, maxCached: Int = StringPool.defaultMaxCached) throws {
        self.db = db
        self.maxCached = maxCached
        insert = try db.prepare("INSERT INTO strings(text) VALUES (?) ON CONFLICT(text) DO NOTHING")
        select = try db.prepare("SELECT id FROM strings WHERE text = ?")
    }

    /// The `strings.id` of `text`, inserting it when new.
    package func id(_ text: String) throws -> Int64 {
        if let id = ids[text] { return id }
        insert.reset()
        insert.bind(text, at: 1)
        try insert.step()
        let id: Int64
        if db.changes == 1 {
            id = db.lastInsertRowID
        } else {
            select.reset()
            select.bind(text, at: 1)
            guard try select.step() else { throw SQLiteError(code: 1, message: "interned string vanished", sql: select.sql) }
            id = select.int(0)
        }
        // A cache, not a copy of the table: bounded, so memory stays flat however many
        // distinct controller ids a run meets (ids are mostly local to one session).
        if ids.count >= maxCached { ids.removeAll(keepingCapacity: true) }
        ids[text] = id
        return id
    }

    static let defaultMaxCached = 50_000

    package func id(_ text: String?) throws -> Int64? {
        guard let text else { return nil }
        return try id(text)
    }

    /// Forgets cached ids (after a rollback they may not exist).
    package func reset() { ids.removeAll() }
}
