import LCTraceFormat
import LCTraceModel

/// The stored facts a timeline of one session is drawn from: its instances, appearance cycles
/// and containment edges as the analysis stored them, and the raw events that draw arrows and
/// marks. Plain values, so that a model rebuilt in memory gives the same rows
/// (`TimelineRows(model:)`) and the timeline never knows where they came from.
package struct TimelineRows: Sendable {
    /// An `instances` row, with the time of its first event (the row has only its seq).
    package struct Instance: Sendable, Equatable {
        package var key: InstanceKey
        package var cls: String?
        package var firstT: Int64
        package var endSeq: Int64?
        package var endT: Int64?
        /// `deinit` or `reused`; nil while alive at the end.
        package var endHow: String?
        /// The id of the controller that presented it.
        package var presenter: String?
        package var release: ReleaseRow?

        package init(key: InstanceKey, cls: String? = nil, firstT: Int64, endSeq: Int64? = nil, endT: Int64? = nil,
                     endHow: String? = nil, presenter: String? = nil, release: ReleaseRow? = nil) {
            self.key = key; self.cls = cls; self.firstT = firstT; self.endSeq = endSeq; self.endT = endT
            self.endHow = endHow; self.presenter = presenter; self.release = release
        }
    }

    /// A release that was not cancelled. `how` stays text: a new kind of release needs no code here.
    package struct ReleaseRow: Sendable, Equatable {
        package var seq: Int64
        package var t: Int64
        package var how: String

        package init(seq: Int64, t: Int64, how: String) {
            self.seq = seq; self.t = t; self.how = how
        }
    }

    /// An `appearances` row.
    package struct Cycle: Sendable, Equatable {
        package var instance: InstanceKey
        package var willSeq: Int64
        package var willT: Int64
        package var isT: Int64?
        package var didT: Int64?
        package var willDisappearT: Int64?
        package var didDisappearT: Int64?
        package var animated: Bool?
        package var interactive: Bool
        package var outcome: String
        package var ending: String

        package init(instance: InstanceKey, willSeq: Int64, willT: Int64, isT: Int64? = nil, didT: Int64? = nil,
                     willDisappearT: Int64? = nil, didDisappearT: Int64? = nil, animated: Bool? = nil,
                     interactive: Bool, outcome: String, ending: String) {
            self.instance = instance; self.willSeq = willSeq; self.willT = willT; self.isT = isT; self.didT = didT
            self.willDisappearT = willDisappearT; self.didDisappearT = didDisappearT; self.animated = animated
            self.interactive = interactive; self.outcome = outcome; self.ending = ending
        }
    }

    /// A `containment` row.
    package struct Edge: Sendable, Equatable {
        package var child: InstanceKey
        package var parent: String
        package var parentSince: Int64?
        package var addSeq: Int64
        package var addT: Int64
        package var removeSeq: Int64?
        package var removeT: Int64?

        package init(child: InstanceKey, parent: String, parentSince: Int64? = nil, addSeq: Int64, addT: Int64,
                     removeSeq: Int64? = nil, removeT: Int64? = nil) {
            self.child = child; self.parent = parent; self.parentSince = parentSince; self.addSeq = addSeq
            self.addT = addT; self.removeSeq = removeSeq; self.removeT = removeT
        }
    }

    package var instances: [Instance] = []
    package var cycles: [Cycle] = []
    package var edges: [Edge] = []
    /// Events that draw arrows and marks (presentations, navigation, background), in seq order.
    package var events: [TraceEvent] = []
    /// Instances the session has in all (the rows may be those of a window only).
    package var totalInstances = 0

    package init() {}
}

/// A span of a session's clock, in nanoseconds, both ends included.
package struct TimeWindow: Sendable, Hashable {
    package var start: Int64
    package var end: Int64
    package init(start: Int64, end: Int64) { self.start = start; self.end = end }
    /// end - start (clamped: a trace's times may span the whole of Int64).
    package var duration: Int64 { end.minusClamped(start) }
    /// True when [a, b] (b nil: still open) meets the window.
    package func overlaps(_ a: Int64, _ b: Int64?) -> Bool { a <= end && (b ?? Int64.max) >= start }
    package func contains(_ t: Int64) -> Bool { t >= start && t <= end }
}

/// Read-only SQL for timelines and exports: one session's model rows and events, limited to a
/// window of time where one is given (a long session is never read whole for a window of it).
package final class TimelineQuery {
    private let db: any SQLReadConnection
    private let session: Int64
    private let sid: String
    /// True when `t` never decreases as `seq` grows in this session (its analysis found no
    /// LC903): a window of time is then a range of seqs, which the primary key reads directly,
    /// instead of a scan of the whole session for every window (the HTML report of a 5 M-event
    /// session read it whole twice per example drawn). Set by whoever knows the facts' origin.
    package var clockNeverGoesBack = false
    /// The seqs of windows already bisected (a timeline reads its window several times).
    private var seqRanges: [TimeWindow: SeqRange] = [:]
    private var instanceTotal: Int?
    private var backgroundIDs: (enter: [Int64], leave: [Int64])?
    /// The first-at-or-after look-ups, by how many seqs they take (1, or `probes`).
    private var firstAtOrAfter: [Int: any SQLQuery] = [:]

    /// The seq, t and name id of every event of the session, in seq order, read once when it
    /// has at most `indexedEvents`: `seqRange`'s bisection and `openBackground`'s look-backs
    /// then run in memory instead of as a few hundred look-ups a report (on PostgreSQL's
    /// blocks each look-up unnests a block or two: the HTML report on 10 M events spent 1.9 s
    /// of server time in them). Nil until read; `.none` inside when the session is longer
    /// or the backend's look-ups are cheaper (`SQLReadConnection.searchIndexLimit`).
    private var seqIndex: SeqIndex??
    struct SeqIndex {
        var seqs: [Int64] = [], ts: [Int64] = [], evs: [Int64] = []
        /// The position of the first seq at or after `seq`.
        func lowerBound(_ seq: Int64) -> Int {
            var lo = 0, hi = seqs.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if seqs[mid] < seq { lo = mid + 1 } else { hi = mid }
            }
            return lo
        }
    }
    /// Events past which a session is searched by look-ups (24 bytes an event in memory).
    package lazy var indexedEvents = db.searchIndexLimit

    private func index() throws -> SeqIndex? {
        if let seqIndex { return seqIndex }
        seqIndex = .some(nil)
        // The stored count first: a long session is not read to find out (a dirty session's
        // count may be behind: the LIMIT bounds it).
        guard indexedEvents > 0, try db.scalarInt("SELECT events FROM sessions WHERE id = ?1", [.int(session)]) ?? 0 <= Int64(indexedEvents) else {
            return nil
        }
        var index = SeqIndex()
        let q = try db.query("""
            SELECT seq, t, ev FROM \(db.events(session: "?1", from: nil, through: nil, firstOnly: false)) AS r
            ORDER BY seq LIMIT \(indexedEvents + 1)
            """)
        defer { q.reset() }
        q.bind(session, at: 1)
        while try q.step() {
            index.seqs.append(q.int(0)); index.ts.append(q.int(1)); index.evs.append(q.int(2))
        }
        guard index.seqs.count <= indexedEvents else { return nil }
        seqIndex = .some(index)
        return index
    }

    /// Events that begin or end a background period.
    static let backgroundKinds: [EventKind] = [
        .sceneDidEnterBackground, .appDidEnterBackground,
        .sceneWillEnterForeground, .appWillEnterForeground, .sceneDidBecomeActive, .appDidBecomeActive,
    ]
    /// Events that draw arrows and marks on a timeline: presentations, navigation, views
    /// moving between hierarchies, and what the background periods are made of.
    static let markedKinds: [EventKind] = [.present, .dismiss, .push, .pop, .viewAttached, .viewDetached]
        + backgroundKinds

    package init(db: any SQLReadConnection, session: Int64, sid: String) {
        self.db = db
        self.session = session
        self.sid = sid
    }

    /// The t of the event `seq`, nil when the session has no such event.
    package func eventTime(seq: Int64) throws -> Int64? {
        try db.scalarInt("SELECT \(db.eventValue(.t, session: "?1", seq: "?2"))", [.int(session), .int(seq)])
    }

    /// True when the session has a stored finding of rule `rule`.
    package func hasFinding(rule: String) throws -> Bool {
        try db.scalarInt("SELECT 1 FROM findings WHERE session = ?1 AND rule = ?2 LIMIT 1", [.int(session), .text(rule)]) != nil
    }

    /// Every instance of controller id `vc`, in order.
    package func instances(vc: String) throws -> [TimelineRows.Instance] {
        try instances(where: "i.vc = (SELECT id FROM strings WHERE text = ?2)", [.int(session), .text(vc)])
    }

    /// The stored model rows that meet `window` (all of them without one) and its marked
    /// events. The rows are a superset of what meets the window; the timeline trims them.
    package func rows(window: TimeWindow?) throws -> TimelineRows {
        var rows = TimelineRows()
        rows.instances = try instances(window: window)
        rows.cycles = try cycles(window: window)
        rows.edges = try edges(window: window)
        rows.events = try markedEvents(window: window)
        rows.totalInstances = try instanceCount()
        return rows
    }

    /// Instances the session has in all (counted once).
    package func instanceCount() throws -> Int {
        if let instanceTotal { return instanceTotal }
        let n = Int(try db.scalarInt("SELECT count(*) FROM \(db.relation(.instances)) WHERE session = ?", [.int(session)]) ?? 0)
        instanceTotal = n
        return n
    }

    /// The marked events in `window` (all without one), in seq order. Background and
    /// foreground events come from the session's start: a window may open in the background.
    /// A session whose events changed since its analysis needs only these: its model is
    /// rebuilt in memory.
    package func markedEvents(window: TimeWindow?) throws -> [TraceEvent] {
        var out: [TraceEvent] = []
        try forEachMarkedEvent(window: window) { out.append($0) }
        return out
    }

    /// Calls `body` with each of the marked events `markedEvents(window:)` returns, one row at
    /// a time (a long session has millions: a timeline of a controller's whole life or an
    /// export holds none of them). When the clock never goes back, the window's seqs are read
    /// through the primary key, and of the background events before them only the one that
    /// leaves the window opening in the background, if any (the others end before it: a
    /// timeline draws nothing of them).
    package func forEachMarkedEvent(window: TimeWindow?, _ body: (TraceEvent) throws -> Void) throws {
        func list(_ kinds: [EventKind]) -> String { kinds.map { "'\($0.rawValue)'" }.joined(separator: ",") }
        let names = list(Self.markedKinds), background = list(Self.backgroundKinds)
        var seqs = (from: Int64.min, through: Int64.max)
        if let window, let range = try seqRange(window) {
            if let open = try openBackground(before: range) { try body(open) }
            guard let inside = range.inside else { return }
            seqs = inside
        }
        try forEach("""
            SELECT e.seq, e.t, n.text, v.text, o.text, e.flags, d.text
            FROM \(db.events(session: "?1", from: "?4", through: "?5", firstOnly: false)) e JOIN strings n ON n.id = e.ev
            LEFT JOIN strings v ON v.id = e.vc LEFT JOIN strings o ON o.id = e.other LEFT JOIN strings d ON d.id = e.detail
            WHERE e.session = ?1 AND e.seq >= ?4 AND e.seq <= ?5 AND e.ev IN (SELECT id FROM strings WHERE text IN (\(names)))
              AND (CAST(?2 AS BIGINT) IS NULL OR e.t <= ?3) AND (CAST(?2 AS BIGINT) IS NULL OR e.t >= ?2 OR n.text IN (\(background)))
            ORDER BY e.seq
            """, window: window, [.int(seqs.from), .int(seqs.through)],
            few: Self.isFew(seqs), markedEvent, body)
    }

    /// A seq range of at most `lookUpRows` seqs (none of the whole session's `Int64.min` …
    /// `Int64.max`).
    static func isFew(_ seqs: (from: Int64, through: Int64)) -> Bool {
        let (span, overflow) = seqs.through.subtractingReportingOverflow(seqs.from)
        return !overflow && span >= 0 && span < lookUpRows
    }

    private func markedEvent(_ q: any SQLQuery) -> TraceEvent {
        TraceEvent(sid: sid, seq: q.int(0), t: q.int(1), name: q.text(2) ?? "", vc: q.text(3), other: q.text(4),
                   flags: EventFlags(rawValue: q.int(5)), detail: q.text(6))
    }

    /// Where a window's events are among the session's seqs, when the clock never goes back.
    struct SeqRange {
        /// The seqs of the events in the window, both ends included; nil when it has none.
        var inside: (from: Int64, through: Int64)?
        /// The events before the window and not after its end (the background ones among them
        /// count): those below `seq`, or up to it when `included`; nil when there are none.
        var before: (seq: Int64, included: Bool)?
    }

    /// Where the events of `window` are when the clock never goes back (nil when it may): from
    /// the first event at or after its start through the last at or before its end, each found
    /// by bisection over the session's seqs, one primary-key look-up a step.
    private func seqRange(_ window: TimeWindow) throws -> SeqRange? {
        guard clockNeverGoesBack else { return nil }
        if let known = seqRanges[window] { return known }
        let index = try self.index()
        guard let first = try event(atOrAfter: .min)?.seq,
              let last = try index.map({ $0.seqs.last }) ?? db.scalarInt("SELECT seq FROM \(db.relation(.events)) WHERE session = ?1 ORDER BY seq DESC LIMIT 1",
                                                                          [.int(session)]),
              !last.subtractingReportingOverflow(first).overflow else { return nil }
        // The first event later than `t` (or at `t`): t never decreases, so it is the first
        // at or after the lowest seq whose next event is.
        func firstLater(than t: Int64, orAt: Bool) throws -> (seq: Int64, t: Int64)? {
            func later(_ e: (seq: Int64, t: Int64)?) -> Bool { e.map { orAt ? $0.t >= t : $0.t > t } ?? false }
            guard later(try event(atOrAfter: last)) else { return nil }
            // The lowest seq in lo…hi whose next event is later: `probes` of them looked at
            // in one statement a step (a server's round trips: 5 steps for 6,000 seqs, not 13).
            var lo = first, hi = last
            while lo < hi {
                let span = hi - lo
                let step = span / Int64(Self.probes + 1)
                let points = step == 0 ? Array((lo..<hi).prefix(Self.probes))
                                       : (1...Self.probes).map { lo + step * Int64($0) }
                let found = try events(atOrAfter: points)
                if let j = points.indices.first(where: { later(found[$0]) }) {
                    hi = points[j]
                    if j > 0 { lo = points[j - 1] + 1 }
                } else {
                    lo = points.last! + 1
                }
            }
            return try event(atOrAfter: lo)
        }
        let start = try firstLater(than: window.start, orAt: true)?.seq
        // The last event at or before the window's end.
        var end: Int64? = last
        if let after = try firstLater(than: window.end, orAt: false) {
            if let index {
                let below = index.lowerBound(after.seq)
                end = below > 0 ? index.seqs[below - 1] : nil
            } else {
                end = try db.scalarInt("""
                    SELECT seq FROM \(db.events(session: "?1", from: nil, through: "?2", firstOnly: false)) AS r
                    WHERE seq < ?2 ORDER BY seq DESC LIMIT 1
                    """, [.int(session), .int(after.seq)])
            }
        }
        var range = SeqRange()
        if let end {
            if let start, start <= end {
                range.inside = (start, end)
                range.before = (start, false)
            } else {
                range.before = (end, true)
            }
        }
        seqRanges[window] = range
        return range
    }

    /// Seqs a step of `seqRange`'s search looks at.
    static let probes = 7

    /// The first event at or after each of `seqs` (one, or at most `probes`: fewer are padded
    /// with the last), in one statement.
    private func events(atOrAfter seqs: [Int64]) throws -> [(seq: Int64, t: Int64)?] {
        if let index = try index() {
            return seqs.map { seq in
                let i = index.lowerBound(seq)
                return i < index.seqs.count ? (index.seqs[i], index.ts[i]) : nil
            }
        }
        let count = seqs.count == 1 ? 1 : Self.probes
        if firstAtOrAfter[count] == nil {
            let one = { (k: Int) in
                "SELECT \(k) AS k, seq, t FROM (SELECT seq, t FROM \(self.db.seqTimes(session: "?1", atOrAfter: "?\(k + 2)")) AS r\(k) ORDER BY seq LIMIT 1) AS p\(k)"
            }
            firstAtOrAfter[count] = try db.lookup((0..<count).map(one).joined(separator: " UNION ALL "))
        }
        let q = firstAtOrAfter[count]!
        defer { q.reset() }
        q.bind(session, at: 1)
        for k in 0..<count { q.bind(seqs[min(k, seqs.count - 1)], at: Int32(k + 2)) }
        var out = [(seq: Int64, t: Int64)?](repeating: nil, count: seqs.count)
        while try q.step() {
            let k = Int(q.int(0))
            if k < seqs.count { out[k] = (q.int(1), q.int(2)) }
        }
        return out
    }

    /// The seq and t of the first event at or after seq `seq`.
    private func event(atOrAfter seq: Int64) throws -> (seq: Int64, t: Int64)? {
        try events(atOrAfter: [seq])[0]
    }

    /// The event before a window (every one is at an earlier t) that put the session in the
    /// background when no foreground event followed it there: the background period the
    /// window opens in. Two look-ups, none when the database holds no event that enters the
    /// background.
    private func openBackground(before range: SeqRange) throws -> TraceEvent? {
        guard let bound = range.before else { return nil }
        if backgroundIDs == nil {
            func ids(_ kinds: [EventKind]) throws -> [Int64] {
                var out: [Int64] = []
                let q = try db.query("SELECT id FROM strings WHERE text IN (\(kinds.map { "'\($0.rawValue)'" }.joined(separator: ",")))")
                defer { q.reset() }
                while try q.step() { out.append(q.int(0)) }
                return out
            }
            let enter: [EventKind] = [.sceneDidEnterBackground, .appDidEnterBackground]
            backgroundIDs = (try ids(enter), try ids(Self.backgroundKinds.filter { !enter.contains($0) }))
        }
        guard let (enter, leave) = backgroundIDs, !enter.isEmpty else { return nil }
        func idList(_ ids: [Int64]) -> String { ids.isEmpty ? "NULL" : ids.map(String.init).joined(separator: ",") }
        let below = bound.included ? "<=" : "<"
        let q = try db.lookup("""
            SELECT e.seq, e.t, n.text, v.text, o.text, e.flags, d.text
            FROM \(db.events(session: "?1", from: "?2", through: "?3", firstOnly: false)) e JOIN strings n ON n.id = e.ev
            LEFT JOIN strings v ON v.id = e.vc LEFT JOIN strings o ON o.id = e.other LEFT JOIN strings d ON d.id = e.detail
            WHERE e.session = ?1 AND e.seq >= ?2 AND e.seq \(below) ?3 AND e.ev IN (\(idList(enter)))
            ORDER BY e.seq LIMIT 1
            """)
        defer { q.reset() }
        if let index = try self.index() {
            // In memory: the last foreground event before the bound, then the first event after
            // it that enters the background, read alone.
            let upper = bound.included ? (bound.seq == .max ? index.seqs.count : index.lowerBound(bound.seq + 1)) : index.lowerBound(bound.seq)
            let leaving = Set(leave), entering = Set(enter)
            var i = upper - 1
            while i >= 0 && !leaving.contains(index.evs[i]) { i -= 1 }
            var j = i + 1
            while j < upper && !entering.contains(index.evs[j]) { j += 1 }
            guard j < upper else { return nil }
            let seq = index.seqs[j]
            try q.bind([.int(session), .int(seq), .int(bound.included ? seq : seq + 1)])
            return try q.step() ? markedEvent(q) : nil
        }
        let left = try db.scalarInt("""
            SELECT seq FROM \(db.events(session: "?1", from: nil, through: "?2", firstOnly: false)) AS r
            WHERE seq \(below) ?2 AND ev IN (\(idList(leave)))
            ORDER BY seq DESC LIMIT 1
            """, [.int(session), .int(bound.seq)])
        // After `left` (a foreground event: at Int64.max, no event after it enters the background).
        try q.bind([.int(session), .int(left.map { $0 < .max ? $0 + 1 : $0 } ?? .min), .int(bound.seq)])
        return try q.step() ? markedEvent(q) : nil
    }

    /// Calls `body` with every event of the session in seq order (for an export's instants).
    package func forEachEvent(_ body: (TraceEvent) throws -> Void) throws {
        try PortableEventReader(db: db).forEachEvent(session: session, sid: sid, body)
    }

    /// Runs `sql` with the session as ?1, the window as ?2 (start) and ?3 (end), both NULL
    /// without one, and `more` from ?4 on, handing a value of each row to `body` as it is read
    /// (a cursor on PostgreSQL).
    /// `few`: the rows are known to be few (`lookUpRows` at most): read as a look-up.
    private func forEach<T>(_ sql: String, window: TimeWindow?, _ more: [SQLValue] = [], few: Bool = false,
                            _ row: (any SQLQuery) -> T, _ body: (T) throws -> Void) throws {
        let q = try few ? db.lookup(sql) : db.query(sql)
        defer { q.reset() }
        q.bind(session, at: 1)
        q.bind(window?.start, at: 2)
        q.bind(window?.end, at: 3)
        for (i, value) in more.enumerated() { try q.bind(value, at: Int32(4 + i)) }
        while try q.step() { try body(row(q)) }
    }

    /// The instances that meet `window` (all without one), in (since, vc) order.
    package func instances(window: TimeWindow?) throws -> [TimelineRows.Instance] {
        try instances(meeting: window.map { [$0] })
    }

    /// The instances that meet one of `windows` (all without them), in (since, vc) order.
    package func instances(meeting windows: [TimeWindow]?) throws -> [TimelineRows.Instance] {
        try instances(where: meets(windows, from: "i.first_t", to: "i.end_t", first: 2),
                      [.int(session)] + (windows ?? []).flatMap { [SQLValue.int($0.start), .int($0.end)] })
    }

    private func instances(where clause: String, _ bindings: [SQLValue]) throws -> [TimelineRows.Instance] {
        let q = try db.query("""
            SELECT v.text, i.since, c.text, coalesce(i.first_t, 0), i.end_seq, i.end_t, i.end_how, pr.text,
                   i.release_seq, i.release_t, i.release_how
            FROM (SELECT x.*, coalesce(x.init_t, \(db.eventValue(.t, session: "x.session", seq: "x.since"))) AS first_t
                  FROM \(db.relation(.instances)) x WHERE x.session = ?1) i
            JOIN strings v ON v.id = i.vc
            LEFT JOIN strings c ON c.id = i.cls LEFT JOIN strings pr ON pr.id = i.presenter
            WHERE \(clause)
            ORDER BY i.since, v.text
            """)
        try q.bind(bindings)
        var out: [TimelineRows.Instance] = []
        while try q.step() {
            var release: TimelineRows.ReleaseRow?
            if let seq = q.optionalInt(8), let t = q.optionalInt(9) { release = .init(seq: seq, t: t, how: q.text(10) ?? "?") }
            out.append(TimelineRows.Instance(
                key: InstanceKey(vc: q.text(0) ?? "", since: q.int(1)), cls: q.text(2), firstT: q.int(3),
                endSeq: q.optionalInt(4), endT: q.optionalInt(5), endHow: q.text(6), presenter: q.text(7), release: release))
        }
        return out
    }

    private func cycles(window: TimeWindow?) throws -> [TimelineRows.Cycle] {
        var out: [TimelineRows.Cycle] = []
        try forEachCycle(window: window) { out.append($0) }
        return out
    }

    /// The last seq at or before the end of one of `windows` (Int64.max when unknown): a row
    /// that meets one began by then, so its table is read through its key only so far.
    private func lastSeq(startedBy windows: [TimeWindow]?) throws -> Int64 {
        guard let windows else { return .max }
        var last = Int64.min
        for window in windows {
            guard let range = try seqRange(window) else { return .max }
            last = max(last, range.inside?.through ?? range.before?.seq ?? .min)
        }
        return last
    }

    /// SQL true for a row whose span from `from` to `to` (NULL: still open) meets one of
    /// `windows`, given from parameter `first` on as (start, end) pairs; true for every row
    /// without them.
    private func meets(_ windows: [TimeWindow]?, from: String, to: String, first: Int) -> String {
        guard let windows else { return "1 = 1" }
        guard !windows.isEmpty else { return "1 = 0" }
        return "(" + windows.indices.map { k in
            let start = first + 2 * k
            // `to` once, not twice (a view may work it out each time: a cycle's end is a sum).
            return "(\(from) <= ?\(start + 1) AND coalesce(\(to), 9223372036854775807) >= ?\(start))"
        }.joined(separator: " OR ") + ")"
    }

    /// Runs `sql` with the session as ?1, `seq` as ?2 and `windows` as (start, end) pairs from ?3 on.
    private func forEach<T>(_ sql: String, seq: Int64, windows: [TimeWindow]?, _ row: (any SQLQuery) -> T,
                            _ body: (T) throws -> Void) throws {
        let q = try db.query(sql)
        defer { q.reset() }
        try q.bind([.int(session), .int(seq)] + (windows ?? []).flatMap { [SQLValue.int($0.start), .int($0.end)] })
        while try q.step() { try body(row(q)) }
    }

    /// The appearance cycles that meet `window` (all without one) in will_seq order, one row at a time.
    package func forEachCycle(window: TimeWindow?, _ body: (TimelineRows.Cycle) throws -> Void) throws {
        try forEachCycle(meeting: window.map { [$0] }, body)
    }

    /// The appearance cycles that meet one of `windows` (all without them) in will_seq order,
    /// one row at a time.
    package func forEachCycle(meeting windows: [TimeWindow]?, _ body: (TimelineRows.Cycle) throws -> Void) throws {
        try forEach("""
            SELECT v.text, a.since, a.will_seq, a.will_t, a.is_t, a.did_t, a.will_disappear_t, a.did_disappear_t,
                   a.animated, a.interactive, a.outcome, a.ending
            FROM \(db.relation(.appearances)) a JOIN strings v ON v.id = a.vc
            WHERE a.session = ?1 AND a.will_seq <= ?2 AND \(meets(windows, from: "a.will_t", to: "a.did_disappear_t", first: 3))
            ORDER BY a.will_seq
            """, seq: try lastSeq(startedBy: windows), windows: windows, { q in
            TimelineRows.Cycle(
                instance: InstanceKey(vc: q.text(0) ?? "", since: q.int(1)), willSeq: q.int(2), willT: q.int(3),
                isT: q.optionalInt(4), didT: q.optionalInt(5), willDisappearT: q.optionalInt(6), didDisappearT: q.optionalInt(7),
                animated: q.optionalInt(8).map { $0 != 0 }, interactive: q.int(9) != 0,
                outcome: q.text(10) ?? "", ending: q.text(11) ?? "")
        }, body)
    }

    private func edges(window: TimeWindow?) throws -> [TimelineRows.Edge] {
        var out: [TimelineRows.Edge] = []
        try forEachEdge(window: window) { out.append($0) }
        return out
    }

    /// The containment edges that meet `window` (all without one) in add_seq order, one row at a time.
    package func forEachEdge(window: TimeWindow?, _ body: (TimelineRows.Edge) throws -> Void) throws {
        try forEachEdge(meeting: window.map { [$0] }, body)
    }

    /// The containment edges that meet one of `windows` (all without them) in add_seq order,
    /// one row at a time.
    package func forEachEdge(meeting windows: [TimeWindow]?, _ body: (TimelineRows.Edge) throws -> Void) throws {
        try forEach("""
            SELECT ch.text, k.child_since, pa.text, k.parent_since, k.add_seq, k.add_t, k.remove_seq, k.remove_t
            FROM \(db.relation(.containment)) k JOIN strings ch ON ch.id = k.child JOIN strings pa ON pa.id = k.parent
            WHERE k.session = ?1 AND k.add_seq <= ?2 AND \(meets(windows, from: "k.add_t", to: "k.remove_t", first: 3))
            ORDER BY k.add_seq
            """, seq: try lastSeq(startedBy: windows), windows: windows, { q in
            TimelineRows.Edge(
                child: InstanceKey(vc: q.text(0) ?? "", since: q.int(1)), parent: q.text(2) ?? "",
                parentSince: q.optionalInt(3), addSeq: q.int(4), addT: q.int(5),
                removeSeq: q.optionalInt(6), removeT: q.optionalInt(7))
        }, body)
    }
}
