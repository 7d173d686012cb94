import LCTraceModel

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
    /// The gaps kept by their sessions' builds (`ReportData.gapTable`, `ReportView.gapsByBuild`).
    package static let gapsBySession = ReportInputs(rawValue: 1)
    /// The examples drawn: timelines, holders, raw events (`ReportView.exhibits`).
    package static let exhibits = ReportInputs(rawValue: 2)
    /// Where each identity sits in the app's sources (`ReportView.placements`).
    package static let sourcePlacements = ReportInputs(rawValue: 4)
    /// Every text from traces and files escaped for a terminal as it comes (`TerminalText`).
    package static let terminalText = ReportInputs(rawValue: 8)
}

/// A reporter whose document lists every finding (json, csv): `report` hands it the findings
/// one at a time as they come from the database, and it writes each at once, so memory stays
/// flat whatever their number (issue 25). `render` writes the same bytes from a view that
/// holds them all.
package protocol StreamingReporter: Reporter {
    /// A writer of one document to `sink` (whole UTF-8 pieces).
    static func writer(_ options: ReportOptions, to sink: @escaping ([UInt8]) throws -> Void) -> any FindingWriter
}

/// Writes one document of a `StreamingReporter`: what comes before the findings when made.
package protocol FindingWriter: AnyObject {
    /// The next finding in report order, and under a baseline how it stands.
    func add(_ f: Finding, state: BaselineState?) throws
    /// What follows the findings (their counts come from `view`), and hands on the rest.
    func finish(_ view: ReportView) throws
}

extension StreamingReporter {
    package static func render(_ view: ReportView) -> String {
        var out: [UInt8] = []
        let writer = writer(view.options) { out += $0 }
        // The sink cannot fail, so neither can the writer.
        for i in 0..<view.findings.count { try! writer.add(view.findings[i], state: view.state(ofFinding: i)) }
        try! writer.finish(view)
        return String(decoding: out, as: UTF8.self)
    }
}
