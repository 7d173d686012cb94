import XCTest
@testable import LCTraceModel
@testable import LCTraceStore
@testable import LCTracePostgreSQL
@testable import LCTraceReport
@testable import LCTrace

/// The read path of the shared queries on PostgreSQL (issue 26: the reading commands within 2×
/// SQLite): a cursor's next page asked for while the caller works through the current one,
/// statements run between two pages, cursors closed in the next round trip, look-ups prepared
/// once, integers read from their digits in place.
final class PGReadPathTests: XCTestCase {
    func connect() throws -> PGConnection {
        guard let url = PGConnectionTests.url else { throw XCTSkip("no PostgreSQL server: set LCTRACE_TEST_POSTGRES_URL (.ci/run starts one)") }
        return try PGConnection(url: url)
    }

    /// Every integer the text format can send comes back as it is, and nothing else passes
    /// for one (no server needed).
    func testIntegersAreReadFromTheirDigitsAsTheySay() {
        func parse(_ text: String) -> Int64? {
            Array(text.utf8).withUnsafeBufferPointer { PGResult.integer($0) }
        }
        var values: [Int64] = [0, 1, -1, 9, -9, Int64.max, Int64.min, Int64.max - 1, Int64.min + 1]
        var p: Int64 = 1
        for _ in 0..<18 { p *= 10; values += [p - 1, p, p + 1, -p, -(p - 1)] }
        for v in values { XCTAssertEqual(parse(String(v)), v, String(v)) }
        for bad in ["", "-", "9223372036854775808", "-9223372036854775809", "99999999999999999999", "1.5", "12a", " 1", "t", "+1", "--1"] {
            XCTAssertNil(parse(bad), bad)
        }
    }

    /// The texts an ingest learned are handed to its analysis thread by id, those it lacks
    /// named to be read; past its bound it starts over rather than grow (no server needed).
    func testLearnedTextsGiveWhatTheyHoldAndNameWhatTheyLack() {
        let learned = PGLearnedTexts(maxCached: 4)
        learned.learn(["viewDidLoad": 1, "0x1": 2, "HomeVC": 3])
        var cache: [Int64: String] = [9: "kept"]
        XCTAssertEqual(learned.take([1, 3, 7], into: &cache), [7])
        XCTAssertEqual(cache, [9: "kept", 1: "viewDidLoad", 3: "HomeVC"])
        learned.learn(["0x2": 4, "0x3": 5])
        var after: [Int64: String] = [:]
        XCTAssertEqual(learned.take([1, 2, 4, 5], into: &after), [1, 2], "started over at its bound")
        XCTAssertEqual(after, [4: "0x2", 5: "0x3"])
    }

    /// A query longer than several pages steps through every row in order while other
    /// statements (look-ups, whole short queries, a second cursor) run between its rows and
    /// right at its page boundaries, where the next page is already on its way.
    func testAPageAskedForAheadComesInOrderWhileOtherStatementsRunBetween() throws {
        let pg = try connect()
        let db = PGReadConnection(pg: pg, snapshot: true)
        let total = PGQuery.page * 3 + 17
        let q = try db.query("SELECT n FROM generate_series(1, CAST(?1 AS INTEGER)) n")
        try q.bind(.int(Int64(total)), at: 1)
        var seen: [Int64] = []
        while try q.step() {
            let n = q.int(0)
            seen.append(n)
            if n % Int64(PGQuery.page) == 0 || n % Int64(PGQuery.page) == 1 || n % 997 == 0 {
                XCTAssertEqual(try db.scalarInt("SELECT CAST(?1 AS BIGINT) * 2", [.int(n)]), n * 2)
                let inner = try db.query("SELECT m FROM generate_series(1, 5) m")
                var sum: Int64 = 0
                while try inner.step() { sum += inner.int(0) }
                XCTAssertEqual(sum, 15)
            }
        }
        XCTAssertEqual(seen, (1...Int64(total)).map { $0 })
        // The same statement again, from the start.
        q.resetKeepingBindings()
        var count = 0
        while try q.step() { count += 1 }
        XCTAssertEqual(count, total)
    }

    /// A page that fails on the server (here a division by zero in the second page, asked for
    /// ahead) is reported with its own cause, whether the cursor or another statement reads
    /// the connection next, not as "the transaction is aborted".
    func testAPageThatFailsAheadReportsItsOwnCause() throws {
        let sql = "SELECT CASE WHEN n = CAST(?1 AS INTEGER) THEN 1 / (n - n) ELSE n END FROM generate_series(1, CAST(?2 AS INTEGER)) n"
        let failAt = Int64(PGQuery.page + 10)
        for nextStatementIsTheCursor in [true, false] {
            let db = PGReadConnection(pg: try connect(), snapshot: true)
            let q = try db.query(sql)
            try q.bind([.int(failAt), .int(Int64(PGQuery.page * 3))])
            var rows = 0
            while rows < PGQuery.page, try q.step() { rows += 1 }
            XCTAssertEqual(rows, PGQuery.page)
            XCTAssertThrowsError(try nextStatementIsTheCursor ? q.step() : db.scalarInt("SELECT 1") != nil) { error in
                XCTAssertEqual((error as? PGError)?.sqlState, "22012", "\(error)")
            }
        }
    }

    /// Finished cursors are closed with the next statements sent, never more than a bounded
    /// number left open, and forgotten at the end of their transaction (closing one that the
    /// commit already closed would fail the next transaction).
    func testFinishedCursorsAreClosedWithTheNextStatementsAndForgottenAtCommit() throws {
        let pg = try connect()
        let db = PGReadConnection(pg: pg, snapshot: false)
        for round in 0..<2 {
            try db.transaction {
                for i in 0..<200 {
                    let q = try db.query("SELECT CAST(?1 AS INTEGER) + m FROM generate_series(1, 3) m")
                    try q.bind(.int(Int64(i)), at: 1)
                    var sum: Int64 = 0
                    while try q.step() { sum += q.int(0) }
                    XCTAssertEqual(sum, Int64(3 * i + 6))
                }
                let open = try db.scalarInt("SELECT count(*) FROM pg_cursors WHERE name LIKE 'lctrace_c%'") ?? -1
                XCTAssertLessThanOrEqual(open, 64, "round \(round)")
                XCTAssertGreaterThanOrEqual(open, 1, "round \(round): closes wait for the next statement")
            }
        }
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM pg_cursors WHERE name LIKE 'lctrace_c%'"), 0)
    }

    /// A transaction that fails while cursors wait to be closed still rolls back: the closes
    /// are not sent with the ROLLBACK (they would fail first in the aborted transaction, and
    /// the connection would stay in it).
    func testAFailedTransactionWithCursorsWaitingToCloseRollsBack() throws {
        let pg = try connect()
        let db = PGReadConnection(pg: pg, snapshot: false)
        struct Expected: Error {}
        for failure in ["SELECT 1 / 0", "COPY no_such_table FROM STDIN"] {
            XCTAssertThrowsError(try db.transaction {
                for _ in 0..<3 {
                    let q = try db.query("SELECT m FROM generate_series(1, 2) m")
                    while try q.step() {}
                }
                if failure.hasPrefix("COPY") { _ = try pg.copyIn(failure) { _ in } } else { try pg.forEachRow(failure) { _ in } }
            })
            // Rolled back: a new transaction begins and reads.
            try assertTakesATransaction(db, answering: 5)
        }
    }

    /// Two pages of rows; the server sleeps `seconds` on row `sleepingAt`.
    private func slowQuery(_ db: PGReadConnection, sleepingAt row: Int64, seconds: Int) throws -> any SQLQuery {
        let q = try db.query("SELECT n, CASE WHEN n = CAST(?1 AS INTEGER) THEN pg_sleep(\(seconds)) END FROM generate_series(1, CAST(?2 AS INTEGER)) n")
        try q.bind([.int(row), .int(Int64(PGQuery.page) * 2)])
        return q
    }

    /// The connection takes a transaction again and answers in it (after a stop or a failure).
    private func assertTakesATransaction(_ db: PGReadConnection, answering n: Int64,
                                         file: StaticString = #filePath, line: UInt = #line) throws {
        try db.transaction {
            let q = try db.query("SELECT \(n)")
            XCTAssertTrue(try q.step(), file: file, line: line)
            XCTAssertEqual(q.int(0), n, file: file, line: line)
        }
    }

    /// Steps through the first page (the second is then asked for ahead).
    private func readFirstPage(_ q: any SQLQuery) throws {
        var rows = 0
        while rows < PGQuery.page, try q.step() { rows += 1 }
        XCTAssertEqual(rows, PGQuery.page)
    }

    /// A stop request while a page asked for ahead is still being computed (here a second
    /// page that sleeps) ends the wait; the transaction still rolls back and the connection
    /// takes the next one: the results the cancel left on their way are drained first.
    func testAStopWhileAPageIsOnItsWayLeavesTheConnectionUsable() throws {
        guard let url = PGConnectionTests.url else { throw XCTSkip("no PostgreSQL server: set LCTRACE_TEST_POSTGRES_URL (.ci/run starts one)") }
        let page = Int64(PGQuery.page)
        // The sleep in the page asked for ahead, then in the first page (the pipeline's
        // DECLARE and FETCH: the stop leaves the connection in pipeline mode).
        for sleepsAt in [page + 1, 1] {
            let stop = StopRequest()
            let pg = try PGConnection(url: url, stop: stop)
            let db = PGReadConnection(pg: pg, snapshot: false)
            let started = Date()
            XCTAssertThrowsError(try db.transaction {
                let q = try slowQuery(db, sleepingAt: sleepsAt, seconds: 20)
                if sleepsAt > 1 { try readFirstPage(q) }
                stop.request()
                _ = try q.step()
            }) { XCTAssertTrue($0 is Interrupted, "sleeping at row \(sleepsAt): \($0)") }
            XCTAssertLessThan(Date().timeIntervalSince(started), 10, "the stop ended the wait; the server's sleep was cancelled")
            try assertTakesATransaction(db, answering: 11)
        }
    }

    /// A body that fails for its own reason while the page asked for ahead failed on the
    /// server (a statement timeout) still rolls back: the page's failure does not keep the
    /// ROLLBACK from being sent, and the next transaction begins.
    func testAFailedPageAheadDoesNotKeepTheRollbackFromBeingSent() throws {
        let pg = try connect()
        let db = PGReadConnection(pg: pg, snapshot: false)
        struct Own: Error {}
        let page = Int64(PGQuery.page)
        XCTAssertThrowsError(try db.transaction {
            try pg.execute("SET LOCAL statement_timeout = '300ms'")
            try readFirstPage(try slowQuery(db, sleepingAt: page + 1, seconds: 5))
            Thread.sleep(forTimeInterval: 0.6)  // the page ahead times out meanwhile
            throw Own()
        }) { XCTAssertTrue($0 is Own, "\($0)") }
        try assertTakesATransaction(db, answering: 12)
    }

    /// A look-up run many times is prepared once on the connection (at its second run) and
    /// gives each binding's row; inside the read snapshot it sees what the snapshot sees.
    func testALookUpIsPreparedOnceAndSeesTheSnapshot() throws {
        let pg = try connect()
        try pg.execute("DROP TABLE IF EXISTS lookup_check; CREATE TABLE lookup_check (k bigint PRIMARY KEY, v text)")
        defer { try? pg.execute("DROP TABLE IF EXISTS lookup_check") }
        try pg.execute("INSERT INTO lookup_check SELECT k, 'v' || k FROM generate_series(1, 50) k")
        let db = PGReadConnection(pg: pg, snapshot: true)
        let sql = "SELECT v FROM lookup_check WHERE k = ?"
        for k in 1...50 { XCTAssertEqual(try db.scalarText(sql, [.int(Int64(k))]), "v\(k)") }
        XCTAssertNil(try db.scalarText(sql, [.int(51)]))
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM pg_prepared_statements WHERE statement = 'SELECT v FROM lookup_check WHERE k = $1'"), 1)
        // A text run once (values written into it) is not prepared: the server keeps no
        // statement per list of seqs.
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM lookup_check WHERE k IN (3, 4, 5)"), 3)
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%k IN (3, 4, 5)%'"), 0)
        // Written by another connection after the snapshot began: not seen.
        let other = try connect()
        try other.execute("INSERT INTO lookup_check VALUES (51, 'late')")
        XCTAssertNil(try db.scalarText(sql, [.int(51)]))
    }
}

/// (Issue 26) A reading command's second connection (`SQLReadConnection.sibling`) for a read
/// beside its others, and the report's gap statistics read on it.
final class PGBesideReadTests: XCTestCase {
    /// The sibling sees exactly the snapshot of the connection it came from: not a row
    /// committed after that snapshot began, though it connects later.
    func testASiblingSeesTheSnapshotOfItsConnection() throws {
        guard let url = PGConnectionTests.url else { throw XCTSkip("no PostgreSQL server: set LCTRACE_TEST_POSTGRES_URL (.ci/run starts one)") }
        let setup = try PGConnection(url: url)
        try setup.execute("DROP TABLE IF EXISTS beside_check; CREATE TABLE beside_check (k bigint PRIMARY KEY)")
        defer { try? setup.execute("DROP TABLE IF EXISTS beside_check") }
        try setup.execute("INSERT INTO beside_check SELECT generate_series(1, 10)")
        let db = PGReadConnection(pg: try PGConnection(url: url), snapshot: true, url: url)
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM beside_check"), 10)
        try setup.execute("INSERT INTO beside_check SELECT generate_series(11, 15)")
        let sibling = try XCTUnwrap(try db.sibling())
        XCTAssertEqual(try sibling.scalarInt("SELECT count(*) FROM beside_check"), 10, "the sibling saw a later commit")
        XCTAssertEqual(try sibling.scalarInt("SELECT count(*) FROM beside_check WHERE k > 10"), 0)
        // Its own connection, in its own transaction, and it waits for a lock 2 s at most.
        XCTAssertNotEqual(try db.scalarInt("SELECT pg_backend_pid()"), try sibling.scalarInt("SELECT pg_backend_pid()"))
        XCTAssertEqual(try sibling.scalarText("SHOW lock_timeout"), "2s")
        // A fresh reader sees the later rows: the snapshot, not the table, is what held them back.
        let fresh = PGReadConnection(pg: try PGConnection(url: url), snapshot: true, url: url)
        XCTAssertEqual(try fresh.scalarInt("SELECT count(*) FROM beside_check"), 15)
        // A writing command's connection (no snapshot) and a sibling give none.
        XCTAssertNil(try PGReadConnection(pg: try PGConnection(url: url), snapshot: false, url: url).sibling())
        let siblingsSibling = try (sibling as! PGReadConnection).sibling()
        XCTAssertNil(siblingsSibling)
        // A server that takes no more connections (here: none where the URL points): no
        // sibling, and the connection reads on as before.
        let refused = PGReadConnection(pg: try PGConnection(url: url), snapshot: true, url: "postgresql://lctrace@127.0.0.1:1/none?connect_timeout=2")
        XCTAssertNil(try refused.sibling())
        XCTAssertEqual(try refused.scalarInt("SELECT count(*) FROM beside_check"), 15)
        // A URL that leads to another database (as a multi-host URL may lead to another
        // server): the snapshot cannot be imported there, no sibling, the connection reads on.
        let other = "lctrace_beside_\(UInt32.random(in: 0...UInt32.max))"
        if (try? setup.execute("CREATE DATABASE \(other)")) != nil {
            defer { try? setup.execute("DROP DATABASE IF EXISTS \(other)") }
            guard var parts = URLComponents(string: url) else { return XCTFail("unparsable test URL") }
            parts.path = "/" + other
            let elsewhere = PGReadConnection(pg: try PGConnection(url: url), snapshot: true, url: parts.string!)
            XCTAssertEqual(try elsewhere.scalarInt("SELECT count(*) FROM beside_check"), 15)
            XCTAssertNil(try elsewhere.sibling())
            XCTAssertEqual(try elsewhere.scalarInt("SELECT count(*) FROM beside_check"), 15)
        }
    }

    /// A report whose gap statistics are read beside its findings (`gapsSettledLater`) is
    /// pending until settled, then gives the statistics a report read in line gives, and those
    /// of the same traces in SQLite; a report that does not defer them settles them itself.
    /// SampleTraces in a fresh PostgreSQL schema and in a SQLite file, both removed after the
    /// test: the URL (with its search_path), the schema, the SQLite path.
    func sampleDatabases() throws -> (pg: String, schema: String, sqlite: String) {
        guard let url = PGConnectionTests.url else { throw XCTSkip("no PostgreSQL server: set LCTRACE_TEST_POSTGRES_URL (.ci/run starts one)") }
        let admin = try PGConnection(url: url)
        let schema = "beside_\(UInt32.random(in: 0...UInt32.max))"
        try admin.execute("CREATE SCHEMA \(schema)")
        addTeardownBlock { try? admin.execute("DROP SCHEMA \(schema) CASCADE") }
        let pg = url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
        let dir = NSTemporaryDirectory() + "beside-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        for db in [pg, dir + "/s.db"] {
            let r = TestSupport.run(["ingest", "-q", "--db", db, samples])
            XCTAssertEqual(r.status, 0, r.err)
        }
        return (pg, schema, dir + "/s.db")
    }

    func testGapStatisticsReadBesideAreThoseReadInLine() throws {
        let (pg, _, sqliteFile) = try sampleDatabases()
        func statistics(_ location: String, later: Bool, beside: Bool = true,
                        className: String? = nil) throws -> (pending: Bool, stats: [String], byBuild: Int) {
            var request = ReportRequest()
            request.gapsBySession = true
            request.gapsSettledLater = later
            request.gapsBeside = beside
            request.className = className
            let db = try Storage.openForReading(location)
            var findings: [Finding] = []
            var data = try ReportCollector.collect(request, db: db) { f, _ in findings.append(f) }
            data.findings = findings
            var view = ReportView(data: data, options: ReportOptions())
            let pending = view.gapsPending
            try view.settleGaps()
            XCTAssertFalse(view.gapsPending)
            return (pending, view.gapStats.map { String(describing: $0) }, view.gapsByBuild.count)
        }
        let later = try statistics(pg, later: true), inLine = try statistics(pg, later: true, beside: false)
        let sqlite = try statistics(sqliteFile, later: true)
        XCTAssertTrue(later.pending, "PostgreSQL's gaps were not read beside")
        XCTAssertFalse(inLine.pending)
        XCTAssertFalse(try statistics(pg, later: false).pending, "collect settles what it was not asked to leave pending")
        XCTAssertFalse(sqlite.pending, "SQLite has no sibling: its gaps are read in line")
        XCTAssertFalse(later.stats.isEmpty, "SampleTraces hold counted gaps")
        XCTAssertEqual(later.stats, inLine.stats)
        XCTAssertEqual(later.stats, sqlite.stats)
        XCTAssertEqual(later.byBuild, sqlite.byBuild)
        // One class (`--class`): kept when the read beside is settled, as in line.
        let one = try statistics(pg, later: true, className: "CheckoutViewController")
        XCTAssertTrue(one.pending)
        XCTAssertEqual(one.stats.count, 1)
        XCTAssertEqual(one.stats, try statistics(sqliteFile, later: true, className: "CheckoutViewController").stats)
        XCTAssertEqual(one.stats, later.stats.filter { $0.contains("\"CheckoutViewController\"") })
    }

    /// DDL queued behind the report's own lock (`LOCK TABLE sessions`, as `VACUUM FULL` or a
    /// migration would) holds the second connection's read, and the report's connection waits
    /// for that read: the server sees no deadlock. The second connection gives up after its
    /// `lock_timeout` and the report's connection, which already holds the lock and the
    /// snapshot, reads the statistics itself: the report completes with the same statistics.
    func testAReadBesideHeldBehindQueuedDDLIsDoneOnTheFirstConnection() throws {
        let (pg, schema, sqlite) = try sampleDatabases()
        func statistics(_ db: Storage) throws -> [String] {
            var request = ReportRequest()
            request.gapsBySession = true
            let data = try ReportCollector.collect(request, db: db)
            let view = ReportView(data: data, options: ReportOptions())
            return view.gapStats.map { String(describing: $0) }
        }
        let expected = try statistics(try Storage.openForReading(sqlite))
        XCTAssertFalse(expected.isEmpty)
        let admin = try PGConnection(url: pg)
        var report: Storage? = try Storage.openForReading(pg)
        // The report's connection takes its snapshot and its lock on `sessions`.
        XCTAssertGreaterThan(try report!.backend.reader.scalarInt("SELECT count(*) FROM sessions") ?? 0, 0)
        // Then DDL asks for the table and queues behind that lock (20 s at most, so a broken
        // fallback fails the test instead of hanging it).
        let locker = try PGConnection(url: pg)
        let lockerDone = DispatchSemaphore(value: 0)
        final class Outcome: @unchecked Sendable { var error: (any Error)? }
        let lockOutcome = Outcome()
        nonisolated(unsafe) let lockerConnection = locker
        Thread.detachNewThread {
            do {
                try lockerConnection.execute("SET lock_timeout = '20s'; BEGIN; LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE")
                try lockerConnection.execute("ROLLBACK")
            } catch {
                lockOutcome.error = error
            }
            lockerDone.signal()
        }
        var queued = false
        for _ in 0..<50 where !queued {
            queued = (try admin.query("SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = '\(schema).sessions'::regclass").int(0, 0) ?? 0) > 0
            if !queued { Thread.sleep(forTimeInterval: 0.1) }
        }
        XCTAssertTrue(queued, "the LOCK TABLE never queued")
        let start = Date()
        let got = try statistics(report!)
        let took = Date().timeIntervalSince(start)
        XCTAssertEqual(got, expected)
        XCTAssertLessThan(took, 15, "the report waited for the DDL instead of reading on")
        XCTAssertGreaterThan(took, 1.5, "the read beside was not held: the scenario did not happen")
        // The report ends: the DDL gets its lock.
        report = nil
        XCTAssertEqual(lockerDone.wait(timeout: .now() + 30), .success)
        XCTAssertNil(lockOutcome.error)
    }
}
