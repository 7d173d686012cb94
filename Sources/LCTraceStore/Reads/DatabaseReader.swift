import LCTraceModel
import LCTraceRules

/// A session row as reports and `lctrace sessions` need it.
package struct SessionInfo: Sendable {
    package var id: Int64
    package var sid: String
    package var app: String?
    package var appVersion: String?
    package var build: String?
    package var device: String?
    package var os: String?
    package var osVersion: String?
    package var sdk: String?
    package var wall: String?
    package var events: Int
    package var lostEvents: Int
    package var firstT: Int64?
    package var lastT: Int64?
    package var endReason: String?
    package var dirty: Bool
    package var recordConflicts: Int

    package init(id: Int64, sid: String, app: String?, appVersion: String?, build: String?, device: String?, os: String?,
                 osVersion: String?, sdk: String?, wall: String?, events: Int, lostEvents: Int, firstT: Int64?, lastT: Int64?,
                 endReason: String?, dirty: Bool, recordConflicts: Int) {
        self.id = id; self.sid = sid; self.app = app; self.appVersion = appVersion; self.build = build
        self.device = device; self.os = os; self.osVersion = osVersion; self.sdk = sdk; self.wall = wall
        self.events = events; self.lostEvents = lostEvents; self.firstT = firstT; self.lastT = lastT
        self.endReason = endReason; self.dirty = dirty; self.recordConflicts = recordConflicts
    }

    package var durationNs: Int64? {
        guard let a = firstT, let b = lastT else { return nil }
        return b - a
    }
}

/// Which sessions a report or listing covers.
package struct SessionFilter: Sendable {
    /// A session id, or a unique prefix of one.
    package var session: String?
    package var app: String?
    package var build: String?
    package init(session: String? = nil, app: String? = nil, build: String? = nil) {
        self.session = session; self.app = app; self.build = build
    }
}

/// Reads sessions, findings and file problems back (read-only SQL, usable on a read-only connection).
package final class DatabaseReader {
    private let db: any SQLReadConnection

    package init(db: any SQLReadConnection) { self.db = db }

    /// The WHERE clause of a session filter over `sessions` (parameters ?1, ?2, ?3). The
    /// session is a whole id: a prefix is resolved first (`sessions(matching:)`).
    static let filterClause = "(CAST(?1 AS TEXT) IS NULL OR sid = ?1) AND (CAST(?2 AS TEXT) IS NULL OR app = ?2) AND (CAST(?3 AS TEXT) IS NULL OR build = ?3)"

    /// Session ids that start with `prefix`, ignoring case, in order; at most `limit`.
    package func sessions(matching prefix: String, limit: Int) throws -> [String] {
        let q = try db.query("""
            SELECT sid FROM sessions WHERE substr(lower(sid), 1, length(?1)) = lower(?1) ORDER BY sid LIMIT ?2
            """)
        try q.bind([.text(prefix), .int(Int64(limit))])
        var out: [String] = []
        while try q.step() { out.append(q.text(0) ?? "") }
        return out
    }

    /// The number of sessions in the database.
    package func sessionCount() throws -> Int { Int(try db.scalarInt("SELECT count(*) FROM sessions") ?? 0) }

    /// Whether a controller of class `name` is in any session: a `--class` naming none is a
    /// typo, which must not pass a gate as "No findings.".
    package func knowsClass(_ name: String) throws -> Bool {
        let q = try db.query("SELECT 1 FROM instances_v WHERE class = ?1 LIMIT 1")
        try q.bind([.text(name)])
        return try q.step()
    }

    /// Class names of the database (at most `limit`, in order), to suggest the closest to a typo.
    package func classNames(limit: Int) throws -> [String] {
        try texts("SELECT DISTINCT class FROM instances_v WHERE class IS NOT NULL ORDER BY class LIMIT ?1", [.int(Int64(limit))])
    }

    /// A column of `sessions` that a filter names (`--app`, `--build`).
    package enum SessionField: String, Sendable { case app, build }

    /// Whether any session has `value` as its `field`: a `--app` or `--build` naming none is a
    /// typo, told apart from known values that select nothing together.
    package func knows(_ field: SessionField, _ value: String) throws -> Bool {
        let q = try db.query("SELECT 1 FROM sessions WHERE \(field.rawValue) = ?1 LIMIT 1")
        try q.bind([.text(value)])
        return try q.step()
    }

    /// The values of `field` in the database (at most `limit`, in order), to suggest the closest to a typo.
    package func values(of field: SessionField, limit: Int) throws -> [String] {
        let column = field.rawValue
        return try texts("SELECT DISTINCT \(column) FROM sessions WHERE \(column) IS NOT NULL ORDER BY \(column) LIMIT ?1",
                         [.int(Int64(limit))])
    }

    /// The controllers (`vc`) of session `sid` (at most `limit`, in order), to suggest the closest to a typo.
    package func controllers(sid: String, limit: Int) throws -> [String] {
        try texts("SELECT DISTINCT vc FROM instances_v WHERE sid = ?1 ORDER BY vc LIMIT ?2", [.text(sid), .int(Int64(limit))])
    }

    /// The non-null texts of the first column of `sql`.
    private func texts(_ sql: String, _ parameters: [SQLValue]) throws -> [String] {
        let q = try db.query(sql)
        try q.bind(parameters)
        var out: [String] = []
        while try q.step() { if let text = q.text(0) { out.append(text) } }
        return out
    }

    private func bind(_ filter: SessionFilter, _ q: any SQLQuery) {
        q.bind(filter.session, at: 1)
        q.bind(filter.app, at: 2)
        q.bind(filter.build, at: 3)
    }

    package func sessions(_ filter: SessionFilter = SessionFilter()) throws -> [SessionInfo] {
        var out: [SessionInfo] = []
        try forEachSession(filter) { out.append($0) }
        return out
    }

    /// The sessions the filter selects, in listing order, one at a time.
    package func forEachSession(_ filter: SessionFilter = SessionFilter(), _ body: (SessionInfo) throws -> Void) throws {
        let q = try db.query("""
            SELECT id, sid, app, app_version, build, device, os, os_version, sdk, wall, events, lost_events,
                   first_t, last_t, end_reason, dirty, record_conflicts
            FROM sessions WHERE \(Self.filterClause) ORDER BY wall, sid
            """)
        bind(filter, q)
        while try q.step() {
            try body(SessionInfo(
                id: q.int(0), sid: q.text(1) ?? "", app: q.text(2), appVersion: q.text(3), build: q.text(4),
                device: q.text(5), os: q.text(6), osVersion: q.text(7), sdk: q.text(8), wall: q.text(9),
                events: Int(q.int(10)), lostEvents: Int(q.int(11)), firstT: q.optionalInt(12), lastT: q.optionalInt(13),
                endReason: q.text(14), dirty: q.int(15) != 0, recordConflicts: Int(q.int(16))))
        }
    }

    /// The extension point is the kept session record's `extension` key, which the events
    /// table keeps in that record's `attrs` (one look-up by key).
    private var selectMetadataStatement: (any SQLQuery)?
    private func selectMetadata() throws -> any SQLQuery {
        if let selectMetadataStatement { return selectMetadataStatement }
        // A look-up by key: the analysis reads one a session.
        let q = try db.lookup("""
        SELECT s.sid, s.app, s.app_version, s.build, s.os, s.os_version, s.sdk, s.device, s.record_seq,
               \(db.jsonText(db.eventValue(.attrs, session: "s.id", seq: "s.record_seq"), key: "extension"))
        FROM sessions s WHERE s.id = ?
        """)
        selectMetadataStatement = q
        return q
    }

    /// What the session record of session `id` said (the rules need the SDK and OS versions).
    package func sessionMetadata(_ id: Int64) throws -> SessionMetadata {
        let q = try selectMetadata()
        q.reset()
        // Reset after reading: a statement left on a row keeps its read transaction open.
        defer { q.reset() }
        q.bind(id, at: 1)
        guard try q.step() else { return SessionMetadata(sid: "") }
        var m = SessionMetadata(sid: q.text(0) ?? "")
        m.app = q.text(1); m.appVersion = q.text(2); m.build = q.text(3); m.osName = q.text(4)
        m.osVersion = q.text(5); m.sdk = q.text(6); m.device = q.text(7); m.recordSeq = q.optionalInt(8)
        m.extensionPoint = q.text(9)
        return m
    }

    /// Stored findings of every analysed (not dirty) session the filter selects, in one query.
    package func findings(_ filter: SessionFilter) throws -> [Finding] {
        try findings(where: "session_id IN (SELECT id FROM sessions WHERE dirty = 0 AND \(Self.filterClause))",
                     [filter.session.map { .text($0) } ?? .null, filter.app.map { .text($0) } ?? .null,
                      filter.build.map { .text($0) } ?? .null])
    }

    /// viewIsAppearing → viewDidAppear gaps (ns) per class and animation of completed,
    /// non-interactive, foreground appearances of the analysed sessions the filter selects.
    package func gaps(_ filter: SessionFilter) throws -> [GapSeries: [Int64]] {
        // By class id first (no String per appearance: there are millions), names after.
        var byClass: [Int64: [Int64]] = [:]
        try forEachCountedGap(filter) { cls, animated, _, gap in
            // Class id times two, plus one when animated: one dictionary look-up per row.
            byClass[cls * 2 + (animated ? 1 : 0), default: []].append(gap)
        }
        let name = try classNames()
        var gaps: [GapSeries: [Int64]] = [:]
        for (key, values) in byClass { gaps[GapSeries(cls: try name(key >> 1), animated: key & 1 == 1), default: []] += values }
        return gaps
    }

    /// Calls `body` with each gap the statistics count (see `gaps`), in session order: its
    /// instance's class id (-1 when unknown), whether it was animated, its session id, the gap
    /// in ns. The class comes from a second stream over the instances in the same session
    /// order, a session's at a time (a join looked each one up: 0.18 s of 0.34 on 10 M events).
    package func forEachCountedGap(_ filter: SessionFilter,
                           _ body: (_ cls: Int64, _ animated: Bool, _ session: Int64, _ gap: Int64) throws -> Void) throws {
        let selected = "SELECT id FROM sessions WHERE dirty = 0 AND \(Self.filterClause)"
        let q = try db.query(db.countedGapsSQL(sessions: selected))
        bind(filter, q)
        let instances = try db.query("""
            SELECT session, vc, since, cls FROM \(db.relation(.instances)) WHERE session IN (\(selected)) ORDER BY session
            """)
        bind(filter, instances)
        var pending = try instances.step()
        var session: Int64 = .min
        var classOf: [InstanceID: Int64] = [:]
        while try q.step() {
            if q.int(0) != session {
                session = q.int(0)
                classOf.removeAll(keepingCapacity: true)
                while pending && instances.int(0) < session { pending = try instances.step() }
                while pending && instances.int(0) == session {
                    if let cls = instances.optionalInt(3) { classOf[InstanceID(vc: instances.int(1), since: instances.int(2))] = cls }
                    pending = try instances.step()
                }
            }
            try body(classOf[InstanceID(vc: q.int(1), since: q.int(2))] ?? -1, q.optionalInt(3) == 1, session, q.int(4))
        }
    }

    /// The name of a class id, looked up once each ("?" for -1 or an id `strings` lacks).
    package func classNames() throws -> (Int64) throws -> String {
        let name = try db.query("SELECT text FROM strings WHERE id = ?")
        var names: [Int64: String] = [:]
        return { cls in
            if let known = names[cls] { return known }
            name.reset()
            name.bind(cls, at: 1)
            var text = "?"
            if cls >= 0, try name.step() { text = name.text(0) ?? "?" }
            names[cls] = text
            return text
        }
    }

    /// An instance within its session (the gap statistics' look-up).
    private struct InstanceID: Hashable {
        package var vc: Int64, since: Int64
    }

    private func findings(where clause: String, _ bindings: [SQLValue]) throws -> [Finding] {
        let cursor = try FindingCursor(db, where: clause, bindings, orderBy: "t, rule, id")
        var out: [Finding] = []
        while let row = try cursor.next() { out.append(row.finding) }
        return out
    }

    /// The stored findings of the sessions with these row ids, by session, each session's by
    /// t, rule and row id. A report reads them a few hundred sessions at a time rather than
    /// sorting every finding in one query (SQLite's sorter holds its rows in memory here:
    /// `temp_store = MEMORY`), so what it holds stays bounded (issue 25).
    package func findings(ofSessions ids: [Int64]) throws -> [Int64: [Finding]] {
        guard !ids.isEmpty else { return [:] }
        let cursor = try FindingCursor(db, where: "session_id IN (\(ids.map(String.init).joined(separator: ",")))", [],
                                       orderBy: "session_id, t, rule, id")
        var out: [Int64: [Finding]] = [:]
        while let row = try cursor.next() { out[row.session, default: []].append(row.finding) }
        return out
    }

    /// The events and findings stored for `sessions` (their model's counts): up to
    /// `countedByID` sessions by their ids, so an ingest of one file into a large database (a
    /// CI worker's upload) reads its own sessions, not the whole tables; more in two passes
    /// over the tables rather than a query per session.
    package func storedCounts(of sessions: SessionSet, byIDUpTo limit: Int = countedByID) throws -> (events: Int, findings: Int) {
        guard sessions.count > 0 else { return (0, 0) }
        if sessions.count <= limit {
            let ids = sessions.ids.map(String.init).joined(separator: ",")
            let events = try db.scalarInt("SELECT coalesce(sum(events), 0) FROM sessions WHERE id IN (\(ids))") ?? 0
            let findings = try db.scalarInt("SELECT count(*) FROM findings WHERE session > 0 AND session IN (\(ids))") ?? 0
            return (Int(events), Int(findings))
        }
        var events = 0, findings = 0
        let rows = try db.query("SELECT id, events FROM sessions")
        while try rows.step() { if sessions.contains(rows.int(0)) { events += Int(rows.int(1)) } }
        let found = try db.query("SELECT session, count(*) FROM findings WHERE session > 0 GROUP BY session")
        while try found.step() { if sessions.contains(found.int(0)) { findings += Int(found.int(1)) } }
        return (events, findings)
    }

    /// Sessions up to which `storedCounts` reads by id.
    package static let countedByID = 1000

    /// What the whole database holds, whichever runs loaded it: what `ingest` reports beside
    /// the numbers of its own run.
    package func totals() throws -> DatabaseTotals {
        let rows = try db.query("SELECT count(*), coalesce(sum(events), 0) FROM sessions")
        guard try rows.step() else { return DatabaseTotals() }
        let sessions = Int(rows.int(0)), events = Int(rows.int(1))
        let found = try db.query("SELECT count(*), coalesce(sum(CASE WHEN session > 0 THEN 1 ELSE 0 END), 0) FROM findings")
        guard try found.step() else { return DatabaseTotals(sessions: sessions, events: events) }
        let onSessions = Int(found.int(1))
        return DatabaseTotals(sessions: sessions, events: events, sessionFindings: onSessions,
                              fileFindings: Int(found.int(0)) - onSessions)
    }

    /// The settings the stored findings were built with.
    package func storedSettingsText() throws -> String? {
        try db.scalarText("SELECT value FROM meta WHERE key = 'rule_settings'")
    }

    /// Problems per file and kind, for LC904.
    package func fileProblems() throws -> [(Int64, RejectedLinesRule.FileProblems)] {
        // The app of the file's sessions, when they have exactly one.
        let files = try db.query("""
            SELECT f.id, f.path, f.damage,
                   (SELECT CASE WHEN count(DISTINCT s.app) = 1 AND count(*) = count(s.app) THEN min(s.app) END
                    FROM file_sessions fs JOIN sessions s ON s.id = fs.session WHERE fs.file = f.id)
            FROM files f WHERE f.rejects > 0 OR f.conflicts > 0 OR f.damage IS NOT NULL ORDER BY f.id
            """)
        // In the order they were stored (SQLite's index on file gives it without a sort): a
        // file of millions of rejected lines sorted by line took a gigabyte of SQLite's memory
        // and 40 s of every later command. Rows come mostly in line order, not always (a
        // PostgreSQL batch stores its NUL lines first): what a read in line order told is
        // rebuilt below from each kind's and reason's lowest line.
        let rows = try db.query("SELECT kind, reason, line FROM rejects WHERE file = ? ORDER BY id")
        // Each distinct reason is classified and grouped once (a file's rejects repeat a few).
        var classified: [String: (kind: String, grouped: String)] = [:]
        var out: [(Int64, RejectedLinesRule.FileProblems)] = []
        while try files.step() {
            let id = files.int(0)
            rows.reset()
            rows.bind(id, at: 1)
            var kinds: [RejectedLinesRule.Problems] = []
            var reasonCounts: [[String: Int]] = []
            var reasonFirstLines: [[String: Int64]] = []
            func add(_ rowKind: String, _ reason: String, line: Int64?) {
                let key = rowKind + "\u{0}" + reason
                let (kind, grouped) = classified[key] ?? {
                    let made = (kind: RejectedLinesRule.kind(rowKind, reason), grouped: RejectedLinesRule.group(reason))
                    if classified.count >= 10_000 { classified.removeAll(keepingCapacity: true) }
                    classified[key] = made
                    return made
                }()
                var i = kinds.firstIndex { $0.kind == kind } ?? -1
                if i < 0 {
                    kinds.append(RejectedLinesRule.Problems(kind: kind, count: 0, reasons: [], lines: []))
                    reasonCounts.append([:]); reasonFirstLines.append([:])
                    i = kinds.count - 1
                }
                kinds[i].count += 1
                reasonCounts[i][grouped, default: 0] += 1
                // No line sorts first, as SQLite sorts NULL.
                reasonFirstLines[i][grouped] = min(reasonFirstLines[i][grouped] ?? .max, line ?? .min)
                // The kind's 20 lowest line numbers, in order (rows come mostly in line order).
                if let line, kinds[i].lines.count < 20 || line < kinds[i].lines.last! {
                    if kinds[i].lines.count == 20 { kinds[i].lines.removeLast() }
                    kinds[i].lines.insert(line, at: kinds[i].lines.firstIndex { $0 > line } ?? kinds[i].lines.endIndex)
                }
            }
            var sawDamage = false
            while try rows.step() {
                let rowKind = rows.text(0) ?? "line"
                sawDamage = sawDamage || rowKind == "damage"
                add(rowKind, rows.text(1) ?? "", line: rows.optionalInt(2))
            }
            // Most common first; of equal counts, the one met first in line order.
            for i in kinds.indices {
                let first = reasonFirstLines[i]
                kinds[i].reasons = reasonCounts[i].map { ($0.key, $0.value) }
                    .sorted { ($1.1, first[$0.0]!) < ($0.1, first[$1.0]!) }
            }
            // By first line (the lowest of its reasons'), as a read in line order met them.
            let firstLines = reasonFirstLines.map { $0.values.min()! }
            kinds = kinds.indices.sorted { (firstLines[$0], $0) < (firstLines[$1], $1) }.map { kinds[$0] }
            if !sawDamage, let damage = files.text(2) {
                add("damage", damage, line: nil)
                kinds[kinds.count - 1].reasons = [(RejectedLinesRule.group(damage), 1)]
            }
            out.append((id, RejectedLinesRule.FileProblems(path: files.text(1) ?? "?", kinds: kinds, app: files.text(3))))
        }
        return out
    }


}

import Foundation

/// The database's contents in numbers (`DatabaseReader.totals`).
package struct DatabaseTotals: Sendable, Equatable {
    package var sessions = 0
    package var events = 0
    package var sessionFindings = 0
    package var fileFindings = 0
}

/// Stored findings read one at a time, each with its session's row id (0 for a file's).
package final class FindingCursor {
    private let q: any SQLQuery

    init(_ db: any SQLReadConnection, where clause: String, _ bindings: [SQLValue], orderBy: String) throws {
        q = try db.query("""
            SELECT rule, session, vc, since, class, t, message, evidence, confidence, file, detail,
                   identity_key, identity, app, build, device, session_id
            FROM findings_v WHERE \(clause) ORDER BY \(orderBy)
            """)
        try q.bind(bindings)
    }

    /// The next finding, nil after the last.
    package func next() throws -> (session: Int64, finding: Finding)? {
        while try q.step() {
            guard let rule = q.text(0).flatMap(RuleCatalog.info) else { continue }
            return (q.optionalInt(16) ?? 0,
                    Finding(stored: rule, session: q.text(1), vc: q.text(2), since: q.optionalInt(3), cls: q.text(4),
                            t: q.optionalInt(5), message: q.text(6) ?? "", evidence: Self.parseEvidence(q.text(7) ?? "[]"),
                            confidence: q.text(8) ?? "high", file: q.text(9),
                            detail: q.text(10).flatMap(DetailValue.decode) ?? [:],
                            identityKey: q.text(11) ?? "", identity: q.text(12) ?? "",
                            app: q.text(13), build: q.text(14), device: q.text(15)))
        }
        q.reset()
        return nil
    }

    static func parseEvidence(_ text: String) -> [Int64] {
        text.trimmingCharacters(in: ["[", "]", " "]).split(separator: ",").compactMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
    }
}
