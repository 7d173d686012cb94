import XCTest
import Foundation
@testable import LCTraceRules
@testable import LCTraceStore
@testable import LCTracePostgreSQL
@testable import LCTraceAnalysis
@testable import LCTrace

/// The connections an ingest opens: each is a server process (about 6.6 ms of the server's
/// CPU, and a place in `max_connections`).
final class PostgreSQLConnectionsTests: PostgreSQLTestCase {

    func sample(_ name: String) -> String { TestSupport.root.appendingPathComponent("SampleTraces/" + name).path }

    /// Connections made by an ingest run in this process with `arguments`.
    func connections(_ url: String, _ arguments: [String], file: StaticString = #filePath, line: UInt = #line) -> Int {
        let before = PGConnection.made
        let run = TestSupport.run(["ingest", "-q", "--db", url] + arguments)
        XCTAssertEqual(run.status, 0, run.err, file: file, line: line)
        return PGConnection.made - before
    }

    /// The load's connection, and one for the new texts and the new sessions together (four
    /// with the analysis thread's before, a file loaded already two).
    func testAnIngestOpensOneConnectionForItsNewTextsAndSessions() throws {
        let url = try freshDatabase()
        XCTAssertEqual(connections(url, ["--no-analyze", sample("device-002-aad71e75.jsonl.gz")]), 2,
                       "the load's, and the new texts' and sessions' (three before)")
    }

    /// The analysis thread's connection is opened when it first has a session to build: an
    /// ingest of a file loaded already opens the load's only (two before), and the analysis
    /// while loading opens nothing up front.
    func testTheAnalysisThreadConnectsOnlyWhenItHasASessionToBuild() throws {
        let url = try freshDatabase()
        let storage = try Storage.openForWriting(url)
        let before = PGConnection.made
        let ingester = Ingester(store: try storage.backend.ingestSink())
        XCTAssertTrue(try ingester.analyzeWhileLoading(settings: RuleSettings()))
        XCTAssertEqual(PGConnection.made - before, 0, "nothing to build yet")
        ingester.analysis?.cancel()
        ingester.analysis?.waitForWorker()
        let analysed = connections(url, [sample("device-002-aad71e75.jsonl.gz")])
        // The analysis thread's only when it took a session before the end of the ingest took what was left.
        XCTAssertTrue((2...3).contains(analysed), "\(analysed)")
        XCTAssertEqual(connections(url, [sample("device-002-aad71e75.jsonl.gz")]), 1, "a file loaded already: the load's only")
    }

    /// A batch's new texts go on the new sessions' connection, under its `lock_timeout`: an
    /// insert that gives up waiting for a text another transaction is inserting is run again
    /// (sent ahead of the sessions' statement or not), and never fails the batch.
    func testANewTextsInsertThatGivesUpWaitingForALockIsRunAgain() throws {
        let url = try freshDatabase()
        let storage = try Storage.openForWriting(url)
        let sink = try XCTUnwrap(try storage.backend.ingestSink() as? PGIngestSink)
        // The insert prepared (at its second run): the next ones are sent ahead.
        _ = try sink.strings.ids(["T-first"])
        _ = try sink.strings.ids(["T-second"])
        nonisolated(unsafe) let other = try PGConnection(url: url)
        let check = try PGConnection(url: url)
        for ahead in [false, true] {
            let held = "T-held-\(ahead)", new = "T-new-\(ahead)"
            // Held past two of the connection's lock timeouts (500 ms).
            try other.execute("BEGIN; INSERT INTO strings(text) VALUES ('\(held)')")
            let committed = DispatchGroup()
            committed.enter()
            DispatchQueue.global().asyncAfter(deadline: .now() + 1.2) {
                try? other.execute("COMMIT")
                committed.leave()
            }
            let before = sink.sessionInserterRoundTrips
            let ids: [String: Int64]
            if ahead {
                let pending = try sink.strings.send([held, new])
                XCTAssertTrue(pending.sentAhead)
                XCTAssertNotNil(try sink.sessionIDs(["S-\(ahead)"])["S-\(ahead)"])
                ids = try sink.strings.collect(pending)
            } else {
                ids = try sink.strings.ids([held, new])
            }
            committed.wait()
            XCTAssertEqual(ids[held], try check.query("SELECT id FROM strings WHERE text = $1", [held]).int(0, 0))
            XCTAssertEqual(ids[new], try check.query("SELECT id FROM strings WHERE text = $1", [new]).int(0, 0))
            // The insert, again after each timeout, then the look-up of the text it skipped (and
            // the sessions' statement).
            XCTAssertGreaterThanOrEqual(sink.sessionInserterRoundTrips - before, ahead ? 4 : 3, "gave up waiting, and ran again")
        }
        sink.endRun()
    }
}
