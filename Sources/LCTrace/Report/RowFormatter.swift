import Foundation

/// Writes rows as an aligned table, CSV (RFC 4180, header row) or a JSON array of objects.
/// CSV and JSON stream; the table aligns on the first `alignmentSample` rows and streams
/// the rest, so a huge result never has to fit in memory. A value too large to copy
/// (`Cell.largeText`, `.largeBlob`) is written in pieces straight from where it lies, or, in a
/// table, as the beginning that fits its column. Table cells are escaped for terminals
/// (`TerminalText`); CSV cells can have spreadsheet formulas neutralised.
public final class RowFormatter {
    public enum Style { case table, csv, json }

    /// One value of a row.
    public enum Cell {
        case value(SQLValue)
        /// A text too large to copy: its UTF-8 bytes, valid while `add` runs.
        case largeText(UnsafeRawBufferPointer)
        /// A blob too large to copy, valid while `add` runs.
        case largeBlob(UnsafeRawBufferPointer)
    }

    /// Values above this many bytes are best passed as `largeText`/`largeBlob`.
    public static let largeValueBytes = 64 * 1024
    /// Bytes of a large value written at a time.
    static let piece = 64 * 1024

    private let style: Style
    private let columns: [String]
    private let write: (String) -> Void
    private var pending: [[SQLValue]] = []
    private var widths: [Int] = []
    private var aligned = false
    private var rowCount = 0
    public var alignmentSample = 1000
    /// CSV: text cells that a spreadsheet would read as a formula (starting with =, +, -, @,
    /// a tab or a carriage return) get a leading `'` (`--safe-csv`).
    public let neutralizesFormulas: Bool
    /// Columns right-aligned in tables (numbers), decided from the sample.
    private var numeric: [Bool] = []

    public init(style: Style, columns: [String], neutralizesFormulas: Bool = false, write: @escaping (String) -> Void) {
        self.style = style
        self.columns = columns
        self.write = write
        self.neutralizesFormulas = neutralizesFormulas
        switch style {
        case .csv: write(columns.map { Self.csvField($0, neutralize: neutralizesFormulas) }.joined(separator: ",") + "\n")
        case .json: write("[")
        case .table: break
        }
    }

    public func add(_ row: [SQLValue]) {
        add(cells: row.map { .value($0) })
    }

    public func add(cells row: [Cell]) {
        rowCount += 1
        switch style {
        case .csv:
            for (i, cell) in row.enumerated() {
                if i > 0 { write(",") }
                writeCSV(cell)
            }
            write("\n")
        case .json:
            write(rowCount == 1 ? "\n  {" : ",\n  {")
            for (i, cell) in row.enumerated() {
                write((i > 0 ? ", " : "") + jsonString(columns[i]) + ": ")
                writeJSON(cell)
            }
            write("}")
        case .table:
            let values = row.map(Self.tableValue)
            if aligned { write(tableLine(values.map(Self.plain))) } else {
                pending.append(values)
                if pending.count >= alignmentSample { flushTable() }
            }
        }
    }

    public func finish() {
        switch style {
        case .csv: break
        case .json: write(rowCount == 0 ? "]\n" : "\n]\n")
        case .table:
            flushTable()
            write("(\(rowCount) row\(rowCount == 1 ? "" : "s"))\n")
        }
    }

    // MARK: Large values

    /// A table shows at most 60 characters of a cell: the beginning of a large value does.
    private static func tableValue(_ cell: Cell) -> SQLValue {
        switch cell {
        case .value(let v): return v
        case .largeText(let bytes): return .text(String(decoding: bytes.prefix(utf8Boundary(bytes, 1024)), as: UTF8.self) + "…")
        case .largeBlob(let bytes): return .text("x'" + hex(UnsafeRawBufferPointer(rebasing: bytes.prefix(32))) + "…")
        }
    }

    private func writeCSV(_ cell: Cell) {
        switch cell {
        case .value(let v):
            if case .text(let s) = v { write(Self.csvField(s, neutralize: neutralizesFormulas)) } else { write(Self.csvField(Self.plain(v))) }
        case .largeText(let bytes):
            let quoted = [0x2c, 0x22, 0x0a, 0x0d].contains { memchr(bytes.baseAddress!, $0, bytes.count) != nil }
            if neutralizesFormulas && Self.looksLikeFormula(bytes.first) { write("'") }
            if quoted { write("\"") }
            forEachPiece(of: bytes) { write(quoted ? $0.replacingOccurrences(of: "\"", with: "\"\"") : $0) }
            if quoted { write("\"") }
        case .largeBlob(let bytes):
            write("x'")
            forEachHexPiece(of: bytes, write)
            write("'")
        }
    }

    private func writeJSON(_ cell: Cell) {
        switch cell {
        case .value(let v): write(Self.json(v))
        case .largeText(let bytes):
            write("\"")
            forEachPiece(of: bytes) { write(String(decoding: jsonEscaped($0), as: UTF8.self)) }
            write("\"")
        case .largeBlob(let bytes):
            write("\"x'")
            forEachHexPiece(of: bytes, write)
            write("'\"")
        }
    }

    /// Calls `body` with the text of `bytes` in pieces cut between UTF-8 sequences.
    private func forEachPiece(of bytes: UnsafeRawBufferPointer, _ body: (String) -> Void) {
        var start = 0
        while start < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[start...])
            let n = rest.count <= Self.piece ? rest.count : Self.utf8Boundary(rest, Self.piece)
            body(String(decoding: UnsafeRawBufferPointer(rebasing: rest.prefix(max(n, 1))), as: UTF8.self))
            start += max(n, 1)
        }
    }

    private func forEachHexPiece(of bytes: UnsafeRawBufferPointer, _ body: (String) -> Void) {
        var start = 0
        while start < bytes.count {
            let end = min(start + Self.piece / 2, bytes.count)
            body(Self.hex(UnsafeRawBufferPointer(rebasing: bytes[start..<end])))
            start = end
        }
    }

    /// The largest length ≤ `limit` that does not end inside a UTF-8 sequence of `bytes`.
    static func utf8Boundary(_ bytes: UnsafeRawBufferPointer, _ limit: Int) -> Int {
        var end = min(limit, bytes.count)
        if end == bytes.count { return end }
        var back = 0
        while end > 0 && back < 3 && bytes[end] & 0xC0 == 0x80 { end -= 1; back += 1 }
        return end
    }

    /// Lowercase hex of `bytes`, made from a table (String(format:) per byte took 24 s for 16 MB).
    static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: 0, count: bytes.count * 2)
        for (i, b) in bytes.enumerated() {
            out[2 * i] = digits[Int(b >> 4)]
            out[2 * i + 1] = digits[Int(b & 0xF)]
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Table

    private func flushTable() {
        guard !aligned else { return }
        aligned = true
        widths = columns.map { TerminalText.escaped($0).count }
        numeric = Array(repeating: true, count: columns.count)
        for row in pending {
            for (i, v) in row.enumerated() {
                widths[i] = min(max(widths[i], Self.cellText(Self.plain(v)).count), 60)
                switch v {
                case .int, .double, .null: break
                default: numeric[i] = false
                }
            }
        }
        if pending.isEmpty { numeric = Array(repeating: false, count: columns.count) }
        write(tableLine(columns, header: true))
        write(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n")
        for row in pending { write(tableLine(row.map(Self.plain))) }
        pending = []
    }

    /// A cell as a table shows it: one line, nothing a terminal would act on.
    static func cellText(_ text: String) -> String {
        TerminalText.escaped(text.replacingOccurrences(of: "\n", with: "⏎"))
    }

    private func tableLine(_ cells: [String], header: Bool = false) -> String {
        var parts: [String] = []
        for (i, cell) in cells.enumerated() {
            let width = i < widths.count ? widths[i] : cell.count
            var text = Self.cellText(cell)
            if text.count > width { text = String(text.prefix(max(width - 1, 1))) + "…" }
            let pad = String(repeating: " ", count: max(0, width - text.count))
            let last = i == cells.count - 1
            if !header && i < numeric.count && numeric[i] { parts.append(pad + text) } else {
                parts.append(last ? text : text + pad)
            }
        }
        return parts.joined(separator: "  ") + "\n"
    }

    // MARK: Values

    /// A value as plain text: NULL as empty, blobs as hex.
    public static func plain(_ value: SQLValue) -> String {
        switch value {
        case .null: return ""
        case .int(let v): return String(v)
        case .double(let v): return formatDouble(v)
        case .text(let s): return s
        case .blob(let b): return "x'" + b.withUnsafeBytes { hex($0) } + "'"
        }
    }

    /// Shortest text that reads back as the same double (Swift's own description).
    static func formatDouble(_ v: Double) -> String { v.isFinite ? String(v) : "" }

    public static func json(_ value: SQLValue) -> String {
        switch value {
        case .null: return "null"
        case .int(let v): return String(v)
        case .double(let v): return v.isFinite ? String(v) : "null"
        case .text(let s): return jsonString(s)
        case .blob(let b): return jsonString(plain(.blob(b)))
        }
    }

    /// True for the first byte of a cell a spreadsheet reads as a formula: = + - @, a tab or a
    /// carriage return (https://owasp.org/www-community/attacks/CSV_Injection).
    static func looksLikeFormula(_ first: UInt8?) -> Bool {
        guard let first else { return false }
        return [0x3d, 0x2b, 0x2d, 0x40, 0x09, 0x0d].contains(first)
    }

    /// A CSV field: quoted when it holds a comma, a quote or a line break; with `neutralize`,
    /// a leading `'` before what a spreadsheet would run as a formula.
    public static func csvField(_ s: String, neutralize: Bool = false) -> String {
        let s = neutralize && looksLikeFormula(s.utf8.first) ? "'" + s : s
        if s.contains(",") || s.contains("\"") || s.contains("\n") || s.contains("\r") {
            return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        return s
    }
}
