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

/// The Mann–Whitney U test and the regression rule of `compare`: a clear slowdown flags, noise
/// and tiny significant differences never do.
final class RankTestTests: XCTestCase {
    func ms(_ values: [Double]) -> [Int64] { values.map { Int64($0 * 1_000_000) } }

    func testAgreesWithTheTextbookNormalApproximation() {
        // U = 25 of 25, mean 12.5, sd 4.787: z = (12.5 - 0.5) / 4.787 = 2.507, p = 0.0122 (two-sided).
        let r = RankTest.mannWhitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
        XCTAssertEqual(r.u, 25)
        XCTAssertEqual(r.p, 0.01219, accuracy: 0.00005)
        // Ties: all equal gives no evidence at all.
        XCTAssertEqual(RankTest.mannWhitney([5, 5, 5], [5, 5, 5]).p, 1)
        // Ties: [1,1,2,2] vs [2,2,3,3]: ranks 1.5,1.5 | 4.5 ×4 | 7.5,7.5, U = 24 - 10 = 14, mean 8,
        // variance 16/12 × (9 - (6 + 60 + 6) / 56) = 10.286, z = (6 - 0.5) / 3.207 = 1.715, p = 0.0864.
        XCTAssertEqual(RankTest.mannWhitney([1, 1, 2, 2], [2, 2, 3, 3]).p, 0.0864, accuracy: 0.0005)
    }

    func comparison(base: [Int64], head: [Int64]) -> TimingComparison? {
        func side(_ build: String, _ values: [Int64]) -> ComparisonSide {
            var data = ReportData()
            data.gapSeries = [GapSeries(cls: "V", animated: true): values]
            return ComparisonSide(build: build, data: data)
        }
        return BuildComparison(base: side("1", base), head: side("2", head), failOn: .error).timings.first
    }

    func testAClearSlowdownIsARegression() throws {
        var rng = SplitMix(seed: 3)
        let base = (0..<40).map { _ in Int64(200 + rng.next() % 60) * 1_000_000 }
        let head = (0..<40).map { _ in Int64(320 + rng.next() % 60) * 1_000_000 }
        let t = try XCTUnwrap(comparison(base: base, head: head))
        XCTAssertTrue(t.regressed)
        XCTAssertLessThan(t.pValue, 1e-6)
    }

    func testNoiseNeverFlags() throws {
        // Twenty pairs of samples drawn from one wide distribution: none is a regression.
        var rng = SplitMix(seed: 11)
        for _ in 0..<20 {
            let draw = { (0..<30).map { _ in Int64(100 + rng.next() % 400) * 1_000_000 } }
            let t = try XCTUnwrap(comparison(base: draw(), head: draw()))
            XCTAssertFalse(t.regressed, "p = \(t.pValue), p50 \(t.baseP50) → \(t.headP50)")
        }
    }

    func testASignificantButTinyDifferenceIsNoRegression() throws {
        // 5 ms slower on 2,000 appearances each: significant, below the minimum effect.
        let base = (0..<2000).map { Int64(300 + $0 % 7) * 1_000_000 }
        let head = base.map { $0 + 5_000_000 }
        let t = try XCTUnwrap(comparison(base: base, head: head))
        XCTAssertLessThan(t.pValue, 0.01)
        XCTAssertFalse(t.regressed)
    }

    func testTooFewAppearancesAreNotCompared() {
        XCTAssertNil(comparison(base: ms([100, 100, 100]), head: ms([900, 900, 900])))
    }

    func testAFasterHeadIsNoRegression() throws {
        let base = (0..<30).map { Int64(500 + $0) * 1_000_000 }
        let head = (0..<30).map { Int64(100 + $0) * 1_000_000 }
        XCTAssertFalse(try XCTUnwrap(comparison(base: base, head: head)).regressed)
    }
}
