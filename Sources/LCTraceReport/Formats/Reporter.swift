/// An output format of `lctrace report`: one type per file under `Formats/`, listed in
/// `OutputFormats.report`, which `--format`, its validation, the help and completions read. A reporter
/// turns the view model (`ReportView`, built once) into text; it never queries, counts
/// identities again, or special-cases a rule.
package protocol Reporter {
    /// The `--format` value.
    static var id: String { get }
    /// One line for the help text.
    static var summary: String { get }
    /// What the command must gather for it beyond the findings (none by default): a reporter
    /// that does not ask pays nothing for it.
    static var inputs: ReportInputs { get }
    /// Lines for people, broken to a terminal's width when shown on one (false by default:
    /// machine formats keep their lines).
    static var fitsTerminalWidth: Bool { get }
    static func render(_ view: ReportView) -> String
}

extension Reporter {
    package static var inputs: ReportInputs { [] }
    package static var fitsTerminalWidth: Bool { false }
}

/// What a reporter can ask the command to gather into the view model.
package struct ReportInputs: OptionSet, Sendable {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }
    /// The gaps one by one with their sessions (`ReportData.gapRows`, `ReportView.gapsByBuild`).
    package static let gapsBySession = ReportInputs(rawValue: 1)
    /// The examples drawn: timelines, holders, raw events (`ReportView.exhibits`).
    package static let exhibits = ReportInputs(rawValue: 2)
    /// Where each identity sits in the app's sources (`ReportView.placements`).
    package static let sourcePlacements = ReportInputs(rawValue: 4)
}
