import LCTraceFormat
import LCTraceModel

/// Builds a `SessionModel` from one session's events, fed in seq order.
///
/// Streaming: it keeps the state of live instances and appends facts as they are decided,
/// so memory follows the number of instances and cycles, not the number of layout or scene
/// events. For a long session, `compact()` hands out the facts that can no longer change in
/// a batch, so memory follows what is live instead (see `compact`). It records what happened
/// (states, releases, edges, attachments, anomalies); the rules in `Rules/` decide what is
/// worth a finding.
final class ModelBuilder {
    package let model: SessionModel
    /// Instances the model may name but no longer holds, and the latest instance of each id
    /// (`directory.latest`: live, or ended until retired; then a tombstone stands in).
    private let directory: InstanceDirectory
    /// Classes LC303 limits: instances that may be of one are kept for it (`SessionModel.growthCandidates`).
    private let growthClasses: Set<String>
    private var growthCandidates: [Instance] = []
    /// Batches handed out so far.
    package private(set) var batches = 0
    private var backgroundStart: Int64?
    /// (1.2) One foreground clock from every scene: scene id → in the foreground. The app is
    /// in the foreground while any scene is; before the first scene event, the app-delegate
    /// events decide (`appInForeground`).
    private var sceneInForeground: [String: Bool] = [:]
    private var appInForeground = true
    /// (1.2) When each scene that has not yet entered the foreground connected.
    private var connectedAt: [String: Int64] = [:]
    /// (1.1, 1.2) Interactive transitions still in progress (the finger sets the length of
    /// the appearances they move; see `InteractiveScope`).
    private var interactiveScopes: [InteractiveScope] = []
    /// (1.2) The highest seq lost so far (-1: none): events are consumed in seq order, so a
    /// hole lies between seq `a` and the current event exactly when `lostUpTo > a`.
    private var lostUpTo: Int64 = -1
    /// Presenter id → ids it presented (pruned as they are dismissed): the presentation chain
    /// a dismissal takes along.
    private var presentedBy: [String: [String]] = [:]
    /// (1.1) `dismiss` calls whose dismissal has not ended yet: the dismissed controller's
    /// instance and the call's seq. The dismissal ends at the first viewDidDisappear with
    /// isBeingDismissed among it and the controllers presented above it, and is dropped when
    /// one of them appears again (a cancelled interactive dismissal).
    private var pendingDismissals: [(root: Instance, seq: Int64)] = []
    /// Presented id → presenter id, for a presentation seen before the presented init; the
    /// next instance of that id takes it (a later instance of a reused id does not).
    private var presenterOf: [String: (vc: String, id: Int64)] = [:]
    /// Cycles in their appearing phase (a background period then marks them).
    private var appearingCycles = Set<Int>()
    /// willMoveToParent(P) logged before its addChild (recorders that log inside addChild).
    private var pendingWillMove: [InstanceKey: (parent: String, seq: Int64)] = [:]
    /// `directory.latest` by interned id (`StoredIDs.vc`), while every instance registered
    /// came with one (`latestByIDComplete`): the lookup of every event, by an integer instead
    /// of hashing and comparing the controller id's text.
    private var latestByID: [Int64: Instance] = [:]
    private var latestByIDComplete = true

    /// `retired`: where instances retired in earlier batches are read back (the rows already
    /// stored); without it every retired id keeps a small tombstone in memory.
    package init(sid: String, metadata: SessionMetadata? = nil, growthClasses: Set<String> = [],
         retired: RetiredInstances?, maxTombstones: Int = SessionAnalysis.defaultTombstones) {
        directory = InstanceDirectory(store: retired, maxTombstones: maxTombstones)
        model = SessionModel(metadata: metadata ?? SessionMetadata(sid: sid))
        model.directory = directory
        self.growthClasses = growthClasses
    }

    package convenience init(sid: String, metadata: SessionMetadata? = nil, growthClasses: Set<String> = []) {
        self.init(sid: sid, metadata: metadata, growthClasses: growthClasses, retired: nil)
    }

    private func register(_ x: Instance) {
        model.register(x)
        directory.latest[x.key.vc] = x
        if x.vcID != 0 {
            if latestByIDComplete { latestByID[x.vcID] = x }
        } else if latestByIDComplete {
            latestByIDComplete = false
            latestByID = [:]
        }
        if let gone = directory.removeTombstone(vc: x.key.vc), gone.afterEndCount > 0 {
            // Its LC205 anomaly, still in the model, names it until the next batch.
            directory.replaced[gone.key] = gone
        }
        if !growthClasses.isEmpty, x.cls.map(growthClasses.contains) ?? true { growthCandidates.append(x) }
    }

    // MARK: Feeding

    func consume(_ e: TraceEvent) {
        let expected = (model.stats.lastSeq ?? -1) + 1
        if e.seq > expected { lostUpTo = e.seq - 1 }
        model.stats.add(e)
        switch e.kind {
        case .sceneWillConnect:
            // (1.2) The first scene, or one connecting while another is in the foreground,
            // connects in the foreground. One connecting while every scene is in the background
            // (a window the system restores) starts no clock until it enters the foreground,
            // and then counts from its connection.
            let scene = e.detail ?? ""
            let foreground = sceneInForeground.isEmpty || sceneInForeground.values.contains(true)
            sceneInForeground[scene] = foreground
            if foreground { foregroundChanged(e.t) } else { connectedAt[scene] = e.t }
        case .sceneWillEnterForeground, .sceneDidBecomeActive:
            let scene = e.detail ?? ""
            sceneInForeground[scene] = true
            let since = connectedAt.removeValue(forKey: scene).map { max($0, backgroundStart ?? $0) }
            foregroundChanged(since ?? e.t)
        case .sceneDidEnterBackground, .sceneDidDisconnect:
            sceneInForeground[e.detail ?? ""] = false
            connectedAt[e.detail ?? ""] = nil
            foregroundChanged(e.t)
        case .appDidEnterBackground:
            appInForeground = false
            foregroundChanged(e.t)
        case .appWillEnterForeground, .appDidBecomeActive:
            appInForeground = true
            foregroundChanged(e.t)
        case .mark:
            // An app extension has no scenes and no app delegate: lctrace's recorder writes its
            // host's notifications as marks, which move the foreground clock as the app events do.
            if let foreground = ExtensionHostMark(rawValue: e.detail ?? "")?.inForeground {
                appInForeground = foreground
                foregroundChanged(e.t)
            }
        case .windowRoot:
            replaceWindowRoot(e)
        default:
            break
        }
        if e.kind.isSceneEvent { model.sceneEventCount += 1 }
        if e.kind.isDeprecatedAppDelegateEvent {
            var seen = model.deprecatedAppDelegateEvents[e.kind] ?? (0, e.t, [])
            seen.count += 1
            if seen.seqs.count < 10 { seen.seqs.append(e.seq) }
            model.deprecatedAppDelegateEvents[e.kind] = seen
        }
        guard e.kind.needsVC || (e.kind == .memoryWarning && e.vc != nil), let vc = e.vc,
              let x = instance(for: vc, e) else { return }
        // (1.2) Lost events between this instance's previous event and this one may have
        // completed what looks broken now: a containment step (since its previous event of
        // any kind), a transition (since its previous appearance event: a didMove or a
        // viewDetached recorded after the hole does not make the lost events any less lost).
        let afterHole = lostUpTo > (x.lastSeq ?? x.key.since)
        x.lastSeq = e.seq
        let appearanceAfterHole = lostUpTo > (x.lastAppearanceSeq ?? x.key.since)
        if e.kind.isAppearanceEvent { x.lastAppearanceSeq = e.seq }
        switch e.kind {
        case .viewDidLoad: viewDidLoad(x, e)
        case .viewWillAppear: viewWillAppear(x, e, afterHole: appearanceAfterHole)
        case .viewIsAppearing: viewIsAppearing(x, e, afterHole: appearanceAfterHole)
        case .viewDidAppear: viewDidAppear(x, e, afterHole: appearanceAfterHole)
        case .viewWillDisappear: viewWillDisappear(x, e, afterHole: appearanceAfterHole)
        case .viewDidDisappear: viewDidDisappear(x, e, afterHole: appearanceAfterHole)
        case .deinit: deinitialize(x, e)
        case .addChild: addChild(x, e)
        case .willMoveToParent: willMove(x, e)
        case .didMoveToParent: didMove(x, e)
        case .removeFromParent: removeFromParent(x, e)
        case .viewAttached: attach(x, e, afterHole: afterHole)
        case .viewDetached: detach(x, e.seq, e.t)
        case .present: present(by: x, e)
        case .dismiss: dismiss(x, e)
        case .push, .pop:
            let interactive = e.has(.interactive)
            if let child = e.other, let c = directory.latest[child], c.isAlive {
                c.lastNavigationCall = (e.kind, e.seq, interactive)
            }
            // (1.2) It moves the navigation controller's children (the pushed or popped one,
            // the one it covers or reveals) and what they contain.
            interactiveScopes.removeAll { $0.containers.contains(vc) }
            if interactive, let child = e.other {
                interactiveScopes.append(InteractiveScope(moved: [child], containers: [vc], endsWith: [child]))
            }
        default:
            break
        }
    }

    /// Closes what is still open at the session's end and returns the model.
    package func finish() -> SessionModel {
        if let start = backgroundStart {
            model.backgroundIntervals.append((start, max(start, model.endT)))
            backgroundStart = nil
        }
        for x in model.instances where x.isAlive {
            if let c = x.openCycle {
                model.cycles[c].ending = x.state == .visible ? .visibleAtEnd : .sessionEnd
                // (1.2) A stuck appearance whose completion may be lost is not judged.
                if lostUpTo > model.cycles[c].willSeq { model.cycles[c].acrossHole = true }
                x.openCycle = nil
            }
            if let a = x.activeEdge, lostUpTo > model.edges[a].addSeq { model.edges[a].acrossHole = true }
            if let a = x.activeAttachment {
                if lostUpTo > model.attachments[a].attachSeq { model.attachments[a].acrossHole = true }
                viewLeftBehindEnds(x, a)
            }
        }
        if batches > 0 && !growthClasses.isEmpty { model.growthCandidates = growthCandidates }
        return model
    }

    // MARK: The foreground clock

    /// True while the app is in the foreground: while any scene is (Apple:
    /// `applicationState` is that of the most active scene) and the app-level events (the
    /// app delegate's, or UIApplication's notifications a recorder may hear beside the
    /// scenes') last said so; in a session without scene events, as the latter said.
    private var inForeground: Bool {
        appInForeground && (sceneInForeground.isEmpty || sceneInForeground.values.contains(true))
    }

    /// Opens or closes a background interval when the app's state changed at `t`.
    private func foregroundChanged(_ t: Int64) {
        if inForeground, let start = backgroundStart {
            model.backgroundIntervals.append((start, t))
            backgroundStart = nil
        } else if !inForeground && backgroundStart == nil {
            backgroundStart = t
            for index in appearingCycles { model.cycles[index].backgrounded = true }
        }
    }

    // MARK: Batches

    /// Facts held in memory: what `compact` can shrink.
    package var factCount: Int { model.factCount }

    /// Moves every fact that can no longer change out of `model` into a batch and returns it,
    /// so that a long session is judged and written in pieces and memory follows what is live,
    /// not the session's length. Run the fact rules (`RuleScope.facts`) on the batch and store
    /// its rows; the session rules run on the model left at the end. A fact is final when:
    /// - an instance has ended (deinit or reused id): its row no longer changes. If it is
    ///   still the latest instance of its id, a tombstone stands in for it, so that events
    ///   after its deinit are still recognised;
    /// - a cycle is not the open one of a live instance;
    /// - an edge is not the active or last one of a live child (a re-add and a late
    ///   `didMove(toParent: nil)` land on the last), nor one whose view was left behind by a
    ///   removal and is still attached (LC104 looks at that view's later fate);
    /// - an attachment is not a live instance's current one, nor one such an edge looks at;
    /// - an anomaly is not the "after deinit" one of an id still counting events after its deinit.
    package func compact() -> SessionModel {
        batches += 1
        let batch = SessionModel(metadata: model.metadata)
        batch.directory = directory
        batch.lookupOnly = directory.replaced
        directory.replaced = [:]
        batch.stats = model.stats
        // Foreground clocks of ended instances stop at their end: an open background period counts up to it.
        batch.backgroundIntervals = model.backgroundIntervals + (backgroundStart.map { [($0, Int64.max)] } ?? [])
        let live = model.instances.filter(\.isAlive)
        moveFinalFacts(to: batch, live: live)
        moveSettledAnomalies(to: batch)
        retireEndedInstances(to: batch)
        model.instances = live
        return batch
    }

    /// Moves the final cycles, edges and attachments into `batch`; renumbers what the live
    /// instances (and the edges left) point at in the model's arrays.
    private func moveFinalFacts(to batch: SessionModel, live: [Instance]) {
        var keepCycle = Set<Int>(), keepEdge = Set<Int>(), keepAttachment = Set<Int>()
        for x in live {
            if let c = x.openCycle { keepCycle.insert(c) }
            if let e = x.activeEdge { keepEdge.insert(e) }
            if let e = x.lastEdge { keepEdge.insert(e) }
            if let a = x.activeAttachment { keepAttachment.insert(a) }
        }
        for e in keepEdge { if let a = model.edges[e].attachmentAtRemoval { keepAttachment.insert(a) } }
        for (i, edge) in model.edges.enumerated() {
            if let a = edge.attachmentAtRemoval, keepAttachment.contains(a) { keepEdge.insert(i) }
        }

        let cycles = Self.split(model.cycles, keep: keepCycle)
        let edges = Self.split(model.edges, keep: keepEdge)
        let attachments = Self.split(model.attachments, keep: keepAttachment)
        // An edge and the attachment it looks at are kept, or moved, together.
        func renumbered(_ edges: [ContainmentEdge]) -> [ContainmentEdge] {
            edges.map { var e = $0; e.attachmentAtRemoval = e.attachmentAtRemoval.map { attachments.index[$0]! }; return e }
        }
        (model.cycles, batch.cycles) = (cycles.kept, cycles.gone)
        (model.attachments, batch.attachments) = (attachments.kept, attachments.gone)
        (model.edges, batch.edges) = (renumbered(edges.kept), renumbered(edges.gone))
        for x in live {
            x.openCycle = x.openCycle.map { cycles.index[$0]! }
            x.activeEdge = x.activeEdge.map { edges.index[$0]! }
            x.lastEdge = x.lastEdge.map { edges.index[$0]! }
            x.activeAttachment = x.activeAttachment.map { attachments.index[$0]! }
        }
        appearingCycles = Set(appearingCycles.map { cycles.index[$0]! })
    }

    /// Moves every anomaly but the "after deinit" ones of ids still counting such events.
    private func moveSettledAnomalies(to batch: SessionModel) {
        var kept: [LifecycleAnomaly] = []
        for a in model.anomalies {
            let counting = a.kind == .afterDeinit
                && (directory.latest[a.instance.vc]?.key == a.instance || directory.heldTombstone(vc: a.instance.vc)?.key == a.instance)
            if counting { kept.append(a) } else { batch.anomalies.append(a) }
        }
        model.anomalies = kept
    }

    /// Moves the ended instances into `batch`; a tombstone stands in for those still the latest of their id.
    private func retireEndedInstances(to batch: SessionModel) {
        for x in model.instances where !x.isAlive {
            model.unregister(x.key)
            batch.register(x)
            x.retired = true
            x.children = [:]
            if x.wasContainer, let cls = x.cls { directory.retireContainer(x.key, cls: cls) }
            if directory.latest[x.key.vc] === x {
                directory.latest[x.key.vc] = nil
                if x.vcID != 0 { latestByID[x.vcID] = nil }
                directory.setTombstone(InstanceDirectory.Tombstone(x))
            }
        }
    }

    /// Splits `items` into those at `keep` and the rest, each in order, with every old index's
    /// new index in its part.
    private static func split<T>(_ items: [T], keep: Set<Int>) -> (kept: [T], gone: [T], index: [Int: Int]) {
        var kept: [T] = [], gone: [T] = []
        var index: [Int: Int] = [:]
        kept.reserveCapacity(keep.count)
        gone.reserveCapacity(items.count - keep.count)
        for (i, item) in items.enumerated() {
            if keep.contains(i) {
                index[i] = kept.count
                kept.append(item)
            } else {
                index[i] = gone.count
                gone.append(item)
            }
        }
        return (kept, gone, index)
    }

    // MARK: Instances

    /// The instance an event is about. `init` starts a new instance (ending a live one with
    /// the same id as reused); an id never initialised starts an instance at its first
    /// event (LC902); events after a deinit are anomalies and change nothing.
    private func instance(for vc: String, _ e: TraceEvent) -> Instance? {
        let latest = e.ids.vc != 0 && latestByIDComplete ? latestByID[e.ids.vc] : directory.latest[vc]
        if e.kind == .`init` {
            if let old = latest, old.isAlive {
                old.end = .reused
                old.endSeq = e.seq
                old.endT = e.t
                closeOnEnd(old, e)
            }
            let x = Instance(key: InstanceKey(vc: vc, since: e.seq), firstT: e.t)
            x.vcID = e.ids.vc
            x.cls = e.cls
            x.clsID = e.ids.cls
            x.initSeq = e.seq
            x.initT = e.t
            if e.attrs != nil { x.uikitClass = AttrsText.strings(e.attrs, ["uikit"])["uikit"] }
            adoptPendingPresentation(x)
            register(x)
            return x
        }
        if let x = latest {
            if x.isAlive {
                if x.cls == nil, let cls = e.cls { x.cls = cls; x.clsID = e.ids.cls }
                if x.initSeq == nil && x.unknownEventSeqs.count < 5 { x.unknownEventSeqs.append(e.seq) }
                return x
            }
            // (1.2) Lost events since its end may hold a new `init` at the reused address: the
            // event starts an uninitialised instance instead of being an event after deinit.
            if lostUpTo <= (x.endSeq ?? x.key.since) {
                x.afterEndCount += 1
                if x.afterEndCount == 1 {
                    anomaly(.afterDeinit, x.key, x.state, e, evidence: [x.endSeq ?? x.key.since, e.seq])
                }
                return nil
            }
        } else if var t = directory.tombstone(vc: vc, at: e.seq), lostUpTo <= (t.endSeq ?? t.key.since) {
            t.afterEndCount += 1
            if t.afterEndCount == 1 {
                anomaly(.afterDeinit, t.key, t.state, e, evidence: [t.endSeq ?? t.key.since, e.seq])
            }
            directory.setTombstone(t)
            return nil
        }
        let x = Instance(key: InstanceKey(vc: vc, since: e.seq), firstT: e.t)
        x.vcID = e.ids.vc
        x.cls = e.cls
        x.clsID = e.ids.cls
        x.firstEventName = e.name
        x.unknownEventSeqs = [e.seq]
        adoptPendingPresentation(x)
        register(x)
        return x
    }

    /// A presentation seen before the presented controller's first event goes to this instance.
    private func adoptPendingPresentation(_ x: Instance) {
        guard let presenter = presenterOf.removeValue(forKey: x.key.vc) else { return }
        x.presenter = presenter.vc
        x.presenterID = presenter.id
        x.isPresented = true
    }

    /// The class of the latest instance of an id, retired or not.
    private func latestClass(_ vc: String, at seq: Int64) -> String? {
        if let x = directory.latest[vc] { return x.cls }
        return directory.tombstone(vc: vc, at: seq)?.cls
    }

    private func anomaly(_ kind: LifecycleAnomaly.Kind, _ x: Instance, _ e: TraceEvent, evidence: [Int64]) {
        anomaly(kind, x.key, x.state, e, evidence: evidence)
    }

    private func anomaly(_ kind: LifecycleAnomaly.Kind, _ key: InstanceKey, _ state: AppearanceState, _ e: TraceEvent,
                         evidence: [Int64]) {
        model.anomalies.append(LifecycleAnomaly(kind: kind, instance: key, event: e.kind, state: state,
                                                seq: e.seq, t: e.t, evidence: evidence))
    }

    private func cycleStart(_ x: Instance) -> [Int64] {
        x.openCycle.map { [model.cycles[$0].willSeq] } ?? []
    }

    // MARK: Appearance

    private func viewDidLoad(_ x: Instance, _ e: TraceEvent) {
        x.viewDidLoadCount += 1
        if x.viewDidLoadCount == 1 {
            x.viewDidLoadSeq = e.seq
        } else if x.viewDidLoadCount == 2 {
            anomaly(.secondViewDidLoad, x, e, evidence: [x.viewDidLoadSeq ?? e.seq, e.seq])
        }
    }

    private func startCycle(_ x: Instance, _ e: TraceEvent, resumed: Bool) {
        var cycle = AppearanceCycle(instance: x.key, vcID: x.vcID, willSeq: e.seq, willT: e.t)
        if e.flags.contains(EventFlags.present(.animated)) { cycle.animated = e.has(.animated) }
        cycle.resumedFromDisappearing = resumed
        cycle.backgrounded = backgroundStart != nil
        // (1.2) Its own viewWillAppear says the finger drives it, or a transition in progress moves it.
        if e.has(.interactive) || movedByInteractiveTransition(x) { cycle.interactive = true }
        model.cycles.append(cycle)
        let index = model.cycles.count - 1
        x.openCycle = index
        x.cycleCount += 1
        appearingCycles.insert(index)
    }

    /// True when an interactive transition in progress moves `x`: `x` or a controller that
    /// contains it is one the transition moves, a child of the navigation controller whose
    /// push or pop it is, or a controller it reveals or covers that is itself appearing or
    /// disappearing (`x` is: its viewWillAppear is being handled).
    private func movedByInteractiveTransition(_ x: Instance) -> Bool {
        guard !interactiveScopes.isEmpty else { return false }
        var node: Instance? = x
        var depth = 0
        while let n = node, depth < 64 {
            let changing = n === x || n.state == .appearing || n.state == .disappearing
            for scope in interactiveScopes {
                if scope.moved.contains(n.key.vc) { return true }
                if let p = n.parent, scope.containers.contains(p) { return true }
                if changing && scope.revealed.contains(n.key.vc) { return true }
            }
            node = n.parent.flatMap { directory.latest[$0] }
            depth += 1
        }
        return false
    }

    /// `id` and the controllers that contain it: what a presentation by `id` may reveal or
    /// cover (UIKit makes a container the presenter when a child presents).
    private func withContainers(_ id: String?) -> Set<String> {
        var out = Set<String>()
        var node = id
        while let n = node, out.count < 64, out.insert(n).inserted { node = directory.latest[n]?.parent }
        return out
    }

    private func closeCycle(_ x: Instance, ending: AppearanceCycle.Ending) {
        guard let c = x.openCycle else { return }
        model.cycles[c].ending = ending
        appearingCycles.remove(c)
        x.openCycle = nil
    }

    private func viewWillAppear(_ x: Instance, _ e: TraceEvent, afterHole: Bool) {
        switch x.state {
        case .hidden:
            startCycle(x, e, resumed: false)
        case .disappearing:
            closeCycle(x, ending: .disappearCancelled)
            startCycle(x, e, resumed: true)
        case .appearing, .visible:
            if !afterHole { anomaly(.transition, x, e, evidence: cycleStart(x) + [e.seq]) }
            closeCycle(x, ending: afterHole ? .lost : .violation)
            startCycle(x, e, resumed: false)
        }
        x.state = .appearing
        x.removedWithoutCallbacks = false
        cancelRelease(x)
        // (1.2) The finger drives it: what it contains appears inside the same transition.
        if e.has(.interactive) {
            interactiveScopes.append(InteractiveScope(moved: [x.key.vc], endsWith: [x.key.vc]))
        }
    }

    private func viewIsAppearing(_ x: Instance, _ e: TraceEvent, afterHole: Bool) {
        guard x.state == .appearing, let c = x.openCycle else {
            if afterHole {
                x.state = .appearing   // the viewWillAppear was lost: resume from what this implies
            } else {
                anomaly(.transition, x, e, evidence: cycleStart(x) + [e.seq])
            }
            return
        }
        if model.cycles[c].isAppearingCount > 0 {
            anomaly(.secondViewIsAppearing, x, e, evidence: [model.cycles[c].isSeq ?? e.seq, e.seq])
        } else {
            model.cycles[c].isSeq = e.seq
            model.cycles[c].isT = e.t
        }
        model.cycles[c].isAppearingCount += 1
    }

    private func viewDidAppear(_ x: Instance, _ e: TraceEvent, afterHole: Bool) {
        switch x.state {
        case .appearing:
            if let c = x.openCycle {
                model.cycles[c].didSeq = e.seq
                model.cycles[c].didT = e.t
                model.cycles[c].outcome = .completed
                if model.cycles[c].animated == nil, e.flags.contains(EventFlags.present(.animated)) {
                    model.cycles[c].animated = e.has(.animated)
                }
                appearingCycles.remove(c)
                if model.cycles[c].isSeq == nil && !model.cycles[c].resumedFromDisappearing {
                    x.missingIsAppearingCount += 1
                    if x.firstMissingIsAppearing == nil { x.firstMissingIsAppearing = (model.cycles[c].willSeq, e.seq, e.t, model.cycles[c].animated ?? false) }
                }
            }
        case .visible:
            let did = x.openCycle.flatMap { model.cycles[$0].didSeq }
            if !afterHole { anomaly(.transition, x, e, evidence: (did.map { [$0] } ?? []) + [e.seq]) }
        case .hidden, .disappearing:
            if !afterHole { anomaly(.transition, x, e, evidence: cycleStart(x) + [e.seq]) }
        }
        x.state = .visible
        endInteractiveTransition(of: x)
        // Shown again: a dismissal it belonged to was cancelled (an interactive swipe let go).
        pendingDismissals.removeAll { dismissalMembers($0.root).contains { $0 === x } }
    }

    private func viewWillDisappear(_ x: Instance, _ e: TraceEvent, afterHole: Bool) {
        switch x.state {
        case .appearing, .visible:
            if let c = x.openCycle {
                if x.state == .appearing {
                    model.cycles[c].outcome = .cancelled
                    appearingCycles.remove(c)
                }
                model.cycles[c].willDisappearSeq = e.seq
                model.cycles[c].willDisappearT = e.t
            }
        case .hidden:
            // A controller removed without callbacks may still get the late ones UIKit sends.
            if !afterHole && !x.removedWithoutCallbacks { anomaly(.transition, x, e, evidence: [e.seq]) }
        case .disappearing:
            let will = x.openCycle.flatMap { model.cycles[$0].willDisappearSeq }
            if !afterHole { anomaly(.transition, x, e, evidence: (will.map { [$0] } ?? []) + [e.seq]) }
        }
        x.state = .disappearing
        // (1.2) The finger drives its disappearance: the transition moves it, what it
        // contains, its siblings in its container (the one a pop reveals) and its presenter.
        if e.has(.interactive) {
            interactiveScopes.append(InteractiveScope(moved: [x.key.vc], containers: x.parent.map { [$0] } ?? [],
                                                      revealed: x.isPresented ? withContainers(x.presenter) : [],
                                                      endsWith: [x.key.vc]))
        }
    }

    private func viewDidDisappear(_ x: Instance, _ e: TraceEvent, afterHole: Bool) {
        switch x.state {
        case .disappearing:
            if let c = x.openCycle {
                model.cycles[c].didDisappearSeq = e.seq
                model.cycles[c].didDisappearT = e.t
            }
            closeCycle(x, ending: .disappeared)
        case .hidden:
            if !afterHole && !x.removedWithoutCallbacks { anomaly(.transition, x, e, evidence: [e.seq]) }
        case .visible, .appearing:
            if !afterHole { anomaly(.transition, x, e, evidence: cycleStart(x) + [e.seq]) }
            closeCycle(x, ending: afterHole ? .lost : .violation)
        }
        x.state = .hidden
        endInteractiveTransition(of: x)
        if e.has(.isBeingDismissed) {
            endDismissal(x, e)
        } else if e.has(.isMovingFromParent) {
            let navigation = x.lastNavigationCall?.kind == .pop
                || (x.parent.flatMap { latestClass($0, at: e.seq) }?.hasSuffix("NavigationController") ?? false)
            release(x, e, how: navigation ? .pop : .removeFromParent,
                    callSeq: navigation ? x.lastNavigationCall?.seq : nil)
        }
    }

    /// `x` completed or cancelled its appearance, or ended: the transitions it ends are over.
    private func endInteractiveTransition(of x: Instance) {
        if !interactiveScopes.isEmpty { interactiveScopes.removeAll { $0.endsWith.contains(x.key.vc) } }
    }

    private func deinitialize(_ x: Instance, _ e: TraceEvent) {
        if x.state != .hidden && !x.removedWithoutCallbacks {
            anomaly(.transition, x, e, evidence: cycleStart(x) + [e.seq])
        }
        x.end = .deinit
        x.endSeq = e.seq
        x.endT = e.t
        closeOnEnd(x, e)
    }

    /// Closes an instance's open facts when it ends (deinit, or its id reused).
    private func closeOnEnd(_ x: Instance, _ e: TraceEvent) {
        closeCycle(x, ending: .deinit)
        endInteractiveTransition(of: x)
        if !pendingDismissals.isEmpty { pendingDismissals.removeAll { $0.root === x } }
        x.isPresented = false
        if let a = x.activeEdge {
            model.edges[a].childEndSeq = e.seq
            model.edges[a].childEndT = e.t
            if lostUpTo > model.edges[a].addSeq { model.edges[a].acrossHole = true }
            x.activeEdge = nil
        }
        if let parent = x.parent, let p = directory.latest[parent] {
            p.children[ObjectIdentifier(x)] = nil
        }
        x.parent = nil
        if let a = x.activeAttachment {
            model.attachments[a].endSeq = e.seq
            if lostUpTo > model.attachments[a].attachSeq { model.attachments[a].acrossHole = true }
            viewLeftBehindEnds(x, a)
            x.activeAttachment = nil
        }
        // Children still contained by an instance that is gone went with it.
        if x.release == nil {
            for child in x.children.values where child.isAlive && child.release == nil {
                child.release = Release(seq: e.seq, t: e.t, how: .ancestor, ancestor: x.key, callSeq: nil)
                releaseDescendants(of: child, seq: e.seq, t: e.t)
            }
        }
    }

    // MARK: Releases

    private func release(_ x: Instance, _ e: TraceEvent, how: ReleaseHow, ancestor: InstanceKey? = nil, callSeq: Int64?) {
        guard x.release == nil else { return }  // the first release counts
        x.release = Release(seq: e.seq, t: e.t, how: how, ancestor: ancestor, callSeq: callSeq)
        if keptByUIKit(x) { x.keptByUIKit = true }
        releaseDescendants(of: x, seq: e.seq, t: e.t)
    }

    /// Children still contained by a released controller are released with it, at the same
    /// moment; (1.2) those of a controller UIKit keeps are kept with it.
    private func releaseDescendants(of x: Instance, seq: Int64, t: Int64, depth: Int = 0) {
        guard depth < 64 else { return }
        for child in x.children.values where child.isAlive && child.release == nil {
            child.release = Release(seq: seq, t: t, how: .ancestor, ancestor: x.key, callSeq: nil)
            if x.keptByUIKit || keptByUIKit(child) { child.keptByUIKit = true }
            releaseDescendants(of: child, seq: seq, t: t, depth: depth + 1)
        }
    }

    /// (1.2) Controllers UIKit keeps by design once dismissed: a search controller stays owned
    /// by `navigationItem.searchController` (or the view that hosts its bar) and is presented
    /// again on the next search; so do the controllers it contains (its results controller).
    private func keptByUIKit(_ x: Instance) -> Bool {
        var node: Instance? = x
        var depth = 0
        while let n = node, depth < 64 {
            if Self.keptClasses.contains(n.cls ?? "") || Self.keptClasses.contains(n.uikitClass ?? "") { return true }
            node = n.parent.flatMap { directory.latest[$0] }
            depth += 1
        }
        return false
    }

    /// The UIKit classes whose instances UIKit keeps after their dismissal (an array: one or
    /// two names are compared faster than a String is hashed, at every dismissal's ancestors).
    static let keptClasses: [String] = ["UISearchController"]

    /// Showing an instance again cancels its release, and the releases its release caused.
    private func cancelRelease(_ x: Instance) {
        guard let r = x.release else { return }
        x.release = nil
        func cancel(_ node: Instance, depth: Int) {
            guard depth < 64 else { return }
            for child in node.children.values where child.release?.how == .ancestor && child.release?.seq == r.seq {
                child.release = nil
                cancel(child, depth: depth + 1)
            }
        }
        cancel(x, depth: 0)
    }

    // MARK: Presentations

    /// `present`: the presented controller is in use again (a release is cancelled) and
    /// belongs to its presenter's chain until dismissed.
    private func present(by presenter: Instance, _ e: TraceEvent) {
        guard let presented = e.other else { return }
        if let y = directory.latest[presented], y.isAlive {
            y.presenter = presenter.key.vc
            y.presenterID = presenter.vcID
            y.isPresented = true
            cancelRelease(y)
            if let a = y.activeAttachment { model.attachments[a].presented = true }
        } else {
            presenterOf[presented] = (presenter.key.vc, presenter.vcID)
        }
        // Only presentations still in force stay listed, so the list follows what is on screen.
        var listed = presentedBy[presenter.key.vc] ?? []
        listed.removeAll { id in
            guard let y = directory.latest[id] else { return presenterOf[id] == nil }
            return !(y.isAlive && y.isPresented && y.presenter == presenter.key.vc)
        }
        listed.append(presented)
        presentedBy[presenter.key.vc] = listed
        if e.has(.interactive) {
            interactiveScopes.append(InteractiveScope(moved: [presented], revealed: withContainers(presenter.key.vc),
                                                      endsWith: [presented]))
        }
    }

    /// `dismiss` of X: X (when it was presented) and every controller presented above it go
    /// when the dismissal ends (`endDismissal`).
    private func dismiss(_ x: Instance, _ e: TraceEvent) {
        x.dismissCallSeq = e.seq
        pendingDismissals.removeAll { $0.root === x }
        pendingDismissals.append((x, e.seq))
        if e.has(.interactive) {
            let moved = Set(dismissalMembers(x).map(\.key.vc) + [x.key.vc])
            interactiveScopes.append(InteractiveScope(moved: moved, revealed: withContainers(x.presenter), endsWith: moved))
        }
    }

    /// (1.1, 1.2) A dismissal or a root swap removed `y` (and what it contains) without the
    /// callbacks UIKit does not send there: from now on they are hidden for every rule (a later
    /// deinit is not LC201, showing them again is not LC202, an open appearance is not stuck).
    private func removedWithoutCallbacks(_ y: Instance, except x: Instance? = nil) {
        for node in [y] + contained(in: y) where node !== x && node.state != .hidden {
            node.removedWithoutCallbacks = true
            // One that got viewWillDisappear (a dismissed container's child, told just after
            // its parent) gets its viewDidDisappear next: its cycle stays open for it.
            if node.state == .disappearing { continue }
            closeCycle(node, ending: .disappeared)
            node.state = .hidden
            endInteractiveTransition(of: node)
        }
    }

    /// Live controllers presented above `root`, directly or up a chain, in chain order. (1.2)
    /// What a controller inside one of them presented counts too: when a child (the top of a
    /// navigation stack) calls `present`, UIKit makes a container the presenter.
    private func presentedChain(above root: Instance) -> [Instance] {
        var chain: [Instance] = []
        var seen = Set<ObjectIdentifier>([ObjectIdentifier(root)])
        var frontier = [root]
        while let top = frontier.popLast(), chain.count < 64 {
            for node in [top] + contained(in: top) {
                var ids = presentedBy[node.key.vc] ?? []
                ids.removeAll { id in
                    guard let y = directory.latest[id], y.isAlive, y.isPresented, y.presenter == node.key.vc else { return true }
                    if seen.insert(ObjectIdentifier(y)).inserted { chain.append(y); frontier.append(y) }
                    return false
                }
                presentedBy[node.key.vc] = ids.isEmpty ? nil : ids
            }
        }
        return chain
    }

    /// The live controllers `x` contains, at any depth (addChild edges in force).
    private func contained(in x: Instance) -> [Instance] {
        var out: [Instance] = []
        var frontier = [x]
        while let node = frontier.popLast(), out.count < 4096 {
            for child in node.children.values where child.isAlive {
                out.append(child)
                frontier.append(child)
            }
        }
        return out
    }

    /// What a dismissal of `root` removes: `root` when it was presented, and its chain.
    private func dismissalMembers(_ root: Instance) -> [Instance] {
        (root.isPresented ? [root] : []) + presentedChain(above: root)
    }

    /// A viewDidDisappear with isBeingDismissed: the dismissal it belongs to has ended. The
    /// dismissed controller is released (`dismiss`), and everything presented above it with
    /// it (`chain`, naming the dismissed one), whether or not they got callbacks.
    private func endDismissal(_ x: Instance, _ e: TraceEvent) {
        let pending = pendingDismissals.firstIndex { p in p.root === x || dismissalMembers(p.root).contains { $0 === x } }
        let root = pending.map { pendingDismissals[$0].root } ?? x
        let callSeq = pending.map { pendingDismissals[$0].seq } ?? x.dismissCallSeq
        if let pending { pendingDismissals.remove(at: pending) }
        let chain = presentedChain(above: root)
        if root.isAlive && (root.isPresented || root === x) {
            root.isPresented = false
            removedWithoutCallbacks(root, except: x)
            release(root, e, how: .dismiss, callSeq: callSeq)
        }
        for y in chain {
            y.isPresented = false
            removedWithoutCallbacks(y, except: x)
            release(y, e, how: .chain, ancestor: root.key, callSeq: callSeq)
        }
        presentedBy[root.key.vc] = nil
    }

    // MARK: Window roots

    /// (1.2) `window.rootViewController = new`: the old root is released at this moment, with
    /// what it contains and every chain it presented (a root kept alive by a sheet left open
    /// becomes findable); the new one is in use (a release of it is cancelled).
    private func replaceWindowRoot(_ e: TraceEvent) {
        if let new = e.vc, let y = directory.latest[new], y.isAlive { cancelRelease(y) }
        guard let old = AttrsText.strings(e.attrs, ["old"])["old"], old != e.vc,
              let root = directory.latest[old], root.isAlive else { return }
        let chain = presentedChain(above: root)
        removedWithoutCallbacks(root)
        release(root, e, how: .root, callSeq: e.seq)
        for y in chain {
            y.isPresented = false
            removedWithoutCallbacks(y)
            release(y, e, how: .chain, ancestor: root.key, callSeq: e.seq)
        }
        presentedBy[root.key.vc] = nil
    }

    // MARK: Containment

    /// True when controller `host` is `ancestor` or sits below it through addChild edges in force.
    private func isWithin(_ host: String, _ ancestor: String?) -> Bool {
        guard let ancestor else { return false }
        var node: String? = host
        var depth = 0
        while let id = node, depth < 64 {
            if id == ancestor { return true }
            node = directory.latest[id]?.parent
            depth += 1
        }
        return false
    }

    private func addChild(_ x: Instance, _ e: TraceEvent) {
        guard let parent = e.other else { return }
        if let a = x.activeEdge {
            if model.edges[a].parent == parent { return }  // already its child: UIKit ignores it
            // Re-parented without a recorded removal: UIKit removes it first.
            model.edges[a].willRemoveSeq = model.edges[a].willRemoveSeq ?? e.seq
            model.edges[a].removeSeq = e.seq
            model.edges[a].removeT = e.t
            if let p = x.parent.flatMap({ directory.latest[$0] }) { p.children[ObjectIdentifier(x)] = nil }
        }
        let p = directory.latest[parent].flatMap { $0.isAlive ? $0 : nil }
        var edge = ContainmentEdge(child: x.key, parent: parent, childID: x.vcID, parentID: e.ids.other,
                                   parentSince: p?.key.since, addSeq: e.seq, addT: e.t)
        if let pending = pendingWillMove.removeValue(forKey: x.key), pending.parent == parent {
            edge.willMoveSeq = pending.seq
        }
        model.edges.append(edge)
        let index = model.edges.count - 1
        // Re-adding to the parent that left its view behind cures LC104.
        if let last = x.lastEdge, model.edges[last].parent == parent,
           model.edges[last].attachmentAtRemoval != nil, model.edges[last].readdSeq == nil {
            model.edges[last].readdSeq = e.seq
        }
        x.activeEdge = index
        x.lastEdge = index
        x.parent = parent
        x.lastParent = parent
        x.lastParentID = e.ids.other
        // (1.1) Adopted again (moved to another container, e.g. a collapsing split view): in use.
        cancelRelease(x)
        p?.children[ObjectIdentifier(x)] = x
        p?.wasContainer = true
        if let a = x.activeAttachment, let host = model.attachments[a].host,
           !model.attachments[a].childOfHostAtAttach, model.attachments[a].becameChildSeq == nil,
           isWithin(host, parent) {
            model.attachments[a].becameChildSeq = e.seq
        }
    }

    private func willMove(_ x: Instance, _ e: TraceEvent) {
        if let parent = e.other {
            if let a = x.activeEdge, model.edges[a].parent == parent {
                if model.edges[a].willMoveSeq == nil { model.edges[a].willMoveSeq = e.seq }
            } else {
                pendingWillMove[x.key] = (parent, e.seq)
            }
        } else if let a = x.activeEdge, model.edges[a].willRemoveSeq == nil {
            model.edges[a].willRemoveSeq = e.seq
        }
    }

    private func didMove(_ x: Instance, _ e: TraceEvent) {
        if let parent = e.other {
            if let a = x.activeEdge, model.edges[a].parent == parent, model.edges[a].didMoveSeq == nil {
                model.edges[a].didMoveSeq = e.seq
            }
        } else if let a = x.activeEdge {
            if model.edges[a].didRemoveSeq == nil { model.edges[a].didRemoveSeq = e.seq }
        } else if let last = x.lastEdge, model.edges[last].removeSeq != nil, model.edges[last].didRemoveSeq == nil {
            model.edges[last].didRemoveSeq = e.seq
        }
    }

    private func removeFromParent(_ x: Instance, _ e: TraceEvent) {
        guard let a = x.activeEdge else { return }
        let parent = model.edges[a].parent
        model.edges[a].removeSeq = e.seq
        model.edges[a].removeT = e.t
        if lostUpTo > model.edges[a].addSeq { model.edges[a].acrossHole = true }
        if let at = x.activeAttachment, let host = model.attachments[at].host, isWithin(host, parent) {
            model.edges[a].attachmentAtRemoval = at
        }
        if let p = directory.latest[parent] { p.children[ObjectIdentifier(x)] = nil }
        x.activeEdge = nil
        x.parent = nil
        let navigation = x.lastNavigationCall?.kind == .pop
        release(x, e, how: navigation ? .pop : .removeFromParent, callSeq: navigation ? x.lastNavigationCall?.seq : nil)
    }

    // MARK: Views

    /// (1.2) The attachment `a` of `x` ends (its deinit, the session's end) while still in the
    /// hierarchy its last removal left it in: a viewDetached lost after that removal would
    /// have detached it, so LC104 does not judge the removal.
    private func viewLeftBehindEnds(_ x: Instance, _ a: Int) {
        guard let last = x.lastEdge, model.edges[last].attachmentAtRemoval == a,
              let removed = model.edges[last].removeSeq, lostUpTo > removed else { return }
        model.edges[last].acrossHole = true
    }

    private func attach(_ x: Instance, _ e: TraceEvent, afterHole: Bool = false) {
        if x.activeAttachment != nil { detach(x, e.seq, e.t) }  // moved to another superview
        let host = e.other
        let childOf = host.map { isWithin($0, x.parent) } ?? true
        var attachment = Attachment(
            instance: x.key, host: host, hostClass: host.flatMap { latestClass($0, at: e.seq) },
            attachSeq: e.seq, attachT: e.t, childOfHostAtAttach: childOf, presented: x.isPresented)
        if !childOf, let parent = x.parent {
            attachment.parentAtAttach = parent
            attachment.parentClassAtAttach = latestClass(parent, at: e.seq)
        }
        attachment.acrossHole = afterHole
        model.attachments.append(attachment)
        x.activeAttachment = model.attachments.count - 1
    }

    private func detach(_ x: Instance, _ seq: Int64, _ t: Int64) {
        guard let a = x.activeAttachment else { return }
        model.attachments[a].detachSeq = seq
        model.attachments[a].detachT = t
        if lostUpTo > model.attachments[a].attachSeq { model.attachments[a].acrossHole = true }
        x.activeAttachment = nil
    }
}


/// (1.1, 1.2) An interactive transition in progress: the finger sets the length of the
/// appearances of the controllers it moves (rules.md, LC401), and of nothing else.
private struct InteractiveScope {
    /// Controllers it moves: the pushed or popped, presented or dismissed ones (with their
    /// chain); their appearances and those of what they contain are inside it.
    var moved: Set<String> = []
    /// Navigation controllers whose children it moves (a push or pop covers the one below).
    var containers: Set<String> = []
    /// Controllers it may reveal or cover (a presenter and its containers): inside it only
    /// while they are appearing or disappearing themselves (a form sheet's presenter stays
    /// visible, and a push under the sheet is not the finger's).
    var revealed: Set<String> = []
    /// The transition ends when one of these completes or cancels its appearance, or ends.
    var endsWith: Set<String> = []
}

/// String values of keys that have no column, read from an event's `attrs`: `old` and `scene`
/// of `windowRoot`, `uikit` of `init` (trace format 1.2). A handful per session: read here
/// rather than given columns.
enum AttrsText {
    /// The string values of `keys` in the JSON object `attrs` (other keys and values skipped).
    static func strings(_ attrs: String?, _ keys: Set<String>) -> [String: String] {
        guard var attrs, keys.contains(where: { attrs.contains("\"\($0)\"") }) else { return [:] }
        var found: [String: String] = [:]
        attrs.withUTF8 { bytes in
            var s = JSONScanner(UnsafeRawBufferPointer(bytes))
            guard (try? s.expect(0x7b, "'{'")) != nil else { return }
            while true {
                s.skipWhitespace()
                guard !s.atEnd, s.peek() == 0x22, let (key, escaped) = try? s.scanString(),
                      (try? s.expect(0x3a, "':'")) != nil else { return }
                s.skipWhitespace()
                let name = s.string(key, escaped: escaped)
                if !s.atEnd && s.peek() == 0x22, let (value, valueEscaped) = try? s.scanString() {
                    if keys.contains(name) { found[name] = s.string(value, escaped: valueEscaped) }
                } else if (try? s.scanValue(depth: 1)) == nil {
                    return
                }
                s.skipWhitespace()
                guard !s.atEnd, s.peek() == 0x2c else { return }
                s.index += 1
            }
        }
        return found
    }
}
