import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LCTraceStore
import LCTraceModel
import LCTraceModel

/// A `--db` path that cannot be a database, said with the path and the real reason before
/// SQLite tries it: SQLite's own words ("file is not a database", "disk I/O error", "unable to
/// open database file") name neither, and came with a hint about disks.
struct DatabaseFileError: StorageFailure, CustomStringConvertible {
    package var line: String
    package var hint: String?
    /// 74, or 64 for a value that is no path at all (a URL or connection string mistyped).
    package var kind: StorageFailureKind = .unavailable
    package var description: String { line }
}

/// The embedded backend's kind: every `--db` value no other backend claims is a file path.
package struct SQLiteBackendKind: StorageBackendKind {
    package init() {}
    package var name: String { "sqlite" }
    package func claims(_ location: String) -> Bool { true }
    /// A path as given. A value meant for a server is refused when opened, and never shown:
    /// typed wrong, it may hold its password anywhere (`u:pa ss@h`, `pa?ss`, `pwd=`).
    package func shown(_ location: String) -> String {
        ConnectionText.notAPath(location) == nil ? ConnectionText.shownPath(location) : ConnectionText.hidden
    }
    package var ddl: String { SQLiteSchema.ddl }

    package func openForReading(_ location: String, timeout: Double?) throws -> any StorageBackend {
        try refuseConnectionText(location)
        try DatabaseFile.check(location, writing: false, create: false)
        return try DatabaseFile.opening(location) { try SQLiteBackend(readingPath: location, timeout: timeout) }
    }

    /// A mistyped URL or a libpq connection string is not taken for a file name (an ingest
    /// made a file named after the password).
    private func refuseConnectionText(_ location: String) throws {
        guard let why = ConnectionText.notAPath(location) else { return }
        throw DatabaseFileError(line: "the database given (--db or $LCTRACE_DB, not shown: it may hold a password) is \(why)", hint: nil,
                                kind: .refused)
    }

    package func openForWriting(_ location: String, create: Bool, stop: StopRequest?) throws -> any StorageBackend {
        try refuseConnectionText(location)
        try DatabaseFile.check(location, writing: true, create: create)
        return try DatabaseFile.opening(location) { try SQLiteBackend(writingPath: location, create: create) }
    }
}

/// What lctrace checks of a database file before SQLite opens it.
enum DatabaseFile {
    /// The first bytes of every SQLite database file (https://sqlite.org/fileformat.html).
    static let sqliteHeader = Array("SQLite format 3\0".utf8)

    /// Refuses `path` when it cannot be the database: a directory, a file that is not SQLite,
    /// a missing folder, no permission. What only SQLite can tell (a damaged page) it tells.
    package static func check(_ path: String, writing: Bool, create: Bool) throws {
        let folder = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        var st = stat()
        guard stat(path, &st) == 0 else {
            let code = errno
            switch code {
            case ENOENT where writing && create:
                try checkFolder(folder, for: path)
            case ENOENT:
                var parent = stat()
                if stat(folder, &parent) != 0 {
                    throw DatabaseFileError(line: "no database at \(path): its folder \(folder) does not exist",
                                              hint: "run `lctrace ingest --db PATH` first, or pass the --db of an existing database")
                }
                return  // "no database at PATH (run lctrace ingest first)", said by Schema
            case ENOTDIR:
                throw DatabaseFileError(line: "cannot use database \(path): a part of its folder \(folder) is a file, not a folder", hint: nil)
            case EACCES:
                throw DatabaseFileError(line: "cannot reach database \(path): permission denied (a folder on the way may not be searched)", hint: nil)
            default:
                throw DatabaseFileError(line: "cannot use database \(path): \(systemErrorReason(code))", hint: nil)
            }
            return
        }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            throw DatabaseFileError(line: "\(path) is a directory, not a database file",
                                      hint: "--db names a file: --db \(Shell.word((path as NSString).appendingPathComponent("lctrace.db")))")
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return }  // FIFOs and devices: refused by Schema
        guard access(path, R_OK) == 0 else {
            throw DatabaseFileError(line: "cannot read database \(path): permission denied", hint: nil)
        }
        if st.st_size == 0 {
            guard writing else {
                throw DatabaseFileError(line: "\(path) is an empty file, not an lctrace database",
                                          hint: "load traces into it with 'lctrace ingest --db \(Shell.word(path)) PATH...'")
            }
        } else if case let (false, hint) = sqliteKind(path) {
            throw DatabaseFileError(line: "\(path) is not an lctrace database (not SQLite)", hint: hint)
        }
        guard writing else { return }
        if access(path, W_OK) != 0 {
            throw DatabaseFileError(line: "database \(path) is read-only (\(systemErrorReason(errno)))",
                                      hint: "ingest and analyze write to it; report, query and the other reading commands read it as it is")
        }
        if access(folder, W_OK) != 0 {
            throw DatabaseFileError(line: "cannot write beside database \(path): its folder \(folder) is not writable (\(systemErrorReason(errno)))",
                                      hint: "SQLite keeps \((path as NSString).lastPathComponent)-wal and -shm beside the database while it writes")
        }
    }

    /// A database is made in `folder`: it must be a folder this user may write.
    private static func checkFolder(_ folder: String, for path: String) throws {
        var st = stat()
        guard stat(folder, &st) == 0 else {
            let code = errno
            if code == ENOENT {
                throw DatabaseFileError(line: "cannot create database \(path): its folder \(folder) does not exist",
                                          hint: "create it first (mkdir -p \(Shell.word(folder))) or choose another --db")
            }
            if code == ENOTDIR {
                throw DatabaseFileError(line: "cannot create database \(path): a part of \(folder) is a file, not a folder", hint: nil)
            }
            throw DatabaseFileError(line: "cannot create database \(path): \(folder): \(systemErrorReason(code))", hint: nil)
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            throw DatabaseFileError(line: "cannot create database \(path): \(folder) is not a folder", hint: nil)
        }
        if access(folder, W_OK | X_OK) != 0 {
            throw DatabaseFileError(line: "cannot create database \(path): its folder \(folder) is not writable (\(systemErrorReason(errno)))", hint: nil)
        }
    }

    /// Whether the file starts as SQLite's do, and if not a hint saying what it looks like.
    static func sqliteKind(_ path: String) -> (isSQLite: Bool, hint: String?) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return (true, nil) }  // SQLite will say
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 512)) ?? Data())
        if head.starts(with: sqliteHeader) { return (true, nil) }
        let load = "load it with 'lctrace ingest --db lctrace.db \(Shell.word(path))'"
        if head.starts(with: [0x1f, 0x8b]) { return (false, "it is gzip, a trace perhaps: \(load)") }
        if head.first == UInt8(ascii: "{") { return (false, "it is JSON text, a trace perhaps: \(load)") }
        return (false, nil)
    }

    /// Runs `open`; an error of SQLite's names the database it is about.
    static func opening<T>(_ path: String, _ open: () throws -> T) throws -> T {
        do {
            return try open()
        } catch var error as SQLiteError {
            if !error.message.contains(path) { error.message = "\(path): \(error.message)" }
            throw error
        }
    }
}
