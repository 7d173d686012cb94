import Foundation
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

/// Shared by the timeline, SVG and export tests: the sample traces loaded once per class,
/// timelines of inline traces without a database, and golden files beside the tests.
enum TimelineFixtures {
    /// A database of SampleTraces/, for one test class (removed by `removeSample`).
    static func loadSample() -> String {
        let dir = TestSupport.temporaryDirectory("timeline-samples")
        let db = dir + "/samples.db"
        let r = TestSupport.run(["ingest", "-q", "--db", db, TestSupport.root.appendingPathComponent("SampleTraces").path])
        XCTAssertEqual(r.status, 0, r.err)
        return db
    }

    static func removeSample(_ db: String) {
        try? FileManager.default.removeItem(atPath: (db as NSString).deletingLastPathComponent)
    }

    /// The one row `sql` returns in the sample database, as text.
    static func scalar(_ db: String, _ sql: String) throws -> String {
        let q = try SQLiteDatabase(path: db, mode: .readOnly).prepare(sql)
        guard try q.step() else { XCTFail("no row for \(sql)"); return "" }
        return RowFormatter.plain(q.value(0))
    }

    /// The session record of a `TraceBuilder` session, as the store would list it.
    static func session(_ b: TraceBuilder, model: SessionModel) -> SessionInfo {
        SessionInfo(id: 1, sid: b.sid, app: "com.example.app", appVersion: "1.0", build: "1", device: "iPhone16,2",
                    os: "iOS", osVersion: "27.1", sdk: "27.0", wall: nil, events: model.stats.events, lostEvents: 0,
                    firstT: model.stats.firstT, lastT: model.stats.lastT, endReason: nil, dirty: false, recordConflicts: 0)
    }

    /// The rows a stored model of `b`'s events would give, with its marked events.
    static func rows(_ b: TraceBuilder, _ model: SessionModel) -> TimelineRows {
        var rows = TimelineRows()
        rows.append(model)
        rows.sortByKey()
        rows.totalInstances = rows.instances.count
        rows.events = events(b).filter { TimelineQuery.markedKinds.contains($0.kind) }
        return rows
    }

    static func events(_ b: TraceBuilder) -> [TraceEvent] {
        let decoder = EventDecoder()
        return b.lines.compactMap { line in
            var bytes = Array(line.utf8)
            let result = bytes.withUnsafeMutableBytes { decoder.decode(UnsafeRawBufferPointer($0)) }
            if case .success(let e) = result { return e }
            return nil
        }
    }

    /// Rows in memory handed out one at a time, as an export reads a session's.
    struct RowsInMemory: SessionRowStream {
        var rows: TimelineRows
        var events: [TraceEvent]
        func forEachCycle(_ body: (TimelineRows.Cycle) throws -> Void) throws { try rows.cycles.forEach(body) }
        func forEachEdge(_ body: (TimelineRows.Edge) throws -> Void) throws { try rows.edges.forEach(body) }
        func forEachMarkedEvent(window: TimeWindow?, _ body: (TraceEvent) throws -> Void) throws {
            try rows.events.filter { e in window.map { $0.contains(e.t) } ?? true }.forEach(body)
        }
        func forEachEvent(_ body: (TraceEvent) throws -> Void) throws { try events.forEach(body) }
        var rowsHandedOut: Int { 0 }
    }

    /// The timeline of a whole inline session (or of `window`).
    static func timeline(_ b: TraceBuilder, window: TimeWindow? = nil, options: TimelineOptions = TimelineOptions()) -> Timeline {
        let model = b.model()
        let info = session(b, model: model)
        let span = TimeWindow(start: info.firstT!, end: info.lastT!)
        return TimelineBuilder.build(session: info, rows: rows(b, model), findings: model.findings,
                                     window: window ?? span, options: options)
    }
}

/// A test case with SampleTraces/ loaded once for the whole class (`db`), read-only.
class SampleDatabaseTestCase: XCTestCase {
    /// XCTest runs a class's setUp, tests and tearDown one after another on one thread.
    nonisolated(unsafe) private static var path = ""
    override class func setUp() { super.setUp(); path = TimelineFixtures.loadSample() }
    override class func tearDown() { TimelineFixtures.removeSample(path); super.tearDown() }
    var db: String { Self.path }
    static var db: String { path }
}

/// Golden files beside the tests (Tests/LCTraceTests/Report/Golden), compared exactly and
/// written again only on request: `LCTRACE_RECORD=1 swift test --filter TimelineGoldenTests`.
enum Golden {
    static let directory = TestSupport.root.appendingPathComponent("Tests/LCTraceTests/Report/Golden")

    /// `steady` is applied to both sides before they are compared, and to what is recorded (so
    /// the files hold no checkout's path).
    static func check(_ actual: String, _ name: String, steady: (String) -> String = { $0 },
                      file: StaticString = #filePath, line: UInt = #line) {
        let url = directory.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["LCTRACE_RECORD"] == "1" {
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            XCTAssertNoThrow(try steady(actual).write(to: url, atomically: true, encoding: .utf8), file: file, line: line)
            return
        }
        guard let recorded = try? String(contentsOf: url, encoding: .utf8) else {
            XCTFail("no golden file \(name); record it with LCTRACE_RECORD=1 swift test --filter TimelineGoldenTests", file: file, line: line)
            return
        }
        let (expected, actual) = (steady(recorded), steady(actual))
        guard expected != actual else { return }
        let a = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let b = actual.split(separator: "\n", omittingEmptySubsequences: false)
        let first = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
        XCTFail("""
            \(name) differs from line \(first + 1) (re-record with LCTRACE_RECORD=1 if the change is intended):
            expected: \(first < a.count ? String(a[first]) : "<end>")
              actual: \(first < b.count ? String(b[first]) : "<end>")
            """, file: file, line: line)
    }
}
