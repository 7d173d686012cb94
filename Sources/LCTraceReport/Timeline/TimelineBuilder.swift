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

/// Turns a session's rows (stored or rebuilt) and findings into a `Timeline` of a window.
enum TimelineBuilder {
    /// `decisiveSeq`: the seq of a finding's decisive event, when known (`--around` takes it).
    package static func build(session: SessionInfo, rows: TimelineRows, findings: [Finding], window: TimeWindow,
                             options: TimelineOptions = TimelineOptions(),
                             decisiveSeq: (Finding) -> Int64? = { $0.evidence.last }) -> Timeline {
        let sessionSpan = TimeWindow(start: session.firstT ?? window.start, end: session.lastT ?? window.end)
        let ids = InstanceResolver(rows.instances)
        let cyclesByInstance = Dictionary(grouping: rows.cycles, by: \.instance)
        let edgesByChild = Dictionary(grouping: rows.edges, by: \.child)

        // Every instance that meets the window becomes a candidate lane.
        var candidates: [InstanceKey: TimelineLane] = [:]
        var order: [InstanceKey] = []
        for x in rows.instances where window.overlaps(x.firstT, x.endT) {
            let cycles = (cyclesByInstance[x.key] ?? []).sorted { $0.willSeq < $1.willSeq }
            let lane = TimelineLane(
                key: x.key, cls: x.cls, depth: 0,
                parent: parent(of: x.key, edgesByChild[x.key] ?? [], window: window, ids: ids),
                presentedBy: x.presenter.flatMap { ids.resolve($0, at: x.key.since) },
                start: x.firstT, end: x.endT, endSeq: x.endSeq, endHow: x.endHow,
                spans: spans(cycles, instance: x, sessionEnd: sessionSpan.end).filter { window.overlaps($0.start, $0.end) },
                release: x.release, focused: options.focus.contains(x.key))
            candidates[x.key] = lane
            order.append(x.key)
        }
        var omitted = TimelineOmissions()
        omitted.outside = max(0, max(rows.totalInstances, rows.instances.count) - candidates.count)

        // A view put into a hierarchy is worth an arrow only outside containment (an orphan's
        // view in its host): inside it, the indentation already says so.
        let arrows = self.arrows(rows, window: window, ids: ids).filter { a in
            guard a.kind == .viewAttached || a.kind == .viewDetached else { return true }
            return a.from != nil && a.to.flatMap { candidates[$0]?.parent } != a.from
        }
        let placed = findings.compactMap { f -> TimelineFinding? in
            guard let t = f.t, window.contains(t) else { return nil }
            return TimelineFinding(finding: f, lane: f.vc.map { InstanceKey(vc: $0, since: f.since ?? -1) }, t: t,
                                   seq: decisiveSeq(f))
        }

        // What happens to each candidate in the window: idle lanes are left out unless asked for.
        var busy = Set<InstanceKey>()
        for (key, lane) in candidates {
            if !lane.spans.isEmpty || window.contains(lane.start) || lane.end.map(window.contains) == true
                || lane.release.map({ window.contains($0.t) }) == true { busy.insert(key) }
        }
        for a in arrows { for key in [a.from, a.to].compactMap({ $0 }) { busy.insert(key) } }
        for f in placed { if let key = f.lane { busy.insert(key) } }

        // Filters: the focus and what relates to it, or one class.
        var wanted = Set(candidates.keys)
        if options.onlyRelated {
            var related = options.focus
            for a in arrows where [a.from, a.to].contains(where: { $0.map(options.focus.contains) ?? false }) {
                related.formUnion([a.from, a.to].compactMap { $0 })
            }
            for key in candidates.keys where ancestors(of: key, candidates).contains(where: options.focus.contains) {
                related.insert(key)
            }
            wanted.formIntersection(related)
        }
        if let cls = options.className {
            wanted = wanted.filter { candidates[$0]?.cls == cls || options.focus.contains($0) }
        }
        let lively = options.showIdle ? wanted : wanted.filter { busy.contains($0) || options.focus.contains($0) }

        // The lane limit keeps the focus, then lanes with findings, then the busiest.
        var chosen = lively
        if let limit = options.maxLanes, lively.count > limit {
            let findingLanes = Set(placed.compactMap(\.lane))
            var activity: [InstanceKey: Int] = [:]
            for (key, lane) in candidates { activity[key] = lane.spans.count }
            for a in arrows { for key in [a.from, a.to].compactMap({ $0 }) { activity[key, default: 0] += 1 } }
            func rank(_ key: InstanceKey) -> (Int, Int, Int64, String) {
                (options.focus.contains(key) ? 0 : findingLanes.contains(key) ? 1 : 2, -(activity[key] ?? 0), key.since, key.vc)
            }
            chosen = []
            for key in lively.sorted(by: { rank($0) < rank($1) }) {
                let needed = [key] + ancestors(of: key, candidates).filter { !chosen.contains($0) }
                if chosen.count + needed.count > limit && !chosen.isEmpty { continue }
                chosen.formUnion(needed)
            }
            chosen.formIntersection(lively)
        }
        // Containers of a drawn lane are drawn too (the indentation needs them).
        var kept = chosen
        for key in chosen { kept.formUnion(ancestors(of: key, candidates)) }
        omitted.filtered = Set(candidates.keys).subtracting(wanted).subtracting(kept).count
        omitted.idle = wanted.subtracting(lively).subtracting(kept).count
        omitted.overLimit = lively.subtracting(chosen).subtracting(kept).count

        let lanes = treeOrder(kept, candidates, order: order)
        var timeline = Timeline(
            session: session, window: window, sessionSpan: sessionSpan, lanes: lanes,
            arrows: [], edges: [], findings: [], background: background(rows.events, window: window, sessionEnd: sessionSpan.end),
            omitted: omitted, focus: options.focusDescription)
        timeline.laneIndex = Dictionary(uniqueKeysWithValues: lanes.enumerated().map { ($1.key, $0) })
        let drawn = Set(lanes.map(\.key))
        // An arrow is drawn when its known ends are lanes (a dismissal's presenter may be unknown).
        timeline.arrows = arrows.filter { a in
            (a.from.map(drawn.contains) ?? true) && (a.to.map(drawn.contains) ?? true) && (a.from ?? a.to) != nil
        }
        timeline.edges = rows.edges.compactMap { e -> TimelineEdge? in
            guard drawn.contains(e.child), let parent = ids.resolve(e.parent, since: e.parentSince, at: e.addSeq),
                  drawn.contains(parent), window.overlaps(e.addT, e.removeT) else { return nil }
            return TimelineEdge(parent: parent, child: e.child, addSeq: e.addSeq, addT: e.addT, removeT: e.removeT)
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

    /// What a lane is drawn under: its container, else its presenter.
    private static func host(_ lane: TimelineLane) -> InstanceKey? { lane.parent ?? lane.presentedBy }

    private static func ancestors(of key: InstanceKey, _ lanes: [InstanceKey: TimelineLane]) -> [InstanceKey] {
        var out: [InstanceKey] = []
        var seen: Set<InstanceKey> = [key]
        var node = lanes[key].flatMap(host)
        while let p = node, lanes[p] != nil, seen.insert(p).inserted {
            out.append(p)
            node = lanes[p].flatMap(host)
        }
        return out
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

    static func arrows(_ rows: TimelineRows, window: TimeWindow, ids: InstanceResolver) -> [TimelineArrow] {
        var out: [TimelineArrow] = []
        for e in rows.events where window.contains(e.t) {
            guard let vc = e.vc else { continue }
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
                continue
            }
            out.append(arrow)
        }
        return out
    }

    /// Background periods: from entering the background to the next foreground event (or the
    /// session's end), clipped to the window.
    package static func background(_ events: [TraceEvent], window: TimeWindow, sessionEnd: Int64) -> [TimeWindow] {
        var out: [TimeWindow] = []
        var start: Int64?
        func close(_ end: Int64) {
            guard let s = start else { return }
            let lo = max(s, window.start), hi = min(max(s, end), window.end)
            if lo <= hi && window.overlaps(s, end) { out.append(TimeWindow(start: lo, end: hi)) }
            start = nil
        }
        for e in events {
            switch e.kind {
            case .sceneDidEnterBackground, .appDidEnterBackground:
                if start == nil { start = e.t }
            case .sceneWillEnterForeground, .appWillEnterForeground, .sceneDidBecomeActive, .appDidBecomeActive:
                close(e.t)
            default:
                break
            }
        }
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
