import Foundation

/// What the recorder has done so far.
public struct RecorderStatistics: Sendable, Equatable {
    /// Events that entered the buffer (the session record and the recorder's marks included).
    public var recorded: Int64 = 0
    /// Events dropped because the buffer was full (each left a hole in `seq`).
    public var dropped: Int64 = 0
    /// Events written to a file, and the gzip members and bytes that held them.
    public var written: Int64 = 0
    public var members: Int64 = 0
    public var bytesWritten: Int64 = 0
    /// Files started (parts), and finished files deleted to stay under `maxStoredBytes`.
    public var filesStarted: Int64 = 0
    public var filesDeleted: Int64 = 0
    public var bytesDeleted: Int64 = 0
    /// Failed opens or writes (a full disk), and the events they cost.
    public var writeErrors: Int64 = 0
    public var lostToWriteErrors: Int64 = 0
}

/// The background writer: one thread that drains the buffer every `flushInterval` (or at
/// `flushEventCount` events, or when asked), encodes the events, compresses them into one
/// gzip member (of `flushEventCount` events at most, so its memory stays small whatever
/// the backlog), appends it with one `write`, rotates files by size and age (the session
/// record repeated at the top of each), and keeps the directory under its byte cap. No
/// fsync: bytes handed to `write` survive a process kill in the page cache, and Apple's
/// flushes are slow; only a power loss can cost the last members.
final class TraceWriter: @unchecked Sendable {
    let buffer: EventBuffer
    let directory: URL
    private let encoder: LineEncoder
    private let intervalNanoseconds: UInt64
    private let rotateBytes: Int
    private let rotateAgeNanoseconds: Int64
    private let maxStoredBytes: Int
    private let observer: (@Sendable (FlushReport) -> Void)?
    /// The app part of this recorder's file names (`TraceFileName.safe`): its own files have it.
    private let fileApp: String
    private let fileStamp: String
    private let fileSession: String

    // The writer thread's own.
    private let gzip: GzipMembers
    /// The lines of the member being made (its capacity kept from member to member).
    private var lines: LineBuffer
    /// Events per member at most: what bounds the writer's memory, whatever waits.
    private let eventsPerMember: Int
    /// About 150 kB of lines, 15 kB compressed: a member's 18 bytes of framing and fresh
    /// dictionary cost nothing at that size, and the writer's buffers stay under a megabyte.
    static let maxEventsPerMember = 1024
    private var file: OpenTraceFile?
    private var nextPart = 0
    private var filesOpened = 0
    private var lastFlush = MonotonicClock.system.nanoseconds()
    /// The marker met: the session record that heads the next file.
    private var nextFileHead: RecordedEvent?

    // Behind `buffer.lock`.
    private var tickets: [@Sendable () -> Void] = []
    /// Waiting for the next rotation marker to be met.
    private var rotationTickets: [@Sendable () -> Void] = []
    /// A rotation marker is in the buffer, not yet met.
    private var rotationQueued = false
    private var flushRequested = false
    private var rotateRequested = false
    private var stopping = false
    private var finished = false
    private var activeFileName: String?
    private var stats = RecorderStatistics()

    init(buffer: EventBuffer, directory: URL, encoder: LineEncoder, configuration c: RecorderConfiguration, wall: Int64) {
        self.buffer = buffer
        self.directory = directory
        self.encoder = encoder
        intervalNanoseconds = max(1_000_000, nanoseconds(seconds: c.flushInterval))
        rotateBytes = max(1 << 12, c.rotateBytes)
        rotateAgeNanoseconds = Int64(max(1_000_000_000, nanoseconds(seconds: c.rotateAge)))
        maxStoredBytes = max(c.maxStoredBytes, 2 * max(1 << 12, c.rotateBytes))
        observer = c.flushObserver
        gzip = GzipMembers(level: c.compressionLevel)
        eventsPerMember = max(1, min(c.flushEventCount, c.bufferCapacity, TraceWriter.maxEventsPerMember))
        lines = LineBuffer(capacity: eventsPerMember * 192)
        fileApp = TraceFileName.safe(c.session.app)
        fileStamp = UTCTime(milliseconds: wall).compact
        fileSession = c.sessionID
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "lctrace-recorder.writer"
        thread.qualityOfService = .utility
        thread.start()
    }

    // MARK: Requests (any thread)

    /// Writes what is buffered now as soon as possible; `completion` runs on the writer
    /// thread once it is in a file (or could not be: a full disk).
    /// With `rotate`, the file ends too: a rotation marker goes in behind what is buffered
    /// now, and `completion` runs once the writer met it.
    func flush(rotate: Bool, completion: (@Sendable () -> Void)?) {
        let queued: Bool = buffer.lock.withLock {
            if finished { return false }
            flushRequested = true
            if rotate {
                queueRotationLocked()
                if let completion { rotationTickets.append(completion) }
            } else if let completion {
                tickets.append(completion)
            }
            buffer.lock.broadcast()
            return true
        }
        if !queued { completion?() }
    }

    /// Asks the thread to write what is left, finish the file and end.
    func requestStop() {
        buffer.lock.withLock {
            stopping = true
            buffer.lock.broadcast()
        }
    }

    /// Waits up to `timeout` seconds for the thread to end; true when it did.
    func waitUntilFinished(timeout: Double) -> Bool {
        let deadline = MonotonicClock.system.nanoseconds() &+ nanoseconds(seconds: timeout)
        return buffer.lock.withLock {
            while !finished {
                let now = MonotonicClock.system.nanoseconds()
                if now >= deadline { return false }
                buffer.lock.wait(nanoseconds: min(deadline - now, 50_000_000))
            }
            return true
        }
    }

    var isFinished: Bool { buffer.lock.withLock { finished } }

    var statistics: RecorderStatistics {
        buffer.lock.withLock {
            var s = stats
            s.recorded = buffer.recordedTotal
            s.dropped = buffer.droppedTotal
            return s
        }
    }

    /// Finished trace files in the directory, oldest first: every file of the recorder's
    /// naming and of its app but the one being written (earlier sessions' files included, even
    /// one a killed process left open: it is readable up to its cut). Another app's files (an
    /// extension sharing an App Group directory) are its own recorder's to hand out and delete:
    /// one of them may be the file that recorder is writing.
    func finishedFiles() -> [URL] {
        let active = buffer.lock.withLock { activeFileName }
        return ownFiles().filter { $0.name.text != active }.map(\.url)
    }

    /// The directory's trace files of this recorder's app, oldest first.
    private func ownFiles() -> [(name: TraceFileName, url: URL, size: Int)] {
        TraceDirectory.list(directory).filter { $0.name.app == fileApp }
    }

    /// Deletes `files` (after an upload); the file being written is never deleted. Returns
    /// the files deleted.
    @discardableResult
    func remove(_ files: [URL]) -> [URL] {
        let active = buffer.lock.withLock { activeFileName }
        return files.filter { url in
            guard TraceFileName(parsing: url.lastPathComponent)?.app == fileApp, url.lastPathComponent != active,
                  url.deletingLastPathComponent().standardizedFileURL.path == directory.standardizedFileURL.path else { return false }
            return (try? FileManager.default.removeItem(at: url)) != nil
        }
    }

    // MARK: The thread

    /// Deletes what the byte cap says must go before the first file is started (called by
    /// the recorder before `start`, so its mark follows the session record at once).
    func enforceCapAtStart() { enforceCap() }

    private func run() {
        while true {
            buffer.lock.lock()
            while !(stopping || flushRequested || buffer.waitingLocked >= buffer.wakeCount
                    || (buffer.waitingLocked > 0 && MonotonicClock.system.nanoseconds() &- lastFlush >= intervalNanoseconds)) {
                buffer.lock.wait(nanoseconds: intervalNanoseconds)
            }
            let range = buffer.takeLocked()
            let stop = stopping
            // A file too big or too old ends behind what is buffered now (and a marker that
            // found the buffer full is tried again).
            if rotateRequested || isDueLocked { queueRotationLocked() }
            let done = tickets
            tickets = []
            flushRequested = false
            buffer.lock.unlock()

            // Members of at most `eventsPerMember` events: a backlog is written in several.
            var start = range.lowerBound
            while start < range.upperBound {
                let end = min(range.upperBound, start + eventsPerMember)
                write(start..<end, stopping: stop)
                start = end
            }
            lastFlush = MonotonicClock.system.nanoseconds()
            buffer.lock.withLock { if isDueLocked { queueRotationLocked() } }
            if stop { finishFile(enforcingCap: false) }  // the next session's start enforces the cap
            for completion in done { completion() }
            if stop {
                let late: [@Sendable () -> Void] = buffer.lock.withLock {
                    finished = true
                    buffer.lock.broadcast()
                    defer { tickets = []; rotationTickets = [] }
                    return tickets + rotationTickets
                }
                for completion in late { completion() }
                return
            }
        }
    }

    /// The current file reached `rotateBytes` or `rotateAge`.
    private var isDueLocked: Bool {
        guard let open = file else { return false }
        return open.size >= rotateBytes || buffer.nowLocked() - open.openedAt >= rotateAgeNanoseconds
    }

    /// Puts a rotation marker in the buffer (the lock held), behind what is there: a session record with
    /// its own seq. Where the writer meets it, the file ends and the next one starts with it,
    /// so every event before it is in the finished file and every one after it in the next:
    /// a kill at any moment leaves the seqs written contiguous. (A full buffer: tried again
    /// after the next member.)
    private func queueRotationLocked() {
        guard !rotationQueued else { return }
        rotationQueued = buffer.recordLocked(RecordedEvent(.session))
        rotateRequested = !rotationQueued
    }

    /// Encodes the events of `range` and writes them as a member, or two when a rotation
    /// marker comes in the middle (the part before it ends the current file). While the
    /// recorder stops, a rotation enforces no cap: its mark would come after `sessionEnd`, or
    /// not at all (the next session's start enforces it, with its mark).
    private func write(_ range: Range<Int>, stopping: Bool) {
        lines.removeAll()
        var count = 0
        var lastSeq: Int64 = -1
        buffer.drain(range) { event in
            if case .standard(.session) = event.kind, event.seq > 0 {
                writeMember(count: count, lastSeq: lastSeq)
                finishFile(enforcingCap: !stopping)
                let done: [@Sendable () -> Void] = buffer.lock.withLock {
                    rotationQueued = false
                    defer { rotationTickets = [] }
                    return rotationTickets
                }
                for completion in done { completion() }
                nextFileHead = event
                lines.removeAll()
                count = 0
                return
            }
            if file == nil { startFile(&lines, &count, &lastSeq) }
            encoder.append(event, to: &lines)
            lastSeq = max(lastSeq, event.seq)
            count += 1
        }
        writeMember(count: count, lastSeq: lastSeq)
    }

    /// Opens the next part and puts the session record at its head: the rotation marker
    /// met, or after a failed write a copy stamped now (the one case where a kill can leave a
    /// hole below it: the events still buffered when the disk failed).
    private func startFile(_ lines: inout LineBuffer, _ count: inout Int, _ lastSeq: inout Int64) {
        guard openNextFile(at: buffer.now()) else { return }
        var head = nextFileHead
        nextFileHead = nil
        if head == nil && filesOpened > 1 {
            var copy = RecordedEvent(.session)
            (copy.seq, copy.t) = buffer.stampOutOfBand()
            head = copy
        }
        if let head {
            encoder.append(head, to: &lines)
            lastSeq = max(lastSeq, head.seq)
            count += 1
        }
    }

    /// Compresses `lines` into one member and appends it to the file (nothing when empty).
    private func writeMember(count: Int, lastSeq: Int64) {
        guard count > 0 else { return }
        guard let open = file else { return lose(count) }
        let compressed = gzip.compress(lines.bytes)
        guard compressed, open.append(gzip.output) else {
            finishFile(enforcingCap: false)
            return lose(count)
        }
        let memberBytes = gzip.output.count
        buffer.lock.withLock {
            stats.written += Int64(count)
            stats.members += 1
            stats.bytesWritten += Int64(memberBytes)
        }
        observer?(FlushReport(file: open.url, lastSeq: lastSeq, events: count, bytes: memberBytes, fileBytes: open.size))
    }

    private func lose(_ count: Int) {
        buffer.lock.withLock {
            stats.writeErrors += 1
            stats.lostToWriteErrors += Int64(count)
        }
    }

    /// Opens the next part; false when it could not be (its events are lost and counted).
    private func openNextFile(at t: Int64) -> Bool {
        do {
            try TraceDirectory.prepare(directory)
            var name = TraceFileName(app: fileApp, stamp: fileStamp, session: fileSession, part: nextPart)
            while FileManager.default.fileExists(atPath: directory.appendingPathComponent(name.text).path) {
                name.part += 1
            }
            nextPart = name.part + 1
            file = try OpenTraceFile(directory: directory, name: name, openedAt: t)
            filesOpened += 1
            buffer.lock.withLock {
                activeFileName = name.text
                stats.filesStarted += 1
            }
            return true
        } catch {
            return false
        }
    }

    private func finishFile(enforcingCap: Bool) {
        guard let open = file else { return }
        open.close()
        file = nil
        buffer.lock.withLock { activeFileName = nil }
        if enforcingCap { enforceCap() }
    }

    /// Deletes the oldest finished files until the directory holds at most `maxStoredBytes`
    /// of this app's trace files less the room of the file being written (`rotateBytes`: it
    /// grows to that before the next rotation), and says so in the trace with a
    /// `recorder.deletedFiles` mark (in order, like any event; a full buffer drops it, the
    /// statistics keep the count). Another app's files (an extension's, in a shared App Group
    /// directory) count against that app's own cap only.
    private func enforceCap() {
        let files = ownFiles()
        let budget = maxStoredBytes - rotateBytes
        var total = files.reduce(0) { $0 + $1.size }
        guard total > budget else { return }
        let active = buffer.lock.withLock { activeFileName }
        var deleted = 0
        var bytes = 0
        for f in files where total > budget && f.name.text != active {
            guard (try? FileManager.default.removeItem(at: f.url)) != nil else { continue }
            total -= f.size
            deleted += 1
            bytes += f.size
        }
        guard deleted > 0 else { return }
        buffer.lock.withLock {
            stats.filesDeleted += Int64(deleted)
            stats.bytesDeleted += Int64(bytes)
        }
        var mark = RecordedEvent(.mark)
        mark.text = TraceWriter.deletedMarkName
        mark.numbers = [("files", Int64(deleted)), ("bytes", Int64(bytes))]
        buffer.record(mark)
    }

    /// The mark that reports files deleted for the byte cap: `{"ev":"mark","name":"recorder.deletedFiles","files":N,"bytes":B}`.
    static let deletedMarkName = "recorder.deletedFiles"
}
