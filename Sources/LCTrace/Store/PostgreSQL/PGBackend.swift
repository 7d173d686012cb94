import Foundation

/// The team backend: a PostgreSQL database through libpq (`--db postgresql://…`). The tables
/// live in the connection's schema (`public`, or `?options=-csearch_path=…` in the URL).
/// A read-only command works in one REPEATABLE READ, READ ONLY snapshot; a writing one loads
/// with COPY and analyses after loading (see `PGIngestSink`, `PGAnalysisStore`).
final class PGBackend: StorageBackend {
    private let url: String
    private let name: String
    private let main: PGConnection
    private let read: PGReadConnection
    private let writing: Bool
    private lazy var strings = PGStrings(url: url)

    init(url: String, writing: Bool, create: Bool = true) throws {
        self.url = url
        name = PGConnection.redacted(url)
        self.writing = writing
        main = try PGConnection(url: url)
        try PGSchema.prepare(main, name: name, writing: writing, create: create)
        read = PGReadConnection(pg: main, snapshot: !writing)
    }

    var ddl: String { PGSchema.ddl }
    var reader: any SQLReadConnection { read }

    func readSessionSource() throws -> any SessionSource { try PGSessionSource(connection: read) }

    func analysisStore() throws -> any AnalysisStore {
        guard writing else { throw StoreMisuse("\(name) was opened read-only") }
        return try PGAnalysisStore(connection: PGReadConnection(pg: main, snapshot: false), strings: strings)
    }

    func ingestSink() throws -> any IngestSink {
        guard writing else { throw StoreMisuse("\(name) was opened read-only") }
        return try PGIngestSink(pg: main, url: url)
    }

    func readOnlyQuery(_ sql: String, timeout: Double?) throws -> any QueryRows {
        try PGUserQuery(pg: try PGConnection(url: url), sql: sql, timeout: timeout)
    }

    func tidyAfterInterruption() {}

    func close() {}
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
    private let deadline: DispatchTime?
    private let timeout: Double?
    /// Rows fetched at a time: enough to keep the round trips cheap, few enough for flat memory.
    static let pageRows = 1000
    /// True when the role is a superuser (it can reach the server's files and programs).
    let isSuperuser: Bool
    let role: String

    init(pg: PGConnection, sql: String, timeout: Double?) throws {
        self.pg = pg
        self.timeout = timeout
        let statement = try Self.checked(sql)
        let who = try pg.query("SELECT current_user::text, rolsuper FROM pg_roles WHERE rolname = current_user")
        role = who.text(0, 0) ?? "?"
        isSuperuser = who.text(0, 1) == "t"
        deadline = timeout.map { DispatchTime.now() + .nanoseconds(Int(min($0, 86_400) * 1e9)) }
        try pg.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        let name = cursor
        try Self.userFaults { try pg.query("DECLARE \(name) NO SCROLL CURSOR FOR " + statement) }
        first = try Self.fetch(pg, cursor: name, deadline: deadline, timeout: timeout)
        page = first
    }

    deinit { try? pg.execute("ROLLBACK") }

    /// The next page, with the time left of the deadline as its statement timeout.
    private static func fetch(_ pg: PGConnection, cursor: String, deadline: DispatchTime?, timeout: Double?) throws -> PGResult {
        if let deadline {
            let left = Int64(deadline.uptimeNanoseconds) - Int64(DispatchTime.now().uptimeNanoseconds)
            guard left > 0 else { throw PGError(sqlState: "57014", message: "canceling statement due to statement timeout", sql: nil) }
            try pg.execute("SET LOCAL statement_timeout = \(max(1, left / 1_000_000))")
        }
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
    /// statements that change the session or the schema.
    static let refusedWords: Set<String> = ["insert", "update", "delete", "merge", "copy", "call", "do", "truncate",
                                            "create", "drop", "alter", "grant", "revoke", "lock", "vacuum",
                                            "notify", "listen", "set", "reset", "discard", "prepare", "execute",
                                            "refresh", "reindex", "cluster"]

    /// One statement that reads: what is left after a trailing semicolon.
    static func checked(_ sql: String) throws -> String {
        var text = sql.trimmingCharacters(in: .whitespacesAndNewlines)
        while text.hasSuffix(";") { text = String(text.dropLast()).trimmingCharacters(in: .whitespacesAndNewlines) }
        let scan = PGDialect.scan(text)
        guard let first = scan.words.first else { throw QueryRefused(message: "no SQL statement given") }
        if scan.separators > 0 { throw QueryRefused(message: "one statement only: lctrace query runs a single query") }
        guard ["select", "with", "values", "table"].contains(first) else {
            throw QueryRefused(message: "only a query that reads is allowed (this is \(first.uppercased())): lctrace query is read-only")
        }
        if let word = scan.words.first(where: refusedWords.contains) {
            throw QueryRefused(message: "\(word.uppercased()) is not allowed in lctrace query: it is read-only")
        }
        return text
    }

    var warnings: [String] {
        isSuperuser ? ["connected as \(role), a superuser: a query can reach the server's files and programs; "
                       + "give QA engineers the read-only role the README describes"] : []
    }

    var columnCount: Int { first.columnCount }
    func columnName(_ i: Int) -> String { first.columnName(i) }

    func step() throws -> Bool {
        guard !done, let current = page else { return false }
        row += 1
        if row < current.rowCount { return true }
        if current.rowCount < Self.pageRows { done = true; return false }
        page = try Self.fetch(pg, cursor: cursor, deadline: deadline, timeout: timeout)
        row = 0
        if page!.rowCount > 0 { return true }
        done = true
        return false
    }

    func value(_ i: Int) -> SQLValue {
        guard let page, !page.isNull(row, i), let text = page.text(row, i) else { return .null }
        switch page.columnType(i) {
        case 20, 21, 23, 26: return .int(Int64(text) ?? 0)
        case 16: return .int(text == "t" ? 1 : 0)
        case 700, 701: return .double(Double(text) ?? 0)
        case 1700: return Int64(text).map { .int($0) } ?? .double(Double(text) ?? 0)
        case 17: return .blob(PGQuery.bytes(hex: text))
        default: return .text(text)
        }
    }
}
