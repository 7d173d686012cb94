import LCTrace
import LCTraceReport

/// `--max-width N` and `--no-truncate` of the commands that print tables (query, sessions), and
/// the note under a table that says which columns were cut and how to see them whole.
enum TableOptions {
    static let options: [OptionSpec] = [
        OptionSpec("max-width", value: "N", help: "Table: characters shown of a value, 1 to 1000000 (default \(RowFormatter.defaultMaxWidth)); a cut value ends in …"),
        OptionSpec("no-truncate", help: "Table: show every value whole (values over 64 KiB are still cut: -f csv writes them)."),
    ]

    static let range = 1...1_000_000

    /// The width a table cuts its values at, nil for none.
    static func maxWidth(_ args: ParsedArguments) throws -> Int? {
        let width = try args.value("max-width").map { try OptionValues.count($0, option: "--max-width", range: range) }
        if args.has("no-truncate") {
            guard width == nil else { throw UsageError("--max-width and --no-truncate do not go together") }
            return nil
        }
        return width ?? RowFormatter.defaultMaxWidth
    }

    /// Lines under a table whose values were cut, naming the columns and the way to see them whole.
    static func note(_ table: RowFormatter) -> String {
        var out = ""
        let cut = table.cutColumns
        if !cut.isEmpty, let width = table.maxWidth {
            out += "cut at \(width) characters (…): \(cut.map(shown).joined(separator: ", ")); see them whole with --no-truncate, --max-width N or -f csv\n"
        }
        let large = table.sizeCutColumns
        if !large.isEmpty {
            out += "values over 64 KiB cut in the table (…): \(large.map(shown).joined(separator: ", ")); -f csv or -f json writes them whole\n"
        }
        return out
    }
}
