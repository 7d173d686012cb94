import CSQLite

/// The current row of a statement being stepped: valid until the next step.
public struct QueryRow: RowValues {
    let handle: OpaquePointer
    public let count: Int

    public func kind(_ i: Int) -> RowValueKind {
        switch sqlite3_column_type(handle, Int32(i)) {
        case SQLITE_INTEGER: return .integer
        case SQLITE_FLOAT: return .real
        case SQLITE_TEXT: return .text
        case SQLITE_BLOB: return .blob
        default: return .null
        }
    }

    @inline(__always) public func int(_ i: Int) -> Int64 { sqlite3_column_int64(handle, Int32(i)) }
    @inline(__always) public func double(_ i: Int) -> Double { sqlite3_column_double(handle, Int32(i)) }

    /// Text is asked for as text and blobs as blobs, so SQLite converts nothing
    /// (https://sqlite.org/c3ref/column_blob.html: call the bytes after the pointer).
    public func withBytes<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
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
    public var columnNames: [String] { (0..<columnCount).map(columnName) }

    /// Steps to the end, handing each row to `body` where SQLite holds it.
    public func forEachRow(_ body: (QueryRow) throws -> Void) throws {
        let row = QueryRow(handle: handle, count: columnCount)
        while try step() { try body(row) }
    }
}
