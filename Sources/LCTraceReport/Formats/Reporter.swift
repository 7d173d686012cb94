/// An output format of `lctrace report`: one type per file under `Report/`, listed in
/// `Reporters.all`, which `--format`, its validation and the help text all read. A reporter
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
    static func render(_ view: ReportView) -> String
}

package extension Reporter {
    package static var inputs: ReportInputs { [] }
}

/// What a reporter can ask the command to gather into the view model.
package struct ReportInputs: OptionSet, Sendable {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }
    /// The gaps one by one with their sessions (`ReportData.gapRows`, `ReportView.gapsByBuild`).
    package static let gapsBySession = ReportInputs(rawValue: 1)
    /// The examples drawn: timelines, holders, raw events (`ReportView.exhibits`).
    package static let exhibits = ReportInputs(rawValue: 2)
}

/// Every format of `lctrace report`, in help order. A new one is one file and one line here.
package enum Reporters {
    // Immutable lists of metatypes: `nonisolated(unsafe)` because a protocol's metatype is
    // Sendable only with SendableMetatype (Swift 6.2), and the package builds with 6.0 too.
    nonisolated(unsafe) package static let all: [any Reporter.Type] = [
        TextReporter.self, JSONReporter.self, CSVReporter.self, SARIFReporter.self, JUnitReporter.self,
        HTMLReporter.self,
    ]

    package static var ids: [String] { all.map { $0.id } }

    package static func named(_ id: String) -> (any Reporter.Type)? { all.first { $0.id == id } }

    /// "text (grouped for people), json (…), …" for the help text.
    package static var help: String { all.map { "\($0.id) (\($0.summary))" }.joined(separator: ", ") }
}
