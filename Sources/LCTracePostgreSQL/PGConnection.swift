internal import CPostgreSQL
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LCTraceModel
import LCTraceStore

/// An error from PostgreSQL: the server's SQLSTATE and message, and the SQL that failed, but
/// never the bound values (user data, possibly large), as `DatabaseError` does for SQLite.
struct PGError: Error, CustomStringConvertible, Equatable {
    /// Five-character SQLSTATE (`23505` unique violation, `57014` query cancelled, …); empty
    /// for a connection-level failure.
    var sqlState: String
    package var message: String
    package var sql: String?

    package var description: String {
        var text = message
        if let sql { text += " (in: \(sql.count > 160 ? String(sql.prefix(160)) + "…" : sql))" }
        return text
    }

    /// The server cancelled the statement (`statement_timeout`, or a cancel request).
    var isTimeout: Bool { sqlState == "57014" }
    /// The connection could not be made or was lost (class 08), or the server is shutting down (57P).
    var isConnectionFailure: Bool { sqlState.isEmpty || sqlState.hasPrefix("08") || sqlState.hasPrefix("57P") }
    /// A read-only transaction refused a write (25006), or the role lacks a privilege (42501).
    var isRefusedWrite: Bool { sqlState == "25006" || sqlState == "42501" }
}

/// One result of a statement, owned: `PQclear` in `deinit`. Values come back as text (the
/// simple, portable format); `nil` is SQL NULL.
final class PGResult {
    package let handle: OpaquePointer

    package init(_ handle: OpaquePointer) { self.handle = handle }
    deinit { PQclear(handle) }

    package var rowCount: Int { Int(PQntuples(handle)) }
    package var columnCount: Int { Int(PQnfields(handle)) }
    package func columnName(_ column: Int) -> String { String(cString: PQfname(handle, Int32(column))) }
    /// The type OID of a column (23 int4, 20 int8, 701 float8, 25 text, 16 bool, …).
    func columnType(_ column: Int) -> UInt32 { PQftype(handle, Int32(column)) }

    package func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(handle, Int32(row), Int32(column)) == 1 }

    package func text(_ row: Int, _ column: Int) -> String? {
        withBytes(row, column) { String(decoding: $0, as: UTF8.self) }
    }

    /// The bytes of a value in place, valid during `body` only; nil for NULL (`body` not called).
    func withBytes<T>(_ row: Int, _ column: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T? {
        guard !isNull(row, column), let value = PQgetvalue(handle, Int32(row), Int32(column)) else { return nil }
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        return try value.withMemoryRebound(to: UInt8.self, capacity: length) { try body(UnsafeBufferPointer(start: $0, count: length)) }
    }

    /// An integer column's value read from its digits in place (no String made: a report
    /// reads millions of them); `nil` for NULL or a value that is not a plain integer.
    package func int(_ row: Int, _ column: Int) -> Int64? {
        withBytes(row, column) { Self.integer($0) } ?? nil
    }

    /// `-?[0-9]+` within Int64, else `nil`.
    static func integer(_ digits: UnsafeBufferPointer<UInt8>) -> Int64? {
        var i = 0
        let negative = digits.first == UInt8(ascii: "-")
        if negative { i = 1 }
        guard i < digits.count else { return nil }
        var value: Int64 = 0
        while i < digits.count {
            let d = digits[i] &- 0x30
            guard d < 10 else { return nil }
            // Accumulated negatively so Int64.min parses too.
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = times.subtractingReportingOverflow(Int64(d))
            if o1 || o2 { return nil }
            value = next
            i += 1
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    /// A value typed as SQLite would give it, by the column's type OID (the text format's
    /// values parsed).
    package func value(_ row: Int, _ column: Int) -> SQLValue {
        guard let text = text(row, column) else { return .null }
        switch columnType(column) {
        case 20, 21, 23, 26: return .int(Int64(text) ?? 0)          // int8, int2, int4, oid
        case 16: return .int(text == "t" ? 1 : 0)                    // bool
        case 700, 701: return .double(Double(text) ?? 0)             // float4, float8
        case 1700: return Int64(text).map { .int($0) } ?? .double(Double(text) ?? 0)  // numeric
        case 17: return .blob(PGQuery.bytes(hex: text))              // bytea
        default: return .text(text)
        }
    }

    /// The number of rows a command changed (`INSERT 0 5` → 5).
    var changedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }
}

/// One connection to a PostgreSQL server through libpq. Owns its handle (`PQfinish` in
/// `deinit`). Statements take text parameters (`$1`, `$2`, …) and return text values; bulk
/// loads go through `COPY … FROM STDIN` (https://www.postgresql.org/docs/current/libpq-copy.html).
/// Not thread-safe: one connection per thread, as libpq requires.
final class PGConnection {
    private let handle: OpaquePointer
    /// The URL without its password, for messages.
    let displayURL: String
    /// Cursors opened on this connection so far (their names must differ).
    private var cursors = 0

    func newCursorName() -> String {
        cursors += 1
        return "lctrace_c\(cursors)"
    }

    /// Declares a cursor of the open transaction for `sql` and fetches its first `rows`, in one
    /// round trip: the cursor's name and that page. `types`: the parameters' type OIDs, where
    /// the server cannot infer them. Close it with `closeLater`.
    func openCursor(_ sql: String, _ parameters: [String?] = [], types: [UInt32]? = nil,
                    fetching rows: Int) throws -> (name: String, firstPage: PGResult) {
        let name = newCursorName()
        let results = try pipeline([
            Piped(sql: "DECLARE \(name) NO SCROLL CURSOR FOR " + sql, parameters: parameters, types: types),
            Piped(sql: "FETCH \(rows) FROM \(name)"),
        ])
        return (name, results.last!)
    }

    /// Ends every wait on the server (connecting, a result) when requested: SIGINT and SIGTERM
    /// of a command that handles them (`ingest`, `analyze`). Commands without one die of the
    /// signal as usual.
    let stop: StopRequest?
    /// Seconds a connection may take when the URL sets no `connect_timeout`: a server that
    /// accepts and never answers fails the command rather than hanging it.
    package static let defaultConnectTimeout = 10

    /// Connects to `url` (`postgresql://user@host:port/db?options=…`, or any libpq conninfo)
    /// within the URL's `connect_timeout` (default `defaultConnectTimeout` seconds; 0 waits
    /// for ever), or `connectTimeout` seconds when given (`query --timeout`'s time left).
    package init(url: String, connectTimeout: Int? = nil, stop: StopRequest? = nil) throws {
        displayURL = PGConnection.withoutPassword(url)
        self.stop = stop
        handle = try Self.connect(url, shownAs: displayURL, timeout: connectTimeout, stop: stop)
        Self.madeLock.withLock { Self.madeCount += 1 }
        // Notices (e.g. "relation already exists, skipping") are not errors: keep them off stderr.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        try execute("SET client_encoding = 'UTF8'; SET application_name = 'lctrace'")
    }

    /// Connections this process made, each a server process (for the tests: how many a
    /// command costs the server).
    package static var made: Int { madeLock.withLock { madeCount } }
    private static let madeLock = NSLock()
    nonisolated(unsafe) private static var madeCount = 0

    /// libpq's non-blocking connection (`PQconnectStartParams` and `PQconnectPoll`, which
    /// leave the timeout to the caller: https://www.postgresql.org/docs/current/libpq-connect.html),
    /// waited for in slices so a stop request is seen at once.
    private static func connect(_ url: String, shownAs shown: String, timeout given: Int?, stop: StopRequest?) throws -> OpaquePointer {
        let made: OpaquePointer? = ["dbname"].withCStrings { k in [url].withCStrings { v in PQconnectStartParams(k, v, 1) } }
        guard let conn = made else { throw PGError(sqlState: "", message: "cannot connect to \(shown): out of memory", sql: nil) }
        func failure(_ reason: String? = nil) -> PGError {
            // libpq's reasons span lines ("…failed: Connection refused\n\tIs the server running…").
            let message = reason ?? oneLine(scrubbed(String(cString: PQerrorMessage(conn)), of: url))
            PQfinish(conn)
            return PGError(sqlState: "", message: "cannot connect to \(shown): \(message)", sql: nil)
        }
        guard PQstatus(conn) != CONNECTION_BAD else { throw failure() }
        let seconds = given.map { max(1, $0) } ?? connectTimeout(of: conn) ?? defaultConnectTimeout
        let end = seconds > 0 ? DispatchTime.now() + .seconds(seconds) : nil
        var state = PGRES_POLLING_WRITING
        while state != PGRES_POLLING_OK {
            guard state != PGRES_POLLING_FAILED else { throw failure() }
            let ready: Bool
            do {
                ready = try wait(PQsocket(conn), writing: state == PGRES_POLLING_WRITING, until: end, stop: stop)
            } catch {
                PQfinish(conn)
                throw error
            }
            guard ready else {
                let limit = given == nil ? "connect_timeout; set ?connect_timeout=N in the URL for another limit" : "what is left of --timeout"
                throw failure("no answer within \(seconds) s (\(limit))")
            }
            state = PQconnectPoll(conn)
        }
        return conn
    }

    /// The `connect_timeout` the connection was given (its URL's), when it has one.
    private static func connectTimeout(of conn: OpaquePointer) -> Int? {
        guard let options = PQconninfo(conn) else { return nil }
        defer { PQconninfoFree(options) }
        var i = 0
        while let keyword = options[i].keyword {
            if String(cString: keyword) == "connect_timeout" { return options[i].val.flatMap { Int(String(cString: $0).trimmingCharacters(in: .whitespaces)) } }
            i += 1
        }
        return nil
    }

    /// Waits until `socket` can be read (or written), in slices of 200 ms so that a stop
    /// request ends the wait (`Interrupted`) within one. False when `end` passed first. The
    /// stop is looked at only after a slice without an answer: what the server answers at
    /// once (the ROLLBACK of a stopped batch) still completes.
    private static func wait(_ socket: Int32, writing: Bool, until end: DispatchTime?, stop: StopRequest?) throws -> Bool {
        var first = true
        while true {
            if !first { try stop?.check() }
            first = false
            var slice: Int64 = 200
            if let end {
                let left = (Int64(bitPattern: end.uptimeNanoseconds) - Int64(bitPattern: DispatchTime.now().uptimeNanoseconds)) / 1_000_000
                guard left > 0 else { return false }
                slice = min(slice, left)
            }
            var descriptor = pollfd(fd: socket, events: Int16(writing ? POLLOUT : POLLIN), revents: 0)
            let rc = poll(&descriptor, 1, Int32(slice))
            // Ready, or an error libpq reports on its next call.
            if rc > 0 || (rc < 0 && errno != EINTR) { return true }
        }
    }

    /// The next result of the statement sent, waiting for it as `wait` does. On a stop
    /// request the server is asked to cancel the statement (without waiting for its answer)
    /// and `Interrupted` is thrown.
    private func nextResult() throws -> OpaquePointer? {
        while PQisBusy(handle) == 1 {
            do {
                _ = try Self.wait(PQsocket(handle), writing: false, until: nil, stop: stop)
            } catch {
                cancelInBackground()
                throw error
            }
            if PQconsumeInput(handle) == 0 { break }  // the connection failed: PQgetResult says how
        }
        return PQgetResult(handle)
    }

    /// The results of the statements sent as `PQexec` gives them: the last one, or the
    /// first that failed; a COPY's start ends the reading.
    private func lastResult() throws -> OpaquePointer? {
        var kept: OpaquePointer?
        while let raw = try nextResult() {
            let status = PQresultStatus(raw)
            if let previous = kept {
                if PQresultStatus(previous) == PGRES_FATAL_ERROR { PQclear(raw); continue }
                PQclear(previous)
            }
            kept = raw
            if status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH { break }
        }
        return kept
    }

    /// Asks the server to cancel what runs on this connection from a thread of its own: a
    /// server that does not answer must not hold up the end of the command.
    private func cancelInBackground() {
        guard let cancel = PQgetCancel(handle) else { return }
        let request = UncheckedCancel(handle: cancel)
        Thread.detachNewThread {
            var buffer = [CChar](repeating: 0, count: 256)
            _ = PQcancel(request.handle, &buffer, Int32(buffer.count))
            PQfreeCancel(request.handle)
        }
    }

    deinit { PQfinish(handle) }

    /// `url` as every output shows it, without any secret (`ConnectionText.shownLocation`).
    static func withoutPassword(_ url: String) -> String { ConnectionText.shownLocation(url) }

    /// `message` with every secret of `url` replaced by `***`: libpq and the server quote what
    /// they cannot use (a token they cannot decode, a host, a database name).
    static func scrubbed(_ message: String, of url: String) -> String { ConnectionText.scrubbed(message, of: url) }

    /// libpq's messages span lines, indented with tabs ("server closed the connection
    /// unexpectedly\n\tThis probably means…"): one line of single spaces for `Error:`.
    package static func oneLine(_ message: String) -> String {
        message.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// Why one of lctrace's own prepared statements (`lctrace_p1` …) or temporary tables
    /// (`lctrace_batch`, `lctrace_inserted`) can be missing, or a prepared name taken already:
    /// the server session changed under the connection, as a pooler in transaction mode does
    /// (pgbouncer's `pool_mode = transaction`). lctrace keeps session state on each connection
    /// (prepared statements, temporary tables, the advisory locks that say which ingest loads
    /// which file), so it needs a session of its own. Only those exact names: a user's query
    /// (`lctrace query`) naming a table `lctrace_daily` that does not exist gets no hint.
    /// Empty for any other error.
    static func sessionChangedHint(state: String, message: String) -> String {
        guard sessionObjectIsLctraces(state: state, message: message) else { return "" }
        return ": the server session changed under this connection, as behind a pooler in transaction mode"
            + " (pgbouncer's pool_mode = transaction); lctrace keeps prepared statements, temporary tables and"
            + " advisory locks on each connection: connect to the server directly, or through a pooler in session mode"
    }

    private static func sessionObjectIsLctraces(state: String, message: String) -> Bool {
        switch state {
        case "26000", "42P05":  // prepared statement does not exist / already exists
            guard let range = message.range(of: "\"lctrace_p") else { return false }
            let rest = message[range.upperBound...]
            let digits = rest.prefix(while: { $0.isASCII && $0.isNumber })
            return !digits.isEmpty && rest.dropFirst(digits.count).first == "\""
        case "42P01":  // relation does not exist
            return message.contains("relation \"lctrace_batch\"") || message.contains("relation \"lctrace_inserted\"")
        default:
            return false
        }
    }

    /// The server's error for a failed result (or the connection's, when there is none).
    private func error(_ result: OpaquePointer?, sql: String?) -> PGError {
        if let result {
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            let primary = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
            let message = Self.oneLine(primary ?? String(cString: PQresultErrorMessage(result)))
            return PGError(sqlState: state, message: message + Self.sessionChangedHint(state: state, message: message), sql: sql)
        }
        let message = Self.oneLine(String(cString: PQerrorMessage(handle)))
        return PGError(sqlState: "", message: message.isEmpty ? "connection lost" : message, sql: sql)
    }

    private func check(_ raw: OpaquePointer?, sql: String) throws -> PGResult {
        guard let raw else { throw error(nil, sql: sql) }
        let result = PGResult(raw)
        switch PQresultStatus(raw) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_SINGLE_TUPLE: return result
        default: throw error(raw, sql: sql)
        }
    }

    /// A statement sent ahead whose result is not read yet (`sendAhead`): the next page of a
    /// cursor, computed by the server while the client works through the page it has.
    private var ahead: PGAhead?

    /// Sends `sql` (no parameters) without waiting for its result: `collect` reads it later.
    /// Any other statement on the connection reads it first and keeps it for `collect`, so a
    /// caller that runs statements between two pages (the builder reading retired instances
    /// while it steps through events) still sees every result in order.
    func sendAhead(_ sql: String) throws -> PGAhead {
        try settleAhead()
        try sendPending()
        roundTrips += 1
        guard PQsendQuery(handle, sql) == 1 else { throw error(nil, sql: sql) }
        let sent = PGAhead(sql: sql)
        ahead = sent
        return sent
    }

    /// `queryPrepared` without waiting for the result (`collect` reads it), once `sql` is
    /// prepared; nil before, and while a BEGIN or queued statements wait: the caller then runs
    /// it with `queryPrepared`. The ingest sends a batch's new texts so, and waits for the copy
    /// before on its own connection meanwhile: two waits become one.
    func sendAheadPrepared(_ sql: String, _ parameters: [String?]) throws -> PGAhead? {
        guard let name = prepared[sql], !hasPending else { return nil }
        try settleAhead()
        let sent = withParameters(parameters) { values, lengths in
            PQsendQueryPrepared(handle, name, Int32(parameters.count), values, lengths, nil, 0) == 1
        }
        guard sent else { throw error(nil, sql: sql) }
        roundTrips += 1
        let ahead = PGAhead(sql: sql)
        self.ahead = ahead
        return ahead
    }

    /// Waits for the statement sent ahead, if any, and throws its failure: done at once, so
    /// that a wait on another connection runs beside it. A COPY left open stays open.
    func settle() throws {
        guard openCopy == nil else { return }
        try settleAhead()
    }

    /// The result of a statement sent ahead, waiting for it if it has not come yet.
    func collect(_ sent: PGAhead) throws -> PGResult {
        if ahead === sent { try settleAhead() }
        switch sent.outcome {
        case .success(let result)?: return result
        case .failure(let failure)?: throw failure
        case nil: throw PGError(sqlState: "", message: "a statement's result was read twice", sql: sent.sql)
        }
    }

    /// Reads the result of the statement sent ahead, if any, into its `PGAhead`. Its failure
    /// is thrown at once too (unless `rethrowing` is false: a ROLLBACK must still be sent): it
    /// is the cause of whatever would fail next (an aborted transaction, a statement timeout).
    /// Results an interrupted wait left unread (a page asked for ahead, a pipeline) are
    /// drained first, so the connection takes the next statement.
    private func settleAhead(rethrowing: Bool = true) throws {
        endOpenCopy(abandoning: false)
        guard let sent = ahead else { drainLeftovers(); return }
        ahead = nil
        do {
            sent.outcome = .success(try check(try lastResult(), sql: sent.sql))
        } catch let failure as PGError {
            sent.outcome = .failure(failure)
            if rethrowing { throw failure }
        } catch {
            // Interrupted while waiting: the server was asked to cancel; what it still sends
            // is drained by the next statement.
            sent.outcome = .failure(PGError(sqlState: "57014", message: "interrupted", sql: sent.sql))
            throw error
        }
    }

    /// Reads and drops whatever results are still on their way (a wait that a stop request
    /// ended, which asked the server to cancel) and leaves pipeline mode, within a few
    /// seconds and whatever the stop request says: after it the connection takes statements
    /// again (the ROLLBACK of a stopped batch), or says why not when it is sent.
    private func drainLeftovers() {
        guard PQtransactionStatus(handle) == PQTRANS_ACTIVE || PQpipelineStatus(handle) != PQ_PIPELINE_OFF else { return }
        let end = DispatchTime.now() + .seconds(5)
        while PQtransactionStatus(handle) == PQTRANS_ACTIVE || PQpipelineStatus(handle) != PQ_PIPELINE_OFF {
            guard DispatchTime.now() < end else { return }
            if PQpipelineStatus(handle) != PQ_PIPELINE_OFF && PQexitPipelineMode(handle) == 1 { continue }
            if PQisBusy(handle) == 1 {
                guard (try? Self.wait(PQsocket(handle), writing: false, until: end, stop: nil)) == true,
                      PQconsumeInput(handle) == 1 else { return }
                continue
            }
            if let raw = PQgetResult(handle) {
                let status = PQresultStatus(raw)
                PQclear(raw)
                // A COPY that started after the wait was given up (the next of several in one
                // query, the cancel too late for the one before): ended with an error, which
                // the server then reports; libpq would otherwise hand its start forever.
                if status == PGRES_COPY_IN { guard PQputCopyEnd(handle, "lctrace: interrupted") == 1 else { return } }
                if status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH { return }
            } else if PQpipelineStatus(handle) == PQ_PIPELINE_OFF {
                return
            }
        }
    }

    /// A `BEGIN` asked for and not sent yet (`beginLater`).
    private var beginPending = false
    /// Requests sent that the server answers (a pipeline counts once; rows into a COPY left
    /// open, none): what a network's latency multiplies. For the tests.
    package private(set) var roundTrips = 0

    /// Begins a transaction with the next statement, in its round trip: an ingest begins one
    /// a file and a batch, and a round trip across a network costs 0.1–0.5 ms of waiting.
    /// A `commit` or `rollback` before any statement sends nothing.
    func beginLater() {
        beginPending = true
    }

    /// Statements sent with the next round trip (`sendWithNext`): their results are read by
    /// nobody, or by their `received`.
    private var queued: [Piped] = []

    /// Sends `statements` at the head of the next round trip (a pipeline), after a pending
    /// BEGIN: an ingest's writes that end a file go with its COMMIT. A failure among them is
    /// thrown by that next call; a rollback before it drops them unsent. A statement's
    /// `received` hears its result when that round trip reads it.
    func sendWithNext(_ statements: [Piped]) {
        queued += statements
    }

    /// `statement` as one text, each `$n` replaced by its parameter as a quoted literal
    /// (`PQescapeLiteral`, NULL for nil), as the server reads an unknown-typed parameter; in one
    /// pass, so a literal's own `$` is never taken for a parameter. Nil when the statement
    /// gives its parameters' types, holds a quote (a `$n` inside a string is no parameter) or
    /// names a parameter it lacks.
    func inlined(_ statement: Piped) -> String? {
        guard statement.types == nil, !statement.sql.contains("'") else { return nil }
        var literals: [String] = []
        for value in statement.parameters {
            guard let value else { literals.append("NULL"); continue }
            guard let escaped = value.withCString({ PQescapeLiteral(handle, $0, strlen($0)) }) else { return nil }
            literals.append(String(cString: escaped))
            PQfreemem(escaped)
        }
        var out = ""
        let chars = Array(statement.sql.unicodeScalars)
        var i = 0
        while i < chars.count {
            guard chars[i] == "$", i + 1 < chars.count, ("0"..."9").contains(chars[i + 1]) else {
                out.unicodeScalars.append(chars[i])
                i += 1
                continue
            }
            var n = 0
            i += 1
            while i < chars.count, ("0"..."9").contains(chars[i]) {
                n = n * 10 + Int(chars[i].value - 48)
                i += 1
                if n > literals.count { return nil }
            }
            guard n >= 1 else { return nil }
            out += literals[n - 1]
        }
        return out
    }

    /// A `BEGIN` or queued statements wait for the next round trip.
    private var hasPending: Bool { beginPending || !queued.isEmpty }

    /// Sends the pending `BEGIN` and queued statements on their own, in a pipeline: for the
    /// ways of sending that cannot carry them.
    func sendPending() throws {
        guard hasPending else { return }
        _ = try pipeline([])
    }

    /// What a simple query must run before its own statements: the pending `BEGIN` and the
    /// queued statements, their parameters written as literals (`inlined`). Queued statements
    /// that cannot be written so, or whose result is awaited (`received`), are sent first,
    /// with the `BEGIN`, in a pipeline of their own.
    private func takePending() throws -> [String] {
        let inlined = queued.compactMap { $0.received == nil ? self.inlined($0) : nil }
        guard inlined.count == queued.count else {
            _ = try pipeline([])
            return []
        }
        defer {
            beginPending = false
            queued.removeAll()
        }
        return (beginPending ? ["BEGIN"] : []) + inlined
    }

    /// Cursors done with but not closed yet: closed in the next `pipeline` (no round trip of
    /// their own), and forgotten when the transaction ends (which closes them).
    private var cursorsToClose: [String] = []

    /// Closes `cursor` with the next statements sent, or at the end of its transaction; 64
    /// waiting are closed at once (a failure shows in the next statement).
    func closeLater(_ cursor: String) {
        cursorsToClose.append(cursor)
        if cursorsToClose.count >= 64 {
            try? settleAhead()
            let closes = takeCloses()
            if !closes.isEmpty { try? execute(closes.joined(separator: "; ")) }
        }
    }

    /// Cursors live inside their transaction only: outside one there is nothing to close.
    private func noteTransactionState() {
        if !cursorsToClose.isEmpty && PQtransactionStatus(handle) != PQTRANS_INTRANS { cursorsToClose.removeAll() }
    }

    /// The CLOSEs of the cursors waiting to be closed, to run first; none when the
    /// transaction has ended or failed (a CLOSE would fail the ROLLBACK sent with it).
    private func takeCloses() -> [String] {
        noteTransactionState()
        defer { cursorsToClose.removeAll() }
        return cursorsToClose.map { "CLOSE \($0)" }
    }

    /// Ends the transaction: sent even when a page asked for ahead failed, or a wait was
    /// interrupted, before it.
    func rollback() throws {
        endOpenCopy(abandoning: true)
        do {
            try settleAhead(rethrowing: false)
        } catch {
            // Interrupted while the outcome of a COPY was on its way: the server was asked to
            // cancel, and what it still sends is drained before the ROLLBACK goes.
            drainLeftovers()
        }
        queued.removeAll()
        let unsent = beginPending && PQtransactionStatus(handle) == PQTRANS_IDLE
        beginPending = false
        if unsent { return }
        try execute("ROLLBACK")
    }

    /// True while a transaction is open on the server (for the tests).
    package var inTransaction: Bool { PQtransactionStatus(handle) != PQTRANS_IDLE }

    /// Ends the transaction, and fails when the server ended it otherwise: in a transaction an
    /// earlier statement failed, PostgreSQL answers COMMIT with ROLLBACK, not with an error
    /// (a failure of a COPY not waited for, read and dropped by mistake, would otherwise pass
    /// for stored).
    func commit() throws {
        if beginPending && queued.isEmpty && PQtransactionStatus(handle) == PQTRANS_IDLE {
            try settleAhead()
            beginPending = false
            return
        }
        let status = String(cString: PQcmdStatus(try queryStatements(["COMMIT"]).handle))
        guard status == "COMMIT" else {
            throw PGError(sqlState: "40000", message: "the server ended the transaction with \(status), not COMMIT: a statement in it had failed", sql: "COMMIT")
        }
    }

    /// Runs one or more statements without parameters (the simple-query protocol).
    package func execute(_ sql: String) throws {
        _ = try queryStatements([sql])
    }

    /// Runs `statements` (no parameters) in one round trip, the simple-query protocol, and
    /// returns the last one's result; the first failure is thrown. The cursors waiting to be
    /// closed are closed first, in the same round trip.
    func queryStatements(_ statements: [String]) throws -> PGResult {
        try settleAhead()
        // The pending statements' parameters stay out of an error's text.
        let sql = statements.joined(separator: "; ")
        let pending = try takePending()
        roundTrips += 1
        guard PQsendQuery(handle, (pending + takeCloses() + statements).joined(separator: "; ")) == 1 else { throw error(nil, sql: sql) }
        defer { noteTransactionState() }
        return try check(try lastResult(), sql: sql)
    }

    /// One statement of a `pipeline`.
    struct Piped {
        var sql: String
        var parameters: [String?] = []
        var types: [UInt32]? = nil
        /// For a statement sent with the next round trip (`sendWithNext`): hears its result.
        var received: ((PGResult) -> Void)? = nil
    }

    /// Sends `statements` (and the cursors waiting to be closed) in one round trip through
    /// libpq's pipeline mode and returns their results in order; the first failure is thrown
    /// once the pipeline has been read to its end.
    func pipeline(_ statements: [Piped]) throws -> [PGResult] {
        try settleAhead()
        guard PQenterPipelineMode(handle) == 1 else { throw error(nil, sql: statements.first?.sql) }
        defer { noteTransactionState() }
        var sent = 0
        var sendFailure: PGError?
        let begin = beginPending ? [Piped(sql: "BEGIN")] : []
        beginPending = false
        let all = begin + queued + takeCloses().map { Piped(sql: $0) } + statements
        queued.removeAll()
        roundTrips += 1
        for statement in all {
            guard send(statement.sql, statement.parameters, types: statement.types) else {
                sendFailure = error(nil, sql: statement.sql)
                break
            }
            sent += 1
        }
        if PQpipelineSync(handle) != 1 && sendFailure == nil { sendFailure = error(nil, sql: statements.first?.sql) }
        var results: [PGResult] = []
        var failure: PGError? = sendFailure
        // Each statement's results end with a NULL; the sync's result ends the pipeline.
        for statement in all.prefix(sent) {
            var kept: PGResult?
            while let raw = try nextResult() {
                let result = PGResult(raw)
                switch PQresultStatus(raw) {
                case PGRES_COMMAND_OK, PGRES_TUPLES_OK: kept = result
                case PGRES_PIPELINE_ABORTED: break
                default: if failure == nil { failure = error(raw, sql: statement.sql) }
                }
            }
            if let kept {
                results.append(kept)
                statement.received?(kept)
            }
        }
        while let raw = try nextResult() {
            let status = PQresultStatus(raw)
            PQclear(raw)
            if status == PGRES_PIPELINE_SYNC { break }
        }
        if PQexitPipelineMode(handle) != 1 && failure == nil { failure = error(nil, sql: statements.first?.sql) }
        if let failure { throw failure }
        return Array(results.suffix(statements.count))
    }

    /// Runs one statement with text parameters and returns its whole result. `types`: the
    /// parameters' type OIDs, where the server cannot infer them (a cursor's query).
    @discardableResult
    package func query(_ sql: String, _ parameters: [String?] = [], types: [UInt32]? = nil) throws -> PGResult {
        if hasPending { return try pipeline([Piped(sql: sql, parameters: parameters, types: types)]).last! }
        try settleAhead()
        defer { noteTransactionState() }
        roundTrips += 1
        guard send(sql, parameters, types: types) else { throw error(nil, sql: sql) }
        return try check(try lastResult(), sql: sql)
    }

    /// Sends one statement with text parameters (`PQsendQueryParams`), their type OIDs when
    /// given (none: the server infers them); false when libpq could not send it.
    private func send(_ sql: String, _ parameters: [String?], types: [UInt32]? = nil) -> Bool {
        withParameters(parameters) { values, lengths in
            let oids = types.flatMap { $0.isEmpty ? nil : $0 } ?? []
            return oids.withUnsafeBufferPointer {
                PQsendQueryParams(handle, sql, Int32(parameters.count), oids.isEmpty ? nil : $0.baseAddress, values, lengths, nil, 0)
            } == 1
        }
    }

    /// Statements prepared on this connection, by their text: a look-up run thousands of
    /// times (a report's examples) is parsed and planned once.
    private var prepared: [String: String] = [:]
    /// Statement texts run once: prepared at their second run, so a text made for one use
    /// (a list of values written into it) never is. Bounded, as `prepared` is.
    private var seenOnce: Set<String> = []
    private var preparedNames = 0
    static let maxPrepared = 256

    /// Runs `sql` and returns its whole result: as a named prepared statement from its second
    /// run on (the first runs it unnamed), up to `maxPrepared` statements. An ingest's
    /// statements of every batch too: parsed and planned each time, they cost the server
    /// 0.19 s of its 1.7 s on the 718,000-event benchmark.
    @discardableResult
    func queryPrepared(_ sql: String, _ parameters: [String?]) throws -> PGResult {
        // Unprepared this once, in the round trip of the pending BEGIN.
        if hasPending { return try pipeline([Piped(sql: sql, parameters: parameters)]).last! }
        let name: String
        if let known = prepared[sql] {
            name = known
        } else if seenOnce.contains(sql) && prepared.count < Self.maxPrepared {
            try settleAhead()
            // A name never used before, even when a prepare was interrupted after it was sent.
            preparedNames += 1
            name = "lctrace_p\(preparedNames)"
            roundTrips += 1
            guard PQsendPrepare(handle, name, sql, 0, nil) == 1 else { throw error(nil, sql: sql) }
            _ = try check(try lastResult(), sql: sql)
            prepared[sql] = name
            seenOnce.remove(sql)
        } else {
            if seenOnce.count >= 4 * Self.maxPrepared { seenOnce.removeAll() }
            seenOnce.insert(sql)
            return try query(sql, parameters)
        }
        try settleAhead()
        defer { noteTransactionState() }
        return try withParameters(parameters) { values, lengths in
            roundTrips += 1
            guard PQsendQueryPrepared(handle, name, Int32(parameters.count), values, lengths, nil, 0) == 1 else { throw error(nil, sql: sql) }
            return try check(try lastResult(), sql: sql)
        }
    }

    /// The types the server infers for the parameters of `sql` (prepared unnamed, described).
    /// `DECLARE … CURSOR FOR` plans its query without inferring them, so it is told.
    func parameterTypes(_ sql: String) throws -> [UInt32] {
        try settleAhead()
        try sendPending()
        roundTrips += 2
        guard PQsendPrepare(handle, "", sql, 0, nil) == 1 else { throw error(nil, sql: sql) }
        _ = try check(try lastResult(), sql: sql)
        guard PQsendDescribePrepared(handle, "") == 1 else { throw error(nil, sql: sql) }
        let described = try check(try lastResult(), sql: sql)
        return (0..<Int32(PQnparams(described.handle))).map { PQparamtype(described.handle, $0) }
    }

    /// Runs one statement and hands its rows to `body` one at a time (libpq's single-row
    /// mode), so a result of any size streams in constant memory.
    package func forEachRow(_ sql: String, _ parameters: [String?] = [], _ body: (PGResult) throws -> Void) throws {
        try settleAhead()
        try sendPending()
        roundTrips += 1
        guard send(sql, parameters) else { throw error(nil, sql: sql) }
        PQsetSingleRowMode(handle)
        var failure: Error?
        // Every result must be read, even after a failure, before the connection is usable again.
        while let raw = try nextResult() {
            let result = PGResult(raw)
            guard failure == nil else { continue }
            switch PQresultStatus(raw) {
            case PGRES_SINGLE_TUPLE:
                do { try body(result) } catch { failure = error; _ = PQrequestCancel(handle) }
            case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
                break
            default:
                failure = self.error(raw, sql: sql)
            }
        }
        if let failure { throw failure }
    }

    /// Runs `COPY … FROM STDIN` and lets `body` write its rows (text format); the rows go to
    /// the server in chunks of about 1 MB as they are written, so memory stays flat. Returns
    /// the number of rows the server stored.
    @discardableResult
    /// `binary`: the COPY is `FORMAT binary` (its header and trailer written here; `body` uses
    /// the writer's binary fields). (`copyInKeepingOpen` returns before the server stores the rows.)
    func copyIn(_ sql: String, binary: Bool = false, _ body: (PGCopyWriter) throws -> Void) throws -> Int {
        try settleAhead()
        try startCopy(sql)
        return try readCopyOutcome(sql, after: feed(sql, binary: binary, body))
    }

    /// Reads the query's results to their end once its last COPY was fed: the rows that COPY
    /// stored; `failure` (what feeding met), or else the first result that failed, is thrown.
    private func readCopyOutcome(_ sql: String, after failure: Error?) throws -> Int {
        var failure = failure
        var rows = 0
        while let raw = try nextResult() {
            let result = PGResult(raw)
            if PQresultStatus(raw) == PGRES_COMMAND_OK { rows = result.changedRows } else if failure == nil {
                failure = error(raw, sql: sql)
            }
        }
        if let failure { throw failure }
        return rows
    }

    /// Sends `sql`, a COPY, after the pending BEGIN and queued statements (in its own query),
    /// and waits for the server to take its rows.
    private func startCopy(_ sql: String) throws {
        let sent = (try takePending() + [sql]).joined(separator: "; ")
        roundTrips += 1
        guard PQsendQuery(handle, sent) == 1 else { throw error(nil, sql: sql) }
        try awaitCopyStart(sql)
    }

    /// Reads the results of the query sent up to its next COPY's start; a failure before it (a
    /// statement ahead, the COPY before, this COPY refused) is thrown, named `sql`, once
    /// `lastResult` has read the query to its end.
    private func awaitCopyStart(_ sql: String) throws {
        guard let start = try lastResult() else { throw error(nil, sql: sql) }
        let started = PGResult(start)
        guard PQresultStatus(start) == PGRES_COPY_IN else { throw error(start, sql: sql) }
        _ = started
    }

    /// Sends the rows `body` writes to the COPY just started, and ends it: with an error
    /// message when `body` or a send failed, which makes the server roll the COPY back.
    private func feed(_ sql: String, binary: Bool, _ body: (PGCopyWriter) throws -> Void) -> Error? {
        let writer = PGCopyWriter(connection: self, sql: sql)
        var failure: Error?
        do {
            if binary { writer.binaryHeader() }
            try body(writer)
            if binary { writer.binaryTrailer() }
            try writer.flush()
        } catch {
            failure = error
        }
        let end = failure == nil ? PQputCopyEnd(handle, nil) : PQputCopyEnd(handle, "lctrace: copy abandoned")
        if end != 1 && failure == nil { failure = error(nil, sql: sql) }
        return failure
    }

    /// One `COPY … FROM STDIN` (text format) of `copyIn(_ parts:)`, and the rows it writes.
    struct CopyPart {
        var sql: String
        var body: (PGCopyWriter) throws -> Void
    }

    /// Runs several `COPY … FROM STDIN` in one simple query, after the pending BEGIN and queued
    /// statements, feeding each in turn. One COPY's end and the next one's start share a wait,
    /// so n copies wait n + 1 times rather than 2n: an analysis stores a session's four kinds
    /// of rows so, and each wait costs a round trip across a network. (libpq hands the results
    /// of a multi-statement query in order, a COPY's start among them:
    /// https://www.postgresql.org/docs/current/libpq-copy.html.) The first failure is thrown
    /// once the query's results have been read to their end; the server stops the query there.
    func copyIn(_ parts: [CopyPart]) throws {
        guard !parts.isEmpty else { return }
        try settleAhead()
        // A failure is named by the whole query: it may be the COPY before's.
        let sql = parts.map(\.sql).joined(separator: "; ")
        try startCopy(sql)
        var failure: Error?
        for (index, part) in parts.enumerated() {
            if index > 0 {
                do {
                    try awaitCopyStart(sql)
                } catch let failed as PGError {
                    failure = failed
                    break
                }
            }
            if let failed = feed(part.sql, binary: false, part.body) {
                failure = failed
                break
            }
        }
        // The last COPY's outcome, or what a failure left to read.
        _ = try readCopyOutcome(sql, after: failure)
    }

    /// A COPY left open for more rows (`copyInKeepingOpen`).
    private final class OpenCopy {
        let sql: String
        let writer: PGCopyWriter
        let binary: Bool
        let opened = DispatchTime.now()
        var parts = 1
        init(sql: String, writer: PGCopyWriter, binary: Bool) {
            self.sql = sql
            self.writer = writer
            self.binary = binary
        }
    }

    private var openCopy: OpenCopy?

    /// False: `copyInKeepingOpen` ends each COPY once its rows are sent (outcome read at the
    /// next statement), for a session with a `statement_timeout`, which would count an open
    /// COPY's whole life, the client's pauses too.
    var keepsCopiesOpen = true

    /// A COPY is open (for the tests).
    var hasOpenCopy: Bool { openCopy != nil }

    /// How long, and for how many calls, a COPY stays open: the server stores the rows sent so
    /// far as they come, so renewing it costs one wait, and no statement spans a long load
    /// (what `pg_stat_activity` shows, what a cancel ends). (A `statement_timeout` is met by
    /// `keepsCopiesOpen`.)
    static let openCopyLimit = (seconds: 1.0, parts: 64)

    /// Writes `body`'s rows into a COPY of `sql` left open by the call before, or starts one
    /// after `statements` (and the pending BEGIN and queued statements), and leaves it open
    /// once its rows are sent: the ingest's batches of a file go into one COPY, not one each,
    /// with no wait between them (two a batch before). Rows going into an open COPY queue
    /// `statements` for the next round trip instead: callers give only statements that may
    /// run after the rows, in the same transaction. Any other use of the connection ends the
    /// COPY first and reads its outcome (a failure is thrown there); a rollback abandons it.
    func copyInKeepingOpen(_ sql: String, binary: Bool = false, with statements: [Piped],
                           _ body: (PGCopyWriter) throws -> Void) throws {
        let open: OpenCopy
        if keepsCopiesOpen, let kept = openCopy, kept.sql == sql, kept.parts < Self.openCopyLimit.parts,
           Double(DispatchTime.now().uptimeNanoseconds - kept.opened.uptimeNanoseconds) / 1e9 < Self.openCopyLimit.seconds {
            sendWithNext(statements)
            kept.parts += 1
            open = kept
        } else {
            try settleAhead()
            sendWithNext(statements)
            try startCopy(sql)
            open = OpenCopy(sql: sql, writer: PGCopyWriter(connection: self, sql: sql), binary: binary)
            openCopy = open
            if binary { open.writer.binaryHeader() }
        }
        do {
            try body(open.writer)
            try open.writer.flush()
        } catch {
            endOpenCopy(abandoning: true)
            throw error
        }
        if !keepsCopiesOpen { endOpenCopy(abandoning: false) }
    }

    /// Ends the open COPY, if any: its outcome is read by the next statement (`settleAhead`).
    /// `abandoning`: ended with an error, so the server stores none of its rows.
    private func endOpenCopy(abandoning: Bool) {
        guard let open = openCopy else { return }
        openCopy = nil
        var abandon = abandoning
        if !abandon {
            if open.binary { open.writer.binaryTrailer() }
            // Rows that could not be sent: the server must not store the others alone.
            abandon = (try? open.writer.flush()) == nil
        }
        _ = PQputCopyEnd(handle, abandon ? "lctrace: copy abandoned" : nil)
        ahead = PGAhead(sql: open.sql)
    }

    /// Sends `bytes` as COPY data.
    fileprivate func send(_ bytes: [UInt8], sql: String) throws {
        guard !bytes.isEmpty else { return }
        let rc = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                PQputCopyData(handle, $0, Int32(buffer.count))
            }
        }
        guard rc == 1 else { throw error(nil, sql: sql) }
    }

    /// Runs `body` in a transaction (`begin` starts it: a snapshot's isolation, read only):
    /// committed when it returns, rolled back when it throws.
    /// What begins a reading command's transaction: one snapshot for all its statements.
    static let beginSnapshot = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"

    /// `later`: the plain BEGIN goes with the first statement (`beginLater`), a round trip less.
    package func transaction<T>(begin: String = "BEGIN", later: Bool = false, _ body: () throws -> T) throws -> T {
        assert(!hasPending, "a transaction begun inside one begun later")
        if later {
            precondition(begin == "BEGIN", "only a plain BEGIN is sent later")
            beginLater()
        } else {
            try execute(begin)
        }
        do {
            let value = try body()
            try commit()
            return value
        } catch {
            try? rollback()
            throw error
        }
    }

    /// Asks the server to cancel the statement running on this connection (from another
    /// thread: libpq's cancel request is the one call that may be made concurrently).
    package func cancel() {
        guard let cancel = PQgetCancel(handle) else { return }
        var buffer = [CChar](repeating: 0, count: 256)
        _ = PQcancel(cancel, &buffer, Int32(buffer.count))
        PQfreeCancel(cancel)
    }

    /// Passes `parameters` to libpq as C strings with explicit lengths.
    private func withParameters<T>(_ parameters: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?) throws -> T) rethrows -> T {
        if parameters.isEmpty { return try body(nil, nil) }
        var storage: [[CChar]?] = parameters.map { $0.map { Array($0.utf8CString) } }
        var lengths = parameters.map { Int32($0?.utf8.count ?? 0) }
        return try storage.withUnsafeMutableBufferPointer { strings in
            var pointers: [UnsafePointer<CChar>?] = []
            pointers.reserveCapacity(strings.count)
            func collect(_ i: Int) throws -> T {
                if i == strings.count {
                    return try pointers.withUnsafeBufferPointer { p in
                        try lengths.withUnsafeMutableBufferPointer { l in try body(p.baseAddress, l.baseAddress) }
                    }
                }
                if strings[i] == nil {
                    pointers.append(nil)
                    return try collect(i + 1)
                }
                return try strings[i]!.withUnsafeBufferPointer { buffer in
                    pointers.append(buffer.baseAddress)
                    return try collect(i + 1)
                }
            }
            return try collect(0)
        }
    }
}

/// A statement sent ahead on a `PGConnection` and its outcome once read.
final class PGAhead {
    let sql: String
    fileprivate var outcome: Result<PGResult, PGError>?
    init(sql: String) { self.sql = sql }
}

/// libpq's cancel object, handed to the thread that sends the request (it is used there only).
private struct UncheckedCancel: @unchecked Sendable {
    let handle: OpaquePointer
}

/// Rows for `COPY … FROM STDIN` in text format: tab between fields, newline after a row,
/// `\N` for NULL, and backslash escapes for the characters the format gives a meaning to
/// (https://www.postgresql.org/docs/current/sql-copy.html, "Text Format").
final class PGCopyWriter {
    private unowned let connection: PGConnection
    private let sql: String
    private var bytes: [UInt8] = []
    private var fieldsInRow = 0
    /// Buffered bytes past which a finished row is sent.
    package static let chunk = 1 << 20

    fileprivate init(connection: PGConnection, sql: String) {
        self.connection = connection
        self.sql = sql
        bytes.reserveCapacity(Self.chunk + 4096)
    }

    package func add(_ value: String?) {
        separate()
        guard var value else { return addNull() }
        value.withUTF8 { escape(UnsafeRawBufferPointer($0)) }
    }

    /// A text given as its UTF-8 bytes (nil: NULL).
    package func add(bytes value: UnsafeRawBufferPointer?) {
        separate()
        guard let value else { return addNull() }
        escape(value)
    }

    /// `\N`.
    @inline(__always)
    private func addNull() {
        bytes.append(0x5c)
        bytes.append(0x4e)
    }

    /// The bytes as they are when none needs escaping (nearly every text), else byte by byte.
    @inline(__always)
    private func escape(_ value: UnsafeRawBufferPointer) {
        var plain = true
        for b in value where b == 0x5c || b == 0x09 || b == 0x0a || b == 0x0d {
            plain = false
            break
        }
        if plain {
            bytes.append(contentsOf: value)
            return
        }
        for b in value {
            switch b {
            case 0x5c: bytes += [0x5c, 0x5c]
            case 0x09: bytes += [0x5c, 0x74]
            case 0x0a: bytes += [0x5c, 0x6e]
            case 0x0d: bytes += [0x5c, 0x72]
            default: bytes.append(b)
            }
        }
    }

    /// Digits written straight into the buffer (going through `String(value)` cost a tenth of
    /// an ingest's client instructions): two a division, right to left into 20 bytes on the
    /// stack, then appended at once.
    package func add(_ value: Int64?) {
        separate()
        guard let value else { return addNull() }
        if value < 0 { bytes.append(0x2d) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var i = 20
            while magnitude >= 100 {
                let pair = UInt8(truncatingIfNeeded: magnitude % 100)
                magnitude /= 100
                i -= 2
                digits[i] = 0x30 + pair / 10
                digits[i + 1] = 0x30 + pair % 10
            }
            if magnitude >= 10 {
                i -= 2
                digits[i] = 0x30 + UInt8(truncatingIfNeeded: magnitude / 10)
                digits[i + 1] = 0x30 + UInt8(truncatingIfNeeded: magnitude % 10)
            } else {
                i -= 1
                digits[i] = 0x30 + UInt8(truncatingIfNeeded: magnitude)
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[i..<20]))
        }
    }

    // MARK: FORMAT binary
    // (Issue 26) The blocks of events go binary: the server's parsing of text arrays, an
    // element at a time, cost twice its reading of the same arrays in binary (0.46 s against
    // 0.24 s for 718,000 events), and big-endian integers cost the client less than digits.

    /// The binary COPY's signature, flags and header extension length.
    fileprivate func binaryHeader() {
        bytes += [0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00]
        appendBigEndian(Int32(0))
        appendBigEndian(Int32(0))
    }

    /// The binary COPY's end: a tuple of -1 fields.
    fileprivate func binaryTrailer() { appendBigEndian(Int16(-1)) }

    @inline(__always)
    private func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Starts a binary tuple of `fields` fields.
    package func beginTuple(_ fields: Int) { appendBigEndian(Int16(fields)) }

    /// Ends a binary tuple: sent once the buffer is full.
    package func endTuple() throws {
        if bytes.count >= Self.chunk { try flush() }
    }

    /// The binary types the writer encodes, by their type OIDs (pg_type; an array names its
    /// elements' type).
    package enum BinaryType: Int32 {
        case int2 = 21, int4 = 23, int8 = 20, jsonb = 3802
    }

    /// A binary one-dimensional array field of `count` elements of type `element`: `body`
    /// adds element `i` (`binary`, `binaryJSON`), each written whole with its length.
    package func binaryArray(_ element: BinaryType, count: Int, hasNulls: Bool, _ body: (Int) -> Void) {
        let lengthAt = bytes.count
        appendBigEndian(Int32(0))
        appendBigEndian(Int32(1))  // dimensions
        appendBigEndian(Int32(hasNulls ? 1 : 0))
        appendBigEndian(element.rawValue)
        appendBigEndian(Int32(count))
        appendBigEndian(Int32(1))  // lower bound
        for i in 0..<count { body(i) }
        let length = Int32(bytes.count - lengthAt - 4).bigEndian
        withUnsafeBytes(of: length) { raw in
            for k in 0..<4 { bytes[lengthAt + k] = raw[k] }
        }
    }

    /// A binary integer of `type`, a field or an element of `binaryArray` (the same encoding:
    /// its length, then its big-endian bytes; NULL: nil). The caller checked that it fits.
    @inline(__always)
    package func binary(_ value: Int64?, _ type: BinaryType) {
        guard let value else { return appendBigEndian(Int32(-1)) }
        switch type {
        case .int2: appendBigEndian(Int32(2)); appendBigEndian(Int16(truncatingIfNeeded: value))
        case .int4: appendBigEndian(Int32(4)); appendBigEndian(Int32(truncatingIfNeeded: value))
        default: appendBigEndian(Int32(8)); appendBigEndian(value)
        }
    }

    /// A binary `jsonb`, a field or an element of `binaryArray`: format version 1, then the
    /// JSON text (NULL: nil).
    package func binaryJSON(_ json: UnsafeRawBufferPointer?) {
        guard let json else { return appendBigEndian(Int32(-1)) }
        appendBigEndian(Int32(json.count + 1))
        bytes.append(1)
        bytes.append(contentsOf: json)
    }

    func endRow() throws {
        bytes.append(0x0a)
        fieldsInRow = 0
        if bytes.count >= Self.chunk { try flush() }
    }

    package func flush() throws {
        try connection.send(bytes, sql: sql)
        bytes.removeAll(keepingCapacity: true)
    }

    private func separate() {
        if fieldsInRow > 0 { bytes.append(0x09) }
        fieldsInRow += 1
    }
}

extension PGError: StorageFailure {
    package var kind: StorageFailureKind { isTimeout ? .stopped : .unavailable }
    package var line: String { "database: " + message }
    package var hint: String? {
        // libpq takes only its own parameters in a URL: a schema asked for as ?search_path=
        // or ?schema= (the first thing a newcomer types) is refused as an unknown one.
        if isConnectionFailure && ["invalid URI query parameter", "invalid connection option", "extra key/value separator"].contains(where: message.contains) {
            return "a URL takes libpq's parameters only (sslmode, connect_timeout, options, …), = inside a value written %3D: the schema is set with ?options=-csearch_path%3DNAME"
        }
        if isConnectionFailure { return "check the URL, that the server runs and accepts this user, and the network" }
        if sqlState == "42501" { return "the role lacks a privilege lctrace needs (a writing command needs to create and write its tables)" }
        return nil
    }
}

package extension Array where Element == String {
    /// The strings as a NULL-terminated array of C strings, valid during `body` (libpq's
    /// keyword and value lists).
    func withCStrings<R>(_ body: (UnsafePointer<UnsafePointer<CChar>?>) throws -> R) rethrows -> R {
        let copies = map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer($0) } + [nil]
        return try pointers.withUnsafeBufferPointer { try body($0.baseAddress!) }
    }
}
