internal import CSQLite
import LCTraceStore

/// The current row of a statement being stepped: valid until the next step.
struct QueryRow: RowValues {
    package let handle: OpaquePointer
    package let count: Int

    package func kind(_ i: Int) -> RowValueKind {
        switch sqlite3_column_type(handle, Int32(i)) {
        case SQLITE_INTEGER: return .integer
        case SQLITE_FLOAT: return .real
        case SQLITE_TEXT: return .text
        case SQLITE_BLOB: return .blob
        default: return .null
        }
    }

    @inline(__always) package func int(_ i: Int) -> Int64 { sqlite3_column_int64(handle, Int32(i)) }
    @inline(__always) package func double(_ i: Int) -> Double { sqlite3_column_double(handle, Int32(i)) }

    /// Text is asked for as text and blobs as blobs, so SQLite converts nothing
    /// (https://sqlite.org/c3ref/column_blob.html: call the bytes after the pointer).
    package func withBytes<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let column = Int32(i)
        let pointer: UnsafeRawPointer?
        switch sqlite3_column_type(handle, column) {
        case SQLITE_TEXT: pointer = sqlite3_column_text(handle, column).map(UnsafeRawPointer.init)
        case SQLITE_BLOB: pointer = sqlite3_column_blob(handle, column)
        default: pointer = nil
        }
        guard let pointer else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, column))))
    }
}

extension SQLiteStatement {
    /// The names of the result's columns.
    var columnNames: [String] { (0..<columnCount).map(columnName) }

    /// Steps to the end, handing each row to `body` where SQLite holds it.
    func forEachRow(_ body: (QueryRow) throws -> Void) throws {
        let row = QueryRow(handle: handle, count: columnCount)
        while try step() { try body(row) }
    }
}

/// A user's statement on SQLite (`lctrace query`): prepared on the restricted connection
/// (`ReadOnlyQuery`), its rows handed over where SQLite holds them (`QueryRow`), 30 times
/// faster than an array of values per row.
final class SQLiteUserQuery: QueryRows {
    private let statement: SQLiteStatement
    private let deadline: QueryDeadline?
    package let columnNames: [String]
    package var warnings: [String] { [] }

    package init(db: SQLiteDatabase, sql: String, deadline end: UInt64?) throws {
        ReadOnlyQuery.restrict(db)
        deadline = end.map { QueryDeadline(db, until: $0) }
        do {
            statement = try ReadOnlyQuery.prepare(sql, on: db)
        } catch let error as SQLiteError {
            throw meaning(of: error, deadline)
        }
        columnNames = statement.columnNames
    }

    package func forEachRow(into sink: any RowSink) throws {
        do {
            try statement.forEachRow { row in
                try sink.add(row)
                if let deadline, deadline.passed { throw QueryTimedOut() }
            }
        } catch let error as SQLiteError {
            throw meaning(of: error, deadline)
        }
    }
}

/// What an error of SQLite's means to the user: stopped by the deadline, or the query's own
/// fault (refused, exit 64), or the database's.
private func meaning(of error: SQLiteError, _ deadline: QueryDeadline?) -> Error {
    if let deadline, deadline.stopped(error) { return QueryTimedOut() }
    return ReadOnlyQuery.isQueryFault(error) ? QueryRefused(message: "SQL error: \(error.message)") : error
}
