/// An output format of `lctrace compare`, listed in `OutputFormats.compare`, which `--format`,
/// its validation, the help and completions read.
package protocol ComparisonReporter {
    static var id: String { get }
    static var summary: String { get }
    static func render(_ comparison: BuildComparison) -> String
}

/// Formatting shared by the compare reporters.
enum CompareFormat {
    package static func ms(_ ns: Int64) -> String {
        let ms = Double(ns) / 1e6
        return ms >= 100 ? String(format: "%.0f ms", ms) : String(format: "%.1f ms", ms)
    }

    package static func rate(_ r: Double) -> String { String(format: "%.2f", r) }

    package static func p(_ p: Double) -> String { p < 0.0001 ? String(format: "%.1e", p) : String(format: "%.4f", p) }

    package static func animation(_ animated: Bool) -> String { animated ? "animated" : "plain" }
}

import Foundation
