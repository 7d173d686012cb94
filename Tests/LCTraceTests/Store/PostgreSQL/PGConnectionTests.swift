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

/// The libpq wrapper against a real server: `LCTRACE_TEST_POSTGRES_URL` names one (`.ci/run`
/// starts a throwaway cluster and sets it); without it these tests skip.
final class PGConnectionTests: XCTestCase {
    static var url: String? { ProcessInfo.processInfo.environment["LCTRACE_TEST_POSTGRES_URL"] }

    func connect() throws -> PGConnection {
        guard let url = Self.url else { throw XCTSkip("no PostgreSQL server: set LCTRACE_TEST_POSTGRES_URL (.ci/run starts one)") }
        return try PGConnection(url: url)
    }

    /// (Schema 7) Blocks of events go in by binary COPY: every width, NULL elements, jsonb
    /// texts with escapes and non-ASCII, and the extremes of each type come back as the server
    /// reads them in text; a value past its column's width is refused before anything is
    /// sent, where binary would store it cut.
    func testBinaryBlocksRoundTripAndRefuseWhatTheirColumnsCannotHold() throws {
        let db = try connect()
        try db.execute("""
            CREATE TEMP TABLE event_blocks (session integer, first_seq bigint, last_seq bigint, t bigint[], seq bigint[],
                vc integer[], other integer[], ev smallint[], flags smallint[], rest jsonb[])
            """)
        let json = #"{"attrs":"{\"k\":\"a\\b\tc é 😀\"}","wall":"2026-12-06T10:00:00Z"}"#
        let events: [PGEventRow.Packed] = [
            .init(t: Int64.min, seq: 1, vc: Int64(Int32.max), other: nil, ev: Int64(Int16.max), flags: 0, rest: Array(json.utf8)),
            .init(t: 0, seq: 2, vc: nil, other: Int64(Int32.min), ev: 0, flags: Int64(Int16.min), rest: nil),
            .init(t: Int64.max, seq: Int64.max, vc: 7, other: 8, ev: 9, flags: 0x3f3f, rest: Array("{}".utf8)),
        ]
        XCTAssertEqual(try db.copyIn(PGEventRow.copy, binary: true) { w in
            try PGEventRow.addBlock(w, session: Int64(Int32.max), events[...])
            try PGEventRow.addBlock(w, session: 1, events[1...1])
        }, 2)
        let expected = """
            SELECT \(Int32.max) AS session, 1::bigint AS first_seq, \(Int64.max)::bigint AS last_seq,
                   ARRAY[\(Int64.min), 0, \(Int64.max)]::bigint[] AS t, ARRAY[1, 2, \(Int64.max)]::bigint[] AS seq,
                   ARRAY[\(Int32.max), NULL, 7]::integer[] AS vc, ARRAY[NULL, \(Int32.min), 8]::integer[] AS other,
                   ARRAY[\(Int16.max), 0, 9]::smallint[] AS ev, ARRAY[0, \(Int16.min), 16191]::smallint[] AS flags,
                   ARRAY[$1::jsonb, NULL, '{}'::jsonb] AS rest
            UNION ALL
            SELECT 1, 2, 2, '{0}', '{2}', '{NULL}', ARRAY[\(Int32.min)], '{0}', ARRAY[\(Int16.min)]::smallint[], NULL
            """
        let differing = try db.query("""
            SELECT count(*) FROM ((SELECT * FROM event_blocks EXCEPT ALL (\(expected)))
                                  UNION ALL ((\(expected)) EXCEPT ALL SELECT * FROM event_blocks)) d
            """, [json])
        XCTAssertEqual(differing.int(0, 0), 0, "the blocks as written")
        XCTAssertEqual(try db.query("SELECT rest[1] ->> 'attrs' FROM event_blocks WHERE session > 1").text(0, 0), "{\"k\":\"a\\b\tc é 😀\"}")
        for wide in [PGEventRow.Packed(t: 0, seq: 1, vc: Int64(Int32.max) + 1, other: nil, ev: 0, flags: 0, rest: nil),
                     PGEventRow.Packed(t: 0, seq: 1, vc: nil, other: nil, ev: Int64(Int16.max) + 1, flags: 0, rest: nil)] {
            XCTAssertThrowsError(try db.copyIn(PGEventRow.copy, binary: true) { w in try PGEventRow.addBlock(w, session: 1, [wide][...]) }) {
                XCTAssertTrue("\($0)".contains("2^31 - 1"), "\($0)")
            }
        }
        XCTAssertEqual(try db.query("SELECT count(*) FROM event_blocks").int(0, 0), 2, "nothing of a refused block went in")
    }

    func testCopyRoundTripsEveryCharacterTheTextFormatEscapes() throws {
        let db = try connect()
        try db.execute("CREATE TEMP TABLE copy_check (n bigint, s text)")
        let values: [String?] = ["plain", "tab\there", "line\nbreak", "back\\slash", "cr\rlf", nil, "", "\\N", "é😀",
                                 "\tfirst", "last\n", "\\", "\r\n\t\\", String(repeating: "long text ", count: 50) + "\t"]
        let stored = try db.copyIn("COPY copy_check (n, s) FROM STDIN") { w in
            for (i, v) in values.enumerated() {
                w.add(Int64(i))
                w.add(v)
                try w.endRow()
            }
        }
        XCTAssertEqual(stored, values.count)
        var back: [String?] = []
        try db.forEachRow("SELECT s FROM copy_check WHERE n >= $1 ORDER BY n", ["0"]) { row in back.append(row.text(0, 0)) }
        XCTAssertEqual(back, values)
    }

    /// A copy left open, not waited for (the ingest's blocks), that the server refuses fails
    /// the next statement with the copy's own reason, never silently; the transaction then
    /// rolls back, and the connection takes statements again. One that succeeds is stored by then.
    func testACopyLeftOpenTellsItsOutcomeAtTheNextStatement() throws {
        let db = try connect()
        try db.execute("CREATE TEMP TABLE deferred_check (n bigint PRIMARY KEY)")
        try db.execute("BEGIN")
        try db.copyInKeepingOpen("COPY deferred_check FROM STDIN", with: []) { w in
            for n in [1, 2, 3] as [Int64] { w.add(n); try w.endRow() }
        }
        XCTAssertEqual(try db.query("SELECT count(*) FROM deferred_check").int(0, 0), 3)
        try db.copyInKeepingOpen("COPY deferred_check FROM STDIN", with: []) { w in
            for n in [4, 2] as [Int64] { w.add(n); try w.endRow() }
        }  // returns before the server has stored the rows
        XCTAssertThrowsError(try db.query("SELECT count(*) FROM deferred_check")) { error in
            let failure = error as? PGError
            XCTAssertEqual(failure?.sqlState, "23505", "\(error)")
            XCTAssertTrue(failure?.sql?.hasPrefix("COPY deferred_check") ?? false, "\(error)")
        }
        try db.rollback()
        XCTAssertEqual(try db.query("SELECT count(*) FROM deferred_check").int(0, 0), 0)
    }

    /// In a transaction a statement failed in, PostgreSQL answers COMMIT with ROLLBACK, not
    /// an error: `commit` says so, rather than let what was rolled back pass for stored.
    func testACommitTheServerAnswersWithRollbackFails() throws {
        let db = try connect()
        try db.execute("CREATE TEMP TABLE commit_check (n bigint)")
        try db.execute("BEGIN")
        try db.execute("INSERT INTO commit_check VALUES (1)")
        XCTAssertThrowsError(try db.execute("SELECT 1 / 0"))
        XCTAssertThrowsError(try db.commit()) { XCTAssertTrue("\($0)".contains("ROLLBACK"), "\($0)") }
        XCTAssertEqual(try db.query("SELECT count(*) FROM commit_check").int(0, 0), 0, "nothing was stored")
        try db.execute("BEGIN")
        try db.execute("INSERT INTO commit_check VALUES (2)")
        try db.commit()
        XCTAssertEqual(try db.query("SELECT count(*) FROM commit_check").int(0, 0), 1)
    }

    /// A connection with a stop request of its own, in a transaction whose COPY into temporary
    /// table `table` (three rows, each sleeping `secondsARow` in a trigger) is left open.
    func slowCopyLeftOpen(_ table: String, secondsARow: Int) throws -> (PGConnection, StopRequest) {
        guard let url = Self.url else { throw XCTSkip("no PostgreSQL server: set LCTRACE_TEST_POSTGRES_URL (.ci/run starts one)") }
        let stop = StopRequest()
        let db = try PGConnection(url: url, stop: stop)
        try db.execute("""
            CREATE TEMP TABLE \(table) (n bigint);
            CREATE FUNCTION pg_temp.\(table)_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(\(secondsARow)); RETURN NEW; END $$;
            CREATE TRIGGER slow BEFORE INSERT ON \(table) FOR EACH ROW EXECUTE FUNCTION pg_temp.\(table)_row()
            """)
        db.beginLater()
        try db.copyInKeepingOpen("COPY \(table) FROM STDIN", with: []) { w in
            for n in [1, 2, 3] as [Int64] { w.add(n); try w.endRow() }
        }
        return (db, stop)
    }

    /// A stop request while a copy left open is still being stored (each row sleeps in a
    /// trigger) ends the wait; the ROLLBACK is still sent, and the connection takes the next
    /// transaction.
    func testAStopWhileACopyLeftOpenIsStoredStillRollsBack() throws {
        let (db, stop) = try slowCopyLeftOpen("slow_copy", secondsARow: 5)
        let started = Date()
        stop.request()
        XCTAssertNoThrow(try db.rollback())
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "the stop ended the wait; the copy was cancelled")
        try db.execute("BEGIN")
        XCTAssertEqual(try db.query("SELECT count(*) FROM slow_copy").int(0, 0), 0)
        try db.commit()
    }

    /// (Issue 26) A BEGIN asked for goes with the next statement, in its round trip, however
    /// that statement is sent; a commit or rollback with nothing sent sends nothing.
    func testABeginAskedForGoesWithTheNextStatementInItsRoundTrip() throws {
        let db = try connect()
        try db.execute("CREATE TEMP TABLE later (x integer)")
        _ = try db.queryPrepared("SELECT count(*) FROM later WHERE x = $1", ["0"])
        _ = try db.queryPrepared("SELECT count(*) FROM later WHERE x = $1", ["0"])  // prepared from now on
        let sends: [(String, (PGConnection) throws -> Void)] = [
            ("simple", { try $0.execute("INSERT INTO later VALUES (1)") }),
            ("parameters", { try $0.query("INSERT INTO later VALUES ($1)", ["1"]) }),
            ("prepared", { _ = try $0.queryPrepared("SELECT count(*) FROM later WHERE x = $1", ["0"]); try $0.execute("INSERT INTO later VALUES (1)") }),
            ("pipeline", { _ = try $0.pipeline([.init(sql: "INSERT INTO later VALUES ($1)", parameters: ["1"])]) }),
            ("copy", { _ = try $0.copyIn("COPY later FROM STDIN") { w in w.add(Int64(1)); try w.endRow() } }),
        ]
        for (name, send) in sends {
            db.beginLater()
            let before = db.roundTrips
            try send(db)
            XCTAssertEqual(db.roundTrips - before, name == "prepared" ? 2 : 1, name)
            try db.rollback()
            XCTAssertEqual(try db.query("SELECT count(*) FROM later").int(0, 0), 0, "\(name): the row went in inside the transaction, and went with it")
        }
        db.beginLater()
        let before = db.roundTrips
        try db.commit()
        db.beginLater()
        try db.rollback()
        XCTAssertEqual(db.roundTrips, before, "nothing to end")
        XCTAssertFalse(db.inTransaction, "outside a transaction again")
    }

    /// (Issue 26) Statements queued with `sendWithNext` go at the head of the next round trip:
    /// a query's pipeline, a COPY's own query (their parameters written as literals), the
    /// COMMIT's; a rollback drops them unsent; a failure among them is the next call's.
    func testQueuedStatementsGoWithTheNextRoundTrip() throws {
        let db = try connect()
        try db.execute("CREATE TEMP TABLE queued (x integer, note text)")
        let note = #"it's a \ "note" $1 with é"#
        func count() throws -> Int64? { try db.query("SELECT count(*) FROM queued").int(0, 0) }
        let writes: [(String, (PGConnection) throws -> Void)] = [
            ("query", { _ = try $0.query("SELECT 1") }),
            ("copy", { _ = try $0.copyIn("COPY queued FROM STDIN") { w in w.add(Int64(0)); w.add("copied"); try w.endRow() } }),
            ("commit", { try $0.commit() }),
        ]
        for (name, send) in writes {
            db.beginLater()
            db.sendWithNext([.init(sql: "INSERT INTO queued VALUES ($1, $2)", parameters: ["7", note]),
                             .init(sql: "INSERT INTO queued VALUES ($2::integer, $1)", parameters: [nil, "8"])])
            let before = db.roundTrips
            try send(db)
            XCTAssertEqual(db.roundTrips - before, 1, name)
            if name != "commit" { try db.commit() }
            let rows = try db.query("SELECT x, note FROM queued WHERE x > 0 ORDER BY x")
            XCTAssertEqual((0..<rows.rowCount).map { [rows.text($0, 0), rows.text($0, 1)] }, [["7", note], ["8", nil]], name)
            try db.execute("DELETE FROM queued")
        }
        db.beginLater()
        db.sendWithNext([.init(sql: "INSERT INTO queued VALUES ($1, $2)", parameters: ["9", "dropped"])])
        let before = db.roundTrips
        try db.rollback()
        XCTAssertEqual(db.roundTrips, before, "dropped unsent")
        XCTAssertEqual(try count(), 0)
        db.beginLater()
        db.sendWithNext([.init(sql: "INSERT INTO queued VALUES ($1, $2)", parameters: ["not a number", "x"])])
        XCTAssertThrowsError(try db.query("SELECT 1"), "the queued insert's failure")
        try db.rollback()
        XCTAssertEqual(try count(), 0)
    }

    /// Array literals with NULL elements (the analysis's counts of many sessions in one
    /// statement) read back as written, texts with quotes, backslashes and commas included.
    func testArrayLiteralsWithNullsReadBackAsWritten() throws {
        let db = try connect()
        let texts: [String?] = ["a,b", nil, "NULL", #"q"u\o"#, "", " {x} "]
        let read = try db.query("SELECT array_to_json($1::text[])::text, array_to_json($2::bigint[])::text",
                                [PGSchema.arrayLiteral(texts), PGSchema.arrayLiteral(["-3", nil, "9223372036854775807"] as [String?])])
        XCTAssertEqual(read.text(0, 0), #"["a,b",null,"NULL","q\"u\\o",""," {x} "]"#)
        XCTAssertEqual(read.text(0, 1), "[-3,null,9223372036854775807]")
    }

    /// A queued statement whose result is awaited (`received`) hears it in the next round trip,
    /// whichever way that goes: a pipeline, or first a pipeline of its own before a simple
    /// query, a COPY or the COMMIT (which cannot carry a result back); a rollback drops it unheard.
    func testAQueuedStatementsResultReachesItsHandlerWithTheNextRoundTrip() throws {
        let db = try connect()
        try db.execute("CREATE TEMP TABLE heard (x integer)")
        let ways: [(String, Int, (PGConnection) throws -> Void)] = [
            ("query", 1, { _ = try $0.query("SELECT 1") }),
            ("statements", 2, { try $0.execute("SELECT 1; SELECT 2") }),
            ("copy", 2, { _ = try $0.copyIn("COPY heard FROM STDIN") { w in w.add(Int64(1)); try w.endRow() } }),
            ("commit", 2, { try $0.commit() }),
        ]
        for (name, requests, send) in ways {
            db.beginLater()
            var heard: [Int64?] = []
            db.sendWithNext([.init(sql: "SELECT count(*) + $1::integer FROM heard", parameters: ["40"]) { heard.append($0.int(0, 0)) },
                             .init(sql: "INSERT INTO heard VALUES (2)")])
            let before = db.roundTrips
            try send(db)
            XCTAssertEqual(db.roundTrips - before, requests, name)
            XCTAssertEqual(heard, [40], name)
            if name != "commit" { try db.commit() }
            XCTAssertEqual(try db.query("SELECT count(*) FROM heard WHERE x = 2").int(0, 0), 1, "\(name): the statement after it ran")
            try db.execute("DELETE FROM heard")
        }
        db.beginLater()
        var heard = false
        db.sendWithNext([.init(sql: "SELECT 1") { _ in heard = true }])
        try db.rollback()
        XCTAssertFalse(heard, "dropped unsent")
    }

    /// (Issue 26) Several COPYs in one query: the pending BEGIN and queued statements ahead of
    /// them, every row stored, one request; a COPY the server refuses, or whose rows fail to be
    /// written, fails the call once the query has been read, and the connection goes on.
    func testSeveralCopiesInOneQueryStoreEveryRowOrFailWhole() throws {
        let db = try connect()
        try db.execute("CREATE TEMP TABLE a (x integer); CREATE TEMP TABLE b (y text); CREATE TEMP TABLE c (z integer)")
        func counts() throws -> [Int64?] {
            try ["a", "b", "c"].map { try db.query("SELECT count(*) FROM \($0)").int(0, 0) }
        }
        func parts(_ rows: Int, badInB: Bool = false, throwingInC: Bool = false) -> [PGConnection.CopyPart] {
            [.init(sql: "COPY a FROM STDIN") { w in for i in 0..<rows { w.add(Int64(i)); try w.endRow() } },
             .init(sql: badInB ? "COPY b (no_such_column) FROM STDIN" : "COPY b FROM STDIN") { w in
                for i in 0..<rows { w.add("it's \\ \t \(i)"); try w.endRow() } },
             .init(sql: "COPY c FROM STDIN") { w in
                if throwingInC { throw CocoaError(.fileReadCorruptFile) }
                for i in 0..<rows { w.add(Int64(i)); try w.endRow() } }]
        }
        db.beginLater()
        db.sendWithNext([.init(sql: "INSERT INTO c VALUES ($1)", parameters: ["-1"])])
        let before = db.roundTrips
        try db.copyIn(parts(1000))
        XCTAssertEqual(db.roundTrips - before, 1, "one query")
        XCTAssertTrue(db.inTransaction, "the BEGIN went with it")
        try db.commit()
        XCTAssertEqual(try counts(), [1000, 1000, 1001])
        XCTAssertEqual(try db.query("SELECT y FROM b WHERE y LIKE '% 999'").text(0, 0), "it's \\ \t 999")

        var badLast = parts(10)
        badLast[2] = .init(sql: "COPY c FROM STDIN") { w in w.add("not a number"); try w.endRow() }
        var badFirst = parts(10)
        badFirst[0] = .init(sql: "COPY a FROM STDIN") { w in w.add("not a number"); try w.endRow() }
        for (name, failing, queued) in [("refused", parts(10, badInB: true), false), ("thrown", parts(10, throwingInC: true), false),
                                        ("last rows rejected", badLast, false), ("first rows rejected", badFirst, false),
                                        ("queued statement failing", parts(10), true)] {
            db.beginLater()
            if queued { db.sendWithNext([.init(sql: "INSERT INTO c VALUES ($1)", parameters: ["not a number"])]) }
            XCTAssertThrowsError(try db.copyIn(failing), name) { error in
                switch name {
                case "refused": XCTAssertTrue("\(error)".contains("no_such_column"), "\(error)")
                case "thrown": XCTAssertTrue(error is CocoaError, "\(error)")
                default: XCTAssertTrue("\(error)".contains("not a number"), "\(name): \(error)")
                }
            }
            try db.rollback()
            XCTAssertEqual(try counts(), [1000, 1000, 1001], "\(name): nothing of the query stayed")
            XCTAssertEqual(try db.query("SELECT 1").int(0, 0), 1, "\(name): the connection takes statements again")
        }
        let idle = db.roundTrips
        try db.copyIn([])
        XCTAssertEqual(db.roundTrips, idle, "nothing to send")
    }

    /// (Issue 26) Rows of several calls go into one COPY left open: one request, their
    /// statements run before the COPY (the first call's) or with the next round trip (the
    /// others'); any other statement ends it and reads its outcome, a failure thrown there; a
    /// rollback, or a body that throws, abandons it whole; another COPY's statement starts anew.
    func testACopyLeftOpenTakesTheRowsOfSeveralCallsAndEndsBeforeAnyOtherStatement() throws {
        let db = try connect()
        try db.execute("CREATE TEMP TABLE kept (x integer PRIMARY KEY); CREATE TEMP TABLE counts (n integer); INSERT INTO counts VALUES (0)")
        let bump = PGConnection.Piped(sql: "UPDATE counts SET n = n + $1::integer", parameters: ["1"])
        func rows(_ range: Range<Int>) -> (PGCopyWriter) throws -> Void {
            { w in for i in range { w.add(Int64(i)); try w.endRow() } }
        }
        func count(_ table: String) throws -> Int64? { try db.query("SELECT count(*) FROM \(table)").int(0, 0) }

        db.beginLater()
        let before = db.roundTrips
        for k in 0..<3 { try db.copyInKeepingOpen("COPY kept FROM STDIN", with: [bump], rows(k * 100..<(k + 1) * 100)) }
        try db.settle()
        XCTAssertTrue(db.hasOpenCopy, "settle leaves an open COPY alone")
        XCTAssertEqual(db.roundTrips - before, 1, "one COPY for the three")
        XCTAssertTrue(db.inTransaction)
        try db.commit()
        XCTAssertEqual(try count("kept"), 300)
        XCTAssertEqual(try db.query("SELECT n FROM counts").int(0, 0), 3, "every call's statement ran")

        // A row already stored, in the second call: the failure comes at the statement that ends the COPY.
        db.beginLater()
        try db.copyInKeepingOpen("COPY kept FROM STDIN", with: [], rows(1000..<1010))
        try db.copyInKeepingOpen("COPY kept FROM STDIN", with: [], rows(0..<1))
        XCTAssertThrowsError(try db.query("SELECT 1")) { XCTAssertTrue("\($0)".contains("duplicate key"), "\($0)") }
        try db.rollback()
        XCTAssertEqual(try count("kept"), 300)

        // A rollback, and a body that throws, abandon the rows sent.
        db.beginLater()
        try db.copyInKeepingOpen("COPY kept FROM STDIN", with: [bump], rows(2000..<2010))
        try db.rollback()
        db.beginLater()
        try db.copyInKeepingOpen("COPY kept FROM STDIN", with: [], rows(3000..<3010))
        XCTAssertThrowsError(try db.copyInKeepingOpen("COPY kept FROM STDIN", with: []) { w in
            w.add(Int64(3100)); try w.endRow()
            throw CocoaError(.fileReadCorruptFile)
        })
        try db.rollback()
        XCTAssertEqual(try count("kept"), 300)
        XCTAssertEqual(try db.query("SELECT n FROM counts").int(0, 0), 3)

        // Another COPY statement, or another kind of statement, ends the open one first.
        db.beginLater()
        let again = db.roundTrips
        try db.copyInKeepingOpen("COPY kept FROM STDIN", with: [], rows(4000..<4010))
        try db.copyInKeepingOpen("COPY kept (x) FROM STDIN", with: [], rows(4010..<4020))
        try db.execute("INSERT INTO counts VALUES (7)")
        try db.copyInKeepingOpen("COPY kept FROM STDIN", with: [], rows(4020..<4030))
        try db.commit()
        XCTAssertEqual(db.roundTrips - again, 5, "three COPYs, the insert, the COMMIT")
        XCTAssertEqual(try count("kept"), 330)
    }

    /// (Review of dfa301d) A stop while the COMMIT waits for the outcome of a COPY left open
    /// (each row sleeps in a trigger) ends the wait; the rollback returns and ends the
    /// transaction, and the server goes on serving.
    func testAStopWhileACommitWaitsForACopysOutcomeStillRollsBack() throws {
        let (db, stop) = try slowCopyLeftOpen("slow_commit", secondsARow: 1)
        let started = Date()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { stop.request() }
        XCTAssertThrowsError(try db.commit()) { XCTAssertTrue($0 is Interrupted, "\($0)") }
        XCTAssertNoThrow(try db.rollback())
        XCTAssertLessThan(Date().timeIntervalSince(started), 8, "the stop ended the wait")
        XCTAssertFalse(db.inTransaction)
        XCTAssertEqual(try connect().query("SELECT 1").int(0, 0), 1)
    }

    /// (Review of dfa301d) A `statement_timeout` counts an open COPY's whole life, the
    /// client's pause before its next batch too (a slow pipe): with `keepsCopiesOpen` off,
    /// which the ingest sets when the session has a timeout, each call's COPY ends at once
    /// and a pause longer than the timeout fails nothing.
    func testCopiesEndAtOnceWhereAStatementTimeoutWouldCountTheClientsPauses() throws {
        let db = try connect()
        try db.execute("CREATE TEMP TABLE paused (x integer); SET statement_timeout = '300ms'")
        func rows(_ range: Range<Int>) -> (PGCopyWriter) throws -> Void {
            { w in for i in range { w.add(Int64(i)); try w.endRow() } }
        }
        db.keepsCopiesOpen = false
        db.beginLater()
        try db.copyInKeepingOpen("COPY paused FROM STDIN", with: [], rows(0..<10))
        XCTAssertFalse(db.hasOpenCopy)
        Thread.sleep(forTimeInterval: 0.6)
        try db.copyInKeepingOpen("COPY paused FROM STDIN", with: [], rows(10..<20))
        Thread.sleep(forTimeInterval: 0.6)
        try db.commit()
        XCTAssertEqual(try db.query("SELECT count(*) FROM paused").int(0, 0), 20)

        // Kept open, the same pause fails the COPY: why the ingest turns it off.
        db.keepsCopiesOpen = true
        db.beginLater()
        try db.copyInKeepingOpen("COPY paused FROM STDIN", with: [], rows(20..<30))
        Thread.sleep(forTimeInterval: 0.6)
        XCTAssertThrowsError(try db.commit()) { XCTAssertEqual(($0 as? PGError)?.sqlState, "57014", "\($0)") }
        try db.rollback()
        XCTAssertEqual(try db.query("SELECT count(*) FROM paused").int(0, 0), 20)
    }

    /// A stop while the server still stores the first of two COPYs, and answers after the
    /// client gave up (the cancel too late: a trigger that swallows it stands in): the second
    /// COPY has started meanwhile. The rollback ends it and returns, within its few seconds;
    /// it used to spin for ever on the started COPY.
    func testARollbackAfterAStopBetweenTwoCopiesReturnsAndTheConnectionGoesOn() throws {
        guard let url = Self.url else { throw XCTSkip("no PostgreSQL server: set LCTRACE_TEST_POSTGRES_URL (.ci/run starts one)") }
        let stop = StopRequest()
        let db = try PGConnection(url: url, stop: stop)
        try db.execute("""
            CREATE TEMP TABLE a (x integer); CREATE TEMP TABLE c (z integer);
            CREATE FUNCTION pg_temp.slow() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              BEGIN PERFORM pg_sleep(0.8); EXCEPTION WHEN query_canceled THEN NULL; END;
              RETURN NULL;
            END $$;
            CREATE TRIGGER slow AFTER INSERT ON a FOR EACH STATEMENT EXECUTE FUNCTION pg_temp.slow();
            """)
        func rows(_ sql: String) -> PGConnection.CopyPart {
            .init(sql: sql) { w in for i in 0..<5 { w.add(Int64(i)); try w.endRow() } }
        }
        db.beginLater()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { stop.request() }
        XCTAssertThrowsError(try db.copyIn([rows("COPY a FROM STDIN"), rows("COPY c FROM STDIN")])) {
            XCTAssertTrue($0 is Interrupted, "\($0)")
        }
        let started = Date()
        nonisolated(unsafe) let connection = db
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? connection.rollback()
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 15), .success, "the rollback returned")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        XCTAssertEqual(try db.query("SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM c)").int(0, 0), 0, "nothing stayed")
    }

    /// A statement's parameters written into it as literals read back as the parameters do,
    /// whatever they hold (a `$2` in a value is not a parameter), past nine of them too.
    func testParametersWrittenAsLiteralsReadAsParameters() throws {
        let db = try connect()
        let values: [String?] = ["plain", "it's", #"back\slash"#, "$2 and $1", nil, "é 😀", "", "tab\there", "9", "10", "eleven"]
        let sql = "SELECT " + (1...values.count).reversed().map { "$\($0)::text" }.joined(separator: ", ")
        let text = try XCTUnwrap(db.inlined(.init(sql: sql, parameters: values)))
        let literal = try db.query(text), parameter = try db.query(sql, values)
        for c in 0..<values.count {
            XCTAssertEqual(literal.text(0, c), parameter.text(0, c), "column \(c + 1)")
            XCTAssertEqual(literal.text(0, c), values[values.count - 1 - c])
        }
        XCTAssertNil(db.inlined(.init(sql: "SELECT '$1'", parameters: ["x"])), "a quote in the statement")
        XCTAssertNil(db.inlined(.init(sql: "SELECT $2::text", parameters: ["x"])), "a parameter it lacks")
    }

    /// The key of a file row's advisory lock, computed by the server from the row's id (when
    /// the row is made) and by lctrace from the id (when it is taken, let go): the same for
    /// every id, past 32 bits too.
    func testTheServerComputesAFileLockKeyAsTheClientDoes() throws {
        let db = try connect()
        for id: Int64 in [1, 41, 2_147_483_647, 2_147_483_648, 4_294_967_295, 4_294_967_296 + 7, Int64.max] {
            let key = try db.query("SELECT " + PGIngestSink.fileLockKey("$1::bigint"), [String(id)]).int(0, 0)
            XCTAssertEqual(key, Int64(Int32(truncatingIfNeeded: id)), "id \(id)")
        }
    }

    /// A text[] parameter (new texts, new sessions' sids) gives back every text as it was: the
    /// array syntax's quotes, backslashes, braces, commas, the word NULL, spaces and non-ASCII.
    func testTextArrayLiteralsRoundTripEveryCharacterTheArraySyntaxQuotes() throws {
        let db = try connect()
        let values = ["plain", "with \"quotes\"", "back\\slash", "\\\"", "{braces}", "a,b", "NULL", "null", "", " padded ",
                      "tab\tline\n", "é😀 Ω", "\\N", "\"", String(repeating: "0x7f", count: 300)]
        let rows = try db.query("SELECT u, ord FROM unnest($1::text[]) WITH ORDINALITY AS x(u, ord) ORDER BY ord", [PGSchema.arrayLiteral(values)])
        XCTAssertEqual((0..<rows.rowCount).map { rows.text($0, 0) }, values)
        XCTAssertEqual(try db.query("SELECT cardinality($1::text[])", [PGSchema.arrayLiteral([String]())]).int(0, 0), 0)
    }

    /// Numbers are written digit by digit into the copy's buffer: every width and both signs,
    /// the extremes included, come back as they went.
    func testCopyRoundTripsEveryWidthOfNumber() throws {
        let db = try connect()
        try db.execute("CREATE TEMP TABLE numbers (i integer, n bigint)")
        var values: [Int64?] = [0, -1, 9, 10, -10, 99, 100, Int64.max, Int64.min, Int64.max - 1, Int64.min + 1, nil]
        var p: Int64 = 1
        for _ in 0..<18 { p *= 10; values += [p - 1, p, p + 1, -p, -(p - 1)] }
        XCTAssertEqual(try db.copyIn("COPY numbers FROM STDIN") { w in
            for (i, v) in values.enumerated() { w.add(Int64(i)); w.add(v); try w.endRow() }
        }, values.count)
        var back: [Int64?] = []
        try db.forEachRow("SELECT n FROM numbers WHERE i >= $1 ORDER BY i", ["0"]) { row in back.append(row.int(0, 0)) }
        XCTAssertEqual(back, values)
    }

    func testCopyStreamsManyRowsInChunks() throws {
        let db = try connect()
        try db.execute("CREATE TEMP TABLE many (n bigint, s text)")
        let n = 200_000
        let stored = try db.copyIn("COPY many FROM STDIN") { w in
            for i in 0..<n { w.add(Int64(i)); w.add("row \(i) with some text to fill the buffer"); try w.endRow() }
        }
        XCTAssertEqual(stored, n)
        XCTAssertEqual(try db.query("SELECT count(*), sum(n) FROM many").int(0, 1), Int64(n * (n - 1) / 2))
    }

    func testErrorsCarryTheSQLStateAndNeverTheParameters() throws {
        let db = try connect()
        XCTAssertThrowsError(try db.query("SELECT * FROM no_such_table WHERE x = $1", ["secret-value"])) { error in
            let e = error as! PGError
            XCTAssertEqual(e.sqlState, "42P01")
            XCTAssertFalse(e.description.contains("secret-value"))
        }
        // The connection is usable after a failure, inside and outside a transaction.
        XCTAssertThrowsError(try db.transaction { try db.execute("SELECT 1/0") })
        XCTAssertEqual(try db.query("SELECT 41 + 1").int(0, 0), 42)
        XCTAssertThrowsError(try db.copyIn("COPY no_such_table FROM STDIN") { _ in })
        XCTAssertEqual(try db.query("SELECT 1").int(0, 0), 1)
    }

    func testAFailingRowCallbackStopsTheStreamAndLeavesTheConnectionUsable() throws {
        let db = try connect()
        struct Stop: Error {}
        var seen = 0
        XCTAssertThrowsError(try db.forEachRow("SELECT generate_series(1, 100000)") { _ in
            seen += 1
            if seen == 10 { throw Stop() }
        }) { XCTAssertTrue($0 is Stop) }
        XCTAssertEqual(try db.query("SELECT 7").int(0, 0), 7)
    }

    /// libpq's messages span lines with tab indents; `Error:` shows them as one line (no server needed).
    func testLibpqMessagesAreToldOnOneLine() {
        XCTAssertEqual(PGConnection.oneLine("server closed the connection unexpectedly\n\tThis probably means the server terminated\n"),
                       "server closed the connection unexpectedly This probably means the server terminated")
        XCTAssertEqual(PGConnection.oneLine("  \r\n"), "")
    }

    func testAnUnreachableServerIsAClearErrorWithoutThePassword() {
        XCTAssertThrowsError(try PGConnection(url: "postgresql://qa:hunter2@127.0.0.1:1/none?connect_timeout=2")) { error in
            let e = error as! PGError
            XCTAssertTrue(e.isConnectionFailure)
            XCTAssertTrue(e.message.contains("postgresql://qa@127.0.0.1:1/none"), e.message)
            XCTAssertFalse(e.message.contains("hunter2"))
        }
        // libpq quotes a parameter it cannot decode: the password is taken out of its words too.
        XCTAssertThrowsError(try PGConnection(url: "postgresql://qa@127.0.0.1:1/none?password=hunter2%zz")) { error in
            XCTAssertFalse("\(error)".contains("hunter2"), "\(error)")
        }
    }

    /// A pooler in transaction mode hands each transaction to whichever server session is free:
    /// lctrace's prepared statements then vanish (or their names are taken) between two
    /// statements. The error says so and what to do, instead of only "prepared statement
    /// lctrace_p1 does not exist". (DEALLOCATE ALL stands in for the pooler's switch.)
    func testALostPreparedStatementIsToldAsASessionChangedUnderneathAsByAPooler() throws {
        let db = try connect()
        let sql = "SELECT count(*) FROM pg_class WHERE relpages >= $1"
        _ = try db.queryPrepared(sql, ["0"])
        _ = try db.queryPrepared(sql, ["0"])  // prepared (lctrace_pN) from now on
        try db.execute("DEALLOCATE ALL")
        XCTAssertThrowsError(try db.queryPrepared(sql, ["0"])) { error in
            let e = error as? PGError
            XCTAssertEqual(e?.sqlState, "26000", "\(error)")
            XCTAssertTrue("\(error)".contains("as behind a pooler in transaction mode"), "\(error)")
            XCTAssertTrue("\(error)".contains("through a pooler in session mode"), "\(error)")
        }
    }

    /// The hint goes only with lctrace's own prepared statements and temporary tables, never
    /// with a user's query naming something alike (no server needed).
    func testOnlyLctracesOwnSessionObjectsGetThePoolerHint() {
        let hint = PGConnection.sessionChangedHint
        XCTAssertFalse(hint("26000", #"prepared statement "lctrace_p12" does not exist"#).isEmpty)
        XCTAssertFalse(hint("42P05", #"prepared statement "lctrace_p1" already exists"#).isEmpty)
        XCTAssertFalse(hint("42P01", #"relation "lctrace_batch" does not exist"#).isEmpty)
        XCTAssertFalse(hint("42P01", #"relation "lctrace_inserted" does not exist"#).isEmpty)
        XCTAssertEqual(hint("26000", #"prepared statement "mine" does not exist"#), "")
        XCTAssertEqual(hint("26000", #"prepared statement "lctrace_plan" does not exist"#), "")
        XCTAssertEqual(hint("42P01", #"relation "lctrace_daily" does not exist"#), "", "a user's own view")
        XCTAssertEqual(hint("42P01", #"missing FROM-clause entry for table "lctrace_x""#), "")
        XCTAssertEqual(hint("42P01", #"relation "events" does not exist"#), "")
        XCTAssertEqual(hint("23505", #"duplicate key value violates unique constraint "lctrace_p1""#), "")
    }
}
