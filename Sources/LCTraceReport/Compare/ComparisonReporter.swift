/// An output format of `lctrace compare`, listed in `ComparisonReporters.all`, which
/// `--format`, its validation and the help read.
package protocol ComparisonReporter {
    static var id: String { get }
    static var summary: String { get }
    static func render(_ comparison: BuildComparison) -> String
}

package enum ComparisonReporters {
    // Immutable lists of metatypes: `nonisolated(unsafe)` because a protocol's metatype is
    // Sendable only with SendableMetatype (Swift 6.2), and the package builds with 6.0 too.
    nonisolated(unsafe) package static let all: [any ComparisonReporter.Type] = [
        CompareTextReporter.self, CompareJSONReporter.self, CompareMarkdownReporter.self, CompareJUnitReporter.self,
    ]
    package static var ids: [String] { all.map { $0.id } }
    package static func named(_ id: String) -> (any ComparisonReporter.Type)? { all.first { $0.id == id } }
    package static var help: String { all.map { "\($0.id) (\($0.summary))" }.joined(separator: ", ") }
}

/// Formatting shared by the compare reporters.
package enum CompareFormat {
    package static func ms(_ ns: Int64) -> String {
        let ms = Double(ns) / 1e6
        return ms >= 100 ? String(format: "%.0f ms", ms) : String(format: "%.1f ms", ms)
    }

    package static func rate(_ r: Double) -> String { String(format: "%.2f", r) }

    package static func p(_ p: Double) -> String { p < 0.0001 ? String(format: "%.1e", p) : String(format: "%.4f", p) }

    package static func animation(_ animated: Bool) -> String { animated ? "animated" : "plain" }
}

import Foundation
