#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    // Once per process: every model writer (one per analysis run) binds from the same ones.
    private static let endTexts = StaticTexts<InstanceEnd>()
    private static let releaseTexts = StaticTexts<ReleaseHow>()
    private static let stateTexts = StaticTexts<AppearanceState>()
    private static let outcomeTexts = StaticTexts<AppearanceCycle.Outcome>()
    private static let endingTexts = StaticTexts<AppearanceCycle.Ending>()

    /// `strings`: a pool to share (the ingest's, on the same connection); a new one by default.
    init(db: SQLiteDatabase, strings: StringPool? = nil) throws {
        self.db = db
        self.strings = try strings ?? StringPool(db: db)
        deletes = try ["instances", "appearances", "containment", "findings"].map {
            try db.prepare("DELETE FROM \($0) WHERE session = ?")
        }
        insertInstances = try RowInsert(db, "instances", ["session", "vc", "since", "cls", "init_t", "end_seq", "end_t",
            "end_how", "parent", "presenter", "release_seq", "release_t", "release_how", "appearances", "final_state"])
        insertCycles = try RowInsert(db, "appearances", ["session", "will_seq", "vc", "since", "will_t", "is_t", "did_t",
            "will_disappear_t", "did_disappear_t", "animated", "interactive", "backgrounded", "outcome", "ending"])
        insertEdges = try RowInsert(db, "containment", ["session", "add_seq", "child", "child_since", "parent",
            "parent_since", "add_t", "will_move_seq", "did_move_seq", "will_remove_seq", "remove_seq", "remove_t",
            "did_remove_seq"])
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

    /// Replaces the session's model and findings with `model`'s (built whole, in one piece).
    func replace(session: Int64, with model: SessionModel) throws {
        try clear(session: session)
        try writeRows(session: session, model)
        try finish(session: session, model)
    }

    /// Deletes the session's model and findings, before its new rows are written.
    func clear(session: Int64) throws {
        for d in deletes { try d.run([.int(session)]) }
    }

    /// Writes the instances, cycles and edges of a model or of one of its batches.
    func writeRows(session: Int64, _ model: SessionModel) throws {
        try insertInstances.insert(model.instances) { x, s, at in
            s.bind(session, at: at)
            s.bind(try strings.id(x.key.vc), at: at + 1)
            s.bind(x.key.since, at: at + 2)
            s.bind(try strings.id(x.cls), at: at + 3)
            s.bind(x.initT, at: at + 4)
            s.bind(x.endSeq, at: at + 5)
            s.bind(x.endT, at: at + 6)
            s.bindStatic(x.end.map(Self.endTexts.text), at: at + 7)
            s.bind(try strings.id(x.lastParent), at: at + 8)
            s.bind(try strings.id(x.presenter), at: at + 9)
            s.bind(x.release?.seq, at: at + 10)
            s.bind(x.release?.t, at: at + 11)
            s.bindStatic(x.release.map { Self.releaseTexts.text($0.how) }, at: at + 12)
            s.bind(Int64(x.cycleCount), at: at + 13)
            s.bindStatic(Self.stateTexts.text(x.state), at: at + 14)
        }
        try insertCycles.insert(model.cycles) { c, s, at in
            s.bind(session, at: at)
            s.bind(c.willSeq, at: at + 1)
            s.bind(try strings.id(c.instance.vc), at: at + 2)
            s.bind(c.instance.since, at: at + 3)
            s.bind(c.willT, at: at + 4)
            s.bind(c.isT, at: at + 5)
            s.bind(c.didT, at: at + 6)
            s.bind(c.willDisappearT, at: at + 7)
            s.bind(c.didDisappearT, at: at + 8)
            s.bind(c.animated.map { $0 ? 1 : 0 }, at: at + 9)
            s.bind(c.interactive ? 1 : 0, at: at + 10)
            s.bind(c.backgrounded ? 1 : 0, at: at + 11)
            s.bindStatic(Self.outcomeTexts.text(c.outcome), at: at + 12)
            s.bindStatic(Self.endingTexts.text(c.ending), at: at + 13)
        }
        try insertEdges.insert(model.edges) { e, s, at in
            s.bind(session, at: at)
            s.bind(e.addSeq, at: at + 1)
            s.bind(try strings.id(e.child.vc), at: at + 2)
            s.bind(e.child.since, at: at + 3)
            s.bind(try strings.id(e.parent), at: at + 4)
            s.bind(e.parentSince, at: at + 5)
            s.bind(e.addT, at: at + 6)
            s.bind(e.willMoveSeq, at: at + 7)
            s.bind(e.didMoveSeq, at: at + 8)
            s.bind(e.willRemoveSeq, at: at + 9)
            s.bind(e.removeSeq, at: at + 10)
            s.bind(e.removeT, at: at + 11)
            s.bind(e.didRemoveSeq, at: at + 12)
        }
    }

    /// Writes the session's findings and stats, and marks it analysed.
    func finish(session: Int64, _ model: SessionModel) throws {
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

    /// Rebuilds the file-level findings (LC904) from `files` and `rejects`; returns how many.
    @discardableResult
    func writeFileFindings() throws -> Int {
        try db.execute("DELETE FROM findings WHERE session IS NULL AND file IS NOT NULL")
        var count = 0
        for (id, problems) in try ModelReader(db: db).fileProblems() {
            for f in RejectedLinesRule.check(problems) {
                try write(f, session: nil, file: id)
                count += 1
            }
        }
        return count
    }

    func saveSettings(_ settings: RuleSettings) throws {
        try db.prepare("INSERT INTO meta(key, value) VALUES ('rule_settings', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
            .run([.text(settings.fingerprint)])
    }
}

/// The raw values of an enum's cases as C strings made once and never freed, so the model's
/// text columns are bound without SQLite copying the text of every row (`bindStatic`).
/// Sendable: written once at init, then only read (the C strings are never freed nor changed).
struct StaticTexts<E: RawRepresentable & CaseIterable & Equatable>: @unchecked Sendable where E.RawValue == String {
    private let cases = Array(E.allCases)
    private let texts: [UnsafePointer<CChar>] = E.allCases.map { UnsafePointer(strdup($0.rawValue)!) }

    func text(_ value: E) -> UnsafePointer<CChar> { texts[cases.firstIndex(of: value)!] }
}
