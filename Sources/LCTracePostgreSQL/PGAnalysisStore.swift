import LCTraceModel
import LCTraceRules
import LCTraceStore

/// A connection in autocommit for inserts that must not wait for a transaction: an ingest's
/// new texts (`PGStrings`) and new sessions (`PGIngestSink.sessionIDs`) share one, so an
/// ingest costs the server one process less (6.6 ms of CPU each). Opened at its first use;
/// with `lockTimeout`, every statement on it gives up a wait for a lock after that long
/// (SQLSTATE 55P03), and is run again (`retryingLockWaits`).
final class PGAutocommit {
    private let url: String
    let stop: StopRequest?
    private let lockTimeout: String?
    private(set) var connection: PGConnection?

    init(url: String, stop: StopRequest?, lockTimeout: String? = nil) {
        self.url = url
        self.stop = stop
        self.lockTimeout = lockTimeout
    }

    /// The connection, made now if it is not yet.
    func open() throws -> PGConnection {
        if let connection { return connection }
        let made = try PGConnection(url: url, stop: stop)
        if let lockTimeout { try made.execute("SET lock_timeout = '\(lockTimeout)'") }
        connection = made
        return made
    }

    /// `body` on the connection, run again while it gives up waiting for a lock (55P03); a
    /// stop request ends the retries.
    func retryingLockWaits<T>(_ body: (PGConnection) throws -> T) throws -> T {
        while true {
            try stop?.check()
            do {
                return try body(try open())
            } catch let error as PGError where error.sqlState == PGAutocommit.lockNotAvailable {
                continue
            }
        }
    }

    /// SQLSTATE lock_not_available: a statement gave up waiting after `lock_timeout`.
    static let lockNotAvailable = "55P03"

    /// Requests sent on the connection (for the tests).
    var roundTrips: Int { connection?.roundTrips ?? 0 }

    func close() {
        connection = nil
    }
}

/// Interned text on PostgreSQL: ids of the `strings` table, cached. New texts are inserted on
/// a connection in autocommit (`PGAutocommit`; an ingest's new sessions go on the same one),
/// sorted: several ingesters meeting the same new class name then wait for each other only
/// for the moment of that insert, never for one another's whole batch, and cannot deadlock on
/// it. (A text whose batch is rolled back stays, unreferenced: harmless.) No transaction
/// writes `strings`: its inserts wait only for each other's, which end on the server.
final class PGStrings {
    private let inserter: PGAutocommit
    private var ids: [String: Int64] = [:]
    /// Texts cached at most (controller ids are many and mostly of one session): flat memory.
    package static let maxCached = 200_000
    /// Where an ingest's texts are told to its analysis thread (nil: nobody asks).
    let learned: PGLearnedTexts?

    /// On a connection of their own.
    convenience init(url: String, stop: StopRequest?, learned: PGLearnedTexts? = nil) {
        self.init(inserter: PGAutocommit(url: url, stop: stop), learned: learned)
    }

    /// On `inserter`, which others may share.
    init(inserter: PGAutocommit, learned: PGLearnedTexts? = nil) {
        self.inserter = inserter
        self.learned = learned
    }

    /// The ids of `texts`, inserting those the table does not have yet.
    package func ids<S: Sequence>(_ texts: S) throws -> [String: Int64] where S.Element == String {
        try collect(try send(texts))
    }

    /// Texts whose ids are on their way (`send`): those cached, the others' insert.
    struct Pending {
        fileprivate var out: [String: Int64]
        fileprivate var missing: [String]
        fileprivate var inserted: PGAhead?
        /// The insert went without waiting (for the tests).
        var sentAhead: Bool { inserted != nil }
    }

    private static let insert = """
        INSERT INTO strings(text) SELECT t FROM unnest($1::text[]) AS u(t) ORDER BY t
        ON CONFLICT (text) DO NOTHING RETURNING id, text
        """

    /// The first half of `ids`: the insert of the texts not cached is sent and not waited for
    /// (once prepared), so the caller waits on another connection meanwhile.
    func send<S: Sequence>(_ texts: S) throws -> Pending where S.Element == String {
        var pending = Pending(out: [:], missing: [], inserted: nil)
        for text in Set(texts) {
            if let id = ids[text] { pending.out[text] = id } else { pending.missing.append(text) }
        }
        guard !pending.missing.isEmpty else { return pending }
        pending.missing.sort()
        pending.inserted = try inserter.open().sendAheadPrepared(Self.insert, [PGSchema.arrayLiteral(pending.missing)])
        return pending
    }

    /// The second half of `ids`: the ids of every text `send` was given.
    func collect(_ pending: Pending) throws -> [String: Int64] {
        var out = pending.out
        let missing = pending.missing
        guard !missing.isEmpty else { return out }
        // Most texts a batch does not know yet are new to the table too (controller ids): the
        // insert returns their ids; only those it skipped (stored before, or by another
        // ingester meanwhile) are looked up, in a second statement that then sees them.
        // Sent ahead, it may have given up waiting for a lock (`PGAutocommit`'s lock_timeout,
        // which the new sessions' insert sets on a shared connection): then run again, as one
        // not sent ahead is.
        var inserted: PGResult?
        if let ahead = pending.inserted {
            do {
                inserted = try inserter.open().collect(ahead)
            } catch let error as PGError where error.sqlState == PGAutocommit.lockNotAvailable {}
        }
        if inserted == nil {
            inserted = try inserter.retryingLockWaits { try $0.queryPrepared(Self.insert, [PGSchema.arrayLiteral(missing)]) }
        }
        if ids.count + missing.count > Self.maxCached { ids.removeAll(keepingCapacity: true) }
        func keep(_ rows: PGResult) {
            for r in 0..<rows.rowCount {
                guard let id = rows.int(r, 0), let text = rows.text(r, 1) else { continue }
                ids[text] = id
                out[text] = id
            }
        }
        keep(inserted!)
        let skipped = missing.filter { out[$0] == nil }
        if !skipped.isEmpty {
            keep(try inserter.retryingLockWaits {
                try $0.queryPrepared("SELECT id, text FROM strings WHERE text = ANY($1::text[])", [PGSchema.arrayLiteral(skipped)])
            })
        }
        learned?.learn(out)
        return out
    }

    /// Caches ids whose texts are known (the captured rows' texts: a model's texts are its events').
    package func remember(_ texts: [Int64: String]) {
        if ids.count + texts.count > Self.maxCached { ids.removeAll(keepingCapacity: true) }
        for (id, text) in texts where ids.count < Self.maxCached { ids[text] = id }
    }

    /// Requests sent on the inserting connection (for the tests).
    var roundTrips: Int { inserter.roundTrips }

    /// Closes the inserting connection. The ids stay cached: texts are committed at once, so a
    /// rollback of the batch that met them loses none.
    package func close() {
        inserter.close()
    }
}

/// A session's facts on PostgreSQL: metadata and stored instances through the shared queries,
/// events through the portable reader (a cursor inside the caller's transaction, so a session
/// of any length streams).
class PGSessionSource: SessionSource {
    package let connection: PGReadConnection
    package let model: DatabaseReader
    private let events: PortableEventReader

    package init(connection: PGReadConnection) throws {
        self.connection = connection
        model = DatabaseReader(db: connection)
        events = try PortableEventReader(db: connection)
    }

    package func sessionMetadata(_ session: Int64) throws -> SessionMetadata { try model.sessionMetadata(session) }

    package func forEachEvent(session: Int64, sid: String, _ body: (TraceEvent) throws -> Void) throws {
        try events.forEachEvent(session: session, sid: sid, body)
    }

    private var retired: RetiredInstanceReader?
    package func retiredInstances(session: Int64) throws -> RetiredInstanceReader {
        if retired == nil { retired = try RetiredInstanceReader(db: connection) }
        retired!.session = session
        return retired!
    }
}

/// The analysis's connection on PostgreSQL. Several ingesters may analyze at once: a session
/// is built under a transaction-scoped advisory lock of its own (taken in id order, so two
/// analyses never deadlock), and its model is marked current only if no batch added rows to it
/// since the build began (`sessions.changes`); otherwise it stays dirty for the next analysis.
class PGAnalysisStore: PGSessionSource, AnalysisStore, CapturedRowsReader {
    private let strings: PGStrings
    /// `sessions.changes` when each session's build began, read under its lock (`clear`).
    private var changesAtStart: [Int64: Int64] = [:]
    /// The `changes` of captured rows (`forEachEvent(captured:)`): the batches the model is
    /// built from, which may be fewer than the server counts when the build began.
    private var capturedChanges: [Int64: Int64] = [:]

    /// Inside `writeTransaction` (the analysis after loading, a worker's session): a
    /// session's clearing goes with the next round trip, and finished models are stored
    /// together before the commit (`storeFinished`).
    private var batching = false
    /// Models finished in this transaction and not stored yet, with the `changes` they were built from.
    private var finished: [(session: Int64, model: SessionModel, changes: Int64)] = []
    private var finishedFacts = 0
    /// Facts (instances, appearances, containment, findings) of finished models held before
    /// they are stored: about 40 sessions of 500 events. A query of COPYs a session cost the
    /// server four COPYs and the client five waits, and `analyze --all` of 3,000 such sessions
    /// took 4.9 times SQLite's time (3.7 now); 16,384 facts held took 8 MB more, no less time.
    var finishedFactsAtMost = 4_096

    /// Events with their texts resolved on the client (inside `writeTransaction`, whose
    /// transaction its cursors need).
    private let events: PGEventReader

    /// Texts the ingest feeding this analysis learned (`PGModelWorker`), taken before any is read.
    private let known: PGLearnedTexts?

    package init(connection: PGReadConnection, strings: PGStrings, known: PGLearnedTexts? = nil) throws {
        self.strings = strings
        self.known = known
        events = PGEventReader(pg: connection.pg)
        events.learn = { [strings] in strings.remember($0) }
        try super.init(connection: connection)
    }

    private var pg: PGConnection { connection.pg }
    /// Requests sent for texts' ids (for the tests).
    var stringsRoundTrips: Int { strings.roundTrips }

    override package func forEachEvent(session: Int64, sid: String, _ body: (TraceEvent) throws -> Void) throws {
        try events.forEachEvent(session: session, sid: sid, body)
    }

    /// The events of rows captured by this run's ingest (`PGCapturedRows`). Its model is
    /// current only while the session's `changes` are still those of the rows, whatever
    /// `clear` read (`finish`).
    package func forEachEvent(captured: any CapturedSessionRows, sid: String, _ body: (TraceEvent) throws -> Void) throws {
        guard let rows = captured as? PGCapturedRows else { preconditionFailure("rows captured by another backend") }
        capturedChanges[rows.session] = rows.changes
        let texts = try texts(of: rows.textIDs)
        strings.remember(texts)
        try rows.forEachEvent(sid: sid, texts: texts, body)
    }

    /// Texts by id, for captured rows.
    private var textsByID = PGTextCache(maxCached: PGStrings.maxCached)

    /// The texts of `ids`, those not cached read in one query.
    private func texts(of ids: Set<Int64>) throws -> [Int64: String] {
        try textsByID.load(ids, on: pg, known: known)
        var out: [Int64: String] = [:]
        for id in ids { out[id] = textsByID[id] }
        return out
    }

    /// (`SessionsToAnalyse`: behind a parameter, under a generic plan, the condition could not
    /// use the index: in a schema of 400,100 sessions every ingest's look-up took 118 ms.)
    package func countSessionsToAnalyse(all: Bool) throws -> Int {
        Int(try pg.query(SessionsToAnalyse.countSQL(all: all)).int(0, 0) ?? 0)
    }

    package func sessionsToAnalyse(all: Bool, after: Int64, limit: Int) throws -> [(id: Int64, sid: String)] {
        let rows = try pg.query(SessionsToAnalyse.pageSQL(all: all), [String(after), String(limit)])
        return (0..<rows.rowCount).map { (rows.int($0, 0) ?? 0, rows.text($0, 1) ?? "") }
    }

    package func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        defer {
            changesAtStart.removeAll()
            capturedChanges.removeAll()
            finished.removeAll()
            finishedFacts = 0
            batching = false
        }
        return try connection.transaction {
            batching = true
            let value = try body()
            try storeFinished()
            return value
        }
    }

    /// A session's analysis lock (bigint form: the class in the high bits).
    static func sessionLock(_ session: Int64, trying: Bool = false) -> String {
        "pg_\(trying ? "try_" : "")advisory_xact_lock(\((Int64(PGSchema.lockClass) << 32) | (session & 0xffff_ffff)))"
    }

    /// The session's analysis lock: at once if nobody holds it (another ingest's analysis
    /// stores it otherwise), or after waiting, then whether the session is still dirty. Never
    /// a session another live ingest is loading (its load lock held: `PGIngestSink`), which
    /// that ingest analyzes when its loading ends.
    package func claim(session: Int64, waiting: Bool) throws -> Bool {
        let notLoading = "pg_try_advisory_xact_lock(\(PGSchema.loadLockKey(String(session))))"
        // One round trip: CASE tries the session's lock only once the load lock is had.
        guard waiting else {
            return try pg.query("SELECT CASE WHEN \(notLoading) THEN \(Self.sessionLock(session, trying: true)) ELSE false END").text(0, 0) == "t"
        }
        guard try pg.query("SELECT " + notLoading).text(0, 0) == "t" else { return false }
        try pg.execute("SELECT " + Self.sessionLock(session))
        return try pg.query("SELECT dirty FROM sessions WHERE id = $1", [String(session)]).int(0, 0) == 1
    }

    /// The session's lock, its `changes`, and its model's rows deleted: in one round trip
    /// of its own (the analysis while loading clears a session per file), or inside
    /// `writeTransaction` with the next one (the reading of its events).
    package func clear(session: Int64) throws {
        if finished.contains(where: { $0.session == session }) { try storeFinished() }
        let id = String(session)
        capturedChanges[session] = nil
        changesAtStart[session] = nil
        // The deletes and the read of `changes` in one statement, after the lock's (so its
        // snapshot is taken once the lock is had): each statement of a pipeline is parsed
        // and planned, and five took a tenth of the server's time in `analyze`.
        let lock = "SELECT " + Self.sessionLock(session)
        let deleteAndRead = "WITH " + ["instances", "appearances", "containment", "findings"].enumerated()
            .map { "d\($0.offset) AS (DELETE FROM \($0.element) WHERE session = \(id))" }.joined(separator: ", ")
            + " SELECT changes FROM sessions WHERE id = \(id)"
        guard batching else {
            changesAtStart[session] = try pg.queryStatements([lock, deleteAndRead]).int(0, 0) ?? 0
            return
        }
        pg.sendWithNext([.init(sql: lock), .init(sql: deleteAndRead) { [weak self] in
            self?.changesAtStart[session] = $0.int(0, 0) ?? 0
        }])
    }

    package func writeRows(session: Int64, _ model: SessionModel) throws {
        try pg.copyIn(try rowParts([(session, model)]))
    }

    /// Inside `writeTransaction`, the model waits to be stored with others (`storeFinished`);
    /// otherwise its last rows and findings go in one query of COPYs (five waits for the four
    /// kinds, not eight), and the session's counts with the COMMIT.
    package func finish(session: Int64, _ model: SessionModel) throws {
        let changes = try changesOfBuild(session)
        guard batching else { return try store([(session, model, changes)]) }
        finished.append((session, model, changes))
        finishedFacts += 1 + model.instances.count + model.cycles.count + model.edges.count + model.findings.count
        if finishedFacts >= finishedFactsAtMost { try storeFinished() }
    }

    /// The `changes` a model was built from: its captured rows', else those `clear` read
    /// (its answer awaited if it has not come back yet), -1 when unknown (never current).
    private func changesOfBuild(_ session: Int64) throws -> Int64 {
        if let changes = capturedChanges.removeValue(forKey: session) {
            changesAtStart[session] = nil
            return changes
        }
        if changesAtStart[session] == nil { try pg.sendPending() }
        return changesAtStart.removeValue(forKey: session) ?? -1
    }

    /// Stores the models finished and not stored yet.
    private func storeFinished() throws {
        guard !finished.isEmpty else { return }
        let models = finished
        finished.removeAll()
        finishedFacts = 0
        try store(models)
    }

    /// Finished models' rows and findings in one query of COPYs, and their sessions' counts
    /// with the next round trip.
    private func store(_ models: [(session: Int64, model: SessionModel, changes: Int64)]) throws {
        try pg.copyIn(try rowParts(models.map { ($0.session, $0.model) })
                      + findingParts(models.map { ($0.session, nil, $0.model.findings) }))
        markAnalysed(models)
    }

    /// The COPYs of models' rows (none for a kind they have none of), their texts' ids known.
    private func rowParts(_ models: [(session: Int64, model: SessionModel)]) throws -> [PGConnection.CopyPart] {
        var texts: [String] = []
        for (_, model) in models {
            for x in model.instances { texts.append(x.key.vc); texts += [x.cls, x.lastParent, x.presenter].compactMap { $0 } }
            for c in model.cycles { texts.append(c.instance.vc) }
            for e in model.edges { texts += [e.child.vc, e.parent] }
        }
        let id = try strings.ids(texts)
        var parts: [PGConnection.CopyPart] = []
        if models.contains(where: { !$0.model.instances.isEmpty }) {
            // Schema 4's packed layout: 8-byte columns first, ids as integer, the texts as `codes`.
            parts.append(.init(sql: "COPY instances (since, init_t, end_seq, end_t, release_seq, release_t, session, vc, cls, parent, presenter, appearances, codes) FROM STDIN") { w in
                for (session, model) in models {
                    for x in model.instances {
                        w.add(x.key.since); w.add(x.initT); w.add(x.endSeq); w.add(x.endT); w.add(x.release?.seq); w.add(x.release?.t)
                        w.add(session); w.add(id[x.key.vc]); w.add(x.cls.flatMap { id[$0] })
                        w.add(x.lastParent.flatMap { id[$0] }); w.add(x.presenter.flatMap { id[$0] })
                        w.add(Int64(x.cycleCount)); w.add(ModelCodes.instance(state: x.state, end: x.end, release: x.release?.how))
                        try w.endRow()
                    }
                }
            })
        }
        if models.contains(where: { !$0.model.cycles.isEmpty }) {
            parts.append(.init(sql: "COPY appearances (will_seq, since, will_t, is_t, did_t, will_disappear_t, did_disappear_t, session, vc, codes) FROM STDIN") { w in
                for (session, model) in models {
                    for c in model.cycles {
                        w.add(c.willSeq); w.add(c.instance.since); w.add(c.willT)
                        w.add(c.isT); w.add(c.didT); w.add(c.willDisappearT); w.add(c.didDisappearT)
                        w.add(session); w.add(id[c.instance.vc])
                        w.add(ModelCodes.appearance(ending: c.ending, outcome: c.outcome, animated: c.animated,
                                                    interactive: c.interactive, backgrounded: c.backgrounded))
                        try w.endRow()
                    }
                }
            })
        }
        if models.contains(where: { !$0.model.edges.isEmpty }) {
            parts.append(.init(sql: "COPY containment (add_seq, child_since, parent_since, add_t, will_move_seq, did_move_seq, will_remove_seq, remove_seq, remove_t, did_remove_seq, session, child, parent) FROM STDIN") { w in
                for (session, model) in models {
                    for e in model.edges {
                        w.add(e.addSeq); w.add(e.child.since); w.add(e.parentSince); w.add(e.addT); w.add(e.willMoveSeq); w.add(e.didMoveSeq)
                        w.add(e.willRemoveSeq); w.add(e.removeSeq); w.add(e.removeT); w.add(e.didRemoveSeq)
                        w.add(session); w.add(id[e.child.vc]); w.add(id[e.parent])
                        try w.endRow()
                    }
                }
            })
        }
        return parts
    }

    /// The sessions' counts, and each current unless a batch changed it since its build began:
    /// one statement, written with the next round trip (the transaction's COMMIT: nothing
    /// reads them before). Its rows are locked in id order first, as the statements a session
    /// did before (a join updates them in the heap's order, which another writer's locks could
    /// meet the other way round).
    private func markAnalysed(_ models: [(session: Int64, model: SessionModel, changes: Int64)]) {
        func column(_ value: (SessionStats) -> Int64?) -> String? {
            PGSchema.arrayLiteral(models.map { value($0.model.stats).map(String.init) })
        }
        pg.sendWithNext([.init(sql: """
            WITH v AS (SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[],
                                            $7::bigint[], $8::text[], $9::bigint[])
                         AS v(id, events, first_seq, last_seq, first_t, last_t, lost_events, end_reason, changes)),
                 locked AS (SELECT id FROM sessions WHERE id IN (SELECT id FROM v) ORDER BY id FOR UPDATE)
            UPDATE sessions s SET events = v.events, first_seq = v.first_seq, last_seq = v.last_seq, first_t = v.first_t,
              last_t = v.last_t, lost_events = v.lost_events, end_reason = v.end_reason,
              dirty = CASE WHEN s.changes = v.changes THEN 0 ELSE 1 END
            FROM v WHERE s.id = v.id AND s.id IN (SELECT id FROM locked)
            """, parameters: [PGSchema.arrayLiteral(models.map(\.session)), column { Int64($0.events) }, column(\.firstSeq),
                              column(\.lastSeq), column(\.firstT), column(\.lastT), column { Int64($0.lostEvents) },
                              PGSchema.arrayLiteral(models.map(\.model.stats.endReason)), PGSchema.arrayLiteral(models.map(\.changes))])])
    }

    /// The COPY of findings of sessions (`session` 0 and a `file` for file-level ones).
    private func findingParts(_ groups: [(session: Int64, file: Int64?, findings: [Finding])]) throws -> [PGConnection.CopyPart] {
        guard groups.contains(where: { !$0.findings.isEmpty }) else { return [] }
        let id = try strings.ids(groups.flatMap { $0.findings.flatMap { [$0.vc, $0.cls].compactMap { $0 } } })
        return [.init(sql: "COPY findings (session, rule, name, severity, vc, since, cls, t, message, evidence, confidence, file, detail, identity_key, identity) FROM STDIN") { w in
            for (session, file, findings) in groups {
                for f in findings {
                    w.add(session); w.add(f.rule); w.add(f.name); w.add(f.severity.rawValue)
                    w.add(f.vc.flatMap { id[$0] }); w.add(f.since); w.add(f.cls.flatMap { id[$0] }); w.add(f.t); w.add(f.message)
                    w.add("[" + f.evidence.map(String.init).joined(separator: ",") + "]"); w.add(f.confidence); w.add(file)
                    w.add(f.detail.isEmpty ? nil : DetailValue.encode(f.detail)); w.add(f.identityKey); w.add(f.identity)
                    try w.endRow()
                }
            }
        }]
    }

    package func saveSettings(_ settings: RuleSettings) throws {
        try pg.query("INSERT INTO meta(key, value) VALUES ('rule_settings', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                     [settings.canonicalText])
    }

    package func replaceFileFindings(_ findings: [(file: Int64, finding: Finding)]) throws {
        try pg.execute("DELETE FROM findings WHERE session = 0 AND file IS NOT NULL")
        let byFile = Dictionary(grouping: findings, by: \.file).sorted { $0.key < $1.key }
        try pg.copyIn(try findingParts(byFile.map { (0, $0.key, $0.value.map(\.finding)) }))
    }

    package func fileProblems() throws -> [(Int64, RejectedLinesRule.FileProblems)] { try model.fileProblems() }
}
