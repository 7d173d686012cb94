internal import CSQLite
import Foundation

/// Copies the write-ahead log into the database file on a thread of its own while an ingest
/// writes.
///
/// SQLite's automatic checkpoint runs inside the COMMIT that crosses its threshold, on the
/// writer's thread: on the benchmark corpus, 0.9 s of the 1.2 s the writer spent in COMMIT
/// (0.3 s with this). Here a second connection runs PASSIVE checkpoints, which block neither
/// the writer nor readers (https://sqlite.org/c3ref/wal_checkpoint_v2.html). The log only
/// starts over from its beginning when a write transaction begins with every frame copied,
/// which a busy writer never sees while the copying happens elsewhere; so once the log passes
/// `restartFrames` the writer copies the few frames left itself (about 5 ms), and the log
/// stays bounded. Call `stop` when done: the thread keeps the checkpointer alive until then.
///
/// Sendable: its thread and the writer share only what `condition` guards; `connection` is used
/// by the thread alone.
final class Checkpointer: @unchecked Sendable {
    /// Not owned: the thread may outlive `stop` by a moment, and must not keep the writer's
    /// connection open then (the last close is what removes the log).
    private unowned let writer: SQLiteDatabase
    private let connection: SQLiteDatabase
    private let condition = NSCondition()
    private var wanted = false
    private var closed = false
    private var finished = false
    /// Frames in the log that wake the copying thread.
    let wakeFrames: Int32
    /// Frames in the log at which the writer finishes the copy so the log can start over.
    let restartFrames: Int32
    /// Checkpoints by the thread that found frames copied, and by the writer to let the log start over.
    private(set) var checkpoints = 0
    private(set) var writerCheckpoints = 0
    /// The largest log seen after a commit (frames), for tests and diagnostics.
    private(set) var largestLog: Int32 = 0

    /// Takes over `writer`'s checkpoints until `stop`.
    package init(writer: SQLiteDatabase, wakeFrames: Int32 = 1024, restartFrames: Int32 = 8192) throws {
        self.writer = writer
        self.wakeFrames = wakeFrames
        self.restartFrames = restartFrames
        connection = try SQLiteDatabase(path: writer.path, mode: .readWrite)
        // A connection learns that the database is in WAL mode when it first reads it; until
        // then a checkpoint on it does nothing (and says so with a log size of -1).
        _ = try connection.scalarInt("SELECT count(*) FROM sqlite_master")
        // The hook replaces SQLite's automatic checkpoint on this connection
        // (https://sqlite.org/c3ref/wal_hook.html); `stop` puts it back.
        sqlite3_wal_hook(writer.handle, { context, _, _, frames in
            Unmanaged<Checkpointer>.fromOpaque(context!).takeUnretainedValue().committed(frames: frames)
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
        // Weak: once `stop` ends the loop, the thread must not keep the checkpointer (and so the
        // writer's connection) alive while the process closes its databases.
        let thread = Thread { [weak self] in self?.work() }
        thread.stackSize = 1 << 20
        thread.start()
    }

    deinit { stop() }

    /// Called by SQLite on the writer's thread after each commit, with the log's size.
    private func committed(frames: Int32) {
        largestLog = max(largestLog, frames)
        if frames >= restartFrames {
            // What the thread has not copied yet (usually the last commit or two) is copied
            // here; the next write transaction then starts the log over.
            if sqlite3_wal_checkpoint_v2(writer.handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil) == SQLITE_OK {
                writerCheckpoints += 1
            }
        } else if frames >= wakeFrames {
            condition.lock()
            wanted = true
            condition.signal()
            condition.unlock()
        }
    }

    private func work() {
        while true {
            condition.lock()
            while !wanted && !closed { condition.wait() }
            if closed {
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            wanted = false
            condition.unlock()
            // A busy or failed checkpoint only leaves frames for the next one (or for the
            // checkpoint SQLite runs when the last connection closes).
            var logFrames: Int32 = 0, copiedFrames: Int32 = 0
            if sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copiedFrames) == SQLITE_OK,
               copiedFrames > 0 {
                checkpoints += 1
            }
        }
    }

    /// Ends the thread (after the checkpoint in progress) and gives the writer back SQLite's
    /// automatic checkpoints. Call on the writer's thread, outside a transaction.
    package func stop() {
        condition.lock()
        guard !closed else { condition.unlock(); return }
        closed = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
        connection.close()
        sqlite3_wal_autocheckpoint(writer.handle, 1000)
    }
}
