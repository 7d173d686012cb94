import CSQLite

/// The type of one value of a row.
public enum RowValueKind: Sendable {
    case null, integer, real, text, blob
}

/// The values of one row, read without copying: a running query's row where SQLite holds it
/// (`QueryRow`), or values in memory (`[SQLValue]`). Writers of CSV and JSON take their bytes
/// straight from here, so a million rows cost no String each.
public protocol RowValues {
    var count: Int { get }
    func kind(_ i: Int) -> RowValueKind
    func int(_ i: Int) -> Int64
    func double(_ i: Int) -> Double
    /// The UTF-8 bytes of a text or the bytes of a blob (empty for anything else), valid during `body`.
    func withBytes<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

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

extension Statement {
    /// The names of the result's columns.
    public var columnNames: [String] { (0..<columnCount).map(columnName) }

    /// Steps to the end, handing each row to `body` where SQLite holds it.
    public func forEachRow(_ body: (QueryRow) throws -> Void) throws {
        let row = QueryRow(handle: handle, count: columnCount)
        while try step() { try body(row) }
    }
}

extension Array: RowValues where Element == SQLValue {
    public func kind(_ i: Int) -> RowValueKind {
        switch self[i] {
        case .null: return .null
        case .int: return .integer
        case .double: return .real
        case .text: return .text
        case .blob: return .blob
        }
    }

    public func int(_ i: Int) -> Int64 {
        if case .int(let v) = self[i] { return v }
        return 0
    }

    public func double(_ i: Int) -> Double {
        switch self[i] {
        case .double(let v): return v
        case .int(let v): return Double(v)
        default: return 0
        }
    }

    public func withBytes<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch self[i] {
        case .text(var s): return try s.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
        case .blob(let b): return try b.withUnsafeBytes(body)
        default: return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
    }
}
