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
/// interactive dismissals, app extensions, Codable recorders), rotated and split into gzip
/// members: `lctrace report` must find exactly the planted findings (the generator's answer
/// key, matched on rule, session, vc, since) and flag none of the look-alikes.
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
        XCTAssertTrue(plans.contains { $0.omitsNil }, "some sessions come from a Codable recorder")
        let traces = dir + "/traces"
        let (labels, _, _) = try CorpusWriter.write(plans: plans, to: traces, options: options)

        let ingest = TestSupport.run(["ingest", "-q", "--db", db, traces])
        XCTAssertEqual(ingest.status, 0, ingest.err)
        XCTAssertEqual(ingest.err, "", "the generator writes no bad line")
        let report = TestSupport.run(["report", "--db", db, "--format", "json", "--fail-on", "never"])
        let doc = try JSONSerialization.jsonObject(with: Data(report.out.utf8)) as! [String: Any]
        let found = (doc["findings"] as! [[String: Any]]).map {
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
        XCTAssertEqual(missed.sorted(), [], "planted findings missed")
        XCTAssertEqual(extra.sorted(), [], "findings nobody planted")
        XCTAssertGreaterThan(expected.count, 200)

        // Look-alikes get no LC2xx nor LC301 beyond what was planted on them.
        let flagged = found.filter { f in
            (f.rule.hasPrefix("LC2") || f.rule == "LC301") && !expected.contains(f)
                && labels.mustNotFlag.contains { $0.session == f.session && $0.vc == f.vc && $0.since == f.since }
        }
        XCTAssertEqual(flagged.sorted(), [], "look-alikes flagged")
        XCTAssertGreaterThan(labels.mustNotFlag.count, 300)
    }
}
