import XCTest
@testable import LCTraceRules
@testable import LCTraceSQLite

/// Findings stored by other rules are never reported as current: the stored settings text
/// names the rules' version and every rule id, so a database analyzed before a rule existed
/// (or by rules 1.1) is analyzed again by the next report.
final class StoredFindingsTests: TemporaryDirectoryTestCase {
    func testTheSettingsTextNamesTheRulesVersionAndEveryRule() {
        let text = RuleSettings().canonicalText
        XCTAssertTrue(text.hasPrefix("rules=\(RuleCatalog.rulesVersion):"), text)
        for rule in RuleCatalog.all { XCTAssertTrue(text.contains(rule.id), "\(rule.id) missing from \(text)") }
    }

    /// A database as an lctrace without LC301 would have left it: its settings text lacks the
    /// id and it stored no LC301 finding. The report must find the leaks all the same.
    func testADatabaseAnalyzedBeforeARuleExistedIsAnalyzedAgain() throws {
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, samples]).status, 0)
        let expected = TestSupport.run(["report", "-f", "csv", "--fail-on", "never", "--db", db]).out
        XCTAssertTrue(expected.contains("LC301"), "the samples hold leaks")
        do {
            let sql = try SQLiteDatabase(path: db)
            let stored = try XCTUnwrap(sql.scalarText("SELECT value FROM meta WHERE key = 'rule_settings'"))
            try sql.prepare("UPDATE meta SET value = ? WHERE key = 'rule_settings'")
                .run([.text(stored.replacingOccurrences(of: "LC301,", with: ""))])
            try sql.execute("DELETE FROM findings WHERE rule = 'LC301'")
        }
        let report = TestSupport.run(["report", "-f", "csv", "--fail-on", "never", "--db", db])
        XCTAssertEqual(report.status, 0, report.err)
        XCTAssertEqual(report.out, expected)
    }
}
