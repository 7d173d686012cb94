import LCTraceModel

/// Read-only SQL for the examples the HTML report draws: the raw events of one controller
/// instance around a finding's decisive event (a bounded number, never its whole life), and
/// the times of single events.
package final class ExhibitQuery {
    private let db: any SQLReadConnection

    package init(db: any SQLReadConnection) { self.db = db }

    /// The times of the events of `session` with these seqs (those it has), a statement for
    /// each `lookUpRows` of them.
    package func eventTimes(session: Int64, seqs: [Int64]) throws -> [Int64: Int64] {
        var out: [Int64: Int64] = [:]
        let sorted = Set(seqs).sorted()
        for start in stride(from: 0, to: sorted.count, by: Int(lookUpRows)) {
            let chunk = Array(sorted[start..<min(start + Int(lookUpRows), sorted.count)])
            let q = try db.lookup("SELECT e.seq, e.t FROM \(db.events(session: "?1", seqs: chunk)) e")
            q.bind(session, at: 1)
            while try q.step() { out[q.int(0)] = q.int(1) }
        }
        return out
    }

    /// The events an instance sent or that name it (its container's addChild, a push, pop or
    /// presentation of it, a view put into it) from `since` to `end` (its deinit; nil: the
    /// session's end): at most `limit`, those nearest `around` (half before, half after), in
    /// seq order, with how many there are in all.
    package func instanceEvents(session: Int64, sid: String, vc: String, since: Int64, end: Int64?, around: Int64,
                               limit: Int) throws -> (events: [TraceEvent], total: Int) {
        guard let id = try db.scalarInt("SELECT id FROM strings WHERE text = ?", [.text(vc)]) else { return ([], 0) }
        // Both ends bound the primary key's range (an end that may be NULL bounds nothing: an
        // instance that ended early was read to the session's end, three times).
        let range = "e.session = ?1 AND e.seq >= ?2 AND e.seq <= ?3 AND (e.vc = ?4 OR e.other = ?4)"
        let events = db.events(session: "?1", from: "?2", through: "?3", firstOnly: false)
        let count = try db.lookup("SELECT count(*) FROM \(events) e WHERE \(range)")
        bind(count, session, since, end, id)
        let total = try count.step() ? Int(count.int(0)) : 0
        let before = max(limit - limit / 2, 0), after = limit / 2
        var found: [TraceEvent] = try select("\(range) AND e.seq <= ?5 ORDER BY e.seq DESC LIMIT ?6", from: events, sid: sid) { q in
            bind(q, session, since, end, id)
            q.bind(around, at: 5)
            q.bind(Int64(before), at: 6)
        }.reversed()
        // When the events before `around` are fewer than their half, the ones after fill the rest.
        found += try select("\(range) AND e.seq > ?5 ORDER BY e.seq LIMIT ?6", from: events, sid: sid) { q in
            bind(q, session, since, end, id)
            q.bind(around, at: 5)
            q.bind(Int64(after + before - found.count), at: 6)
        }
        return (found, total)
    }

    /// The events of `session` with these seqs, in seq order.
    package func events(session: Int64, sid: String, seqs: [Int64]) throws -> [TraceEvent] {
        guard !seqs.isEmpty else { return [] }
        let sorted = Set(seqs).sorted()
        return try select("TRUE ORDER BY e.seq", from: db.events(session: "?1", seqs: sorted), sid: sid) { q in q.bind(session, at: 1) }
    }

    private func bind(_ q: any SQLQuery, _ session: Int64, _ since: Int64, _ end: Int64?, _ vc: Int64) {
        q.bind(session, at: 1)
        q.bind(since, at: 2)
        q.bind(end ?? .max, at: 3)
        q.bind(vc, at: 4)
    }

    /// The events `clause` selects: always a bounded few (a `LIMIT`, a list of seqs), so a
    /// look-up.
    /// `from`: the events' relation (`SQLReadConnection.events`, of the range `clause` reads).
    private func select(_ clause: String, from: String, sid: String, bind: (any SQLQuery) -> Void) throws -> [TraceEvent] {
        let q = try db.lookup("""
            SELECT e.seq, e.t, n.text, v.text, c.text, o.text, e.flags, d.text, th.text, e.wall, e.attrs
            FROM \(from) e JOIN strings n ON n.id = e.ev
            LEFT JOIN strings v ON v.id = e.vc LEFT JOIN strings c ON c.id = e.cls LEFT JOIN strings o ON o.id = e.other
            LEFT JOIN strings d ON d.id = e.detail LEFT JOIN strings th ON th.id = e.thread
            WHERE \(clause)
            """)
        bind(q)
        var out: [TraceEvent] = []
        while try q.step() {
            out.append(TraceEvent(sid: sid, seq: q.int(0), t: q.int(1), name: q.text(2) ?? "", wall: q.text(9), thread: q.text(8),
                                  vc: q.text(3), cls: q.text(4), other: q.text(5), flags: EventFlags(rawValue: q.int(6)),
                                  detail: q.text(7), attrs: q.text(10)))
        }
        return out
    }
}

package extension HintQueries {
    /// Everything that happened to one instance: its events and those naming it, in order
    /// (README query 5).
    static func instanceEvents(sid: String, vc: String, since: Int64, end: Int64?) -> String {
        var sql = "SELECT seq, ms, event, vc, class, parent, host, presented, child FROM events_v WHERE sid = \(literal(sid))"
        sql += " AND \(literal(vc)) IN (vc, parent, host, presented, child) AND seq >= \(since)"
        if let end { sql += " AND seq <= \(end)" }
        return sql + " ORDER BY seq"
    }

    /// The findings of these identities under the filters (findings_v column, value) and lowest severity.
    static func findings(identities: [String], conditions: [(String, String)], minSeverity: Severity?) -> String {
        let terms = ["identity IN (\(identities.map(literal).joined(separator: ", ")))"] + filterTerms(conditions, minSeverity)
        return "SELECT session, vc, since, t, message FROM findings_v WHERE " + terms.joined(separator: " AND ") + " ORDER BY session, t"
    }
}

package extension HintQueries {
    /// Sessions, findings and findings per 100 sessions of every build (app version and
    /// build number), busiest first, under the filters (findings_v column, value), lowest
    /// severity and, when not every family is reported, these rules.
    static func findingsPerBuild(conditions: [(String, String)], minSeverity: Severity?, rules: [String]?) -> String {
        var sessionTerms: [String] = [], findingTerms = ["f.session_id = s.id"]
        for (column, value) in conditions {
            switch column {
            case "session": sessionTerms.append("s.sid = \(literal(value))")
            case "app", "build": sessionTerms.append("s.\(column) = \(literal(value))")
            default: findingTerms.append("f.\(column) = \(literal(value))")
            }
        }
        findingTerms += filterTerms([], minSeverity).map { "f." + $0 }
        if let rules { findingTerms.append("f.rule IN (\(rules.map(literal).joined(separator: ", ")))") }
        var sql = "SELECT s.app_version, s.build, count(DISTINCT s.id) AS sessions, count(f.rule) AS findings, "
        sql += "round(100.0 * count(f.rule) / count(DISTINCT s.id), 1) AS per_100_sessions "
        sql += "FROM sessions s LEFT JOIN findings_v f ON " + findingTerms.joined(separator: " AND ")
        if !sessionTerms.isEmpty { sql += " WHERE " + sessionTerms.joined(separator: " AND ") }
        return sql + " GROUP BY s.app_version, s.build ORDER BY sessions DESC, s.app_version, s.build"
    }
}
