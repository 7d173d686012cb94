import LCTraceFormat

/// The model of one session, built from its events in seq order by `ModelBuilder`: the facts
/// (instances, appearance cycles, containment edges, view attachments, releases, anomalies)
/// that the rules judge. It holds no verdicts itself.

/// Names one controller instance: ids are reused, so the id plus the seq where the instance
/// began (its `init`, or its first event without one).
package struct InstanceKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    package var vc: String
    package var since: Int64
    package init(vc: String, since: Int64) { self.vc = vc; self.since = since }
    package static func < (a: InstanceKey, b: InstanceKey) -> Bool { (a.since, a.vc) < (b.since, b.vc) }
    package var description: String { "\(vc)#\(since)" }
}

/// The appearance state machine of rules.md.
package enum AppearanceState: String, CaseIterable, Sendable {
    case hidden, appearing, visible, disappearing
}

/// How an instance left its container or screen, starting its leak clock.
package enum ReleaseHow: String, CaseIterable, Sendable {
    case pop, dismiss, removeFromParent
    /// Still contained by a controller that was released (its children go with it).
    case ancestor
    /// (1.1) Presented above a controller whose dismissal took it along: dismissing X removes
    /// everything X presented, directly or up a chain, and the intermediate ones get no callbacks.
    case chain
    /// (1.2) A window's root replaced by another (`windowRoot`): the old root is let go.
    case root
}

/// The moment an instance was let go (rules.md "released"), not cancelled by a later appearance.
package struct Release: Equatable, Sendable {
    package var seq: Int64
    package var t: Int64
    package var how: ReleaseHow
    /// For `.ancestor` and `.chain`: the instance whose release took this one with it (the
    /// released container, or the dismissed controller at the bottom of the chain).
    package var ancestor: InstanceKey?
    /// The pop/dismiss/removeFromParent call that started the way out, when seen.
    package var callSeq: Int64?

    package init(seq: Int64, t: Int64, how: ReleaseHow, ancestor: InstanceKey? = nil, callSeq: Int64? = nil) {
        self.seq = seq; self.t = t; self.how = how; self.ancestor = ancestor; self.callSeq = callSeq
    }
}

/// How an instance ended.
package enum InstanceEnd: String, CaseIterable, Sendable {
    case `deinit`
    /// Its id got a new `init` with no `deinit` seen: the old object must be gone.
    case reused
}

/// One controller instance.
package final class Instance {
    package let key: InstanceKey
    package var cls: String?
    /// Interned ids of `key.vc`, `cls`, `lastParent` and `presenter` when the events came from
    /// the SQLite store (`StoredIDs`), 0 where not known: the model writer's shortcut.
    package var vcID: Int64 = 0, clsID: Int64 = 0, lastParentID: Int64 = 0, presenterID: Int64 = 0
    package var initSeq: Int64?
    package var initT: Int64?
    package let firstT: Int64
    /// First event seqs, kept when no init was seen (LC902 evidence).
    package var unknownEventSeqs: [Int64] = []
    package var firstEventName: String?
    package var endSeq: Int64?
    package var endT: Int64?
    package var end: InstanceEnd?
    package var state: AppearanceState = .hidden
    package var viewDidLoadCount = 0
    package var viewDidLoadSeq: Int64?
    /// Current children (addChild in force), for releasing them with this instance. Keyed by
    /// identity so that removing one is O(1) however many children a container holds.
    package var children: [ObjectIdentifier: Instance] = [:]
    /// Current container id (from addChild), nil when not contained.
    package var parent: String?
    /// The last container it had, kept after removal for the model table.
    package var lastParent: String?
    package var presenter: String?
    /// (1.1) A `present` named it and it has not been dismissed since: never an orphan, and
    /// dismissing its presenter (or one below it in the chain) takes it along.
    package var isPresented = false
    /// (1.1) Removed by a dismissal further down its presentation chain, without the
    /// disappearance callbacks UIKit does not send there: its deinit while it still looks
    /// visible is not LC201. Cleared when it appears again.
    package var removedWithoutCallbacks = false
    package var release: Release?
    /// (1.2) The nearest UIKit superclass its `init` named (`uikit`), e.g. `UISearchController`.
    package var uikitClass: String?
    /// (1.2) UIKit keeps it by design after its release (a search controller and what it
    /// contains): never a leak (LC301, LC302 skip it).
    package var keptByUIKit = false
    /// The seq of its latest event (1.2: a hole since then may hold what its next event misses).
    package var lastSeq: Int64?
    /// The seq of its latest appearance event (1.2: LC202–LC205 do not judge a step with a
    /// hole since then, whatever containment events came in between).
    package var lastAppearanceSeq: Int64?
    package var cycleCount = 0
    /// Index of its open appearance cycle in `SessionModel.cycles`.
    package var openCycle: Int?
    /// Index of its active containment edge in `SessionModel.edges`.
    package var activeEdge: Int?
    /// Index of its last edge, active or not (a `didMoveToParent(nil)` after removal lands there).
    package var lastEdge: Int?
    /// Index of its current view attachment in `SessionModel.attachments`.
    package var activeAttachment: Int?
    /// The id of the navigation controller whose pop/push event named it last, and that event's seq.
    package var lastNavigationCall: (kind: EventKind, seq: Int64, interactive: Bool)?
    package var dismissCallSeq: Int64?
    package var afterEndCount = 0
    /// It was a container (addChild named it as parent): its children's findings may name its
    /// class after it was retired from memory (`InstanceDirectory.retiredClasses`).
    package var wasContainer = false
    /// Its row and facts left memory in a batch (`ModelBuilder.compact`); if it is still the
    /// latest instance of its id, a tombstone stands in for it (`InstanceDirectory.ended`).
    package var retired = false
    /// Completed appearances without viewIsAppearing (LC402): how many, and the first one's
    /// (viewWillAppear seq, viewDidAppear seq, viewDidAppear t, animated).
    package var missingIsAppearingCount = 0
    package var firstMissingIsAppearing: (willSeq: Int64, didSeq: Int64, didT: Int64, animated: Bool)?

    package init(key: InstanceKey, firstT: Int64) {
        self.key = key
        self.firstT = firstT
    }

    package var isAlive: Bool { end == nil }
}

/// One appearance cycle: viewWillAppear until the instance is hidden again.
package struct AppearanceCycle: Sendable {
    package enum Outcome: String, CaseIterable, Sendable { case completed, cancelled, interrupted }
    package enum Ending: String, CaseIterable, Sendable {
        case disappeared, disappearCancelled = "disappear-cancelled", visibleAtEnd = "visible-at-end"
        case `deinit`, sessionEnd = "session-end", violation
        /// (1.2) Closed by an event after lost events: how it ended is not known.
        case lost
    }
    package var instance: InstanceKey
    /// The interned id of `instance.vc`, 0 when not known (`Instance.vcID`).
    package var vcID: Int64 = 0
    package var willSeq: Int64
    package var willT: Int64
    package var isSeq: Int64?
    package var isT: Int64?
    package var isAppearingCount = 0
    package var didSeq: Int64?
    package var didT: Int64?
    package var willDisappearSeq: Int64?
    package var willDisappearT: Int64?
    package var didDisappearSeq: Int64?
    package var didDisappearT: Int64?
    package var animated: Bool?
    /// Began while an interactive push/pop was running on its container.
    package var interactive = false
    /// The app went to the background while it was appearing.
    package var backgrounded = false
    /// Began from `disappearing`: a cancelled disappearance (interactive pop, sheet swipe).
    package var resumedFromDisappearing = false
    /// (1.2) Still open at the session's end with lost events after its start: its
    /// completion may be among them (LC203 does not judge it). Not stored.
    package var acrossHole = false
    package var outcome: Outcome = .interrupted
    package var ending: Ending = .sessionEnd

    package init(instance: InstanceKey, vcID: Int64 = 0, willSeq: Int64, willT: Int64, isSeq: Int64? = nil,
                 isT: Int64? = nil, isAppearingCount: Int = 0, didSeq: Int64? = nil, didT: Int64? = nil,
                 willDisappearSeq: Int64? = nil, willDisappearT: Int64? = nil, didDisappearSeq: Int64? = nil,
                 didDisappearT: Int64? = nil, animated: Bool? = nil, interactive: Bool = false,
                 backgrounded: Bool = false, resumedFromDisappearing: Bool = false, outcome: Outcome = .interrupted,
                 ending: Ending = .sessionEnd) {
        self.instance = instance; self.vcID = vcID; self.willSeq = willSeq; self.willT = willT; self.isSeq = isSeq
        self.isT = isT; self.isAppearingCount = isAppearingCount; self.didSeq = didSeq; self.didT = didT
        self.willDisappearSeq = willDisappearSeq; self.willDisappearT = willDisappearT
        self.didDisappearSeq = didDisappearSeq; self.didDisappearT = didDisappearT; self.animated = animated
        self.interactive = interactive; self.backgrounded = backgrounded
        self.resumedFromDisappearing = resumedFromDisappearing; self.outcome = outcome; self.ending = ending
    }
}

/// One parent–child edge, from addChild to removeFromParent (or the end).
package struct ContainmentEdge: Sendable {
    package var child: InstanceKey
    package var parent: String
    /// The interned ids of `child.vc` and `parent`, 0 when not known (`Instance.vcID`).
    package var childID: Int64 = 0, parentID: Int64 = 0
    package var parentSince: Int64?
    package var addSeq: Int64
    package var addT: Int64
    package var willMoveSeq: Int64?
    package var didMoveSeq: Int64?
    package var willRemoveSeq: Int64?
    package var removeSeq: Int64?
    package var removeT: Int64?
    package var didRemoveSeq: Int64?
    /// The child deallocated while still contained.
    package var childEndSeq: Int64?
    package var childEndT: Int64?
    /// Index of the child's attachment still in the old parent's view hierarchy when it was removed.
    package var attachmentAtRemoval: Int?
    /// seq of a later addChild of the same child to the same parent (re-adding cures a left-behind view).
    package var readdSeq: Int64?
    /// (1.2) Lost events lie where a missing step of it could be (between the add and the
    /// removal or the end; after a removal that left the view behind): LC102–LC104 do not
    /// judge it. Not stored.
    package var acrossHole = false

    package init(child: InstanceKey, parent: String, childID: Int64 = 0, parentID: Int64 = 0,
                 parentSince: Int64? = nil, addSeq: Int64, addT: Int64, willMoveSeq: Int64? = nil,
                 didMoveSeq: Int64? = nil, willRemoveSeq: Int64? = nil, removeSeq: Int64? = nil,
                 removeT: Int64? = nil, didRemoveSeq: Int64? = nil, childEndSeq: Int64? = nil,
                 childEndT: Int64? = nil, attachmentAtRemoval: Int? = nil, readdSeq: Int64? = nil) {
        self.child = child; self.parent = parent; self.childID = childID; self.parentID = parentID
        self.parentSince = parentSince; self.addSeq = addSeq; self.addT = addT; self.willMoveSeq = willMoveSeq
        self.didMoveSeq = didMoveSeq; self.willRemoveSeq = willRemoveSeq; self.removeSeq = removeSeq
        self.removeT = removeT; self.didRemoveSeq = didRemoveSeq; self.childEndSeq = childEndSeq
        self.childEndT = childEndT; self.attachmentAtRemoval = attachmentAtRemoval; self.readdSeq = readdSeq
    }
}

/// One stay of an instance's root view in a view hierarchy (viewAttached to viewDetached).
package struct Attachment: Sendable {
    package var instance: InstanceKey
    /// Host controller id; nil for a window or transition container.
    package var host: String?
    /// The host's class, when the host was a known instance at attach time.
    package var hostClass: String?
    package var attachSeq: Int64
    package var attachT: Int64
    package var detachSeq: Int64?
    package var detachT: Int64?
    /// At attach time the instance was a child of the host (or of a controller whose hierarchy holds the host).
    package var childOfHostAtAttach: Bool
    /// addChild that made it the host's child while attached.
    package var becameChildSeq: Int64?
    /// The instance deallocated while attached.
    package var endSeq: Int64?
    /// (1.1) The instance was presented (not yet dismissed) while attached: an
    /// `.overCurrentContext` presentation puts its view inside the context controller's view,
    /// so this is never an orphan whatever `host` says.
    package var presented = false
    /// The container the instance was a child of at attach time, when not one holding the
    /// host, and its class.
    package var parentAtAttach: String?
    package var parentClassAtAttach: String?
    /// (1.2) Lost events lie before the attach (since the instance's previous event) or
    /// during it: the addChild that would make it no orphan may be among them. Not stored.
    package var acrossHole = false

    package init(instance: InstanceKey, host: String? = nil, hostClass: String? = nil, attachSeq: Int64,
                 attachT: Int64, detachSeq: Int64? = nil, detachT: Int64? = nil, childOfHostAtAttach: Bool,
                 becameChildSeq: Int64? = nil, endSeq: Int64? = nil, presented: Bool = false) {
        self.instance = instance; self.host = host; self.hostClass = hostClass; self.attachSeq = attachSeq
        self.attachT = attachT; self.detachSeq = detachSeq; self.detachT = detachT
        self.childOfHostAtAttach = childOfHostAtAttach; self.becameChildSeq = becameChildSeq; self.endSeq = endSeq
        self.presented = presented
    }
}

/// An appearance or lifecycle callback that broke the state machine.
package struct LifecycleAnomaly: Sendable {
    package enum Kind: Sendable, Equatable {
        /// `event` arrived in `state` where the state machine has no such transition.
        case transition
        case secondViewDidLoad
        case secondViewIsAppearing
        /// An event for an id after its deinit, with no new init.
        case afterDeinit
    }
    package var kind: Kind
    package var instance: InstanceKey
    package var event: EventKind
    package var state: AppearanceState
    package var seq: Int64
    package var t: Int64
    /// Seqs that prove it (e.g. the viewWillAppear that began the cycle, then this event).
    package var evidence: [Int64]

    package init(kind: Kind, instance: InstanceKey, event: EventKind, state: AppearanceState, seq: Int64, t: Int64,
                 evidence: [Int64]) {
        self.kind = kind; self.instance = instance; self.event = event; self.state = state; self.seq = seq; self.t = t
        self.evidence = evidence
    }
}

/// What the session record said.
package struct SessionMetadata: Sendable {
    package var sid: String
    package var app: String?
    package var appVersion: String?
    package var build: String?
    package var osName: String?
    package var osVersion: String?
    package var sdk: String?
    package var device: String?
    package var recordSeq: Int64?
    /// (1.1) The session record's `extension` key: the extension point of an app extension
    /// (e.g. `com.apple.share-services`), which has no scene life cycle. Nil in an app.
    package var extensionPoint: String?
    package init(sid: String) { self.sid = sid }

    /// (major, minor) of a version string such as "27.0" or "26.4.1".
    package static func version(_ text: String?) -> (Int, Int)? {
        guard let text, !text.isEmpty else { return nil }
        let parts = text.split(separator: ".").map { Int($0.prefix { $0.isNumber }) }
        guard let major = parts.first ?? nil else { return nil }
        let minor = parts.count > 1 ? (parts[1] ?? 0) : 0
        return (major, minor)
    }
}

/// The whole model of one session.
package final class SessionModel {
    package let metadata: SessionMetadata
    package var stats = SessionStats()
    /// Every instance in order of appearance.
    package var instances: [Instance] = []
    package var cycles: [AppearanceCycle] = []
    package var edges: [ContainmentEdge] = []
    package var attachments: [Attachment] = []
    package var anomalies: [LifecycleAnomaly] = []
    /// (start t, end t) of background periods (no appearance callbacks, no main-thread work).
    package var backgroundIntervals: [(Int64, Int64)] = []
    /// The deprecated app-delegate state transitions seen (`EventKind.isDeprecatedAppDelegateEvent`),
    /// by event: how many, the first one's t, and the first ten seqs.
    package var deprecatedAppDelegateEvents: [EventKind: (count: Int, firstT: Int64, seqs: [Int64])] = [:]
    package var sceneEventCount = 0
    package var findings: [Finding] = []
    /// Set when instances left memory in batches while the session was built: the instances
    /// whose class LC303 must count (every one whose class was unknown or limited at its
    /// start), since `instances` then holds only those not retired.
    package var growthCandidates: [Instance]?
    /// For a model built in batches: where instances it does not hold are found.
    package var directory: InstanceDirectory?
    /// Tombstones a batch may need but that left the directory (replaced since the last batch).
    package var lookupOnly: [InstanceKey: InstanceDirectory.Tombstone] = [:]

    package init(metadata: SessionMetadata) { self.metadata = metadata }

    package var sid: String { metadata.sid }
    /// Facts held: what building in batches (`ModelBuilder.compact`) keeps bounded.
    package var factCount: Int { instances.count + cycles.count + edges.count + attachments.count + anomalies.count }
    /// The session's end for rules: the largest t seen.
    package var endT: Int64 { stats.lastT ?? 0 }
    package var isLossy: Bool { stats.lostEvents > 0 }

    private var byKey: [InstanceKey: Instance] = [:]
    package func register(_ instance: Instance) {
        instances.append(instance)
        byKey[instance.key] = instance
    }
    package func unregister(_ key: InstanceKey) { byKey[key] = nil }
    /// An instance of this model, or a live one of the session when the model is a batch.
    package func instance(_ key: InstanceKey) -> Instance? {
        if let x = byKey[key] { return x }
        if let x = directory?.latest[key.vc], x.key == key { return x }
        return nil
    }
    private func tombstone(_ key: InstanceKey) -> InstanceDirectory.Tombstone? {
        lookupOnly[key] ?? directory?.tombstone(key)
    }
    /// The class of an instance, wherever it is held (findings name other instances' classes).
    package func cls(of key: InstanceKey) -> String? {
        if let x = instance(key) { return x.cls }
        return tombstone(key)?.cls ?? directory?.retiredClass(key)
    }
    /// Events for the instance's id after its deinit, with no new init (LC205).
    package func afterEndCount(of key: InstanceKey) -> Int? {
        instance(key)?.afterEndCount ?? tombstone(key)?.afterEndCount
    }

    /// Nanoseconds from `a` to `b` spent in the foreground: background periods do not count
    /// toward grace periods or stuck-appearance clocks (a suspended app runs nothing).
    package func foregroundTime(from a: Int64, to b: Int64) -> Int64 {
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
