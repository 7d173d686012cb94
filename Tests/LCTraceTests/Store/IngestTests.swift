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

/// Loading into the store: idempotence, de-duplication, conflicts, session merging, damaged
/// files, exit codes, and a generated corpus with every kind of input problem.
final class IngestTests: TemporaryDirectoryTestCase {

    func count(_ sql: String) throws -> Int64 {
        try SQLiteDatabase(path: db, mode: .readOnly).scalarInt(sql) ?? -1
    }

    func testIngestIsIdempotentAndCopiesAddNothing() throws {
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"A""#)
        b.vc(3, "viewDidLoad", "0xa")
        TestSupport.writeLines(b.lines, to: dir + "/one.jsonl")
        try FileManager.default.copyItem(atPath: dir + "/one.jsonl", toPath: dir + "/copy.jsonl")
        XCTAssertEqual(TestSupport.run(["ingest", "--db", db, dir + "/one.jsonl"]).status, 0)
        let before = try TestSupport.logicalDump(db)
        let second = TestSupport.run(["ingest", "--db", db, dir + "/one.jsonl", dir + "/copy.jsonl"])
        XCTAssertEqual(second.status, 0)
        XCTAssertTrue(second.out.contains("0 new"), second.out)
        XCTAssertTrue(second.out.contains("already loaded"), second.out)
        XCTAssertEqual(try TestSupport.logicalDump(db), before)
        XCTAssertEqual(try count("SELECT count(*) FROM events"), 4)
        XCTAssertEqual(try count("SELECT count(*) FROM files"), 1)
    }

    /// Files are planned one ahead of the one being stored: a repeat or a copy of the file
    /// just before must still be recognised by its hash and skipped without being read.
    func testARepeatOrCopyInTheSameRunIsSkippedUnread() throws {
        var b = TraceBuilder()
        for i in 0..<50 { b.add(Double(10 + i), "mark", "\"name\":\"m\(i)\"") }
        TestSupport.writeLines(b.lines, to: dir + "/one.jsonl")
        try FileManager.default.copyItem(atPath: dir + "/one.jsonl", toPath: dir + "/copy.jsonl")
        let r = TestSupport.run(["ingest", "--db", db, "--format", "json", dir + "/one.jsonl", dir + "/one.jsonl", dir + "/copy.jsonl"])
        XCTAssertEqual(r.status, 0, r.err)
        let json = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as! [String: Any]
        let files = json["files"] as! [[String: Any]]
        XCTAssertEqual(files.map { $0["status"] as! String }, ["loaded", "already-loaded", "already-loaded"])
        XCTAssertEqual(files.map { $0["lines"] as! Int }, [52, 0, 0], "the repeats were not read")
        XCTAssertEqual((json["events"] as! [String: Int])["duplicate"], 0)
        XCTAssertEqual(try count("SELECT count(*) FROM files"), 1)
        XCTAssertEqual(try count("SELECT count(*) FROM files WHERE status = 'loading'"), 0)
    }

    func testOverlappingFilesDeduplicateAndConflictsAreCounted() throws {
        var b = TraceBuilder()
        for i in 0..<6 { b.add(Double(10 + i), "mark", "\"name\":\"m\(i)\"") }
        TestSupport.writeLines(Array(b.lines[0..<6]), to: dir + "/a.jsonl")
        var overlap = Array(b.lines[3..<8])
        overlap[1] = overlap[1].replacingOccurrences(of: "\"name\":\"m2\"", with: "\"name\":\"CHANGED\"")
        TestSupport.writeLines(overlap, to: dir + "/b.jsonl")
        let r = TestSupport.run(["ingest", "--db", db, "--format", "json", dir + "/a.jsonl", dir + "/b.jsonl"])
        XCTAssertEqual(r.status, 0)
        let json = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as! [String: Any]
        let events = json["events"] as! [String: Int]
        XCTAssertEqual(events["new"], 8)
        XCTAssertEqual(events["duplicate"], 2)
        XCTAssertEqual(events["conflicting"], 1)
        XCTAssertTrue(r.err.contains("conflicting duplicates"), r.err)
        XCTAssertEqual(try count("SELECT count(*) FROM events"), 8)
        XCTAssertEqual(try count("SELECT count(*) FROM rejects WHERE kind = 'conflict'"), 1)
        // The first stored copy wins.
        XCTAssertEqual(try SQLiteDatabase(path: db, mode: .readOnly).scalarText("SELECT detail FROM events_v WHERE seq = 4"), "m2")
    }

    /// Rows above a session's highest stored seq take the multi-row insert path; everything
    /// else (seq going back, a line repeated before the rows before it were written, two
    /// sessions interleaved, a later overlapping file) must still come out exact.
    func testOutOfOrderRepeatedAndInterleavedSeqsAreExactOnTheFastPath() throws {
        func line(_ sid: String, _ seq: Int, _ name: String) -> String {
            #"{"v":1,"sid":"\#(sid)","seq":\#(seq),"t":\#(1_000_000 + seq),"ev":"mark","name":"\#(name)"}"#
        }
        var lines: [String] = []
        for seq in 0..<300 { lines.append(line("A", seq, "a\(seq)")) }   // more than one multi-row statement
        lines.append(line("A", 150, "a150"))                              // duplicate of a row still pending
        lines.append(line("A", 10, "changed"))                            // conflict with a written row
        for seq in stride(from: 400, to: 300, by: -1) { lines.append(line("A", seq, "a\(seq)")) }  // descending
        for seq in 0..<130 { lines.append(line("B", seq, "b\(seq)")); lines.append(line("C", seq, "c\(seq)")) }
        lines.append(line("C", 129, "c129"))                              // duplicate right after itself
        TestSupport.writeLines(lines, to: dir + "/one.jsonl")
        var later: [String] = []
        for seq in 120..<140 { later.append(line("B", seq, seq == 125 ? "other" : "b\(seq)")) }
        TestSupport.writeLines(later, to: dir + "/two.jsonl")

        let r = TestSupport.run(["ingest", "--db", db, "--format", "json", dir + "/one.jsonl", dir + "/two.jsonl"])
        XCTAssertEqual(r.status, 0, r.err)
        let json = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as! [String: Any]
        let events = json["events"] as! [String: Int]
        XCTAssertEqual(events["new"], 300 + 100 + 130 + 130 + 10)
        XCTAssertEqual(events["duplicate"], 1 + 1 + 9)
        XCTAssertEqual(events["conflicting"], 1 + 1)
        XCTAssertEqual(try count("SELECT count(*) FROM events"), 670)
        let d = try SQLiteDatabase(path: db, mode: .readOnly)
        XCTAssertEqual(try d.scalarText("SELECT detail FROM events_v WHERE sid = 'A' AND seq = 10"), "a10")
        XCTAssertEqual(try d.scalarText("SELECT detail FROM events_v WHERE sid = 'B' AND seq = 125"), "b125")
        XCTAssertEqual(try d.scalarInt("""
            SELECT count(*) FROM events_v WHERE detail != lower(sid) || seq OR t != 1000000 + seq
            """), 0)
        XCTAssertEqual(try d.scalarInt("SELECT count(*) FROM rejects WHERE kind = 'conflict'"), 2)
    }

    /// The id caches are bounded (memory stays flat on any number of distinct controller
    /// ids); after the cache empties, the same text must still get the same id.
    func testStringIdsSurviveTheCacheBeingEmptied() throws {
        let database = try SQLiteSchema.openForWriting(path: db)
        let pool = try StringPool(db: database, maxCached: 10)
        try database.beginImmediate()
        let first = try (0..<25).map { try pool.id("vc-\($0)") }
        let again = try (0..<25).map { try pool.id("vc-\($0)") }
        try database.commit()
        XCTAssertEqual(first, again)
        XCTAssertEqual(Set(first).count, 25)
        XCTAssertEqual(try database.scalarInt("SELECT count(*) FROM strings WHERE text LIKE 'vc-%'"), 25)
    }

    /// The byte cache in front of the pool is bounded the same way: at its limit it starts
    /// over, and what it holds after that still maps to the right ids.
    func testByteCacheEmptiesAtItsLimit() {
        let cache = ByteInterner(limit: 4)
        func key(_ i: Int) -> [UInt8] { Array("vc-\(i)".utf8) }
        for i in 0..<6 {
            key(i).withUnsafeBytes { cache.insert($0, hash: ByteInterner.hash($0), id: Int64(100 + i)) }
        }
        XCTAssertEqual(cache.count, 2, "emptied when the fifth came, then two inserted")
        XCTAssertNil(key(0).withUnsafeBytes { cache.lookup($0, hash: ByteInterner.hash($0)) })
        XCTAssertEqual(key(5).withUnsafeBytes { cache.lookup($0, hash: ByteInterner.hash($0)) }, 105)
        XCTAssertEqual(key(4).withUnsafeBytes { cache.lookup($0, hash: ByteInterner.hash($0)) }, 104)
    }

    func testIngestTimesAreRFC3339UTCOfNow() throws {
        let text = IngestStore.now()
        XCTAssertNotNil(text.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"#, options: .regularExpression), text)
        let f = ISO8601DateFormatter()
        let parsed = try XCTUnwrap(f.date(from: text))
        XCTAssertLessThan(abs(parsed.timeIntervalSinceNow), 5)
    }

    func testSessionRecordsMergeAndConflictsAreCounted() throws {
        var b = TraceBuilder()
        b.add(5, "mark", "\"name\":\"x\"")
        // A repeated record (rotation) that agrees, and one that disagrees on build.
        b.add(6, "session", "\"wall\":\"2026-11-02T10:15:03.120Z\",\"app\":\"com.example.app\",\"appVersion\":\"1.0\",\"build\":\"1\",\"os\":\"iOS\",\"osVersion\":\"27.1\",\"sdk\":\"27.0\",\"device\":\"iPhone16,2\"")
        b.add(7, "session", "\"wall\":\"2026-11-02T10:15:03.120Z\",\"app\":\"com.example.app\",\"appVersion\":\"1.0\",\"build\":\"2\",\"os\":\"iOS\",\"osVersion\":\"27.1\",\"sdk\":\"27.0\",\"device\":\"iPhone16,2\"")
        // Ingest the later half first: the earliest record still wins.
        TestSupport.writeLines(Array(b.lines[3...]), to: dir + "/late.jsonl")
        TestSupport.writeLines(Array(b.lines[..<3]), to: dir + "/early.jsonl")
        let late = TestSupport.run(["ingest", "--db", db, dir + "/late.jsonl"])
        XCTAssertEqual(late.status, 0)
        XCTAssertTrue(late.err.contains("Warning: session S1: 1 session record disagrees with the one kept on build"), late.err)
        let early = TestSupport.run(["ingest", "--db", db, "--format", "json", dir + "/early.jsonl"])
        XCTAssertEqual(early.status, 0)
        XCTAssertTrue(early.out.contains("\"record_conflicts\":0"), early.out)
        XCTAssertFalse(early.err.contains("disagree"), early.err)
        let d = try SQLiteDatabase(path: db, mode: .readOnly)
        XCTAssertEqual(try d.scalarText("SELECT build FROM sessions"), "1")
        XCTAssertEqual(try d.scalarInt("SELECT record_seq FROM sessions"), 0)
        XCTAssertEqual(try d.scalarInt("SELECT record_conflicts FROM sessions"), 1)
        XCTAssertEqual(try d.scalarInt("SELECT events FROM sessions"), 5)
    }

    func testMissingPathExits66AndTheOthersStillLoad() throws {
        var b = TraceBuilder()
        b.add(3, "mark", "\"name\":\"x\"")
        TestSupport.writeLines(b.lines, to: dir + "/ok.jsonl")
        let r = TestSupport.run(["ingest", "--db", db, dir + "/nope.jsonl.gz", dir + "/ok.jsonl"])
        XCTAssertEqual(r.status, 66)
        XCTAssertTrue(r.err.contains("nope.jsonl.gz: no such file or directory"), r.err)
        XCTAssertEqual(try count("SELECT count(*) FROM events"), 3)
    }

    func testDirectoriesAreSearchedRecursively() throws {
        try FileManager.default.createDirectory(atPath: dir + "/logs/a/b", withIntermediateDirectories: true)
        var b = TraceBuilder()
        b.add(3, "mark", "\"name\":\"x\"")
        TestSupport.writeLines(b.lines, to: dir + "/logs/a/b/x.jsonl")
        try "ignored".write(toFile: dir + "/logs/notes.txt", atomically: true, encoding: .utf8)
        let (inputs, missing) = Ingester.expand([dir + "/logs"])
        XCTAssertEqual(inputs, [.file(dir + "/logs/a/b/x.jsonl")])
        XCTAssertTrue(missing.isEmpty)
    }

    /// Regular files are read one ahead; standard input named twice must still be read by one
    /// reader at a time (the first takes the whole stream, the second finds it at its end).
    func testStandardInputNamedTwiceIsNotSplitBetweenTwoReaders() throws {
        var b = TraceBuilder()
        for i in 0..<30_000 { b.add(Double(10 + i), "mark", "\"name\":\"m\(i % 7)\"") }
        TestSupport.writeLines(b.lines, to: dir + "/s.jsonl")
        let shell = try TestSupport.process("/bin/sh", ["-c", "\(TestSupport.binary) ingest --db \(db) --format json - - < \(dir)/s.jsonl"])
        XCTAssertEqual(shell.status, 0, shell.err)
        let json = try JSONSerialization.jsonObject(with: Data(shell.out.utf8)) as! [String: Any]
        let files = json["files"] as! [[String: Any]]
        XCTAssertEqual(files.first?["lines"] as? Int, 30_002, "the first '-' read the whole stream")
        XCTAssertEqual(json["rejects"] as? Int, 0)
        XCTAssertEqual(try count("SELECT count(*) FROM events"), 30_002)
    }

    func testStandardInputIsRecognisedAsAlreadyLoadedContent() throws {
        var b = TraceBuilder()
        b.add(3, "mark", "\"name\":\"x\"")
        TestSupport.writeLines(b.lines, to: dir + "/s.jsonl")
        XCTAssertEqual(TestSupport.run(["ingest", "--db", db, dir + "/s.jsonl"]).status, 0)
        // Feed the same bytes through stdin in a child process.
        let shell = try TestSupport.process("/bin/sh", ["-c", "\(TestSupport.binary) ingest --db \(db) - < \(dir)/s.jsonl"])
        XCTAssertEqual(shell.status, 0, shell.err)
        XCTAssertTrue(shell.out.contains("already loaded"), shell.out)
        XCTAssertEqual(try count("SELECT count(*) FROM files"), 1)
    }

    func testSchemaVersionIsCheckedOnOpen() throws {
        _ = try SQLiteSchema.openForWriting(path: db)
        XCTAssertEqual(try count("PRAGMA user_version"), SQLiteSchema.version)
        let newer = try SQLiteDatabase(path: db)
        try newer.execute("PRAGMA user_version = 99")
        XCTAssertThrowsError(try SQLiteSchema.openForWriting(path: db)) { error in
            XCTAssertTrue("\(error)".contains("newer than this lctrace"), "\(error)")
        }
        let r = TestSupport.run(["sessions", "--db", db])
        XCTAssertEqual(r.status, 74)
        XCTAssertTrue(r.err.contains("schema version 99"), r.err)
        let other = dir + "/other.db"
        try SQLiteDatabase(path: other).execute("CREATE TABLE x(y)")
        XCTAssertThrowsError(try SQLiteSchema.openForWriting(path: other)) { error in
            XCTAssertTrue("\(error)".contains("not an lctrace database"), "\(error)")
        }
    }

    func testUnwritableDatabaseExits74WithOneLine() throws {
        let ro = dir + "/ro"
        try FileManager.default.createDirectory(atPath: ro, withIntermediateDirectories: true)
        var b = TraceBuilder()
        b.add(3, "mark", "\"name\":\"x\"")
        TestSupport.writeLines(b.lines, to: dir + "/x.jsonl")
        let r = TestSupport.run(["ingest", "--db", ro + "/nodir/t.db", dir + "/x.jsonl"])
        XCTAssertEqual(r.status, 74)
        XCTAssertTrue(r.err.hasPrefix("Error: "), r.err)
    }

    /// The issue's acceptance corpus: rotated files, multi-member gzip, a copy of one file, a
    /// file of bad lines and a truncated file. Every good event loads exactly once, exactly the
    /// bad lines are rejected, the run exits 65, a second run adds nothing.
    func testGeneratedCorpusWithEveryInputProblem() throws {
        let options = CorpusOptions.make(seed: 11, sessions: 6, scenarios: 25, rotateEvery: 150, linesPerMember: 70)
        let corpus = dir + "/corpus"
        let plans = CorpusWriter.randomPlans(options)
        let written = try CorpusWriter.write(plans: plans, to: corpus, options: options)
        XCTAssertTrue(written.files.contains { $0.contains("-part2") }, "rotation produced parts")
        try FileManager.default.copyItem(atPath: corpus + "/" + written.files[0], toPath: corpus + "/copy-of-first.jsonl.gz")
        let bad = try CorpusWriter.writeBadLinesFile(to: corpus + "/bad.jsonl", seed: 5)
        // A truncated copy of a fresh session, two thirds of the way in.
        var extra = options
        extra.seed = 99
        extra.sessions = 1
        let single = dir + "/single"
        let one = try CorpusWriter.write(plans: CorpusWriter.randomPlans(extra), to: single, options: extra)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: single + "/" + one.files[0]))
        try bytes.prefix(bytes.count * 2 / 3).write(to: URL(fileURLWithPath: corpus + "/truncated.jsonl.gz"))
        let goodLines = written.events + (try String(contentsOfFile: corpus + "/bad.jsonl", encoding: .isoLatin1)
            .split(separator: "\n").count - bad.badLines)

        let first = TestSupport.run(["ingest", "--db", db, corpus])
        XCTAssertEqual(first.status, 65, first.err)
        XCTAssertTrue(first.err.contains("truncated.jsonl.gz: damaged: gzip stream truncated"), first.err)
        let d = try SQLiteDatabase(path: db, mode: .readOnly)
        let truncatedEvents = try d.scalarInt("SELECT events FROM files WHERE path LIKE '%truncated.jsonl.gz'") ?? 0
        XCTAssertGreaterThan(truncatedEvents, 0, "events before the damage are kept")
        XCTAssertEqual(try d.scalarInt("SELECT count(*) FROM events"), Int64(goodLines) + truncatedEvents)
        XCTAssertEqual(try d.scalarInt("SELECT count(*) FROM rejects WHERE kind = 'line' AND file = (SELECT id FROM files WHERE path LIKE '%bad.jsonl')"),
                       Int64(bad.badLines))
        XCTAssertEqual(try d.scalarInt("SELECT count(*) FROM files WHERE status = 'damaged'"), 1)
        let before = try TestSupport.logicalDump(db)
        let second = TestSupport.run(["ingest", "--db", db, corpus])
        XCTAssertEqual(second.status, 0, "already-loaded files are not read again, so no damage is reported twice")
        XCTAssertTrue(second.out.contains("0 new"), second.out)
        XCTAssertEqual(try TestSupport.logicalDump(db), before)
    }

    func testIngestNoAnalyzeThenReportComputesDirtySessions() throws {
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"Orphan""#)
        b.vc(3, "viewAttached", "0xa", #""host":"0xh""#)
        b.vc(4, "init", "0xh", #""cls":"Host""#)
        b.add(9000, "mark", "\"name\":\"end\"")
        TestSupport.writeLines(b.lines, to: dir + "/x.jsonl")
        XCTAssertEqual(TestSupport.run(["ingest", "--no-analyze", "--db", db, dir + "/x.jsonl"]).status, 0)
        XCTAssertEqual(try count("SELECT dirty FROM sessions"), 1)
        let report = TestSupport.run(["report", "--db", db, "--format", "csv", "--fail-on", "never"])
        XCTAssertEqual(report.status, 0)
        XCTAssertTrue(report.out.contains("LC101"), report.out)
        XCTAssertEqual(TestSupport.run(["analyze", "--db", db]).status, 0)
        XCTAssertEqual(try count("SELECT dirty FROM sessions"), 0)
        XCTAssertEqual(try count("SELECT count(*) FROM findings WHERE rule = 'LC101'"), 1)
    }
}

/// Checkpoints on their own thread during ingest: the log is copied back and stays bounded,
/// and the content is the same as with SQLite's own checkpoints.
final class CheckpointerTests: TemporaryDirectoryTestCase {
    /// Ingests `corpus` into `path` with a checkpointer of these thresholds (nil: SQLite's own).
    func ingest(_ corpus: String, into path: String, wake: Int32?, restart: Int32?) throws -> Checkpointer? {
        try ingestMeasuringLog(corpus, into: path, wake: wake, restart: restart).checkpointer
    }

    /// The same, with the size of the log file at the end (while the database is still open).
    func ingestMeasuringLog(_ corpus: String, into path: String, wake: Int32?, restart: Int32?) throws -> (checkpointer: Checkpointer?, walBytes: Int) {
        let database = try SQLiteSchema.openForWriting(path: path)
        let checkpointer = try wake.map { try Checkpointer(writer: database, wakeFrames: $0, restartFrames: restart!) }
        var options = IngestOptions()
        options.backgroundCheckpoints = false   // this test's own, with small thresholds
        options.batchSize = 300                 // many commits
        let summary = try Ingester(store: try IngestStore(db: database), options: options)
            .ingest(Ingester.expand([corpus]).inputs)
        XCTAssertGreaterThan(summary.files.reduce(0) { $0 + $1.newEvents }, 10_000)
        checkpointer?.stop()
        XCTAssertEqual(try database.scalarInt("PRAGMA wal_autocheckpoint"), 1000, "SQLite's checkpoints are back")
        let walBytes = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        return (checkpointer, walBytes)
    }

    func testTheLogIsCopiedOnAnotherThreadAndStaysBounded() throws {
        let o = CorpusOptions.make(seed: 13, sessions: 6, scenarios: 150)
        let corpus = dir + "/corpus"
        try CorpusWriter.write(plans: CorpusWriter.randomPlans(o), to: corpus, options: o)
        let plain = dir + "/plain.db", copied = dir + "/copied.db", restarted = dir + "/restarted.db"
        _ = try ingest(corpus, into: plain, wake: nil, restart: nil)

        // The thread alone: it copies, the content is the same.
        let thread = try XCTUnwrap(try ingest(corpus, into: copied, wake: 8, restart: 1 << 30))
        XCTAssertGreaterThan(thread.checkpoints, 0, "the thread copied the log")
        XCTAssertEqual(try TestSupport.logicalDump(copied), try TestSupport.logicalDump(plain))

        // The writer's own small copy when the log passes its limit: the log starts over.
        let (restarting, walBytes) = try ingestMeasuringLog(corpus, into: restarted, wake: 1 << 30, restart: 32)
        let writer = try XCTUnwrap(restarting)
        XCTAssertGreaterThan(writer.writerCheckpoints, 0, "largest log \(writer.largestLog)")
        XCTAssertLessThan(writer.largestLog, 32 + 64, "the log starts over soon after its limit")
        XCTAssertGreaterThan(walBytes, 0, "measured while the database is open")
        XCTAssertLessThan(walBytes, (32 + 64) * 4120, "the log file stays small")
        XCTAssertEqual(try TestSupport.logicalDump(restarted), try TestSupport.logicalDump(plain))
    }
}
