import LCTraceModel
import LCTraceRules
import LCTraceStore

/// Interned text on PostgreSQL: ids of the `strings` table, cached. New texts are inserted on
/// a connection of their own in autocommit, sorted: several ingesters meeting the same new
/// class name then wait for each other only for the moment of that insert, never for one
/// another's whole batch, and cannot deadlock on it. (A text whose batch is rolled back stays,
/// unreferenced: harmless.)
final class PGStrings {
    private let url: String
    private let stop: StopRequest?
    private var inserter: PGConnection?
    private var ids: [String: Int64] = [:]
    /// Texts cached at most (controller ids are many and mostly of one session): flat memory.
    package static let maxCached = 200_000
    /// Where an ingest's texts are told to its analysis thread (nil: nobody asks).
    let learned: PGLearnedTexts?

    init(url: String, stop: StopRequest?, learned: PGLearnedTexts? = nil) {
        self.url = url
        self.stop = stop
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
        if inserter == nil { inserter = try PGConnection(url: url, stop: stop) }
        pending.inserted = try inserter!.sendAheadPrepared(Self.insert, [PGSchema.arrayLiteral(pending.missing)])
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
        let inserted = try pending.inserted.map { try inserter!.collect($0) }
            ?? inserter!.queryPrepared(Self.insert, [PGSchema.arrayLiteral(missing)])
        if ids.count + missing.count > Self.maxCached { ids.removeAll(keepingCapacity: true) }
        func keep(_ rows: PGResult) {
            for r in 0..<rows.rowCount {
                guard let id = rows.int(r, 0), let text = rows.text(r, 1) else { continue }
                ids[text] = id
                out[text] = id
            }
        }
        keep(inserted)
        let skipped = missing.filter { out[$0] == nil }
        if !skipped.isEmpty {
            keep(try inserter!.queryPrepared("SELECT id, text FROM strings WHERE text = ANY($1::text[])", [PGSchema.arrayLiteral(skipped)]))
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
    var roundTrips: Int { inserter?.roundTrips ?? 0 }

    /// Forgets every id (after a rollback nothing is lost: texts are committed on their own).
    package func close() {
        inserter = nil
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
    /// `sessions.changes` when each session's build began (read under its lock).
    private var changesAtStart: [Int64: Int64] = [:]

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
        changesAtStart[rows.session] = rows.changes
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
        defer { changesAtStart.removeAll() }
        return try connection.transaction(body)
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
        guard try pg.query("SELECT pg_try_advisory_xact_lock(\(PGSchema.loadLockKey(String(session))))").text(0, 0) == "t" else { return false }
        guard waiting else { return try pg.query("SELECT " + Self.sessionLock(session, trying: true)).text(0, 0) == "t" }
        try pg.execute("SELECT " + Self.sessionLock(session))
        return try pg.query("SELECT dirty FROM sessions WHERE id = $1", [String(session)]).int(0, 0) == 1
    }

    /// The session's lock, its `changes`, and its model's rows deleted: one round trip (the
    /// analysis while loading clears a session per file).
    package func clear(session: Int64) throws {
        let id = String(session)
        changesAtStart[session] = try pg.queryStatements(
            ["SELECT " + Self.sessionLock(session)]
            + ["instances", "appearances", "containment", "findings"].map { "DELETE FROM \($0) WHERE session = \(id)" }
            + ["SELECT changes FROM sessions WHERE id = \(id)"]).int(0, 0) ?? 0
    }

    package func writeRows(session: Int64, _ model: SessionModel) throws {
        try pg.copyIn(try rowParts(session: session, model))
    }

    /// The last rows and the findings in one query of COPYs (five waits for the four kinds,
    /// not eight), and the session's counts with the COMMIT.
    package func finish(session: Int64, _ model: SessionModel) throws {
        try pg.copyIn(try rowParts(session: session, model) + findingParts(model.findings, session: session, file: nil))
        markAnalysed(session: session, model)
    }

    /// The COPYs of a model's rows (none for a kind it has none of), their texts' ids known.
    private func rowParts(session: Int64, _ model: SessionModel) throws -> [PGConnection.CopyPart] {
        var texts: [String] = []
        for x in model.instances { texts.append(x.key.vc); texts += [x.cls, x.lastParent, x.presenter].compactMap { $0 } }
        for c in model.cycles { texts.append(c.instance.vc) }
        for e in model.edges { texts += [e.child.vc, e.parent] }
        let id = try strings.ids(texts)
        var parts: [PGConnection.CopyPart] = []
        if !model.instances.isEmpty {
            // Schema 4's packed layout: 8-byte columns first, ids as integer, the texts as `codes`.
            parts.append(.init(sql: "COPY instances (since, init_t, end_seq, end_t, release_seq, release_t, session, vc, cls, parent, presenter, appearances, codes) FROM STDIN") { w in
                for x in model.instances {
                    w.add(x.key.since); w.add(x.initT); w.add(x.endSeq); w.add(x.endT); w.add(x.release?.seq); w.add(x.release?.t)
                    w.add(session); w.add(id[x.key.vc]); w.add(x.cls.flatMap { id[$0] })
                    w.add(x.lastParent.flatMap { id[$0] }); w.add(x.presenter.flatMap { id[$0] })
                    w.add(Int64(x.cycleCount)); w.add(ModelCodes.instance(state: x.state, end: x.end, release: x.release?.how))
                    try w.endRow()
                }
            })
        }
        if !model.cycles.isEmpty {
            parts.append(.init(sql: "COPY appearances (will_seq, since, will_t, is_t, did_t, will_disappear_t, did_disappear_t, session, vc, codes) FROM STDIN") { w in
                for c in model.cycles {
                    w.add(c.willSeq); w.add(c.instance.since); w.add(c.willT)
                    w.add(c.isT); w.add(c.didT); w.add(c.willDisappearT); w.add(c.didDisappearT)
                    w.add(session); w.add(id[c.instance.vc])
                    w.add(ModelCodes.appearance(ending: c.ending, outcome: c.outcome, animated: c.animated,
                                                interactive: c.interactive, backgrounded: c.backgrounded))
                    try w.endRow()
                }
            })
        }
        if !model.edges.isEmpty {
            parts.append(.init(sql: "COPY containment (add_seq, child_since, parent_since, add_t, will_move_seq, did_move_seq, will_remove_seq, remove_seq, remove_t, did_remove_seq, session, child, parent) FROM STDIN") { w in
                for e in model.edges {
                    w.add(e.addSeq); w.add(e.child.since); w.add(e.parentSince); w.add(e.addT); w.add(e.willMoveSeq); w.add(e.didMoveSeq)
                    w.add(e.willRemoveSeq); w.add(e.removeSeq); w.add(e.removeT); w.add(e.didRemoveSeq)
                    w.add(session); w.add(id[e.child.vc]); w.add(id[e.parent])
                    try w.endRow()
                }
            })
        }
        return parts
    }

    /// The session's counts, and current unless a batch changed it since the build began:
    /// written with the transaction's COMMIT (nothing reads it before).
    private func markAnalysed(session: Int64, _ model: SessionModel) {
        let st = model.stats
        pg.sendWithNext([.init(sql: """
            UPDATE sessions SET events = $1, first_seq = $2, last_seq = $3, first_t = $4, last_t = $5, lost_events = $6,
              end_reason = $7, dirty = CASE WHEN changes = $8 THEN 0 ELSE 1 END WHERE id = $9
            """, parameters: [String(st.events), st.firstSeq.map(String.init), st.lastSeq.map(String.init), st.firstT.map(String.init),
                              st.lastT.map(String.init), String(st.lostEvents), st.endReason, String(changesAtStart[session] ?? -1), String(session)])])
    }

    /// The COPY of findings of a session (`session` 0 and a `file` for file-level ones).
    private func findingParts(_ findings: [Finding], session: Int64, file: Int64?) throws -> [PGConnection.CopyPart] {
        guard !findings.isEmpty else { return [] }
        let id = try strings.ids(findings.flatMap { [$0.vc, $0.cls].compactMap { $0 } })
        return [.init(sql: "COPY findings (session, rule, name, severity, vc, since, cls, t, message, evidence, confidence, file, detail, identity_key, identity) FROM STDIN") { w in
            for f in findings {
                w.add(session); w.add(f.rule); w.add(f.name); w.add(f.severity.rawValue)
                w.add(f.vc.flatMap { id[$0] }); w.add(f.since); w.add(f.cls.flatMap { id[$0] }); w.add(f.t); w.add(f.message)
                w.add("[" + f.evidence.map(String.init).joined(separator: ",") + "]"); w.add(f.confidence); w.add(file)
                w.add(f.detail.isEmpty ? nil : DetailValue.encode(f.detail)); w.add(f.identityKey); w.add(f.identity)
                try w.endRow()
            }
        }]
    }

    package func saveSettings(_ settings: RuleSettings) throws {
        try pg.query("INSERT INTO meta(key, value) VALUES ('rule_settings', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                     [settings.canonicalText])
    }

    package func replaceFileFindings(_ findings: [(file: Int64, finding: Finding)]) throws {
        try pg.execute("DELETE FROM findings WHERE session = 0 AND file IS NOT NULL")
        for (file, group) in Dictionary(grouping: findings, by: \.file).sorted(by: { $0.key < $1.key }) {
            try pg.copyIn(try findingParts(group.map(\.finding), session: 0, file: file))
        }
    }

    package func fileProblems() throws -> [(Int64, RejectedLinesRule.FileProblems)] { try model.fileProblems() }
}
