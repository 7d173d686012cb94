internal import CSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LCTraceModel

/// The versioned public schema. `PRAGMA user_version` carries `Schema.version`; a database
/// from another version is migrated when lctrace knows how, refused with a clear message
/// otherwise, never silently misread.
enum SQLiteSchema {
    package static let version: Int64 = 6

    /// Why a database cannot be used.
    struct VersionError: Error, CustomStringConvertible {
        package var description: String
    }

    /// Opens `path` for writing, creating the database and its schema when `create` is set
    /// and nothing is there (`ingest`); without it a missing database is refused (`analyze`).
    package static func openForWriting(path: String, create: Bool = true) throws -> SQLiteDatabase {
        try refuseSpecialFiles(path)
        if !create && !FileManager.default.fileExists(atPath: path) { throw noDatabase(path) }
        let db = try SQLiteDatabase(path: path, mode: .readWrite)
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
                try verifyObjects(db, path: path)
            } else {
                try check(current, path: path)
                try verifyObjects(db, path: path)
            }
        } }
        return db
    }

    /// Opens `path` read-only, refusing anything that is not an lctrace database of this version.
    package static func openForReading(path: String) throws -> SQLiteDatabase {
        try refuseSpecialFiles(path)
        guard FileManager.default.fileExists(atPath: path) else { throw noDatabase(path) }
        var db = try SQLiteDatabase(path: path, mode: .readOnly)
        do {
            try checkForReading(db, path: path)
        } catch let error as SQLiteError where [SQLITE_CANTOPEN, SQLITE_READONLY].contains(error.code & 0xff) {
            // A WAL database on read-only media, or in a folder this user may not write,
            // cannot create its missing -shm file (SQLITE_READONLY_CANTINIT then): no writer has
            // it open, so open it immutable (https://sqlite.org/uri.html#uriimmutable).
            db = try SQLiteDatabase(path: path, mode: .immutable)
            try checkForReading(db, path: path)
        }
        return db
    }

    /// The version and the objects, read in one snapshot: an ingest migrating the database
    /// meanwhile (version 4 or 5 to 6) is seen whole or not at all.
    private static func checkForReading(_ db: SQLiteDatabase, path: String) throws {
        try db.execute("BEGIN")
        defer { try? db.execute("COMMIT") }
        let current = try db.scalarInt("PRAGMA user_version") ?? 0
        if current == 0 {
            throw VersionError(description: "\(path) is not an lctrace database (schema version 0)")
        }
        // Versions 5 and 6 only add indexes: a version 4 or 5 database is read as it is, and
        // migrated by the next writing command.
        if current == 4 || current == 5 {
            let lacking = current == 4 ? version5Indexes.union(version6Indexes) : version6Indexes
            try verifyObjects(db, path: path, expected: expectedObjects.filter { !lacking.contains($0.key) })
            return
        }
        try check(current, path: path)
        try verifyObjects(db, path: path)
    }

    private static func noDatabase(_ path: String) -> VersionError {
        VersionError(description: "no database at \(path) (run `lctrace ingest` first, or pass --db)")
    }

    /// Refuses a database path, or a journal beside it, that exists and is not a regular file:
    /// SQLite would block forever opening a FIFO.
    static func refuseSpecialFiles(_ path: String) throws {
        for name in [path, path + "-wal", path + "-shm", path + "-journal"] {
            var st = stat()
            guard stat(name, &st) == 0 else { continue }
            if (st.st_mode & S_IFMT) != S_IFREG {
                throw VersionError(description: "\(name) is not a regular file (\(FileKind.name(st.st_mode))): not a database lctrace can use")
            }
        }
    }

    /// What version 5 added to version 4 (`migrateFrom4`).
    static let version5Indexes: Set<String> = ["index files_by_path", "index files_by_size"]
    /// What version 6 added to version 5 (`migrateFrom5`).
    static let version6Indexes: Set<String> = ["index sessions_dirty"]

    /// lctrace's tables, views and indexes, by "type name", with their SQL normalised: what
    /// the DDL makes on an empty database.
    static let expectedObjects: [String: String] = {
        guard let memory = try? SQLiteDatabase(path: ":memory:"), (try? memory.execute(ddl)) != nil,
              let objects = try? objects(memory) else { return [:] }
        return objects
    }()

    /// Refuses a database whose schema is not exactly lctrace's: a table replaced by a view (a
    /// recursive one hangs a report), a trigger (one on `events` can drop every new event), an
    /// index or column that differs. SQLite's own tables (sqlite_stat1 after ANALYZE) are allowed.
    static func verifyObjects(_ db: SQLiteDatabase, path: String, expected: [String: String] = expectedObjects) throws {
        let found = try objects(db)
        var differences: [String] = []
        for (key, sql) in expected.sorted(by: { $0.key < $1.key }) {
            if let other = found[key] {
                if other != sql { differences.append("\(key) differs") }
            } else {
                let name = key.split(separator: " ", maxSplits: 1).last.map(String.init) ?? key
                if let replacement = found.keys.first(where: { $0.hasSuffix(" " + name) }) {
                    differences.append("\(key) is replaced by a \(replacement.split(separator: " ")[0])")
                } else {
                    differences.append("\(key) is missing")
                }
            }
        }
        let expectedNames = Set(expected.keys.map { $0.split(separator: " ", maxSplits: 1).last.map(String.init) ?? $0 })
        for key in found.keys.sorted() where expected[key] == nil {
            let name = key.split(separator: " ", maxSplits: 1).last.map(String.init) ?? key
            if !expectedNames.contains(name) { differences.append("\(key) is not lctrace's") }
        }
        guard differences.isEmpty else {
            let shown = differences.prefix(5).joined(separator: ", ") + (differences.count > 5 ? ", …" : "")
            throw VersionError(description: "\(path): the schema is not lctrace's (\(shown)); lctrace uses only databases it made, unchanged")
        }
    }

    /// Every object of the database but SQLite's own, by "type name", with its SQL normalised.
    private static func objects(_ db: SQLiteDatabase) throws -> [String: String] {
        let q = try db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
        var out: [String: String] = [:]
        while try q.step() {
            out["\(q.text(0) ?? "?") \(q.text(1) ?? "?")"] = normalised(q.text(2) ?? "")
        }
        return out
    }

    /// SQL without comments, whitespace runs made one space: two schemas made from DDL that
    /// differs only in its comments compare equal.
    static func normalised(_ sql: String) -> String {
        var out: [UInt8] = []
        let bytes = Array(sql.utf8)
        var i = 0
        var quote: UInt8 = 0
        var space = false
        while i < bytes.count {
            let b = bytes[i]
            if quote != 0 {
                out.append(b)
                if b == quote { quote = 0 }
                i += 1
                continue
            }
            if b == 0x2d && i + 1 < bytes.count && bytes[i + 1] == 0x2d {
                while i < bytes.count && bytes[i] != 0x0a { i += 1 }
                space = true
                continue
            }
            if b == 0x2f && i + 1 < bytes.count && bytes[i + 1] == 0x2a {
                i += 2
                while i + 1 < bytes.count && !(bytes[i] == 0x2a && bytes[i + 1] == 0x2f) { i += 1 }
                i += 2
                space = true
                continue
            }
            if b == 0x20 || b == 0x09 || b == 0x0a || b == 0x0d {
                space = true
                i += 1
                continue
            }
            if space && !out.isEmpty { out.append(0x20) }
            space = false
            if b == 0x27 || b == 0x22 || b == 0x60 || b == 0x5b { quote = b == 0x5b ? 0x5d : b }
            out.append(b)
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
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
