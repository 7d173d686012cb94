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
import LCTraceGen

/// Analysis while loading: a model built on the second connection is stored only when its
/// session got no rows since the snapshot, and the end result equals load-then-analyze.
final class BackgroundAnalyzerTests: TemporaryDirectoryTestCase {

    /// Two halves of one session, in two files.
    func writeHalves() -> (String, String) {
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"A""#)
        b.vc(3, "viewDidLoad", "0xa")
        b.vc(4, "viewWillAppear", "0xa", #""animated":true"#)
        b.vc(5, "viewIsAppearing", "0xa")
        b.vc(6, "viewDidAppear", "0xa", #""animated":true"#)
        b.vc(7, "init", "0xb", #""cls":"B""#)
        b.vc(8, "viewDidLoad", "0xb")
        b.vc(9, "viewWillAppear", "0xb", #""animated":false"#)
        b.vc(10, "viewIsAppearing", "0xb")
        b.vc(11, "viewDidAppear", "0xb", #""animated":false"#)
        let first = dir + "/first.jsonl", second = dir + "/second.jsonl"
        TestSupport.writeLines(Array(b.lines[..<7]), to: first)
        TestSupport.writeLines(Array(b.lines[7...]), to: second)
        return (first, second)
    }

    func scalar(_ database: SQLiteDatabase, _ sql: String) throws -> Int64 { try database.scalarInt(sql) ?? -1 }

    func testAModelIsStoredWhenItsSessionIsUnchanged() throws {
        let (first, _) = writeHalves()
        let database = try SQLiteSchema.openForWriting(path: db)
        let store = try IngestStore(db: database)
        let ingester = Ingester(store: store)
        let background = try BackgroundAnalyzer(host: store, settings: RuleSettings())
        ingester.analysis = background
        _ = try ingester.ingest([.file(first)])
        XCTAssertEqual(background.sessions, 1)
        XCTAssertEqual(background.storedSessions.ids, [try scalar(database, "SELECT id FROM sessions")])
        XCTAssertEqual(try scalar(database, "SELECT dirty FROM sessions"), 0)
        XCTAssertEqual(try scalar(database, "SELECT count(*) FROM instances"), 1)
        XCTAssertEqual(try scalar(database, "SELECT events FROM sessions"), 7)
        // The text columns of the model (stored as codes, read back as text).
        XCTAssertEqual(try database.scalarText("SELECT outcome || ' ' || ending FROM appearances_v"), "completed visible-at-end")
        XCTAssertEqual(try database.scalarText("SELECT final_state || ' ' || coalesce(end_how, '-') FROM instances_v"), "visible -")
    }

    /// Loads the first half, then asks a new background analyzer for the session's model.
    func loadFirstHalfAndAskForItsModel() throws -> (SQLiteDatabase, IngestStore, BackgroundAnalyzer, String) {
        let (first, second) = writeHalves()
        let database = try SQLiteSchema.openForWriting(path: db)
        let store = try IngestStore(db: database)
        _ = try Ingester(store: store).ingest([.file(first)])
        let session = try scalar(database, "SELECT id FROM sessions")
        let background = try BackgroundAnalyzer(host: store, settings: RuleSettings())
        background.enqueue([session], from: store)
        return (database, store, background, second)
    }

    func testAModelOfASessionThatGotRowsSinceIsDropped() throws {
        let (database, store, background, second) = try loadFirstHalfAndAskForItsModel()
        _ = try Ingester(store: store).ingest([.file(second)])   // new rows after the stamp
        try background.finish(store)
        XCTAssertEqual(background.sessions, 0, "a model from before the second file must not be stored")
        XCTAssertEqual(try scalar(database, "SELECT dirty FROM sessions"), 1)
        XCTAssertEqual(try scalar(database, "SELECT count(*) FROM instances"), 0)
    }

    func testAModelIsDroppedWhenAnotherConnectionCommittedSince() throws {
        let (database, store, background, _) = try loadFirstHalfAndAskForItsModel()
        // Another process (here: another connection) writes between the stamp and the store.
        let other = try SQLiteDatabase(path: db)
        try other.execute("INSERT INTO meta(key, value) VALUES ('other-writer', 'was here')")
        try background.finish(store)
        XCTAssertEqual(background.sessions, 0)
        XCTAssertEqual(try scalar(database, "SELECT dirty FROM sessions"), 1)
    }

    /// Sessions rotated over several files, several sessions a file: some background models
    /// go stale, and the result must still be exactly load-then-analyze.
    func testIngestWithAnalysisWhileLoadingEqualsLoadThenAnalyze() throws {
        let o = CorpusOptions.make(seed: 77, sessions: 10, sessionsPerFile: 3, scenarios: 40, rotateEvery: 300)
        let corpus = dir + "/corpus"
        try CorpusWriter.write(plans: CorpusWriter.randomPlans(o), to: corpus, options: o)
        let together = dir + "/together.db", apart = dir + "/apart.db"
        let r = TestSupport.run(["ingest", "--db", together, "--format", "json", corpus])
        XCTAssertEqual(r.status, 0, r.err)
        let json = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as! [String: Any]
        let analysis = json["analysis"] as! [String: Any]
        XCTAssertGreaterThan(analysis["while_loading"] as! Int, 0, "the background analysis ran")
        XCTAssertEqual(analysis["sessions"] as! Int, 10, "each session counted once")
        XCTAssertEqual(TestSupport.run(["ingest", "--no-analyze", "--db", apart, corpus]).status, 0)
        XCTAssertEqual(TestSupport.run(["analyze", "--db", apart]).status, 0)
        XCTAssertEqual(try TestSupport.logicalDump(together), try TestSupport.logicalDump(apart))
        XCTAssertEqual(try SQLiteDatabase(path: together, mode: .readOnly).scalarInt("SELECT sum(dirty) FROM sessions"), 0)
    }

    /// Two requests of one session: the later one may end first (the writer builds from the
    /// queue's front while the worker builds the older one); the older model must still be
    /// found stale. Only watched sessions are tracked.
    func testChangesAreTrackedUntilTheLastRequestOfASessionEnds() throws {
        let (first, second) = writeHalves()
        let database = try SQLiteSchema.openForWriting(path: db)
        let store = try IngestStore(db: database)
        _ = try Ingester(store: store).ingest([.file(first)])
        let session = try scalar(database, "SELECT id FROM sessions")
        let older = store.stamp
        store.watch([session])
        _ = try Ingester(store: store).ingest([.file(second)])
        store.watch([session])
        try store.begin()
        XCTAssertFalse(store.unchangedSince(older, session: session))
        store.unwatch(session)   // the later request ended first
        XCTAssertFalse(store.unchangedSince(older, session: session), "the older request is still open")
        store.unwatch(session)
        try store.commit()
        // Not watched: a change is not tracked (nobody asks about it).
        var b = TraceBuilder(sid: "S1", record: false)
        b.seq = 50
        b.add(50, "mark", "\"name\":\"late\"")
        TestSupport.writeLines(b.lines, to: dir + "/third.jsonl")
        let beforeThird = store.stamp
        _ = try Ingester(store: store).ingest([.file(dir + "/third.jsonl")])
        try store.begin()
        XCTAssertTrue(store.unchangedSince(beforeThird, session: session), "no request was open: nothing tracked")
        try store.commit()
    }

    /// A stop raised midway rolls back the transaction in flight: what was analyzed before it
    /// stays, the rest stays dirty, and the next analysis finishes the work.
    func testAnAnalysisStoppedMidwayLeavesTheRestDirty() throws {
        var lines: [String] = []
        for i in 0..<6 {
            var b = TraceBuilder(sid: "S\(i)")
            b.vc(2, "init", "0xa", #""cls":"A""#)
            lines += b.lines
        }
        TestSupport.writeLines(lines, to: dir + "/six.jsonl")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", db, dir + "/six.jsonl"]).status, 0)
        let database = try SQLiteSchema.openForWriting(path: db)
        let analyzer = try Analyzer(db: Storage(database))
        analyzer.progressEvery = 1   // heard inside the first session: the stop comes before the second
        let stop = StopRequest()
        XCTAssertThrowsError(try analyzer.analyze(stop: stop) { p in if p.sessionsDone >= 0 { stop.request() } }) { error in
            XCTAssertTrue(error is Interrupted, "\(error)")
        }
        XCTAssertEqual(try scalar(database, "SELECT count(*) FROM sessions WHERE dirty = 1"), 6, "the transaction in flight was rolled back")
        XCTAssertTrue(database.isAutocommit)
        XCTAssertEqual(try analyzer.analyze().sessions, 6)
        XCTAssertEqual(try scalar(database, "SELECT count(*) FROM sessions WHERE dirty = 1"), 0)
    }

    /// A host whose snapshot reader costs a connection (PostgreSQL's) has it opened when
    /// needed: by the worker, at its first session to read, once. SQLite's is opened at once.
    func testAReaderOpenedWhenNeededIsOpenedByTheWorkerAtItsFirstSession() throws {
        let (first, second) = writeHalves()
        let database = try SQLiteSchema.openForWriting(path: db)
        let store = try IngestStore(db: database)
        XCTAssertNil(store.snapshotReaderWhenNeeded(), "SQLite opens its reader at once")
        _ = try Ingester(store: store).ingest([.file(first)])
        let session = try scalar(database, "SELECT id FROM sessions")
        let opens = OpenCount(), path = database.path
        let host = ReaderOpenedWhenNeeded(store) {
            opens.add()
            return try SQLiteSnapshotReader(path: path)
        }
        let background = try BackgroundAnalyzer(host: host, settings: RuleSettings())
        usleep(100_000)
        XCTAssertEqual(opens.value, 0, "nothing to read yet")
        background.enqueue([session], from: host)
        for _ in 0..<500 where opens.value == 0 { usleep(10_000) }
        XCTAssertEqual(opens.value, 1, "opened by the worker, which alone takes requests before the end")
        _ = try Ingester(store: store).ingest([.file(second)])
        background.enqueue([session], from: host)
        try background.finish(host)
        XCTAssertEqual(opens.value, 1)
        XCTAssertEqual(try scalar(database, "SELECT dirty FROM sessions"), 0)
    }

    /// A reader opened when needed that cannot be opened fails the writer's next step, with
    /// the open's own error, as `init` fails where the reader is opened at once.
    func testAReaderThatCannotBeOpenedWhenNeededFailsTheWriter() throws {
        struct Refused: Error {}
        let (first, _) = writeHalves()
        let database = try SQLiteSchema.openForWriting(path: db)
        let store = try IngestStore(db: database)
        _ = try Ingester(store: store).ingest([.file(first)])
        let host = ReaderOpenedWhenNeeded(store) { throw Refused() }
        let background = try BackgroundAnalyzer(host: host, settings: RuleSettings())
        background.enqueue([try scalar(database, "SELECT id FROM sessions")], from: host)
        // Taken by the worker, which could not open the reader: nothing left, nothing built.
        for _ in 0..<500 where !background.isIdle { usleep(10_000) }
        XCTAssertTrue(background.isIdle)
        XCTAssertThrowsError(try background.storeFinished(host)) { XCTAssertTrue($0 is Refused, "\($0)") }
        XCTAssertThrowsError(try background.finish(host)) { XCTAssertTrue($0 is Refused, "\($0)") }
        background.waitForWorker()
        XCTAssertEqual(background.sessions, 0)
    }
}

/// An ingest store whose analysis reader is opened when needed, by `open`.
private final class ReaderOpenedWhenNeeded: LoadingAnalysisHost {
    let store: IngestStore
    let open: @Sendable () throws -> any SnapshotReader

    init(_ store: IngestStore, open: @escaping @Sendable () throws -> any SnapshotReader) {
        self.store = store
        self.open = open
    }

    var stamp: SnapshotStamp { store.stamp }
    func watch(_ sessions: [Int64]) { store.watch(sessions) }
    func unwatch(_ session: Int64) { store.unwatch(session) }
    func unchangedSince(_ stamp: SnapshotStamp, session: Int64) -> Bool { store.unchangedSince(stamp, session: session) }
    func begin() throws { try store.begin() }
    func commit() throws { try store.commit() }
    func takeCapturedRows() -> [Int64: any CapturedSessionRows] { store.takeCapturedRows() }
    func modelStore() throws -> any AnalysisStore & CapturedRowsReader { try store.modelStore() }
    func openSnapshotReader() throws -> any SnapshotReader { try open() }
    func snapshotReaderWhenNeeded() -> (@Sendable () throws -> any SnapshotReader)? { open }
}

/// Opens counted from any thread.
private final class OpenCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
