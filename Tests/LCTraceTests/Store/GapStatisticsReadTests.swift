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

/// The gaps `report` counts are read from the packed rows, with each appearance's class from
/// a second stream over the instances: they must be what the documented view says.
final class GapStatisticsReadTests: TemporaryDirectoryTestCase {
    func testTheGapsAreTheDocumentedViewsGaps() throws {
        // First a session with a controller and no appearance at all, so that the next
        // session's instances come right after instances the gap rows never name.
        let quiet = dir + "/quiet.jsonl"
        TestSupport.writeLines([
            #"{"v":1,"sid":"quiet","seq":0,"t":1,"ev":"session","app":"a"}"#,
            #"{"v":1,"sid":"quiet","seq":1,"t":2,"ev":"init","vc":"0x1","cls":"QuietViewController"}"#,
            #"{"v":1,"sid":"quiet","seq":2,"t":3,"ev":"viewDidLoad","vc":"0x1"}"#,
        ], to: quiet)
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, quiet]).status, 0)
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, samples]).status, 0)

        let sqlite = try SQLiteDatabase(path: db, mode: .readOnly)
        let read = try DatabaseReader(db: sqlite).gaps(SessionFilter())
        var expected: [GapSeries: [Int64]] = [:]
        let q = try sqlite.prepare("""
            SELECT coalesce(class, '?'), animated, did_t - is_t FROM appearances_v
            WHERE outcome = 'completed' AND is_t IS NOT NULL AND did_t IS NOT NULL AND interactive = 0 AND backgrounded = 0
              AND session_id IN (SELECT id FROM sessions WHERE dirty = 0)
            """)
        while try q.step() {
            expected[GapSeries(cls: q.text(0) ?? "?", animated: q.optionalInt(1) == 1), default: []].append(q.int(2))
        }
        XCTAssertGreaterThan(expected.values.map(\.count).reduce(0, +), 100, "SampleTraces has appearances")
        XCTAssertGreaterThan(expected.keys.filter { $0.cls != "?" }.count, 5, "classes are resolved")
        XCTAssertEqual(Set(read.keys), Set(expected.keys))
        for (series, values) in expected {
            XCTAssertEqual(read[series]?.sorted(), values.sorted(), "\(series)")
        }
    }

    /// The stored counts of the sessions an ingest analyzed while loading: read by id for a
    /// few sessions, by two passes over the tables for many; the same either way, file
    /// findings (session 0) never among them.
    func testStoredCountsReadByIdOrByPassesAgree() throws {
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, samples]).status, 0)
        let sqlite = try SQLiteDatabase(path: db, mode: .readOnly)
        let reader = DatabaseReader(db: sqlite)
        var all: [Int64] = []
        let q = try sqlite.prepare("SELECT id FROM sessions ORDER BY id")
        while try q.step() { all.append(q.int(0)) }
        XCTAssertGreaterThan(all.count, 3)
        let expected = { (ids: [Int64]) -> (Int, Int) in
            let list = ids.map(String.init).joined(separator: ",")
            let events = try sqlite.scalarInt("SELECT coalesce(sum(events), 0) FROM sessions WHERE id IN (\(list))") ?? -1
            let findings = try sqlite.scalarInt("SELECT count(*) FROM findings_v WHERE session_id IN (\(list))") ?? -1
            return (Int(events), Int(findings))
        }
        for ids in [all, Array(all.prefix(2)), [all.last!, 999_999], [all[1]]] {
            let set = SessionSet(ids)
            let byID = try reader.storedCounts(of: set)
            let byPasses = try reader.storedCounts(of: set, byIDUpTo: 0)
            let want = try expected(ids)
            XCTAssertEqual(byID.events, want.0, "\(ids)")
            XCTAssertEqual(byID.findings, want.1, "\(ids)")
            XCTAssertEqual(byPasses.events, want.0, "\(ids)")
            XCTAssertEqual(byPasses.findings, want.1, "\(ids)")
        }
        XCTAssertGreaterThan(try expected(all).1, 0, "SampleTraces has findings")
    }
}
