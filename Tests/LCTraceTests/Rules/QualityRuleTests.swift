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

/// The quality family (LC901–LC904): rule triplets (see `RuleTestCase`; LC904 judges files,
/// not sessions).
final class QualityRuleTests: RuleTestCase {
    func testQualityRulesAndLowConfidence() {
        var b = app()
        b.seq += 3  // three lost events
        b.vc(1000, "viewWillAppear", "0xu")   // an id with no init
        b.add(900, "mark", #""name":"clock went back""#)
        push(&b, 2000, "0xb")
        pop(&b, 4000, "0xb", deinitAfter: nil)
        end(&b, 12_000)
        XCTAssertEqual(b.findings(), ["LC203 0xu#20", "LC301 0xb#22", "LC901 -#-", "LC902 0xu#20", "LC903 -#-"])
        let model = b.model()
        XCTAssertTrue(model.findings.allSatisfy { $0.confidence == "low" })
        XCTAssertTrue(model.findings.contains { $0.rule == "LC901" && $0.message.hasPrefix("3 events lost in 1 hole: seq 17–19") })
    }
}
