/// An output format of `lctrace report`: one type per file under `Report/`, listed in
/// `Reporters.all`, which `--format`, its validation and the help text all read. A reporter
/// turns the view model (`ReportView`, built once) into text; it never queries, counts
/// identities again, or special-cases a rule.
public protocol Reporter {
    /// The `--format` value.
    static var id: String { get }
    /// One line for the help text.
    static var summary: String { get }
    static func render(_ view: ReportView) -> String
}

/// Every format of `lctrace report`, in help order. A new one (HTML) is one file and one line here.
public enum Reporters {
    public static let all: [any Reporter.Type] = [
        TextReporter.self, JSONReporter.self, CSVReporter.self, SARIFReporter.self, JUnitReporter.self,
    ]

    public static var ids: [String] { all.map { $0.id } }

    public static func named(_ id: String) -> (any Reporter.Type)? { all.first { $0.id == id } }

    /// "text (grouped for people), json (…), …" for the help text.
    public static var help: String { all.map { "\($0.id) (\($0.summary))" }.joined(separator: ", ") }
}
