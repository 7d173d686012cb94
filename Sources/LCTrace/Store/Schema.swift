import CSQLite
import Foundation

/// The versioned public schema. `PRAGMA user_version` carries `Schema.version`; a database
/// from another version is migrated when lctrace knows how, refused with a clear message
/// otherwise, never silently misread.
public enum Schema {
    public static let version: Int64 = 2

    /// Why a database cannot be used.
    public struct VersionError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Opens `path` for writing, creating the schema on a new database.
    public static func openForWriting(path: String) throws -> Database {
        let db = try Database(path: path, mode: .readWrite)
        // WAL lets `query` read while `ingest` writes and lets two ingests take turns;
        // synchronous=NORMAL in WAL mode stays consistent after a crash or kill
        // (https://sqlite.org/wal.html, https://sqlite.org/pragma.html#pragma_synchronous).
        try db.retryingWhileBusy { try db.execute("PRAGMA journal_mode = WAL") }
        try db.execute("PRAGMA synchronous = NORMAL")
        try db.execute("PRAGMA cache_size = -16384")
        try db.execute("PRAGMA temp_store = MEMORY")
        try db.retryingWhileBusy { try db.writeTransaction {
            let current = try db.scalarInt("PRAGMA user_version") ?? 0
            if current == 0 {
                let tables = try db.scalarInt("SELECT count(*) FROM sqlite_master") ?? 0
                if tables > 0 {
                    throw VersionError(description: "\(path) is a SQLite database but not an lctrace database (it has tables and no lctrace schema version)")
                }
                try db.execute(ddl)
                try db.execute("PRAGMA user_version = \(version)")
            } else if current < version {
                try migrate(db, from: current, path: path)
            } else {
                try check(current, path: path)
            }
        } }
        return db
    }

    /// Opens `path` read-only, refusing anything that is not an lctrace database of this version.
    public static func openForReading(path: String) throws -> Database {
        guard FileManager.default.fileExists(atPath: path) else {
            throw VersionError(description: "no database at \(path) (run `lctrace ingest` first, or pass --db)")
        }
        var db = try Database(path: path, mode: .readOnly)
        let current: Int64
        do {
            current = try db.scalarInt("PRAGMA user_version") ?? 0
        } catch let error as DatabaseError where (error.code & 0xff) == SQLITE_CANTOPEN {
            // A WAL database on read-only media cannot create its -shm file; nobody can be
            // writing there, so open it immutable (https://sqlite.org/uri.html#uriimmutable).
            db = try Database(path: path, mode: .immutable)
            current = try db.scalarInt("PRAGMA user_version") ?? 0
        }
        if current == 0 {
            throw VersionError(description: "\(path) is not an lctrace database (schema version 0)")
        }
        try check(current, path: path)
        return db
    }

    private static func check(_ current: Int64, path: String) throws {
        if current > version {
            throw VersionError(description: "\(path) has schema version \(current), newer than this lctrace (\(version)): upgrade lctrace")
        }
        if current < version {
            // Read-only commands never migrate: the writing ones do (`migrate`).
            throw VersionError(description: "\(path) has schema version \(current), older than this lctrace (\(version)): migrate it in place with `lctrace analyze --db \(path)` (its findings are rebuilt), then run this again")
        }
    }
}
