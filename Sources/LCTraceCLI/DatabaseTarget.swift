import Foundation
import LCTrace
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `--db` path that cannot be a database, said with the path and the real reason before
/// SQLite tries it: SQLite's own words ("file is not a database", "disk I/O error", "unable to
/// open database file") name neither, and came with a hint about disks.
struct DatabaseTargetError: OneLineError {
    var line: String
    var hint: String?
    var status: Int32 { ExitStatus.ioError }
}

/// The databases a command opened, closed when it ends; a reading command's `-wal` and `-shm`
/// files are removed then when no other connection has the database open
/// (`SQLiteSchema.releaseWALFiles`): those it made, and those of an ingest that ended while it
/// read (a read-only connection closing last cannot remove them, so they stayed behind).
final class OpenedDatabases {
    private var reading: [String] = []
    private var closers: [() -> Void] = []

    /// Opens `location` for a command that only reads.
    func openForReading(_ location: String, timeout: Double? = nil) throws -> Storage {
        try beforeReading(location)
        let db = try DatabaseTarget.opening(location) { try Storage.openForReading(location, timeout: timeout) }
        closers.append { db.close() }
        return db
    }

    /// The SQLite connection itself (`lctrace query` reads rows in place).
    func openSQLiteForReading(_ path: String) throws -> SQLiteDatabase {
        try beforeReading(path)
        let db = try DatabaseTarget.opening(path) { try SQLiteSchema.openForReading(path: path) }
        closers.append { db.close() }
        return db
    }

    /// Opens (with `create`, makes) `location` for a command that writes.
    func openForWriting(_ location: String, create: Bool = true) throws -> Storage {
        if case .sqlite(let path) = StorageLocation(location) { try DatabaseTarget.check(path, writing: true, create: create) }
        return try DatabaseTarget.opening(location) { try Storage.openForWriting(location, create: create) }
    }

    /// A file's checks; the file is remembered for the tidy of `closeAll`.
    private func beforeReading(_ location: String) throws {
        guard case .sqlite(let path) = StorageLocation(location) else { return }
        try DatabaseTarget.check(path, writing: false, create: false)
        if !reading.contains(path) { reading.append(path) }
    }

    /// Closes what was opened for reading and leaves each folder as it was.
    func closeAll() {
        for close in closers { close() }
        closers = []
        for path in reading { SQLiteSchema.releaseWALFiles(path: path) }
        reading = []
    }
}

enum DatabaseTarget {
    /// The first bytes of every SQLite database file (https://sqlite.org/fileformat.html).
    static let sqliteHeader = Array("SQLite format 3\0".utf8)

    /// Refuses `path` when it cannot be the database: a directory, a file that is not SQLite,
    /// a missing folder, no permission. What only SQLite can tell (a damaged page) it tells.
    static func check(_ path: String, writing: Bool, create: Bool) throws {
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
                    throw DatabaseTargetError(line: "no database at \(shown(path)): its folder \(shown(folder)) does not exist",
                                              hint: "run `lctrace ingest --db PATH` first, or pass the --db of an existing database")
                }
                return  // "no database at PATH (run lctrace ingest first)", said by Schema
            case ENOTDIR:
                throw DatabaseTargetError(line: "cannot use database \(shown(path)): a part of its folder \(shown(folder)) is a file, not a folder", hint: nil)
            case EACCES:
                throw DatabaseTargetError(line: "cannot reach database \(shown(path)): permission denied (a folder on the way may not be searched)", hint: nil)
            default:
                throw DatabaseTargetError(line: "cannot use database \(shown(path)): \(OutputFile.reason(code))", hint: nil)
            }
            return
        }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            throw DatabaseTargetError(line: "\(shown(path)) is a directory, not a database file",
                                      hint: "--db names a file: --db \(Selection.shell((path as NSString).appendingPathComponent("lctrace.db")))")
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return }  // FIFOs and devices: refused by Schema
        guard access(path, R_OK) == 0 else {
            throw DatabaseTargetError(line: "cannot read database \(shown(path)): permission denied", hint: nil)
        }
        if st.st_size == 0 {
            guard writing else {
                throw DatabaseTargetError(line: "\(shown(path)) is an empty file, not an lctrace database",
                                          hint: "load traces into it with 'lctrace ingest --db \(Selection.shell(path)) PATH...'")
            }
        } else if case let (false, hint) = sqliteKind(path) {
            throw DatabaseTargetError(line: "\(shown(path)) is not an lctrace database (not SQLite)", hint: hint)
        }
        guard writing else { return }
        if access(path, W_OK) != 0 {
            throw DatabaseTargetError(line: "database \(shown(path)) is read-only (\(OutputFile.reason(errno)))",
                                      hint: "ingest and analyze write to it; report, query and the other reading commands read it as it is")
        }
        if access(folder, W_OK) != 0 {
            throw DatabaseTargetError(line: "cannot write beside database \(shown(path)): its folder \(shown(folder)) is not writable (\(OutputFile.reason(errno)))",
                                      hint: "SQLite keeps \(shown((path as NSString).lastPathComponent))-wal and -shm beside the database while it writes")
        }
    }

    /// A database is made in `folder`: it must be a folder this user may write.
    private static func checkFolder(_ folder: String, for path: String) throws {
        var st = stat()
        guard stat(folder, &st) == 0 else {
            let code = errno
            if code == ENOENT {
                throw DatabaseTargetError(line: "cannot create database \(shown(path)): its folder \(shown(folder)) does not exist",
                                          hint: "create it first (mkdir -p \(Selection.shell(folder))) or choose another --db")
            }
            if code == ENOTDIR {
                throw DatabaseTargetError(line: "cannot create database \(shown(path)): a part of \(shown(folder)) is a file, not a folder", hint: nil)
            }
            throw DatabaseTargetError(line: "cannot create database \(shown(path)): \(shown(folder)): \(OutputFile.reason(code))", hint: nil)
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            throw DatabaseTargetError(line: "cannot create database \(shown(path)): \(shown(folder)) is not a folder", hint: nil)
        }
        if access(folder, W_OK | X_OK) != 0 {
            throw DatabaseTargetError(line: "cannot create database \(shown(path)): its folder \(shown(folder)) is not writable (\(OutputFile.reason(errno)))", hint: nil)
        }
    }

    /// Whether the file starts as SQLite's do, and if not a hint saying what it looks like.
    static func sqliteKind(_ path: String) -> (isSQLite: Bool, hint: String?) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return (true, nil) }  // SQLite will say
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 512)) ?? Data())
        if head.starts(with: sqliteHeader) { return (true, nil) }
        let load = "load it with 'lctrace ingest --db lctrace.db \(Selection.shell(path))'"
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
