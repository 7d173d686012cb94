import Foundation

/// Writes rows as an aligned table, CSV (RFC 4180, header row) or a JSON array of objects.
/// CSV and JSON stream; the table aligns on the first `alignmentSample` rows and streams
/// the rest, so a huge result never has to fit in memory.
public final class RowFormatter {
    public enum Style { case table, csv, json }

    private let style: Style
    private let columns: [String]
    private let write: (String) -> Void
    private var pending: [[SQLValue]] = []
    private var widths: [Int] = []
    private var aligned = false
    private var rowCount = 0
    public var alignmentSample = 1000
    /// Columns right-aligned in tables (numbers), decided from the sample.
    private var numeric: [Bool] = []

    public init(style: Style, columns: [String], write: @escaping (String) -> Void) {
        self.style = style
        self.columns = columns
        self.write = write
        switch style {
        case .csv: write(columns.map(Self.csvField).joined(separator: ",") + "\n")
        case .json: write("[")
        case .table: break
        }
    }

    public func add(_ row: [SQLValue]) {
        rowCount += 1
        switch style {
        case .csv:
            write(row.map { Self.csvField(Self.plain($0)) }.joined(separator: ",") + "\n")
        case .json:
            var text = rowCount == 1 ? "\n  {" : ",\n  {"
            for (i, value) in row.enumerated() {
                if i > 0 { text += ", " }
                text += jsonString(columns[i]) + ": " + Self.json(value)
            }
            write(text + "}")
        case .table:
            if aligned { write(tableLine(row.map(Self.plain))) } else {
                pending.append(row)
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

    private func flushTable() {
        guard !aligned else { return }
        aligned = true
        widths = columns.map { $0.count }
        numeric = Array(repeating: true, count: columns.count)
        for row in pending {
            for (i, v) in row.enumerated() {
                widths[i] = min(max(widths[i], Self.plain(v).count), 60)
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

    private func tableLine(_ cells: [String], header: Bool = false) -> String {
        var parts: [String] = []
        for (i, cell) in cells.enumerated() {
            let width = i < widths.count ? widths[i] : cell.count
            var text = cell.replacingOccurrences(of: "\n", with: "⏎")
            if text.count > width { text = String(text.prefix(max(width - 1, 1))) + "…" }
            let pad = String(repeating: " ", count: max(0, width - text.count))
            let last = i == cells.count - 1
            if !header && i < numeric.count && numeric[i] { parts.append(pad + text) } else {
                parts.append(last ? text : text + pad)
            }
        }
        return parts.joined(separator: "  ") + "\n"
    }

    /// A value as plain text: NULL as empty, blobs as hex.
    public static func plain(_ value: SQLValue) -> String {
        switch value {
        case .null: return ""
        case .int(let v): return String(v)
        case .double(let v): return formatDouble(v)
        case .text(let s): return s
        case .blob(let b): return "x'" + b.map { String(format: "%02x", $0) }.joined() + "'"
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

    public static func csvField(_ s: String) -> String {
        if s.contains(",") || s.contains("\"") || s.contains("\n") || s.contains("\r") {
            return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        return s
    }
}
