internal import CSQLite
import Foundation

/// What a command that only reads leaves beside a database: nothing it did not find there.
///
/// A WAL database needs its `-wal` and `-shm` files while it is open, and a read-only
/// connection creates them when they are missing but cannot remove them when it closes
/// (SQLite removes them only on the close of a connection that may write, once it holds the
/// database's exclusive lock, that is once no other connection of any process has it open:
/// https://sqlite.org/wal.html#the_wal_file). So the reading is done, as ever, on a read-only
/// connection through the WAL protocol, which stays consistent while an ingest writes; and
/// afterwards, when the two files were not there before, `releaseWALFiles` lets SQLite's own
/// close remove them. A connection of another process still open (an ingest that started
/// meanwhile) keeps them, as it must. Opening a WAL database `immutable` instead would create
/// nothing, but an ingest starting during the read would then copy pages into the file under
/// the reader, which would read a half-written database.
extension SQLiteSchema {
    /// The files SQLite keeps beside a WAL database while it is open.
    static func walFiles(of path: String) -> [String] { [path + "-wal", path + "-shm"] }

    /// True when either of `walFiles(of:)` exists.
    static func hasWALFiles(_ path: String) -> Bool {
        walFiles(of: path).contains { FileManager.default.fileExists(atPath: $0) }
    }

    /// Removes the `-wal` and `-shm` files beside a database once the reading connections of
    /// this process are closed, when nobody else has it open: a connection that may write is
    /// opened (never creating the database), reads the schema so that it joins the WAL, and
    /// closes, and SQLite's last-connection close checkpoints (nothing, unless a writer ran
    /// meanwhile and closed before the reader: then its committed pages, as the next writer
    /// would) and deletes both. A database the process may not write keeps
    /// them (SQLite opens it read-only then), as before.
    static func releaseWALFiles(path: String) {
        guard hasWALFiles(path), let db = try? SQLiteDatabase(path: path, mode: .readWriteExisting) else { return }
        _ = try? db.scalarInt("SELECT count(*) FROM sqlite_master")
        db.close()
    }
}
