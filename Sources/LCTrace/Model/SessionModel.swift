/// The model of one session, built from its events in seq order by `ModelBuilder`: the facts
/// (instances, appearance cycles, containment edges, view attachments, releases, anomalies)
/// that the rules judge. It holds no verdicts itself.

/// Names one controller instance: ids are reused, so the id plus the seq where the instance
/// began (its `init`, or its first event without one).
public struct InstanceKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var vc: String
    public var since: Int64
    public init(vc: String, since: Int64) { self.vc = vc; self.since = since }
    public static func < (a: InstanceKey, b: InstanceKey) -> Bool { (a.since, a.vc) < (b.since, b.vc) }
    public var description: String { "\(vc)#\(since)" }
}

/// The appearance state machine of rules.md.
public enum AppearanceState: String, CaseIterable, Sendable {
    case hidden, appearing, visible, disappearing
}

/// How an instance left its container or screen, starting its leak clock.
public enum ReleaseHow: String, CaseIterable, Sendable {
    case pop, dismiss, removeFromParent
    /// Still contained by a controller that was released (its children go with it).
    case ancestor
    /// (1.1) Presented above a controller whose dismissal took it along: dismissing X removes
    /// everything X presented, directly or up a chain, and the intermediate ones get no callbacks.
    case chain
}

/// The moment an instance was let go (rules.md "released"), not cancelled by a later appearance.
public struct Release: Equatable, Sendable {
    public var seq: Int64
    public var t: Int64
    public var how: ReleaseHow
    /// For `.ancestor` and `.chain`: the instance whose release took this one with it (the
    /// released container, or the dismissed controller at the bottom of the chain).
    public var ancestor: InstanceKey?
    /// The pop/dismiss/removeFromParent call that started the way out, when seen.
    public var callSeq: Int64?
}

/// How an instance ended.
public enum InstanceEnd: String, CaseIterable, Sendable {
    case `deinit`
    /// Its id got a new `init` with no `deinit` seen: the old object must be gone.
    case reused
}

/// One controller instance.
public final class Instance {
    public let key: InstanceKey
    public var cls: String?
    /// Interned ids of `key.vc`, `cls`, `lastParent` and `presenter` when the events came from
    /// the SQLite store (`StoredIDs`), 0 where not known: the model writer's shortcut.
    var vcID: Int64 = 0, clsID: Int64 = 0, lastParentID: Int64 = 0, presenterID: Int64 = 0
    public var initSeq: Int64?
    public var initT: Int64?
    public let firstT: Int64
    /// First event seqs, kept when no init was seen (LC902 evidence).
    public var unknownEventSeqs: [Int64] = []
    public var firstEventName: String?
    public var endSeq: Int64?
    public var endT: Int64?
    public var end: InstanceEnd?
    public var state: AppearanceState = .hidden
    public var viewDidLoadCount = 0
    public var viewDidLoadSeq: Int64?
    /// Current children (addChild in force), for releasing them with this instance. Keyed by
    /// identity so that removing one is O(1) however many children a container holds.
    var children: [ObjectIdentifier: Instance] = [:]
    /// Current container id (from addChild), nil when not contained.
    public var parent: String?
    /// The last container it had, kept after removal for the model table.
    public var lastParent: String?
    public var presenter: String?
    /// (1.1) A `present` named it and it has not been dismissed since: never an orphan, and
    /// dismissing its presenter (or one below it in the chain) takes it along.
    public var isPresented = false
    /// (1.1) Removed by a dismissal further down its presentation chain, without the
    /// disappearance callbacks UIKit does not send there: its deinit while it still looks
    /// visible is not LC201. Cleared when it appears again.
    public var removedWithoutCallbacks = false
    public var release: Release?
    public var cycleCount = 0
    /// Index of its open appearance cycle in `SessionModel.cycles`.
    var openCycle: Int?
    /// Index of its active containment edge in `SessionModel.edges`.
    var activeEdge: Int?
    /// Index of its last edge, active or not (a `didMoveToParent(nil)` after removal lands there).
    var lastEdge: Int?
    /// Index of its current view attachment in `SessionModel.attachments`.
    var activeAttachment: Int?
    /// The id of the navigation controller whose pop/push event named it last, and that event's seq.
    var lastNavigationCall: (kind: EventKind, seq: Int64, interactive: Bool)?
    var dismissCallSeq: Int64?
    var afterEndCount = 0
    /// It was a container (addChild named it as parent): its children's findings may name its
    /// class after it was retired from memory (`InstanceDirectory.retiredClasses`).
    var wasContainer = false
    /// Its row and facts left memory in a batch (`ModelBuilder.compact`); if it is still the
    /// latest instance of its id, a tombstone stands in for it (`InstanceDirectory.ended`).
    var retired = false
    /// Completed appearances without viewIsAppearing (LC402): how many, and the first one's
    /// (viewWillAppear seq, viewDidAppear seq, viewDidAppear t, animated).
    public internal(set) var missingIsAppearingCount = 0
    public internal(set) var firstMissingIsAppearing: (willSeq: Int64, didSeq: Int64, didT: Int64, animated: Bool)?

    init(key: InstanceKey, firstT: Int64) {
        self.key = key
        self.firstT = firstT
    }

    public var isAlive: Bool { end == nil }
}

/// One appearance cycle: viewWillAppear until the instance is hidden again.
public struct AppearanceCycle: Sendable {
    public enum Outcome: String, CaseIterable, Sendable { case completed, cancelled, interrupted }
    public enum Ending: String, CaseIterable, Sendable {
        case disappeared, disappearCancelled = "disappear-cancelled", visibleAtEnd = "visible-at-end"
        case `deinit`, sessionEnd = "session-end", violation
    }
    public var instance: InstanceKey
    /// The interned id of `instance.vc`, 0 when not known (`Instance.vcID`).
    var vcID: Int64 = 0
    public var willSeq: Int64
    public var willT: Int64
    public var isSeq: Int64?
    public var isT: Int64?
    public var isAppearingCount = 0
    public var didSeq: Int64?
    public var didT: Int64?
    public var willDisappearSeq: Int64?
    public var willDisappearT: Int64?
    public var didDisappearSeq: Int64?
    public var didDisappearT: Int64?
    public var animated: Bool?
    /// Began while an interactive push/pop was running on its container.
    public var interactive = false
    /// The app went to the background while it was appearing.
    public var backgrounded = false
    /// Began from `disappearing`: a cancelled disappearance (interactive pop, sheet swipe).
    public var resumedFromDisappearing = false
    public var outcome: Outcome = .interrupted
    public var ending: Ending = .sessionEnd
}

/// One parent–child edge, from addChild to removeFromParent (or the end).
public struct ContainmentEdge: Sendable {
    public var child: InstanceKey
    public var parent: String
    /// The interned ids of `child.vc` and `parent`, 0 when not known (`Instance.vcID`).
    var childID: Int64 = 0, parentID: Int64 = 0
    public var parentSince: Int64?
    public var addSeq: Int64
    public var addT: Int64
    public var willMoveSeq: Int64?
    public var didMoveSeq: Int64?
    public var willRemoveSeq: Int64?
    public var removeSeq: Int64?
    public var removeT: Int64?
    public var didRemoveSeq: Int64?
    /// The child deallocated while still contained.
    public var childEndSeq: Int64?
    public var childEndT: Int64?
    /// Index of the child's attachment still in the old parent's view hierarchy when it was removed.
    public var attachmentAtRemoval: Int?
    /// seq of a later addChild of the same child to the same parent (re-adding cures a left-behind view).
    public var readdSeq: Int64?
}

/// One stay of an instance's root view in a view hierarchy (viewAttached to viewDetached).
public struct Attachment: Sendable {
    public var instance: InstanceKey
    /// Host controller id; nil for a window or transition container.
    public var host: String?
    /// The host's class, when the host was a known instance at attach time.
    public var hostClass: String?
    public var attachSeq: Int64
    public var attachT: Int64
    public var detachSeq: Int64?
    public var detachT: Int64?
    /// At attach time the instance was a child of the host (or of a controller whose hierarchy holds the host).
    public var childOfHostAtAttach: Bool
    /// addChild that made it the host's child while attached.
    public var becameChildSeq: Int64?
    /// The instance deallocated while attached.
    public var endSeq: Int64?
    /// (1.1) The instance was presented (not yet dismissed) while attached: an
    /// `.overCurrentContext` presentation puts its view inside the context controller's view,
    /// so this is never an orphan whatever `host` says.
    public var presented = false
}

/// An appearance or lifecycle callback that broke the state machine.
public struct LifecycleAnomaly: Sendable {
    public enum Kind: Sendable, Equatable {
        /// `event` arrived in `state` where the state machine has no such transition.
        case transition
        case secondViewDidLoad
        case secondViewIsAppearing
        /// An event for an id after its deinit, with no new init.
        case afterDeinit
    }
    public var kind: Kind
    public var instance: InstanceKey
    public var event: EventKind
    public var state: AppearanceState
    public var seq: Int64
    public var t: Int64
    /// Seqs that prove it (e.g. the viewWillAppear that began the cycle, then this event).
    public var evidence: [Int64]
}

/// What the session record said.
public struct SessionMetadata: Sendable {
    public var sid: String
    public var app: String?
    public var appVersion: String?
    public var build: String?
    public var osName: String?
    public var osVersion: String?
    public var sdk: String?
    public var device: String?
    public var recordSeq: Int64?
    /// (1.1) The session record's `extension` key: the extension point of an app extension
    /// (e.g. `com.apple.share-services`), which has no scene life cycle. Nil in an app.
    public var extensionPoint: String?
    public init(sid: String) { self.sid = sid }

    /// (major, minor) of a version string such as "27.0" or "26.4.1".
    public static func version(_ text: String?) -> (Int, Int)? {
        guard let text, !text.isEmpty else { return nil }
        let parts = text.split(separator: ".").map { Int($0.prefix { $0.isNumber }) }
        guard let major = parts.first ?? nil else { return nil }
        let minor = parts.count > 1 ? (parts[1] ?? 0) : 0
        return (major, minor)
    }
}

/// The whole model of one session.
public final class SessionModel {
    public let metadata: SessionMetadata
    public var stats = SessionStats()
    /// Every instance in order of appearance.
    public var instances: [Instance] = []
    public var cycles: [AppearanceCycle] = []
    public var edges: [ContainmentEdge] = []
    public var attachments: [Attachment] = []
    public var anomalies: [LifecycleAnomaly] = []
    /// (start t, end t) of background periods (no appearance callbacks, no main-thread work).
    public var backgroundIntervals: [(Int64, Int64)] = []
    /// The deprecated app-delegate state transitions seen (`EventKind.isDeprecatedAppDelegateEvent`),
    /// by event: how many, the first one's t, and the first ten seqs.
    public var deprecatedAppDelegateEvents: [EventKind: (count: Int, firstT: Int64, seqs: [Int64])] = [:]
    public var sceneEventCount = 0
    public var findings: [Finding] = []
    /// Set when instances left memory in batches while the session was built: the instances
    /// whose class LC303 must count (every one whose class was unknown or limited at its
    /// start), since `instances` then holds only those not retired.
    public var growthCandidates: [Instance]?
    /// For a model built in batches: where instances it does not hold are found.
    var directory: InstanceDirectory?
    /// Tombstones a batch may need but that left the directory (replaced since the last batch).
    var lookupOnly: [InstanceKey: InstanceDirectory.Tombstone] = [:]

    init(metadata: SessionMetadata) { self.metadata = metadata }

    public var sid: String { metadata.sid }
    /// Facts held: what building in batches (`ModelBuilder.compact`) keeps bounded.
    public var factCount: Int { instances.count + cycles.count + edges.count + attachments.count + anomalies.count }
    /// The session's end for rules: the largest t seen.
    public var endT: Int64 { stats.lastT ?? 0 }
    public var isLossy: Bool { stats.lostEvents > 0 }

    private var byKey: [InstanceKey: Instance] = [:]
    func register(_ instance: Instance) {
        instances.append(instance)
        byKey[instance.key] = instance
    }
    func unregister(_ key: InstanceKey) { byKey[key] = nil }
    /// An instance of this model, or a live one of the session when the model is a batch.
    public func instance(_ key: InstanceKey) -> Instance? {
        if let x = byKey[key] { return x }
        if let x = directory?.latest[key.vc], x.key == key { return x }
        return nil
    }
    private func tombstone(_ key: InstanceKey) -> InstanceDirectory.Tombstone? {
        lookupOnly[key] ?? directory?.tombstone(key)
    }
    /// The class of an instance, wherever it is held (findings name other instances' classes).
    public func cls(of key: InstanceKey) -> String? {
        if let x = instance(key) { return x.cls }
        return tombstone(key)?.cls ?? directory?.retiredClass(key)
    }
    /// Events for the instance's id after its deinit, with no new init (LC205).
    public func afterEndCount(of key: InstanceKey) -> Int? {
        instance(key)?.afterEndCount ?? tombstone(key)?.afterEndCount
    }

    /// Nanoseconds from `a` to `b` spent in the foreground: background periods do not count
    /// toward grace periods or stuck-appearance clocks (a suspended app runs nothing).
    public func foregroundTime(from a: Int64, to b: Int64) -> Int64 {
        guard b > a else { return 0 }
        // The background time inside [a, b]: the union of the clipped intervals. They come in
        // time order and apart, unless the clock went backwards; then they may overlap, and
        // are merged rather than subtracted twice (which could go below zero, or overflow).
        var background: Int64 = 0
        var coveredTo = Int64.min
        var ordered = true
        for (start, end) in backgroundIntervals {
            let lo = max(start, a), hi = min(end, b)
            guard hi > lo else { continue }
            if lo < coveredTo { ordered = false; break }
            background += hi - lo
            coveredTo = hi
        }
        if !ordered {
            let clipped = backgroundIntervals.map { (max($0.0, a), min($0.1, b)) }.filter { $0.1 > $0.0 }.sorted { $0.0 < $1.0 }
            background = 0
            coveredTo = Int64.min
            for (lo, hi) in clipped where hi > coveredTo {
                background += hi - max(lo, coveredTo)
                coveredTo = hi
            }
        }
        return (b - a) - background
    }
}
