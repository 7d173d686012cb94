import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LCTraceModel
import LCTraceRules
import LCTraceStore

/// Builds session models while the ingest goes on: after a file is committed, its sessions
/// are read back on a second (read-only) connection and run through the model and the rules
/// on another thread, so the second core does the analysis while the writer loads the next
/// files. The writer stores a finished model between its batches, and only when the session
/// got no rows since the snapshot it was built from (checked with a `SnapshotStamp`);
/// otherwise the session stays dirty and the analysis after loading rebuilds it. The result is
/// therefore the same as loading everything first and analyzing after.
///
/// A session that was new in its file comes with the rows the writer stored
/// (`CapturedRows`): its model is built from them, and its events are not read back. A long
/// session's model reaches the writer in parts, batches of final facts and then what is left
/// (`ModelBuilder.compact`), so memory stays bounded however long the session.
///
/// Sendable: the state its worker thread shares with the writer is guarded by `condition`; the
/// worker's own connections and builders are touched by that thread only.
package final class BackgroundAnalyzer: @unchecked Sendable {
    private struct Request {
        package let session: Int64
        package let stamp: SnapshotStamp
        package let rows: (any CapturedSessionRows)?
    }

    /// The requests of one file: its sessions share a stamp, so a long queue (the analysis falls
    /// behind on many tiny sessions) costs 8 bytes a session.
    private struct RequestGroup {
        package let stamp: SnapshotStamp
        package var sessions: [Int64]
        package var next = 0
        package var rows: [Int64: any CapturedSessionRows]
    }

    /// One part of a session's model: a long session comes as batches of final facts
    /// (`ModelBuilder.compact`) and then the model left at the end; a short one in one part.
    private struct Result {
        package let session: Int64
        package let stamp: SnapshotStamp
        /// Built from captured rows (which are let go once built).
        let fromCapturedRows: Bool
        /// nil: the model could not be had (the session stays dirty).
        package let model: SessionModel?
        /// The session's old model is deleted before this part is written.
        package let first: Bool
        /// The model left at the end, with all the findings: the session is then analyzed.
        package let last: Bool

        package init(_ request: Request, _ model: SessionModel?, first: Bool = true, last: Bool = true) {
            session = request.session
            stamp = request.stamp
            fromCapturedRows = request.rows != nil
            self.model = model
            self.first = first
            self.last = last
        }
    }

    /// Most captured rows held by queued requests (40 bytes each on SQLite); past it a request
    /// goes without (its session is read back), so memory stays bounded when the analysis falls
    /// behind, as it does on many tiny sessions (10,000 in 100 files: 98 MB peak with 524,288).
    /// The host's `capturedRowsHeldAtMost`.
    var maxHeldRows = 65_536
    private var heldRows = 0
    /// Facts per batch of a long session's model (`SessionAnalysis.factsPerBatch`).
    package var factsPerBatch: Int {
        get { analysis.factsPerBatch }
        set { analysis.factsPerBatch = newValue }
    }
    /// Events past which a session is left to the analysis after loading, judged before
    /// building from its seq span (never less than its events): this thread cannot read
    /// retired instances back from the rows (its snapshot predates them), so it keeps a small
    /// tombstone for each (about 3 bytes an event, 5 MB at the limit).
    var maxEventsPerSession: Int64 = 1_500_000

    private var analysis: SessionAnalysis
    /// The ingest's side, not owned (see `work`: the worker thread may release this object
    /// last, and must not close the writer's connection then).
    private unowned let host: any LoadingAnalysisHost
    /// `LoadingAnalysisHost.readsBackWhileLoading`: false, a session without captured rows is
    /// left dirty, for the analysis after loading.
    private let readsBack: Bool
    /// Where models go, on the writer's connection; made on first use.
    private var writer: (any AnalysisStore & CapturedRowsReader)?
    private let condition = NSCondition()
    private var groups: [RequestGroup] = []
    private var firstGroup = 0
    /// Requests queued, not taken yet.
    private var queued = 0
    private var results: [Result] = []
    private var closed = false
    private var cancelled = false
    private var working = false
    /// The worker's connection and reader, until the worker takes them; `workerEnded` once it
    /// has let them go (its connection closed, so the writer's close can remove the log).
    private var workerConnection: (any SnapshotReader)?
    /// Or what opens them, where the host opens them only when needed
    /// (`LoadingAnalysisHost.snapshotReaderWhenNeeded`): the worker, at its first session to read.
    private var openWorkerConnection: (@Sendable () throws -> any SnapshotReader)?
    /// Why the worker could not open them then: thrown to the writer (`storeFinished`,
    /// `finish`), as `init` throws it where they are opened at once.
    private var workerFailure: Error?
    private var workerEnded = false
    /// Finished models the worker may hold before it waits for the writer to store them, and
    /// the facts they may hold together (at least one model always fits).
    private static let maxWaitingResults = 8
    private static let maxWaitingFacts = 16_384
    private var waitingFacts = 0

    /// Called while `finish` works through what is left, with the number of sessions left
    /// (for a progress line: the end of a run can be a long analysis of its last files).
    package var progress: ((Int) -> Void)?

    /// The sessions whose model was stored (their counts are read back at the end:
    /// `AnalysisSummary.add`).
    private(set) var storedSessions = SessionSet()
    package var sessions: Int { storedSessions.count }
    /// Of the models stored, those built from captured rows rather than read back.
    private(set) var storedFromCapturedRows = 0

    /// Models are written through `host` (the ingest's sink); the worker reads snapshots on a
    /// connection of its own, opened now or when first needed (`snapshotReaderWhenNeeded`).
    package init(host: any LoadingAnalysisHost, settings: RuleSettings) throws {
        analysis = SessionAnalysis(settings: settings)
        self.host = host
        readsBack = host.readsBackWhileLoading
        maxHeldRows = host.capturedRowsHeldAtMost
        if let open = host.snapshotReaderWhenNeeded() {
            openWorkerConnection = open
        } else {
            workerConnection = try host.openSnapshotReader()
        }
        // Weak: a finished worker thread must not keep the analyzer (and the writer's
        // connection) alive while the process closes its databases.
        let thread = Thread { [weak self] in self?.work() }
        thread.stackSize = 4 << 20
        thread.start()
    }

    /// Asks for the models of `sessions` as `store` committed them last (call after `commit`);
    /// `captured` holds all the rows of those of them that had none before
    /// (`LoadingAnalysisHost.takeCapturedRows`). The store tracks changes to them until each is stored or
    /// dropped.
    package func enqueue(_ sessions: [Int64], captured: [Int64: any CapturedSessionRows] = [:], from store: any LoadingAnalysisHost) {
        guard !sessions.isEmpty else { return }
        let stamp = store.stamp
        store.watch(sessions)
        condition.lock()
        var kept: [Int64: any CapturedSessionRows] = [:]
        for session in sessions {
            if let r = captured[session], heldRows + r.count <= maxHeldRows {
                heldRows += r.count
                kept[session] = r
            }
        }
        groups.append(RequestGroup(stamp: stamp, sessions: sessions, rows: kept))
        queued += sessions.count
        condition.broadcast()
        condition.unlock()
    }

    /// Stores the models finished so far whose sessions did not change. Call inside a batch
    /// of `store`, on the writer thread.
    package func storeFinished(_ store: any LoadingAnalysisHost) throws {
        condition.lock()
        if let failure = workerFailure {
            condition.unlock()
            throw failure
        }
        let ready = takeResults()
        condition.unlock()
        try self.store(ready, store)
    }

    /// Waits for every requested model and stores those still current, each group in a batch
    /// of its own (the write lock is not held while waiting). Loading is over, so this thread
    /// builds models too, from the queue's front, on the writer's connection: both cores work
    /// through what is left. The worker then ends.
    package func finish(_ store: any LoadingAnalysisHost, stop: StopRequest? = nil) throws {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
        while true {
            try stop?.check()
            condition.lock()
            let left = queued + (working ? 1 : 0), failure = workerFailure
            condition.unlock()
            if let failure { throw failure }
            if left > 0 { progress?(left) }
            condition.lock()
            if !results.isEmpty {
                let ready = takeResults()
                condition.unlock()
                try store.begin()
                try self.store(ready, store)
                try store.commit()
            } else if queued > 0 {
                let request = takeRequest()
                condition.unlock()
                guard request.rows != nil || readsBack else {
                    store.unwatch(request.session)
                    continue
                }
                // On the writer's connection: built and stored in one write transaction, in batches.
                try store.begin()
                if store.unchangedSince(request.stamp, session: request.session) {
                    if writer == nil { writer = try store.modelStore() }
                    let meta = try writer!.sessionMetadata(request.session)
                    let model = try analysis.replaceStoredModel(session: request.session, sid: meta.sid, metadata: meta,
                                                                source: writer!, captured: request.rows, sink: writer!)
                    recordStored(request.session, model, fromCapturedRows: request.rows != nil)
                }
                store.unwatch(request.session)
                try store.commit()
            } else if working {
                condition.wait()
                condition.unlock()
            } else {
                condition.unlock()
                break
            }
        }
        waitForWorker()
        // Its statements are on the writer's connection: freed here, on the writer's thread.
        writer = nil
    }

    /// Waits until the worker has ended and closed its connection (after `finish` or `cancel`:
    /// the session it is building is its last).
    package func waitForWorker() {
        condition.lock()
        while !workerEnded { condition.wait() }
        condition.unlock()
    }

    /// Ends the worker without storing anything more (the ingest failed).
    package func cancel() {
        condition.lock()
        closed = true
        cancelled = true
        groups.removeAll()
        firstGroup = 0
        queued = 0
        results.removeAll()
        waitingFacts = 0
        heldRows = 0
        condition.broadcast()
        condition.unlock()
        writer = nil
    }

    /// Nothing requested, being built or waiting to be stored (for tests that drive the worker).
    var isIdle: Bool {
        condition.lock()
        defer { condition.unlock() }
        return queued == 0 && !working && results.isEmpty
    }

    /// Every part waiting for the writer; the worker may queue more. Call with the lock.
    private func takeResults() -> [Result] {
        let ready = results
        results.removeAll()
        waitingFacts = 0
        condition.broadcast()
        return ready
    }

    /// The oldest request, its captured rows no longer counted as held. Call with the lock.
    private func takeRequest() -> Request {
        let session = groups[firstGroup].sessions[groups[firstGroup].next]
        let rows = groups[firstGroup].rows.removeValue(forKey: session)
        let request = Request(session: session, stamp: groups[firstGroup].stamp, rows: rows)
        groups[firstGroup].next += 1
        if groups[firstGroup].next == groups[firstGroup].sessions.count {
            // Emptied groups are dropped from the front now and then, not one by one.
            groups[firstGroup].sessions = []
            firstGroup += 1
            if firstGroup >= 64 && firstGroup * 2 >= groups.count {
                groups.removeFirst(firstGroup)
                firstGroup = 0
            }
        }
        queued -= 1
        heldRows -= rows?.count ?? 0
        return request
    }

    /// Writes the parts whose session got no rows since their snapshot. Once a session changed
    /// it stays changed, so the later parts of a model are dropped as well; the rows of earlier
    /// parts then wait, in a session still marked dirty, for the analysis after loading.
    private func store(_ ready: [Result], _ store: any LoadingAnalysisHost) throws {
        for result in ready {
            // The last part ends the request, stored or not: its session is no longer watched.
            defer { if result.last { store.unwatch(result.session) } }
            guard let model = result.model, store.unchangedSince(result.stamp, session: result.session) else { continue }
            if writer == nil { writer = try store.modelStore() }
            if result.first { try writer!.clear(session: result.session) }
            guard result.last else {
                try writer!.writeRows(session: result.session, model)
                continue
            }
            try writer!.finish(session: result.session, model)
            recordStored(result.session, model, fromCapturedRows: result.fromCapturedRows)
        }
    }

    /// Under the lock: a worker that stores its models (`storeOnWorker`) records them too.
    private func recordStored(_ session: Int64, _ model: SessionModel, fromCapturedRows: Bool) {
        condition.lock()
        defer { condition.unlock() }
        storedSessions.insert(session)
        if fromCapturedRows { storedFromCapturedRows += 1 }
    }

    /// Queues a part for the writer, waiting while the queue is full (one part always fits).
    /// False when the analysis was cancelled.
    private func deliver(_ result: Result) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let facts = result.model?.factCount ?? 0
        while !results.isEmpty && !cancelled
                && (results.count >= Self.maxWaitingResults || waitingFacts + facts > Self.maxWaitingFacts) {
            condition.wait()
        }
        guard !cancelled else { return false }
        results.append(result)
        waitingFacts += facts
        condition.broadcast()
        return true
    }

    /// One session's model from one snapshot, or nil when it cannot be had (the snapshot must
    /// start after the request's commit, and the model only counts when it ends cleanly). A
    /// long session's batches go to `batches` as they are made.
    private func build(_ request: Request, on reader: any SnapshotReader,
                       batches: @escaping (SessionModel) throws -> Void) -> SessionModel? {
        reader.inSnapshot {
            guard try reader.seqSpan(of: request.session) <= maxEventsPerSession else { throw Analyzer.SessionTooLong() }
            let meta = try reader.sessionMetadata(request.session)
            return try analysis.build(session: request.session, sid: meta.sid, metadata: meta, source: reader,
                                      captured: request.rows, batches: batches)
        }
    }

    /// The worker: one session at a time, each read in its own transaction (a snapshot). A
    /// failed read only costs time: the session stays dirty and is analyzed after loading.
    private func work() {
        do {
            condition.lock()
            var connection = workerConnection
            let open = openWorkerConnection
            workerConnection = nil
            openWorkerConnection = nil
            condition.unlock()
            if connection != nil || open != nil { work(&connection, opening: open) }
            connection?.close()
        }
        // The reader and the connection were let go at the end of the scope above.
        condition.lock()
        workerEnded = true
        condition.broadcast()
        condition.unlock()
    }

    /// `reader`: opened by `open` when first needed, if it is nil.
    private func work(_ reader: inout (any SnapshotReader)?, opening open: (@Sendable () throws -> any SnapshotReader)?) {
        #if os(Linux)
        // Loading is the critical path: this thread takes what the writer and the reader leave
        // of the two cores (nice 10 gives it about a tenth when all three could run). On Linux
        // the nice value is per thread, and who = 0 names the calling thread.
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #endif
        while true {
            condition.lock()
            while queued == 0 && !closed { condition.wait() }
            guard queued > 0 else { condition.unlock(); break }
            let request = takeRequest()
            working = true
            condition.unlock()

            if request.rows == nil && !readsBack {
                _ = deliver(Result(request, nil))
            } else {
                if reader == nil, let open {
                    do {
                        reader = try open()
                    } catch {
                        // The writer throws it (the request is dropped with the ingest).
                        condition.lock()
                        workerFailure = error
                        working = false
                        condition.broadcast()
                        condition.unlock()
                        return
                    }
                }
                if let storing = reader as? any ModelStoringReader {
                    storeOnWorker(request, storing)
                } else if let reader {
                    buildForWriter(request, reader)
                }
            }

            condition.lock()
            working = false
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Builds a session's model and hands it, in parts, to the writer, which stores it.
    private func buildForWriter(_ request: Request, _ reader: any SnapshotReader) {
        var parts = 0
        let model = build(request, on: reader) { [self] batch in
            parts += 1
            guard deliver(Result(request, batch, first: parts == 1, last: false)) else { throw CancellationError() }
        }
        _ = deliver(Result(request, model, first: parts == 0))
    }

    /// Builds and stores a session's model on the worker's own connection, in one write
    /// transaction (`ModelStoringReader`); the writer is told it is done. A failure only costs
    /// time: the session stays dirty, for the analysis after loading.
    private func storeOnWorker(_ request: Request, _ store: any ModelStoringReader) {
        let model = try? store.writeTransaction {
            let meta = try store.sessionMetadata(request.session)
            return try analysis.replaceStoredModel(session: request.session, sid: meta.sid, metadata: meta, source: store,
                                                   captured: request.rows, sink: store)
        }
        if let model { recordStored(request.session, model, fromCapturedRows: request.rows != nil) }
        // Stored already: the writer only ends the request.
        _ = deliver(Result(request, nil))
    }
}
