internal import CSQLite

extension SQLiteError {
    /// What kind of failure an error is, for a message that says the real reason.
    enum Reason: Sendable {
        case corrupt, notADatabase, readOnly, diskFull, ioFailure, cannotOpen, permission, busy, other
    }

    /// The kind of failure, from SQLite's primary result code (https://sqlite.org/rescode.html).
    var reason: Reason {
        switch code & 0xff {
        case SQLITE_CORRUPT: return .corrupt
        case SQLITE_NOTADB: return .notADatabase
        case SQLITE_READONLY: return .readOnly
        case SQLITE_FULL: return .diskFull
        case SQLITE_IOERR: return .ioFailure
        case SQLITE_CANTOPEN: return .cannotOpen
        case SQLITE_PERM: return .permission
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy
        default: return .other
        }
    }
}
