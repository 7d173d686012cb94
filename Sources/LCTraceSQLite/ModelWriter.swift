import LCTraceModel
import LCTraceRules
import LCTraceStore

/// Writes a session's model and findings, replacing what was there: the model tables are a
/// pure function of the session's events, so rebuilding is always safe. Runs inside the
/// analyzer's write transactions.
final class ModelWriter {
    private let db: SQLiteDatabase
    private let strings: StringPool
    private let deletes: [SQLiteStatement]
    private let insertInstances: RowInsert
    private let insertCycles: RowInsert
    private let insertEdges: RowInsert
    private let insertFinding: SQLiteStatement
    private let updateSession: SQLiteStatement

    /// `strings`: a pool to share (the ingest's, on the same connection); a new one by default.
    package init(db: SQLiteDatabase, strings: StringPool? = nil) throws {
        self.db = db
        self.strings = try strings ?? StringPool(db: db)
        deletes = try ["instances", "appearances", "containment", "findings"].map {
            try db.prepare("DELETE FROM \($0) WHERE session = ?")
        }
        // Packed (schema 3: `ModelCodes`): seqs and times relative to the row's first, codes.
        insertInstances = try RowInsert(db, "instances", ["session", "vc", "since", "cls", "init_t", "end_dseq", "end_dt",
            "parent", "presenter", "release_dseq", "release_dt", "appearances", "codes"])
        insertCycles = try RowInsert(db, "appearances", ["session", "will_seq", "vc", "since_dseq", "will_t", "is_dt", "did_dt",
            "will_disappear_dt", "did_disappear_dt", "codes"])
        insertEdges = try RowInsert(db, "containment", ["session", "add_seq", "child", "child_dseq", "parent",
            "parent_dseq", "add_t", "will_move_dseq", "did_move_dseq", "will_remove_dseq", "remove_dseq", "remove_dt",
            "did_remove_dseq"])
        insertFinding = try db.prepare("""
            INSERT INTO findings(rule, name, severity, session, vc, since, cls, t, message, evidence, confidence, file, detail,
                                 identity_key, identity)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        updateSession = try db.prepare("""
            UPDATE sessions SET events = ?, first_seq = ?, last_seq = ?, first_t = ?, last_t = ?, lost_events = ?,
              end_reason = ?, dirty = 0 WHERE id = ?
            """)
    }

    /// Deletes the session's model and findings, before its new rows are written.
    package func clear(session: Int64) throws {
        for d in deletes { try d.run([.int(session)]) }
    }

    /// Writes the instances, cycles and edges of a model or of one of its batches.
    package func writeRows(session: Int64, _ model: SessionModel) throws {
        /// `value` minus `base`, NULL when either is (seqs and times are ≥ 0: no overflow).
        func minus(_ value: Int64?, _ base: Int64?) -> Int64? {
            guard let value, let base else { return nil }
            return value &- base
        }
        /// The id of `text`: `known` when the model brought it (`StoredIDs`), else interned.
        func id(_ text: String?, known: Int64) throws -> Int64? {
            guard let text else { return nil }
            if known == 0 { return try strings.id(text) }
            #if DEBUG  // the tests check every shortcut against the pool
            let interned = try strings.id(text)
            precondition(interned == known, "the model's id \(known) of \(text) is not this database's (\(interned))")
            #endif
            return known
        }
        try insertInstances.insert(model.instances) { x, s, at in
            let timeBase = x.initT ?? 0
            s.bind(session, at: at)
            s.bind(try id(x.key.vc, known: x.vcID), at: at + 1)
            s.bind(x.key.since, at: at + 2)
            s.bind(try id(x.cls, known: x.clsID), at: at + 3)
            s.bind(x.initT, at: at + 4)
            s.bind(minus(x.endSeq, x.key.since), at: at + 5)
            s.bind(minus(x.endT, timeBase), at: at + 6)
            s.bind(try id(x.lastParent, known: x.lastParentID), at: at + 7)
            s.bind(try id(x.presenter, known: x.presenterID), at: at + 8)
            s.bind(minus(x.release?.seq, x.key.since), at: at + 9)
            s.bind(minus(x.release?.t, timeBase), at: at + 10)
            s.bind(Int64(x.cycleCount), at: at + 11)
            s.bind(ModelCodes.instance(state: x.state, end: x.end, release: x.release?.how), at: at + 12)
        }
        try insertCycles.insert(model.cycles) { c, s, at in
            // Each time minus the latest earlier one that is known (`appearance_rows` adds them up).
            var latest = c.willT
            func next(_ t: Int64?) -> Int64? {
                guard let t else { return nil }
                defer { latest = t }
                return t &- latest
            }
            s.bind(session, at: at)
            s.bind(c.willSeq, at: at + 1)
            s.bind(try id(c.instance.vc, known: c.vcID), at: at + 2)
            s.bind(c.willSeq &- c.instance.since, at: at + 3)
            s.bind(c.willT, at: at + 4)
            s.bind(next(c.isT), at: at + 5)
            s.bind(next(c.didT), at: at + 6)
            s.bind(next(c.willDisappearT), at: at + 7)
            s.bind(next(c.didDisappearT), at: at + 8)
            s.bind(ModelCodes.appearance(ending: c.ending, outcome: c.outcome, animated: c.animated,
                                         interactive: c.interactive, backgrounded: c.backgrounded), at: at + 9)
        }
        try insertEdges.insert(model.edges) { e, s, at in
            s.bind(session, at: at)
            s.bind(e.addSeq, at: at + 1)
            s.bind(try id(e.child.vc, known: e.childID), at: at + 2)
            s.bind(e.child.since &- e.addSeq, at: at + 3)
            s.bind(try id(e.parent, known: e.parentID), at: at + 4)
            s.bind(minus(e.parentSince, e.addSeq), at: at + 5)
            s.bind(e.addT, at: at + 6)
            s.bind(minus(e.willMoveSeq, e.addSeq), at: at + 7)
            s.bind(minus(e.didMoveSeq, e.addSeq), at: at + 8)
            s.bind(minus(e.willRemoveSeq, e.addSeq), at: at + 9)
            s.bind(minus(e.removeSeq, e.addSeq), at: at + 10)
            s.bind(minus(e.removeT, e.addT), at: at + 11)
            s.bind(minus(e.didRemoveSeq, e.addSeq), at: at + 12)
        }
    }

    /// Writes the session's findings and stats, and marks it analysed.
    package func finish(session: Int64, _ model: SessionModel) throws {
        for f in model.findings { try write(f, session: session, file: nil) }
        let st = model.stats
        let u = updateSession
        u.reset()
        u.bind(Int64(st.events), at: 1)
        u.bind(st.firstSeq, at: 2)
        u.bind(st.lastSeq, at: 3)
        u.bind(st.firstT, at: 4)
        u.bind(st.lastT, at: 5)
        u.bind(st.lostEvents, at: 6)
        u.bind(st.endReason, at: 7)
        u.bind(session, at: 8)
        try u.step()
    }

    private func write(_ f: Finding, session: Int64?, file: Int64?) throws {
        let s = insertFinding
        s.reset()
        s.bind(f.rule, at: 1)
        s.bind(f.name, at: 2)
        s.bind(f.severity.rawValue, at: 3)
        s.bind(session, at: 4)
        s.bind(try strings.id(f.vc), at: 5)
        s.bind(f.since, at: 6)
        s.bind(try strings.id(f.cls), at: 7)
        s.bind(f.t, at: 8)
        s.bind(f.message, at: 9)
        s.bind("[" + f.evidence.map(String.init).joined(separator: ",") + "]", at: 10)
        s.bind(f.confidence, at: 11)
        s.bind(file, at: 12)
        s.bind(f.detail.isEmpty ? nil : DetailValue.encode(f.detail), at: 13)
        s.bind(f.identityKey, at: 14)
        s.bind(f.identity, at: 15)
        try s.step()
    }

    /// Replaces the file-level findings (LC904).
    package func replaceFileFindings(_ findings: [(file: Int64, finding: Finding)]) throws {
        try db.execute("DELETE FROM findings WHERE session IS NULL AND file IS NOT NULL")
        for (file, finding) in findings { try write(finding, session: nil, file: file) }
    }

    package func saveSettings(_ settings: RuleSettings) throws {
        try db.prepare("INSERT INTO meta(key, value) VALUES ('rule_settings', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
            .run([.text(settings.canonicalText)])
    }
}
