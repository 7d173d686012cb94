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

/// The writer keeps the rows of sessions that were new in a file (`CapturedRows`) so the
/// analysis while loading need not read them back. A capture must be exactly the session's
/// rows in the table, or not be handed over at all.
final class CapturedRowsTests: TemporaryDirectoryTestCase {

    func line(_ sid: String, _ seq: Int, _ ev: String = "mark", vc: String? = nil, name: String? = nil) -> String {
        var s = #"{"v":1,"sid":"\#(sid)","seq":\#(seq),"t":\#(1_000_000 + seq),"ev":"\#(ev)""#
        if let vc { s += #","vc":"\#(vc)","cls":"C\#(vc)""# }
        s += #","name":"\#(name ?? "\(sid)\(seq)")"}"#
        return s
    }

    /// Decodes `lines` and inserts them in one batch of `store` (begin … commit).
    func insert(_ lines: [String], into store: IngestStore) throws {
        let decoder = EventDecoder()
        let batch = EventBatch()
        for (i, text) in lines.enumerated() {
            var bytes = Array(text.utf8)
            let reject = bytes.withUnsafeMutableBytes { decoder.decode(UnsafeRawBufferPointer($0), into: batch, line: i + 1, offset: 0) }
            XCTAssertNil(reject, text)
        }
        try store.begin()
        try batch.arena.withUnsafeBytes { arena in
            for e in batch.events { _ = try store.insert(e, batch, arena) }
            try store.flush(arena)
        }
        try store.commit()
    }

    /// The table's rows of `sid` in seq order, as captured rows.
    func tableRows(_ database: SQLiteDatabase, _ sid: String) throws -> [CapturedRows.Row] {
        let q = try database.prepare("""
            SELECT seq, t, ev, vc, cls, other, detail, flags FROM event_rows
            WHERE session = (SELECT id FROM sessions WHERE sid = ?) ORDER BY seq
            """)
        try q.bind([.text(sid)])
        var rows: [CapturedRows.Row] = []
        func id(_ i: Int) -> Int32 { Int32(q.optionalInt(i) ?? 0) }
        while try q.step() {
            rows.append(CapturedRows.Row(seq: q.int(0), t: q.int(1), ev: id(2), vc: id(3), cls: id(4), other: id(5),
                                         detail: id(6), flags: Int32(q.int(7))))
        }
        return rows
    }

    func sessionID(_ database: SQLiteDatabase, _ sid: String) throws -> Int64 {
        try database.scalarInt("SELECT id FROM sessions WHERE sid = ?", [.text(sid)]) ?? -1
    }

    func testANewSessionIsCapturedExactlyAndAnOldOneIsNot() throws {
        let database = try SQLiteSchema.openForWriting(path: db)
        let store = try IngestStore(db: database)
        store.capturesRows = true
        try insert((0..<10).map { line("OLD", $0) }, into: store)
        _ = store.takeCapturedRows()   // the first file: OLD was new then

        var lines = [5, 3, 4, 0, 1, 2].map { line("NEW", $0, "viewDidLoad", vc: "0x\($0 % 2)") }
        lines.append(line("NEW", 3, "viewDidLoad", vc: "0x1"))           // duplicate: not a new row
        lines.append(line("NEW", 4, "viewDidLoad", vc: "0x0", name: "x")) // conflict: not a new row
        lines += (10..<13).map { line("OLD", $0) }                       // OLD already has rows
        lines += (6..<70).map { line("NEW", $0) }                        // more than one multi-row statement
        try insert(lines, into: store)

        let captured = store.takeCapturedRows()
        XCTAssertEqual(Set(captured.keys), [try sessionID(database, "NEW")])
        let rows = try XCTUnwrap(captured[try sessionID(database, "NEW")] as? CapturedRows).inSeqOrder()
        XCTAssertEqual(rows.count, 70)
        XCTAssertEqual(rows, try tableRows(database, "NEW"))
        XCTAssertTrue(store.takeCapturedRows().isEmpty, "handed over once")

        // NEW has rows now: its later rows are never captured.
        try insert((70..<75).map { line("NEW", $0) }, into: store)
        XCTAssertTrue(store.takeCapturedRows().isEmpty)
    }

    func testCapturesAreDroppedWhenAnotherConnectionCommits() throws {
        let database = try SQLiteSchema.openForWriting(path: db)
        let store = try IngestStore(db: database)
        store.capturesRows = true
        try insert((0..<5).map { line("X", $0) }, into: store)
        // Another writer commits before this file's next batch: it may have added rows to X.
        try SQLiteDatabase(path: db).execute("INSERT INTO meta(key, value) VALUES ('other-writer', 'was here')")
        try insert((5..<10).map { line("X", $0) }, into: store)
        XCTAssertTrue(store.takeCapturedRows().isEmpty)
    }

    func testASessionPastTheLimitIsNotCaptured() throws {
        let database = try SQLiteSchema.openForWriting(path: db)
        let store = try IngestStore(db: database)
        store.capturesRows = true
        store.captureLimit = 8
        try insert((0..<5).map { line("SMALL", $0) } + (0..<9).map { line("BIG", $0) }, into: store)
        let captured = store.takeCapturedRows()
        XCTAssertEqual(Set(captured.keys), [try sessionID(database, "SMALL")])
        XCTAssertEqual((captured[try sessionID(database, "SMALL")] as? CapturedRows)?.inSeqOrder(), try tableRows(database, "SMALL"))
    }

    func testNothingIsCapturedUnlessAsked() throws {
        let database = try SQLiteSchema.openForWriting(path: db)
        let store = try IngestStore(db: database)
        try insert((0..<5).map { line("A", $0) }, into: store)
        XCTAssertTrue(store.takeCapturedRows().isEmpty)
    }

    /// The analysis reaches the backend through `any SessionSource`: a model built with captured
    /// rows must come from them, not from the table (the table here holds more rows than were
    /// captured, so reading it instead shows).
    func testTheAnalysisBuildsFromCapturedRowsThroughTheStorageSeam() throws {
        let database = try SQLiteSchema.openForWriting(path: db)
        let store = try IngestStore(db: database)
        store.capturesRows = true
        try insert((0..<5).map { line("C", $0, "viewDidLoad", vc: "0x1") }, into: store)
        let session = try sessionID(database, "C")
        let rows = try XCTUnwrap(store.takeCapturedRows()[session])
        try insert((5..<9).map { line("C", $0) }, into: store)
        let source: any SessionSource = try SQLiteSessionSource(db: database)
        let metadata = try source.sessionMetadata(session)
        let fromCapture = try SessionAnalysis().build(session: session, sid: "C", metadata: metadata, source: source,
                                                    captured: rows)
        let fromTable = try SessionAnalysis().build(session: session, sid: "C", metadata: metadata, source: source)
        XCTAssertEqual(fromCapture.stats.events, 5)
        XCTAssertEqual(fromTable.stats.events, 9)
    }

    /// Files with lines out of order, repeated and overlapping: models built from captured
    /// rows while loading must equal models built from the table after loading.
    func testModelsFromCapturedRowsEqualModelsReadBack() throws {
        var o = CorpusOptions.make(seed: 91, sessions: 6, sessionsPerFile: 2, scenarios: 30)
        o.gzip = false
        let corpus = dir + "/corpus"
        try CorpusWriter.write(plans: CorpusWriter.randomPlans(o), to: corpus, options: o)
        var files = try FileManager.default.contentsOfDirectory(atPath: corpus).sorted().map { corpus + "/" + $0 }
        // Shuffle each file's lines in runs and repeat some: captures must be sorted and exact.
        var generator = SplitMix64(seed: 5)
        for path in files {
            var lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
            for i in stride(from: 0, to: lines.count - 1, by: 7) where generator.next() % 2 == 0 { lines.swapAt(i, i + 1) }
            for i in stride(from: 3, to: lines.count, by: 50) { lines.append(lines[i]) }
            TestSupport.writeLines(lines, to: path)
        }
        files.sort()

        let together = dir + "/together.db", apart = dir + "/apart.db"
        let database = try SQLiteSchema.openForWriting(path: together)
        let store = try IngestStore(db: database)
        let ingester = Ingester(store: store)
        let background = try BackgroundAnalyzer(host: store, settings: RuleSettings())
        ingester.analysis = background
        _ = try ingester.ingest(files.map { .file($0) })
        XCTAssertEqual(background.storedFromCapturedRows, 6, "every session was new in its file")

        XCTAssertEqual(TestSupport.run(["ingest", "--no-analyze", "--db", apart] + files).status, 0)
        XCTAssertEqual(TestSupport.run(["analyze", "--db", apart]).status, 0)
        XCTAssertEqual(try TestSupport.logicalDump(together), try TestSupport.logicalDump(apart))
    }

    /// Models built from the store carry its interned ids (`StoredIDs`), so the model writer
    /// need not hash each text again: every id must be the one its text has in `strings`,
    /// from captured rows and from the table alike, and none may be missing.
    func testModelsFromTheStoreCarryItsInternedIDs() throws {
        var o = CorpusOptions.make(seed: 17, sessions: 4, sessionsPerFile: 4, scenarios: 40)
        o.gzip = false
        let corpus = dir + "/corpus"
        try CorpusWriter.write(plans: CorpusWriter.randomPlans(o), to: corpus, options: o)
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus).sorted().filter { $0.hasSuffix(".jsonl") }
        let database = try SQLiteSchema.openForWriting(path: db)
        let store = try IngestStore(db: database)
        store.capturesRows = true
        let lines = try files.flatMap { try String(contentsOfFile: corpus + "/" + $0, encoding: .utf8).split(separator: "\n").map(String.init) }
        try insert(lines, into: store)
        let captured = store.takeCapturedRows()
        let lookup = try database.prepare("SELECT id FROM strings WHERE text = ?")
        func interned(_ text: String) throws -> Int64 {
            defer { lookup.reset() }
            try lookup.bind([.text(text)])
            return try lookup.step() ? lookup.int(0) : -1
        }
        var checked: [String: Int] = [:]
        func check(_ text: String?, _ id: Int64, _ what: String) throws {
            guard let text else { return XCTAssertEqual(id, 0, what) }
            XCTAssertEqual(id, try interned(text), "\(what) \(text)")
            checked[what, default: 0] += 1
        }
        let source = try SQLiteSessionSource(db: database)
        var sessions: [(Int64, String)] = []
        let list = try database.prepare("SELECT id, sid FROM sessions")
        while try list.step() { sessions.append((list.int(0), list.text(1) ?? "")) }
        list.reset()
        XCTAssertEqual(sessions.count, 4)
        for (session, sid) in sessions {
            let metadata = try source.sessionMetadata(session)
            let rows = try XCTUnwrap(captured[session])
            for rows in [rows, nil] {
                let model = try SessionAnalysis().build(session: session, sid: sid, metadata: metadata, source: source,
                                                            captured: rows)
                for x in model.instances {
                    try check(x.key.vc, x.vcID, "vc"); try check(x.cls, x.clsID, "cls")
                    try check(x.lastParent, x.lastParentID, "parent"); try check(x.presenter, x.presenterID, "presenter")
                }
                for c in model.cycles { try check(c.instance.vc, c.vcID, "cycle") }
                for e in model.edges { try check(e.child.vc, e.childID, "child"); try check(e.parent, e.parentID, "edge parent") }
            }
        }
        for what in ["vc", "cls", "parent", "presenter", "cycle", "child", "edge parent"] {
            XCTAssertGreaterThan(checked[what] ?? 0, 0, "the corpus has no \(what) to check")
        }
    }
}

/// `Statement.bindKeeping` skips a bind when the parameter already holds the value; what the
/// statement sees must always be the last value asked for, whatever else bound in between.
final class BindKeepingTests: XCTestCase {
    func testTheStatementAlwaysSeesTheLastValue() throws {
        let database = try SQLiteDatabase(path: ":memory:")
        let s = try database.prepare("SELECT ?1, ?2")
        func row() throws -> [SQLValue] {
            defer { s.resetKeepingBindings() }   // binds only take on a statement not stepping
            XCTAssertTrue(try s.step())
            return [s.value(0), s.value(1)]
        }
        s.bindKeeping(5, at: 1); s.bindKeeping(nil, at: 2)
        XCTAssertEqual(try row(), [.int(5), .null])
        s.bindKeeping(5, at: 1); s.bindKeeping(7, at: 2)
        XCTAssertEqual(try row(), [.int(5), .int(7)])
        s.bindKeeping(nil, at: 1); s.bindKeeping(7, at: 2)
        XCTAssertEqual(try row(), [.null, .int(7)])
        s.bind("text", at: 2)                    // another kind of bind in between
        s.bindKeeping(7, at: 2)
        XCTAssertEqual(try row(), [.null, .int(7)])
        s.bind(Int64(9), at: 1)
        s.bindKeeping(nil, at: 1)
        XCTAssertEqual(try row(), [.null, .int(7)])
        s.reset()                                // clears every binding
        s.bindKeeping(7, at: 2)
        XCTAssertEqual(try row(), [.null, .int(7)])
        s.bindKeeping(nil, at: 1)
        XCTAssertEqual(try row(), [.null, .int(7)])
        s.reset()
        s.bindKeeping(nil, at: 1); s.bindKeeping(nil, at: 2)
        XCTAssertEqual(try row(), [.null, .null])
    }
}
