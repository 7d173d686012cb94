/// One `--format` value of a command: its name, a line for the help, and what it selects.
package struct OutputFormat<Value>: @unchecked Sendable {
    package var id: String
    package var summary: String
    package var value: Value

    package init(_ id: String, _ summary: String, _ value: Value) {
        self.id = id; self.summary = summary; self.value = value
    }
}

/// The `--format` values one command accepts, the first its default. The command line parses,
/// suggests, documents and completes `--format` from it alone (`FormatOption`).
package struct FormatChoices<Value>: @unchecked Sendable {
    let formats: [OutputFormat<Value>]

    init(_ formats: [OutputFormat<Value>]) {
        precondition(!formats.isEmpty, "a command's formats cannot be empty")
        self.formats = formats
    }

    package var ids: [String] { formats.map(\.id) }
    package var defaultFormat: OutputFormat<Value> { formats[0] }
    package func named(_ id: String) -> OutputFormat<Value>? { formats.first { $0.id == id } }

    /// "text (grouped for people, the default), json (…), …" for the help.
    package var help: String {
        formats.enumerated().map { i, f in "\(f.id) (\(f.summary)\(i == 0 ? ", the default" : ""))" }
            .joined(separator: ", ")
    }
}

/// How a table of rows is written (`query`, `sessions`).
package enum RowStyle: Sendable { case table, csv, json }
/// How a timeline is drawn (`timeline`).
package enum TimelineStyle: Sendable { case text, svg }
/// How a set of sessions is exported (`export`).
package enum ExportStyle: Sendable { case chromeTrace }
/// How the ingest summary is written (`ingest`).
package enum SummaryStyle: Sendable { case text, json }

/// Every output format of every command, in one place: a new format is a file under
/// `Formats/` (or `Compare/`, `Timeline/`) and one line here.
package enum OutputFormats {
    package static let report = FormatChoices<any Reporter.Type>([
        OutputFormat(TextReporter.id, TextReporter.summary, TextReporter.self),
        OutputFormat(JSONReporter.id, JSONReporter.summary, JSONReporter.self),
        OutputFormat(CSVReporter.id, CSVReporter.summary, CSVReporter.self),
        OutputFormat(SARIFReporter.id, SARIFReporter.summary, SARIFReporter.self),
        OutputFormat(JUnitReporter.id, JUnitReporter.summary, JUnitReporter.self),
        OutputFormat(HTMLReporter.id, HTMLReporter.summary, HTMLReporter.self),
    ])

    package static let compare = FormatChoices<any ComparisonReporter.Type>([
        OutputFormat(CompareTextReporter.id, CompareTextReporter.summary, CompareTextReporter.self),
        OutputFormat(CompareJSONReporter.id, CompareJSONReporter.summary, CompareJSONReporter.self),
        OutputFormat(CompareMarkdownReporter.id, CompareMarkdownReporter.summary, CompareMarkdownReporter.self),
        OutputFormat(CompareJUnitReporter.id, CompareJUnitReporter.summary, CompareJUnitReporter.self),
    ])

    package static let rows = FormatChoices<RowStyle>([
        OutputFormat("table", "aligned columns for people", .table),
        OutputFormat("csv", "RFC 4180 CSV with a header row", .csv),
        OutputFormat("json", "one JSON array of objects", .json),
    ])

    package static let timeline = FormatChoices<TimelineStyle>([
        OutputFormat("text", "lanes drawn in text", .text),
        OutputFormat("svg", "one SVG picture", .svg),
    ])

    package static let export = FormatChoices<ExportStyle>([
        OutputFormat("chrome-trace", "Chrome's trace event JSON, for Perfetto and chrome://tracing", .chromeTrace),
    ])

    package static let ingestSummary = FormatChoices<SummaryStyle>([
        OutputFormat("text", "for people", .text),
        OutputFormat("json", "one JSON document", .json),
    ])
}
