import LCTraceFormat
import LCTraceModel
import LCTraceStore

/// (Issue 26) The analysis while loading on PostgreSQL, as SQLite has it (`BackgroundAnalyzer`):
/// the ingest keeps the rows of the sessions this run writes alone (each first met in its file
/// with no rows stored, and copied straight into `events` ever since: `PGIngestSink.directRows`),
/// and after the file commits, a thread of its own builds their models from those rows and
/// stores them with `COPY` on a connection of its own, while the next files load. Nothing is
/// read back. Sessions that meet other runs' or ingesters' rows are left dirty, for the
/// analysis after loading, which reads them back as before.
///
/// Whether a model is current is the server's to say: `PGAnalysisStore.finish` clears `dirty`
/// only when `sessions.changes` still counts the batches the captured rows came from, so rows
/// added meanwhile by anyone (this run's later files, other ingesters) leave the session dirty
/// and the analysis after loading rebuilds it. The models are stored outside the ingest's
/// transactions, one session per transaction, so they never hold a lock the ingest waits for.
final class PGCapturedRows: CapturedSessionRows, @unchecked Sendable {
    /// One events row: texts as `strings` ids, 0 for NULL.
    struct Row {
        var seq: Int64
        var t: Int64
        var ev: Int64
        var vc: Int64
        var cls: Int64
        var other: Int64
        var detail: Int64
        var flags: Int64
    }

    let session: Int64
    private(set) var rows: [Row] = []
    /// The attrs of the rows whose kind the model reads them of (`EventKind.modelReadsAttrs`), by seq.
    private(set) var attrs: [Int64: String] = [:]
    /// `sessions.changes` once the file committed: the batches these rows came from.
    var changes: Int64 = -1

    init(session: Int64) { self.session = session }

    var count: Int { rows.count }

    /// Appends a stored line. Lines come in seq order: only batches whose seqs rise go straight in.
    func append(_ line: PGIngestSink.Line) {
        let e = line.event, t = line.ids
        rows.append(Row(seq: e.seq, t: e.t, ev: t.ev ?? 0, vc: t.vc ?? 0, cls: t.cls ?? 0, other: t.other ?? 0,
                        detail: t.detail ?? 0, flags: e.flags))
        if let a = line.modelAttrs { attrs[e.seq] = a }
    }

    /// The ids of the texts the rows hold. (A row's controller, class and other controller
    /// mostly repeat the row before's: those are not hashed again.)
    var textIDs: Set<Int64> {
        var ids = Set<Int64>()
        var last = Row(seq: 0, t: 0, ev: 0, vc: 0, cls: 0, other: 0, detail: 0, flags: 0)
        for r in rows {
            if r.ev != last.ev { ids.insert(r.ev) }
            if r.vc != last.vc { ids.insert(r.vc) }
            if r.cls != last.cls { ids.insert(r.cls) }
            if r.other != last.other { ids.insert(r.other) }
            if r.detail != last.detail { ids.insert(r.detail) }
            last = r
        }
        ids.remove(0)
        return ids
    }

    /// Calls `body` with the events of the rows, as `PGEventReader` reads them from the table
    /// (`texts`: those of `textIDs`). Event names and kinds are looked up by id, once each; a
    /// text that repeats the row before's is not looked up again.
    func forEachEvent(sid: String, texts: [Int64: String], _ body: (TraceEvent) throws -> Void) throws {
        func text(_ id: Int64) -> String? { id == 0 ? nil : texts[id] }
        var names = PGEventNames()
        var event = TraceEvent(sid: sid, seq: 0, t: 0, name: "", kind: .unknown)
        var last = Row(seq: 0, t: 0, ev: -1, vc: -1, cls: -1, other: -1, detail: -1, flags: 0)
        for r in rows {
            event.seq = r.seq
            event.t = r.t
            if r.ev != last.ev { (event.name, event.kind) = names.of(r.ev, text) }
            if r.vc != last.vc { event.vc = text(r.vc) }
            if r.cls != last.cls { event.cls = text(r.cls) }
            if r.other != last.other { event.other = text(r.other) }
            event.flags = EventFlags(rawValue: r.flags)
            if r.detail != last.detail { event.detail = text(r.detail) }
            event.attrs = event.kind.modelReadsAttrs ? attrs[r.seq] : nil
            last = r
            try body(event)
        }
    }
}

extension PGIngestSink {
    /// Captures the lines of a batch copied straight in: each session first met in this file
    /// with no rows (none written by this run, and `directRows` found none by anyone else)
    /// starts a capture, kept while every batch of it goes straight in.
    func capture(_ lines: [Line]) {
        var session: Int64 = 0
        var current: PGCapturedRows?
        for (i, line) in lines.enumerated() {
            if i == 0 || line.session != session {
                session = line.session
                if metInFile.insert(session).inserted, written[session] == nil, capturedRowCount < captureLimit {
                    captured[session] = PGCapturedRows(session: session)
                }
                current = captured[session]
            }
            guard let capture = current else { continue }
            guard capturedRowCount < captureLimit else {
                // Too many rows held: this session is analysed after loading.
                dropCaptures(of: [session])
                current = nil
                continue
            }
            capture.append(line)
            capturedRowCount += 1
        }
    }

    /// Drops the captures of `sessions` (a batch of theirs met stored rows); they are not
    /// captured again in this file.
    func dropCaptures(of sessions: [Int64]) {
        for session in sessions {
            metInFile.insert(session)
            if let capture = captured.removeValue(forKey: session) { capturedRowCount -= capture.count }
        }
    }

    func dropCaptures() {
        captured.removeAll()
        capturedRowCount = 0
        metInFile.removeAll()
    }
}

extension PGIngestSink: LoadingAnalysisHost {
    /// Not used: the server tells whether a session changed (`PGAnalysisStore.finish`).
    package var stamp: SnapshotStamp { SnapshotStamp(transaction: 0, dataVersion: 0) }
    package func watch(_ sessions: [Int64]) {}
    package func unwatch(_ session: Int64) {}
    /// Always: a model from captured rows is marked current by the server only when the
    /// session's `changes` are still those of the rows (`PGCapturedRows.changes`).
    package func unchangedSince(_ stamp: SnapshotStamp, session: Int64) -> Bool { true }
    /// Sessions without captured rows are read back after loading.
    package var readsBackWhileLoading: Bool { false }

    /// A session read back costs the server its blocks' unnesting and sending, and the client
    /// their decoding. When the analysis thread falls behind (four ingesters on two cores, where
    /// it gets the least of them), 65,536 rows held (a dozen files of 6,000 events) left a third
    /// of the sessions to be read back: 3.56 s of CPU for four ingesters on disjoint quarters of
    /// the 718,000-event benchmark, 2.77 s with 262,144 (64 bytes a row: 16 MB at most).
    package var capturedRowsHeldAtMost: Int { 262_144 }

    /// Hands over the captures of the file just committed, each with the count of this run's
    /// batches into its session, and forgets them.
    package func takeCapturedRows() -> [Int64: any CapturedSessionRows] {
        defer { dropCaptures() }
        var out: [Int64: any CapturedSessionRows] = [:]
        for (session, capture) in captured where capture.count > 0 {
            guard let mine = written[session] else { continue }
            capture.changes = mine.changes
            out[session] = capture
        }
        return out
    }

    /// On the ingest's connection, inside its transaction (`BackgroundAnalyzer.finish`).
    package func modelStore() throws -> any AnalysisStore & CapturedRowsReader {
        try PGAnalysisStore(connection: PGReadConnection(pg: pg, snapshot: false), strings: strings)
    }

    package func openSnapshotReader() throws -> any SnapshotReader {
        try snapshotReaderWhenNeeded()!()
    }

    /// The analysis thread's connection is opened when it first has captured rows to build
    /// from: a run whose files were loaded already, or whose sessions all met stored rows,
    /// opens none (a server process: 6.6 ms of its CPU).
    package func snapshotReaderWhenNeeded() -> (@Sendable () throws -> any SnapshotReader)? {
        { [url, stop = pg.stop, known = strings.learned] in try PGModelWorker(url: url, stop: stop, known: known) }
    }
}

/// The analysis thread's connection during an ingest: it builds a session's model from the
/// captured rows and stores it in a transaction of its own (`ModelStoringReader`).
final class PGModelWorker: PGAnalysisStore, ModelStoringReader {
    private let ownStrings: PGStrings

    /// `known`: the texts the ingest learned, which the captured rows hold.
    init(url: String, stop: StopRequest?, known: PGLearnedTexts?) throws {
        let pg = try PGConnection(url: url, stop: stop)
        ownStrings = PGStrings(url: url, stop: stop)
        try super.init(connection: PGReadConnection(pg: pg, snapshot: false), strings: ownStrings, known: known)
    }

    /// A REPEATABLE READ, READ ONLY transaction (not used by `BackgroundAnalyzer` for a
    /// worker that stores its models).
    package func inSnapshot<T>(_ body: () throws -> T) -> T? {
        try? connection.pg.transaction(begin: PGConnection.beginSnapshot, body)
    }

    /// From the blocks' bounds (a writing command runs on schema 7 only): no block unnested.
    package func seqSpan(of session: Int64) throws -> Int64 {
        try connection.pg.query("SELECT max(last_seq) - min(first_seq) + 1 FROM event_blocks WHERE session = $1", [String(session)]).int(0, 0) ?? 0
    }

    package func close() {
        ownStrings.close()
    }
}
