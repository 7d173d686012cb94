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

/// `lctrace timeline` on SampleTraces, compared with golden files: a leak after a pop, an
/// orphan view, a cancelled interactive pop, a leak after a dismissal and a whole session.
/// The arguments come from the samples themselves (the finding, the interactive pop), so a
/// regenerated sample needs new golden files, not new tests.
final class TimelineGoldenTests: SampleDatabaseTestCase {

    /// The instance of the first finding of `rule` in the session whose id begins with `sid`.
    func instance(_ rule: String, _ sid: String) throws -> String {
        try TimelineFixtures.scalar(db, """
            SELECT vc || '#' || since FROM findings_v WHERE rule = '\(rule)' AND session LIKE '\(sid)%' ORDER BY t LIMIT 1
            """)
    }

    func timeline(_ args: [String], file: StaticString = #filePath, line: UInt = #line) -> String {
        let r = TestSupport.run(["timeline", "--db", db, "--width", "100"] + args)
        XCTAssertEqual(r.status, 0, r.err, file: file, line: line)
        XCTAssertEqual(r.err, "", file: file, line: line)
        return r.out
    }

    func testLeakAfterPop() throws {
        let leak = try instance("LC301", "db9c5598")
        let out = timeline(["--session", "db9c5598", "--vc", leak])
        XCTAssertTrue(out.contains("! "), "the leak is marked")
        XCTAssertTrue(out.contains("(pop)"), "its release says how")
        Golden.check(out, "timeline-leak-pop.txt")
    }

    func testOrphanView() throws {
        let orphan = try instance("LC101", "db9c5598")
        let out = timeline(["--session", "db9c5598", "--vc", orphan])
        XCTAssertTrue(out.contains("LC101 error"), out)
        XCTAssertTrue(out.contains("'s view into ProductListViewController"), "the host its view sits in is drawn")
        Golden.check(out, "timeline-orphan.txt")
    }

    func testCancelledInteractivePop() throws {
        let pop = try TimelineFixtures.scalar(db, """
            SELECT seq FROM events_v WHERE sid LIKE 'db9c5598%' AND event = 'pop' AND interactive = 1 ORDER BY seq LIMIT 1
            """)
        let out = timeline(["--session", "db9c5598", "--around", pop, "--window", "10s"])
        XCTAssertTrue(out.contains("(interactive)"), out)
        XCTAssertFalse(out.contains("(pop)\n"), "a cancelled pop releases nothing")
        XCTAssertFalse(out.contains("\n  ! "), "and is no finding")
        Golden.check(out, "timeline-cancelled-pop.txt")
    }

    func testLeakAfterDismissal() throws {
        let leak = try instance("LC301", "aad71e75")
        let out = timeline(["--session", "aad71e75", "--vc", leak])
        XCTAssertTrue(out.contains("present "), "the presentation is an arrow")
        XCTAssertTrue(out.contains("(dismiss)"), out)
        Golden.check(out, "timeline-leak-dismiss.txt")
    }

    func testWholeShortSession() {
        let out = timeline(["--session", "db9c5598"])
        XCTAssertTrue(out.contains("the whole session"), out)
        Golden.check(out, "timeline-session.txt")
    }
}
