/// The INSERT statements of one table: one row, and `rowsPerStatement` rows at once. Events
/// and model rows come by the hundred thousand, and a statement run per row costs more than
/// the row. Every column is bound for every row, so bindings are never cleared.
struct RowInsert {
    let rowsPerStatement: Int
    package let one: SQLiteStatement
    package let many: SQLiteStatement
    package let columns: Int32

    /// `oneRowSuffix` ends the one-row statement only (`ON CONFLICT … DO NOTHING`: the rows
    /// that may already exist take that path).
    package init(_ db: SQLiteDatabase, _ table: String, _ names: [String], rowsPerStatement: Int = 32, oneRowSuffix: String = "") throws {
        self.rowsPerStatement = rowsPerStatement
        columns = Int32(names.count)
        let row = "(" + Array(repeating: "?", count: names.count).joined(separator: ", ") + ")"
        let columnList = "\(table)(\(names.joined(separator: ", "))) VALUES "
        one = try db.prepare("INSERT INTO " + columnList + row + (oneRowSuffix.isEmpty ? "" : " " + oneRowSuffix))
        // OR FAIL: a many-row statement that fails keeps the rows before the failure, so SQLite
        // needs no statement journal (a copy of each page the statement touches first) to undo
        // them. Only rows known to be new come here; a failure throws and the caller rolls
        // the whole transaction back.
        many = try db.prepare("INSERT OR FAIL INTO " + columnList + Array(repeating: row, count: rowsPerStatement).joined(separator: ", "))
    }

    /// Inserts `items`; `bind(item, statement, firstParameter)` binds one row's columns.
    /// Throws when a row did not go in (`lost`): callers pass only rows known to be new.
    package func insert<T>(_ items: [T], _ bind: (T, SQLiteStatement, Int32) throws -> Void) throws {
        var index = 0
        while items.count - index >= rowsPerStatement {
            many.resetKeepingBindings()
            for k in 0..<rowsPerStatement { try bind(items[index + k], many, Int32(k) * columns + 1) }
            try many.step()
            guard many.database.changes == rowsPerStatement else { throw Self.lost(many) }
            index += rowsPerStatement
        }
        while index < items.count {
            guard try insertOne(items[index], bind) else { throw Self.lost(one) }
            index += 1
        }
    }

    /// Inserts one row with the one-row statement; false when it did not go in (a conflict
    /// the suffix let pass).
    func insertOne<T>(_ item: T, _ bind: (T, SQLiteStatement, Int32) throws -> Void) throws -> Bool {
        one.resetKeepingBindings()
        try bind(item, one, 1)
        try one.step()
        return one.database.changes == 1
    }

    private static func lost(_ s: SQLiteStatement) -> SQLiteError {
        SQLiteError(code: 1, message: "a row known to be new was not stored (another writer?)", sql: s.sql)
    }
}
