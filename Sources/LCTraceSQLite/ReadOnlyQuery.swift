internal import CSQLite
import Dispatch
import LCTraceStore

/// Runs users' ad-hoc SQL. Three locks keep it from changing anything: the connection is
/// opened read-only, statements that are not read-only are refused before they run, and an
/// authorizer denies ATTACH/DETACH and pragmas that set values (ATTACH counts as read-only
/// to `sqlite3_stmt_readonly`, see https://sqlite.org/c3ref/stmt_readonly.html). The
/// connection also runs in SQLite's defensive mode, with extension loading and the FTS3
/// tokenizer off (`fts3_tokenizer()` returns a pointer), and a cap on the size of any one
/// value, so a query costs what its rows cost and reveals nothing of the process. The schema
/// is trusted: only a database whose every table, view, index and trigger is exactly
/// lctrace's reaches a query (`SQLiteSchema.verifyObjects`), and lctrace's views read packed
/// rows with `json_extract`, which SQLite 3.40 does not mark harmless for untrusted schemas.
enum ReadOnlyQuery {
    /// The largest text or blob a query may make (zeroblob, replace, printf …); stored values
    /// are far below it (a line is at most 1 MiB).
    static let maxValueBytes: Int32 = 64 << 20

    /// Functions a query may not call, whatever SQLite was built with.
    static let deniedFunctions: Set<String> = ["fts3_tokenizer", "load_extension"]

    /// Pragmas that only read, allowed with no argument or as table-valued functions.
    static let readablePragmas: Set<String> = [
        "table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "foreign_key_list",
        "user_version", "schema_version", "page_count", "page_size", "freelist_count", "database_list",
        "compile_options", "function_list", "pragma_list", "table_list", "collation_list", "encoding",
        "journal_mode", "integrity_check", "quick_check", "application_id", "data_version",
    ]

    /// Hardens `db` for users' SQL (see above) and installs the authorizer.
    static func restrict(_ db: SQLiteDatabase) {
        for (op, on) in [(SQLITE_DBCONFIG_DEFENSIVE, 1), (SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0),
                         (SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0), (SQLITE_DBCONFIG_TRUSTED_SCHEMA, 1)] {
            _ = lctrace_db_config_flag(db.handle, op, Int32(on))
        }
        sqlite3_enable_load_extension(db.handle, 0)
        sqlite3_limit(db.handle, SQLITE_LIMIT_LENGTH, maxValueBytes)
        sqlite3_set_authorizer(db.handle, { _, action, arg1, arg2, _, _ in
            switch action {
            case SQLITE_FUNCTION:
                // arg2 is the function's name (https://sqlite.org/c3ref/c_alter_table.html).
                let name = arg2.map { String(cString: $0).lowercased() } ?? ""
                return ReadOnlyQuery.deniedFunctions.contains(name) ? SQLITE_DENY : SQLITE_OK
            case SQLITE_SELECT, SQLITE_READ, SQLITE_RECURSIVE:
                return SQLITE_OK
            case SQLITE_UPDATE:
                // Table-valued functions (json_each, pragma_table_info) declare their columns
                // through an internal update of sqlite_master; a user's UPDATE is refused
                // by the read-only check and the read-only connection anyway.
                return arg1.map { String(cString: $0) == "sqlite_master" } ?? false ? SQLITE_OK : SQLITE_DENY
            case SQLITE_PRAGMA:
                let name = arg1.map { String(cString: $0).lowercased() } ?? ""
                if arg2 != nil && name != "table_info" && name != "table_xinfo" && name != "index_list"
                    && name != "index_info" && name != "index_xinfo" && name != "foreign_key_list" {
                    return SQLITE_DENY  // `PRAGMA x = value` sets something
                }
                return ReadOnlyQuery.readablePragmas.contains(name) ? SQLITE_OK : SQLITE_DENY
            default:
                return SQLITE_DENY
            }
        }, nil)
    }

    /// Prepares `sql` (one statement; trailing `;` and blanks allowed) on a restricted connection.
    package static func prepare(_ sql: String, on db: SQLiteDatabase) throws -> SQLiteStatement {
        let trimmed = sql.trimmingTrailing()
        if trimmed.isEmpty { throw QueryRefused(message: "empty query") }
        // Comments are welcome around the statement (a README query pasted whole, a .sql file).
        if !holdsStatement(trimmed, db) { throw QueryRefused(message: "empty query: the SQL holds only comments") }
        let stmt: SQLiteStatement
        do {
            stmt = try db.prepare(trimmed)
        } catch let error as SQLiteError where error.code == SQLITE_AUTH {
            throw QueryRefused(message: "query refused: lctrace query only reads (no writes, ATTACH, or setting pragmas)")
        } catch let error as SQLiteError where isQueryFault(error) {
            throw QueryRefused(message: "SQL error: \(error.message)")
        }
        if holdsStatement(stmt.tail.trimmingTrailing(), db) {
            throw QueryRefused(message: "one statement at a time, please: found more SQL after the first statement")
        }
        if !stmt.isReadOnly {
            throw QueryRefused(message: "query refused: lctrace query only reads; this statement would change the database")
        }
        return stmt
    }
}

extension ReadOnlyQuery {
    /// True when `sql` holds something other than blanks, comments and semicolons: SQLite
    /// prepares no statement from those. Text that does not parse counts as a statement.
    static func holdsStatement(_ sql: String, _ db: SQLiteDatabase) -> Bool {
        if sql.isEmpty { return false }
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(db.handle, sql, -1, &stmt, nil)
        sqlite3_finalize(stmt)
        return rc != SQLITE_OK || stmt != nil
    }

    /// True when an error is the query's own (bad SQL, a value too big, a type mismatch): a
    /// usage error. Anything else (a corrupt page, an I/O error, no memory) is the database's.
    static func isQueryFault(_ error: SQLiteError) -> Bool {
        [SQLITE_ERROR, SQLITE_AUTH, SQLITE_RANGE, SQLITE_MISMATCH, SQLITE_TOOBIG, SQLITE_CONSTRAINT].contains(error.code & 0xff)
    }
}

/// Stops a query at a deadline (`lctrace query --timeout`): SQLite calls back every few
/// thousand steps of its virtual machine, and the query ends with SQLITE_INTERRUPT
/// (https://sqlite.org/c3ref/progress_handler.html).
final class QueryDeadline {
    private let deadline: UInt64

    /// Installs the deadline on `db`, `nanoseconds` from now.
    package convenience init(_ db: SQLiteDatabase, nanoseconds: Int64) {
        self.init(db, until: DispatchTime.now().uptimeNanoseconds &+ UInt64(max(nanoseconds, 0)))
    }

    /// Installs the deadline on `db`: `until` on the uptime clock (`DispatchTime`).
    package init(_ db: SQLiteDatabase, until: UInt64) {
        deadline = until
        self.db = db
        sqlite3_progress_handler(db.handle, 4096, { context in
            Unmanaged<QueryDeadline>.fromOpaque(context!).takeUnretainedValue().passed ? 1 : 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    private unowned let db: SQLiteDatabase

    deinit { sqlite3_progress_handler(db.handle, 0, nil, nil) }

    /// True once the deadline has passed.
    var passed: Bool { DispatchTime.now().uptimeNanoseconds >= deadline }

    /// True when `error` is the interruption this deadline caused.
    package func stopped(_ error: SQLiteError) -> Bool { (error.code & 0xff) == SQLITE_INTERRUPT && passed }
}

package extension String {
    /// Drops leading and trailing whitespace and trailing semicolons. Works on Unicode scalars:
    /// taking `Character`s off the end of a string is quadratic in a run of spaces (120,000
    /// trailing spaces took 20 s).
    func trimmingTrailing() -> String {
        let scalars = unicodeScalars
        var end = scalars.endIndex
        var start = scalars.startIndex
        while end > start {
            let before = scalars.index(before: end)
            let c = scalars[before]
            guard c.properties.isWhitespace || c == ";" else { break }
            end = before
        }
        while start < end && scalars[start].properties.isWhitespace { start = scalars.index(after: start) }
        return String(scalars[start..<end])
    }
}
