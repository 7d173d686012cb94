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
/// The server refuses every write there; COPY, DO, CALL and data-modifying CTEs are refused
/// before they are sent (a READ ONLY transaction would allow some side effects of them).
final class PGUserQuery: QueryRows {
    private let pg: PGConnection
    private let cursor = "lctrace_user"
    private var page: PGResult?
    private var row = -1
    private var done = false
    private let first: PGResult
    /// True when the role is a superuser (it can reach the server's files and programs).
    let isSuperuser: Bool

    init(pg: PGConnection, sql: String, timeout: Double?) throws {
        self.pg = pg
        let statement = try Self.checked(sql)
        isSuperuser = try pg.query("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").text(0, 0) == "t"
        try pg.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        if let timeout { try pg.execute("SET LOCAL statement_timeout = \(max(1, Int(timeout * 1000)))") }
        try pg.execute("DECLARE \(cursor) NO SCROLL CURSOR FOR " + statement)
        first = try pg.query("FETCH 1000 FROM \(cursor)")
        page = first
    }

    deinit { try? pg.execute("ROLLBACK") }

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

    var columnCount: Int { first.columnCount }
    func columnName(_ i: Int) -> String { first.columnName(i) }

    func step() throws -> Bool {
        guard !done, let current = page else { return false }
        row += 1
        if row < current.rowCount { return true }
        if current.rowCount < 1000 { done = true; return false }
        page = try pg.query("FETCH 1000 FROM \(cursor)")
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
