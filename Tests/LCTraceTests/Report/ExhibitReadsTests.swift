import XCTest
import CSQLite
@testable import LCTraceModel
@testable import LCTraceRules
@testable import LCTraceStore
@testable import LCTraceSQLite
@testable import LCTraceReport
@testable import LCTrace

/// The examples the HTML report draws read their windows of a session, not the session: a
/// 5 M-event session's report took 23 times the text report's time when each example scanned
/// every event for its marked ones (twice), and an instance's events from its start to the
/// session's end (three times, though it had ended early).
final class ExhibitReadsTests: TemporaryDirectoryTestCase {
    /// One session: the root controllers, two orphan views (LC101) in its first seconds, `ticks`
    /// events that change no controller (one every 100 ms), and a third orphan view at its end.
    func database(ticks: Int, name: String) throws -> String {
        var b = TraceBuilder.app()
        func orphan(_ vc: String, at ms: Double) {
            b.vc(ms, "init", vc, #""cls":"CarouselVC""#)
            b.vc(ms + 1, "viewDidLoad", vc)
            b.vc(ms + 2, "viewAttached", vc, #""host":"0xa""#)
            b.vc(ms + 2_000, "viewDetached", vc, #""host":"0xa""#)
            b.vc(ms + 2_010, "deinit", vc)
        }
        orphan("0xo", at: 1_000)
        orphan("0xp", at: 4_000)
        let ticksFrom = 10_000.0
        for i in 0..<ticks { b.add(ticksFrom + Double(i) * 100, "mark", #""name":"tick""#) }
        let end = ticksFrom + Double(ticks) * 100
        orphan("0xq", at: end)
        b.add(end + 10_000, "sessionEnd", #""reason":"stopped""#)
        let trace = dir + "/\(name).jsonl", path = dir + "/\(name).db"
        try (b.lines.joined(separator: "\n") + "\n").write(toFile: trace, atomically: true, encoding: .utf8)
        let r = TestSupport.run(["ingest", "-q", "--db", path, trace])
        XCTAssertEqual(r.status, 0, r.err)
        return path
    }

    /// The work the examples of the HTML report do on `path`: the SQLite virtual machine's
    /// instructions (counted by a progress handler, so a scan counts whatever it hands out),
    /// the session's events and the examples drawn.
    func exhibitWork(_ path: String) throws -> (instructions: Int, events: Int, drawn: Int) {
        let database = try SQLiteDatabase(path: path, mode: .readOnly)
        let storage = Storage(database)
        let data = try ReportCollector.collect(ReportRequest(), db: storage)
        var options = ReportOptions()
        options.failOn = nil
        let view = ReportView(data: data, options: options)
        final class Counter { var calls = 0 }
        let counter = Counter()
        let every: Int32 = 100
        sqlite3_progress_handler(database.handle, every, { context in
            Unmanaged<Counter>.fromOpaque(context!).takeUnretainedValue().calls += 1
            return 0
        }, Unmanaged.passUnretained(counter).toOpaque())
        let exhibits = try withExtendedLifetime(counter) { try ReportExhibits.gather(view, db: storage) }
        sqlite3_progress_handler(database.handle, 0, nil, nil)
        let events = try XCTUnwrap(try storage.model.sessions(SessionFilter()).first).events
        return (counter.calls * Int(every), events, exhibits.drawn.values.filter { $0.timeline != nil }.count)
    }

    /// A window's marked events are read as a look-up (whole, prepared on a server) only when
    /// its seq range is at most `lookUpRows` seqs; the whole session's range (`Int64.min` …
    /// `Int64.max`) and reversed or overflowing ranges never are (the first cut trapped on the
    /// whole session's range).
    func testOnlyAFewSeqsAreReadAsALookUp() {
        XCTAssertTrue(TimelineQuery.isFew((0, 0)))
        XCTAssertTrue(TimelineQuery.isFew((10, 10 + lookUpRows - 1)))
        XCTAssertFalse(TimelineQuery.isFew((10, 10 + lookUpRows)))
        XCTAssertFalse(TimelineQuery.isFew((.min, .max)))
        XCTAssertFalse(TimelineQuery.isFew((-5, .max)))
        XCTAssertFalse(TimelineQuery.isFew((5, 4)))
    }

    func testTheExamplesReadTheirWindowsNotTheSession() throws {
        let short = try exhibitWork(try database(ticks: 1_000, name: "short"))
        let long = try exhibitWork(try database(ticks: 40_000, name: "long"))
        XCTAssertGreaterThan(long.events, 30 * short.events, "the long session is longer")
        XCTAssertEqual(short.drawn, 3, "every orphan view drawn")
        XCTAssertEqual(long.drawn, 3, "every orphan view drawn")
        // Finding a window among the seqs takes a few more look-ups in a longer session (a
        // bisection); nothing else grows with it.
        XCTAssertLessThan(Double(long.instructions), 1.5 * Double(short.instructions),
                          "the examples of \(long.events) events took \(long.instructions) instructions, of \(short.events) \(short.instructions)")
    }
}

/// A window read as a range of seqs (the clock never goes back), or from rows several windows
/// share, draws what a scan of the whole session draws: every sample session, windows of
/// several widths slid over it (some opening in the background, some holding no event).
final class WindowReadsTests: SampleDatabaseTestCase {
    func drawn(_ source: TimelineSource, _ window: TimeWindow) throws -> String {
        let timeline = try TimelineBuilder.build(session: source.session, reader: source, findings: [], window: window)
        return TextTimeline(timeline, width: 160, color: false).render() + SVGTimeline(timeline).render()
    }

    func testAWindowReadThroughItsSeqsDrawsWhatAScanDraws() throws {
        let storage = Storage(try SQLiteDatabase(path: db, mode: .readOnly))
        var compared = 0, seqRead = 0, openInBackground = 0, clockWentBack = 0
        for session in try storage.model.sessions(SessionFilter()) {
            let source = try TimelineSource(db: storage, session: session)
            guard let first = session.firstT, let last = session.lastT, last > first else { continue }
            let wentBack = try source.query.hasFinding(rule: RuleCatalog.clockBackwardsID)
            XCTAssertEqual(source.query.clockNeverGoesBack, !wentBack, session.sid)
            if wentBack { clockWentBack += 1 }
            let span = last - first
            var windows: [TimeWindow] = []
            for width in [span / 50 + 1, 10_000_000_000, span / 3 + 1] {
                for k in 0...20 {
                    let start = first - span / 20 + span / 20 * Int64(k)
                    windows.append(TimeWindow(start: start, end: start + width))
                }
            }
            windows.append(TimeWindow(start: first, end: last))
            var scanned: [String] = []
            for window in windows {
                source.query.clockNeverGoesBack = false
                scanned.append(try drawn(source, window))
                source.query.clockNeverGoesBack = !wentBack
                XCTAssertEqual(try drawn(source, window), scanned.last!, "\(session.sid) \(window)")
                // The same searches in memory, the session's seqs read whole (PostgreSQL's way).
                let indexed = try TimelineSource(db: storage, session: session)
                indexed.query.indexedEvents = .max - 1
                indexed.query.clockNeverGoesBack = !wentBack
                XCTAssertEqual(try drawn(indexed, window), scanned.last!, "searched in memory: \(session.sid) \(window)")
                if !wentBack { seqRead += 1 }
                let timeline = try TimelineBuilder.build(session: source.session, reader: source, findings: [], window: window)
                if timeline.background.first?.start == window.start { openInBackground += 1 }
                compared += 1
            }
            try source.share(windows, widest: .max)
            for (window, expected) in zip(windows, scanned) {
                XCTAssertEqual(try drawn(source, window), expected, "shared rows: \(session.sid) \(window)")
            }
        }
        XCTAssertGreaterThan(seqRead, 200)
        XCTAssertGreaterThan(openInBackground, 5, "windows that open in the background")
        XCTAssertGreaterThan(clockWentBack, 0, "a session whose clock went back reads by scans")
    }
}
