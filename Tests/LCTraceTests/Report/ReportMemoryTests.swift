import XCTest
@testable import LCTraceModel
@testable import LCTraceStore
@testable import LCTraceSQLite
@testable import LCTraceReport
@testable import LCTrace
import LCTraceGen
import CHeapProbe

/// A report holds only what it shows, whatever the number of findings (issue 25 item 13: every
/// format took 1.0–1.3 GB on 400 k tiny sessions): the findings stream from the database
/// into a tally that keeps a bounded number of examples, and json and csv write each one as it
/// comes. The documents are the same bytes as those made from every finding held.
final class ReportMemoryTests: TemporaryDirectoryTestCase {
    /// A database of many small sessions, every bug planted in each: thousands of findings.
    func manyFindings() throws -> Storage {
        var options = CorpusOptions.make(seed: 7, sessions: 120, sessionsPerFile: 40, scenarios: 2)
        options.bugRate = 1
        options.app = "com.example.shop"
        let corpus = dir + "/corpus"
        _ = try CorpusWriter.write(plans: CorpusWriter.randomPlans(options), to: corpus, options: options)
        let r = TestSupport.run(["ingest", "--db", db, corpus])
        XCTAssertEqual(r.status, 0, r.err)
        return Storage(try SQLiteDatabase(path: db, mode: .readOnly))
    }

    /// The view of the findings streamed as `report` streams them, and the bytes json writes.
    func streamed(_ storage: Storage, options: ReportOptions) throws -> (ReportView, json: String, csv: String) {
        var tally: ReportTally?
        var json: [UInt8] = [], csv: [UInt8] = []
        let jsonWriter = JSONReporter.writer(options) { json += $0 }
        let csvWriter = CSVReporter.writer(options) { csv += $0 }
        let data = try ReportCollector.collect(ReportRequest(), db: storage, begin: { tally = ReportTally(sessions: $0, options: options) }) { f, s in
            try jsonWriter.add(f, state: tally!.state(f))
            try csvWriter.add(f, state: tally!.state(f))
            tally!.add(f, session: s)
        }
        tally!.finish()
        let view = ReportView(data: data, options: options, tally: tally!)
        try jsonWriter.finish(view)
        try csvWriter.finish(view)
        return (view, String(decoding: json, as: UTF8.self), String(decoding: csv, as: UTF8.self))
    }

    func testAStreamedReportHoldsItsExamplesOnlyAndWritesTheSameBytes() throws {
        let storage = try manyFindings()
        var options = ReportOptions()
        options.examples = 2
        options.failOn = nil
        let (view, json, csv) = try streamed(storage, options: options)
        XCTAssertGreaterThan(view.findings.count, 2_000, "many findings")
        // Held: each identity's first findings, each group's first and examples, each rule's
        // examples: a bound in the identities and groups, not in the findings.
        let groups = view.sections.flatMap(\.rules).flatMap(\.groups).count
        let rules = view.sections.flatMap(\.rules).count
        let bound = view.identities.count * SourcePlacements.findingsSearched + groups * (GroupTally.firstKept + options.examples)
            + rules * options.examples
        XCTAssertLessThanOrEqual(view.findings.held, bound)
        XCTAssertLessThan(view.findings.held, view.findings.count / 3, "far fewer held than found")

        // The same documents as from every finding held.
        let whole = ReportView(data: try ReportCollector.collect(ReportRequest(), db: storage), options: options)
        XCTAssertEqual(whole.findings.held, whole.findings.count)
        XCTAssertEqual(json, JSONReporter.render(whole))
        XCTAssertEqual(csv, CSVReporter.render(whole))
        for reporter in [TextReporter.self, SARIFReporter.self, JUnitReporter.self, HTMLReporter.self] as [any Reporter.Type] {
            XCTAssertEqual(reporter.render(view), reporter.render(whole), reporter.id)
        }
    }

    /// What a report holds per session, whatever its number of findings: the sessions as
    /// compact columns (`ReportSessions`) and the gaps at 4 bytes each, not a struct of ten
    /// Strings per session and 8 bytes per gap, plus 16 more per gap for the HTML report's
    /// statistics by build (issue 25 item 13: 170 MB of sessions and 70 MB of gaps on 400 k
    /// tiny sessions). Measured on the heap (`lctrace_heap_in_use`), not in time.
    func testAReportHoldsAFewBytesPerSessionAndPerGap() throws {
        let sessions = 2_000
        var options = CorpusOptions.make(seed: 11, sessions: sessions, sessionsPerFile: 500, scenarios: 1)
        options.bugRate = 0.05
        options.lookAlikeRate = 0.05
        // One app and build, as a campaign's sessions mostly are: what is shared is held once.
        options.app = "com.example.shop"
        options.appVersion = "5.2.1"
        options.build = "812"
        let corpus = dir + "/corpus"
        _ = try CorpusWriter.write(plans: CorpusWriter.randomPlans(options), to: corpus, options: options)
        let r = TestSupport.run(["ingest", "--db", db, corpus])
        XCTAssertEqual(r.status, 0, r.err)
        let storage = Storage(try SQLiteDatabase(path: db, mode: .readOnly))
        var request = ReportRequest()
        request.gapsBySession = true
        // Twice first, so that SQLite's page cache is as full before as after.
        for _ in 0..<2 { _ = try ReportCollector.collect(request, db: storage) { _, _ in } }
        let heapBefore = lctrace_heap_in_use()
        let data = try ReportCollector.collect(request, db: storage) { _, _ in }
        let held = Int(lctrace_heap_in_use()) - Int(heapBefore)
        try XCTSkipIf(heapBefore == 0, "no heap statistics on this platform")
        XCTAssertEqual(data.sessions.count, sessions)
        let gaps = data.gapSeries.values.reduce(0) { $0 + $1.count }
        XCTAssertGreaterThan(gaps, sessions, "gaps in most sessions")
        // Before: 1.66 MB here (about 450 bytes a session and 24 a gap); now 0.45 MB.
        XCTAssertLessThan(held, sessions * 250 + gaps * 8 + 150_000, "\(held) bytes held for \(sessions) sessions and \(gaps) gaps")

        // The few sessions an example shows are still there, whole.
        var reportOptions = ReportOptions()
        reportOptions.failOn = nil
        let view = ReportView(data: try ReportCollector.collect(ReportRequest(), db: storage), options: reportOptions)
        let sid = try XCTUnwrap(view.findings[view.sections[0].rules[0].examples[0]].session)
        XCTAssertEqual(view.session(sid)?.sid, sid)
        let stored = try XCTUnwrap(try storage.model.sessions(SessionFilter(session: sid)).first)
        XCTAssertEqual(view.session(sid)?.wall, stored.wall)
        XCTAssertEqual(view.session(sid)?.device, stored.device)
        XCTAssertEqual(view.session(sid)?.lastT, stored.lastT)
    }

    /// A rule's or a group's examples: the first `limit` in example order, whatever their number
    /// and the order they come in, holding at most about twice that many.
    func testTheExamplesKeptAreTheFirstInExampleOrder() {
        var top = TopExamples(limit: 3)
        var keys: [ExampleKey] = []
        var rng = SplitMix64(seed: 3)
        var peak = 0
        for i in 0..<5_000 {
            let key = ExampleKey(fresh: Int(rng.next() % 2), worst: Double(rng.next() % 100), index: i)
            keys.append(key)
            top.offer(key, Finding(rule: "LC301", name: "", severity: .error, session: nil, vc: nil, since: nil, cls: nil, t: nil,
                                   message: "", evidence: [], confidence: "high", file: nil, detail: [:], identityKey: "",
                                   identity: "", app: nil, build: nil, device: nil))
            peak = max(peak, top.items.count)
        }
        top.prune()
        XCTAssertEqual(top.items.map(\.key.index), keys.sorted().prefix(3).map(\.index))
        XCTAssertLessThanOrEqual(peak, 2 * 3 + 16)
    }
}
