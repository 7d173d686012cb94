import LCTraceModel
import LCTraceStore

/// What a timeline draws beyond the window: which instances to centre on, which to keep,
/// and how many lanes at most.
struct TimelineOptions: Sendable {
    /// Instances the timeline is about (`--vc`, or the finding it is centred on): always drawn.
    var focus: Set<InstanceKey> = []
    /// Draw only the focus instances and what relates to them: their containers and children,
    /// and the other end of their presentations and navigation (`--vc`).
    var onlyRelated = false
    /// Draw only instances of this class and their containers (`--class`).
    package var className: String?
    /// Lanes drawn at most (nil: no limit); the rest are counted in `omitted.overLimit`.
    package var maxLanes: Int? = 40
    /// Also draw instances alive in the window with nothing happening to them.
    package var showIdle = false
    /// Why the window is where it is, for the header.
    var focusDescription: String?

    package init() {}
}

/// The rows a timeline of a window reads: its instances whole, its appearance cycles, edges
/// and marked events one at a time, as often as the builder asks (a `TimelineSource`, or
/// rows in memory). Each kind comes in the order the tables give it: cycles by will_seq,
/// edges by add_seq, events by seq; a row outside the window may come too.
protocol TimelineRowReader {
    /// The instances that meet `window` (or more), and how many the session has in all.
    func timelineInstances(window: TimeWindow) throws -> (instances: [TimelineRows.Instance], total: Int)
    func forEachCycle(window: TimeWindow, _ body: (TimelineRows.Cycle) throws -> Void) throws
    func forEachEdge(window: TimeWindow, _ body: (TimelineRows.Edge) throws -> Void) throws
    /// The marked events in `window`, and the background ones before it.
    func forEachMarkedEvent(window: TimeWindow?, _ body: (TraceEvent) throws -> Void) throws
}

/// Rows already in memory (tests, a session rebuilt whole) read as a timeline reads a table's.
struct TimelineRowsReader: TimelineRowReader {
    let rows: TimelineRows

    func timelineInstances(window: TimeWindow) -> (instances: [TimelineRows.Instance], total: Int) {
        (rows.instances, rows.totalInstances)
    }
    func forEachCycle(window: TimeWindow, _ body: (TimelineRows.Cycle) throws -> Void) rethrows {
        try rows.cycles.sorted { $0.willSeq < $1.willSeq }.forEach(body)
    }
    func forEachEdge(window: TimeWindow, _ body: (TimelineRows.Edge) throws -> Void) rethrows { try rows.edges.forEach(body) }
    func forEachMarkedEvent(window: TimeWindow?, _ body: (TraceEvent) throws -> Void) rethrows { try rows.events.forEach(body) }
}

/// Turns a session's rows (stored or rebuilt) and findings into a `Timeline` of a window.
enum TimelineBuilder {
    /// `decisiveSeq`: the seq of a finding's decisive event, when known (`--around` takes it).
    package static func build(session: SessionInfo, rows: TimelineRows, findings: [Finding], window: TimeWindow,
                             options: TimelineOptions = TimelineOptions(),
                             decisiveSeq: (Finding) -> Int64? = { $0.evidence.last }) -> Timeline {
        do {
            return try build(session: session, reader: TimelineRowsReader(rows: rows), findings: findings, window: window,
                             options: options, decisiveSeq: decisiveSeq)
        } catch {
            preconditionFailure("rows in memory are read without error: \(error)")
        }
    }

    /// As `build(rows:)`, reading the rows from `reader` one at a time. Held whole: the
    /// instances of the window, and per instance what the lane choice needs (its container,
    /// how many phases and arrows it has); of the phases, containment edges and arrows, only
    /// those of the lanes drawn. So the cycles, edges and marked events are read twice: once
    /// to choose the lanes, once to draw them (a long-lived controller's `--vc` timeline spans
    /// its whole session: issue 25 item 12).
    static func build(session: SessionInfo, reader: some TimelineRowReader, findings: [Finding], window: TimeWindow,
                      options: TimelineOptions = TimelineOptions(),
                      decisiveSeq: (Finding) -> Int64? = { $0.evidence.last }) throws -> Timeline {
        let sessionSpan = TimeWindow(start: session.firstT ?? window.start, end: session.lastT ?? window.end)
        let (instances, totalInstances) = try reader.timelineInstances(window: window)
        let ids = InstanceResolver(instances)

        // Every instance that meets the window is a candidate lane, named by its row in `instances`.
        var isCandidate = [Bool](repeating: false, count: instances.count)
        var order: [Int] = []
        for (i, x) in instances.enumerated() where window.overlaps(x.firstT, x.endT) {
            isCandidate[i] = true
            order.append(i)
        }
        func candidate(_ key: InstanceKey?) -> Int? {
            guard let key, let i = ids.index(of: key), isCandidate[i] else { return nil }
            return i
        }

        // A candidate's container during the window: the last edge in force in it (as `parent(of:)`).
        var parentOf = [InstanceKey?](repeating: nil, count: instances.count)
        var lastEdgeSeq = [Int64?](repeating: nil, count: instances.count)
        try reader.forEachEdge(window: window) { e in
            guard window.overlaps(e.addT, e.removeT), let i = candidate(e.child) else { return }
            if let held = lastEdgeSeq[i], held >= e.addSeq { return }
            lastEdgeSeq[i] = e.addSeq
            let parent = ids.resolve(e.parent, since: e.parentSince, at: e.addSeq)
            parentOf[i] = parent == e.child ? nil : parent
        }
        lastEdgeSeq = []
        func presenter(_ i: Int) -> InstanceKey? {
            instances[i].presenter.flatMap { ids.resolve($0, at: instances[i].key.since) }
        }
        /// What a candidate is drawn under: its container, else its presenter.
        func host(_ i: Int) -> InstanceKey? { parentOf[i] ?? presenter(i) }
        func ancestors(of i: Int) -> [Int] {
            var out: [Int] = []
            var seen: Set<Int> = [i]
            var node = host(i)
            while let p = node, let j = candidate(p), seen.insert(j).inserted {
                out.append(j)
                node = host(j)
            }
            return out
        }
        var omitted = TimelineOmissions()
        omitted.outside = max(0, max(totalInstances, instances.count) - order.count)

        // The phases in the window, instance by instance in cycle order. Where a cycle ends may
        // depend on the instance's next cycle: such a cycle waits for it.
        func forEachSpan(_ body: (Int, TimelineSpan) -> Void) throws {
            var waiting: [Int: TimelineRows.Cycle] = [:]
            var out: [TimelineSpan] = []
            func phases(_ i: Int, _ c: TimelineRows.Cycle, next: Int64?) {
                out.removeAll(keepingCapacity: true)
                spans(c, nextWillT: next, instance: instances[i], sessionEnd: sessionSpan.end, into: &out)
                for s in out where window.overlaps(s.start, s.end) { body(i, s) }
            }
            try reader.forEachCycle(window: window) { c in
                guard let i = candidate(c.instance) else { return }
                if let previous = waiting.removeValue(forKey: i) { phases(i, previous, next: c.willT) }
                if endsAtNextCycle(c) { waiting[i] = c } else { phases(i, c, next: nil) }
            }
            for i in order { if let c = waiting[i] { phases(i, c, next: nil) } }
        }
        var phaseCount = [Int32](repeating: 0, count: instances.count)
        try forEachSpan { i, _ in phaseCount[i] += 1 }

        // A view put into a hierarchy is worth an arrow only outside containment (an orphan's
        // view in its host): inside it, the indentation already says so.
        func forEachArrow(_ body: (TimelineArrow) -> Void, event: (TraceEvent) -> Void = { _ in }) throws {
            try reader.forEachMarkedEvent(window: window) { e in
                event(e)
                guard let a = arrow(e, window: window, ids: ids) else { return }
                if a.kind == .viewAttached || a.kind == .viewDetached {
                    guard a.from != nil && candidate(a.to).flatMap({ parentOf[$0] }) != a.from else { return }
                }
                body(a)
            }
        }
        let placed = findings.compactMap { f -> TimelineFinding? in
            guard let t = f.t, window.contains(t) else { return nil }
            return TimelineFinding(finding: f, lane: f.vc.map { InstanceKey(vc: $0, since: f.since ?? -1) }, t: t,
                                   seq: decisiveSeq(f))
        }

        // What happens to each candidate in the window: idle lanes are left out unless asked for.
        var busy = [Bool](repeating: false, count: instances.count)
        for i in order {
            let x = instances[i]
            if phaseCount[i] > 0 || window.contains(x.firstT) || x.endT.map(window.contains) == true
                || x.release.map({ window.contains($0.t) }) == true { busy[i] = true }
        }
        // Arrows count towards their ends' activity, and relate them to the focus.
        let focus = Set(options.focus.compactMap { ids.index(of: $0) })
        var arrowCount = [Int32](repeating: 0, count: instances.count)
        var related = Set<Int>()
        var background = BackgroundPeriods(window: window)
        try forEachArrow({ a in
            let ends = [a.from, a.to].compactMap { $0.flatMap(ids.index(of:)) }
            for i in ends {
                busy[i] = true
                arrowCount[i] += 1
            }
            if options.onlyRelated && ends.contains(where: focus.contains) { related.formUnion(ends) }
        }, event: { background.add($0) })
        for f in placed { if let i = candidate(f.lane) { busy[i] = true } }

        // Filters: the focus and what relates to it, or one class.
        var wanted: Set<Int>
        if options.onlyRelated {
            related.formUnion(focus)
            for i in order where ancestors(of: i).contains(where: focus.contains) { related.insert(i) }
            wanted = related.filter { isCandidate[$0] }
        } else {
            wanted = Set(order)
        }
        related = []
        if let cls = options.className {
            wanted = wanted.filter { instances[$0].cls == cls || focus.contains($0) }
        }
        let lively = options.showIdle ? wanted : wanted.filter { busy[$0] || focus.contains($0) }

        // The lane limit keeps the focus, then lanes with findings, then the busiest.
        var chosen = lively
        if let limit = options.maxLanes, lively.count > limit {
            let findingLanes = Set(placed.compactMap { candidate($0.lane) })
            func rank(_ i: Int) -> (Int, Int, Int64, String) {
                (focus.contains(i) ? 0 : findingLanes.contains(i) ? 1 : 2, -Int(phaseCount[i] + arrowCount[i]),
                 instances[i].key.since, instances[i].key.vc)
            }
            chosen = []
            for i in lively.sorted(by: { rank($0) < rank($1) }) {
                let needed = [i] + ancestors(of: i).filter { !chosen.contains($0) }
                if chosen.count + needed.count > limit && !chosen.isEmpty { continue }
                chosen.formUnion(needed)
            }
            chosen.formIntersection(lively)
        }
        // Containers of a drawn lane are drawn too (the indentation needs them).
        var kept = chosen
        for i in chosen { kept.formUnion(ancestors(of: i)) }
        omitted.filtered = order.count - wanted.union(kept).count
        omitted.idle = wanted.subtracting(lively).subtracting(kept).count
        omitted.overLimit = lively.subtracting(chosen).subtracting(kept).count
        arrowCount = []
        busy = []

        // The lanes drawn, with their phases.
        var keptLanes: [InstanceKey: TimelineLane] = [:]
        for i in kept {
            let x = instances[i]
            keptLanes[x.key] = TimelineLane(
                key: x.key, cls: x.cls, depth: 0, parent: parentOf[i], presentedBy: presenter(i),
                start: x.firstT, end: x.endT, endSeq: x.endSeq, endHow: x.endHow,
                spans: [], release: x.release, focused: options.focus.contains(x.key))
        }
        try forEachSpan { i, span in
            if kept.contains(i) { keptLanes[instances[i].key]!.spans.append(span) }
        }
        let lanes = treeOrder(Set(keptLanes.keys), keptLanes, order: order.filter(kept.contains).map { instances[$0].key })
        keptLanes = [:]
        var timeline = Timeline(
            session: session, window: window, sessionSpan: sessionSpan, lanes: lanes,
            arrows: [], edges: [], findings: [], background: background.finish(sessionEnd: sessionSpan.end),
            omitted: omitted, focus: options.focusDescription)
        timeline.laneIndex = Dictionary(uniqueKeysWithValues: lanes.enumerated().map { ($1.key, $0) })
        let drawn = Set(lanes.map(\.key))
        // An arrow is drawn when its known ends are lanes (a dismissal's presenter may be unknown).
        try forEachArrow { a in
            guard (a.from.map(drawn.contains) ?? true) && (a.to.map(drawn.contains) ?? true) && (a.from ?? a.to) != nil
            else { return }
            timeline.arrows.append(a)
        }
        try reader.forEachEdge(window: window) { e in
            guard drawn.contains(e.child), let parent = ids.resolve(e.parent, since: e.parentSince, at: e.addSeq),
                  drawn.contains(parent), window.overlaps(e.addT, e.removeT) else { return }
            timeline.edges.append(TimelineEdge(parent: parent, child: e.child, addSeq: e.addSeq, addT: e.addT, removeT: e.removeT))
        }
        for f in placed {
            // A finding about an instance that is not drawn is left out (and said so); a
            // finding about the session sits on the session row.
            if let key = f.lane, !drawn.contains(key) { timeline.omitted.findings.append(f); continue }
            timeline.findings.append(f)
        }
        for f in findings where f.t.map({ !window.contains($0) }) ?? true {
            timeline.omitted.findings.append(TimelineFinding(finding: f, lane: nil, t: f.t, seq: decisiveSeq(f)))
        }
        return timeline
    }

    // MARK: Phases

    /// The phases of an instance's cycles. A cycle with no recorded end ends where the model
    /// says it did: at the next cycle (a cancelled disappearance, a broken order), at the
    /// instance's end, or at the session's end.
    static func spans(_ cycles: [TimelineRows.Cycle], instance x: TimelineRows.Instance, sessionEnd: Int64) -> [TimelineSpan] {
        var out: [TimelineSpan] = []
        for (i, c) in cycles.enumerated() {
            let next = i + 1 < cycles.count ? cycles[i + 1].willT : nil
            spans(c, nextWillT: next, instance: x, sessionEnd: sessionEnd, into: &out)
        }
        return out
    }

    /// True when where cycle `c` ends depends on the instance's next cycle (`nextWillT`).
    static func endsAtNextCycle(_ c: TimelineRows.Cycle) -> Bool {
        c.didDisappearT == nil && (c.ending == AppearanceCycle.Ending.disappearCancelled.rawValue
                                   || c.ending == AppearanceCycle.Ending.violation.rawValue)
    }

    /// The phases of one cycle, `nextWillT` the start of the instance's next cycle, if any.
    static func spans(_ c: TimelineRows.Cycle, nextWillT next: Int64?, instance x: TimelineRows.Instance,
                      sessionEnd: Int64, into out: inout [TimelineSpan]) {
        let fallback = x.endT ?? sessionEnd
        let end = c.didDisappearT ?? (endsAtNextCycle(c) ? next ?? fallback : fallback)
        func add(_ phase: AppearanceState, _ from: Int64?, _ to: Int64?) {
            guard let from else { return }
            // A clock that went backwards (LC903) never makes a phase end before it starts.
            out.append(TimelineSpan(phase: phase, start: from, end: max(from, to ?? end), cycle: c.willSeq,
                                    interactive: c.interactive))
        }
        add(.appearing, c.willT, c.didT ?? c.willDisappearT)
        add(.visible, c.didT, c.willDisappearT)
        add(.disappearing, c.willDisappearT, c.didDisappearT)
    }

    // MARK: Containment

    /// The container during the window: the last edge in force in it.
    package static func parent(of child: InstanceKey, _ edges: [TimelineRows.Edge], window: TimeWindow,
                       ids: InstanceResolver) -> InstanceKey? {
        let inForce = edges.filter { window.overlaps($0.addT, $0.removeT) }.max { $0.addSeq < $1.addSeq }
        guard let e = inForce, let parent = ids.resolve(e.parent, since: e.parentSince, at: e.addSeq), parent != child
        else { return nil }
        return parent
    }

    /// Depth-first from the roots, each level by first event; depth counts the drawn
    /// containers and presenters above a lane.
    private static func treeOrder(_ kept: Set<InstanceKey>, _ lanes: [InstanceKey: TimelineLane],
                                  order: [InstanceKey]) -> [TimelineLane] {
        func host(_ key: InstanceKey, _ link: (TimelineLane) -> InstanceKey?) -> InstanceKey? {
            guard let p = link(lanes[key]!), kept.contains(p) else { return nil }
            return p
        }
        let placed = treeOrder(order.filter(kept.contains), parent: { host($0, \.parent) },
                               presenter: { host($0, \.presentedBy) },
                               byStart: { (lanes[$0]!.start, $0) < (lanes[$1]!.start, $1) })
        return placed.map { p in
            var lane = lanes[p.node]!
            lane.depth = p.depth
            lane.underPresenter = p.underPresenter
            return lane
        }
    }

    /// The nodes of a forest in display order: depth first from the roots, each level in
    /// `byStart` order. A node hangs under its `parent` (a drawn container), else under its
    /// `presenter`; `nodes` in the order a cycle's members are drawn flat (a containment cycle,
    /// a broken trace, has no root). Iterative: a chain of any length draws.
    static func treeOrder<Node: Hashable>(_ nodes: [Node], parent: (Node) -> Node?, presenter: (Node) -> Node?,
                                          byStart: (Node, Node) -> Bool) -> [(node: Node, depth: Int, underPresenter: Bool)] {
        var children: [Node: [Node]] = [:]
        var roots: [Node] = []
        var underPresenter = Set<Node>()
        for node in nodes {
            if let p = parent(node), p != node {
                children[p, default: []].append(node)
            } else if let p = presenter(node), p != node {
                children[p, default: []].append(node)
                underPresenter.insert(node)
            } else {
                roots.append(node)
            }
        }
        var out: [(node: Node, depth: Int, underPresenter: Bool)] = []
        var placed = Set<Node>()
        func visit(_ start: Node) {
            var stack = [(start, 0)]
            while let (node, depth) = stack.popLast() {
                guard placed.insert(node).inserted else { continue }
                out.append((node, depth, underPresenter.contains(node)))
                for child in (children[node] ?? []).sorted(by: byStart).reversed() { stack.append((child, depth + 1)) }
            }
        }
        for root in roots.sorted(by: byStart) { visit(root) }
        for node in nodes where !placed.contains(node) { visit(node) }
        return out
    }

    // MARK: Arrows and background

    /// The arrow event `e` draws in `window`, if any.
    static func arrow(_ e: TraceEvent, window: TimeWindow, ids: InstanceResolver) -> TimelineArrow? {
        guard window.contains(e.t), let vc = e.vc else { return nil }
        var arrow = TimelineArrow(kind: e.kind, seq: e.seq, t: e.t, from: nil, to: nil,
                                  interactive: e.has(.interactive), style: nil)
        switch e.kind {
        case .present:
            arrow.from = ids.resolve(vc, at: e.seq)
            arrow.to = e.other.flatMap { ids.resolve($0, at: e.seq, presentedLater: true) }
            arrow.style = e.detail
        case .push, .pop:
            arrow.from = ids.resolve(vc, at: e.seq)
            arrow.to = e.other.flatMap { ids.resolve($0, at: e.seq) }
        case .dismiss:
            arrow.to = ids.resolve(vc, at: e.seq)
            arrow.from = arrow.to.flatMap { ids.presenter(of: $0) }.flatMap { ids.resolve($0, at: e.seq) }
        case .viewAttached, .viewDetached:
            arrow.from = e.other.flatMap { ids.resolve($0, at: e.seq) }
            arrow.to = ids.resolve(vc, at: e.seq)
        default:
            return nil
        }
        return arrow
    }

    /// Background periods: from entering the background to the next foreground event (or the
    /// session's end), clipped to the window.
    package static func background(_ events: [TraceEvent], window: TimeWindow, sessionEnd: Int64) -> [TimeWindow] {
        var periods = BackgroundPeriods(window: window)
        for e in events { periods.add(e) }
        return periods.finish(sessionEnd: sessionEnd)
    }
}

/// The background periods of a window, from the session's events handed over one at a time
/// in seq order (`TimelineBuilder.background`).
struct BackgroundPeriods {
    let window: TimeWindow
    private var out: [TimeWindow] = []
    private var start: Int64?

    init(window: TimeWindow) { self.window = window }

    private mutating func close(_ end: Int64) {
        guard let s = start else { return }
        let lo = max(s, window.start), hi = min(max(s, end), window.end)
        if lo <= hi && window.overlaps(s, end) { out.append(TimeWindow(start: lo, end: hi)) }
        start = nil
    }

    mutating func add(_ e: TraceEvent) {
        switch e.kind {
        case .sceneDidEnterBackground, .appDidEnterBackground:
            if start == nil { start = e.t }
        case .sceneWillEnterForeground, .appWillEnterForeground, .sceneDidBecomeActive, .appDidBecomeActive:
            close(e.t)
        default:
            break
        }
    }

    /// The periods, the last one closed at `sessionEnd` if still open.
    mutating func finish(sessionEnd: Int64) -> [TimeWindow] {
        close(sessionEnd)
        return out
    }
}

/// Which instance a controller id names at a given seq: ids are addresses UIKit reuses.
/// Holds the instances once and, per id, the positions of its instances by `since`: an
/// export resolves every event of a long session through it.
struct InstanceResolver {
    package let instances: [TimelineRows.Instance]
    private var byID: [String: [Int32]] = [:]

    package init(_ instances: [TimelineRows.Instance]) {
        self.instances = instances
        for (i, x) in instances.enumerated() { byID[x.key.vc, default: []].append(Int32(i)) }
        for key in byID.keys { byID[key]!.sort { instances[Int($0)].key.since < instances[Int($1)].key.since } }
    }

    /// The instance of `vc` at `seq`: the latest one begun by then; with `presentedLater`
    /// (a presentation recorded before the presented controller's init), else the next one.
    package func resolve(_ vc: String, at seq: Int64, presentedLater: Bool = false) -> InstanceKey? {
        resolveIndex(vc, at: seq, presentedLater: presentedLater).map { instances[$0].key }
    }

    /// As `resolve`, the instance's position in `instances`.
    package func resolveIndex(_ vc: String, at seq: Int64, presentedLater: Bool = false) -> Int? {
        guard let list = byID[vc], !list.isEmpty else { return nil }
        // The first of the id's instances begun after `seq` (the list is in `since` order).
        var lo = 0, hi = list.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if instances[Int(list[mid])].key.since <= seq { lo = mid + 1 } else { hi = mid }
        }
        if lo > 0 {
            let x = instances[Int(list[lo - 1])]
            if !presentedLater || x.endSeq.map({ $0 >= seq }) ?? true { return Int(list[lo - 1]) }
        }
        return Int(lo < list.count ? list[lo] : list[list.count - 1])
    }

    /// The instance an edge names: exactly when the row knows its `since`, else by seq.
    package func resolve(_ vc: String, since: Int64?, at seq: Int64) -> InstanceKey? {
        if let since { return InstanceKey(vc: vc, since: since) }
        return resolve(vc, at: seq)
    }

    /// The position of instance `key` in `instances`, nil when it is none of them.
    package func index(of key: InstanceKey) -> Int? {
        guard let list = byID[key.vc] else { return nil }
        var lo = 0, hi = list.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if instances[Int(list[mid])].key.since < key.since { lo = mid + 1 } else { hi = mid }
        }
        return lo < list.count && instances[Int(list[lo])].key.since == key.since ? Int(list[lo]) : nil
    }

    package func presenter(of key: InstanceKey) -> String? { index(of: key).flatMap { instances[$0].presenter } }
}
