import Foundation
import LCTraceModel
import LCTraceStore
import LCTraceFormat

/// Loads batches into PostgreSQL with `COPY`: a batch's lines go to a temporary table, then
/// those whose (session, seq) is not stored yet into `event_blocks` (the first copy in the
/// file wins), and the lines that did not go in are told apart as duplicates (same content as
/// the stored row) or conflicts (other content), exactly as the SQLite backend counts them.
/// Blocks have no key per event: a session's events are written only under the lock of its
/// `sessions` row (below), which is what keeps each (session, seq) once.
///
/// Several ingesters may write at once, on several machines: file rows are owned through
/// session-level advisory locks, which the server lets go when the owner's connection ends
/// (a killed ingest, whatever its host or pid namespace), so the next ingest resumes its rows;
/// decisions about file rows are taken under a transaction-scoped lock of the file ledger.
/// New texts and sessions are inserted on a second connection, shared by the two and committed
/// at once (`PGAutocommit`), so ingesters never wait for each other's batches for them.
///
/// (Issue 26) A batch first locks the rows of its sessions (`FOR UPDATE`, in id order): every
/// writer of a session's events holds that lock until it commits, so what is stored of those
/// sessions cannot change under the batch. When every line's session holds no rows but the
/// ones this run wrote (`sessions.changes` is the count of this run's own batches) and its seqs
/// come after them, strictly rising, no line can meet a stored row: the batch is copied straight
/// into `event_blocks` (`directRows`), without the temporary table or the comparison.
/// That is the common case, a file loaded for the first time; files that overlap take the path above.
final class PGIngestSink: IngestSink {
    let pg: PGConnection
    let url: String
    let strings: PGStrings
    /// Session ids by sid (bounded).
    private var sessionIDs: [String: Int64] = [:]
    /// Where new sessions and texts (`strings`) are inserted, in autocommit.
    private let inserter: PGAutocommit
    private var inBatch = false
    /// The batch being stored, within its transaction (rows of `lctrace_batch` carry it).
    private var part = 0
    /// File rows this run holds the lock of, with their raw sizes.
    private var loadingHere: [Int64: Int64] = [:]
    private var touched = Set<Int64>()
    /// Session records of this run that disagreed with the kept one.
    private var recordConflicts: [Int64: (count: Int, fields: Set<String>)] = [:]
    /// What this run wrote of each session (committed or in the open transaction): the
    /// batches that added rows (its share of `sessions.changes`) and the highest seq of its
    /// lines. Bounded: a session forgotten takes the general path, which is always right.
    var written: [Int64: (changes: Int64, maxSeq: Int64)] = [:]
    package static let maxWrittenSessions = 100_000
    /// Sessions whose rows the open transaction locked and then copied a batch of straight in
    /// (`directRows`): until it ends no other ingest can change them, so their next batches
    /// are checked against `written` alone, without reading the rows again (a round trip a
    /// batch; at a network's 0.3 ms, a tenth of an ingest's waits).
    private var directInTransaction = Set<Int64>()
    /// Sessions whose rows the open transaction locked (`directRows`' read), and the highest of
    /// their ids: a transaction takes them in rising order only (`lockInOrder`).
    private var lockedInTransaction = Set<Int64>()
    private var highestLocked = Int64.min
    /// Transactions this run ended early to keep its locks in order (for the tests).
    package private(set) var earlyCommits = 0
    /// Batches copied straight into `event_blocks`, and the others (for the tests).
    package private(set) var directBatches = 0
    package private(set) var mergedBatches = 0
    /// Reads of the batch's sessions' rows before a straight copy (`directRows`), for the tests.
    package private(set) var directChecks = 0

    /// A line of a batch as it is stored: its session, and its texts as `strings` ids.
    struct Line {
        var event: RawEvent
        var session: Int64
        var ids: TextIDs
        /// The attrs of an event whose kind the model reads them of (captured rows keep them).
        var modelAttrs: String?
    }

    /// A batch's lines as runs of one session (a file's lines mostly come a session at a
    /// time): what is kept per session is looked up once a run, not once a line.
    struct SessionRuns {
        var runs: [(session: Int64, lines: Range<Int>)] = []
        /// The batch's sessions, each once, in id order.
        var sessions: [Int64]

        init(_ lines: [Line]) {
            var start = 0
            for i in lines.indices where i > 0 && lines[i].session != lines[i - 1].session {
                runs.append((lines[start].session, start..<i))
                start = i
            }
            if !lines.isEmpty { runs.append((lines[start].session, start..<lines.count)) }
            sessions = Set(runs.map(\.session)).sorted()
        }
    }

    /// The `strings` ids of a line's texts; nil: NULL.
    struct TextIDs { var ev, vc, cls, other, detail, thread: Int64? }

    /// Ids by the bytes of their texts and sids: a batch's lines find them without a String
    /// made or hashed (Strings are made only for the texts met for the first time).
    private let textBytes = ByteInterner(limit: PGStrings.maxCached)
    private let sidBytes = ByteInterner(limit: 100_000)

    /// (Issue 26) Keep the rows of sessions this run writes alone, for the analysis while loading
    /// (`takeCapturedRows`, PGLoadingAnalysis.swift); set by `startRun`.
    var capturesRows = false
    /// Most rows held in captures at once; a session past it is left to the analysis after loading.
    var captureLimit = 65_536
    /// The rows of the sessions first met in the file being loaded with no rows stored, each
    /// copied straight in by this run (`directRows`) ever since: all the rows they have.
    var captured: [Int64: PGCapturedRows] = [:]
    var capturedRowCount = 0
    /// Sessions met in the file being loaded: a capture starts at a session's first batch in it only.
    var metInFile = Set<Int64>()

    /// Held from the first file this run loads (`PGIngestersLock`).
    let ingesters: PGIngestersLock

    package init(pg: PGConnection, url: String, ingesters: PGIngestersLock = PGIngestersLock()) throws {
        self.pg = pg
        self.url = url
        self.ingesters = ingesters
        inserter = PGAutocommit(url: url, stop: pg.stop, lockTimeout: Self.sessionInsertWait)
        strings = PGStrings(inserter: inserter, learned: PGLearnedTexts())
    }

    /// The advisory lock that owns a file row while it loads. Advisory locks are
    /// database-wide, file ids are per schema: the first key is the schema's (a hash of its
    /// name), so ingests into two schemas of one database never hold each other's rows.
    private static func fileLock(_ id: Int64) -> String { "(hashtext(current_schema()), \(Int32(truncatingIfNeeded: id)))" }
    /// `fileLock`'s second key computed by the server from a bigint `column`: its low 32 bits
    /// as a signed integer, as `Int32(truncatingIfNeeded:)` takes them.
    static func fileLockKey(_ column: String) -> String {
        "((\(column) & 4294967295) - ((\(column) & 2147483648) << 1))::integer"
    }

    // MARK: The run

    package func startRun(capturesRows: Bool, backgroundWork: Bool) throws {
        self.capturesRows = capturesRows
        // No JIT: a batch's statements are small, and the merge path's plans (below) cost
        // enough to compile them each time (270 ms a statement, for 5 ms of work). The
        // statements of every batch are prepared (`PGConnection.queryPrepared`) and planned
        // once: their plans do not depend on the values.
        // A `statement_timeout` (the role's, the database's, the URL's) counts a COPY whole,
        // also while this ingest waits for its input (a slow pipe): with one set, each batch's
        // COPY is ended at once (its outcome still read at the next statement).
        let timeout = try pg.queryStatements(["SET jit = off; SET plan_cache_mode = force_generic_plan",
                                              "SELECT current_setting('statement_timeout')"])
        pg.keepsCopiesOpen = timeout.text(0, 0) == "0"
    }

    /// The merge path's temporary tables, made by its first batch on this connection: emptied
    /// at each commit (cheaper than emptying them after every batch stored), a transaction's
    /// batches told apart by `part`. Not made up front: an ingest whose files hold only new
    /// sessions never merges, and the tables cost the server 2.5–4 ms a process to make and
    /// drop (a CI worker's one-file ingest, four ingesters' extra processes).
    private var mergeTablesMade = false

    private func makeMergeTables() throws {
        guard !mergeTablesMade else { return }
        try pg.execute("""
            CREATE TEMP TABLE IF NOT EXISTS lctrace_batch (
                part integer, ord integer, line bigint, "offset" bigint, session bigint, seq bigint, t bigint, ev bigint,
                vc bigint, cls bigint, other bigint, flags integer, detail bigint, thread bigint, wall text, attrs text,
                record integer) ON COMMIT DELETE ROWS;
            CREATE TEMP TABLE IF NOT EXISTS lctrace_inserted (part integer, session bigint, seq bigint) ON COMMIT DELETE ROWS
            """)
        mergeTablesMade = true
    }

    package func endRun() {
        strings.close()
        releaseLoadLocks()
    }

    // MARK: Sessions being loaded

    /// (Issue 26) The sessions this run holds the load lock of: from its first batch of a
    /// session to the end of its loading, so that another ingest's analysis after loading
    /// leaves them to this one (`PGAnalysisStore.claim`), which analyzes them when its loading
    /// ends, instead of reading back and building a model that this run's next batch makes
    /// stale (four ingesters on disjoint quarters analyzed 165 sessions for 120). At most
    /// `maxLoadLocks`: they take room in the server's shared lock table; a session past them
    /// is only analyzed twice, never wrongly.
    private var loadLocked = Set<Int64>()
    /// Sessions whose lock was asked for (held elsewhere, or by this run).
    private var loadLockAsked = Set<Int64>()
    package static let maxLoadLocks = 256

    /// The statement that takes the load locks of those of `sessions` not asked for yet; nil
    /// when none is left to ask for. Sent through `pipelined(afterLoadLocks:)`.
    private func loadLockStatement(_ sessions: [Int64]) -> (statement: PGConnection.Piped, sessions: [Int64])? {
        guard loadLocked.count < Self.maxLoadLocks else { return nil }
        let new = Array(sessions.filter { !loadLockAsked.contains($0) }.prefix(Self.maxLoadLocks - loadLocked.count))
        guard !new.isEmpty else { return nil }
        if loadLockAsked.count > 100_000 { loadLockAsked = loadLocked }
        loadLockAsked.formUnion(new)
        return (PGConnection.Piped(sql: "SELECT s FROM unnest($1::bigint[]) AS u(s) WHERE pg_try_advisory_lock(\(PGSchema.loadLockKey("s")))",
                                   parameters: [PGSchema.arrayLiteral(new)]), new)
    }

    /// Sends `statements` in one pipeline after the statement taking `loadLocks`, notes the
    /// locks taken, and returns the statements' results. When it fails the locks may be held
    /// all the same (a statement after them failed): every one asked is then let go with the
    /// others (`releaseLoadLocks`; letting go of a lock not held only warns).
    private func pipelined(afterLoadLocks loadLocks: (statement: PGConnection.Piped, sessions: [Int64]),
                           _ statements: [PGConnection.Piped]) throws -> [PGResult] {
        let results: [PGResult]
        do {
            results = try pg.pipeline([loadLocks.statement] + statements)
        } catch {
            loadLocked.formUnion(loadLocks.sessions)
            throw error
        }
        let taken = results[0]
        for r in 0..<taken.rowCount { if let id = taken.int(r, 0) { loadLocked.insert(id) } }
        return Array(results.dropFirst())
    }

    /// Lets the load locks go: loading has ended, this run's analysis comes next.
    private func releaseLoadLocks() {
        defer { loadLocked.removeAll(); loadLockAsked.removeAll() }
        guard !loadLocked.isEmpty else { return }
        _ = try? pg.query("SELECT pg_advisory_unlock(\(PGSchema.loadLockKey("s"))) FROM unnest($1::bigint[]) AS u(s)",
                          [PGSchema.arrayLiteral(loadLocked)])
    }

    // MARK: Batches

    package func begin() throws {
        // Sent with the batch's first statement (a round trip fewer a file and a batch).
        pg.beginLater()
        inBatch = true
    }

    /// Forgets what holds only while the transaction is open: the sessions it locked (and
    /// copied straight in), their records read with the lock, its parts of the batch table.
    private func forgetTransaction() {
        directInTransaction.removeAll(keepingCapacity: true)
        lockedRecords.removeAll(keepingCapacity: true)
        lockedInTransaction.removeAll(keepingCapacity: true)
        highestLocked = Int64.min
        part = 0
    }

    /// Commits the open transaction first when `sessions` holds one it has not locked yet
    /// below one it has. Each statement locks its sessions' rows in id order, but a
    /// transaction's later batch could lock a lower id than its earlier one did: two or three
    /// ingesters doing so on the same sessions deadlock, and the server fails one of them (seen
    /// once in about twenty runs of the concurrent tests). Locked in rising order only, every
    /// writer takes rows in the one order, and none waits in a cycle. A batch stays whole;
    /// the file's row stays `loading` until its end, so a kill between two such transactions
    /// is resumed as any other.
    private func lockInOrder(_ sessions: [Int64]) throws {
        if sessions.contains(where: { $0 < highestLocked && !lockedInTransaction.contains($0) }) {
            forgetTransaction()
            try pg.commit()
            pg.beginLater()
            earlyCommits += 1
        }
        lockedInTransaction.formUnion(sessions)
        highestLocked = max(highestLocked, sessions.max() ?? Int64.min)
    }

    package func commit() throws {
        forgetTransaction()
        try pg.commit()
        inBatch = false
    }

    package func rollback() {
        if inBatch { try? pg.rollback() }
        inBatch = false
        // Made in the transaction rolled back, perhaps: made again (if missing) when next merging.
        mergeTablesMade = false
        forgetTransaction()
        sessionsOfFile.removeAll()
        dropCaptures()
        // What the rolled-back batches wrote is gone: forgotten, those sessions take the
        // general path.
        written.removeAll()
        // Session ids and texts were committed at once on the inserting connection: still valid.
    }

    /// The ids of `sids`, creating the sessions that are new.
    func sessionIDs(_ sids: Set<String>) throws -> [String: Int64] {
        var out: [String: Int64] = [:]
        var missing: [String] = []
        for sid in sids { if let id = sessionIDs[sid] { out[sid] = id } else { missing.append(sid) } }
        guard !missing.isEmpty else { return out }
        missing.sort()
        let connection = try inserter.open()
        if sessionIDs.count > 100_000 { sessionIDs.removeAll(keepingCapacity: true) }
        // One statement reads the stored sids and inserts the others, in one round trip. A sid
        // its snapshot holds is never inserted: an insert meeting a stored sid waits for any
        // open transaction that updated its row (another ingest's batch), and that ingest may be
        // waiting, through its own inserter, for this one's batch, a wait the server cannot see
        // (it hung the concurrent-kill test). A sid stored since the snapshot still makes the
        // insert wait: it gives up after a moment (lock_timeout), and the statement runs again
        // with a later snapshot. (A lock held longer, DDL on the table, is waited for so, a
        // timeout at a time, as long as it lasts: a stop request ends the wait.)
        // The connection is the new texts' too (`PGAutocommit`): their insert, sent ahead by
        // `resolve`, runs first, under the same lock_timeout. It waits only for other inserts
        // of texts, which no transaction makes (`PGStrings`), never for a batch; should it give
        // up all the same, `PGStrings.collect` runs it again. Its outcome is read here and
        // kept for `collect`, so what fails below is this statement.
        try? connection.settle()
        var asked = missing
        while true {
            let rows = try inserter.retryingLockWaits { connection in
                try connection.queryPrepared("""
                    WITH made AS (
                        INSERT INTO sessions(sid) SELECT s FROM unnest($1::text[]) AS u(s)
                        WHERE NOT EXISTS (SELECT 1 FROM sessions x WHERE x.sid = u.s) ORDER BY s
                        ON CONFLICT (sid) DO NOTHING RETURNING id, sid)
                    SELECT id, sid FROM made UNION ALL SELECT id, sid FROM sessions WHERE sid = ANY($1::text[])
                    """, [PGSchema.arrayLiteral(asked)])
            }
            for r in 0..<rows.rowCount {
                guard let id = rows.int(r, 0), let sid = rows.text(r, 1) else { continue }
                sessionIDs[sid] = id
                out[sid] = id
            }
            // Left: a sid another ingest stored after the snapshot (the insert skipped it).
            asked = asked.filter { out[$0] == nil }
            if asked.isEmpty { break }
        }
        return out
    }

    /// Requests sent on the connection of new sessions and texts (for the tests).
    var sessionInserterRoundTrips: Int { inserter.roundTrips }

    /// How long a new session's insert waits for a row another ingest is updating (and any
    /// statement on its connection for a lock: `PGAutocommit`).
    static let sessionInsertWait = "500ms"

    package func store(_ batch: EventBatch, file: Int64) throws -> BatchCounts {
        var counts = BatchCounts()
        var rejects: [(kind: RejectKind, line: Int, offset: Int64, reason: String, sample: [UInt8]?)] = []
        var refused: [(line: Int, offset: Int64, reason: String, sample: [UInt8])] = []
        try batch.arena.withUnsafeBytes { arena in
            let lines = try resolve(batch, arena, refused: &refused)
            counts.events = lines.count
            guard !lines.isEmpty else { return }
            let runs = SessionRuns(lines)
            sessionsOfFile.formUnion(runs.sessions)
            try lockInOrder(runs.sessions)
            if try directRows(lines, runs, lockingFirst: loadLockStatement(runs.sessions)) {
                // The sessions' rows are locked (`directRows`): their count of batches goes up
                // in the statement that starts the copy, and the copy is not waited for: it is
                // left open, and the file's next batches go into it while nothing else needs
                // the connection (their sessions' counts then go up in the next round trip:
                // their rows are this transaction's since its first batch of them). The server
                // stores the rows while this thread decodes the next batch's texts (one
                // ingester: 0.7 s of 1.6 were spent waiting on the server, most of it for the
                // copies). A copy that fails (a block stored behind lctrace's back since
                // `directRows` read the highest seq under the lock) fails the file's
                // transaction where it ends, with the server's reason.
                let batchSessions = runs.sessions
                try pg.copyInKeepingOpen(PGEventRow.copy, binary: true, with: [
                    .init(sql: "UPDATE sessions SET dirty = 1, changes = changes + 1 WHERE id = ANY($1::bigint[])",
                          parameters: [PGSchema.arrayLiteral(batchSessions)])]) { w in
                    try Self.addBlocks(w, lines, runs, arena)
                }
                directBatches += 1
                directInTransaction.formUnion(batchSessions)
                if capturesRows { capture(lines) }
                counts.new = lines.count
                touched.formUnion(batchSessions)
                noteWritten(lines, runs, added: batchSessions)
                let keys = Set(lines.filter { $0.event.record >= 0 }.map { [$0.session, $0.event.seq] })
                try mergeRecords(batch, lines, inserted: keys)
            } else {
                mergedBatches += 1
                if capturesRows { dropCaptures(of: runs.sessions) }
                part += 1
                let part = String(self.part)
                try makeMergeTables()
                try pg.copyIn("COPY lctrace_batch FROM STDIN") { w in
                    for (ord, l) in lines.enumerated() {
                        let e = l.event
                        let t = l.ids
                        w.add(Int64(self.part)); w.add(Int64(ord)); w.add(Int64(e.line)); w.add(e.offset); w.add(l.session); w.add(e.seq); w.add(e.t)
                        w.add(t.ev); w.add(t.vc); w.add(t.cls); w.add(t.other); w.add(e.flags); w.add(t.detail); w.add(t.thread)
                        w.add(bytes: Self.bytes(e.wall, arena)); w.add(bytes: Self.bytes(e.attrs, arena)); w.add(Int64(e.record))
                        try w.endRow()
                    }
                }
                // The first copy of each (session, seq) in the batch goes in, unless one is stored:
                // rows go in in file order, and a later copy in the same statement meets the first.
                // The rows of the batch's sessions only: `$2` reaches event_blocks' key, where a
                // join on session alone would unnest every block stored. They are unnested once,
                // in a CTE, and joined to the batch's lines by hash: left to itself, the planner
                // (which cannot know how many events a block holds) joined the lines to the blocks
                // by session and unnested a session's blocks once a line (23 s instead of 0.5 for
                // two files loaded again). Hash joins, until the batch commits.
                let sessions = PGSchema.arrayLiteral(runs.sessions)
                // Custom plans, as the connection's prepared statements do not get (`startRun`).
                try pg.execute("SET LOCAL enable_nestloop = off; SET LOCAL plan_cache_mode = auto")
                counts.new = try pg.query("""
                    WITH stored AS MATERIALIZED (
                        SELECT k.session, u.seq FROM event_blocks k CROSS JOIN LATERAL unnest(k.seq) AS u(seq)
                        WHERE k.session = ANY($2::integer[])),
                    fresh AS MATERIALIZED (
                        SELECT b.* FROM (SELECT *, row_number() OVER (PARTITION BY session, seq ORDER BY ord) AS r
                                         FROM lctrace_batch WHERE part = $1) b
                        WHERE b.r = 1 AND NOT EXISTS (SELECT 1 FROM stored s WHERE s.session = b.session AND s.seq = b.seq)),
                    ins AS (
                        \(PGEventRow.insertBlocks(from: "(SELECT \(PGEventRow.packedFromPlain) FROM fresh b) AS p(t, seq, session, vc, other, ev, flags, rest)")))
                    INSERT INTO lctrace_inserted SELECT $1, session, seq FROM fresh
                    """, [part, sessions]).changedRows
                // Every other line is a duplicate of the stored row, or a conflict with it (none
                // when every line went in: the common case of a file loaded for the first time).
                // (1.2) Rows that differ only in `attrs` are compared as JSON values here, after
                // the query: another writer's spacing or key order is the same event.
                // Compared packed, as stored (the packing is one to one): decoding every stored
                // row of the sessions through `event_rows` cost 14 ms a batch, most of a merge.
                let differing = counts.new == lines.count ? nil : try pg.query("""
                    WITH batch AS MATERIALIZED (
                        SELECT b.ord, b.line, b."offset", b.attrs AS plain_attrs, p.*
                        FROM (SELECT *, row_number() OVER (PARTITION BY session, seq ORDER BY ord) AS r FROM lctrace_batch WHERE part = $1) b
                        CROSS JOIN LATERAL (SELECT \(PGEventRow.packedFromPlain)) AS p(t, seq, session, vc, other, ev, flags, rest)
                        WHERE NOT (b.r = 1 AND EXISTS (SELECT 1 FROM lctrace_inserted i WHERE i.part = $1 AND i.session = b.session AND i.seq = b.seq))),
                    stored AS MATERIALIZED (
                        SELECT k.session, u.* FROM event_blocks k
                        CROSS JOIN LATERAL unnest(k.t, k.seq, k.vc, k.other, k.ev, k.flags, k.rest) AS u(t, seq, vc, other, ev, flags, rest)
                        WHERE k.session = ANY($2::integer[])),
                    compared AS (
                        SELECT b.ord, b.line, b."offset", b.seq,
                               (s.t IS DISTINCT FROM b.t OR s.vc IS DISTINCT FROM b.vc OR s.other IS DISTINCT FROM b.other
                                OR s.ev IS DISTINCT FROM b.ev OR s.flags IS DISTINCT FROM b.flags
                                OR nullif(s.rest - 'attrs', '{}') IS DISTINCT FROM nullif(b.rest - 'attrs', '{}'))::int AS columns_differ,
                               s.rest ->> 'attrs' AS stored_attrs, b.plain_attrs
                        FROM batch b JOIN stored s ON s.session = b.session AND s.seq = b.seq)
                    SELECT line, "offset", seq, columns_differ, stored_attrs, plain_attrs FROM compared
                    WHERE columns_differ = 1 OR stored_attrs IS DISTINCT FROM plain_attrs
                    ORDER BY ord
                    """, [part, sessions])
                let conflictRows = (0..<(differing?.rowCount ?? 0)).filter { r in
                    differing!.int(r, 3) == 1 || !JSONCanonical.equal(differing!.text(r, 4), differing!.text(r, 5))
                }
                counts.conflicts = conflictRows.count
                counts.duplicates = counts.events - counts.new - counts.conflicts
                if let differing, !conflictRows.isEmpty {
                    let sidOfLine = Dictionary(lines.map { ($0.event.line, Self.bytes($0.event.sid, arena).map { String(decoding: $0, as: UTF8.self) }) },
                                               uniquingKeysWith: { a, _ in a })
                    for r in conflictRows {
                        let line = Int(differing.int(r, 0) ?? 0)
                        rejects.append((.conflict, line, differing.int(r, 1) ?? 0,
                                        "conflicting duplicate: session \((sidOfLine[line] ?? nil) ?? "?") seq \(differing.int(r, 2) ?? 0) is stored with other content (first copy kept)", nil))
                    }
                }
                if counts.new > 0 {
                    // Rows locked in id order, so two ingesters touching the same sessions never deadlock.
                    let marked = try pg.query("""
                        UPDATE sessions SET dirty = 1, changes = changes + 1 WHERE id IN (
                            SELECT id FROM sessions WHERE id IN (SELECT DISTINCT session FROM lctrace_inserted WHERE part = $1)
                            ORDER BY id FOR UPDATE)
                        RETURNING id
                        """, [part])
                    var added: [Int64] = []
                    for r in 0..<marked.rowCount { if let id = marked.int(r, 0) { touched.insert(id); added.append(id) } }
                    noteWritten(lines, runs, added: added)
                    try mergeRecords(batch, lines, part: part)
                } else {
                    noteWritten(lines, runs, added: [])
                }
            }
        }
        for r in refused { rejects.append((.line, r.line, r.offset, r.reason, r.sample)); counts.rejected.append((r.line, r.reason)) }
        batch.arena.withUnsafeBytes { arena in
            for r in batch.rejects {
                let sample = Array(UnsafeRawBufferPointer(rebasing: arena[Int(r.sample.start)..<Int(r.sample.start + r.sample.count)]))
                rejects.append((.line, r.line, r.offset, r.reason, sample))
                counts.rejected.append((r.line, r.reason))
            }
        }
        counts.rejects = refused.count + batch.rejects.count
        if !rejects.isEmpty {
            try pg.copyIn(#"COPY rejects (file, kind, line, "offset", reason, text, raw) FROM STDIN"#) { w in
                for r in rejects {
                    let sample = r.sample.map(Self.sample)
                    w.add(file); w.add(r.kind.rawValue); w.add(Int64(r.line)); w.add(r.offset); w.add(r.reason)
                    w.add(sample?.text); w.add(sample?.raw)
                    try w.endRow()
                }
            }
        }
        return counts
    }

    /// The batch's lines as blocks of `PGEventRow.copy`: each session's lines in batch order
    /// (their seqs rise: `directRows`), cut every `PGEventRow.blockSize`; texts in `arena`.
    static func addBlocks(_ w: PGCopyWriter, _ lines: [Line], _ runs: SessionRuns, _ arena: UnsafeRawBufferPointer) throws {
        // Each session's events in a group of their own, found once a run (as `SessionRuns` does).
        var groups: [(session: Int64, events: [PGEventRow.Packed])] = []
        var group: [Int64: Int] = [:]
        for run in runs.runs {
            let g = group[run.session] ?? {
                groups.append((run.session, []))
                group[run.session] = groups.count - 1
                return groups.count - 1
            }()
            for i in run.lines {
                let e = lines[i].event, t = lines[i].ids
                groups[g].events.append(
                    PGEventRow.packed(seq: e.seq, t: e.t, ev: t.ev, vc: t.vc, cls: t.cls, other: t.other, flags: e.flags,
                                      detail: t.detail, thread: t.thread, wall: bytes(e.wall, arena), attrs: bytes(e.attrs, arena)))
            }
        }
        for (session, events) in groups {
            for start in stride(from: 0, to: events.count, by: PGEventRow.blockSize) {
                try PGEventRow.addBlock(w, session: session, events[start..<min(start + PGEventRow.blockSize, events.count)])
            }
        }
    }

    /// The bytes of `span` in `arena`; nil for no value.
    @inline(__always)
    static func bytes(_ span: Span, _ arena: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        span.isNone ? nil : UnsafeRawBufferPointer(rebasing: arena[Int(span.start)..<Int(span.start + span.count)])
    }

    /// The batch's lines that can be stored, with their sessions and texts as ids, found by
    /// their bytes; the sessions and texts met for the first time are inserted (on a connection
    /// of their own, in autocommit). A line whose text holds NUL cannot be stored (PostgreSQL's text has no
    /// NUL): it is refused, with the reason.
    private func resolve(_ batch: EventBatch, _ arena: UnsafeRawBufferPointer,
                         refused: inout [(line: Int, offset: Int64, reason: String, sample: [UInt8])]) throws -> [Line] {
        func hasNUL(_ span: Span) -> Bool {
            guard !span.isNone, span.count > 0 else { return false }
            return memchr(arena.baseAddress! + Int(span.start), 0, Int(span.count)) != nil
        }
        var newSids = Set<String>(), newTexts = Set<String>()
        var complete = true
        func id(_ span: Span, _ interner: ByteInterner, _ new: inout Set<String>) -> Int64? {
            guard let bytes = Self.bytes(span, arena) else { return nil }
            if let id = interner.lookup(bytes, hash: ByteInterner.hash(bytes)) { return id }
            new.insert(String(decoding: bytes, as: UTF8.self))
            complete = false
            return nil
        }
        var lines: [Line] = []
        lines.reserveCapacity(batch.events.count)
        var unresolved: [Int] = []
        for e in batch.events {
            if let key = Self.keyHoldingNUL(e, hasNUL) {
                refused.append((e.line, e.offset, "key '\(key)': holds a NUL character (\\u0000), which PostgreSQL's text cannot store",
                                Array((Self.bytes(e.sid, arena) ?? UnsafeRawBufferPointer(start: nil, count: 0)).prefix(200))))
                continue
            }
            complete = true
            let session = id(e.sid, sidBytes, &newSids) ?? 0
            let ids = TextIDs(ev: id(e.name, textBytes, &newTexts), vc: id(e.vc, textBytes, &newTexts), cls: id(e.cls, textBytes, &newTexts),
                              other: id(e.other, textBytes, &newTexts), detail: id(e.detail, textBytes, &newTexts),
                              thread: id(e.thread, textBytes, &newTexts))
            if !complete { unresolved.append(lines.count) }
            lines.append(Line(event: e, session: session, ids: ids,
                              modelAttrs: e.kind.modelReadsAttrs ? Self.bytes(e.attrs, arena).map { String(decoding: $0, as: UTF8.self) } : nil))
        }
        guard !unresolved.isEmpty else { return lines }
        // The new texts' insert is sent ahead, and the new sessions' statement follows it on the
        // same connection (`PGAutocommit`); where the previous batch's COPY was ended rather than
        // left open, the server works out its outcome meanwhile, on the load's connection.
        let pendingTexts = try strings.send(newTexts)
        let sessions: [String: Int64]
        do {
            sessions = try sessionIDs(newSids)
            try pg.settle()
        } catch {
            // The insert's outcome read now: left, a failure of it would be thrown again by
            // whatever next asks for texts.
            _ = try? strings.collect(pendingTexts)
            throw error
        }
        let texts = try strings.collect(pendingTexts)
        for (text, id) in sessions { remember(text, id, in: sidBytes) }
        for (text, id) in texts { remember(text, id, in: textBytes) }
        func known(_ span: Span, _ id: Int64?, _ ids: [String: Int64]) -> Int64? {
            guard id == nil, let bytes = Self.bytes(span, arena) else { return id }
            return ids[String(decoding: bytes, as: UTF8.self)]
        }
        for i in unresolved {
            let e = lines[i].event
            if lines[i].session == 0 { lines[i].session = known(e.sid, nil, sessions) ?? 0 }
            var t = lines[i].ids
            t.ev = known(e.name, t.ev, texts); t.vc = known(e.vc, t.vc, texts); t.cls = known(e.cls, t.cls, texts)
            t.other = known(e.other, t.other, texts); t.detail = known(e.detail, t.detail, texts); t.thread = known(e.thread, t.thread, texts)
            lines[i].ids = t
        }
        return lines
    }

    private func remember(_ text: String, _ id: Int64, in interner: ByteInterner) {
        var text = text
        text.withUTF8 { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            let hash = ByteInterner.hash(raw)
            if interner.lookup(raw, hash: hash) == nil { interner.insert(raw, hash: hash, id: id) }
        }
    }

    /// The key of the first of a line's texts that holds NUL, as the line spells it.
    private static func keyHoldingNUL(_ e: RawEvent, _ hasNUL: (Span) -> Bool) -> String? {
        if hasNUL(e.sid) { return "sid" }
        if hasNUL(e.name) { return "ev" }
        if hasNUL(e.vc) { return "vc" }
        if hasNUL(e.cls) { return "cls" }
        if hasNUL(e.other) { return e.kind.otherKey ?? "other" }
        if hasNUL(e.detail) { return e.kind.detailKey ?? "detail" }
        if hasNUL(e.thread) { return "thread" }
        if hasNUL(e.wall) { return "wall" }
        return nil
    }

    /// A rejected line's first 200 bytes: as text when they are UTF-8 without NUL (cut
    /// through a character at 200 bytes: the whole ones), else as bytea in hex input form.
    package static func sample(_ bytes: [UInt8]) -> (text: String?, raw: String?) {
        let cut = Array(bytes.prefix(RejectSample.maxBytes))
        // PostgreSQL's text cannot hold NUL: such a sample is kept as bytes.
        if !cut.contains(0), let text = RejectSample.text(cut) { return (text, nil) }
        return (nil, "\\x" + cut.map { String(format: "%02x", $0) }.joined())
    }

    /// Locks the rows of the batch's sessions (in id order, until the transaction ends) and
    /// tells whether the lines can go straight into `event_blocks`: each session holds no rows
    /// but those this run wrote, and its lines' seqs rise strictly from above the highest seq
    /// stored of it (no duplicate within the batch, none with a stored row). The highest seq
    /// stored, read with the lock, is the net a per-event key used to be: rows written behind
    /// lctrace's back, without counting their batch in `changes`, send the batch to the merge.
    /// The net is cast once a transaction: the later batches of a session the transaction
    /// already copied straight in are checked against this run's rows alone (`written`), so
    /// rows another program commits between two of them without locking the session's row
    /// are not seen (lctrace's own writers always lock it).
    /// `loadLocks`: the statement taking the batch's load locks, sent first, in the same round trip.
    private func directRows(_ lines: [Line], _ runs: SessionRuns,
                            lockingFirst loadLocks: (statement: PGConnection.Piped, sessions: [Int64])?) throws -> Bool {
        let ids = runs.sessions
        // The highest seq stored of each session: its lines must rise from above it.
        var last: [Int64: Int64] = [:]
        if ids.allSatisfy({ directInTransaction.contains($0) && written[$0] != nil }) {
            if let loadLocks { _ = try pipelined(afterLoadLocks: loadLocks, []) }
            // Locked by this transaction since a batch of each went straight in: another
            // ingest commits nothing of them before it ends (it must update their rows first),
            // so what is stored above this run's rows is none.
            for id in ids { last[id] = written[id]!.maxSeq }
        } else {
            directChecks += 1
            let read = PGConnection.Piped(sql: """
                SELECT s.id, s.changes, (SELECT max(k.last_seq) FROM event_blocks k WHERE k.session = s.id),
                       \(Self.recordColumns.map { "s." + $0 }.joined(separator: ", "))
                FROM sessions s WHERE s.id = ANY($1::bigint[]) ORDER BY s.id FOR UPDATE
                """, parameters: [PGSchema.arrayLiteral(ids)])
            let locked = try loadLocks.map { try pipelined(afterLoadLocks: $0, [read])[0] } ?? pg.queryPrepared(read.sql, read.parameters)
            for r in 0..<locked.rowCount {
                if let id = locked.int(r, 0) { lockedRecords.updateValue(Self.storedRecord(locked, row: r, from: 3), forKey: id) }
            }
            guard locked.rowCount == ids.count else { return false }
            for r in 0..<locked.rowCount {
                guard let id = locked.int(r, 0), let changes = locked.int(r, 1) else { return false }
                let mine = written[id]
                guard changes == (mine?.changes ?? 0) else { return false }
                last[id] = max(mine?.maxSeq ?? Int64.min, locked.int(r, 2) ?? Int64.min)
            }
        }
        // Rising across the whole batch: a session's later run goes on from its earlier one.
        for run in runs.runs {
            guard var before = last[run.session] else { return false }
            for i in run.lines {
                guard lines[i].event.seq > before else { return false }
                before = lines[i].event.seq
            }
            last[run.session] = before
        }
        return true
    }

    /// Notes what a batch wrote: its highest seq of each session, and a change of each session
    /// in `added` (the sessions whose `changes` it raised).
    private func noteWritten(_ lines: [Line], _ runs: SessionRuns, added: [Int64]) {
        if written.count > Self.maxWrittenSessions {
            written.removeAll(keepingCapacity: true)
            directInTransaction.removeAll()
        }
        for run in runs.runs {
            var highest = Int64.min
            for i in run.lines { highest = max(highest, lines[i].event.seq) }
            written[run.session, default: (0, Int64.min)].maxSeq = max(written[run.session]?.maxSeq ?? Int64.min, highest)
        }
        for session in added { written[session, default: (0, Int64.min)].changes += 1 }
    }

    /// Merges the session records among the lines that went in (`inserted`: their (session,
    /// seq) keys; nil: read from `lctrace_inserted`): the earliest record (lowest seq) of a
    /// session is kept; a copy that disagrees is counted in `record_conflicts`.
    private func mergeRecords(_ batch: EventBatch, _ lines: [Line], part: String? = nil,
                              inserted: Set<[Int64]>? = nil) throws {
        guard lines.contains(where: { $0.event.record >= 0 }) else { return }
        var keys = inserted ?? []
        if inserted == nil, let part {
            let rows = try pg.query("""
                SELECT DISTINCT i.session, i.seq FROM lctrace_inserted i
                JOIN lctrace_batch b ON b.part = i.part AND b.session = i.session AND b.seq = i.seq
                WHERE i.part = $1 AND b.record >= 0
                """, [part])
            for r in 0..<rows.rowCount { keys.insert([rows.int(r, 0) ?? 0, rows.int(r, 1) ?? 0]) }
        }
        for l in lines where l.event.record >= 0 && keys.remove([l.session, l.event.seq]) != nil {
            try mergeRecord(batch.sessionRecords[Int(l.event.record)], seq: l.event.seq, session: l.session)
        }
    }

    /// The columns of a session's kept record, `record_seq` first.
    private static let recordColumns = ["record_seq", "app", "app_version", "build", "os", "os_version", "sdk", "device", "recorder", "wall"]

    /// The kept record of a session in `recordColumns` from column `first` of `row`: nil when none is kept.
    private static func storedRecord(_ q: PGResult, row r: Int, from first: Int) -> (seq: Int64, record: SessionRecord)? {
        guard let seq = q.int(r, first) else { return nil }
        return (seq, SessionRecord(app: q.text(r, first + 1), appVersion: q.text(r, first + 2), build: q.text(r, first + 3),
                                   os: q.text(r, first + 4), osVersion: q.text(r, first + 5), sdk: q.text(r, first + 6),
                                   device: q.text(r, first + 7), recorder: q.text(r, first + 8), wall: q.text(r, first + 9)))
    }

    /// The kept records of the sessions `directRows` locked, read with the lock: valid until
    /// the transaction ends, and used once (a record merged changes it).
    private var lockedRecords: [Int64: (seq: Int64, record: SessionRecord)?] = [:]

    private func mergeRecord(_ record: SessionRecord, seq: Int64, session: Int64) throws {
        let stored: (seq: Int64, record: SessionRecord)?
        if let locked = lockedRecords.removeValue(forKey: session) {
            stored = locked
        } else {
            let q = try pg.query("SELECT \(Self.recordColumns.joined(separator: ", ")) FROM sessions WHERE id = $1", [String(session)])
            stored = q.rowCount > 0 ? Self.storedRecord(q, row: 0, from: 0) : nil
        }
        guard let (existingSeq, existing) = stored else {
            try writeRecord(record, seq: seq, session: session, addConflict: false)
            return
        }
        let differences = existing.differences(from: record)
        if differences.isEmpty {
            if seq < existingSeq { pg.sendWithNext([PGConnection.Piped(sql: "UPDATE sessions SET record_seq = $1 WHERE id = $2", parameters: [String(seq), String(session)])]) }
            return
        }
        if seq < existingSeq {
            try writeRecord(record, seq: seq, session: session, addConflict: true)
        } else {
            pg.sendWithNext([PGConnection.Piped(sql: "UPDATE sessions SET record_conflicts = record_conflicts + 1 WHERE id = $1", parameters: [String(session)])])
        }
        recordConflicts[session, default: (0, [])].count += 1
        recordConflicts[session, default: (0, [])].fields.formUnion(differences)
    }

    /// Sent with the next statement: nothing reads it before (`PGConnection.sendWithNext`).
    private func writeRecord(_ r: SessionRecord, seq: Int64, session: Int64, addConflict: Bool) throws {
        pg.sendWithNext([PGConnection.Piped(sql: """
            UPDATE sessions SET app = $1, app_version = $2, build = $3, os = $4, os_version = $5, sdk = $6, device = $7,
              recorder = $8, wall = $9, record_seq = $10, record_conflicts = record_conflicts + $11 WHERE id = $12
            """, parameters: [r.app, r.appVersion, r.build, r.os, r.osVersion, r.sdk, r.device, r.recorder, r.wall, String(seq),
                              addConflict ? "1" : "0", String(session)])])
    }

    package func reject(file: Int64, kind: RejectKind, line: Int?, offset: Int64?, reason: String, sample: UnsafeRawBufferPointer?) throws {
        let cut = sample.map { Self.sample(Array($0)) }
        try pg.query(#"INSERT INTO rejects (file, kind, line, "offset", reason, text, raw) VALUES ($1, $2, $3, $4, $5, $6, $7::bytea)"#,
                     [String(file), kind.rawValue, line.map(String.init), offset.map(String.init), reason, cut?.text, cut?.raw])
    }

    // MARK: Files

    package func isLoading(size: Int64) -> Bool { loadingHere.values.contains(size) }

    package func hasFile(ofSize size: Int64) throws -> Bool {
        (try pg.query("SELECT count(*) FROM files WHERE size = $1", [String(size)]).int(0, 0) ?? 0) > 0
    }

    /// Takes the lock that owns file row `id`; false when another ingest holds it.
    private func take(_ id: Int64) throws -> Bool {
        try pg.query("SELECT pg_try_advisory_lock\(Self.fileLock(id))").text(0, 0) == "t"
    }

    package func planFile(path: String, size: Int64?, hash: String?, deferring: Bool) throws -> FilePlan {
        // The ledger's lock, the rows that may be reused and the earlier reads of the path, in
        // one round trip (the second read is wasted only when the first finds the content
        // loaded).
        let byHash = hash.map { PGConnection.Piped(sql: "SELECT id, path, status FROM files WHERE sha256 = $1", parameters: [$0]) }
        let byPath = size.flatMap { size in
            path == "-" ? nil : PGConnection.Piped(sql: "SELECT id FROM files WHERE status = 'loading' AND sha256 IS NULL AND path = $1 AND size = $2 ORDER BY id",
                                                   parameters: [path, String(size)])
        }
        let earlier = size.map { Self.earlierReadsStatement(path: path, size: $0) }
        var found = try pg.pipeline([PGConnection.Piped(sql: "SELECT " + PGSchema.ledgerLock)] + [byHash, byPath, earlier].compactMap { $0 }).dropFirst()
        let hashRows = byHash == nil ? nil : found.popFirst()
        let pathRows = byPath == nil ? nil : found.popFirst()
        earlierReadsPlanned = nil
        if let size, let rows = found.popFirst() { earlierReadsPlanned = (path, size, rows) }
        var reusable: Int64?
        var hashTaken = false
        if let q = hashRows {
            if q.rowCount > 0 {
                if q.text(0, 2) != "loading" {
                    try dropAbandonedLoads(path: path, size: size)
                    return .alreadyLoaded(path: q.text(0, 1) ?? "?")
                }
                hashTaken = true
                let id = q.int(0, 0) ?? 0
                if loadingHere[id] == nil, try take(id) { reusable = id }
            }
        }
        var busy = hashTaken && reusable == nil
        if reusable == nil, let q = pathRows {
            for r in 0..<q.rowCount {
                let id = q.int(r, 0) ?? 0
                guard loadingHere[id] == nil else { continue }
                if try take(id) { reusable = id; break }
                busy = true
            }
        }
        // (Issue 26) Ingesters given the same files meet on every one of them in step: each
        // one they would all load, the others leave for later, when it is loaded and skipped.
        if deferring, busy, reusable == nil { return .loadingElsewhere }
        if let id = reusable {
            try pg.query("DELETE FROM rejects WHERE file = $1", [String(id)])
            try pg.query("""
                UPDATE files SET path = $1, lines = 0, events = 0, rejects = 0, conflicts = 0, ingested_at = $2,
                  loader_pid = pg_backend_pid() WHERE id = $3
                """, [path, utcNow(), String(id)])
            return loading(id, size: size)
        }
        // Another live ingest is loading the same content: load it too, into a row of our own
        // without the hash; whichever finishes second drops its row (`finishFile`).
        // The row and its lock in one statement.
        let row = try pg.query("""
            WITH made AS (
                INSERT INTO files(path, size, sha256, status, ingested_at, loader_pid) VALUES ($1, $2, $3, 'loading', $4, pg_backend_pid())
                RETURNING id)
            SELECT id, pg_try_advisory_lock(hashtext(current_schema()), \(Self.fileLockKey("id"))) FROM made
            """, [path, String(size ?? 0), hashTaken ? nil : hash, utcNow()])
        let id = row.int(0, 0) ?? 0
        // The row was made just now: nobody else should hold its lock (only a session taking
        // this schema's key by hand, or a schema whose name hashes alike, can).
        guard row.text(0, 1) == "t" else {
            throw PGSchema.Refused(description: "another session holds the advisory lock of new file row \(id) (schema \(try PGSchema.currentSchema(pg))): run the ingest again once it ends")
        }
        return loading(id, size: size)
    }

    /// File row `id`, whose lock this run holds, is loaded here; with this run's first file,
    /// `ingesters` is taken too, sent with the next statement (the file row's commit, under the
    /// ledger's lock).
    private func loading(_ id: Int64, size: Int64?) -> FilePlan {
        loadingHere[id] = size ?? -1
        if let take = ingesters.take() { pg.sendWithNext([take]) }
        return .load(fileID: id)
    }

    /// Rows of killed loads of this file (same path and size, no hash yet, nobody holding
    /// them) once its content is loaded whole under another row: their lines are all in it,
    /// so they and their rejects go (left, they would stay `loading` for good).
    private func dropAbandonedLoads(path: String, size: Int64?) throws {
        guard let size, path != "-" else { return }
        let q = try pg.query("SELECT id FROM files WHERE status = 'loading' AND sha256 IS NULL AND path = $1 AND size = $2",
                             [path, String(size)])
        for r in 0..<q.rowCount {
            let id = q.int(r, 0) ?? 0
            guard loadingHere[id] == nil, try take(id) else { continue }
            try pg.query("DELETE FROM rejects WHERE file = $1", [String(id)])
            try pg.query("DELETE FROM file_sessions WHERE file = $1", [String(id)])
            try pg.query("DELETE FROM files WHERE id = $1", [String(id)])
            try pg.execute("SELECT pg_advisory_unlock\(Self.fileLock(id))")
        }
    }

    package func earlierReads(of path: String, smallerThan size: Int64) throws -> [EarlierRead] {
        defer { earlierReadsPlanned = nil }
        let q: PGResult
        if let planned = earlierReadsPlanned, planned.path == path, planned.size == size {
            q = planned.rows
        } else {
            let read = Self.earlierReadsStatement(path: path, size: size)
            q = try pg.query(read.sql, read.parameters)
        }
        return (0..<q.rowCount).map { EarlierRead(id: q.int($0, 0) ?? 0, size: q.int($0, 1) ?? 0, hash: q.text($0, 2) ?? "") }
    }

    private static func earlierReadsStatement(path: String, size: Int64) -> PGConnection.Piped {
        PGConnection.Piped(sql: """
            SELECT id, size, sha256 FROM files
            WHERE path = $1 AND size < $2 AND sha256 IS NOT NULL AND status IN ('complete', 'damaged') ORDER BY id
            """, parameters: [path, String(size)])
    }

    /// `earlierReads` of the file `planFile` was asked about, read in its round trip (the
    /// ingest asks for them next, under the same lock of the ledger).
    private var earlierReadsPlanned: (path: String, size: Int64, rows: PGResult)?

    package func replaceEarlierReads(_ ids: [Int64]) throws {
        for id in ids {
            try pg.query("DELETE FROM rejects WHERE file = $1", [String(id)])
            try pg.query("DELETE FROM findings WHERE file = $1", [String(id)])
            try pg.query("DELETE FROM file_sessions WHERE file = $1", [String(id)])
            try pg.query("DELETE FROM files WHERE id = $1", [String(id)])
        }
    }

    /// (1.2) The sessions the file being loaded holds events of (`file_sessions`).
    private var sessionsOfFile = Set<Int64>()

    package func finishFile(id: Int64, hash: String, stats: FileStats) throws -> String? {
        defer { sessionsOfFile.removeAll() }
        // Under the ledger's lock until this batch commits: nobody plans the row before then.
        let other = try pg.pipeline([
            PGConnection.Piped(sql: "SELECT " + PGSchema.ledgerLock),
            PGConnection.Piped(sql: "SELECT pg_advisory_unlock\(Self.fileLock(id))"),
            PGConnection.Piped(sql: "SELECT path FROM files WHERE sha256 = $1 AND id <> $2", parameters: [hash, String(id)])]).last!
        // Let go of (not before: a wait for the ledger that fails leaves it to `releaseLoads`).
        loadingHere[id] = nil
        if other.rowCount > 0 {
            try pg.query("DELETE FROM rejects WHERE file = $1", [String(id)])
            try pg.query("DELETE FROM file_sessions WHERE file = $1", [String(id)])
            try pg.query("DELETE FROM files WHERE id = $1", [String(id)])
            return other.text(0, 0) ?? "?"
        }
        var writes = [PGConnection.Piped(sql: """
            UPDATE files SET size = $1, sha256 = $2, gzip_members = $3, lines = $4, events = $5, rejects = $6, conflicts = $7,
              status = $8, damage = $9, ingested_at = $10, loader_pid = NULL WHERE id = $11
            """, parameters: [String(stats.size), hash, String(stats.members), String(stats.lines), String(stats.events), String(stats.rejects),
                              String(stats.conflicts), stats.damage == nil ? "complete" : "damaged", stats.damage, utcNow(), String(id)])]
        if !sessionsOfFile.isEmpty {
            writes.append(PGConnection.Piped(sql: """
                INSERT INTO file_sessions(file, session) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING
                """, parameters: [String(id), PGSchema.arrayLiteral(sessionsOfFile.sorted())]))
        }
        // Nothing reads their outcome but the COMMIT: they go in its round trip.
        pg.sendWithNext(writes)
        return nil
    }

    package func releaseLoads() {
        for id in loadingHere.keys { _ = try? pg.execute("SELECT pg_advisory_unlock\(Self.fileLock(id))") }
        loadingHere.removeAll()
        ingesters.release(pg)
    }

    // MARK: Sessions

    package func takeTouchedSessions() -> [Int64] {
        defer { touched.removeAll() }
        return touched.sorted()
    }

    package func recordConflictSummary() throws -> [RecordConflict] {
        try recordConflicts.map { id, c in
            let sid = try pg.query("SELECT sid FROM sessions WHERE id = $1", [String(id)]).text(0, 0) ?? "?"
            return RecordConflict(sid: sid, count: c.count, fields: c.fields.sorted())
        }.sorted { $0.sid < $1.sid }
    }
}
