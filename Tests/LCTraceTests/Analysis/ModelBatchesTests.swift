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

/// A long session's model is judged and stored in batches of final facts
/// (`ModelBuilder.compact`) so that memory follows what is live: the database must come out
/// exactly as when each model is built whole. (`TraceBuilder.model` checks the same on every
/// rule scenario, without a database.)
final class ModelBatchesTests: TemporaryDirectoryTestCase {
    /// Generated sessions with every bug and look-alike planted, the sample traces, and one
    /// session with holes in seq (its findings must all be low confidence).
    func corpus() throws -> [String] {
        var o = CorpusOptions.make(seed: 77, sessions: 6, sessionsPerFile: 2, scenarios: 60)
        o.bugRate = 1
        o.lookAlikeRate = 1
        o.gzip = false
        let generated = dir + "/generated"
        try CorpusWriter.write(plans: CorpusWriter.randomPlans(o), to: generated, options: o)
        var files = try FileManager.default.contentsOfDirectory(atPath: generated).filter { $0.hasSuffix(".jsonl") }
            .sorted().map { generated + "/" + $0 }
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        files += try FileManager.default.contentsOfDirectory(atPath: samples).filter { $0.contains(".jsonl") }
            .sorted().map { samples + "/" + $0 }
        var b = TraceBuilder(sid: "lossy")
        b.vc(2, "init", "0xp", #""cls":"ProfileVC""#)
        b.vc(3, "viewWillAppear", "0xp", #""animated":true"#)
        b.vc(4, "viewIsAppearing", "0xp")
        b.vc(3000, "viewDidAppear", "0xp", #""animated":true"#)
        b.seq += 5  // lost events
        b.vc(4000, "viewWillDisappear", "0xp", #""animated":true,"isBeingDismissed":true"#)
        b.vc(4300, "viewDidDisappear", "0xp", #""animated":true,"isBeingDismissed":true"#)
        b.vc(30_000, "mark", "0xp", #""name":"end""#)
        TestSupport.writeLines(b.lines, to: dir + "/lossy.jsonl")
        TestSupport.writeLines(reusedIDs().lines, to: dir + "/reused.jsonl")
        return files + [dir + "/lossy.jsonl", dir + "/reused.jsonl"]
    }

    /// Findings that name instances retired long before (a container, an ancestor, a host,
    /// the owner of events after its deinit), whose ids were then initialised again.
    func reusedIDs() -> TraceBuilder {
        var b = TraceBuilder(sid: "reused")
        b.vc(2, "init", "0xm", #""cls":"UINavigationController""#)
        b.vc(2, "init", "0xr", #""cls":"LoginVC""#)
        b.vc(2, "addChild", "0xr", #""parent":"0xm""#)  // no didMove: LC102 names 0xm
        b.vc(3, "viewWillAppear", "0xm", #""animated":true"#)
        b.vc(4, "viewIsAppearing", "0xm", #""animated":true"#)
        b.vc(400, "viewDidAppear", "0xm", #""animated":true"#)
        b.vc(5000, "viewWillDisappear", "0xm", #""animated":true,"isBeingDismissed":true"#)
        b.vc(5300, "viewDidDisappear", "0xm", #""animated":true,"isBeingDismissed":true"#)
        b.vc(5330, "deinit", "0xm")  // 0xr leaks: LC301 names its ancestor 0xm
        for i in 0..<20 { b.vc(5340 + Double(i), "init", "0x\(100 + i)", #""cls":"CellVC""#) }
        for i in 0..<20 { b.vc(5360 + Double(i), "deinit", "0x\(100 + i)") }
        b.vc(5400, "init", "0xq", #""cls":"BannerVC""#)
        b.vc(5401, "viewAttached", "0xq", #""host":"0xm""#)  // LC101 names the host 0xm
        b.vc(5402, "viewWillAppear", "0xm")  // after its deinit: LC205, counted
        b.vc(5403, "viewDidAppear", "0xm")
        b.vc(5404, "viewWillDisappear", "0x105")  // after its deinit, read back from its row
        b.vc(6000, "init", "0xm", #""cls":"SettingsVC""#)  // the id is reused
        b.vc(6001, "deinit", "0xm")
        b.add(20_000, "mark", #""name":"end""#)
        return b
    }

    func database(_ path: String) throws -> SQLiteDatabase { try SQLiteDatabase(path: path, mode: .readOnly) }

    func analyze(_ path: String, _ files: [String], factsPerBatch: Int, tombstones: Int = 16_384,
                 settings: RuleSettings) throws {
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", path] + files).status, 0)
        let database = try SQLiteSchema.openForWriting(path: path)
        let analyzer = try Analyzer(db: Storage(database), settings: settings)
        analyzer.factsPerBatch = factsPerBatch
        analyzer.tombstonesInMemory = tombstones
        let summary = try analyzer.analyze()
        XCTAssertEqual(summary.sessions, 17)
    }

    func testBatchesStoreTheSameModelAndFindings() throws {
        let files = try corpus()
        var settings = RuleSettings()
        settings.maxLive = ["DetailVC": 1, "ImageCellController": 2]  // LC303 counts across batches
        let whole = dir + "/whole.db", batched = dir + "/batched.db"
        try analyze(whole, files, factsPerBatch: Int.max, settings: settings)
        // A batch after every event; ended instances read back from their rows every time.
        try analyze(batched, files, factsPerBatch: 0, tombstones: 0, settings: settings)
        let expected = try TestSupport.logicalDump(whole)
        XCTAssertEqual(try TestSupport.logicalDump(batched), expected)
        for rule in ["LC101", "LC104", "LC205", "LC301", "LC303", "LC402"] {
            XCTAssertTrue(expected.contains("\n\(rule)|"), "the corpus has no \(rule)")
        }
        XCTAssertTrue(expected.contains("|low|"), "the lossy session's findings are low confidence")
        for text in ["its container UINavigationController was released", "added to UINavigationController (0xm)",
                     "sits in UINavigationController (0xm)", "UINavigationController got viewWillAppear after its deinit (and 1 more events)",
                     "CellVC got viewWillDisappear after its deinit"] {
            XCTAssertTrue(expected.contains(text), text)
        }

        // A report with other tuning rebuilds the findings, in batches, reading ended instances
        // back from the stored model: the same findings and gaps as built whole.
        var request = ReportRequest()
        request.settings = settings
        request.settings.leakGrace = 100_000_000
        request.settings.gapPlain = 10_000_000
        request.settings.gapAnimated = 20_000_000
        let oneModel = try ReportCollector.collect(request, db: Storage(try SQLiteDatabase(path: batched, mode: .readOnly)))
        request.factsPerBatch = 0
        request.tombstonesInMemory = 0
        let inBatches = try ReportCollector.collect(request, db: Storage(try SQLiteDatabase(path: batched, mode: .readOnly)))
        XCTAssertTrue(oneModel.recomputed)
        XCTAssertEqual(inBatches.findings, oneModel.findings)
        XCTAssertEqual(inBatches.gaps.mapValues { $0.sorted() }, oneModel.gaps.mapValues { $0.sorted() })
        XCTAssertFalse(oneModel.gaps.isEmpty)
        XCTAssertNotEqual(oneModel.findings.filter { $0.rule == "LC401" }.count,
                          try database(batched).scalarInt("SELECT count(*) FROM findings WHERE rule = 'LC401'").map(Int.init),
                          "the other tuning changes the findings")

        // Batches did happen, and every instance is in exactly one of them or in the model left.
        let database = try SQLiteDatabase(path: batched, mode: .readOnly)
        let reader = try SQLiteSessionSource(db: database)
        let id = try database.scalarInt("SELECT id FROM sessions ORDER BY events DESC LIMIT 1")!
        let meta = try DatabaseReader(db: database).sessionMetadata(id)
        var batches = 0, retired = 0
        var analysis = SessionAnalysis(settings: settings)
        analysis.factsPerBatch = 20
        let model = try analysis.build(session: id, sid: meta.sid, metadata: meta, source: reader,
                                       batches: { batches += 1; retired += $0.instances.count })
        XCTAssertGreaterThan(batches, 3)
        XCTAssertEqual(retired + model.instances.count, try database.scalarInt("SELECT count(*) FROM instances WHERE session = \(id)").map(Int.init))
        XCTAssertFalse(model.instances.contains { $0.retired }, "retired instances left the model")
    }

    /// The analysis while loading hands a long session to the writer in batches; past its
    /// limit of events it leaves the session to the analysis after loading. Either way the
    /// database is the one that loading first and analyzing after gives.
    func testTheBackgroundAnalysisStoresLongSessionsInBatches() throws {
        var o = CorpusOptions.make(seed: 78, sessions: 3, sessionsPerFile: 1, scenarios: 40)
        o.gzip = false
        let generated = dir + "/generated"
        try CorpusWriter.write(plans: CorpusWriter.randomPlans(o), to: generated, options: o)
        let files = try FileManager.default.contentsOfDirectory(atPath: generated).filter { $0.hasSuffix(".jsonl") }
            .sorted().map { generated + "/" + $0 }
        let apart = dir + "/apart.db"
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", apart] + files).status, 0)
        XCTAssertEqual(TestSupport.run(["analyze", "--db", apart]).status, 0)
        let expected = try TestSupport.logicalDump(apart)

        for (name, maxEvents, storedByTheWorker) in [("batched.db", Int64(1_000_000), 3), ("left.db", Int64(100), 0)] {
            let path = dir + "/" + name
            XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", path] + files).status, 0)
            let database = try SQLiteSchema.openForWriting(path: path)
            let store = try IngestStore(db: database)
            let background = try BackgroundAnalyzer(host: store, settings: RuleSettings())
            background.factsPerBatch = 10
            background.maxEventsPerSession = maxEvents
            try store.begin()  // a stamp is taken after a batch of the store
            try store.commit()
            background.enqueue(try DatabaseReader(db: database).sessions().map(\.id), from: store)
            // The worker alone builds the models; the writer stores their parts as they come.
            repeat {
                try store.begin()
                try background.storeFinished(store)
                try store.commit()
                Thread.sleep(forTimeInterval: 0.002)
            } while !background.isIdle
            try store.begin()
            try background.storeFinished(store)
            try store.commit()
            XCTAssertEqual(background.sessions, storedByTheWorker, name)
            XCTAssertEqual(try database.scalarInt("SELECT count(*) FROM sessions WHERE dirty = 1"), Int64(3 - storedByTheWorker), name)
            try background.finish(store)
            _ = try Analyzer(db: Storage(database), settings: RuleSettings()).analyze()
            XCTAssertEqual(try TestSupport.logicalDump(path), expected, name)
        }
    }

    /// A session analyzed in one run and continued in the next: the batches of its new model
    /// replace the stored one (the first batch deletes it).
    func testBatchesReplaceAModelStoredByAnEarlierRun() throws {
        var o = CorpusOptions.make(seed: 79, sessions: 1, sessionsPerFile: 1, scenarios: 40)
        o.gzip = false
        let generated = dir + "/generated"
        try CorpusWriter.write(plans: CorpusWriter.randomPlans(o), to: generated, options: o)
        let file = try FileManager.default.contentsOfDirectory(atPath: generated).first { $0.hasSuffix(".jsonl") }!
        let lines = try String(contentsOfFile: generated + "/" + file, encoding: .utf8).split(separator: "\n").map(String.init)
        let halves = [dir + "/part1.jsonl", dir + "/part2.jsonl"]
        TestSupport.writeLines(Array(lines[..<(lines.count / 2)]), to: halves[0])
        TestSupport.writeLines(Array(lines[(lines.count / 2)...]), to: halves[1])
        let apart = dir + "/apart.db"
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", apart] + halves).status, 0)

        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, halves[0]]).status, 0)
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", db, halves[1]]).status, 0)
        // The worker alone builds the whole session (the writer only stores its parts).
        let database = try SQLiteSchema.openForWriting(path: db)
        let store = try IngestStore(db: database)
        let background = try BackgroundAnalyzer(host: store, settings: RuleSettings())
        background.factsPerBatch = 10
        try store.begin()  // a stamp is taken after a batch of the store
        try store.commit()
        background.enqueue([try database.scalarInt("SELECT id FROM sessions")!], from: store)
        for _ in 0..<1_000 where background.sessions == 0 {
            try store.begin()
            try background.storeFinished(store)
            try store.commit()
            Thread.sleep(forTimeInterval: 0.005)
        }
        XCTAssertEqual(background.sessions, 1)
        try background.finish(store)
        XCTAssertEqual(try TestSupport.logicalDump(db), try TestSupport.logicalDump(apart))
    }

    /// A long session reports how many of its events were read while its model is built.
    func testProgressInsideALongSession() throws {
        var b = TraceBuilder(sid: "long")
        for i in 0..<250 { b.add(Double(i), "mark", #""name":"tick""#) }
        TestSupport.writeLines(b.lines, to: dir + "/long.jsonl")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", db, dir + "/long.jsonl"]).status, 0)
        let analyzer = try Analyzer(db: Storage.openForWriting(db), settings: RuleSettings())
        analyzer.progressEvery = 100
        var seen: [AnalysisProgress] = []
        _ = try analyzer.analyze { seen.append($0) }
        XCTAssertEqual(seen.map(\.eventsIntoNext), [100, 200, 0])
        XCTAssertEqual(seen.map(\.sessionsDone), [0, 0, 1])
        XCTAssertEqual(seen.last?.sessions, 1)
    }
}

