/// Where retired instances can be read back when they are no longer in memory (the rows the
/// analysis wrote for them, `RetiredInstanceReader`).
package protocol RetiredInstances: AnyObject {
    /// The latest retired instance of an id among those that began before `seq` (a stored
    /// model may hold later ones).
    func latest(vc: String, before seq: Int64) -> InstanceDirectory.Tombstone?
    /// The class of a retired instance.
    func cls(of key: InstanceKey) -> String?
}

/// Where the batches of one session's model find instances they do not hold (shared by the
/// builder and every batch).
package final class InstanceDirectory {
    /// What is kept of a retired instance that is still the latest of its id: enough to
    /// recognise events after its deinit (LC205) and to name it.
    package struct Tombstone {
        package var key: InstanceKey
        package var cls: String?
        package var endSeq: Int64?
        package var state: AppearanceState
        package var afterEndCount = 0

        package init(key: InstanceKey, cls: String?, endSeq: Int64?, state: AppearanceState) {
            self.key = key
            self.cls = cls
            self.endSeq = endSeq
            self.state = state
        }

        package init(_ x: Instance) {
            self.init(key: x.key, cls: x.cls, endSeq: x.endSeq, state: x.state)
            afterEndCount = x.afterEndCount
        }
    }

    /// The latest instance of each controller id, unless it was retired (then see `ended`):
    /// alive, or ended since the last batch.
    package var latest: [String: Instance] = [:]
    /// Tombstones of the latest instance of ids whose instance was retired; events for the id
    /// until its next init are events after that instance's deinit. With `store`, a cache:
    /// the ones without such events may be dropped and read back.
    private(set) var ended: [String: Tombstone] = [:]
    /// Tombstones replaced by a new init since the last batch, whose LC205 anomaly is still to be judged.
    package var replaced: [InstanceKey: Tombstone] = [:]
    /// Classes of retired containers, for their children's and descendants' findings (without `store`).
    private var retiredClasses: [InstanceKey: String] = [:]
    package let store: RetiredInstances?
    /// Tombstones held before those without after-deinit events are dropped (with `store`).
    package let maxTombstones: Int
    private var nextDrop: Int

    package init(store: RetiredInstances?, maxTombstones: Int) {
        self.store = store
        self.maxTombstones = maxTombstones
        nextDrop = maxTombstones
    }

    /// The tombstone of the latest instance of an id, if that instance was retired (`seq`: the
    /// event being built).
    package func tombstone(vc: String, at seq: Int64) -> Tombstone? {
        if let t = ended[vc] { return t }
        guard let t = store?.latest(vc: vc, before: seq) else { return nil }
        setTombstone(t)
        return t
    }

    /// A tombstone held in memory now (an id with events after its deinit keeps its one).
    package func heldTombstone(vc: String) -> Tombstone? { ended[vc] }

    package func setTombstone(_ t: Tombstone) {
        ended[t.key.vc] = t
        if store != nil && ended.count >= nextDrop {
            ended = ended.filter { $0.value.afterEndCount > 0 }
            nextDrop = max(maxTombstones, 2 * ended.count)
        }
    }

    /// Forgets the tombstone of an id that got a new instance.
    package func removeTombstone(vc: String) -> Tombstone? { ended.removeValue(forKey: vc) }

    /// Retires a container: its class may be named by its children's findings later.
    package func retireContainer(_ key: InstanceKey, cls: String) {
        if store == nil { retiredClasses[key] = cls }
    }

    package func tombstone(_ key: InstanceKey) -> Tombstone? {
        if let t = ended[key.vc], t.key == key { return t }
        return replaced[key]
    }

    func retiredClass(_ key: InstanceKey) -> String? {
        retiredClasses[key] ?? store?.cls(of: key)
    }
}
