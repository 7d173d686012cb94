import Foundation
import LCTraceStore
import LCTraceModel

/// The team backend: a PostgreSQL database through libpq (`--db postgresql://…`). The tables
/// live in the connection's schema (`public`, or `?options=-csearch_path=…` in the URL).
/// A read-only command works in one REPEATABLE READ, READ ONLY snapshot; a writing one loads
/// with COPY and analyses while loading where it can, else after (see `PGIngestSink`,
/// PGLoadingAnalysis.swift, `PGAnalysisStore`).
final class PGBackend: StorageBackend {
    private let url: String
    private let name: String
    private let main: PGConnection
    private let read: PGReadConnection
    private let writing: Bool
    private lazy var strings = PGStrings(url: url, stop: main.stop)
    private let ingesters = PGIngestersLock()
    /// `lctrace query --timeout`: a deadline from the moment the database is opened, so
    /// connecting and checking the schema (which waits on a table another session locked)
    /// count too.
    private let deadline: PGDeadline?

    /// `stop`: ends every wait on the server, connecting included (see `PGConnection.stop`).
    package init(url: String, writing: Bool, create: Bool = true, timeout: Double? = nil, stop: StopRequest? = nil) throws {
        self.url = url
        name = PGConnection.withoutPassword(url)
        self.writing = writing
        deadline = timeout.map(PGDeadline.init(seconds:))
        main = try PGConnection(url: url, connectTimeout: try deadline?.secondsLeft(), stop: stop)
        try deadline?.limit(main)
        try PGSchema.prepare(main, name: name, writing: writing, create: create)
        read = PGReadConnection(pg: main, snapshot: !writing, url: url)
    }

    package var ddl: String { PGSchema.ddl }
    package var reader: any SQLReadConnection { read }

    package func readSessionSource() throws -> any SessionSource { try PGSessionSource(connection: read) }

    package func analysisStore() throws -> any AnalysisStore {
        precondition(writing, "an analysis asked of a database opened read-only")
        return try PGAnalysisStore(connection: PGReadConnection(pg: main, snapshot: false), strings: strings)
    }

    package func ingestSink() throws -> any IngestSink {
        precondition(writing, "an ingest asked of a database opened read-only")
        return try PGIngestSink(pg: main, url: url, ingesters: ingesters)
    }

    package func readOnlyQuery(_ sql: String) throws -> any QueryRows {
        try PGUserQuery(pg: try PGConnection(url: url, connectTimeout: try deadline?.secondsLeft(), stop: main.stop), sql: sql, deadline: deadline)
    }

    /// The tables an ingest writes, whose statistics `refreshPlannerStatistics` renews.
    static let ingestedTables = "sessions, strings, files, file_sessions, event_blocks, instances, appearances, containment, findings"

    /// `ANALYZE` of the ingested tables when the blocks of events changed by a tenth or more
    /// since their last `ANALYZE` (autovacuum's own default threshold, from the server's
    /// counters), or never had one: a bulk load is planned for at once, not after autovacuum's
    /// next turn. Of several ingesters into one schema, only the last to end analyses
    /// (`PGIngestersLock`): the others' `ANALYZE` would be stale before it ended (four on
    /// disjoint quarters analysed four times, 30–90 ms of the server's CPU each).
    /// With a statistics target of 10 (a sample of 3,000 rows a table, not 30,000): the reading
    /// commands' plans and times on 10 M events are the same as with the default 100, and the
    /// `ANALYZE` takes 0.26 s instead of 1.15 (0.04 s instead of 0.25 on 0.7 M events). The
    /// statistics stay at that target until autovacuum analyses a table again (after about as
    /// many changes as make the next ingest do it). Each table is analysed in a transaction of
    /// its own (`ANALYZE` of a list outside a transaction block), so no table's lock is held
    /// for the others. A table this role does not own is skipped by the server with a
    /// warning, not an error.
    package func refreshPlannerStatistics(afterAdding events: Int) throws {
        guard writing, events > 0 || ingesters.held else { return }
        // This connection's own last counts, which the server flushes about once a second
        // (PostgreSQL 15 and later; an older server's counters lag by as much).
        let flushed = (try? main.execute("SELECT pg_stat_force_next_flush()")) != nil
        // Left to another ingest only when it will count this one's changes: an older server
        // (no pg_stat_force_next_flush) may not show them yet to an ingest ending soon after.
        guard try ingesters.letGo(main) || !flushed else { return }
        let counters = try main.query("""
            SELECT coalesce(last_analyze, last_autoanalyze) IS NULL OR n_mod_since_analyze >= n_live_tup / 10
            FROM pg_stat_user_tables WHERE relid = to_regclass('event_blocks')
            """)
        guard counters.rowCount == 0 || counters.text(0, 0) != "f" else { return }
        try main.execute("SET default_statistics_target = \(Self.ingestStatisticsTarget)")
        defer { try? main.execute("RESET default_statistics_target") }
        try main.execute("ANALYZE " + Self.ingestedTables)
    }

    /// The statistics target of the ingest's `ANALYZE` (see `refreshPlannerStatistics`).
    static let ingestStatisticsTarget = 10

    package func tidyAfterInterruption() {}

    package func close() {}
}

/// (Issue 26) The lock every ingest of a schema holds, shared, from its first file to load
/// until its end (`PGBackend.refreshPlannerStatistics`), so that of several ingesters only the
/// last to end analyses the tables. An ingest ending while another holds it leaves the
/// `ANALYZE` to that one, which ends later and then counts and samples this one's rows too
/// (committed before it let go). Taken exclusively only to ask whether
/// any other holds it, in one statement, so a new ingest never waits for it. Session-level:
/// an ingest that fails or is killed lets go with its connection, and autovacuum analyses
/// what it leaves (an ingest that never ends keeps the others' `ANALYZE` for autovacuum too).
/// A failed load lets go at once (`PGIngestSink.releaseLoads`), and a failed run then
/// refreshes the statistics as one that ended (`IngestRun.run`), so the ingests that left
/// theirs to it are not left to autovacuum; a killed one's are.
final class PGIngestersLock {
    private static let key = "(\(PGSchema.ingestersLockClass), hashtext(current_schema()))"
    /// Taken on this connection (asked for: the statement goes with the next round trip).
    private(set) var held = false

    /// The statement that takes it, once a run; nil when it is held already.
    func take() -> PGConnection.Piped? {
        guard !held else { return nil }
        held = true
        return PGConnection.Piped(sql: "SELECT pg_advisory_lock_shared\(Self.key)")
    }

    /// Lets go of it without asking (a failed load). `held` stays set when the server could
    /// not be told (a failed transaction): a second share is never taken, and the next
    /// `release` or `letGo` tries again.
    func release(_ pg: PGConnection) {
        guard held, (try? pg.query("SELECT pg_advisory_unlock_shared\(Self.key)")) != nil else { return }
        held = false
    }

    /// Lets go of it; true when no other ingest of this schema holds it (this one ends last),
    /// or when this one did not hold it.
    func letGo(_ pg: PGConnection) throws -> Bool {
        guard held else { return true }
        let last = try pg.query("""
            SELECT CASE WHEN NOT pg_advisory_unlock_shared\(Self.key) THEN true
                        WHEN pg_try_advisory_lock\(Self.key) THEN pg_advisory_unlock\(Self.key)
                        ELSE false END
            """).text(0, 0) != "f"
        held = false
        return last
    }
}

/// A user's statement on PostgreSQL (`lctrace query`): exactly one statement that reads,
/// run inside a READ ONLY transaction with a statement timeout, on a connection of its own.
/// The server refuses every write there. Four locks: the words COPY, DO, CALL and the like
/// are refused before anything is sent; the statement goes through the extended protocol
/// (`PQexecParams`), which runs one statement and never a second one smuggled past the scan
/// (`…; COMMIT; DELETE …` would leave the READ ONLY transaction under `PQexec`); it runs as
/// a cursor, which PostgreSQL refuses for data-modifying CTEs; and `--timeout` is a deadline
/// for the whole query, each page's FETCH given only the time left.
final class PGUserQuery: QueryRows {
    private let pg: PGConnection
    private let cursor = "lctrace_user"
    private var page: PGResult?
    private var row = -1
    private var done = false
    private let first: PGResult
    private let deadline: PGDeadline?
    /// Rows fetched at a time: enough to keep the round trips cheap, few enough for flat memory.
    static let pageRows = 1000
    /// True when the role is a superuser or a member of the roles that read or write the
    /// server's files or run its programs.
    let isSuperuser: Bool
    package let role: String
    /// Why the query could not run as `PGSchema.readerRole` (it runs with the login's own
    /// privileges then); nil when it runs as the reader.
    let noReader: (why: String, remedy: String)?

    package init(pg: PGConnection, sql: String, deadline: PGDeadline?) throws {
        self.pg = pg
        self.deadline = deadline
        let statement = try Self.checked(sql)
        // Every statement runs with the time left as its statement timeout: the DECLARE too,
        // which waits for locks and plans (evaluating constant expressions) before any FETCH.
        try deadline?.limit(pg)
        let who = try pg.query("""
            SELECT current_user::text, rolsuper OR pg_has_role(current_user, 'pg_read_server_files', 'MEMBER')
                OR pg_has_role(current_user, 'pg_write_server_files', 'MEMBER')
                OR pg_has_role(current_user, 'pg_execute_server_program', 'MEMBER')
            FROM pg_roles WHERE rolname = current_user
            """)
        role = who.text(0, 0) ?? "?"
        isSuperuser = who.text(0, 1) == "t"
        try pg.execute(PGConnection.beginSnapshot)
        // The server's privileges do the work: the reader role reads lctrace's tables and
        // views and nothing else (no server files, no other sessions, no writes).
        noReader = try PGSchema.readerState(pg).problem
        if noReader == nil { try pg.execute("SET LOCAL ROLE \(PGSchema.readerRole)") }
        let name = cursor
        try deadline?.limit(pg)
        try Self.userFaults { try pg.query("DECLARE \(name) NO SCROLL CURSOR FOR " + statement) }
        first = try Self.fetch(pg, cursor: name, deadline: deadline)
        page = first
    }

    deinit { try? pg.rollback() }

    /// The next page, with the time left of the deadline as its statement timeout.
    private static func fetch(_ pg: PGConnection, cursor: String, deadline: PGDeadline?) throws -> PGResult {
        try deadline?.limit(pg)
        return try userFaults { try pg.query("FETCH \(pageRows) FROM \(cursor)") }
    }

    /// The server's word on the user's SQL (a syntax error, an unknown column, a refused
    /// write, a missing privilege) is a refused query (exit 64); a timeout or a lost
    /// connection stays what it is.
    @discardableResult
    private static func userFaults<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PGError where !error.isTimeout && !error.isConnectionFailure {
            throw QueryRefused(message: "SQL error: \(error.message)")
        }
    }

    /// Keywords that never belong in a read: writes, data-modifying CTEs, COPY, DO, CALL, and
    /// statements that change the session or the schema. (Only unquoted: `"delete"` is a name.)
    static let refusedKeywords: Set<String> = ["insert", "update", "delete", "merge", "copy", "call", "do", "truncate",
                                               "create", "drop", "alter", "grant", "revoke", "lock", "vacuum",
                                               "notify", "listen", "set", "reset", "discard", "prepare", "execute",
                                               "refresh", "reindex", "cluster"]
    /// Functions with effects a READ ONLY transaction allows: ending or signalling other
    /// sessions, notifications, large objects, settings (the role among them), the server's
    /// files, other servers, and functions that run a query given as text (which no scan
    /// sees). Refused quoted or not.
    static let refusedFunctions: Set<String> = ["pg_terminate_backend", "pg_cancel_backend", "pg_notify", "pg_reload_conf",
                                                "pg_rotate_logfile", "pg_promote", "pg_switch_wal", "set_config",
                                                "lo_create", "lo_creat", "lo_import", "lo_export", "lo_unlink", "lo_put",
                                                "lo_from_bytea", "pg_read_file", "pg_read_binary_file", "pg_ls_dir",
                                                "pg_stat_file", "dblink", "dblink_exec", "dblink_connect",
                                                "query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema", "ts_stat"]
    /// Advisory locks: a query holding lctrace's own (files, sessions) would stall every ingest.
    static let refusedPrefixes = ["pg_advisory", "pg_try_advisory"]

    /// One statement that reads: what is left after a trailing semicolon.
    package static func checked(_ sql: String) throws -> String {
        var text = sql.trimmingCharacters(in: .whitespacesAndNewlines)
        while text.hasSuffix(";") { text = String(text.dropLast()).trimmingCharacters(in: .whitespacesAndNewlines) }
        let scan = PGDialect.scan(text)
        guard let first = scan.words.first else { throw QueryRefused(message: "no SQL statement given") }
        if scan.separators > 0 { throw QueryRefused(message: "one statement only: lctrace query runs a single query") }
        guard ["select", "with", "values", "table"].contains(first) else {
            throw QueryRefused(message: "only a query that reads is allowed (this is \(first.uppercased())): lctrace query is read-only")
        }
        func refusedFunction(_ name: String) -> Bool { refusedFunctions.contains(name) || refusedPrefixes.contains { name.hasPrefix($0) } }
        if let word = scan.words.first(where: { refusedKeywords.contains($0) || refusedFunction($0) }) ?? scan.quoted.first(where: refusedFunction) {
            throw QueryRefused(message: "\(word.uppercased()) is not allowed in lctrace query: it is read-only")
        }
        return text
    }

    package var warnings: [String] {
        guard let noReader else { return [] }
        var warning = "no reader role could be entered (\(noReader.why)): the query runs with the privileges of \(role)"
        if isSuperuser {
            warning += ", a superuser or a member of pg_read_server_files, pg_write_server_files or pg_execute_server_program: a query can reach the server's files and programs"
        }
        return [warning + "; \(noReader.remedy) (docs/postgresql.md)"]
    }

    package var columnNames: [String] { (0..<first.columnCount).map(first.columnName) }

    /// A page's rows as values, one row at a time (a page is `pageRows` rows).
    package func forEachRow(into sink: any RowSink) throws {
        var values = [SQLValue](repeating: .null, count: first.columnCount)
        while try step() {
            for i in values.indices { values[i] = page?.value(row, i) ?? .null }
            try sink.add(values)
        }
    }

    private func step() throws -> Bool {
        guard !done, let current = page else { return false }
        row += 1
        if row < current.rowCount { return true }
        if current.rowCount < Self.pageRows { done = true; return false }
        page = try Self.fetch(pg, cursor: cursor, deadline: deadline)
        row = 0
        if page!.rowCount > 0 { return true }
        done = true
        return false
    }
}

/// The end of `lctrace query --timeout` on the server: each statement is given only the
/// time left as its `statement_timeout`, so the whole query, not each statement, is bounded.
struct PGDeadline {
    package let end: DispatchTime

    package init(seconds: Double) { end = DispatchTime.now() + .nanoseconds(Int(min(seconds, 86_400) * 1e9)) }

    /// Milliseconds left; the server's own timeout error once none are.
    func millisecondsLeft() throws -> Int64 {
        let left = Int64(bitPattern: end.uptimeNanoseconds) - Int64(bitPattern: DispatchTime.now().uptimeNanoseconds)
        guard left > 0 else { throw PGError(sqlState: "57014", message: "canceling statement due to statement timeout", sql: nil) }
        return max(1, left / 1_000_000)
    }

    /// Whole seconds left, rounded up (libpq's connect_timeout).
    func secondsLeft() throws -> Int { Int((try millisecondsLeft() + 999) / 1000) }

    /// Gives the connection's next statements the time left.
    package func limit(_ pg: PGConnection) throws {
        try pg.execute("SET statement_timeout = \(try millisecondsLeft())")
    }
}

/// The team backend's kind: a `postgresql://` or `postgres://` URL (libpq's own forms).
package struct PostgreSQLBackendKind: StorageBackendKind {
    package init() {}
    package var name: String { "postgresql" }

    package func claims(_ location: String) -> Bool {
        let lower = location.lowercased()
        return lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://")
    }

    package func shown(_ location: String) -> String { PGConnection.withoutPassword(location) }
    package var ddl: String { PGSchema.ddl }

    package func openForReading(_ location: String, timeout: Double?) throws -> any StorageBackend {
        try PGBackend(url: Self.lowercaseScheme(location), writing: false, timeout: timeout)
    }

    package func openForWriting(_ location: String, create: Bool, stop: StopRequest?) throws -> any StorageBackend {
        try PGBackend(url: Self.lowercaseScheme(location), writing: true, create: create, stop: stop)
    }

    /// libpq knows a URL by its scheme in lower case only: `POSTGRESQL://u:pw@host/db` went to
    /// the default server as a database of that name, password included.
    static func lowercaseScheme(_ url: String) -> String {
        guard let end = url.range(of: "://") else { return url }
        return url[..<end.lowerBound].lowercased() + url[end.lowerBound...]
    }
}
