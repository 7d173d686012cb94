/// Interns text into the `strings` table, caching ids. Used inside write transactions.
final class StringPool {
    private let db: Database
    private var ids: [String: Int64] = [:]
    private let insert: Statement
    private let select: Statement

    init(db: Database) throws {
        self.db = db
        insert = try db.prepare("INSERT INTO strings(text) VALUES (?) ON CONFLICT(text) DO NOTHING")
        select = try db.prepare("SELECT id FROM strings WHERE text = ?")
    }

    /// The `strings.id` of `text`, inserting it when new.
    func id(_ text: String) throws -> Int64 {
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
            guard try select.step() else { throw DatabaseError(code: 1, message: "interned string vanished", sql: select.sql) }
            id = select.int(0)
        }
        ids[text] = id
        return id
    }

    func id(_ text: String?) throws -> Int64? {
        guard let text else { return nil }
        return try id(text)
    }

    /// Forgets cached ids (after a rollback they may not exist).
    func reset() { ids.removeAll() }
}
