import XCTest
@testable import LCTraceFormat
@testable import LCTraceModel
@testable import LCTraceStore
@testable import LCTraceSQLite
@testable import LCTraceReport
@testable import LCTrace
@testable import LCTraceGen

/// An export holds a bounded number of bytes of a session whatever its length: past its limit
/// the records go to a temporary file in sorted runs, merged when written, and the file is the
/// same byte for byte as one sorted in memory (a 5 M-event session took 4 GB when every record
/// was held).
final class ExportMemoryTests: SampleDatabaseTestCase {
    /// Every sample session exported through a writer holding at most `limit` bytes of records.
    func exportAll(memoryLimit: Int) throws -> (json: String, writer: ChromeTraceWriter) {
        let storage = Storage(try SQLiteDatabase(path: db, mode: .readOnly))
        var out: [UInt8] = []
        let writer = ChromeTraceWriter(bytes: { out += $0 }, memoryLimit: memoryLimit)
        try writer.begin()
        for session in try storage.model.sessions(SessionFilter()) {
            try TimelineReport.export(db: storage, session: session, findings: ReportRequest(), to: writer)
        }
        try writer.finish()
        return (String(decoding: out, as: UTF8.self), writer)
    }

    func testALongSessionIsSortedThroughATemporaryFileWithinTheLimit() throws {
        let whole = try exportAll(memoryLimit: 1 << 30)
        XCTAssertEqual(whole.writer.spilledRuns, 0, "the sample fits in a gigabyte")
        let limit = 8_192
        let bounded = try exportAll(memoryLimit: limit)
        XCTAssertGreaterThan(bounded.writer.spilledRuns, 10, "records past the limit go to sorted runs")
        // One record (at most a few KB) may pass the limit before its run is written.
        XCTAssertLessThan(bounded.writer.peakHeldBytes, limit + 4_096)
        XCTAssertLessThan(bounded.writer.peakHeldBytes, whole.writer.peakHeldBytes / 4)
        XCTAssertEqual(bounded.json, whole.json, "the runs merge into the same file")
        XCTAssertEqual(try ChromeTraceTests.violations(bounded.json), [])
    }

    func testTheSorterMergesRunsInKeyOrder() throws {
        var sorter = RecordSorter(memoryLimit: 200)
        var expected: [(Int64, Int, Int)] = []
        var rng = SystemRandomNumberGenerator()
        for i in 0..<2_000 {
            let t = Int64.random(in: -50...50, using: &rng), rank = Int.random(in: 0...2, using: &rng)
            try sorter.append(t: t, rank: rank) { $0.int(Int64(i)) }
            expected.append((t, rank, i))
        }
        XCTAssertGreaterThan(sorter.spilledRuns, 50)
        expected.sort { ($0.0, $0.1, $0.2) < ($1.0, $1.1, $1.2) }
        var got: [String] = []
        try sorter.forEachOrdered { got.append(String(decoding: $0, as: UTF8.self)) }
        XCTAssertEqual(got, expected.map { String($0.2) })
    }
}

/// An export holds a bounded number of a session's appearance, edge and event rows whatever
/// its length: it reads them one at a time (a 5 M-event session took 944 MB to export when
/// they were read whole, with the session's timeline built from them).
final class StreamedRowsTests: TemporaryDirectoryTestCase {
    /// The database of one generated session of `scenarios` scenarios, and the session.
    func oneSession(scenarios: Int, name: String) throws -> (Storage, SessionInfo) {
        let o = CorpusOptions.make(seed: 3, sessions: 1, sessionsPerFile: 1, scenarios: scenarios)
        let corpus = dir + "/" + name
        try CorpusWriter.write(plans: CorpusWriter.randomPlans(o), to: corpus, options: o)
        let path = dir + "/\(name).db"
        let r = TestSupport.run(["ingest", "-q", "--db", path, corpus])
        XCTAssertEqual(r.status, 0, r.err)
        let storage = Storage(try SQLiteDatabase(path: path, mode: .readOnly))
        let session = try XCTUnwrap(try storage.model.sessions(SessionFilter()).first)
        return (storage, session)
    }

    func testAnExportHoldsABoundedNumberOfRowsWhateverTheSessionsLength() throws {
        var held: [Int] = []
        var events: [Int] = []
        for (scenarios, name) in [(30, "short"), (600, "long")] {
            let (storage, session) = try oneSession(scenarios: scenarios, name: name)
            let writer = ChromeTraceWriter(bytes: { _ in })
            try writer.begin()
            try TimelineReport.export(db: storage, session: session, findings: ReportRequest(), to: writer)
            try writer.finish()
            held.append(writer.peakHeldRows)
            events.append(session.events)
        }
        XCTAssertGreaterThan(events[1], events[0] * 5, "the long session is longer")
        XCTAssertLessThanOrEqual(held[1], 16, "rows held at once for \(events[1]) events")
        XCTAssertLessThanOrEqual(held[0], 16, "rows held at once for \(events[0]) events")
    }

    /// `timeline --vc` of the controller alive longest reads its session's appearance, edge and
    /// event rows one at a time too (a controller alive throughout a 5 M-event session took
    /// 900 MB when they were read whole and every arrow of its life built), and holds only the
    /// arrows between the lanes it draws.
    func testAControllersTimelineHoldsABoundedNumberOfRowsWhateverTheSessionsLength() throws {
        var held: [Int] = [], arrows: [Int] = [], events: [Int] = []
        for (scenarios, name) in [(30, "short"), (600, "long")] {
            let (storage, session) = try oneSession(scenarios: scenarios, name: name)
            let source = try TimelineSource(db: storage, session: session)
            let longest = try XCTUnwrap(try source.allInstances().min { a, b in
                ((a.endT ?? .max / 2) - a.firstT, b.key.since) > ((b.endT ?? .max / 2) - b.firstT, a.key.since)
            })
            var request = TimelineRequest()
            request.vc = longest.key.description
            let timeline = try TimelineReport.make(source: source, findings: [], request)
            XCTAssertTrue(timeline.lanes.contains { $0.key == longest.key && $0.focused })
            held.append(source.rowsHandedOut)
            arrows.append(timeline.arrows.count)
            events.append(session.events)
        }
        XCTAssertGreaterThan(events[1], events[0] * 5, "the long session is longer")
        XCTAssertLessThanOrEqual(held[1], 16, "rows held at once for \(events[1]) events")
        XCTAssertLessThanOrEqual(held[0], 16, "rows held at once for \(events[0]) events")
        XCTAssertLessThanOrEqual(arrows[1], 4 * 40, "arrows held for \(events[1]) events (40 lanes)")
    }
}
