import LCTraceModel

/// Reads retired instances back from the session's `instances` rows, so the builder keeps only
/// a bounded cache of ended instances instead of one per controller id the session ever had:
/// the rows its own batches wrote (the analysis, on its connection inside its write
/// transaction), or the rows of the stored model of an analysed session (a report with other
/// tuning rebuilds it: instances do not depend on the rules' settings).
package final class RetiredInstanceReader: RetiredInstances {
    /// The session being built.
    package var session: Int64 = 0
    /// The first read that failed: the analysis must not go on as if the row was not there.
    package private(set) var error: Error?
    private let latestQuery: any SQLQuery
    private let classQuery: any SQLQuery

    /// Look-ups by key (a server backend prepares them once; a cursor each cost it a
    /// declare, a fetch and a close).
    package init(db: any SQLReadConnection) throws {
        latestQuery = try db.lookup("""
            SELECT i.since, c.text, i.end_seq, i.final_state FROM \(db.relation(.instances)) i LEFT JOIN strings c ON c.id = i.cls
            WHERE i.session = ?1 AND i.vc = (SELECT id FROM strings WHERE text = ?2) AND i.since < ?3
            ORDER BY i.since DESC LIMIT 1
            """)
        classQuery = try db.lookup("""
            SELECT c.text FROM \(db.relation(.instances)) i JOIN strings c ON c.id = i.cls
            WHERE i.session = ?1 AND i.vc = (SELECT id FROM strings WHERE text = ?2) AND i.since = ?3
            """)
    }

    package func latest(vc: String, before seq: Int64) -> InstanceDirectory.Tombstone? {
        latestQuery.bind(seq, at: 3)
        return read(latestQuery, vc) { q in
            InstanceDirectory.Tombstone(key: InstanceKey(vc: vc, since: q.int(0)), cls: q.text(1), endSeq: q.optionalInt(2),
                                        state: q.text(3).flatMap(AppearanceState.init(rawValue:)) ?? .hidden)
        }
    }

    package func cls(of key: InstanceKey) -> String? {
        classQuery.bind(key.since, at: 3)
        return read(classQuery, key.vc) { $0.text(0) } ?? nil
    }

    private func read<T>(_ q: any SQLQuery, _ vc: String, _ row: (any SQLQuery) -> T) -> T? {
        q.bind(session, at: 1)
        q.bind(vc, at: 2)
        defer { q.resetKeepingBindings() }
        do {
            return try q.step() ? row(q) : nil
        } catch {
            if self.error == nil { self.error = error }
            return nil
        }
    }
}
