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

/// Every command on a PostgreSQL database, beside the same command on SQLite, and
/// `lctrace query`'s read-only promise on the server (a real one: `LCTRACE_TEST_POSTGRES_URL`).
final class PostgreSQLCommandTests: PostgreSQLTestCase {
    var roles: [String] = []

    override func tearDown() {
        for role in roles {
            for schema in schemas { try? admin?.execute("REVOKE ALL ON ALL TABLES IN SCHEMA \(schema) FROM \(role)") }
            try? admin?.execute("DROP OWNED BY \(role)")
            try? admin?.execute("DROP ROLE IF EXISTS \(role)")
        }
        super.tearDown()
    }

    private var samples: String { TestSupport.root.appendingPathComponent("SampleTraces").path }

    /// SampleTraces in SQLite and in a fresh PostgreSQL schema.
    private func bothDatabases() throws -> (sqlite: String, pg: String) {
        let sqlite = dir + "/s.db", pg = try freshDatabase()
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", sqlite, samples]).status, 0)
        let r = TestSupport.run(["ingest", "-q", "--db", pg, samples])
        XCTAssertEqual(r.status, 0, r.err)
        return (sqlite, pg)
    }

    /// The same words from both backends, once the database's own name (quoted for a shell, in
    /// HTML too) is taken out.
    private func assertSame(_ args: [String], _ dbs: (sqlite: String, pg: String), status: Int32 = 0,
                            file: StaticString = #filePath, line: UInt = #line) {
        let a = TestSupport.run(args + ["--db", dbs.sqlite]), b = TestSupport.run(args + ["--db", dbs.pg])
        XCTAssertEqual(a.status, status, "\(args) on SQLite: \(a.err)", file: file, line: line)
        XCTAssertEqual(b.status, a.status, "\(args) on PostgreSQL: \(b.err)", file: file, line: line)
        // The database's name (quoted for a shell where it needs it) and the seconds a run took.
        func plain(_ text: String, _ db: String) -> String {
            text.replacingOccurrences(of: "'\(db)'", with: "DB").replacingOccurrences(of: "&#39;\(db)&#39;", with: "DB")
                .replacingOccurrences(of: db, with: "DB")
                .replacingOccurrences(of: #"in [0-9.]+ s"#, with: "in … s", options: .regularExpression)
        }
        let left = plain(a.out, dbs.sqlite), right = plain(b.out, dbs.pg)
        XCTAssertFalse(left.isEmpty, "\(args) printed nothing", file: file, line: line)
        XCTAssertEqual(left, right, "\(args) differs between the backends", file: file, line: line)
    }

    /// report (text, HTML), sessions, timeline, export, baseline, report --baseline, compare,
    /// analyze and query print the same on PostgreSQL as on SQLite.
    func testEveryCommandPrintsTheSameOnBothBackends() throws {
        let dbs = try bothDatabases()
        assertSame(["report", "--fail-on", "never"], dbs)
        assertSame(["report", "--leaks", "--format", "json", "--fail-on", "never"], dbs)
        assertSame(["sessions", "--format", "csv"], dbs)
        let sid = try XCTUnwrap(TestSupport.run(["sessions", "--db", dbs.sqlite, "--format", "csv"]).out
            .split(separator: "\n").dropFirst().first?.split(separator: ",").first.map(String.init))
        assertSame(["timeline", "--session", sid, "--lanes", "0"], dbs)
        assertSame(["export", "--session", sid, "-o", "-"], dbs)
        assertSame(["query", "-f", "csv", "SELECT class, count(*) AS n FROM instances_v GROUP BY class ORDER BY class NULLS FIRST"], dbs)
        assertSame(["analyze", "--all"], dbs)
        // A baseline from each, byte for byte, and each one read back by the other backend.
        for (db, file) in [(dbs.sqlite, dir + "/a.json"), (dbs.pg, dir + "/b.json")] {
            XCTAssertEqual(TestSupport.run(["baseline", "--db", db, "-o", file]).status, 0)
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: dir + "/a.json")), try Data(contentsOf: URL(fileURLWithPath: dir + "/b.json")))
        assertSame(["report", "--baseline", dir + "/a.json", "--format", "json", "--fail-on", "warning"], dbs)
        // The examples drawn read their windows through the same queries on both (seq ranges,
        // the background a window opens in, rows shared by a session's examples).
        assertSame(["report", "--format", "html", "--fail-on", "never"], dbs)
        XCTAssertTrue(TestSupport.run(["report", "--db", dbs.pg, "--format", "html", "--fail-on", "never"]).out.contains("<svg"))
        assertSame(["timeline", "--session", sid, "--window", "3s"], dbs)
        let builds = TestSupport.run(["query", "--db", dbs.sqlite, "-f", "csv", "SELECT DISTINCT build FROM sessions WHERE build IS NOT NULL ORDER BY build"])
            .out.split(separator: "\n").dropFirst().map(String.init)
        if builds.count >= 2 {
            assertSame(["compare", "--base-build", builds[0], "--head-build", builds[1], "--fail-on", "never"], dbs)
        }
    }

    /// What `query` refuses on the server is refused before it changes anything (exit 64),
    /// including a second statement smuggled past the word scan in an E'' string.
    func testQueryOnTheServerIsReadOnly() throws {
        let (_, pg) = try bothDatabases()
        let count = { TestSupport.run(["query", "--db", pg, "-f", "csv", "SELECT count(*) AS n FROM events"]).out }
        let before = count()
        XCTAssertTrue(before.hasPrefix("n\n"), before)
        let refused = [
            "DELETE FROM events",
            "COPY events TO STDOUT",
            "COPY (SELECT 1) TO PROGRAM 'true'",
            "DO $$ BEGIN DELETE FROM events; END $$",
            "CALL nothing()",
            "WITH gone AS (DELETE FROM events RETURNING 1) SELECT count(*) FROM gone",
            "SELECT 1; DELETE FROM events",
            "SELECT E'\\''; COMMIT; DELETE FROM events; --'",
            "SELECT set_config('transaction_read_only', 'off', false), count(*) FROM (DELETE FROM events RETURNING 1) d",
            "SELECT nextval('no_such_sequence')",
            "SELECT * FROM no_such_table",
            "SELEC 1",
            // Hidden from a scan that read `$` in an identifier as a dollar quote.
            "WITH a$b$ AS (DELETE FROM sessions RETURNING 1) SELECT * FROM a$b$",
            // Functions with effects a READ ONLY transaction allows.
            "SELECT pg_advisory_lock(1), pg_sleep(0)",
            "SELECT pg_try_advisory_xact_lock(7)",
            "SELECT pg_terminate_backend(pg_backend_pid())",
            "SELECT set_config('statement_timeout', '0', false)",
            "SELECT pg_notify('x', 'y')",
            // The same, with the names quoted or escaped.
            "SELECT \"pg_terminate_backend\"(pid) FROM pg_stat_activity WHERE application_name = 'lctrace'",
            "SELECT \"pg_read_file\"('/etc/hostname')",
            "SELECT U&\"pg_read_fil\\0065\"('/etc/hostname')",
            "SELECT \"set_config\"('statement_timeout', '0', false)",
            "SELECT \"pg_advisory_lock\"(1)",
        ]
        for sql in refused {
            let r = TestSupport.run(["query", "--db", pg, sql])
            XCTAssertEqual(r.status, 64, "\(sql) → \(r.status): \(r.err)")
            XCTAssertTrue(r.err.hasPrefix("Error: "), r.err)
        }
        XCTAssertEqual(count(), before, "a refused statement changed the events")
        // The README's queries start with a comment; a trailing semicolon is fine.
        let q = TestSupport.run(["query", "--db", pg, "-- how many\nSELECT count(*) AS n FROM events_v;"])
        XCTAssertEqual(q.status, 0, q.err)
        XCTAssertEqual(q.out.split(separator: "\n").count >= 3, true, q.out)
    }

    /// `--timeout` stops a long query on the server (exit 74, said plainly), for the whole
    /// query and not only each page of it.
    func testQueryTimeoutStopsTheServer() throws {
        let url = try freshDatabase()
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", url, samples]).status, 0)
        let started = Date()
        let r = TestSupport.run(["query", "--db", url, "--timeout", "300ms", "SELECT pg_sleep(20)"])
        XCTAssertEqual(r.status, 74, r.err)
        XCTAssertTrue(r.err.contains("query stopped after 300ms (--timeout)"), r.err)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        // Many pages, each fast, together past the deadline: a row per 2 ms, 5,000 rows.
        let paged = TestSupport.run(["query", "--db", url, "--timeout", "1s", "-f", "csv",
                                     "SELECT g, pg_sleep(0.002) FROM generate_series(1, 5000) g"])
        XCTAssertEqual(paged.status, 74, paged.err)
        XCTAssertTrue(paged.err.contains("query stopped"), paged.err)
        // The DECLARE and the opening are inside the deadline too: a table another session
        // holds locked (the opening's schema check waits on it), and a plan that evaluates a
        // large constant expression before any row.
        let locker = try PGConnection(url: url)
        // The server ends the locker after 8 s idle: a query that waits on the lock fails the
        // test on its duration rather than hanging it.
        try locker.execute("SET idle_in_transaction_session_timeout = '8s'; BEGIN; LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
        let lockedStart = Date()
        let locked = TestSupport.run(["query", "--db", url, "--timeout", "1s", "SELECT count(*) FROM events"])
        XCTAssertEqual(locked.status, 74, locked.err)
        XCTAssertTrue(locked.err.contains("query stopped after 1s"), locked.err)
        XCTAssertLessThan(Date().timeIntervalSince(lockedStart), 4, "waited on the lock past --timeout")
        try? locker.execute("ROLLBACK")
        let planStart = Date()
        let planned = TestSupport.run(["query", "--db", url, "--timeout", "500ms",
                                       "SELECT length(regexp_replace(repeat('ab', 20000000), 'a', 'cc', 'g'))"])
        XCTAssertEqual(planned.status, 74, planned.err)
        XCTAssertLessThan(Date().timeIntervalSince(planStart), 3.5, "planning ran past --timeout")
        // A quick query under a timeout runs.
        XCTAssertEqual(TestSupport.run(["query", "--db", url, "--timeout", "30s", "SELECT 1 AS one"]).status, 0)
    }

    /// `query` runs as the reader role the schema set-up made (SELECT on the tables and views,
    /// nothing else), entered with SET ROLE: a superuser login loses its powers there. A login
    /// that cannot enter it reads with its own privileges and is told so; the README's
    /// read-only role reads the views and cannot write even outside lctrace.
    func testQueryRunsAsTheReaderRole() throws {
        let url = try freshDatabase()
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", url, samples]).status, 0)
        let reader = PGSchema.readerRole
        let schema = try XCTUnwrap(schemas.last)
        let privileges = try admin.query("""
            SELECT has_table_privilege($1, $2 || '.events', 'SELECT'), has_table_privilege($1, $2 || '.findings_v', 'SELECT'),
                   has_table_privilege($1, $2 || '.events', 'INSERT'), has_table_privilege($1, $2 || '.meta', 'UPDATE')
            """, [reader, schema])
        XCTAssertEqual((0..<4).map { privileges.text(0, $0) }, ["t", "t", "f", "f"], "the reader role reads and only reads")
        let asAdmin = TestSupport.run(["query", "--db", url, "-f", "csv", "SELECT current_user AS u, count(*) AS n FROM findings_v"])
        XCTAssertEqual(asAdmin.status, 0, asAdmin.err)
        XCTAssertTrue(asAdmin.out.hasPrefix("u,n\n\(reader),"), asAdmin.out)
        XCTAssertEqual(asAdmin.err, "", "no warning once the reader role is entered")
        // What the login (a superuser) could run, the reader role cannot: the server refuses.
        let wal = TestSupport.run(["query", "--db", url, "SELECT count(*) FROM pg_ls_waldir()"])
        XCTAssertEqual(wal.status, 64, wal.err)
        XCTAssertTrue(wal.err.contains("permission denied"), wal.err)

        let role = "qa_" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        roles.append(role)
        try admin.execute("CREATE ROLE \(role) LOGIN")
        try admin.execute("GRANT USAGE ON SCHEMA \(schema) TO \(role)")
        try admin.execute("GRANT SELECT ON ALL TABLES IN SCHEMA \(schema) TO \(role)")
        let base = try XCTUnwrap(PGConnectionTests.url)
        let qa = url.replacingOccurrences(of: "://lctrace@", with: "://\(role)@")
        XCTAssertNotEqual(qa, url, "the test URL names its user as lctrace@: \(base)")
        let r = TestSupport.run(["query", "--db", qa, "-f", "csv", "SELECT current_user AS u, count(*) AS n FROM sessions"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.hasPrefix("u,n\n\(role),"), r.out)
        XCTAssertTrue(r.err.contains("no reader role could be entered") && r.err.contains(reader), r.err)
        XCTAssertFalse(r.err.contains("superuser"), r.err)
        XCTAssertEqual(TestSupport.run(["report", "--db", qa, "--fail-on", "never"]).status, 0, "report reads with the role")
        // The role cannot write, whatever client it uses.
        let direct = try PGConnection(url: qa)
        XCTAssertThrowsError(try direct.execute("DELETE FROM event_blocks")) { error in
            XCTAssertEqual((error as? PGError)?.sqlState, "42501", "\(error)")
        }
        let w = TestSupport.run(["ingest", "-q", "--db", qa, samples])
        XCTAssertEqual(w.status, 74, "an ingest with the read-only role fails: \(w.err)")
        // Made a member of the reader role, the login enters it.
        try admin.execute("GRANT \(reader) TO \(role)")
        let member = TestSupport.run(["query", "--db", qa, "-f", "csv", "SELECT current_user AS u FROM meta LIMIT 1"])
        XCTAssertEqual(member.out, "u\n\(reader)\n", member.err)
        XCTAssertEqual(member.err, "")
    }
}

/// `lctrace query`'s check of a user's SQL before it reaches a server (no server needed).
final class PGWordScanTests: XCTestCase {
    /// The word scan reads SQL as PostgreSQL's lexer does: nothing hidden,
    /// nothing harmless refused.
    func testTheWordScanFollowsPostgreSQLsLexer() {
        func words(_ sql: String) -> [String] { PGDialect.scan(sql).words }
        XCTAssertTrue(words("WITH a$b$ AS (DELETE FROM s RETURNING 1) SELECT * FROM a$b$").contains("delete"), "$ inside an identifier")
        XCTAssertEqual(words("SELECT $a1$ delete $a1$"), ["select"], "a tag with digits")
        XCTAssertEqual(words("SELECT $$ update $$, 1"), ["select", "1"])
        XCTAssertFalse(words("SELECT E'\\'' AS x, 'update' AS y").contains("update"), "E'' takes backslash escapes")
        XCTAssertEqual(PGDialect.scan("SELECT E'\\'; DELETE FROM events; --'").separators, 0, "one E'' string")
        XCTAssertEqual(PGDialect.scan("SELECT 'it''s'; DELETE FROM events").separators, 1)
        XCTAssertEqual(words("SELECT 1 /* a /* nested */ delete */"), ["select", "1"], "block comments nest")
        XCTAssertEqual(PGDialect.scan("SELECT 1 /* /* */ */; DELETE FROM t").words.last, "t")
        XCTAssertEqual(words("SELECT $1"), ["select", "1"], "a parameter is no quote")
        XCTAssertEqual(words("SELECT \"delete\" FROM t -- update"), ["select", "from", "t"])
    }

    /// A function refused by name is refused however its name is spelt: quoted, in capitals,
    /// with `U&` escapes (and another escape character), schema-qualified; a quoted name
    /// that is only a keyword's spelling is a harmless identifier.
    func testRefusedFunctionsAreRefusedWhateverTheirSpelling() {
        let attacks = [
            "SELECT \"pg_terminate_backend\"(pid) FROM pg_stat_activity WHERE false",
            "SELECT \"PG_TERMINATE_BACKEND\"(1)",
            "SELECT \"pg_catalog\".\"pg_terminate_backend\"(1)",
            "SELECT \"pg_read_file\"('/etc/passwd')",
            "SELECT U&\"pg_read_fil\\0065\"('/etc/passwd')",
            "SELECT u&\"pg_read_\\+000066ile\"('/etc/passwd')",
            "SELECT U&\"pg_read_fil!0065\" UESCAPE '!' ('/etc/passwd')",
            "SELECT \"set_config\"('role', 'lctrace', false)",
            "SELECT \"pg_advisory_lock\"(1)",
            "SELECT \"pg_try_advisory_xact_lock\"(1)",
            "SELECT \"pg_\"\"x\" FROM t, \"pg_notify\"('a', 'b')",
            "SELECT query_to_xml('SELECT pg_terminate_backend(1)', true, true, '')",
            "SELECT * FROM ts_stat('SELECT 1')",
        ]
        for sql in attacks {
            XCTAssertThrowsError(try PGUserQuery.checked(sql), sql) { error in
                XCTAssertTrue(error is QueryRefused, "\(sql): \(error)")
            }
        }
        for sql in ["SELECT \"delete\", \"set\" FROM t", "SELECT U&\"d\\0061ta\" FROM t", "SELECT \"pg_read\" FROM t"] {
            XCTAssertNoThrow(try PGUserQuery.checked(sql), sql)
        }
    }
}
