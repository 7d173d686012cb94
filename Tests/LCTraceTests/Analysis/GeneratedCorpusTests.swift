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

/// A random corpus from the generator, with every bug and look-alike it can plant (rules 1.1
/// scenarios included: presentation chains, moves between containers, over-current-context,
/// interactive dismissals, app extensions, Codable recorders; rules 1.2 ones: a second iPad
/// window in the background, search controllers, window root swaps, chains presented by
/// children, a push across lost events, swipes known from the `interactive` key, a push under
/// a dragged sheet), rotated and split into gzip members: `lctrace report` must find exactly
/// the planted findings (the generator's answer key, matched on rule, session, vc, since) and
/// flag none of the look-alikes.
final class GeneratedCorpusTests: TemporaryDirectoryTestCase {

    struct Key: Hashable, Comparable, CustomStringConvertible {
        var rule: String, session: String, vc: String?, since: Int64?
        static func < (a: Key, b: Key) -> Bool { a.description < b.description }
        var description: String { "\(rule) \(session.prefix(8)) \(vc ?? "-")#\(since.map(String.init) ?? "-")" }
    }

    func testReportFindsExactlyWhatTheGeneratorPlanted() throws {
        var options = CorpusOptions.make(seed: 11, sessions: 40, sessionsPerFile: 3, scenarios: 30,
                                         rotateEvery: 400, linesPerMember: 150)
        options.bugRate = 0.4
        options.lookAlikeRate = 0.6
        let plans = CorpusWriter.randomPlans(options)
        let planted = Set(plans.flatMap(\.plants))
        XCTAssertTrue(planted.isSuperset(of: [.leakInChain, .chainDismissal, .containerMove, .overCurrentContext,
                                              .interactiveDismiss, .appExtension]),
                      "the seed plants every 1.1 scenario: \(Set(Plant.allCases).subtracting(planted))")
        XCTAssertTrue(planted.isSuperset(of: Self.plants12),
                      "the seed plants every 1.2 scenario: \(Set(Plant.allCases).subtracting(planted))")
        XCTAssertTrue(plans.contains { $0.omitsNil }, "some sessions come from a Codable recorder")
        let labels = try assertReportFindsExactlyThePlants(plans, options)
        XCTAssertGreaterThan(labels.expected.count, 200)
        XCTAssertGreaterThan(labels.mustNotFlag.count, 300)
    }

    /// The scenarios rules 1.2 added.
    static let plants12: Set<Plant> = [.leakBesideBackgroundWindow, .leakRootSwapWithSheet, .leakInChildChain,
                                       .slowPushUnderDraggedSheet, .deinitInGraceBesideBackgroundWindow,
                                       .cancelledSearch, .rootSwapFreed, .pushAcrossLostEvents,
                                       .interactiveSwipeWithoutPop]

    /// Every plant at least once, whatever a seed draws: a session of each alone, and sessions
    /// of those that share a stage (two root swaps at launch, both plants of one second window,
    /// a hole beside another hole, a search beside a leak, a second window beside backgrounding).
    func testEveryPlantAloneAndBesideItsNeighbours() throws {
        var options = CorpusOptions.make(seed: 12, sessions: 0, sessionsPerFile: 4, scenarios: 12)
        options.gzip = false
        var rng = SplitMix64(seed: 12)
        let alone: [[Plant]] = Plant.allCases.map { [$0] }
        let neighbours: [[Plant]] = [[.rootSwapFreed, .leakRootSwapWithSheet],
                  [.leakBesideBackgroundWindow, .deinitInGraceBesideBackgroundWindow, .backgrounding],
                  [.pushAcrossLostEvents, .lostEvents, .leakPop],
                  [.cancelledSearch, .cancelledSearch, .leakPop, .completedInteractivePop],
                  [.interactiveSwipeWithoutPop, .slowPushUnderDraggedSheet, .leakInChildChain, .interactiveDismiss],
                  [.leakRootSwapWithSheet, .noScene], [.rootSwapFreed, .appDelegate]]
        let plans = (alone + neighbours).map { plants -> SessionPlan in
            var plan = SessionPlan(sid: CorpusWriter.sid(&rng), plants: plants, scenarios: options.scenarios)
            if plants.contains(.appDelegate) { plan.sdk = "26.2" }
            if plants.contains(where: CorpusWriter.multiWindow.contains) { plan.device = "iPad14,5" }
            plan.omitsNil = plants.count > 1
            return plan
        }
        let labels = try assertReportFindsExactlyThePlants(plans, options)
        for plant in Self.plants12 {
            XCTAssertTrue(labels.expected.contains { $0.plant == plant } || labels.mustNotFlag.contains { $0.plant == plant },
                          "\(plant) labels what it plants")
        }
    }

    /// Writes `plans` into `name`, ingests them and reports: the report finds exactly the
    /// planted findings and flags no look-alike. Returns the answer key and what was found.
    @discardableResult
    func assertReportFindsExactlyThePlants(_ plans: [SessionPlan], _ options: CorpusOptions, into name: String = "traces",
                                           file: StaticString = #filePath, line: UInt = #line) throws -> Labels {
        try report(plans, options, into: name, file: file, line: line).labels
    }

    /// `assertReportFindsExactlyThePlants`, with the findings: (rule, session, class) of each.
    func report(_ plans: [SessionPlan], _ options: CorpusOptions, into name: String,
                file: StaticString = #filePath, line: UInt = #line) throws -> (labels: Labels, found: [String]) {
        let traces = dir + "/" + name, db = dir + "/" + name + ".db"
        let (labels, _, _) = try CorpusWriter.write(plans: plans, to: traces, options: options)

        let ingest = TestSupport.run(["ingest", "-q", "--db", db, traces])
        XCTAssertEqual(ingest.status, 0, ingest.err, file: file, line: line)
        XCTAssertEqual(ingest.err, "", "the generator writes no bad line", file: file, line: line)
        let report = TestSupport.run(["report", "--db", db, "--format", "json", "--fail-on", "never"])
        let doc = try JSONSerialization.jsonObject(with: Data(report.out.utf8)) as! [String: Any]
        let findings = doc["findings"] as! [[String: Any]]
        let found = findings.map {
            Key(rule: $0["rule"] as! String, session: $0["session"] as? String ?? "-", vc: $0["vc"] as? String,
                since: ($0["since"] as? NSNumber)?.int64Value)
        }

        let expected = Set(labels.expected.map { Key(rule: $0.rule, session: $0.session, vc: $0.vc, since: $0.since) })
        let acceptable = Set(labels.alsoAcceptable.map { Key(rule: $0.rule, session: $0.session, vc: $0.vc, since: $0.since) })
        let scored = Set(found.filter { labels.scoredRules.contains($0.rule) })
        let missed = expected.subtracting(scored)
        let extra = scored.subtracting(expected).filter { key in
            !(["LC301", "LC302"].contains(key.rule) && acceptable.contains { $0.session == key.session && $0.vc == key.vc && $0.since == key.since })
        }
        XCTAssertEqual(missed.sorted(), [], "planted findings missed", file: file, line: line)
        XCTAssertEqual(extra.sorted(), [], "findings nobody planted", file: file, line: line)

        // Look-alikes get no LC2xx nor LC301 beyond what was planted on them.
        let flagged = found.filter { f in
            (f.rule.hasPrefix("LC2") || f.rule == "LC301") && !expected.contains(f)
                && labels.mustNotFlag.contains { $0.session == f.session && $0.vc == f.vc && $0.since == f.since }
        }
        XCTAssertEqual(flagged.sorted(), [], "look-alikes flagged", file: file, line: line)
        return (labels, findings.map { "\($0["rule"]!) \($0["session"] ?? "-") \($0["class"] ?? "-")" })
    }

    /// (Issue 24) The same plans written through LCTraceRecorder (`lctrace-gen --via-recorder`):
    /// the recorder's files (its names, session records, ids), no rejects, exactly the answer key
    /// moved onto the recorder's ids and seqs, and the findings of the corpus the simulator writes
    /// itself, rule, session and class for class.
    func testTheRecorderWritesACorpusWithTheSameFindings() throws {
        for (seed, rates) in [(UInt64(11), (0.4, 0.6)), (3, (0.25, 0.4))] {
            var options = CorpusOptions.make(seed: seed, sessions: 40, sessionsPerFile: 3, scenarios: 30,
                                             rotateEvery: 400, linesPerMember: 150)
            (options.bugRate, options.lookAlikeRate) = rates
            let plans = CorpusWriter.randomPlans(options)
            let direct = try report(plans, options, into: "direct-\(seed)")
            options.viaRecorder = true
            let recorded = try report(plans, options, into: "recorded-\(seed)")
            XCTAssertEqual(recorded.found.sorted(), direct.found.sorted(), "seed \(seed)")
            XCTAssertEqual(recorded.labels.expected.count, direct.labels.expected.count)
            XCTAssertEqual(recorded.labels.mustNotFlag.count, direct.labels.mustNotFlag.count)
            let files = try FileManager.default.contentsOfDirectory(atPath: dir + "/recorded-\(seed)")
            XCTAssertGreaterThan(files.count, plans.count, "rotated parts")
            let sids = Set(plans.map(\.sid))
            for name in files {
                // The recorder's names: <app>_<start, UTC>_<session id>_<part>.jsonl.gz.
                let parts = name.split(separator: "_")
                XCTAssertTrue(parts.count == 4 && sids.contains(String(parts[2])) && name.hasSuffix(".jsonl.gz"), name)
                var first = ""
                LineReader(input: try TraceInput(location: .file(dir + "/recorded-\(seed)/" + name))).forEachLine { line in
                    first = String(decoding: line.bytes, as: UTF8.self)
                    return false
                }
                XCTAssertTrue(first.contains(#""ev":"session""#) && first.contains(#""recorder":"lctrace-recorder/1.0""#), first)
            }
        }
    }
}
