import LCTraceAnalysis
import LCTraceModel
import LCTraceRules
import LCTraceStore

/// The rows of one session an export reads one at a time, in the order the table gives them:
/// a `TimelineSource`, or rows in memory (tests).
protocol SessionRowStream {
    /// Every appearance cycle in will_seq order.
    func forEachCycle(_ body: (TimelineRows.Cycle) throws -> Void) throws
    /// Every containment edge in add_seq order.
    func forEachEdge(_ body: (TimelineRows.Edge) throws -> Void) throws
    /// The marked events in `window` (all without one) in seq order.
    func forEachMarkedEvent(window: TimeWindow?, _ body: (TraceEvent) throws -> Void) throws
    /// Every event in seq order.
    func forEachEvent(_ body: (TraceEvent) throws -> Void) throws
    /// Appearance, edge and event rows handed out whole in arrays so far.
    var rowsHandedOut: Int { get }
}

/// Where one session's timeline facts come from: the stored model of an analyzed session, or,
/// for a session whose events changed since (`sessions.dirty`, whose stored rows are stale or
/// partial), its model rebuilt in memory from its events. The events themselves always come
/// from the table.
final class TimelineSource: SessionRowStream, TimelineRowReader {
    /// The session; for a rebuilt one, with the counts and times of its events (a session
    /// loaded with `--no-analyze` has none stored yet).
    package private(set) var session: SessionInfo
    package let query: TimelineQuery
    /// The rebuilt model of a dirty session, whole (rows of every batch).
    private var rebuilt: TimelineRows?
    /// The rows that meet any of several windows, read once for all (`share`).
    private var shared: (windows: Set<TimeWindow>, rows: TimelineRows)?
    /// Appearance, edge and event rows read from the table and handed out whole in arrays so
    /// far (`rows(window:)`): the ones the `forEach…` methods hand out one at a time are not
    /// counted. The tests hold an export and a controller's timeline to a bound with it.
    private(set) var rowsHandedOut = 0

    /// `progress` hears how many events of a rebuilt session have been read (every 65,536).
    package init(db: Storage, session: SessionInfo, settings: RuleSettings = RuleSettings(),
                progress: ((Int) -> Void)? = nil) throws {
        self.session = session
        query = TimelineQuery(db: db.backend.reader, session: session.id, sid: session.sid)
        if !StoredModelPolicy.storedFactsAreCurrent(session) {
            var rows = TimelineRows()
            let model = try SessionAnalysis(settings: settings).buildInMemory(
                session, source: try db.backend.readSessionSource(), batches: { rows.append($0) }, progress: progress)
            rows.append(model)
            rows.sortByKey()
            self.session.events = model.stats.events
            self.session.firstT = model.stats.firstT
            self.session.lastT = model.stats.lastT
            self.session.lostEvents = Int(model.stats.lostEvents)
            rows.totalInstances = rows.instances.count
            rebuilt = rows
            query.clockNeverGoesBack = model.stats.clockBackwardsCount == 0
        } else {
            // The analysis that stored the facts judged LC903 on every event of the session.
            let rulesMatch = StoredModelPolicy.storedRulesMatch(try db.storedSettingsText())
            query.clockNeverGoesBack = try rulesMatch && !query.hasFinding(rule: RuleCatalog.clockBackwardsID)
        }
    }

    /// True when the model was rebuilt in memory (the session changed since its analysis).
    var isRebuilt: Bool { rebuilt != nil }

    package func eventTime(seq: Int64) throws -> Int64? { try query.eventTime(seq: seq) }

    /// Every instance of controller id `vc`.
    package func instances(vc: String) throws -> [TimelineRows.Instance] {
        if let rebuilt { return rebuilt.instances.filter { $0.key.vc == vc } }
        return try query.instances(vc: vc)
    }

    /// The rows a timeline of `window` needs (the whole session without one).
    package func rows(window: TimeWindow?) throws -> TimelineRows {
        guard var rows = rebuilt else {
            let rows = try query.rows(window: window)
            rowsHandedOut += rows.cycles.count + rows.edges.count + rows.events.count
            return rows
        }
        rows.events = try query.markedEvents(window: window)
        rowsHandedOut += rows.events.count
        return rows
    }

    /// Reads once the instances, appearance cycles and containment edges that meet any of
    /// `windows`, which the timelines of those windows then take from memory: the HTML
    /// report's examples of one session read each table once, not twice per example (a scan
    /// of a long session's cycles for a window near its end). Windows wider than `widest` are
    /// left to read their own rows (a controller's whole life may be the whole session).
    func share(_ windows: [TimeWindow], widest: Int64) throws {
        let narrow = Set(windows.filter { $0.duration <= widest })
        guard rebuilt == nil, narrow.count > 1 else { return }
        // Overlapping windows read as one (the same rows: their union has no gap), so that a
        // row is tested against few of them (a cycle's end is a sum the view works out each time).
        var list: [TimeWindow] = []
        for w in narrow.sorted(by: { ($0.start, $0.end) < ($1.start, $1.end) }) {
            if let last = list.last, w.start <= last.end { list[list.count - 1].end = max(last.end, w.end) } else { list.append(w) }
        }
        var rows = TimelineRows()
        rows.instances = try query.instances(meeting: list)
        try query.forEachCycle(meeting: list) { rows.cycles.append($0) }
        try query.forEachEdge(meeting: list) { rows.edges.append($0) }
        shared = (narrow, rows)
    }

    /// The rows shared for `window`, if it is one of the windows shared.
    private func sharedRows(_ window: TimeWindow) -> TimelineRows? {
        guard let shared, shared.windows.contains(window) else { return nil }
        return shared.rows
    }

    /// The instances that meet `window` and how many the session has in all: what a timeline
    /// of it holds whole (its rows it reads one at a time, `TimelineRowReader`).
    func timelineInstances(window: TimeWindow) throws -> (instances: [TimelineRows.Instance], total: Int) {
        if let rebuilt { return (rebuilt.instances, rebuilt.totalInstances) }
        // The same rows, in the same order, as the query of the window alone gives.
        if let rows = sharedRows(window) {
            return (rows.instances.filter { window.overlaps($0.firstT, $0.endT) }, try query.instanceCount())
        }
        return (try query.instances(window: window), try query.instanceCount())
    }

    /// The appearance cycles that meet `window` in will_seq order, one at a time (a rebuilt
    /// model's all).
    func forEachCycle(window: TimeWindow, _ body: (TimelineRows.Cycle) throws -> Void) throws {
        if let rebuilt { return try rebuilt.cycles.forEach(body) }
        if let rows = sharedRows(window) {
            for c in rows.cycles where window.overlaps(c.willT, c.didDisappearT) { try body(c) }
            return
        }
        try query.forEachCycle(window: window, body)
    }

    /// The containment edges that meet `window` in add_seq order, one at a time (a rebuilt
    /// model's all).
    func forEachEdge(window: TimeWindow, _ body: (TimelineRows.Edge) throws -> Void) throws {
        if let rebuilt { return try rebuilt.edges.forEach(body) }
        if let rows = sharedRows(window) {
            for e in rows.edges where window.overlaps(e.addT, e.removeT) { try body(e) }
            return
        }
        try query.forEachEdge(window: window, body)
    }

    /// Every instance of the session, in (since, vc) order.
    func allInstances() throws -> [TimelineRows.Instance] {
        if let rebuilt { return rebuilt.instances }
        return try query.instances(window: nil)
    }

    /// Every appearance cycle of the session in will_seq order, one at a time.
    func forEachCycle(_ body: (TimelineRows.Cycle) throws -> Void) throws {
        if let rebuilt { try rebuilt.cycles.forEach(body) } else { try query.forEachCycle(window: nil, body) }
    }

    /// Every containment edge of the session in add_seq order, one at a time.
    func forEachEdge(_ body: (TimelineRows.Edge) throws -> Void) throws {
        if let rebuilt { try rebuilt.edges.forEach(body) } else { try query.forEachEdge(window: nil, body) }
    }

    /// The marked events in `window` (all without one) in seq order, one at a time: they
    /// always come from the table.
    func forEachMarkedEvent(window: TimeWindow?, _ body: (TraceEvent) throws -> Void) throws {
        try query.forEachMarkedEvent(window: window, body)
    }

    /// Every event of the session in seq order.
    package func forEachEvent(_ body: (TraceEvent) throws -> Void) throws { try query.forEachEvent(body) }
}

package extension TimelineRows {
    /// Adds the facts of a model built in memory (or of one of its batches): the same rows the
    /// analysis would store for them.
    mutating func append(_ model: SessionModel) {
        for x in model.instances {
            instances.append(Instance(
                key: x.key, cls: x.cls, firstT: x.firstT, endSeq: x.endSeq, endT: x.endT, endHow: x.end?.rawValue,
                presenter: x.presenter, release: x.release.map { ReleaseRow(seq: $0.seq, t: $0.t, how: $0.how.rawValue) }))
        }
        for c in model.cycles {
            cycles.append(Cycle(
                instance: c.instance, willSeq: c.willSeq, willT: c.willT, isT: c.isT, didT: c.didT,
                willDisappearT: c.willDisappearT, didDisappearT: c.didDisappearT, animated: c.animated,
                interactive: c.interactive, outcome: c.outcome.rawValue, ending: c.ending.rawValue))
        }
        for e in model.edges {
            edges.append(Edge(child: e.child, parent: e.parent, parentSince: e.parentSince, addSeq: e.addSeq,
                              addT: e.addT, removeSeq: e.removeSeq, removeT: e.removeT))
        }
    }

    /// The order the stored rows come in (batches hand facts out as they end, not in order).
    mutating func sortByKey() {
        instances.sort { ($0.key.since, $0.key.vc) < ($1.key.since, $1.key.vc) }
        cycles.sort { $0.willSeq < $1.willSeq }
        edges.sort { $0.addSeq < $1.addSeq }
    }
}
