internal import CSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LCTraceModel
import LCTraceStore

/// The `files` rows of an ingest: which file to load (or skip: the same content is loaded),
/// which rows this process is loading, and how each load ended. A row being loaded belongs to
/// the ingest that holds its byte lock (`LoaderLocks`, never a process id alone), so a killed
/// load is found and resumed by the next ingest, under the same row id.
final class FileLedger {
    private let db: SQLiteDatabase
    private let statements: StatementCache
    /// File rows this store is loading now (planned, not finished), with their raw sizes:
    /// never "a killed load".
    private var loadingHere: [Int64: Int64] = [:]
    /// The locks that say which rows an ingest is loading (`LoaderLocks`).
    private let loaders: LoaderLocks

    package init(db: SQLiteDatabase, statements: StatementCache) throws {
        self.db = db
        self.statements = statements
        loaders = try LoaderLocks(databasePath: db.path)
    }

    /// True when a file of `size` raw bytes is being loaded by this store: one of that size
    /// must wait for it to finish, so that a copy is recognised by its hash without reading.
    package func isLoading(size: Int64) -> Bool { loadingHere.values.contains(size) }

    /// Decides what to do with a file of `size` raw bytes whose content hash is `hash`
    /// (nil when not computed yet: standard input, or no stored file has that size).
    /// Reuses the row of a killed load of the same file, so a re-run gives the same ids
    /// and content as an uninterrupted run.
    package func plan(path: String, size: Int64?, hash: String?) throws -> FilePlan {
        var reusable: Int64?
        var hashTaken = false
        if let hash {
            let q = try statements.statement("SELECT id, path, status FROM files WHERE sha256 = ?")
            try q.bind([.text(hash)])
            if try q.step() {
                if q.text(2) != "loading" {
                    let loaded = q.text(1) ?? "?"
                    q.reset()
                    try dropAbandonedLoads(path: path, size: size)
                    return .alreadyLoaded(path: loaded)
                }
                hashTaken = true
                if isAbandoned(q.int(0)) { reusable = q.int(0) }
            }
        }
        if reusable == nil, let size, path != "-" {
            let q = try statements.statement("SELECT id FROM files WHERE status = 'loading' AND sha256 IS NULL AND path = ? AND size = ?")
            try q.bind([.text(path), .int(size)])
            while try q.step() {
                if isAbandoned(q.int(0)) { reusable = q.int(0); break }
            }
        }
        if let id = reusable, loaders.take(id) {
            try statements.statement("DELETE FROM rejects WHERE file = ?").run([.int(id)])
            try statements.statement("""
                UPDATE files SET path = ?, lines = 0, events = 0, rejects = 0, conflicts = 0, ingested_at = ?,
                  loader_pid = ? WHERE id = ?
                """).run([.text(path), .text(IngestStore.now()), .int(Int64(getpid())), .int(id)])
            loadingHere[id] = size ?? -1
            return .load(fileID: id)
        }
        // Another live ingest is loading the same content: load it too, into a row of our
        // own without the hash; whichever finishes second drops its row (`finishFile`).
        try statements.statement("INSERT INTO files(path, size, sha256, status, ingested_at, loader_pid) VALUES (?, ?, ?, 'loading', ?, ?)")
            .run([.text(path), .int(size ?? 0), hash.flatMap { hashTaken ? nil : .text($0) } ?? .null,
                  .text(IngestStore.now()), .int(Int64(getpid()))])
        let id = db.lastInsertRowID
        // A new row's byte is free: its id was never used, or its loader finished (and let go
        // of the lock before it deleted the row).
        guard loaders.take(id) else {
            throw SQLiteError(code: SQLITE_BUSY, message: "another ingest holds the lock of new file row \(id) in \(loaders.path)", sql: nil)
        }
        loadingHere[id] = size ?? -1
        return .load(fileID: id)
    }

    /// Rows of killed loads of this file (same path and size, no hash yet, nobody loading
    /// them) once its content is loaded whole under another row (a concurrent ingest finished
    /// it): their lines are all in it, so they and their rejects go; left, they would stay
    /// `loading` for good.
    private func dropAbandonedLoads(path: String, size: Int64?) throws {
        guard let size, path != "-" else { return }
        let q = try statements.statement("SELECT id FROM files WHERE status = 'loading' AND sha256 IS NULL AND path = ? AND size = ?")
        try q.bind([.text(path), .int(size)])
        var abandoned: [Int64] = []
        while try q.step() { if isAbandoned(q.int(0)) { abandoned.append(q.int(0)) } }
        for id in abandoned {
            try statements.statement("DELETE FROM rejects WHERE file = ?").run([.int(id)])
            try statements.statement("DELETE FROM file_sessions WHERE file = ?").run([.int(id)])
            try statements.statement("DELETE FROM files WHERE id = ?").run([.int(id)])
        }
    }

    /// True when a `loading` row belongs to no running ingest: not this store's, and its lock
    /// is held by nobody (its loader was killed). Call inside a write transaction, so that no
    /// other ingest can take the row between this check and `LoaderLocks.take`.
    private func isAbandoned(_ id: Int64) -> Bool {
        loadingHere[id] == nil && !loaders.isHeld(id)
    }

    /// Lets go of every row this store was loading (after a failure or an interruption: the
    /// rows stay `loading`, and the next ingest resumes them).
    package func releaseLoads() {
        for id in loadingHere.keys { loaders.release(id) }
        loadingHere.removeAll()
    }

    /// Files loaded before under `path` with fewer than `size` raw bytes: maybe the same file
    /// read while it was still being written (checked by hashing that many bytes of it).
    package func earlierReads(of path: String, smallerThan size: Int64) throws -> [EarlierRead] {
        let q = try statements.statement("""
            SELECT id, size, sha256 FROM files
            WHERE path = ? AND size < ? AND sha256 IS NOT NULL AND status IN ('complete', 'damaged')
            """)
        try q.bind([.text(path), .int(size)])
        var out: [EarlierRead] = []
        while try q.step() { out.append(EarlierRead(id: q.int(0), size: q.int(1), hash: q.text(2) ?? "")) }
        return out
    }

    /// Drops the rows (with their rejects and file findings) of earlier reads that were a
    /// prefix of a file now loaded whole: their events are in it, and their damage (a stream
    /// cut where the writer was) or cut last line must not warn forever.
    package func replaceEarlierReads(_ ids: [Int64]) throws {
        for id in ids {
            try statements.statement("DELETE FROM rejects WHERE file = ?").run([.int(id)])
            try statements.statement("DELETE FROM findings WHERE file = ?").run([.int(id)])
            try statements.statement("DELETE FROM file_sessions WHERE file = ?").run([.int(id)])
            try statements.statement("DELETE FROM files WHERE id = ?").run([.int(id)])
        }
    }

    /// True when a stored file has `size` raw bytes: only then is hashing before reading worth it.
    package func hasFile(ofSize size: Int64) throws -> Bool {
        (try statements.scalarInt("SELECT count(*) FROM files WHERE size = ?", [.int(size)]) ?? 0) > 0
    }

    /// Records the outcome of a load. When another row already holds the same content
    /// (standard input, or a concurrent ingest of the same file), this row and its rejects
    /// are dropped and the other row's path is returned.
    package func finish(id: Int64, hash: String, stats: FileStats) throws -> String? {
        loadingHere[id] = nil
        // Let go inside this write transaction: until it commits, nobody else can plan the
        // row, and if it never commits the row is a killed load, to be resumed.
        loaders.release(id)
        if let other = try statements.scalarText("SELECT path FROM files WHERE sha256 = ? AND id != ?", [.text(hash), .int(id)]) {
            try statements.statement("DELETE FROM rejects WHERE file = ?").run([.int(id)])
            try statements.statement("DELETE FROM file_sessions WHERE file = ?").run([.int(id)])
            try statements.statement("DELETE FROM files WHERE id = ?").run([.int(id)])
            return other
        }
        try statements.statement("""
            UPDATE files SET size = ?, sha256 = ?, gzip_members = ?, lines = ?, events = ?, rejects = ?, conflicts = ?,
              status = ?, damage = ?, ingested_at = ?, loader_pid = NULL WHERE id = ?
            """).run([.int(stats.size), .text(hash), .int(Int64(stats.members)), .int(Int64(stats.lines)),
                      .int(Int64(stats.events)), .int(Int64(stats.rejects)), .int(Int64(stats.conflicts)),
                      .text(stats.damage == nil ? "complete" : "damaged"), stats.damage.map { .text($0) } ?? .null,
                      .text(IngestStore.now()), .int(id)])
        return nil
    }
}
