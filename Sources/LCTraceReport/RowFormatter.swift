import Foundation
import LCTraceFormat
import LCTraceModel
import LCTraceStore

/// Writes rows as an aligned table, CSV (RFC 4180, header row) or a JSON array of objects.
///
/// CSV and JSON stream: each value's bytes go straight from where they lie (a query's row in
/// SQLite's memory, `QueryRow`) into one buffer, handed on 64 KiB at a time and always between
/// UTF-8 sequences, so a million rows cost no String per cell and a huge value is never copied
/// whole. A table is aligned over all its rows, so that a wide value in row 1,001 is as wide as
/// its column (it used to print `a…` in a column measured on the first thousand rows): it is
/// written at `finish`, its rows kept in memory up to `memoryBudget` and in a temporary file
/// beyond it (unlinked as it is made), so a huge result still never has to fit in memory. Table
/// cells are one line, escaped for terminals (`TerminalText`), and cut at `maxWidth` characters
/// with `…`; `cutColumns` says which columns were cut, for the caller's note. CSV cells can have
/// spreadsheet formulas neutralised.
package final class RowFormatter: RowSink {
    package typealias Style = RowStyle

    /// A table reads at most this many bytes of a text or blob; a larger one is shown cut
    /// whatever `maxWidth` says (`sizeCutColumns`). CSV and JSON write every value whole.
    static let largeValueBytes = 64 * 1024
    /// Characters of a table cell when the caller does not say.
    package static let defaultMaxWidth = 60
    /// Bytes handed on at a time.
    static let bufferBytes = 64 * 1024

    private let style: Style
    private let columns: [String]
    private let sink: (UnsafeRawBufferPointer) -> Void
    private let buffer: UnsafeMutableRawBufferPointer
    private var used = 0
    package private(set) var rowCount = 0
    /// CSV: text cells that a spreadsheet would read as a formula (starting with =, +, -, @,
    /// a tab or a carriage return) get a leading `'` (`--safe-csv`).
    package let neutralizesFormulas: Bool
    /// Table: characters shown of a cell at most (nil: all, up to `largeValueBytes`).
    package let maxWidth: Int?
    /// Table: bytes of rows kept in memory before the rest go to a temporary file.
    var memoryBudget = 16 << 20

    /// JSON: `"name": ` before each value (`, "name": ` after the first).
    private let jsonKeys: [[UInt8]]

    // Table state: per column its width, whether every value is a number, and whether one was cut.
    private var widths: [Int] = []
    private var numeric: [Bool] = []
    private var cutByWidth: [Bool] = []
    private var cutBySize: [Bool] = []
    private var kept: [[String]] = []
    private var keptBytes = 0
    private var spill: UnsafeMutablePointer<FILE>?
    private var spilledRows = 0

    /// Writes to `bytes`, which gets whole UTF-8 sequences.
    package init(style: Style, columns: [String], neutralizesFormulas: Bool = false, maxWidth: Int? = RowFormatter.defaultMaxWidth,
                bytes: @escaping (UnsafeRawBufferPointer) -> Void) {
        self.style = style
        self.columns = columns
        self.sink = bytes
        self.neutralizesFormulas = neutralizesFormulas
        self.maxWidth = maxWidth
        buffer = .allocate(byteCount: Self.bufferBytes, alignment: 16)
        jsonKeys = columns.enumerated().map { i, name in Array(((i > 0 ? ", " : "") + JSONText.quoted(name) + ": ").utf8) }
        widths = columns.map { TerminalText.escaped($0).count }
        numeric = Array(repeating: true, count: columns.count)
        cutByWidth = Array(repeating: false, count: columns.count)
        cutBySize = cutByWidth
        switch style {
        case .csv: append(columns.map { Self.csvField($0, neutralize: neutralizesFormulas) }.joined(separator: ",") + "\n")
        case .json: append("[")
        case .table: break
        }
    }

    /// Writes to `write` in pieces of text.
    package convenience init(style: Style, columns: [String], neutralizesFormulas: Bool = false,
                            maxWidth: Int? = RowFormatter.defaultMaxWidth, write: @escaping (String) -> Void) {
        self.init(style: style, columns: columns, neutralizesFormulas: neutralizesFormulas, maxWidth: maxWidth) {
            write(String(decoding: $0, as: UTF8.self))
        }
    }

    deinit {
        buffer.deallocate()
        if let spill { fclose(spill) }
    }

    /// The table's columns with a value cut at `maxWidth`, known after `finish`.
    package var cutColumns: [String] { zip(columns, cutByWidth).filter { $0.1 }.map { $0.0 } }
    /// The table's columns with a value over `largeValueBytes`, shown cut whatever the width.
    package var sizeCutColumns: [String] { zip(columns, cutBySize).filter { $0.1 }.map { $0.0 } }

    /// One row, in column order: values in memory, or a query's current row where its
    /// backend holds it (SQLite's `QueryRow`).
    package func add<Row: RowValues>(_ row: Row) throws { try addRow(row) }

    @inline(__always) private func addRow<Row: RowValues>(_ row: Row) throws {
        rowCount += 1
        switch style {
        case .csv:
            for i in 0..<row.count {
                if i > 0 { append(byte: 0x2c) }
                writeCSV(row, i)
            }
            append(byte: 0x0a)
        case .json:
            append(rowCount == 1 ? "\n  {" : ",\n  {")
            for i in 0..<row.count {
                jsonKeys[i].withUnsafeBytes { append($0) }
                writeJSON(row, i)
            }
            append(byte: 0x7d)
        case .table:
            try keep((0..<row.count).map { tableCell(row, $0) })
        }
    }

    /// Writes the end (a table whole); what is buffered is handed on.
    package func finish() throws {
        switch style {
        case .csv: break
        case .json: append(rowCount == 0 ? "]\n" : "\n]\n")
        case .table: try writeTable()
        }
        flush(all: true)
    }

    /// Hands on the complete rows written so far (CSV and JSON) when the output stops early.
    package func abandon() { if style != .table { flush(all: true) } }

    // MARK: The buffer

    @inline(__always) private func append(byte: UInt8) {
        if used == buffer.count { flush(all: false) }
        buffer[used] = byte
        used += 1
    }

    @inline(__always) private func append(_ bytes: UnsafeRawBufferPointer) {
        if used + bytes.count > buffer.count {
            flush(all: false)
            if used + bytes.count > buffer.count {
                // Larger than the buffer: in pieces, each cut between UTF-8 sequences.
                var start = 0
                while start < bytes.count {
                    let room = buffer.count - used
                    let rest = UnsafeRawBufferPointer(rebasing: bytes[start...])
                    let n = rest.count <= room ? rest.count : max(Self.utf8Boundary(rest, room), 1)
                    UnsafeMutableRawBufferPointer(rebasing: buffer[used..<used + n]).copyMemory(from: UnsafeRawBufferPointer(rebasing: rest.prefix(n)))
                    used += n
                    start += n
                    if start < bytes.count { flush(all: false) }
                }
                return
            }
        }
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        (buffer.baseAddress! + used).copyMemory(from: base, byteCount: bytes.count)
        used += bytes.count
    }

    private func append(_ text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    private func append(_ text: StaticString) {
        text.withUTF8Buffer { append(UnsafeRawBufferPointer($0)) }
    }

    /// Hands on the buffer up to its last whole UTF-8 sequence (everything with `all`).
    private func flush(all: Bool) {
        guard used > 0 else { return }
        var end = used
        if !all {
            // Keep an incomplete sequence at the end for the next piece.
            var back = 0
            while back < 3 && back < end && buffer[end - 1 - back] & 0xC0 == 0x80 { back += 1 }
            let lead = buffer[end - 1 - min(back, end - 1)]
            let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
            if lead >= 0xC0 && length > back + 1 { end -= back + 1 }
            if end == 0 { end = used }
        }
        sink(UnsafeRawBufferPointer(rebasing: buffer[0..<end]))
        let rest = used - end
        if rest > 0 { buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + end, byteCount: rest) }
        used = rest
    }

    @inline(__always) private func appendInt(_ value: Int64) {
        if used + 20 > buffer.count { flush(all: false) }
        var v = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch, filled from the end
        withUnsafeMutableBytes(of: &digits) { scratch in
            var i = scratch.count
            repeat {
                i -= 1
                scratch[i] = UInt8(v % 10) + 0x30
                v /= 10
            } while v > 0
            if value < 0 { i -= 1; scratch[i] = 0x2d }
            append(UnsafeRawBufferPointer(rebasing: scratch[i...]))
        }
    }

    @inline(__always) private func appendDouble(_ value: Double) { append(Self.formatDouble(value)) }

    // MARK: CSV

    @inline(__always) private func writeCSV<Row: RowValues>(_ row: Row, _ i: Int) {
        switch row.kind(i) {
        case .null: break
        case .integer: appendInt(row.int(i))
        case .real: appendDouble(row.double(i))
        case .text: row.withBytes(i) { writeCSVText($0) }
        case .blob:
            row.withBytes(i) { bytes in
                append("x'")
                appendHex(bytes)
                append(byte: 0x27)
            }
        }
    }

    /// A text cell: quoted when it holds a comma, a quote or a line break, quotes doubled;
    /// bytes that are not UTF-8 become U+FFFD.
    private func writeCSVText(_ bytes: UnsafeRawBufferPointer) {
        var special = false, ascii = true
        for b in bytes {
            if b == 0x2c || b == 0x22 || b == 0x0a || b == 0x0d { special = true }
            if b >= 0x80 { ascii = false }
        }
        if special { append(byte: 0x22) }
        if neutralizesFormulas && Self.looksLikeFormula(bytes.first) { append(byte: 0x27) }
        Self.forEachValidPiece(of: bytes, ascii: ascii) { piece in
            guard special else { return append(piece) }
            var start = 0
            for (j, b) in piece.enumerated() where b == 0x22 {
                append(UnsafeRawBufferPointer(rebasing: piece[start...j]))
                start = j  // the quote again
            }
            append(UnsafeRawBufferPointer(rebasing: piece[start...]))
        }
        if special { append(byte: 0x22) }
    }

    // MARK: JSON

    @inline(__always) private func writeJSON<Row: RowValues>(_ row: Row, _ i: Int) {
        switch row.kind(i) {
        case .null: append("null")
        case .integer: appendInt(row.int(i))
        case .real:
            let v = row.double(i)
            if v.isFinite { appendDouble(v) } else { append("null") }
        case .text:
            append(byte: 0x22)
            row.withBytes(i) { bytes in
                var ascii = true
                for b in bytes where b >= 0x80 { ascii = false; break }
                Self.forEachValidPiece(of: bytes, ascii: ascii) { appendJSONEscaped($0) }
            }
            append(byte: 0x22)
        case .blob:
            row.withBytes(i) { bytes in
                append("\"x'")
                appendHex(bytes)
                append("'\"")
            }
        }
    }

    /// `bytes` escaped for the inside of a JSON string (`JSONText`): runs that need no escape
    /// are copied at once.
    private func appendJSONEscaped(_ bytes: UnsafeRawBufferPointer) {
        JSONText.forEachEscapedPiece(bytes, run: { append($0) }, escape: { append($0) },
                                     control: { b in for c in JSONText.controlEscape(b) { append(byte: c) } })
    }

    /// Calls `body` with `bytes` as valid UTF-8: itself when it is ASCII, else decoded (bytes
    /// that are not UTF-8 become U+FFFD) in pieces of at most `largeValueBytes`.
    private static func forEachValidPiece(of bytes: UnsafeRawBufferPointer, ascii: Bool, _ body: (UnsafeRawBufferPointer) -> Void) {
        if ascii { return body(bytes) }
        var start = 0
        while start < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[start...])
            let n = rest.count <= largeValueBytes ? rest.count : max(utf8Boundary(rest, largeValueBytes), 1)
            var text = String(decoding: UnsafeRawBufferPointer(rebasing: rest.prefix(n)), as: UTF8.self)
            text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
            start += n
        }
    }

    /// Lowercase hex of `bytes`, into the buffer.
    private func appendHex(_ bytes: UnsafeRawBufferPointer) {
        let digits: StaticString = "0123456789abcdef"
        digits.withUTF8Buffer { d in
            for b in bytes {
                if used + 2 > buffer.count { flush(all: false) }
                buffer[used] = d[Int(b >> 4)]
                buffer[used + 1] = d[Int(b & 0xf)]
                used += 2
            }
        }
    }

    // MARK: Table

    /// A value as its table cell shows it: one line, escaped, cut at the width.
    private func tableCell<Row: RowValues>(_ row: Row, _ i: Int) -> String {
        let text: String
        switch row.kind(i) {
        case .null: return ""
        case .integer: return String(row.int(i))
        case .real: return Self.formatDouble(row.double(i))
        case .text:
            numeric[i] = false
            text = row.withBytes(i) { bytes in
                guard bytes.count > Self.largeValueBytes else { return String(decoding: bytes, as: UTF8.self) }
                cutBySize[i] = true
                return String(decoding: bytes.prefix(Self.utf8Boundary(bytes, Self.largeValueBytes)), as: UTF8.self) + "…"
            }
        case .blob:
            numeric[i] = false
            text = row.withBytes(i) { bytes in
                guard bytes.count > Self.largeValueBytes / 2 else { return "x'" + Self.hex(bytes) + "'" }
                cutBySize[i] = true
                return "x'" + Self.hex(UnsafeRawBufferPointer(rebasing: bytes.prefix(Self.largeValueBytes / 2))) + "…"
            }
        }
        var cell = Self.cellText(text)
        if let maxWidth, cell.count > maxWidth {
            cell = String(cell.prefix(max(maxWidth - 1, 0))) + "…"
            cutByWidth[i] = true
        }
        return cell
    }

    /// Measures a row and keeps it, in memory or, past the budget, in the temporary file.
    private func keep(_ cells: [String]) throws {
        var bytes = 0
        for (i, cell) in cells.enumerated() {
            widths[i] = max(widths[i], cell.count)
            bytes += cell.utf8.count + 16
        }
        if spill == nil && keptBytes + bytes <= memoryBudget {
            kept.append(cells)
            keptBytes += bytes
            return
        }
        if spill == nil {
            guard let file = tmpfile() else { throw TableSpillError(reason: String(cString: strerror(errno))) }
            spill = file
        }
        for cell in cells {
            var length = UInt32(cell.utf8.count).littleEndian
            var cell = cell
            let ok = fwrite(&length, 4, 1, spill) == 1 && cell.withUTF8 { $0.isEmpty || fwrite($0.baseAddress, 1, $0.count, spill) == $0.count }
            if !ok { throw TableSpillError(reason: String(cString: strerror(errno))) }
        }
        spilledRows += 1
    }

    private func writeTable() throws {
        if rowCount == 0 { numeric = Array(repeating: false, count: columns.count) }
        append(tableLine(columns, header: true))
        append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n")
        for row in kept { append(tableLine(row)) }
        kept = []
        if let spill, spilledRows > 0 {
            guard fflush(spill) == 0 else { throw TableSpillError(reason: String(cString: strerror(errno))) }
            rewind(spill)
            var bytes = [UInt8](repeating: 0, count: 4096)
            for _ in 0..<spilledRows {
                var cells: [String] = []
                for _ in columns {
                    var length: UInt32 = 0
                    guard fread(&length, 4, 1, spill) == 1 else { throw TableSpillError(reason: "the temporary file ended early") }
                    let n = Int(UInt32(littleEndian: length))
                    if bytes.count < n { bytes = [UInt8](repeating: 0, count: n) }
                    guard n == 0 || fread(&bytes, 1, n, spill) == n else { throw TableSpillError(reason: "the temporary file ended early") }
                    cells.append(String(decoding: bytes[0..<n], as: UTF8.self))
                }
                append(tableLine(cells))
            }
        }
        append("(\(rowCount) row\(rowCount == 1 ? "" : "s"))\n")
    }

    /// A text as a table cell shows it: one line, nothing a terminal would act on.
    static func cellText(_ text: String) -> String {
        TerminalText.escaped(text.replacingOccurrences(of: "\n", with: "⏎"))
    }

    private func tableLine(_ cells: [String], header: Bool = false) -> String {
        var parts: [String] = []
        for (i, cell) in cells.enumerated() {
            let text = header ? Self.cellText(cell) : cell
            let pad = String(repeating: " ", count: max(0, widths[i] - text.count))
            if !header && numeric[i] { parts.append(pad + text) } else {
                parts.append(i == cells.count - 1 ? text : text + pad)
            }
        }
        return parts.joined(separator: "  ") + "\n"
    }

    // MARK: Values

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

    /// A value as plain text: NULL as empty, blobs as hex.
    package static func plain(_ value: SQLValue) -> String {
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

    /// A value as the JSON `-f json` writes for it (NULL and a number not finite as null, a
    /// blob as the string of its hex), one at a time: the rows themselves take the byte path.
    package static func json(_ value: SQLValue) -> String {
        var json = JSONWriter(capacity: 32)
        switch value {
        case .null: json.null()
        case .int(let v): json.int(v)
        case .double(let v): json.double(v)
        case .text(let s): json.string(s)
        case .blob: json.string(plain(value))
        }
        return json.text
    }

    /// True for the first byte of a cell a spreadsheet reads as a formula: = + - @, a tab or a
    /// carriage return (https://owasp.org/www-community/attacks/CSV_Injection).
    static func looksLikeFormula(_ first: UInt8?) -> Bool {
        guard let first else { return false }
        return [0x3d, 0x2b, 0x2d, 0x40, 0x09, 0x0d].contains(first)
    }

    /// A CSV field: quoted when it holds a comma, a quote or a line break; with `neutralize`,
    /// a leading `'` before what a spreadsheet would run as a formula.
    static func csvField(_ s: String, neutralize: Bool = false) -> String {
        let s = neutralize && looksLikeFormula(s.utf8.first) ? "'" + s : s
        if s.utf8.contains(where: { $0 == 0x2c || $0 == 0x22 || $0 == 0x0a || $0 == 0x0d }) {
            return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        return s
    }
}

/// A table's rows could not be kept in its temporary file (a full disk).
package struct TableSpillError: Error, CustomStringConvertible {
    package var reason: String
    package var description: String { "cannot keep the table's rows in a temporary file: \(reason.prefix(1).lowercased() + reason.dropFirst()) (-f csv streams instead)" }
}
