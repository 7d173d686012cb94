internal import CSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LCTraceStore

/// An error from SQLite, carrying the SQL and SQLite's own message but never the bound
/// values (they may be user data and can be large).
struct SQLiteError: Error, CustomStringConvertible, Equatable {
    /// The primary result code (`SQLITE_BUSY`, `SQLITE_READONLY`, …).
    package var code: Int32
    package var message: String
    package var sql: String?

    package var description: String {
        var text = message
        if let sql { text += " (in: \(sql.count > 160 ? String(sql.prefix(160)) + "…" : sql))" }
        return text
    }

    /// True when the database or its folder cannot be written: read-only file, full disk,
    /// or an I/O failure. The command line maps these to exit status 74.
    /// True when the database file is damaged (a corrupt page, or not a database at all).
    var isCorrupt: Bool { [SQLITE_CORRUPT, SQLITE_NOTADB].contains(code & 0xff) }

    var isIOFailure: Bool {
        [SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_PERM]
            .contains(code & 0xff)
    }
}

/// `SQLITE_TRANSIENT` is a C macro Swift cannot import: it tells SQLite to copy bound text.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One SQLite connection. Owns its handle; closes it in `deinit`.
package final class SQLiteDatabase {
    enum Mode {
        case readWrite, readOnly
        /// Read and write an existing database, never creating one (`Schema.releaseWALFiles`).
        case readWriteExisting
        /// Read-only and promised unchanging: for databases on read-only media.
        case immutable
    }

    package let handle: OpaquePointer
    package let path: String

    /// Opens (and for `.readWrite` creates) the database at `path`.
    /// A read-only connection uses `SQLITE_OPEN_READONLY`, so no statement can write,
    /// whatever SQL a user sends (https://sqlite.org/c3ref/open.html).
    init(path: String, mode: Mode = .readWrite) throws {
        self.path = path
        var db: OpaquePointer?
        let flags: Int32
        var name = path
        switch mode {
        case .readOnly: flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
        case .readWrite: flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        case .readWriteExisting: flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
        case .immutable:
            flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
            let escaped = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
            name = "file:\(escaped)?immutable=1"
        }
        let rc = sqlite3_open_v2(name, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: "cannot open database \(path): \(message)", sql: nil)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        // Another writer (a second `lctrace ingest`) holds the lock for at most one batch;
        // wait for it rather than fail (https://sqlite.org/c3ref/busy_timeout.html).
        sqlite3_busy_timeout(db, 120_000)
    }

    private var closed = false

    deinit { if !closed { sqlite3_close_v2(handle) } }

    /// Closes the connection now rather than when the last reference goes (which another
    /// thread may hold a moment longer): the last connection to close copies the write-ahead
    /// log back and removes it. Statements still prepared keep it open until they are freed
    /// (https://sqlite.org/c3ref/close.html). Nothing may use the connection afterwards.
    package func close() {
        guard !closed else { return }
        closed = true
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    package func execute(_ sql: String) throws {
        var errmsg: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errmsg)
        if rc != SQLITE_OK {
            let message = errmsg.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(errmsg)
            throw SQLiteError(code: rc, message: message, sql: sql)
        }
    }

    func prepare(_ sql: String) throws -> SQLiteStatement { try SQLiteStatement(database: self, sql: sql) }

    /// The first column of the first row, or nil.
    package func scalarInt(_ sql: String, _ bindings: [SQLValue] = []) throws -> Int64? {
        let stmt = try prepare(sql)
        try stmt.bind(bindings)
        return try stmt.step() ? stmt.int(0) : nil
    }

    package func scalarText(_ sql: String, _ bindings: [SQLValue] = []) throws -> String? {
        let stmt = try prepare(sql)
        try stmt.bind(bindings)
        return try stmt.step() ? stmt.text(0) : nil
    }

    package var changes: Int { Int(sqlite3_changes(handle)) }
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    /// Ends the transaction. Statements left on a row are reset first: in WAL mode such a
    /// statement keeps its read snapshot after COMMIT, and once another process commits, the
    /// next BEGIN IMMEDIATE on this connection would be busy for good (a stale snapshot).
    package func commit() throws {
        while let s = busyStatement { sqlite3_reset(s) }
        try execute("COMMIT")
    }

    /// True when a statement of this connection is stepped but not reset (it holds a snapshot).
    var hasActiveStatements: Bool { busyStatement != nil }

    /// A statement of this connection that is stepped but not reset, if any.
    private var busyStatement: OpaquePointer? {
        var stmt = sqlite3_next_stmt(handle, nil)
        while let s = stmt, sqlite3_stmt_busy(s) == 0 { stmt = sqlite3_next_stmt(handle, s) }
        return stmt
    }

    func error(_ rc: Int32, sql: String?) -> SQLiteError {
        SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    /// Runs `body` again while it fails with SQLITE_BUSY, for up to `seconds`. SQLite skips the
    /// busy handler where waiting could deadlock (changing the journal mode, creating the
    /// schema while another process does: https://sqlite.org/c3ref/busy_handler.html), so
    /// those steps retry here instead of failing a concurrent ingest.
    func retryingWhileBusy<T>(seconds: Double = 120, _ body: () throws -> T) throws -> T {
        let deadline = Date().addingTimeInterval(seconds)
        var pause: UInt32 = 2_000
        while true {
            do {
                return try body()
            } catch let error as SQLiteError where (error.code & 0xff) == SQLITE_BUSY && Date() < deadline {
                if !isAutocommit { try? execute("ROLLBACK") }
                usleep(pause + UInt32.random(in: 0...pause))
                pause = min(pause * 2, 100_000)
            }
        }
    }

    /// Takes the write lock: `BEGIN IMMEDIATE`, retried while busy.
    func beginImmediate() throws {
        try retryingWhileBusy { try execute("BEGIN IMMEDIATE") }
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back on error. IMMEDIATE takes
    /// the write lock up front so the busy timeout applies there, not at a later deadlock.
    package func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        try beginImmediate()
        do {
            let result = try body()
            try commit()
            return result
        } catch {
            if !isAutocommit { try? execute("ROLLBACK") }
            throw error
        }
    }
}

/// A prepared statement. Prepared once, reset and re-bound for each row in hot loops.
final class SQLiteStatement {
    package let handle: OpaquePointer
    package unowned let database: SQLiteDatabase
    package let sql: String

    /// SQL after the first statement, which `sqlite3_prepare_v2` leaves unprepared.
    package let tail: String

    package init(database: SQLiteDatabase, sql: String) throws {
        self.database = database
        self.sql = sql
        var stmt: OpaquePointer?
        var tailText = ""
        let rc = sql.withCString { base -> Int32 in
            var tailPointer: UnsafePointer<CChar>?
            let rc = sqlite3_prepare_v2(database.handle, base, -1, &stmt, &tailPointer)
            if let tailPointer { tailText = String(cString: tailPointer) }
            return rc
        }
        guard rc == SQLITE_OK, let stmt else {
            if rc == SQLITE_OK { throw SQLiteError(code: SQLITE_MISUSE, message: "no SQL statement", sql: sql) }
            throw database.error(rc, sql: sql)
        }
        handle = stmt
        tail = tailText
    }

    deinit {
        sqlite3_finalize(handle)
        keptValues?.deallocate()
        keptStates?.deallocate()
    }

    /// What `bindKeeping` last bound to each parameter (state 0: unknown, 1: NULL, 2: the
    /// integer in `keptValues`), so an unchanged value is not bound again. A many-row INSERT
    /// rebinds hundreds of parameters per run, most of them to what they already hold (the
    /// session, columns empty on most rows). Any other bind or `reset` forgets a parameter.
    private var keptValues: UnsafeMutablePointer<Int64>?
    private var keptStates: UnsafeMutablePointer<UInt8>?

    @inline(__always) private func forgetKept(_ index: Int32) {
        if let keptStates { keptStates[Int(index)] = 0 }
    }

    /// Binds an integer or NULL unless the parameter already holds exactly that.
    @inline(__always) func bindKeeping(_ value: Int64?, at index: Int32) {
        if keptStates == nil {
            let count = Int(sqlite3_bind_parameter_count(handle)) + 1
            keptValues = .allocate(capacity: count)
            keptValues!.initialize(repeating: 0, count: count)
            keptStates = .allocate(capacity: count)
            keptStates!.initialize(repeating: 0, count: count)
        }
        let states = keptStates!, values = keptValues!, i = Int(index)
        if let value {
            if states[i] == 2 && values[i] == value { return }
            states[i] = sqlite3_bind_int64(handle, index, value) == SQLITE_OK ? 2 : 0
            values[i] = value
        } else {
            if states[i] == 1 { return }
            states[i] = sqlite3_bind_null(handle, index) == SQLITE_OK ? 1 : 0
        }
    }

    /// True when the statement cannot change the database (https://sqlite.org/c3ref/stmt_readonly.html).
    var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    package func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        if let keptStates { keptStates.update(repeating: 0, count: Int(sqlite3_bind_parameter_count(handle)) + 1) }
    }

    /// Resets without clearing bindings: for hot loops that bind every parameter each time.
    @inline(__always) package func resetKeepingBindings() {
        sqlite3_reset(handle)
    }

    package func bind(_ values: [SQLValue]) throws {
        for (i, value) in values.enumerated() { try bind(value, at: Int32(i + 1)) }
    }

    package func bind(_ value: SQLValue, at index: Int32) throws {
        forgetKept(index)
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case .int(let v): rc = sqlite3_bind_int64(handle, index, v)
        case .double(let v): rc = sqlite3_bind_double(handle, index, v)
        case .text(let v): rc = bindText(v, at: index)
        case .blob(let v):
            rc = v.withUnsafeBytes { sqlite3_bind_blob64(handle, index, $0.baseAddress, sqlite3_uint64($0.count), sqliteTransient) }
        }
        if rc != SQLITE_OK { throw database.error(rc, sql: sql) }
    }

    @inline(__always) package func bind(_ value: Int64, at index: Int32) {
        forgetKept(index)
        sqlite3_bind_int64(handle, index, value)
    }

    @inline(__always) package func bind(_ value: Int64?, at index: Int32) {
        forgetKept(index)
        if let value { sqlite3_bind_int64(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }

    /// Binds UTF-8 bytes as text (copied by SQLite), or NULL for nil.
    @inline(__always) func bindText(_ bytes: UnsafeRawBufferPointer?, at index: Int32) {
        forgetKept(index)
        if let bytes, let base = bytes.baseAddress {
            sqlite3_bind_text64(handle, index, base.assumingMemoryBound(to: CChar.self), sqlite3_uint64(bytes.count),
                                sqliteTransient, UInt8(SQLITE_UTF8))
        } else if bytes != nil {
            sqlite3_bind_text(handle, index, "", 0, sqliteTransient)
        } else {
            sqlite3_bind_null(handle, index)
        }
    }

    /// True when column `i` is text equal to `bytes`, or NULL and `bytes` is nil.
    /// The text of column `i` of the current row, valid until the next step or reset; nil for NULL.
    func columnBytes(_ i: Int) -> UnsafeRawBufferPointer? {
        guard let p = sqlite3_column_text(handle, Int32(i)) else { return nil }
        return UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(handle, Int32(i))))
    }

    func columnEquals(_ i: Int, _ bytes: UnsafeRawBufferPointer?) -> Bool {
        guard let p = sqlite3_column_text(handle, Int32(i)) else { return bytes == nil }
        guard let bytes else { return false }
        let n = Int(sqlite3_column_bytes(handle, Int32(i)))
        return n == bytes.count && (n == 0 || memcmp(p, bytes.baseAddress!, n) == 0)
    }

    @inline(__always) package func bind(_ value: String?, at index: Int32) {
        forgetKept(index)
        if let value { bindText(value, at: index) } else { sqlite3_bind_null(handle, index) }
    }

    /// Binds `value` as text with its explicit length: a NUL inside it is kept, not taken for
    /// its end (https://sqlite.org/c3ref/bind_blob.html).
    @discardableResult
    private func bindText(_ value: String, at index: Int32) -> Int32 {
        var value = value
        return value.withUTF8 { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_text(handle, index, "", 0, sqliteTransient) }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text64(handle, index, $0, sqlite3_uint64(bytes.count), sqliteTransient, UInt8(SQLITE_UTF8))
            }
        }
    }

    /// Steps once: true when a row is available, false when done.
    @discardableResult
    package func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = database.error(rc, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Binds, runs to completion, resets.
    package func run(_ values: [SQLValue] = []) throws {
        reset()
        try bind(values)
        while try step() {}
        sqlite3_reset(handle)
    }

    package var columnCount: Int { Int(sqlite3_column_count(handle)) }
    package func columnName(_ i: Int) -> String { String(cString: sqlite3_column_name(handle, Int32(i))) }
    package func isNull(_ i: Int) -> Bool { sqlite3_column_type(handle, Int32(i)) == SQLITE_NULL }
    /// True when column `i` holds an integer (not text, NULL, a real or a blob).
    func isInteger(_ i: Int) -> Bool { sqlite3_column_type(handle, Int32(i)) == SQLITE_INTEGER }
    /// Calls `body` with the bytes of column `i` as text, valid only inside it.
    func withText<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let p = sqlite3_column_text(handle, Int32(i))
        return try body(UnsafeRawBufferPointer(start: p, count: p == nil ? 0 : Int(sqlite3_column_bytes(handle, Int32(i)))))
    }
    package func int(_ i: Int) -> Int64 { sqlite3_column_int64(handle, Int32(i)) }
    package func optionalInt(_ i: Int) -> Int64? { isNull(i) ? nil : int(i) }
    package func double(_ i: Int) -> Double { sqlite3_column_double(handle, Int32(i)) }

    package func text(_ i: Int) -> String? {
        guard let p = sqlite3_column_text(handle, Int32(i)) else { return nil }
        let n = Int(sqlite3_column_bytes(handle, Int32(i)))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    package func value(_ i: Int) -> SQLValue {
        switch sqlite3_column_type(handle, Int32(i)) {
        case SQLITE_INTEGER: return .int(int(i))
        case SQLITE_FLOAT: return .double(double(i))
        case SQLITE_TEXT: return .text(text(i) ?? "")
        case SQLITE_BLOB:
            let n = Int(sqlite3_column_bytes(handle, Int32(i)))
            guard n > 0, let p = sqlite3_column_blob(handle, Int32(i)) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: p, count: n)))
        default: return .null
        }
    }
}
