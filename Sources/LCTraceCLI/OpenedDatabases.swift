import LCTrace
import LCTraceStore
import LCTraceModel

/// The databases a command opened, closed when it ends (a reading SQLite connection then
/// also removes the `-wal` and `-shm` files it leaves behind).
final class OpenedDatabases {
    private var opened: [Storage] = []

    /// Opens `location` for a command that only reads.
    func openForReading(_ location: String, timeout: Double? = nil) throws -> Storage {
        let db = try Storage.openForReading(location, timeout: timeout)
        opened.append(db)
        return db
    }

    /// Opens (with `create`, makes) `location` for a command that writes; `stop` ends its
    /// waits on a server (see `SignalWatch`).
    func openForWriting(_ location: String, create: Bool = true, stop: StopRequest? = nil) throws -> Storage {
        let db = try Storage.openForWriting(location, create: create, stop: stop)
        opened.append(db)
        return db
    }

    /// Closes what was opened, in order.
    func closeAll() {
        for db in opened { db.close() }
        opened = []
    }
}
