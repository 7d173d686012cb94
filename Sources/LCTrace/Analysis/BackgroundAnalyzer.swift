import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Builds session models while the ingest goes on: after a file is committed, its sessions
/// are read back on a second (read-only) connection and run through the model and the rules
/// on another thread, so the second core does the analysis while the writer loads the next
/// files. The writer stores a finished model between its batches, and only when the session
/// got no rows since the snapshot it was built from (checked with `IngestStore.Stamp`);
/// otherwise the session stays dirty and the analysis after loading rebuilds it. The result is
/// therefore the same as loading everything first and analysing after.
///
/// A session that was new in its file comes with the rows the writer stored
/// (`CapturedRows`): its model is built from them, and its events are not read back.
public final class BackgroundAnalyzer {
    private struct Request {
        let session: Int64
        let stamp: IngestStore.Stamp
        let rows: CapturedRows?
    }

    private struct Result {
        let session: Int64
        let stamp: IngestStore.Stamp
        /// Built from captured rows (which are let go once built).
        let fromCapturedRows: Bool
        let model: SessionModel?

        init(_ request: Request, _ model: SessionModel?) {
            session = request.session
            stamp = request.stamp
            fromCapturedRows = request.rows != nil
            self.model = model
        }
    }

    /// Most captured rows held by queued requests (40 bytes each); past it a request goes
    /// without (its session is read back), so memory stays bounded when the analysis falls
    /// behind, as it does on many tiny sessions (10,000 in 100 files: 98 MB peak with 524,288).
    public var maxHeldRows = 65_536
    private var heldRows = 0
    /// Facts past which a session is too long for this thread's models (they are built whole
    /// here) and is left to the analysis after loading, which stores it in batches.
    public var factsPerModel = Analyzer.factsPerBatch

    private let settings: RuleSettings
    private let database: Database
    /// Made on first use, sharing the ingest store's string cache.
    private var writer: ModelWriter?
    private let condition = NSCondition()
    private var requests: [Request] = []
    private var results: [Result] = []
    private var closed = false
    private var cancelled = false
    private var working = false
    /// Finished models the worker may hold before it waits for the writer to store them.
    private static let maxWaitingResults = 8

    /// Called while `finish` works through what is left, with the number of sessions left
    /// (for a progress line: the end of a run can be a long analysis of its last files).
    public var progress: ((Int) -> Void)?

    /// Events and findings of each session whose model was stored (the last one stored).
    public private(set) var stored: [Int64: (events: Int, findings: Int)] = [:]
    public var sessions: Int { stored.count }
    /// Of the models stored, those built from captured rows rather than read back.
    public private(set) var storedFromCapturedRows = 0

    /// `db` is the writer's connection (models are written there); the worker opens its own
    /// read-only connection to `db.path`.
    public init(db: Database, settings: RuleSettings) throws {
        self.settings = settings
        database = db
        let reading = try Database(path: db.path, mode: .readOnly)
        // It reads each session once, in key order: a small page cache does (memory stays flat).
        try reading.execute("PRAGMA cache_size = -4096")
        let reader = try SessionEventReader(db: reading)
        let thread = Thread { [self] in self.work(reading, reader) }
        thread.stackSize = 4 << 20
        thread.start()
    }

    /// Asks for the models of `sessions` as committed when `stamp` was taken; `captured`
    /// holds all the rows of those of them that had none before (`IngestStore.takeCapturedRows`).
    public func enqueue(_ sessions: [Int64], captured: [Int64: CapturedRows] = [:], stamp: IngestStore.Stamp) {
        guard !sessions.isEmpty else { return }
        condition.lock()
        for session in sessions {
            var rows = captured[session]
            if let r = rows {
                if heldRows + r.count <= maxHeldRows { heldRows += r.count } else { rows = nil }
            }
            requests.append(Request(session: session, stamp: stamp, rows: rows))
        }
        condition.broadcast()
        condition.unlock()
    }

    /// Stores the models finished so far whose sessions did not change. Call inside a batch
    /// of `store`, on the writer thread.
    public func storeFinished(_ store: IngestStore) throws {
        condition.lock()
        let ready = results
        results.removeAll()
        condition.broadcast()
        condition.unlock()
        try self.store(ready, store)
    }

    /// Waits for every requested model and stores those still current, each group in a batch
    /// of its own (the write lock is not held while waiting). Loading is over, so this thread
    /// builds models too, from the queue's front, on the writer's connection: both cores work
    /// through what is left. The worker then ends.
    public func finish(_ store: IngestStore) throws {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
        var own: (reader: SessionEventReader, metadata: ModelReader)?
        while true {
            condition.lock()
            let left = requests.count + (working ? 1 : 0)
            condition.unlock()
            if left > 0 { progress?(left) }
            condition.lock()
            if !results.isEmpty {
                let ready = results
                results.removeAll()
                condition.broadcast()
                condition.unlock()
                try store.begin()
                try self.store(ready, store)
                try store.commit()
            } else if !requests.isEmpty {
                let request = takeRequest()
                condition.unlock()
                if own == nil { own = (try SessionEventReader(db: database), ModelReader(db: database)) }
                let model = build(request, on: database, own!.reader, own!.metadata)
                try store.begin()
                try self.store([Result(request, model)], store)
                try store.commit()
            } else if working {
                condition.wait()
                condition.unlock()
            } else {
                condition.unlock()
                break
            }
        }
    }

    /// Ends the worker without storing anything more (the ingest failed).
    public func cancel() {
        condition.lock()
        closed = true
        cancelled = true
        requests.removeAll()
        results.removeAll()
        heldRows = 0
        condition.broadcast()
        condition.unlock()
    }

    /// The oldest request, its captured rows no longer counted as held. Call with the lock.
    private func takeRequest() -> Request {
        let request = requests.removeFirst()
        heldRows -= request.rows?.count ?? 0
        return request
    }

    private func store(_ ready: [Result], _ store: IngestStore) throws {
        for result in ready {
            guard let model = result.model, store.unchangedSince(result.stamp, session: result.session) else { continue }
            if writer == nil { writer = try ModelWriter(db: store.db, strings: store.strings) }
            try writer!.replace(session: result.session, with: model)
            stored[result.session] = (model.stats.events, model.findings.count)
            if result.fromCapturedRows { storedFromCapturedRows += 1 }
        }
    }

    /// One session's model from one read transaction (a snapshot), or nil when it cannot be
    /// had. The snapshot must start after the request's commit: never inside a transaction
    /// left open, and the model only counts when the read transaction ends cleanly.
    private func build(_ request: Request, on db: Database, _ reader: SessionEventReader, _ metadata: ModelReader) -> SessionModel? {
        guard db.isAutocommit && !db.hasActiveStatements else { return nil }
        do {
            try db.execute("BEGIN")
            let meta = try metadata.sessionMetadata(request.session)
            // A session too long for one model in memory is left to the analysis after loading,
            // which stores it in batches (this thread cannot write).
            let model = try Analyzer.buildModel(session: request.session, sid: meta.sid, metadata: meta,
                                                reader: reader, captured: request.rows, settings: settings,
                                                factsPerBatch: factsPerModel, batches: { _ in throw Analyzer.SessionTooLong() })
            try db.commit()
            return model
        } catch {
            if !db.isAutocommit { try? db.execute("ROLLBACK") }
            return nil
        }
    }

    /// The worker: one session at a time, each read in its own transaction (a snapshot). A
    /// failed read only costs time: the session stays dirty and is analysed after loading.
    private func work(_ db: Database, _ reader: SessionEventReader) {
        #if os(Linux)
        // Loading is the critical path: this thread takes what the writer and the reader leave
        // of the two cores (nice 10 gives it about a tenth when all three could run). On Linux
        // the nice value is per thread, and who = 0 names the calling thread.
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #endif
        let metadata = ModelReader(db: db)
        while true {
            condition.lock()
            while requests.isEmpty && !closed { condition.wait() }
            guard !requests.isEmpty else { condition.unlock(); break }
            let request = takeRequest()
            working = true
            condition.unlock()

            let model = build(request, on: db, reader, metadata)

            condition.lock()
            while results.count >= Self.maxWaitingResults && !cancelled { condition.wait() }
            if !cancelled { results.append(Result(request, model)) }
            working = false
            condition.broadcast()
            condition.unlock()
        }
    }
}
