import Foundation

/// The type of one value of a row.
package enum RowValueKind: Sendable {
    case null, integer, real, text, blob
}

/// The values of one row, read without copying: a running query's row where SQLite holds it
/// (`QueryRow`), or values in memory (`[SQLValue]`). Writers of CSV and JSON take their bytes
/// straight from here, so a million rows cost no String each.
package protocol RowValues {
    var count: Int { get }
    func kind(_ i: Int) -> RowValueKind
    func int(_ i: Int) -> Int64
    func double(_ i: Int) -> Double
    /// The UTF-8 bytes of a text or the bytes of a blob (empty for anything else), valid during `body`.
    func withBytes<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

extension Array: RowValues where Element == SQLValue {
    package func kind(_ i: Int) -> RowValueKind {
        switch self[i] {
        case .null: return .null
        case .int: return .integer
        case .double: return .real
        case .text: return .text
        case .blob: return .blob
        }
    }

    package func int(_ i: Int) -> Int64 {
        if case .int(let v) = self[i] { return v }
        return 0
    }

    package func double(_ i: Int) -> Double {
        switch self[i] {
        case .double(let v): return v
        case .int(let v): return Double(v)
        default: return 0
        }
    }

    package func withBytes<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch self[i] {
        case .text(var s): return try s.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
        case .blob(let b): return try b.withUnsafeBytes(body)
        default: return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
    }
}
