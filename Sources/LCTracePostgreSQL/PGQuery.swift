internal import CPostgreSQL
import LCTraceModel
import LCTraceStore

/// The SQL of the shared queries, made PostgreSQL's: `?N` and `?` parameters become `$N`
/// (outside quotes and comments). Everything else they use is standard SQL.
enum PGDialect {
    /// The lowercased words of `sql` outside quotes, dollar quotes and comments, and how many
    /// `;` separate statements there, read as PostgreSQL's lexer reads them
    /// (https://www.postgresql.org/docs/current/sql-syntax-lexical.html): `$` inside an
    /// identifier (`a$b$`) is part of it, a dollar-quote tag may hold digits but not start
    /// with one (`$1` is a parameter), `E'…'` strings take backslash escapes, and block
    /// comments nest. A scan that read any of these differently could hide a word from the
    /// check or refuse a harmless query. `quoted`: the quoted identifiers, as the server reads
    /// them (`""` a quote, `U&"…"` escapes decoded, `UESCAPE` honoured), lowercased: a function
    /// named in quotes is the same function, while a keyword in quotes is only a name.
    static func scan(_ sql: String) -> (words: [String], separators: Int, quoted: [String]) {
        let b = Array(sql.utf8)
        var words: [String] = []
        var quoted: [String] = []
        var separators = 0
        var i = 0
        var word: [UInt8] = []
        func flush() { if !word.isEmpty { words.append(String(decoding: word, as: UTF8.self).lowercased()); word = [] } }
        func isLetter(_ c: UInt8) -> Bool { c == 0x5f || (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c >= 0x80 }
        func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
        while i < b.count {
            let c = b[i]
            if c == 0x27 {  // '…', or E'…' with backslash escapes
                let escapes = word.count == 1 && (word[0] == 0x65 || word[0] == 0x45)
                if escapes { word = [] }
                flush()
                i += 1
                while i < b.count && b[i] != 0x27 {
                    i += escapes && b[i] == 0x5c ? 2 : 1
                }
                i += 1
                continue
            }
            if c == 0x22 {  // "identifier", or U&"identifier" with Unicode escapes
                let unicode = word.isEmpty && i >= 2 && b[i - 1] == 0x26 && (b[i - 2] == 0x55 || b[i - 2] == 0x75)
                    && (i < 3 || !(isLetter(b[i - 3]) || isDigit(b[i - 3]) || b[i - 3] == 0x24))
                if unicode && words.last == "u" { words.removeLast() }
                flush()
                i += 1
                var raw: [UInt8] = []
                while i < b.count {
                    if b[i] == 0x22 {
                        guard i + 1 < b.count && b[i + 1] == 0x22 else { break }
                        i += 1
                    }
                    raw.append(b[i])
                    i += 1
                }
                i += 1
                let name = String(decoding: raw, as: UTF8.self)
                quoted.append((unicode ? unescaped(name, escape: uescape(b, from: i)) : name).lowercased())
                continue
            }
            if c == 0x2d && i + 1 < b.count && b[i + 1] == 0x2d {  // --
                flush()
                while i < b.count && b[i] != 0x0a { i += 1 }
                continue
            }
            if c == 0x2f && i + 1 < b.count && b[i + 1] == 0x2a {  // /* … /* … */ … */
                flush()
                i += 2
                var depth = 1
                while i < b.count && depth > 0 {
                    if b[i] == 0x2f && i + 1 < b.count && b[i + 1] == 0x2a { depth += 1; i += 2; continue }
                    if b[i] == 0x2a && i + 1 < b.count && b[i + 1] == 0x2f { depth -= 1; i += 2; continue }
                    i += 1
                }
                continue
            }
            if c == 0x24 && word.isEmpty {  // $tag$ … $tag$ (a `$` inside a word is the word's)
                var j = i + 1
                if j < b.count && isLetter(b[j]) {
                    while j < b.count && (isLetter(b[j]) || isDigit(b[j])) { j += 1 }
                }
                if j < b.count && b[j] == 0x24 {
                    let tag = Array(b[i...j])
                    var k = j + 1
                    while k + tag.count <= b.count && Array(b[k..<(k + tag.count)]) != tag { k += 1 }
                    i = k + tag.count
                    continue
                }
            }
            if c == 0x3b { flush(); separators += 1; i += 1; continue }
            if isLetter(c) || isDigit(c) || (c == 0x24 && !word.isEmpty) {
                word.append(c)
            } else {
                flush()
            }
            i += 1
        }
        flush()
        return (words, separators, quoted)
    }

    /// The escape character a `UESCAPE 'c'` after position `i` names, else a backslash.
    private static func uescape(_ b: [UInt8], from i: Int) -> Character {
        var j = i
        func skipSpace() { while j < b.count && [0x20, 0x09, 0x0a, 0x0d, 0x0c].contains(b[j]) { j += 1 } }
        skipSpace()
        let keyword = Array("uescape".utf8)
        guard j + keyword.count <= b.count, b[j..<(j + keyword.count)].map({ $0 | 0x20 }) == keyword else { return "\\" }
        j += keyword.count
        skipSpace()
        guard j + 2 < b.count, b[j] == 0x27, b[j + 2] == 0x27 else { return "\\" }
        return Character(UnicodeScalar(b[j + 1]))
    }

    /// A `U&` identifier's text with its escapes decoded: `\XXXX`, `\+XXXXXX`, and the escape
    /// character doubled for itself (https://www.postgresql.org/docs/current/sql-syntax-lexical.html#SQL-SYNTAX-IDENTIFIERS-UESCAPE).
    static func unescaped(_ text: String, escape: Character) -> String {
        let chars = Array(text)
        var out = ""
        var i = 0
        while i < chars.count {
            guard chars[i] == escape, i + 1 < chars.count else { out.append(chars[i]); i += 1; continue }
            if chars[i + 1] == escape { out.append(escape); i += 2; continue }
            let long = chars[i + 1] == "+"
            let start = i + (long ? 2 : 1), count = long ? 6 : 4
            if start + count <= chars.count, let code = UInt32(String(chars[start..<(start + count)]), radix: 16),
               let scalar = UnicodeScalar(code) {
                out.append(Character(scalar))
                i = start + count
            } else {
                out.append(chars[i])
                i += 1
            }
        }
        return out
    }

    static func rewrite(_ sql: String) -> String {
        var out = ""
        out.reserveCapacity(sql.utf8.count + 8)
        var next = 1
        var quote: Character?
        var chars = Array(sql)
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if let q = quote {
                out.append(c)
                if c == q { quote = nil }
                i += 1
                continue
            }
            if c == "'" || c == "\"" { quote = c; out.append(c); i += 1; continue }
            if c == "-" && i + 1 < chars.count && chars[i + 1] == "-" {
                while i < chars.count && chars[i] != "\n" { out.append(chars[i]); i += 1 }
                continue
            }
            if c == "?" {
                var j = i + 1
                while j < chars.count, chars[j].isASCII, chars[j].isNumber { j += 1 }
                if j > i + 1 {
                    out += "$" + String(chars[(i + 1)..<j])
                } else {
                    out += "$\(next)"
                    next += 1
                }
                i = j
                continue
            }
            out.append(c)
            i += 1
        }
        chars.removeAll()
        return out
    }
}

/// A read statement on PostgreSQL behaving as the shared queries expect of one (`SQLQuery`):
/// parameters bound by position, rows stepped one at a time. Inside a transaction the rows
/// come through a cursor, a page at a time, so a session of any length streams and other
/// statements may run between two rows (the builder reads retired instances while it steps
/// through events); outside one the result is read whole.
final class PGQuery: SQLQuery {
    private unowned let connection: PGReadConnection
    private let sql: String
    private var parameters: [String?] = []
    private var result: PGResult?
    private var row = -1
    private var cursor: String?
    private var exhausted = false
    /// The cursor's next page, asked for as soon as the last one came.
    private var nextPage: PGAhead?
    /// The parameters' types, learnt once (see `PGConnection.parameterTypes`).
    private var types: [UInt32]?
    /// Rows fetched from a cursor at a time.
    package static let page = 4096

    /// A look-up (`SQLReadConnection.lookup`): run whole as a prepared statement, no cursor.
    private let isLookup: Bool

    package init(connection: PGReadConnection, sql: String, lookup: Bool = false) {
        self.connection = connection
        self.sql = PGDialect.rewrite(sql)
        isLookup = lookup
    }

    deinit { closeCursor() }

    private func closeCursor() {
        nextPage = nil
        if let cursor {
            connection.pg.closeLater(cursor)
            self.cursor = nil
        }
    }

    package func reset() {
        resetKeepingBindings()
        parameters = []
    }

    package func resetKeepingBindings() {
        closeCursor()
        result = nil
        row = -1
        exhausted = false
    }

    private func set(_ value: String?, _ index: Int32) {
        let i = Int(index) - 1
        if parameters.count <= i { parameters += Array(repeating: nil, count: i + 1 - parameters.count) }
        parameters[i] = value
    }

    package func bind(_ values: [SQLValue]) throws {
        for (i, v) in values.enumerated() { try bind(v, at: Int32(i + 1)) }
    }

    package func bind(_ value: SQLValue, at index: Int32) throws {
        switch value {
        case .null: set(nil, index)
        case .int(let v): set(String(v), index)
        case .double(let v): set(String(v), index)
        case .text(let s): set(s, index)
        case .blob(let b): set("\\x" + b.map { String(format: "%02x", $0) }.joined(), index)
        }
    }

    package func bind(_ value: Int64, at index: Int32) { set(String(value), index) }
    package func bind(_ value: Int64?, at index: Int32) { set(value.map(String.init), index) }
    package func bind(_ value: String?, at index: Int32) { set(value, index) }

    package func step() throws -> Bool {
        if result == nil && !exhausted {
            if isLookup {
                result = try connection.pg.queryPrepared(sql, parameters)
            } else if connection.inTransaction {
                if types == nil { types = parameters.isEmpty ? [] : try connection.parameterTypes(sql) }
                (cursor, result) = try connection.pg.openCursor(sql, parameters, types: types, fetching: Self.page)
                try askForNextPage()
            } else {
                result = try connection.pg.query(sql, parameters)
            }
            row = -1
        }
        guard let current = result else { return false }
        row += 1
        if row < current.rowCount { return true }
        // The page is done: the next one, while the cursor gives rows.
        if let nextPage {
            self.nextPage = nil
            let next = try connection.pg.collect(nextPage)
            result = next
            row = 0
            try askForNextPage()
            if next.rowCount > 0 { return true }
        }
        closeCursor()
        result = nil
        exhausted = true
        return false
    }

    /// After a full page, the next one is asked for at once: the server computes it while the
    /// caller works through this one (a report's reads are then as long as the slower side,
    /// not the two sides one after the other).
    private func askForNextPage() throws {
        guard let cursor, let result, result.rowCount == Self.page else { return }
        nextPage = try connection.pg.sendAhead("FETCH \(Self.page) FROM \(cursor)")
    }

    package var columnCount: Int {
        if let result { return result.columnCount }
        // Not stepped yet: describe the statement.
        return (try? connection.describe(sql))?.count ?? 0
    }

    package func columnName(_ i: Int) -> String {
        if let result { return result.columnName(i) }
        return (try? connection.describe(sql))?[i] ?? ""
    }

    package func isNull(_ i: Int) -> Bool { result?.isNull(row, i) ?? true }
    package func int(_ i: Int) -> Int64 {
        guard let result else { return 0 }
        if let value = result.int(row, i) { return value }
        guard let text = result.text(row, i) else { return 0 }
        if let v = Int64(text) { return v }
        if text == "t" { return 1 }
        if text == "f" { return 0 }
        return Double(text).map { Int64($0) } ?? 0
    }
    package func optionalInt(_ i: Int) -> Int64? { isNull(i) ? nil : int(i) }
    package func double(_ i: Int) -> Double { result?.text(row, i).flatMap(Double.init) ?? 0 }
    package func text(_ i: Int) -> String? { result?.text(row, i) }

    package func value(_ i: Int) -> SQLValue { result?.value(row, i) ?? .null }

    /// A bytea value in hex output format (`\x0a1b…`).
    package static func bytes(hex text: String) -> [UInt8] {
        var out: [UInt8] = []
        let digits = Array(text.utf8.dropFirst(2))
        var i = 0
        while i + 1 < digits.count {
            if let hi = hexValue(digits[i]), let lo = hexValue(digits[i + 1]) { out.append(hi << 4 | lo) }
            i += 2
        }
        return out
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x61...0x66: return c - 0x61 + 10
        case 0x41...0x46: return c - 0x41 + 10
        default: return nil
        }
    }
}

/// A connection the shared queries run on. A read-only one works inside one REPEATABLE READ,
/// READ ONLY transaction begun at the first statement: every query of a report sees the same
/// snapshot, however many ingests commit meanwhile.
final class PGReadConnection: SQLReadConnection {
    package let pg: PGConnection
    /// True while a transaction is open (cursors need one).
    private(set) var inTransaction = false
    private let snapshot: Bool
    private var described: [String: [String]] = [:]

    /// Where `sibling` connects (the reading commands' connection only).
    private let url: String?

    /// `snapshot`: begin a read-only snapshot transaction at the first statement; `url`: the
    /// database, for `sibling`.
    package init(pg: PGConnection, snapshot: Bool, url: String? = nil) {
        self.pg = pg
        self.snapshot = snapshot
        self.url = url
    }

    /// A sibling: its transaction already begun in the snapshot it imported.
    private init(sibling pg: PGConnection) {
        self.pg = pg
        snapshot = false
        url = nil
        inTransaction = true
    }

    /// Seconds a sibling waits for a lock before its read fails (and is done on the first
    /// connection instead: `BesideRead`). A reading command takes no lock a writer of lctrace
    /// waits for, but DDL (`VACUUM FULL`, a migration) queued behind the first connection's
    /// locks would hold the sibling's reads, and the first connection waits for the sibling:
    /// a wait the server cannot see as a deadlock.
    static let siblingLockTimeout = "2s"

    /// A connection of its own in this one's snapshot (`pg_export_snapshot`, which holds while
    /// this transaction stays open: the whole command), its transaction begun. Nil outside a
    /// reading command's snapshot, and when the snapshot cannot be shared: the function not
    /// granted, the server refusing one more connection, the import failing (a URL with
    /// several hosts that led elsewhere). One more connection to the server while a report runs.
    package func sibling() throws -> (any SQLReadConnection)? {
        guard snapshot, let url else { return nil }
        try beginSnapshot()
        // NULL rather than an error where the function is not granted: an error would abort
        // this connection's transaction.
        guard let id = try pg.query("""
                SELECT CASE WHEN has_function_privilege('pg_export_snapshot()', 'EXECUTE') THEN pg_export_snapshot() END
                """).text(0, 0),
              !id.isEmpty, id.allSatisfy({ $0.isHexDigit || $0 == "-" }) else { return nil }
        do {
            let other = try PGConnection(url: url, stop: pg.stop)
            // The id is the server's, checked to be hex digits and dashes.
            try other.execute("SET lock_timeout = '\(Self.siblingLockTimeout)'; \(PGConnection.beginSnapshot); SET TRANSACTION SNAPSHOT '\(id)'")
            return PGReadConnection(sibling: other)
        } catch let stop as Interrupted {
            throw stop
        } catch {
            return nil
        }
    }

    package func query(_ sql: String) throws -> any SQLQuery {
        try beginSnapshot()
        return PGQuery(connection: self, sql: sql)
    }

    package func lookup(_ sql: String) throws -> any SQLQuery {
        try beginSnapshot()
        return PGQuery(connection: self, sql: sql, lookup: true)
    }

    /// A read-only connection's snapshot, begun at its first statement.
    private func beginSnapshot() throws {
        if snapshot && !inTransaction {
            try pg.execute(PGConnection.beginSnapshot)
            inTransaction = true
        }
    }

    func newCursorName() -> String { pg.newCursorName() }

    private var parameterTypesOf: [String: [UInt32]] = [:]

    /// The types of a statement's parameters, asked of the server once per statement text
    /// (a report runs the same few statements thousands of times).
    func parameterTypes(_ sql: String) throws -> [UInt32] {
        if let known = parameterTypesOf[sql] { return known }
        let types = try pg.parameterTypes(sql)
        parameterTypesOf[sql] = types
        return types
    }

    package func jsonText(_ column: String, key: String) -> String { "(\(column)::jsonb ->> '\(key)')" }

    /// Schema 4 packs these tables; its `*_rows` views unpack them.
    package func relation(_ table: SharedTable) -> String { table.rowsView }

    /// Whether the events are stored in blocks (schema 7; a database of version 4 to 6 is read
    /// as it is), asked once. Either answer reads right: a migration only ever adds the blocks.
    private lazy var storesBlocks = (try? pg.query("SELECT to_regclass('event_blocks') IS NOT NULL").text(0, 0)) == "t"

    /// Schema 7: the first seq of the first block of `session` that starts at or after `from`
    /// (the largest seq when none does): no block past it holds the first event at or after `from`.
    private static func firstBlockBound(session: String, from: String) -> String {
        "coalesce((SELECT min(k.first_seq) FROM event_blocks k WHERE k.session = \(session) AND k.first_seq >= \(from)), \(Int64.max))"
    }

    /// Schema 7: only the blocks whose bounds meet the range (`event_block_rows`), and with
    /// `firstOnly` none past the first block that starts at or after `from`.
    package func events(session: String, from: String?, through: String?, firstOnly: Bool) -> String {
        guard storesBlocks else { return SharedLayoutEvents.events(relation(.events), session: session, from: from, through: through) }
        var sql = Self.blockRows(session: session)
        if let from { sql += " AND block_last >= \(from) AND seq >= \(from)" }
        if let through { sql += " AND block_first <= \(through) AND seq <= \(through)" }
        if firstOnly, let from { sql += " AND block_first <= " + Self.firstBlockBound(session: session, from: from) }
        return sql + ")"
    }

    /// Schema 7: only the blocks that hold one of `seqs`, a condition on each seq's block
    /// (a long list: on the blocks between its first and its last). On 10 M events, the
    /// times of an example's evidence took 3.3 ms a statement through `event_rows` (every
    /// block of the session unnested) and 0.7 ms so.
    package func events(session: String, seqs: [Int64]) -> String {
        guard storesBlocks, let first = seqs.min(), let last = seqs.max() else {
            return SharedLayoutEvents.events(relation(.events), session: session, seqs: seqs)
        }
        let bounds = seqs.count <= Self.blockBoundTerms
            ? seqs.map { "block_first <= \($0) AND block_last >= \($0)" }.joined(separator: " OR ")
            : "block_last >= \(first) AND block_first <= \(last)"
        return Self.blockRows(session: session) + " AND seq IN (\(SharedLayoutEvents.seqList(seqs))) AND (\(bounds)))"
    }

    /// Schema 7: the start of a FROM item of `session`'s events with the columns of
    /// `relation(.events)`, from `event_block_rows`, for the conditions on the blocks' bounds
    /// and the closing parenthesis to follow.
    private static func blockRows(session: String) -> String {
        "(SELECT session, seq, t, ev, vc, cls, other, flags, detail, thread, wall, attrs FROM event_block_rows WHERE session = \(session)"
    }

    /// Seqs up to which `events(session:seqs:)` bounds each one's block (past it, the range).
    static let blockBoundTerms = 64

    /// Schema 7: a look-up unnests a block or two (0.6 ms), a session of 6,000 events is read
    /// whole in 3 ms; the HTML report on 10 M events made 1,100 look-ups in 57 sessions.
    package var searchIndexLimit: Int { storesBlocks ? 50_000 : 0 }

    /// Schema 7: the one or two blocks that hold the first event at or after `from`, and of
    /// them only the seq and t arrays unnested (all seven and their decoding cost 1 ms a probe).
    package func seqTimes(session: String, atOrAfter from: String) -> String {
        guard storesBlocks else { return SharedLayoutEvents.seqTimes(relation(.events), session: session, atOrAfter: from) }
        return """
            (SELECT u.seq, u.t FROM event_blocks b CROSS JOIN LATERAL unnest(b.seq, b.t) AS u(seq, t)
             WHERE b.session = \(session) AND b.last_seq >= \(from) AND u.seq >= \(from)
               AND b.first_seq <= \(Self.firstBlockBound(session: session, from: from)))
            """
    }

    /// Schema 7: the block whose bounds hold `seq`, found by its key, and two of its arrays
    /// unnested (a view of all of them would unnest every block of the session).
    package func eventValue(_ column: EventColumn, session: String, seq: String) -> String {
        guard storesBlocks else { return SharedLayoutEvents.eventValue(relation(.events), column, session: session, seq: seq) }
        let (array, value) = column == .t ? ("t", "u.v") : ("rest", "u.v ->> 'attrs'")
        return """
            (SELECT \(value) FROM (SELECT (\(session))::integer AS session, (\(seq))::bigint AS seq) AS at
             JOIN event_blocks k ON k.session = at.session AND k.first_seq <= at.seq AND k.last_seq >= at.seq
             CROSS JOIN LATERAL unnest(k.seq, k.\(array)) AS u(seq, v) WHERE u.seq = at.seq)
            """
    }

    /// The packed columns themselves, as on SQLite: codes bits 3-4 (outcome), 7 (interactive)
    /// and 8 (backgrounded) all zero is 408 masked to 0; bits 5-6 are 2 (not animated) or 3.
    package func countedGapsSQL(sessions: String) -> String {
        """
        SELECT session, vc, since, CASE (codes >> 5) & 3 WHEN 2 THEN 0 WHEN 3 THEN 1 END, did_t - is_t
        FROM appearances
        WHERE session IN (\(sessions)) AND codes & 408 = 0 AND is_t IS NOT NULL AND did_t IS NOT NULL
        ORDER BY session
        """
    }

    /// Runs `body` in a transaction of the caller's (the analysis's write transactions), its
    /// BEGIN sent with the first statement.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        precondition(!inTransaction, "nested transaction")
        return try pg.transaction(later: true) {
            inTransaction = true
            defer { inTransaction = false }
            return try body()
        }
    }

    /// The column names of a statement, from the server's description of it.
    package func describe(_ sql: String) throws -> [String] {
        if let known = described[sql] { return known }
        let result = try pg.query("SELECT * FROM (" + sql.replacingOccurrences(of: ";", with: "") + ") AS described LIMIT 0")
        let names = (0..<result.columnCount).map { result.columnName($0) }
        described[sql] = names
        return names
    }
}
