import CSQLite

/// A query `lctrace query` will not run: it would write, attach, or change settings.
public struct QueryRefused: Error, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

/// Runs users' ad-hoc SQL. Three locks keep it from changing anything: the connection is
/// opened read-only, statements that are not read-only are refused before they run, and an
/// authorizer denies ATTACH/DETACH and pragmas that set values (ATTACH counts as read-only
/// to `sqlite3_stmt_readonly`, see https://sqlite.org/c3ref/stmt_readonly.html).
public enum ReadOnlyQuery {
    /// Pragmas that only read, allowed with no argument or as table-valued functions.
    static let readablePragmas: Set<String> = [
        "table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "foreign_key_list",
        "user_version", "schema_version", "page_count", "page_size", "freelist_count", "database_list",
        "compile_options", "function_list", "pragma_list", "table_list", "collation_list", "encoding",
        "journal_mode", "integrity_check", "quick_check", "application_id", "data_version",
    ]

    /// Installs the authorizer on `db`.
    public static func restrict(_ db: Database) {
        sqlite3_set_authorizer(db.handle, { _, action, arg1, arg2, _, _ in
            switch action {
            case SQLITE_SELECT, SQLITE_READ, SQLITE_FUNCTION, SQLITE_RECURSIVE:
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
    public static func prepare(_ sql: String, on db: Database) throws -> Statement {
        let trimmed = sql.trimmingTrailing()
        if trimmed.isEmpty { throw QueryRefused(message: "empty query") }
        let stmt: Statement
        do {
            stmt = try db.prepare(trimmed)
        } catch let error as DatabaseError where error.code == SQLITE_AUTH {
            throw QueryRefused(message: "query refused: lctrace query only reads (no writes, ATTACH, or setting pragmas)")
        } catch let error as DatabaseError where isQueryFault(error) {
            throw QueryRefused(message: "SQL error: \(error.message)")
        }
        if !stmt.tail.trimmingTrailing().isEmpty {
            throw QueryRefused(message: "one statement at a time, please: found more SQL after the first statement")
        }
        if !stmt.isReadOnly {
            throw QueryRefused(message: "query refused: lctrace query only reads; this statement would change the database")
        }
        return stmt
    }
}

extension ReadOnlyQuery {
    /// True when an error is the query's own (bad SQL, a value too big, a type mismatch): a
    /// usage error. Anything else (a corrupt page, an I/O error, no memory) is the database's.
    public static func isQueryFault(_ error: DatabaseError) -> Bool {
        [SQLITE_ERROR, SQLITE_AUTH, SQLITE_RANGE, SQLITE_MISMATCH, SQLITE_TOOBIG, SQLITE_CONSTRAINT].contains(error.code & 0xff)
    }
}

extension String {
    /// Drops trailing whitespace and semicolons.
    func trimmingTrailing() -> String {
        var s = Substring(self)
        while let last = s.last, last.isWhitespace || last == ";" { s = s.dropLast() }
        while let first = s.first, first.isWhitespace { s = s.dropFirst() }
        return String(s)
    }
}
