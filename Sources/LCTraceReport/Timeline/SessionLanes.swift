import LCTraceModel
import LCTraceStore

/// The lanes of a whole session as an export draws them: every instance that meets the
/// session's span, in containment order (as `TimelineBuilder` orders them with no lane limit
/// and idle lanes shown). Found from the instances and the containment edges alone, a few
/// words per instance and nothing per appearance or event, so that an export of a session of
/// any length streams its appearances and events (a 5 M-event session took 944 MB when its
/// timeline was built whole).
struct SessionLanes {
    /// Every instance of the session, and which one an id names at a seq.
    let ids: InstanceResolver
    /// The instance on each lane, in display order, and its depth.
    private(set) var lanes: [(instance: Int32, depth: Int32)] = []
    /// The lane of each instance (by its position in `ids.instances`), -1 when not drawn.
    private var laneOfInstance: [Int32]

    /// `edges`: the session's containment edges in add_seq order (read once).
    init(instances: [TimelineRows.Instance], window: TimeWindow,
         edges: ((TimelineRows.Edge) throws -> Void) throws -> Void) throws {
        let ids = InstanceResolver(instances)
        self.ids = ids
        laneOfInstance = Array(repeating: -1, count: instances.count)
        let drawn = instances.indices.filter { window.overlaps(instances[$0].firstT, instances[$0].endT) }
        for i in drawn { laneOfInstance[i] = 0 }
        // The container of each drawn instance: the last edge in force in the window (as
        // `TimelineBuilder.parent(of:)`), -1 when none or when it names no drawn instance.
        var container = [Int32](repeating: -1, count: instances.count)
        var containerSeq = [Int64](repeating: .min, count: instances.count)
        var hasContainer = [Bool](repeating: false, count: instances.count)
        try edges { e in
            guard window.overlaps(e.addT, e.removeT), let child = ids.index(of: e.child), laneOfInstance[child] >= 0,
                  !hasContainer[child] || e.addSeq > containerSeq[child] else { return }
            hasContainer[child] = true
            containerSeq[child] = e.addSeq
            let parent = ids.resolve(e.parent, since: e.parentSince, at: e.addSeq).flatMap(ids.index(of:))
            container[child] = parent.map(Int32.init) ?? -1
        }
        func drawnOrNil(_ i: Int?) -> Int? { i.flatMap { laneOfInstance[$0] >= 0 ? $0 : nil } }
        let placed = TimelineBuilder.treeOrder(
            drawn,
            parent: { drawnOrNil(container[$0] >= 0 ? Int(container[$0]) : nil) },
            presenter: { i in drawnOrNil(instances[i].presenter.flatMap { ids.resolveIndex($0, at: instances[i].key.since) }) },
            byStart: { (instances[$0].firstT, instances[$0].key) < (instances[$1].firstT, instances[$1].key) })
        lanes.reserveCapacity(placed.count)
        for (lane, p) in placed.enumerated() {
            lanes.append((Int32(p.node), Int32(p.depth)))
            laneOfInstance[p.node] = Int32(lane)
        }
    }

    var count: Int { lanes.count }

    /// The instance drawn on lane `lane`.
    func instance(_ lane: Int) -> TimelineRows.Instance { ids.instances[Int(lanes[lane].instance)] }

    /// The lane of the instance at `index` of `ids.instances`, nil when it is not drawn.
    func lane(ofInstance index: Int?) -> Int? {
        guard let index, laneOfInstance[index] >= 0 else { return nil }
        return Int(laneOfInstance[index])
    }

    /// The lane of instance `key`, nil when it is not drawn.
    func lane(_ key: InstanceKey?) -> Int? { key.flatMap(ids.index(of:)).flatMap { lane(ofInstance: $0) } }

    /// "Class vc#since": how every output names an instance (`TimelineLane.label`).
    func label(_ lane: Int) -> String {
        let x = instance(lane)
        return "\(x.cls ?? "?") \(x.key)"
    }
}
