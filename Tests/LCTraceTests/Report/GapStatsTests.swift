import XCTest
@testable import LCTraceFormat
@testable import LCTraceModel
@testable import LCTraceRules
@testable import LCTraceIngest
@testable import LCTraceStore
@testable import LCTraceSQLite
@testable import LCTracePostgreSQL
@testable import LCTraceAnalysis
@testable import LCTraceReport
@testable import LCTrace

/// The gap statistics pick their percentiles by selection, not by sorting: they must be the
/// nearest-rank percentiles of the sorted values, whatever the order and the repeats.
final class GapStatsTests: XCTestCase {
    func testSelectionGivesTheSortedPercentiles() {
        var rng = SystemRandomNumberGenerator()
        var cases: [[Int64]] = [[], [7], [3, 3], [2, 1], Array(0..<1000), Array((0..<1000).reversed()),
                                Array(repeating: 5, count: 500), (0..<999).map { Int64($0 % 3) }]
        for n in [2, 3, 10, 101, 1_000, 20_000] {
            cases.append((0..<n).map { _ in Int64.random(in: 0...1_000_000_000, using: &rng) })
            cases.append((0..<n).map { _ in Int64.random(in: 0...4, using: &rng) })
        }
        for values in cases {
            let sorted = values.sorted()
            let stats = GapStats(cls: "C", values: values)
            let label = "\(values.count) values, first \(values.prefix(5))"
            XCTAssertEqual(stats.count, values.count, label)
            XCTAssertEqual(stats.p50, Percentile.of(sorted, 0.5), label)
            XCTAssertEqual(stats.p90, Percentile.of(sorted, 0.9), label)
            XCTAssertEqual(stats.p99, Percentile.of(sorted, 0.99), label)
            XCTAssertEqual(stats.max, sorted.last ?? 0, label)
            XCTAssertEqual(stats.histogram.reduce(0, +), values.count, label)
        }
    }
}
