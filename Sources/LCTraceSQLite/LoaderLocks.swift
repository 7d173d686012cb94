internal import CSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LCTraceModel

/// Who is loading which `files` row, as locks the kernel holds for an open file rather than
/// process ids: the ingest loading row `id` holds a write lock on byte `id` of the file
/// `<database>-loaders`, from the transaction that plans the row to the one that finishes it.
/// A process id said nothing outside its pid namespace (an ingest killed in a container left
/// its rows `loading` forever, because pid 1 or 2 is alive everywhere). A lock is let go when
/// its ingest ends, fails or is killed, whichever container or host it ran in, as far as the
/// file system passes locks on (as SQLite itself needs): a `loading` row whose byte nobody
/// holds is a killed load, and the next ingest resumes it.
///
/// On Linux the locks are open-file-description locks (F_OFD_SETLK), so two ingests in one
/// process (tests) hold theirs apart; elsewhere they are POSIX record locks, which a process
/// shares between its ingests (each store also remembers its own rows: `loadingHere`).
final class LoaderLocks {
    private let fd: Int32
    package let path: String

    #if os(Linux)
    // <fcntl.h> with _GNU_SOURCE, which Swift's Glibc module does not define.
    private static let getLock: Int32 = 36   // F_OFD_GETLK
    private static let setLock: Int32 = 37   // F_OFD_SETLK
    #else
    private static let getLock = F_GETLK
    private static let setLock = F_SETLK
    #endif

    /// Opens (creating it when missing) the lock file beside the database at `databasePath`.
    package init(databasePath: String) throws {
        path = databasePath + "-loaders"
        var st = stat()
        if lstat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG {
            throw SQLiteError(code: SQLITE_CANTOPEN, message: "\(path) is not a regular file (\(FileKind.name(st.st_mode)))", sql: nil)
        }
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        if fd < 0 {
            throw SQLiteError(code: errno == EROFS || errno == EACCES ? SQLITE_READONLY : SQLITE_CANTOPEN,
                                message: "cannot open \(path): \(String(cString: strerror(errno)))", sql: nil)
        }
    }

    deinit { close(fd) }

    private func lock(_ type: Int32, _ id: Int64) -> flock {
        var l = flock()
        l.l_type = Int16(type)
        l.l_whence = Int16(SEEK_SET)
        l.l_start = off_t(id)
        l.l_len = 1
        l.l_pid = 0
        return l
    }

    /// Takes the lock of row `id`; false when another ingest holds it.
    package func take(_ id: Int64) -> Bool {
        var l = lock(Int32(F_WRLCK), id)
        return fcntl(fd, Self.setLock, &l) == 0
    }

    /// Lets go of the lock of row `id`.
    package func release(_ id: Int64) {
        var l = lock(Int32(F_UNLCK), id)
        _ = fcntl(fd, Self.setLock, &l)
    }

    /// True when another ingest holds the lock of row `id` (it is loading the row now).
    func isHeld(_ id: Int64) -> Bool {
        var l = lock(Int32(F_WRLCK), id)
        guard fcntl(fd, Self.getLock, &l) == 0 else { return true }   // cannot tell: do not take it
        return l.l_type != Int16(F_UNLCK)
    }
}
