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
#if canImport(Glibc)
import Glibc
#endif

/// The PostgreSQL backend against a real server (`LCTRACE_TEST_POSTGRES_URL`; `.ci/run` starts
/// a throwaway cluster and sets it; without it these tests skip). Each test works in a schema
/// of its own, reached through `?options=-csearch_path=…` as a team would.
class PostgreSQLTestCase: TemporaryDirectoryTestCase {
    var admin: PGConnection!
    var schemas: [String] = []

    override func setUpWithError() throws {
        guard let url = PGConnectionTests.url else {
            throw XCTSkip("no PostgreSQL server: set LCTRACE_TEST_POSTGRES_URL (.ci/run starts one)")
        }
        admin = try PGConnection(url: url)
    }

    override func tearDown() {
        for schema in schemas { try? admin?.execute("DROP SCHEMA IF EXISTS \(schema) CASCADE") }
        admin = nil
        super.tearDown()
    }

    /// A URL whose tables live in a new, empty schema.
    func freshDatabase(_ name: String = #function) throws -> String {
        let schema = "t_" + name.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(30) + "_" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        try admin.execute("CREATE SCHEMA \(schema)")
        schemas.append(schema)
        let base = PGConnectionTests.url!
        return base + (base.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
    }

    /// A corpus with what real campaigns bring: rotated sessions over several files, gzip
    /// members, a copy of a file under another name, a file cut short, a file whose lines
    /// overlap two others, and a file of bad lines.
    func corpus(_ name: String, seed: UInt64, sessions: Int) throws -> String {
        let o = CorpusOptions.make(seed: seed, sessions: sessions, scenarios: 40, rotateEvery: 300, linesPerMember: 150)
        let path = dir + "/" + name
        let (_, _, files) = try CorpusWriter.write(plans: CorpusWriter.randomPlans(o), to: path, options: o)
        _ = try CorpusWriter.writeBadLinesFile(to: path + "/bad.jsonl", seed: seed)
        let sorted = files.sorted()
        let fm = FileManager.default
        try fm.copyItem(atPath: path + "/" + sorted[0], toPath: path + "/zz-copy-of-first.jsonl.gz")
        let whole = try Data(contentsOf: URL(fileURLWithPath: path + "/" + sorted[1]))
        try whole.prefix(whole.count * 2 / 3).write(to: URL(fileURLWithPath: path + "/zz-cut.jsonl.gz"))
        // Lines of two files again, in one plain file: every one a duplicate.
        var overlap = ""
        for f in sorted[2...3] {
            let lines = try TestSupport.process("/bin/sh", ["-c", "gzip -dc '\(path)/\(f)'"]).out
            overlap += lines
        }
        try overlap.write(toFile: path + "/zz-overlap.jsonl", atomically: true, encoding: .utf8)
        return path
    }
}

/// An analysis started on a thread of its own.
final class AnalysisOnThread: @unchecked Sendable {
    let analyzer: Analyzer
    var outcome: Result<AnalysisSummary, Error>?
    let done = DispatchSemaphore(value: 0)

    init(_ analyzer: Analyzer) {
        self.analyzer = analyzer
        Thread { [self] in
            outcome = Result { try self.analyzer.analyze() }
            done.signal()
        }.start()
    }
}

/// An ingest started on a thread of its own (the box hands its ingester and outcome over).
final class IngestOnThread: @unchecked Sendable {
    let ingester: Ingester
    let inputs: [InputLocation]
    var outcome: Result<IngestSummary, Error>?
    let done = DispatchSemaphore(value: 0)

    init(_ ingester: Ingester, _ inputs: [InputLocation]) {
        self.ingester = ingester
        self.inputs = inputs
        Thread { [self] in
            outcome = Result { try self.ingester.ingest(self.inputs) }
            done.signal()
        }.start()
    }
}

final class PostgreSQLBackendTests: PostgreSQLTestCase {

    // The same corpus into SQLite and into PostgreSQL giving the same content is a case of
    // the backend contract (BackendContractTests), which every backend runs.

    /// Four ingesters on overlapping file sets at once, one of them killed twice and started
    /// again: the database ends with exactly the content of one clean ingest.
    func testConcurrentIngestersWithKillsEndWithTheContentOfOneCleanIngest() throws {
        let input = try corpus("c", seed: 47, sessions: 24)
        let files = try FileManager.default.contentsOfDirectory(atPath: input).filter { $0.hasSuffix(".gz") && !$0.hasPrefix("zz-") }
            .sorted().map { input + "/" + $0 }
        try TestSupport.concurrentIngestsWithKills(files, reference: try freshDatabase("reference"), shared: try freshDatabase("shared"),
                                                   logs: dir)
        let loading = try PGConnection(url: schemaURL("shared")).query("SELECT count(*) FROM files WHERE status = 'loading'").int(0, 0)
        XCTAssertEqual(loading, 0, "every file row was finished")
    }

    /// The URL of the schema made for `name` in this test.
    func schemaURL(_ name: String) -> String {
        let schema = schemas.first { $0.hasPrefix("t_" + name) }!
        let base = PGConnectionTests.url!
        return base + (base.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
    }

    /// An analysis that built a session while another ingest added rows to it, after it read
    /// its events, leaves the session dirty (its model misses them), so a later analysis builds
    /// it again; one that overlapped nothing marks it analysed. Rows added after the session
    /// was cleared but before its events were read (its clearing goes with that read) are in
    /// the model: current.
    func testAnAnalysisOverlappingABatchLeavesItsSessionDirty() throws {
        var b = TraceBuilder(sid: "S-overlap")
        for i in 0..<40 { b.vc(Double(10 + i), "init", "0x\(i)", #""cls":"CellVC""#) }
        let half = b.lines.count / 2
        TestSupport.writeLines(Array(b.lines[..<half]), to: dir + "/first.jsonl")
        TestSupport.writeLines(Array(b.lines[half...]), to: dir + "/second.jsonl")
        let url = try freshDatabase()
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", url, dir + "/first.jsonl"]).status, 0)
        let storage = try Storage.openForWriting(url)
        let store = try storage.backend.analysisStore()
        let pg = try PGConnection(url: url)
        let id = try pg.query("SELECT id FROM sessions WHERE sid = 'S-overlap'").int(0, 0)!
        func analyse(afterClearing: () -> Void = {}, afterReading: () -> Void = {}) throws -> SessionModel {
            try store.writeTransaction {
                try store.clear(session: id)
                afterClearing()
                let meta = try store.sessionMetadata(id)
                let model = try SessionAnalysis().build(session: id, sid: meta.sid, metadata: meta, source: store)
                afterReading()
                try store.finish(session: id, model)
                return model
            }
        }
        func state() throws -> [Int64?] {
            let row = try pg.query("SELECT dirty, events FROM sessions WHERE id = $1", [String(id)])
            return [row.int(0, 0), row.int(0, 1)]
        }
        let missing = try analyse(afterReading: {
            XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", url, dir + "/second.jsonl"]).status, 0)
        })
        XCTAssertEqual(try state(), [1, Int64(missing.stats.events)], "a batch went in after the events were read")
        XCTAssertEqual(missing.stats.events, half)
        let whole = try analyse()
        XCTAssertEqual(try state(), [0, Int64(b.lines.count)])
        XCTAssertEqual(whole.stats.events, b.lines.count)

        b.vc(100, "init", "0xlate", #""cls":"CellVC""#)
        TestSupport.writeLines([b.lines.last!], to: dir + "/third.jsonl")
        let read = try analyse(afterClearing: {
            XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", url, dir + "/third.jsonl"]).status, 0)
        })
        XCTAssertEqual(read.stats.events, b.lines.count, "the batch went in before the events were read")
        XCTAssertEqual(try state(), [0, Int64(b.lines.count)])
    }

    /// New texts get their ids from the insert itself; texts the table already has (stored
    /// by an earlier ingest, or by another ingester meanwhile) are looked up: either way each
    /// text's id is the table's, whatever the client had cached.
    func testEveryTextGetsTheTablesIdWhetherNewOrStoredBefore() throws {
        let url = try freshDatabase()
        _ = try Storage.openForWriting(url)
        let pg = try PGConnection(url: url)
        func stored() throws -> [String: Int64] {
            let rows = try pg.query("SELECT id, text FROM strings")
            return Dictionary(uniqueKeysWithValues: (0..<rows.rowCount).map { (rows.text($0, 1)!, rows.int($0, 0)!) })
        }
        let first = PGStrings(url: url, stop: nil)
        let a = try first.ids(["UIViewController", "0x1", "tab\there", "é😀"])
        XCTAssertEqual(a.count, 4)
        // Another ingester: nothing cached, two of its texts stored already, two new.
        let second = PGStrings(url: url, stop: nil)
        let b = try second.ids(["0x1", "UIViewController", "0x2", "SettingsVC"])
        let table = try stored()
        XCTAssertEqual(b.count, 4)
        for (text, id) in a.merging(b, uniquingKeysWith: { x, y in XCTAssertEqual(x, y, "one id per text"); return x }) {
            XCTAssertEqual(table[text], id, text)
        }
        XCTAssertEqual(table.count, 6)
        // The first one again, cached and not: the same ids.
        XCTAssertEqual(try first.ids(["SettingsVC", "0x1"]), ["SettingsVC": table["SettingsVC"]!, "0x1": table["0x1"]!])

        // Sent ahead (the insert prepared by now) and collected after a wait on another
        // connection: the same ids; one sent and never collected (a batch that failed between
        // the two) leaves the connection to the next texts.
        let pending = try first.send(["0x3", "0x2", "UIViewController"])
        XCTAssertTrue(pending.sentAhead, "not waited for")
        _ = try second.ids(["0x4"])
        let c = try first.collect(pending)
        _ = try first.send(["0x5"])
        let d = try first.ids(["0x6", "0x5"])
        let after = try stored()
        XCTAssertEqual(c, ["0x3": after["0x3"]!, "0x2": after["0x2"]!, "UIViewController": after["UIViewController"]!])
        XCTAssertEqual(d, ["0x6": after["0x6"]!, "0x5": after["0x5"]!])
        XCTAssertEqual(after.count, 10)
    }

    /// A bulk load leaves the planner statistics of what it loaded: without them, the first
    /// report after loading 10 M events took 80 s instead of 1.4 s (issue 26), until autovacuum
    /// came by. Autovacuum is off on the tables here, so only the ingest can have made them.
    func testAnIngestLeavesThePlannerTheStatisticsOfWhatItLoaded() throws {
        let path = try corpus("stats", seed: 26, sessions: 6)
        let url = try freshDatabase()
        let storage = try Storage.openForWriting(url)
        let pg = try PGConnection(url: url)
        for table in PGBackend.ingestedTables.split(separator: ",") {
            try pg.execute("ALTER TABLE \(table.trimmingCharacters(in: .whitespaces)) SET (autovacuum_enabled = off)")
        }
        XCTAssertEqual(try pg.query("SELECT reltuples FROM pg_class WHERE oid = to_regclass('event_blocks')").text(0, 0), "-1")
        let outcome = try IngestRun(db: storage).run([path])
        let stored = try XCTUnwrap(try pg.query("SELECT count(*) FROM events").int(0, 0))
        XCTAssertEqual(Int(stored), outcome.ingest.newEvents)
        let blocks = try XCTUnwrap(try pg.query("SELECT count(*) FROM event_blocks").int(0, 0))
        XCTAssertGreaterThan(stored, blocks * 2, "events go in blocks")
        let estimated = try XCTUnwrap(try pg.query("SELECT reltuples FROM pg_class WHERE oid = to_regclass('event_blocks')").text(0, 0).flatMap(Double.init))
        XCTAssertEqual(estimated, Double(blocks), accuracy: 1, "ANALYZE counted every row of a small table")
        for table in ["event_blocks", "instances", "appearances", "sessions", "findings"] {
            XCTAssertGreaterThan(try XCTUnwrap(try pg.query("SELECT count(*) FROM pg_stats WHERE schemaname = current_schema() AND tablename = '\(table)'").int(0, 0)), 0,
                                 "\(table) has column statistics")
        }
        // Sampled at the ingest's small target (a histogram of at most target + 1 bounds), which
        // costs a fifth of the server's default and plans the reading commands the same.
        let bounds = try XCTUnwrap(try pg.query("""
            SELECT max(array_length(histogram_bounds::text::text[], 1)) FROM pg_stats
            WHERE schemaname = current_schema() AND tablename = 'instances'
            """).int(0, 0))
        XCTAssertGreaterThan(bounds, 1)
        XCTAssertLessThanOrEqual(bounds, Int64(PGBackend.ingestStatisticsTarget + 1))
        // A later ingest that changes less than a tenth of the blocks leaves them to autovacuum
        // (of several ingesters ending together, only the first analyses).
        let analyzed = { try pg.query("SELECT last_analyze::text FROM pg_stat_user_tables WHERE relid = to_regclass('event_blocks')").text(0, 0) }
        let before = try analyzed()
        XCTAssertNotNil(before)
        var b = TraceBuilder(sid: "S-later")
        for i in 0..<3 { b.vc(Double(10 + i), "init", "0x\(i)", #""cls":"CellVC""#) }
        TestSupport.writeLines(b.lines, to: dir + "/later.jsonl")
        XCTAssertEqual(try IngestRun(db: storage).run([dir + "/later.jsonl"]).ingest.newEvents, b.lines.count)
        XCTAssertEqual(try analyzed(), before, "no ANALYZE for a few events more")
    }

    /// (Issue 26) Of ingesters into one schema, only the last to end analyses: one that ends
    /// while another still loads (holding the ingesters' lock, as a connection does here)
    /// leaves the `ANALYZE` to it, and that one's counts and sample then take in both: a few
    /// events of its own, under a tenth of the blocks, are analysed for the other's many.
    func testOfIngestersEndingOneAfterAnotherOnlyTheLastAnalyses() throws {
        let url = try freshDatabase()
        let pg = try PGConnection(url: url)
        let manualAnalyses = { try XCTUnwrap(try pg.query("SELECT analyze_count FROM pg_stat_user_tables WHERE relid = to_regclass('event_blocks')").int(0, 0)) }
        let ingestersLocks = { try self.ingestersLocks(seenBy: pg) }
        try ingest("S-first", inits: 20_000, into: try Storage.openForWriting(url))
        XCTAssertEqual(try manualAnalyses(), 1, "the first load, alone, is analysed")
        let other = try PGConnection(url: url)
        try other.execute("SELECT pg_advisory_lock_shared(\(PGSchema.ingestersLockClass), hashtext(current_schema()))")
        let storage = try Storage.openForWriting(url)
        try ingest("S-meanwhile", inits: 3_000, into: storage)
        XCTAssertEqual(try manualAnalyses(), 1, "a seventh more blocks, left to the ingest still loading")
        XCTAssertEqual(try ingestersLocks(), 1, "the ingest let go of its share")
        try other.execute("SELECT pg_advisory_unlock_shared(\(PGSchema.ingestersLockClass), hashtext(current_schema()))")
        try ingest("S-last", inits: 10, into: storage)
        XCTAssertEqual(try manualAnalyses(), 2, "the last to end analyses, for the other's blocks")
        let blocks = try XCTUnwrap(try pg.query("SELECT count(*) FROM event_blocks").int(0, 0))
        let estimated = try XCTUnwrap(try pg.query("SELECT reltuples FROM pg_class WHERE oid = to_regclass('event_blocks')").text(0, 0).flatMap(Double.init))
        XCTAssertEqual(estimated, Double(blocks), accuracy: 1, "its ANALYZE counted the other ingest's blocks too")
        XCTAssertEqual(try ingestersLocks(), 0)
        // Alone, the same few events are not worth an ANALYZE; nothing new takes no lock either.
        try ingest("S-alone", inits: 10, into: storage)
        XCTAssertEqual(try manualAnalyses(), 2)
        XCTAssertEqual(try IngestRun(db: storage).run([dir + "/S-alone.jsonl"]).ingest.newEvents, 0)
        XCTAssertEqual(try manualAnalyses(), 2)
        XCTAssertEqual(try ingestersLocks(), 0)
    }

    /// A run that fails after loading some files lets go of the ingesters' lock at once (a
    /// library's database stays open: held, it would keep every other ingest from analysing)
    /// and refreshes the statistics of what it committed.
    func testAFailedRunLetsGoOfTheIngestersLockAndAnalysesWhatItCommitted() throws {
        var b = TraceBuilder(sid: "S-held")
        for i in 0..<5 { b.vc(Double(10 + i), "init", "0x\(i)", #""cls":"CellVC""#) }
        TestSupport.writeLines(b.lines, to: dir + "/2-held.jsonl")
        var a = TraceBuilder(sid: "S-free")
        for i in 0..<300 { a.vc(Double(10 + i), "init", "0x\(i)", #""cls":"CellVC""#) }
        TestSupport.writeLines(a.lines, to: dir + "/1-free.jsonl")
        let url = try freshDatabase() + "%20-clock_timeout%3D300"
        let pg = try PGConnection(url: url)
        let storage = try Storage.openForWriting(url)
        try pg.execute("INSERT INTO sessions(sid) VALUES ('S-held')")
        try pg.execute("BEGIN; SELECT id FROM sessions WHERE sid = 'S-held' FOR UPDATE")
        XCTAssertThrowsError(try IngestRun(db: storage).run([dir + "/1-free.jsonl", dir + "/2-held.jsonl"]))
        try pg.execute("ROLLBACK")
        XCTAssertEqual(try pg.query("SELECT count(*) FROM sessions WHERE sid = 'S-free' AND events > 0").int(0, 0), 1, "the first file stays")
        XCTAssertEqual(try ingestersLocks(seenBy: pg), 0, "let go while the database stays open")
        XCTAssertEqual(try pg.query("SELECT analyze_count FROM pg_stat_user_tables WHERE relid = to_regclass('event_blocks')").int(0, 0), 1)
    }

    private func ingest(_ sid: String, inits: Int, into storage: Storage) throws {
        var b = TraceBuilder(sid: sid)
        for i in 0..<inits { b.vc(Double(10 + i), "init", "0x\(i)", #""cls":"CellVC""#) }
        TestSupport.writeLines(b.lines, to: dir + "/\(sid).jsonl")
        XCTAssertEqual(try IngestRun(db: storage).run([dir + "/\(sid).jsonl"]).ingest.newEvents, b.lines.count)
    }

    /// The ingesters' locks (`PGIngestersLock`) held on this schema of this database.
    private func ingestersLocks(seenBy pg: PGConnection) throws -> Int64? {
        try pg.query("""
            SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND classid = \(PGSchema.ingestersLockClass) AND objid::bigint = (hashtext(current_schema())::bigint & 4294967295)
            """).int(0, 0)
    }

    /// (Issue 26) The merge path's temporary tables are made by its first batch, not by every
    /// ingest: one whose sessions are all new makes none; a rolled-back batch that made them
    /// leaves the next merge to make them again.
    func testTheMergeTablesAreMadeByTheFirstFileThatOverlaps() throws {
        var b = TraceBuilder(sid: "S-lazy")
        for i in 0..<30 { b.vc(Double(10 + i), "init", "0x\(i)", #""cls":"CellVC""#) }
        TestSupport.writeLines(Array(b.lines[0..<10]), to: dir + "/new.jsonl")
        TestSupport.writeLines(Array(b.lines[5..<20]), to: dir + "/overlap.jsonl")
        TestSupport.writeLines(Array(b.lines[15...]), to: dir + "/again.jsonl")
        let url = try freshDatabase()
        let storage = try Storage.openForWriting(url)
        let sink = try XCTUnwrap(try storage.backend.ingestSink() as? PGIngestSink)
        let temporaryTables = { try XCTUnwrap(try sink.pg.query("SELECT count(*) FROM pg_class WHERE relnamespace = pg_my_temp_schema() AND relkind = 'r'").int(0, 0)) }
        XCTAssertEqual(try Ingester(store: sink).ingest(Ingester.expand([dir + "/new.jsonl"]).inputs).files.map(\.newEvents), [10])
        XCTAssertEqual(sink.mergedBatches, 0)
        XCTAssertEqual(try temporaryTables(), 0, "nothing to merge, no table made")
        XCTAssertEqual(try Ingester(store: sink).ingest(Ingester.expand([dir + "/overlap.jsonl"]).inputs).files.map(\.duplicates), [5])
        XCTAssertEqual(sink.mergedBatches, 1)
        XCTAssertEqual(try temporaryTables(), 2)
        // Made in a transaction that rolls back, they are gone, and made again when needed.
        try sink.pg.execute("DROP TABLE lctrace_batch, lctrace_inserted")
        sink.rollback()
        let run = try Ingester(store: sink).ingest(Ingester.expand([dir + "/again.jsonl"]).inputs)
        XCTAssertEqual(run.files.map(\.duplicates), [5])
        XCTAssertEqual(run.files.map(\.newEvents), [b.lines.count - 20])
        XCTAssertEqual(try temporaryTables(), 2)
    }

    /// (Issue 26) A file whose sessions hold nothing stored goes straight into `events` (no
    /// temporary table, no `ON CONFLICT`), and so does the next part of a session this run
    /// wrote; a file that overlaps what is stored, or a session another run wrote, is merged,
    /// its duplicates and conflicts counted as before.
    func testNewSessionsAreCopiedStraightInAndOverlapsAreMerged() throws {
        var b = TraceBuilder(sid: "S-direct")
        for i in 0..<40 { b.vc(Double(10 + i), "init", "0x\(i)", #""cls":"CellVC""#) }
        let lines = b.lines
        TestSupport.writeLines(Array(lines[0..<20]), to: dir + "/1-first.jsonl")
        TestSupport.writeLines(Array(lines[20..<30]), to: dir + "/2-next.jsonl")
        var overlap = Array(lines[10..<30])
        overlap[5] = String(overlap[5].dropLast()) + #","extra":1}"#
        TestSupport.writeLines(overlap, to: dir + "/3-overlap.jsonl")
        TestSupport.writeLines(Array(lines[30...]), to: dir + "/4-rest.jsonl")
        let url = try freshDatabase()
        let storage = try Storage.openForWriting(url)
        let sink = try XCTUnwrap(try storage.backend.ingestSink() as? PGIngestSink)
        let run = try Ingester(store: sink).ingest(Ingester.expand(["1-first", "2-next", "3-overlap"].map { dir + "/\($0).jsonl" }).inputs)
        XCTAssertEqual(run.files.map(\.newEvents), [20, 10, 0])
        XCTAssertEqual(run.files.map(\.duplicates), [0, 0, 19])
        XCTAssertEqual(run.files.map(\.conflicts), [0, 0, 1])
        XCTAssertEqual(sink.directBatches, 2, "the first two files went straight in")
        XCTAssertEqual(sink.mergedBatches, 1, "the overlapping one was merged")
        // Another run: the session holds rows it did not write, so even new seqs are merged.
        let other = try XCTUnwrap(try storage.backend.ingestSink() as? PGIngestSink)
        let rest = try Ingester(store: other).ingest(Ingester.expand([dir + "/4-rest.jsonl"]).inputs)
        XCTAssertEqual(rest.files.map(\.newEvents), [12])
        XCTAssertEqual([other.directBatches, other.mergedBatches], [0, 1])
        let pg = try PGConnection(url: url)
        XCTAssertEqual(try pg.query("SELECT count(*) FROM events").int(0, 0), 42)
        XCTAssertEqual(try pg.query("SELECT count(*) FROM rejects WHERE kind = 'conflict'").int(0, 0), 1)
        XCTAssertEqual(try pg.query("SELECT changes FROM sessions WHERE sid = 'S-direct'").int(0, 0), 3, "the batches that added rows")
    }

    /// (Issue 26) Against a server across a network an ingest waits a round trip for each
    /// request, most of its time. A file of three batches takes 10 on the writer's connection,
    /// 24 before: each BEGIN goes with the next statement, the ledger's statements go in
    /// pipelines (with the earlier reads of the path, the load locks with the first check), the
    /// new file row takes its lock in its INSERT, the session's record is read with its lock
    /// and written with the next copy, the file row's writes go with the COMMIT, and the
    /// session's rows are checked once, by the first batch: the later ones go in under the lock
    /// it took.
    func testAFileOfThreeBatchesTakesEightRoundTripsAndOneCheckOfItsSession() throws {
        func load(_ count: Int) throws -> (roundTrips: Int, sink: PGIngestSink) {
            var paths: [String] = []
            for f in 0..<count {
                var b = TraceBuilder(sid: "S-trips-\(count)-\(f)")
                // Sizes apart: a file the size of a stored one is hashed first, a round trip more.
                for i in 0..<(998 + f) { b.vc(Double(10 + i), "init", "0x\(i)", #""cls":"CellVC""#) }
                paths.append(dir + "/trips-\(count)-\(f).jsonl")
                TestSupport.writeLines(b.lines, to: paths.last!)
            }
            let storage = try Storage.openForWriting(try freshDatabase())
            let sink = try XCTUnwrap(try storage.backend.ingestSink() as? PGIngestSink)
            let run = try Ingester(store: sink).ingest(Ingester.expand(paths).inputs)
            XCTAssertEqual(run.files.map(\.newEvents), (0..<count).map { 1000 + $0 })
            return (sink.pg.roundTrips, sink)
        }
        // Files past the second: the statements of every file are prepared at their second run.
        let three = try load(3), five = try load(5)
        XCTAssertEqual(five.sink.directBatches, 15, "128, 512 and 360 lines a file")
        XCTAssertEqual(five.sink.directChecks, 5, "one read of a file's session")
        XCTAssertEqual(Double(five.roundTrips - three.roundTrips) / 2, 8, "round trips a file: its three batches in one COPY")
    }

    /// (Issue 26) The analysis stores a session's model in three requests: its old rows
    /// deleted (the BEGIN with them), its four kinds of rows and its findings in one query of
    /// COPYs, its counts with the COMMIT. Eight before: a BEGIN, a COPY each, the counts.
    func testAnAnalysisStoresASessionsModelInThreeRequests() throws {
        let url = try freshDatabase()
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", url,
                                        TestSupport.root.appendingPathComponent("SampleTraces/device-002-aad71e75.jsonl.gz").path]).status, 0)
        let storage = try Storage.openForWriting(url)
        let store = try XCTUnwrap(try storage.backend.analysisStore() as? PGAnalysisStore)
        let session = try XCTUnwrap(try store.sessionsToAnalyse(all: true, after: 0, limit: 1).first)
        let analysis = SessionAnalysis()
        let model = try store.writeTransaction {
            try analysis.build(session: session.id, sid: session.sid, metadata: try store.sessionMetadata(session.id), source: store)
        }
        XCTAssertFalse(model.instances.isEmpty || model.cycles.isEmpty || model.edges.isEmpty || model.findings.isEmpty,
                       "a session with every kind of row")
        let pg = store.connection.pg
        let before = pg.roundTrips, textsBefore = store.stringsRoundTrips
        try store.writeTransaction {
            try store.clear(session: session.id)
            try store.finish(session: session.id, model)
        }
        XCTAssertEqual(pg.roundTrips - before, 3)
        XCTAssertEqual(store.stringsRoundTrips - textsBefore, 0, "the rows' texts are the events' read: their ids known")
        let other = try PGConnection(url: url)
        func count(_ table: String) throws -> Int { Int(try other.query("SELECT count(*) FROM \(table) WHERE session = $1", [String(session.id)]).int(0, 0) ?? -1) }
        XCTAssertEqual(try [count("instances"), count("appearances"), count("containment"), count("findings")],
                       [model.instances.count, model.cycles.count, model.edges.count, model.findings.count])
        let row = try other.query("SELECT events, dirty FROM sessions WHERE id = $1", [String(session.id)])
        XCTAssertEqual([row.int(0, 0), row.int(0, 1)], [Int64(model.stats.events), 0], "the counts went with the COMMIT")
        // The same session analysed through the command gives the same rows.
        let summary = try Analyzer(db: storage, settings: RuleSettings()).analyze(all: true)
        XCTAssertEqual(summary.findings, model.findings.count)
        XCTAssertEqual(try count("findings"), model.findings.count)
    }

    /// (Issue 26) Inside a write transaction (the analysis after loading) the models of its
    /// sessions are stored together before the COMMIT: one query of COPYs for all, their
    /// counts in one statement with the COMMIT, each session's clearing with the next request.
    /// n sessions cost n + 2 requests, where each took a query of COPYs of its own before
    /// (2n + 1). A session cleared again in the same transaction has its first model stored
    /// before (no row twice); a transaction rolled back stores none of its models.
    func testTheModelsOfATransactionsSessionsAreStoredTogether() throws {
        let url = try freshDatabase()
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", url, TestSupport.root.appendingPathComponent("SampleTraces").path]).status, 0)
        let storage = try Storage.openForWriting(url)
        let store = try XCTUnwrap(try storage.backend.analysisStore() as? PGAnalysisStore)
        let sessions = try store.sessionsToAnalyse(all: true, after: 0, limit: 100)
        XCTAssertGreaterThan(sessions.count, 5)
        let analysis = SessionAnalysis()
        let models = try store.writeTransaction {
            try sessions.map { try analysis.build(session: $0.id, sid: $0.sid, metadata: try store.sessionMetadata($0.id), source: store) }
        }
        XCTAssertTrue(models.contains { !$0.instances.isEmpty && !$0.cycles.isEmpty && !$0.edges.isEmpty && !$0.findings.isEmpty })
        XCTAssertTrue(models.contains { $0.stats.endReason == nil } && models.contains { $0.stats.endReason != nil },
                      "a NULL among the counts' arrays")
        let pg = store.connection.pg
        let other = try PGConnection(url: url)
        func rows(_ session: Int64) throws -> [Int64?] {
            try ["instances", "appearances", "containment", "findings"].map {
                try other.query("SELECT count(*) FROM \($0) WHERE session = $1", [String(session)]).int(0, 0)
            } + [other.query("SELECT events FROM sessions WHERE id = $1", [String(session)]).int(0, 0),
                 other.query("SELECT dirty FROM sessions WHERE id = $1", [String(session)]).int(0, 0)]
        }
        func expected(_ model: SessionModel) -> [Int64?] {
            [model.instances.count, model.cycles.count, model.edges.count, model.findings.count, model.stats.events, 0].map { Int64($0) }
        }

        let before = pg.roundTrips
        try store.writeTransaction {
            for (session, model) in zip(sessions, models) {
                try store.clear(session: session.id)
                try store.finish(session: session.id, model)
            }
        }
        XCTAssertEqual(pg.roundTrips - before, sessions.count + 2)
        for (session, model) in zip(sessions, models) {
            XCTAssertEqual(try rows(session.id), expected(model), session.sid)
            let counts = try other.query("SELECT end_reason, first_seq, last_t FROM sessions WHERE id = $1", [String(session.id)])
            XCTAssertEqual([counts.text(0, 0), counts.text(0, 1), counts.text(0, 2)],
                           [model.stats.endReason, model.stats.firstSeq.map(String.init), model.stats.lastT.map(String.init)])
        }

        try store.writeTransaction {
            for _ in 0..<2 {
                try store.clear(session: sessions[0].id)
                try store.finish(session: sessions[0].id, models[0])
            }
        }
        XCTAssertEqual(try rows(sessions[0].id), expected(models[0]), "cleared again: stored once")

        try other.execute("UPDATE sessions SET dirty = 1 WHERE id = \(sessions[1].id)")
        struct Failed: Error {}
        XCTAssertThrowsError(try store.writeTransaction {
            try store.clear(session: sessions[1].id)
            try store.finish(session: sessions[1].id, models[1])
            throw Failed()
        })
        var dirtyAgain = expected(models[1])
        dirtyAgain[5] = 1
        XCTAssertEqual(try rows(sessions[1].id), dirtyAgain, "rolled back: the rows before, still dirty")

        // The next transaction stores its own models only (none held over from the rollback),
        // and one flush a model when a model's facts reach the bound: a query of COPYs each.
        store.finishedFactsAtMost = 1
        let two = Array(zip(sessions, models).prefix(2))
        let flushing = pg.roundTrips
        try store.writeTransaction {
            for (session, model) in two {
                try store.clear(session: session.id)
                try store.finish(session: session.id, model)
            }
        }
        XCTAssertEqual(pg.roundTrips - flushing, 2 * two.count + 1)
        for (session, model) in two { XCTAssertEqual(try rows(session.id), expected(model), session.sid) }
    }

    /// (Review of dfa301d) The ingest keeps its COPY open between batches only where no
    /// `statement_timeout` would count the pauses between them (the URL's, here).
    func testTheIngestKeepsItsCopyOpenOnlyWithoutAStatementTimeout() throws {
        for (options, open) in [("", true), ("%20-cstatement_timeout%3D5000", false)] {
            let url = try freshDatabase("timeout\(open)") + options
            let sink = try XCTUnwrap(try Storage.openForWriting(url).backend.ingestSink() as? PGIngestSink)
            try sink.startRun(capturesRows: false, backgroundWork: false)
            XCTAssertEqual(sink.pg.keepsCopiesOpen, open, options)
            sink.endRun()
        }
    }

    /// A later batch of sessions the transaction already copied straight in is not read
    /// again, but its seqs must still rise across the whole batch: a session met twice in it
    /// (another session's lines between) with a seq again is merged, the copy counted as a
    /// duplicate and stored once.
    func testALaterBatchRepeatingASeqAcrossItsRunsIsMerged() throws {
        var a = TraceBuilder(sid: "S-runs-a"), b = TraceBuilder(sid: "S-runs-b")
        for i in 0..<63 { a.vc(Double(10 + i), "init", "0xA\(i)", #""cls":"CellVC""#); b.vc(Double(10 + i), "init", "0xB\(i)", #""cls":"CellVC""#) }
        // The first batch: 128 lines, each session's 64 in a run of their own.
        let first = Array(a.lines.prefix(64)) + Array(b.lines.prefix(64))
        TestSupport.writeLines(first + [a.lines[64], b.lines[64], a.lines[64]], to: dir + "/runs.jsonl")
        let url = try freshDatabase()
        let sink = try XCTUnwrap(try Storage.openForWriting(url).backend.ingestSink() as? PGIngestSink)
        let run = try Ingester(store: sink).ingest(Ingester.expand([dir + "/runs.jsonl"]).inputs)
        XCTAssertEqual(run.files.map(\.newEvents), [130])
        XCTAssertEqual(run.files.map(\.duplicates), [1])
        XCTAssertEqual([sink.directBatches, sink.mergedBatches], [1, 1])
        XCTAssertEqual(try PGConnection(url: url).query("SELECT count(*) FROM events").int(0, 0), 130)
    }

    /// Two ingesters whose transactions meet two sessions in opposite orders: one locks the
    /// higher session's row, the other the lower's, and each then needs the other's. A
    /// transaction takes rows in rising id order only, committing first when a batch needs a
    /// lower one than it holds, so neither waits in a cycle (the server failed one of them with
    /// "deadlock detected" before), and every event goes in once.
    func testTwoIngestersMeetingTwoSessionsInOppositeOrdersDoNotDeadlock() throws {
        let url = try freshDatabase()
        // Two ingests: a storage (and connection) each.
        let x = try XCTUnwrap(try Storage.openForWriting(url).backend.ingestSink() as? PGIngestSink)
        let y = try XCTUnwrap(try Storage.openForWriting(url).backend.ingestSink() as? PGIngestSink)
        try PGConnection(url: url).execute("INSERT INTO sessions(sid) VALUES ('S-low'); INSERT INTO sessions(sid) VALUES ('S-high')")
        func batch(_ sid: String, from seq: Int, _ name: String) throws -> EventBatch {
            var b = TraceBuilder(sid: sid, record: false)
            b.seq = Int64(seq)
            for i in 0..<4 { b.vc(Double(seq + i), "init", "0x\(sid)-\(seq + i)", #""cls":"CellVC""#) }
            TestSupport.writeLines(b.lines, to: dir + "/" + name)
            return try XCTUnwrap(BatchReader.decodeLines(of: try TraceInput(location: .file(dir + "/" + name)), startingWith: EventBatch(),
                                                         maxLineLength: 1 << 20, decoder: EventDecoder()) { _ in nil })
        }
        for sink in [x, y] {
            try sink.startRun(capturesRows: false, backgroundWork: false)
            try sink.begin()
        }
        defer { x.endRun(); y.endRun() }
        _ = try x.store(try batch("S-high", from: 0, "x1.jsonl"), file: 0)
        _ = try y.store(try batch("S-low", from: 0, "y1.jsonl"), file: 0)
        // x now needs S-low (held by y) and y S-high (held by x, unless x let it go).
        let xSecond = try batch("S-low", from: 10, "x2.jsonl"), ySecond = try batch("S-high", from: 10, "y2.jsonl")
        /// x's second batch, stored and committed on a thread of its own (handed over whole).
        final class OnThread: @unchecked Sendable {
            let sink: PGIngestSink, batch: EventBatch
            var error: Error?
            let done = DispatchSemaphore(value: 0)
            init(_ sink: PGIngestSink, _ batch: EventBatch) { self.sink = sink; self.batch = batch }
        }
        let xDone = OnThread(x, xSecond)
        Thread {
            do { _ = try xDone.sink.store(xDone.batch, file: 0); try xDone.sink.commit() } catch { xDone.error = error }
            xDone.done.signal()
        }.start()
        Thread.sleep(forTimeInterval: 0.3)  // x waits for S-low's row
        var yError: Error?
        do { _ = try y.store(ySecond, file: 0); try y.commit() } catch { yError = error }
        XCTAssertEqual(xDone.done.wait(timeout: .now() + 30), .success)
        XCTAssertNil(xDone.error, "x: \(String(describing: xDone.error))")
        XCTAssertNil(yError, "y: \(String(describing: yError))")
        XCTAssertEqual([x.earlyCommits, y.earlyCommits], [1, 0], "x let S-high go before asking for S-low")
        let rows = try PGConnection(url: url).query("SELECT sid || ':' || string_agg(seq::text, ',' ORDER BY seq) FROM events_v GROUP BY sid ORDER BY sid")
        XCTAssertEqual((0..<rows.rowCount).map { rows.text($0, 0) }, ["S-high:0,1,2,3,10,11,12,13", "S-low:0,1,2,3,10,11,12,13"])
    }

    /// A file of session `sid` (its record, a scene, eight controllers' inits), its lines, a
    /// fresh database and a connection of another writer to it.
    private func oneSessionAndAWriter(_ sid: String) throws -> (path: String, lines: Int, storage: Storage, writer: PGConnection) {
        var b = TraceBuilder(sid: sid)
        for i in 0..<8 { b.vc(Double(10 + i), "init", "0x\(i)", #""cls":"CellVC""#) }
        let path = dir + "/\(sid).jsonl"
        TestSupport.writeLines(b.lines, to: path)
        let url = try freshDatabase()
        return (path, b.lines.count, try Storage.openForWriting(url), try PGConnection(url: url))
    }

    /// The advisory locks an ingest holds on the server, by its connection's pid.
    private func advisoryLocks(of pid: Int64, seenBy pg: PGConnection) throws -> Int64? {
        try pg.query("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = $1", [String(pid)]).int(0, 0)
    }

    /// A batch's load locks go in the pipeline of its sessions' check: when the check fails
    /// (another writer holds a session's row past the lock timeout), the locks its first
    /// statement took are let go all the same when the run ends.
    func testAFailedSessionCheckLetsGoOfTheLoadLocksItsPipelineTook() throws {
        let (path, _, storage, writer) = try oneSessionAndAWriter("S-held-row")
        try writer.execute("INSERT INTO sessions(sid) VALUES ('S-held-row')")
        try writer.execute("BEGIN; SELECT id FROM sessions WHERE sid = 'S-held-row' FOR UPDATE")
        let sink = try XCTUnwrap(try storage.backend.ingestSink() as? PGIngestSink)
        try sink.pg.execute("SET lock_timeout = '300ms'")
        let pid = try XCTUnwrap(try sink.pg.query("SELECT pg_backend_pid()").int(0, 0))
        XCTAssertThrowsError(try Ingester(store: sink).ingest(Ingester.expand([path]).inputs))
        try writer.execute("ROLLBACK")
        XCTAssertEqual(try advisoryLocks(of: pid, seenBy: writer), 0, "locks left held by the ingest's connection")
    }

    /// A file's end waits for the ledger's lock before it lets go of the file row's: when that
    /// wait fails, the row's lock is still this run's to let go of (`releaseLoads`).
    func testAFailedWaitForTheLedgerAtAFilesEndLeavesItsRowToReleaseLoads() throws {
        let url = try freshDatabase()
        let sink = try XCTUnwrap(try Storage.openForWriting(url).backend.ingestSink() as? PGIngestSink)
        try sink.startRun(capturesRows: false, backgroundWork: false)
        try sink.begin()
        guard case .load(let id) = try sink.planFile(path: dir + "/x.jsonl", size: 10, hash: nil, deferring: false) else { return XCTFail("not loaded") }
        _ = try sink.earlierReads(of: dir + "/x.jsonl", smallerThan: 10)
        try sink.commit()
        let other = try PGConnection(url: url)
        try other.execute("BEGIN; SELECT " + PGSchema.ledgerLock)
        try sink.pg.execute("SET lock_timeout = '300ms'")
        let pid = try XCTUnwrap(try sink.pg.query("SELECT pg_backend_pid()").int(0, 0))
        try sink.begin()
        XCTAssertThrowsError(try sink.finishFile(id: id, hash: String(repeating: "0", count: 64), stats: FileStats()))
        sink.rollback()
        sink.releaseLoads()
        sink.endRun()
        try other.execute("ROLLBACK")
        XCTAssertEqual(try advisoryLocks(of: pid, seenBy: other), 0, "file row \(id)'s lock left held")
    }

    /// The later batches of a session skip its check only inside the transaction whose check
    /// locked its row: a file of three batches, a transaction each (100 lines a transaction at
    /// most), checks its session three times.
    func testASessionIsCheckedAgainInEachTransaction() throws {
        var b = TraceBuilder(sid: "S-checked")
        for i in 0..<998 { b.vc(Double(10 + i), "init", "0x\(i)", #""cls":"CellVC""#) }
        TestSupport.writeLines(b.lines, to: dir + "/checked.jsonl")
        let sink = try XCTUnwrap(try Storage.openForWriting(try freshDatabase()).backend.ingestSink() as? PGIngestSink)
        var options = IngestOptions()
        options.batchSize = 100
        let run = try Ingester(store: sink, options: options).ingest(Ingester.expand([dir + "/checked.jsonl"]).inputs)
        XCTAssertEqual(run.files.map(\.newEvents), [1000])
        XCTAssertEqual(sink.directBatches, 3, "128, 512 and 360 lines")
        XCTAssertEqual(sink.directChecks, 3, "one check a transaction")
    }

    /// Another writer holding a session (its row locked, a row of it added, not committed
    /// yet): the batch waits for it, then sees the session changed and merges; it never copies
    /// straight in beside rows it cannot see.
    func testABatchWaitsForAnotherWriterOfItsSessionAndThenMerges() throws {
        let (path, lines, storage, writer) = try oneSessionAndAWriter("S-held")
        try writer.execute("INSERT INTO sessions(sid) VALUES ('S-held'); INSERT INTO strings(text) VALUES ('init') ON CONFLICT DO NOTHING")
        try writer.execute("BEGIN")
        try writer.execute("""
            SELECT id FROM sessions WHERE sid = 'S-held' FOR UPDATE;
            INSERT INTO event_blocks(session, first_seq, last_seq, t, seq, vc, other, ev, flags)
            SELECT s.id, 3, 3, '{1}', '{3}', '{NULL}', '{NULL}', ARRAY[n.id::smallint], '{0}' FROM sessions s, strings n WHERE s.sid = 'S-held' AND n.text = 'init';
            UPDATE sessions SET changes = changes + 1, dirty = 1 WHERE sid = 'S-held'
            """)
        let sink = try XCTUnwrap(try storage.backend.ingestSink() as? PGIngestSink)
        let load = IngestOnThread(Ingester(store: sink), Ingester.expand([path]).inputs)
        XCTAssertEqual(load.done.wait(timeout: .now() + 1.5), .timedOut, "the batch waits for the session's writer")
        try writer.execute("COMMIT")
        XCTAssertEqual(load.done.wait(timeout: .now() + 30), .success)
        let summary = try XCTUnwrap(load.outcome).get()
        XCTAssertEqual(summary.files.map(\.newEvents), [lines - 1])
        XCTAssertEqual(summary.files.map { $0.duplicates + $0.conflicts }, [1])
        XCTAssertEqual([sink.directBatches, sink.mergedBatches], [0, 1])
    }

    /// A batch's new sessions are inserted on a connection in autocommit (shared with its new
    /// texts only: `PGAutocommit`), which must never wait for another ingest's open batch that
    /// updated a stored session's row: that ingest may be waiting, through its own inserter,
    /// for this one, and the server cannot see such a cycle (four ingesters of the
    /// concurrent-kill test hung so). A stored session is read, not inserted again.
    func testANewSessionsInsertDoesNotWaitForABatchUpdatingAStoredSession() throws {
        let url = try freshDatabase()
        let storage = try Storage.openForWriting(url)
        let writer = try PGConnection(url: url)
        try writer.execute("INSERT INTO sessions(sid) VALUES ('S-stored')")
        try writer.execute("BEGIN")
        try writer.execute("UPDATE sessions SET changes = changes + 1, dirty = 1 WHERE sid = 'S-stored'")
        // Should the insert wait after all, the writer lets go after 20 s and the test fails on time.
        let release = DispatchWorkItem { try? writer.execute("ROLLBACK") }
        DispatchQueue.global().asyncAfter(deadline: .now() + 20, execute: release)
        let sink = try XCTUnwrap(try storage.backend.ingestSink() as? PGIngestSink)
        // The connection made, and the statement prepared (at its second run).
        _ = try sink.sessionIDs(["S-first"])
        _ = try sink.sessionIDs(["S-second"])
        let started = Date(), before = sink.sessionInserterRoundTrips
        let ids = try sink.sessionIDs(["S-stored", "S-new"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "the insert waited for the other batch")
        XCTAssertEqual(sink.sessionInserterRoundTrips - before, 1, "read and inserted in one request, never timed out and asked again")
        XCTAssertEqual(Set(ids.keys), ["S-stored", "S-new"])
        let stored = try PGConnection(url: url).query("SELECT id FROM sessions WHERE sid = 'S-stored'").int(0, 0)
        XCTAssertEqual(ids["S-stored"], stored)
        release.cancel()
        try writer.execute("ROLLBACK")

        // A sid another ingest inserts meanwhile, not committed yet: the insert waits for it
        // (a lock timeout at a time), then reads the row it committed; one row for the sid.
        nonisolated(unsafe) let other = try PGConnection(url: url)
        try other.execute("BEGIN; INSERT INTO sessions(sid) VALUES ('S-race')")
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.7) { try? other.execute("COMMIT") }
        let raced = try sink.sessionIDs(["S-race", "S-new-2"])
        let rows = try PGConnection(url: url).query("SELECT id FROM sessions WHERE sid = 'S-race'")
        XCTAssertEqual(rows.rowCount, 1)
        XCTAssertEqual(raced["S-race"], rows.int(0, 0))
        XCTAssertNotNil(raced["S-new-2"])
        sink.endRun()
    }

    /// The analysis after loading passes over a session another writer is analysing (its
    /// lock held), analyses the others, and comes back to it at the end: not at all when the
    /// other stored it meanwhile, after waiting for it when it is still dirty.
    func testTheAnalysisPassesOverASessionAnotherWriterHoldsAndComesBackIfStillDirty() throws {
        for othersStore in [true, false] {
            var lines: [String] = []
            for sid in ["S-a", "S-b", "S-c"] {
                var b = TraceBuilder(sid: sid)
                for i in 0..<5 { b.vc(Double(10 + i), "init", "0x\(i)", #""cls":"CellVC""#) }
                lines += b.lines
            }
            TestSupport.writeLines(lines, to: dir + "/three.jsonl")
            let url = try freshDatabase("pass\(othersStore)")
            XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", url, dir + "/three.jsonl"]).status, 0)
            let other = try PGConnection(url: url)
            let held = try XCTUnwrap(try other.query("SELECT id FROM sessions WHERE sid = 'S-b'").int(0, 0))
            try other.execute("BEGIN; SELECT " + PGAnalysisStore.sessionLock(held))
            let storage = try Storage.openForWriting(url)
            let analyzer = try Analyzer(db: storage, settings: RuleSettings())
            let box = AnalysisOnThread(analyzer)
            XCTAssertEqual(box.done.wait(timeout: .now() + 1.5), .timedOut, "S-b is still dirty: the analysis waits for it at the end")
            let dirty = { try other.query("SELECT string_agg(sid, ',' ORDER BY sid) FROM sessions WHERE dirty = 1").text(0, 0) }
            XCTAssertEqual(try dirty(), "S-b", "the others were analysed first")
            if othersStore { try other.execute("UPDATE sessions SET dirty = 0 WHERE id = \(held)") }
            try other.execute("COMMIT")
            XCTAssertEqual(box.done.wait(timeout: .now() + 30), .success)
            let summary = try XCTUnwrap(box.outcome).get()
            XCTAssertEqual(summary.analyzed.contains(held), !othersStore)
            XCTAssertEqual(summary.sessions, othersStore ? 2 : 3, "S-b analysed again only when still dirty")
            XCTAssertNil(try dirty())
        }
    }

    /// A session another live ingest is still loading (its load lock held) is left to that
    /// ingest, which analyses it when its loading ends: this analysis neither waits for it nor
    /// builds it. An ingest holds the lock of the sessions it writes until its loading ends.
    func testTheAnalysisLeavesASessionAnotherIngestIsLoadingToIt() throws {
        var lines: [String] = []
        for sid in ["S-a", "S-b"] {
            var b = TraceBuilder(sid: sid)
            for i in 0..<5 { b.vc(Double(10 + i), "init", "0x\(i)", #""cls":"CellVC""#) }
            lines += b.lines
        }
        TestSupport.writeLines(lines, to: dir + "/two.jsonl")
        let url = try freshDatabase()
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", url, dir + "/two.jsonl"]).status, 0)
        let loader = try PGConnection(url: url)
        let held = try XCTUnwrap(try loader.query("SELECT id FROM sessions WHERE sid = 'S-b'").int(0, 0))
        try loader.execute("SELECT pg_advisory_lock(\(PGSchema.loadLockKey(String(held))))")
        let summary = try Analyzer(db: try Storage.openForWriting(url), settings: RuleSettings()).analyze()
        XCTAssertEqual(summary.sessions, 1)
        XCTAssertFalse(summary.analyzed.contains(held))
        XCTAssertEqual(try loader.query("SELECT string_agg(sid, ',') FROM sessions WHERE dirty = 1").text(0, 0), "S-b")
        // While an ingest loads, it holds the lock of each session it wrote; it lets them go at the end.
        let storage = try Storage.openForWriting(url)
        let sink = try XCTUnwrap(try storage.backend.ingestSink() as? PGIngestSink)
        try loader.execute("SELECT pg_advisory_unlock_all()")
        var c = TraceBuilder(sid: "S-c")
        for i in 0..<3 { c.vc(Double(10 + i), "init", "0x\(i)", #""cls":"CellVC""#) }
        TestSupport.writeLines(c.lines, to: dir + "/c.jsonl")
        // (The ingesters' lock, `PGIngestersLock`, stays until the run's planner statistics.)
        let heldKeys = {
            try loader.query("""
                SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid() AND granted
                AND NOT (objsubid = 2 AND classid = \(PGSchema.ingestersLockClass))
                """).int(0, 0)
        }
        let box = IngestOnThread(Ingester(store: sink), Ingester.expand([dir + "/c.jsonl"]).inputs)
        XCTAssertEqual(box.done.wait(timeout: .now() + 30), .success)
        _ = try XCTUnwrap(box.outcome).get()
        XCTAssertEqual(try heldKeys(), 0, "the load locks are let go when loading ends")
    }

    /// A fresh database, and a session of 20 inits in two files: first.jsonl holds its lines
    /// up to `firstEnd`, second.jsonl those from `secondStart`.
    func splitSession(_ sid: String, firstEnd: Int, secondStart: Int, name: String = #function) throws -> String {
        var b = TraceBuilder(sid: sid)
        for i in 0..<20 { b.vc(Double(10 + i), "init", "0x\(i)", #""cls":"CellVC""#) }
        TestSupport.writeLines(Array(b.lines[0..<firstEnd]), to: dir + "/first.jsonl")
        TestSupport.writeLines(Array(b.lines[secondStart...]), to: dir + "/second.jsonl")
        return try freshDatabase(name)
    }

    /// (Issue 26) A file another live ingest is loading when it is planned is left for after
    /// the other files: loaded too if the other is still at it then, skipped by its hash if
    /// the other has loaded it meanwhile. The run's reports stay in the order of its inputs.
    func testAFileAnotherIngestIsLoadingIsLeftForLater() throws {
        var x = TraceBuilder(sid: "S-x"), y = TraceBuilder(sid: "S-y")
        for i in 0..<40 { x.vc(Double(10 + i), "init", "0x\(i)", #""cls":"CellVC""#) }
        // More than 16,384 lines: the run reports its progress while it loads this one.
        for i in 0..<17_000 { y.vc(Double(10 + i), "init", "0x\(i % 300)", #""cls":"CellVC""#) }
        TestSupport.writeLines(x.lines, to: dir + "/x.jsonl")
        TestSupport.writeLines(y.lines, to: dir + "/y.jsonl")
        let size = Int64(try FileManager.default.attributesOfItem(atPath: dir + "/x.jsonl")[.size] as! Int)
        for loadedMeanwhile in [false, true] {
            let url = try freshDatabase(loadedMeanwhile ? "meanwhile" : "still")
            // Another ingest has planned x.jsonl and holds its row.
            let other = try XCTUnwrap(try Storage.openForWriting(url).backend.ingestSink() as? PGIngestSink)
            try other.begin()
            guard case .load = try other.planFile(path: dir + "/x.jsonl", size: size, hash: nil, deferring: false) else {
                return XCTFail("the other ingest could not plan x.jsonl")
            }
            try other.commit()
            let sink = try XCTUnwrap(try Storage.openForWriting(url).backend.ingestSink() as? PGIngestSink)
            var done = false
            let run = try Ingester(store: sink).ingest(Ingester.expand([dir + "/x.jsonl", dir + "/y.jsonl"]).inputs) { _ in
                // While y.jsonl loads, the other ingest ends and, here, x.jsonl is loaded by a third.
                guard loadedMeanwhile, !done else { return }
                done = true
                other.releaseLoads()
                XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", url, self.dir + "/x.jsonl"]).status, 0)
            }
            XCTAssertEqual(run.files.map(\.path), [dir + "/x.jsonl", dir + "/y.jsonl"], "reports in the order of the inputs")
            XCTAssertEqual(run.files.map(\.status), [loadedMeanwhile ? .alreadyLoaded(path: dir + "/x.jsonl") : .loaded, .loaded])
            XCTAssertEqual(run.files.map(\.newEvents), [loadedMeanwhile ? 0 : x.lines.count, y.lines.count])
            let pg = try PGConnection(url: url)
            let order = try pg.query("SELECT path FROM files WHERE status = 'complete' ORDER BY id")
            // Still loading: this run made y.jsonl's row, then x.jsonl's of its own. Loaded
            // meanwhile: into the other ingest's row (the first), resumed by the third.
            XCTAssertEqual((0..<order.rowCount).compactMap { order.text($0, 0) },
                           loadedMeanwhile ? [dir + "/x.jsonl", dir + "/y.jsonl"] : [dir + "/y.jsonl", dir + "/x.jsonl"])
            XCTAssertEqual(try pg.query("SELECT count(*) FROM events").int(0, 0), Int64(x.lines.count + y.lines.count))
            other.releaseLoads()
        }
    }

    /// A run stopped while it loads the files it left for later reports those it loaded before
    /// the stop, in the order of its inputs (what it committed is stored: the summary says so).
    func testAStopInTheFilesLeftForLaterReportsThoseLoadedBeforeIt() throws {
        var small = TraceBuilder(sid: "S-small"), big = TraceBuilder(sid: "S-big"), other = TraceBuilder(sid: "S-other")
        for i in 0..<40 { small.vc(Double(10 + i), "init", "0x\(i)", #""cls":"CellVC""#) }
        // More than 16,384 lines: the run reports its progress (and is stopped) while loading it.
        for i in 0..<17_000 { big.vc(Double(10 + i), "init", "0x\(i % 300)", #""cls":"CellVC""#) }
        for i in 0..<30 { other.vc(Double(10 + i), "init", "0x\(i)", #""cls":"CellVC""#) }
        let paths = ["small", "big", "other"].map { dir + "/\($0).jsonl" }
        for (path, b) in zip(paths, [small, big, other]) { TestSupport.writeLines(b.lines, to: path) }
        let url = try freshDatabase()
        // Another ingest holds the first two files' rows: this run leaves them for later.
        let holder = try XCTUnwrap(try Storage.openForWriting(url).backend.ingestSink() as? PGIngestSink)
        try holder.begin()
        for path in paths.prefix(2) {
            let size = Int64(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int)
            guard case .load = try holder.planFile(path: path, size: size, hash: nil, deferring: false) else { return XCTFail(path) }
        }
        try holder.commit()
        let sink = try XCTUnwrap(try Storage.openForWriting(url).backend.ingestSink() as? PGIngestSink)
        let ingester = Ingester(store: sink)
        let stop = StopRequest()
        ingester.stop = stop
        XCTAssertThrowsError(try ingester.ingest(Ingester.expand(paths).inputs) { progress in
            if progress.path == paths[1] { stop.request() }
        }) { error in
            guard let interrupted = error as? IngestInterrupted else { return XCTFail("\(error)") }
            XCTAssertEqual(interrupted.summary.files.map(\.path), [paths[0], paths[2]], "the small file, loaded later, and the other")
            XCTAssertEqual(interrupted.summary.files.map(\.newEvents), [small.lines.count, other.lines.count])
        }
        holder.releaseLoads()
    }

    /// A row stored behind lctrace's back (its batch not counted in `sessions.changes`) keeps
    /// the batch from the straight copy (the highest seq stored, read under the sessions'
    /// lock): the batch is merged, the row counted a duplicate.
    func testAStraightCopyMeetingAStoredRowIsUndoneAndMerged() throws {
        let url = try splitSession("S-behind", firstEnd: 10, secondStart: 5)
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", url, dir + "/first.jsonl"]).status, 0)
        let pg = try PGConnection(url: url)
        try pg.execute("UPDATE sessions SET changes = 0")
        let storage = try Storage.openForWriting(url)
        let sink = try XCTUnwrap(try storage.backend.ingestSink() as? PGIngestSink)
        let run = try Ingester(store: sink).ingest(Ingester.expand([dir + "/second.jsonl"]).inputs)
        XCTAssertEqual(run.files.map(\.newEvents), [12])
        XCTAssertEqual(run.files.map(\.duplicates), [5])
        XCTAssertEqual([sink.directBatches, sink.mergedBatches], [0, 1])
        XCTAssertEqual(try pg.query("SELECT count(*) FROM events").int(0, 0), 22)
    }

    /// (Issue 26) The analysis while loading on PostgreSQL: the sessions this run writes alone
    /// are built from the rows the ingest kept and stored by a thread of their own, and the
    /// others are left to the analysis after loading; the stored models, findings and dirty
    /// flags are those of loading first and analysing after.
    func testModelsFromCapturedRowsWhileLoadingEqualModelsReadBack() throws {
        let input = try corpus("c", seed: 23, sessions: 8)
        let together = try freshDatabase("together"), apart = try freshDatabase("apart")
        let storage = try Storage.openForWriting(together)
        let sink = try XCTUnwrap(try storage.backend.ingestSink() as? PGIngestSink)
        let ingester = Ingester(store: sink)
        XCTAssertTrue(try ingester.analyzeWhileLoading(settings: RuleSettings()), "PostgreSQL analyses while loading")
        _ = try ingester.ingest(Ingester.expand([input]).inputs)
        let background = try XCTUnwrap(ingester.analysis)
        XCTAssertGreaterThan(background.storedFromCapturedRows, 0)
        XCTAssertEqual(background.sessions, background.storedFromCapturedRows, "nothing is read back while loading")
        // A session read back costs the server: the analysis holds four times SQLite's rows.
        XCTAssertEqual(background.maxHeldRows, sink.capturedRowsHeldAtMost)
        let sqlite = try IngestStore(db: SQLiteSchema.openForWriting(path: dir + "/held.db"))
        XCTAssertEqual(sink.capturedRowsHeldAtMost, 4 * sqlite.capturedRowsHeldAtMost)
        // The cut file and the overlapping one meet stored rows: their sessions are left dirty.
        let pg = try PGConnection(url: together)
        XCTAssertGreaterThan(try pg.query("SELECT count(*) FROM sessions WHERE dirty = 1").int(0, 0) ?? 0, 0)
        _ = try Analyzer(db: storage, settings: RuleSettings()).analyze(all: false)
        let load = TestSupport.run(["ingest", "-q", "--no-analyze", "--db", apart, input])
        XCTAssertEqual(load.status, 65, load.err)
        let analysis = TestSupport.run(["analyze", "--db", apart])
        XCTAssertEqual(analysis.status, 0, analysis.err)
        XCTAssertEqual(try TestSupport.logicalDump(location: together), try TestSupport.logicalDump(location: apart))
    }

    /// (Issue 26) A session whose rows were captured and that another ingest adds rows to
    /// before its model is stored keeps its model dirty: the server compares its `changes`
    /// with those of the captured rows, not with what it holds when the model is written.
    func testACapturedSessionChangedBeforeItsModelIsStoredStaysDirty() throws {
        let url = try splitSession("S-late", firstEnd: 10, secondStart: 10)
        let storage = try Storage.openForWriting(url)
        let holder = try PGConnection(url: url)
        let id = try XCTUnwrap(try holder.query("INSERT INTO sessions(sid) VALUES ('S-late') RETURNING id").int(0, 0))
        // The model's writer waits for this lock (its session's analysis lock) while another ingest adds rows.
        let key = (Int64(PGSchema.lockClass) << 32) | (id & 0xffff_ffff)
        try holder.execute("SELECT pg_advisory_lock(\(key))")
        let ingester = Ingester(store: try storage.backend.ingestSink())
        XCTAssertTrue(try ingester.analyzeWhileLoading(settings: RuleSettings()))
        let load = IngestOnThread(ingester, Ingester.expand([dir + "/first.jsonl"]).inputs)
        var waiting = false
        for _ in 0..<300 where !waiting {
            waiting = try holder.query("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").int(0, 0) == 1
            if !waiting { usleep(20_000) }
        }
        XCTAssertTrue(waiting, "the model's writer waits for the session's lock")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", url, dir + "/second.jsonl"]).status, 0)
        try holder.execute("SELECT pg_advisory_unlock(\(key))")
        XCTAssertEqual(load.done.wait(timeout: .now() + 30), .success)
        _ = try XCTUnwrap(load.outcome).get()
        XCTAssertEqual(try XCTUnwrap(load.ingester.analysis).storedFromCapturedRows, 1, "built from the first file's rows")
        XCTAssertEqual(try holder.query("SELECT dirty FROM sessions WHERE id = $1", [String(id)]).int(0, 0), 1,
                       "rows came in after the captured ones")
    }

    /// (Issue 26) The analysis's reader, which resolves texts on the client, gives every
    /// session's events exactly as the portable reader (five joins on the server) does: with
    /// pages of a few rows and a cache smaller than a page, so it is emptied midway.
    func testTheClientSideEventReaderReadsWhatThePortableOneReads() throws {
        let input = try corpus("c", seed: 11, sessions: 6)
        let url = try freshDatabase()
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", url, input]).status, 65)
        // A session whose blocks interleave: its even lines in one file, its odd ones in a
        // later one (which fills the holes), with values kept in `rest`: attrs the model reads,
        // a thread, a wall time with a quote, a class beside a parent, and event names whose
        // ids are past a smallint's (texts new after 40,000 others).
        let admin = try PGConnection(url: url)
        try admin.execute("SELECT setval(pg_get_serial_sequence('strings', 'id'), 40000)")
        var b = TraceBuilder(sid: "S-interleaved")
        for i in 0..<700 {
            switch i % 3 {
            case 0: b.vc(Double(10 + i), "init", "0x\(i % 90)", #""cls":"CellVC","thread":"main","wall":"t\"\#(i)","attrs":{"k":"v\n\#(i)é"}"#)
            case 1: b.vc(Double(10 + i), "addChild", "0x\(i % 90)", #""parent":"0xroot","cls":"CellVC""#)
            default: b.vc(Double(10 + i), "someFutureCallback\(i % 4)", "0x\(i % 90)")
            }
        }
        TestSupport.writeLines(b.lines.enumerated().filter { $0.offset % 2 == 0 }.map(\.element), to: dir + "/even.jsonl")
        TestSupport.writeLines(b.lines.enumerated().filter { $0.offset % 2 == 1 }.map(\.element), to: dir + "/odd.jsonl")
        for half in ["even", "odd"] {
            XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", url, dir + "/\(half).jsonl"]).status, 0)
        }
        let pg = try PGConnection(url: url)
        XCTAssertEqual(try pg.query("""
            SELECT count(*) FROM event_blocks a JOIN event_blocks b ON a.session = b.session
            AND a.first_seq < b.first_seq AND b.first_seq < a.last_seq
            """).int(0, 0), 2, "blocks that interleave: 0-510 with 1-511, 512-698 with 513-699")
        let rests = try pg.query("""
            SELECT count(*) FILTER (WHERE r ? 'ev'), count(*) FILTER (WHERE r ? 'class'), count(*) FILTER (WHERE r ? 'attrs')
            FROM event_blocks k CROSS JOIN LATERAL unnest(k.rest) AS r JOIN sessions s ON s.id = k.session WHERE s.sid = 'S-interleaved'
            """)
        XCTAssertEqual([rests.int(0, 0), rests.int(0, 1), rests.int(0, 2)], [233, 233, 234], "ev, class and attrs kept in rest")
        let read = PGReadConnection(pg: pg, snapshot: false)
        let portable = try PortableEventReader(db: read)
        let sessions = try pg.query("SELECT id, sid FROM sessions ORDER BY id")
        XCTAssertGreaterThan(sessions.rowCount, 3)
        for (maxCached, pageRows) in [(3, 5), (200_000, 4096)] {
            let reader = PGEventReader(pg: pg, maxCached: maxCached, pageRows: pageRows)
            try read.transaction {
                for r in 0..<sessions.rowCount {
                    let id = sessions.int(r, 0)!, sid = sessions.text(r, 1)!
                    var expected: [TraceEvent] = [], got: [TraceEvent] = []
                    try portable.forEachEvent(session: id, sid: sid) { expected.append($0) }
                    try reader.forEachEvent(session: id, sid: sid) { got.append($0) }
                    XCTAssertGreaterThan(expected.count, 10)
                    XCTAssertEqual(got, expected, "session \(sid), cache \(maxCached), pages of \(pageRows)")
                    // Read again, its texts cached: one page, declared and fetched in one round
                    // trip, the cursor closed with a later statement.
                    guard pageRows == 4096 else { continue }
                    let before = pg.roundTrips
                    var again = 0
                    try reader.forEachEvent(session: id, sid: sid) { _ in again += 1 }
                    XCTAssertEqual(again, expected.count)
                    XCTAssertEqual(pg.roundTrips - before, 1, "session \(sid)")
                }
            }
        }
    }

    /// Several ingesters starting on an empty database at once: the schema is made once,
    /// under its lock, and every one of them loads.
    func testIngestersStartingTogetherOnAnEmptyDatabaseAllSucceed() throws {
        let input = try corpus("c", seed: 5, sessions: 4)
        let files = try FileManager.default.contentsOfDirectory(atPath: input).filter { $0.hasSuffix(".gz") }.sorted().map { input + "/" + $0 }
        let url = try freshDatabase()
        let processes = try (0..<5).map { i -> (Process, Pipe) in
            let p = Process()
            p.executableURL = URL(fileURLWithPath: TestSupport.binary)
            p.arguments = ["ingest", "-q", "--db", url, files[i % files.count]]
            let err = Pipe()
            p.standardError = err
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            return (p, err)
        }
        for (p, err) in processes {
            p.waitUntilExit()
            XCTAssertEqual(p.terminationStatus, 0, String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
        }
        let version = try PGConnection(url: url).query("SELECT count(*) FROM meta WHERE key = 'schema_version'").int(0, 0)
        XCTAssertEqual(version, 1)
    }

    /// A load killed midway leaves its row `loading` and its lock gone with its connection:
    /// the next ingest resumes it, and the content is that of an uninterrupted load.
    func testAKilledLoadIsResumedByTheNextIngest() throws {
        let input = try corpus("c", seed: 9, sessions: 30)
        let url = try freshDatabase()
        let reference = try freshDatabase("reference")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", reference, input]).status, 65)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: TestSupport.binary)
        p.arguments = ["ingest", "-q", "--db", url, input]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        // Killed once a file is loading.
        let watcher = try PGConnection(url: PGConnectionTests.url!)
        let deadline = Date().addingTimeInterval(20)
        let schema = url.components(separatedBy: "search_path%3D").last!
        while Date() < deadline {
            let n = try? watcher.query("SELECT count(*) FROM \(schema).files WHERE status = 'loading'").int(0, 0)
            if (n ?? 0) > 0 { break }
            usleep(20_000)
        }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        let rerun = TestSupport.run(["ingest", "-q", "--db", url, input])
        XCTAssertEqual(rerun.status, 65, rerun.err)
        XCTAssertEqual(try TestSupport.logicalDump(location: url), try TestSupport.logicalDump(location: reference))
    }

    /// The schema file carries a comment for every table, view and column, and names every
    /// column the SQLite schema has (the two stay in step); the code's DDL is the file.
    func testSchemaFileIsTheCodesAndCommentsEverything() throws {
        let file = try String(contentsOf: TestSupport.root.appendingPathComponent("Schemas/lctrace-schema.postgresql.sql"), encoding: .utf8)
        XCTAssertEqual(PGSchema.ddl.trimmingCharacters(in: .whitespacesAndNewlines), file.trimmingCharacters(in: .whitespacesAndNewlines),
                       "Schemas/lctrace-schema.postgresql.sql and PGSchemaDDL.swift differ: run scripts/sync-schema")
        let url = try freshDatabase()
        _ = try Storage.openForWriting(url)
        let pg = try PGConnection(url: url)
        let uncommented = try pg.query("""
            SELECT c.relname || coalesce('.' || a.attname, '') FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND c.relkind = 'r'
            WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'v')
              AND (a.attname IS NULL AND obj_description(c.oid, 'pg_class') IS NULL
                   OR a.attname IS NOT NULL AND col_description(c.oid, a.attnum) IS NULL)
            """)
        XCTAssertEqual((0..<uncommented.rowCount).map { uncommented.text($0, 0) ?? "" }, [], "every table, view and column has a COMMENT")
        // Every column of every SQLite table and view is there, with the same name. Both pack
        // the tables the shared queries read (`SharedTable`), each its own way; their `*_rows`
        // views give them in the plain layout, under the same names.
        let sqlite = try SQLiteDatabase(path: ":memory:")
        try sqlite.execute(SQLiteSchema.ddl)
        let objects = try sqlite.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")
        let packed = [SharedTable.events, .instances, .appearances, .containment]
        XCTAssertEqual(packed.map { sqlite.relation($0) }, packed.map { PGReadConnection(pg: pg, snapshot: false).relation($0) })
        var missing: [String] = []
        while try objects.step() {
            if packed.map(\.rawValue).contains(objects.text(0)!) { continue }
            let name = objects.text(0)!
            let columns = try sqlite.prepare("SELECT name FROM pragma_table_info(?)")
            try columns.bind([.text(objects.text(0)!)])
            let pgColumns = try pg.query("""
                SELECT a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = current_schema() AND c.relname = $1 AND a.attnum > 0
                """, [name])
            let have = Set((0..<pgColumns.rowCount).compactMap { pgColumns.text($0, 0) })
            while try columns.step() {
                let column = "\(name).\(columns.text(0)!)"
                // SQLite's packing: its controller ids in `events` are relative to this.
                if column == "sessions.vc_base" { continue }
                if !have.contains(columns.text(0)!) { missing.append(column) }
            }
        }
        XCTAssertEqual(missing, [], "PostgreSQL's schema lacks columns SQLite's has")
    }

    /// Advisory locks are database-wide but file ids are per schema: an ingest loading file
    /// row 2 of one schema must not stop (it once crashed: "another ingest holds the lock of
    /// new file row 2") an ingest making file row 2 of another schema of the same database.
    func testIngestsIntoTwoSchemasOfOneDatabaseDoNotShareFileLocks() throws {
        let other = try freshDatabase("other")
        let pg = try PGConnection(url: other)
        try PGSchema.prepare(pg, name: "other", writing: true, create: true)
        let sink = try PGIngestSink(pg: pg, url: other)
        try pg.execute("SELECT setval(pg_get_serial_sequence('files', 'id'), 1)")
        guard case .load(let id) = try sink.planFile(path: "/elsewhere.jsonl", size: 10, hash: nil, deferring: false) else {
            return XCTFail("the other schema's file was not planned for loading")
        }
        XCTAssertEqual(id, 2)
        let url = try freshDatabase()
        let r = TestSupport.run(["ingest", "-q", "--db", url, TestSupport.root.appendingPathComponent("SampleTraces").path])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(try PGConnection(url: url).query("SELECT count(*) FROM files WHERE status = 'loading'").int(0, 0), 0)
        sink.releaseLoads()
    }

    /// A schema changed behind lctrace's back is refused, naming what differs; a database
    /// that is not lctrace's is refused rather than written into.
    func testASchemaThatIsNotLctracesIsRefused() throws {
        let url = try freshDatabase()
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", url, TestSupport.root.appendingPathComponent("SampleTraces").path]).status, 0)
        let pg = try PGConnection(url: url)
        try pg.execute("CREATE FUNCTION lct_drop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$")
        try pg.execute("CREATE TRIGGER drop_events BEFORE INSERT ON event_blocks FOR EACH ROW EXECUTE FUNCTION lct_drop()")
        let r = TestSupport.run(["report", "--db", url])
        XCTAssertEqual(r.status, 74)
        XCTAssertTrue(r.err.contains("trigger drop_events"), r.err)
        // The objects checked hold every index the server's own pg_indexes lists, as it
        // spells them (read from pg_class, they cost the server less to plan).
        try pg.execute("DROP TRIGGER drop_events ON event_blocks")
        try pg.execute("CREATE INDEX mine ON findings (rule)")
        let listed = try pg.query("SELECT 'index ' || indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = current_schema()")
        let indexes = Set((0..<listed.rowCount).compactMap { listed.text($0, 0) })
        XCTAssertGreaterThan(indexes.count, 5)
        XCTAssertEqual(Set(try PGSchema.objects(pg).filter { $0.hasPrefix("index ") }), indexes)
        let mine = TestSupport.run(["report", "--db", url])
        XCTAssertTrue(mine.err.contains("not lctrace's: index mine"), mine.err)
        let other = try freshDatabase("other")
        try PGConnection(url: other).execute("CREATE TABLE events (x int)")
        let w = TestSupport.run(["ingest", "-q", "--db", other, TestSupport.root.appendingPathComponent("SampleTraces").path])
        XCTAssertEqual(w.status, 74)
        XCTAssertTrue(w.err.contains("no lctrace schema"), w.err)
        let empty = try freshDatabase("empty")
        let missing = TestSupport.run(["report", "--db", empty])
        XCTAssertEqual(missing.status, 74)
        XCTAssertTrue(missing.err.contains("no lctrace database"), missing.err)
        // The command it suggests pastes into any shell: the URL quoted, the paths asked for.
        XCTAssertTrue(missing.err.contains("run `lctrace ingest --db '\(empty)' PATH...` first"), missing.err)
    }

    /// A schema named first in the URL's search path and missing (a typo, or not created yet)
    /// is refused by name, by writing and reading commands alike: nothing goes to, or is read
    /// from, the next schema of the path, which the server would use instead.
    func testASchemaMissingFromTheSearchPathIsRefusedByName() throws {
        let next = try freshDatabase("next")
        let nextSchema = next.components(separatedBy: "%3D").last!
        let typo = "t_typo_" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let base = PGConnectionTests.url!
        let url = base + (base.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(typo),\(nextSchema)"
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        let ingest = TestSupport.run(["ingest", "-q", "--db", url, samples])
        XCTAssertEqual(ingest.status, 74, ingest.err)
        XCTAssertTrue(ingest.err.contains("schema \(typo) (first in the search path of"), ingest.err)
        XCTAssertTrue(ingest.err.contains("PostgreSQL would use schema \(nextSchema) instead"), ingest.err)
        XCTAssertTrue(ingest.err.contains("CREATE SCHEMA \"\(typo)\""), ingest.err)
        let tables = try admin.query("SELECT count(*) FROM pg_tables WHERE schemaname = $1", [nextSchema])
        XCTAssertEqual(tables.int(0, 0), 0, "the ingest made tables in the next schema")
        // Loaded into the next schema by its own name, it is still not read through the typo.
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", next, samples]).status, 0)
        let report = TestSupport.run(["report", "--db", url])
        XCTAssertEqual(report.status, 74, report.err)
        XCTAssertTrue(report.err.contains("schema \(typo) (first"), report.err)
        XCTAssertEqual(report.out, "")
        // Alone in the path: no schema for the server to use at all.
        let alone = base + (base.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(typo)"
        let none = TestSupport.run(["ingest", "-q", "--db", alone, samples])
        XCTAssertEqual(none.status, 74, none.err)
        XCTAssertTrue(none.err.contains("schema \(typo) (first in the search path of") && !none.err.contains("would use"), none.err)
        // Once made, the same URL works.
        try admin.execute("CREATE SCHEMA \(typo)")
        schemas.append(typo)
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", url, samples]).status, 0)
        XCTAssertEqual(try admin.query("SELECT count(*) FROM \(typo).sessions").int(0, 0),
                       try admin.query("SELECT count(*) FROM \(nextSchema).sessions").int(0, 0))
    }
}

/// How the URL's search path is read (no server needed).
final class PGSearchPathTests: XCTestCase {
    /// A schema asked for the way a newcomer first types it (libpq refuses the URL before
    /// connecting) gets the URL form that works, not advice about networks.
    func testASchemaAskedForInAParameterLibpqLacksIsShownTheOptionsForm() {
        for url in ["postgresql://qa@127.0.0.1:1/lc?search_path=x", "postgresql://qa@127.0.0.1:1/lc?options=-csearch_path=x"] {
            let r = TestSupport.run(["sessions", "--db", url])
            XCTAssertEqual(r.status, 74, r.err)
            XCTAssertTrue(r.err.contains("Hint: a URL takes libpq's parameters only") && r.err.contains("?options=-csearch_path%3DNAME"), r.err)
        }
        let refused = TestSupport.run(["sessions", "--db", "postgresql://qa@127.0.0.1:1/lc"])
        XCTAssertTrue(refused.err.contains("Hint: check the URL, that the server runs"), refused.err)
    }

    /// The search path as the server reads it: names folded to lower case unless quoted, the
    /// default path and `pg_temp` first left alone.
    func testTheSearchPathIsReadAsTheServerReadsIt() {
        XCTAssertEqual(PGSchema.searchPathEntries(#""$user", public"#), ["$user", "public"])
        XCTAssertEqual(PGSchema.searchPathEntries(" Campaign_27 ,public"), ["campaign_27", "public"])
        XCTAssertEqual(PGSchema.searchPathEntries(#""My ""Odd"" Schema",x"#), [#"My "Odd" Schema"#, "x"])
        XCTAssertEqual(PGSchema.searchPathEntries(#""""#), [""])
        XCTAssertEqual(PGSchema.searchPathEntries(""), [])
        // White space as the server's scanner has it, before a quote too; A–Z folded only.
        XCTAssertEqual(PGSchema.searchPathEntries(" \"Campaign\",\n\t\"B\" , c"), ["Campaign", "B", "c"])
        XCTAssertEqual(PGSchema.searchPathEntries("ÜBung"), ["Übung"])
        // Names cut to 63 bytes, at a character's boundary.
        XCTAssertEqual(PGSchema.searchPathEntries(String(repeating: "a", count: 66)), [String(repeating: "a", count: 63)])
        XCTAssertEqual(PGSchema.searchPathEntries(String(repeating: "a", count: 62) + "é"), [String(repeating: "a", count: 62)])
        XCTAssertNil(PGSchema.searchPathProblem(#""$user", public"#, current: "public", name: "db"))
        XCTAssertNil(PGSchema.searchPathProblem("pg_temp, a", current: "a", name: "db"))
        XCTAssertNil(PGSchema.searchPathProblem("Campaign, public", current: "campaign", name: "db"))
        XCTAssertNil(PGSchema.searchPathProblem("", current: nil, name: "db"))
        XCTAssertNil(PGSchema.searchPathProblem(String(repeating: "a", count: 66), current: String(repeating: "a", count: 63), name: "db"))
        XCTAssertEqual(PGSchema.searchPathProblem(#""Campaign", public"#, current: "public", name: "db"),
                       #"schema Campaign (first in the search path of db) does not exist, or this login may not use it; PostgreSQL would use schema public instead: create it (CREATE SCHEMA "Campaign") or let the login use it (GRANT USAGE, CREATE ON SCHEMA "Campaign" TO …), or name another with ?options=-csearch_path%3DNAME"#)
        // Quoted always: a reserved word is then a name.
        XCTAssertEqual(PGSchema.identifier("user"), #""user""#)
        XCTAssertEqual(PGSchema.identifier(#"a"b"#), #""a""b""#)
    }
}
