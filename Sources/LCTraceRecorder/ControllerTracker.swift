/// What the recorder keeps with one controller: its id, and the bookkeeping UIKit does not
/// hand back when it is needed (the parent a removal leaves, the host a detach leaves, the
/// traits last recorded). On Apple platforms it is an associated object of the controller,
/// so the runtime releases it when the controller is freed: its `deinit` then records the
/// controller's. That `deinit` runs on any thread, after the controller's own, while weak
/// references to the controller already read nil: it touches nothing but its own id.
package final class InstanceSentinel: @unchecked Sendable {
    package let id: InstanceID
    /// The session that gave the id (a sentinel of an earlier session is replaced).
    let recorder: TraceRecorder
    // Behind the tracker's lock:
    var parent: InstanceID?
    var host: InstanceID?
    var attached = false
    var lastTraits: Traits?
    /// Who presented it, while the presentation lasts (from `present` to `dismiss`).
    var presenter: InstanceID?
    /// Navigation hooks of this controller in progress (a container's own nested calls record once).
    var navigationDepth = 0

    init(id: InstanceID, recorder: TraceRecorder) {
        self.id = id
        self.recorder = recorder
    }

    deinit { recorder.deinitialized(id) }
}

/// Where a controller's sentinel lives: an associated object on Apple platforms
/// (`UIKit/AssociatedSentinels.swift`), a stored property elsewhere (`SentinelHolder`).
package protocol SentinelStorage: Sendable {
    func sentinel(of object: AnyObject) -> InstanceSentinel?
    func attach(_ sentinel: InstanceSentinel, to object: AnyObject)
}

/// A controller that keeps its sentinel itself: releasing the controller releases the
/// sentinel, as the Objective-C runtime does with associated objects.
package protocol SentinelHolder: AnyObject {
    var recorderSentinel: InstanceSentinel? { get set }
}

/// `SentinelStorage` for `SentinelHolder`s (platforms without associated objects, tests).
package struct HeldSentinels: SentinelStorage {
    package init() {}
    package func sentinel(of object: AnyObject) -> InstanceSentinel? { (object as? SentinelHolder)?.recorderSentinel }
    package func attach(_ sentinel: InstanceSentinel, to object: AnyObject) {
        (object as? SentinelHolder)?.recorderSentinel = sentinel
    }
}

/// A class's names: what the trace says (`cls`, `uikit`) and what the filter judges (the runtime name).
package struct ClassNames: Sendable, Equatable {
    package var cls: String
    package var runtimeName: String
    package var uikit: String?
    package init(cls: String, runtimeName: String, uikit: String?) {
        self.cls = cls; self.runtimeName = runtimeName; self.uikit = uikit
    }
}

/// Names a controller's class; asked once per class, never under the tracker's lock.
package protocol ClassNaming: Sendable {
    func names(of object: AnyObject) -> ClassNames
}

/// A navigation controller's change, as its stack stood before it.
package enum NavigationChange {
    case push(AnyObject)
    case pop(stack: [AnyObject])
    case popTo(AnyObject, stack: [AnyObject])
    case popToRoot(stack: [AnyObject])
    /// `setViewControllers`: the controllers that left are popped, those that came pushed.
    case set(old: [AnyObject], new: [AnyObject])
}

/// A navigation change in progress (`beginNavigation`).
package struct NavigationToken: Sendable {
    fileprivate let sentinel: InstanceSentinel
    fileprivate let lock: RecorderLock
    package func end() { lock.withLock { sentinel.navigationDepth -= 1 } }
}

/// The platform-independent half of UIKit recording: which controllers are recorded, their
/// ids (a fresh one and an `init` at an instance's first callback: nothing is hooked in an
/// initializer, so nothing touches a controller before its init returned), the parent,
/// host and presentation bookkeeping, and which event each UIKit callback becomes. The
/// UIKit adapter reads UIKit's values on the main thread and makes one call here per hook.
package final class ControllerTracker: @unchecked Sendable {
    package let recorder: TraceRecorder
    private let storage: SentinelStorage
    private let naming: ClassNaming
    private let filter: ClassFilter
    package let recordsLayout: Bool
    private let lock = RecorderLock()
    /// Per class: its names, or nil when the filter leaves it out.
    private var classes: [ObjectIdentifier: ClassNames?] = [:]

    package init(recorder: TraceRecorder, storage: SentinelStorage, naming: ClassNaming) {
        self.recorder = recorder
        self.storage = storage
        self.naming = naming
        filter = recorder.configuration.classFilter
        recordsLayout = recorder.configuration.recordsLayout
    }

    // MARK: Instances

    /// The controller's id (recording its `init` at first sight); nil when its class is
    /// left out.
    package func instanceID(of object: AnyObject) -> InstanceID? { sentinel(object)?.id }

    /// The sentinel of `object`, made (with an `init`) at first sight.
    private func sentinel(_ object: AnyObject) -> InstanceSentinel? {
        if let s = storage.sentinel(of: object), s.recorder === recorder { return s }
        guard let names = names(of: object) else { return nil }
        return lock.withLock {
            if let s = storage.sentinel(of: object), s.recorder === recorder { return s }
            let s = InstanceSentinel(id: recorder.initialized(cls: names.cls, uikit: names.uikit), recorder: recorder)
            storage.attach(s, to: object)
            return s
        }
    }

    private func names(of object: AnyObject) -> ClassNames? {
        let key = ObjectIdentifier(type(of: object))
        if let known = lock.withLock({ classes[key] }) { return known }
        let names = naming.names(of: object)
        let kept = filter.excludes(runtimeName: names.runtimeName) ? nil : names
        lock.withLock { classes[key] = .some(kept) }
        return kept
    }

    // MARK: Appearance

    package func loadView(_ vc: AnyObject) { if let s = sentinel(vc) { recorder.loadView(s.id) } }

    package func viewDidLoad(_ vc: AnyObject) { if let s = sentinel(vc) { recorder.viewDidLoad(s.id) } }

    package func viewWillAppear(_ vc: AnyObject, animated: Bool, isMovingToParent: Bool, isBeingPresented: Bool,
                                interactive: Bool?) {
        guard let s = sentinel(vc) else { return }
        recorder.viewWillAppear(s.id, animated: animated, isMovingToParent: isMovingToParent,
                                isBeingPresented: isBeingPresented, interactive: interactive)
    }

    package func viewIsAppearing(_ vc: AnyObject, animated: Bool, bounds: ViewSize?, traits: Traits?) {
        guard let s = sentinel(vc) else { return }
        if let traits { lock.withLock { s.lastTraits = traits } }
        recorder.viewIsAppearing(s.id, animated: animated, bounds: bounds, traits: traits)
    }

    package func viewDidAppear(_ vc: AnyObject, animated: Bool, isMovingToParent: Bool, isBeingPresented: Bool) {
        guard let s = sentinel(vc) else { return }
        recorder.viewDidAppear(s.id, animated: animated, isMovingToParent: isMovingToParent, isBeingPresented: isBeingPresented)
    }

    package func viewWillDisappear(_ vc: AnyObject, animated: Bool, isMovingFromParent: Bool, isBeingDismissed: Bool,
                                   interactive: Bool?) {
        guard let s = sentinel(vc) else { return }
        recorder.viewWillDisappear(s.id, animated: animated, isMovingFromParent: isMovingFromParent,
                                   isBeingDismissed: isBeingDismissed, interactive: interactive)
    }

    package func viewDidDisappear(_ vc: AnyObject, animated: Bool, isMovingFromParent: Bool, isBeingDismissed: Bool) {
        guard let s = sentinel(vc) else { return }
        recorder.viewDidDisappear(s.id, animated: animated, isMovingFromParent: isMovingFromParent, isBeingDismissed: isBeingDismissed)
    }

    /// `viewWillLayoutSubviews` (`did` false) or `viewDidLayoutSubviews`, when layout is recorded.
    package func layout(_ vc: AnyObject, did: Bool) {
        guard recordsLayout, let s = sentinel(vc) else { return }
        if did { recorder.viewDidLayoutSubviews(s.id) } else { recorder.viewWillLayoutSubviews(s.id) }
    }

    /// A trait change, recorded only when the traits differ from the last recorded (UIKit
    /// reports changes that change nothing the format records, e.g. at backgrounding).
    package func traitsChanged(_ vc: AnyObject, traits: Traits) {
        guard let s = sentinel(vc) else { return }
        let changed = lock.withLock { () -> Bool in
            guard s.lastTraits != traits else { return false }
            s.lastTraits = traits
            return true
        }
        if changed { recorder.traitChange(s.id, traits: traits) }
    }

    // MARK: Containment

    /// `parent.addChild(child)`, recorded before UIKit's own `willMove(toParent:)` inside it.
    package func addChild(_ child: AnyObject, parent: AnyObject) {
        guard let p = sentinel(parent), let c = sentinel(child) else { return }
        lock.withLock { c.parent = p.id }
        recorder.addChild(c.id, parent: p.id)
    }

    package func willMove(_ child: AnyObject, toParent parent: AnyObject?) {
        guard let c = sentinel(child) else { return }
        let p = parent.flatMap(sentinel)
        if parent != nil && p == nil { return }  // into a container that is left out
        if let p { lock.withLock { c.parent = p.id } }
        recorder.willMoveToParent(c.id, parent: p?.id)
    }

    package func didMove(_ child: AnyObject, toParent parent: AnyObject?) {
        guard let c = sentinel(child) else { return }
        let p = parent.flatMap(sentinel)
        if parent != nil && p == nil { return }
        lock.withLock { c.parent = p?.id }
        recorder.didMoveToParent(c.id, parent: p?.id)
    }

    /// `child.removeFromParent()`, recorded before UIKit's own `didMove(toParent: nil)`;
    /// the former parent is UIKit's when it still knows it, else the one recorded.
    package func removeFromParent(_ child: AnyObject, currentParent: AnyObject?) {
        guard let c = sentinel(child) else { return }
        let known = currentParent.flatMap(sentinel)?.id
        let parent = lock.withLock { () -> InstanceID? in
            defer { c.parent = nil }
            return known ?? c.parent
        }
        recorder.removeFromParent(c.id, parent: parent)
    }

    // MARK: Views

    /// The controller's root view moved: into a superview (`attached`), with the
    /// controllers up its view hierarchy nearest first (`hosts`, lazily: the first one
    /// recorded is the host; a left-out one is skipped, so its view counts for its parent),
    /// or out of one. A move under the same host again records nothing.
    package func rootViewMoved<Hosts: Sequence>(_ vc: AnyObject, attached: Bool, hosts: Hosts) where Hosts.Element == AnyObject {
        guard let s = sentinel(vc) else { return }
        if attached {
            var host: InstanceID?
            for candidate in hosts where candidate !== vc {
                if let h = sentinel(candidate) { host = h.id; break }
            }
            let changed = lock.withLock { () -> Bool in
                if s.attached && s.host == host { return false }
                s.attached = true
                s.host = host
                return true
            }
            if changed { recorder.viewAttached(s.id, host: host) }
        } else {
            let (was, host) = lock.withLock { () -> (Bool, InstanceID?) in
                defer { s.attached = false; s.host = nil }
                return (s.attached, s.host)
            }
            if was { recorder.viewDetached(s.id, host: host) }
        }
    }

    // MARK: Presentation

    /// A presentation that happened (read after UIKit's `present` returned: the presenter
    /// UIKit really used, which may be an ancestor of the receiver).
    package func present(_ presented: AnyObject, by presenter: AnyObject, style: PresentationStyle, animated: Bool,
                         interactive: Bool?) {
        guard let p = sentinel(presenter), let c = sentinel(presented) else { return }
        lock.withLock { c.presenter = p.id }
        recorder.present(c.id, by: p.id, style: style, animated: animated, interactive: interactive)
    }

    /// `receiver.dismiss(…)`: what goes is what the receiver presented; else the call goes to
    /// the presenter of the receiver or of the ancestor that was presented (`ancestors`: the
    /// receiver, its parent, …): the one recorded as presented, else (UIKit says the receiver
    /// is in a presentation) the outermost ancestor, as a presented controller has no parent.
    package func dismiss<Ancestors: Sequence>(receiver: AnyObject, presentedByReceiver: AnyObject?, receiverIsPresented: Bool,
                                              ancestors: Ancestors, animated: Bool, interactive: Bool?)
    where Ancestors.Element == AnyObject {
        var target: InstanceSentinel?
        if let presented = presentedByReceiver {
            target = sentinel(presented)
        } else {
            let chain = Array(ancestors)
            let recorded = chain.lazy.compactMap { self.storage.sentinel(of: $0) }.first { s in
                s.recorder === self.recorder && self.lock.withLock { s.presenter != nil }
            }
            target = recorded ?? (receiverIsPresented ? (chain.last ?? receiver) : nil).flatMap(sentinel)
        }
        guard let t = target else { return }
        lock.withLock { t.presenter = nil }
        recorder.dismiss(t.id, animated: animated, interactive: interactive)
    }

    // MARK: Navigation

    /// A navigation change, recorded before `original` runs (the stack tells what it will
    /// pop); a change made while another of the same controller is in progress (UIKit's
    /// containers call their own methods) records nothing more. Calls `original` once.
    package func navigation<R>(_ nav: AnyObject, _ change: NavigationChange, animated: Bool, interactive: Bool,
                               original: () -> R) -> R {
        let token = beginNavigation(nav, change, animated: animated, interactive: interactive)
        defer { token?.end() }
        return original()
    }

    /// `navigation` in two halves, for a hook that must call the original outside the
    /// tracker's call: records the change, unless one of the same controller is in
    /// progress; `end()` the token once the original returned.
    package func beginNavigation(_ nav: AnyObject, _ change: NavigationChange, animated: Bool, interactive: Bool) -> NavigationToken? {
        guard let n = sentinel(nav) else { return nil }
        let token = NavigationToken(sentinel: n, lock: lock)
        let outermost = lock.withLock { () -> Bool in
            n.navigationDepth += 1
            return n.navigationDepth == 1
        }
        guard outermost else { return token }
        var pushed: [AnyObject] = []
        var popped: [AnyObject] = []
        switch change {
        case .push(let child):
            pushed = [child]
        case .pop(let stack):
            if stack.count > 1 { popped = [stack[stack.count - 1]] }
        case .popTo(let target, let stack):
            if let i = stack.firstIndex(where: { $0 === target }) { popped = stack[(i + 1)...].reversed() }
        case .popToRoot(let stack):
            if stack.count > 1 { popped = stack[1...].reversed() }
        case .set(let old, let new):
            popped = old.filter { o in !new.contains { $0 === o } }.reversed()
            pushed = new.filter { n in !old.contains { $0 === n } }
        }
        for child in popped {
            if let c = sentinel(child) { recorder.pop(c.id, from: n.id, animated: animated, interactive: interactive) }
        }
        for child in pushed {
            if let c = sentinel(child) { recorder.push(c.id, on: n.id, animated: animated, interactive: interactive) }
        }
        return token
    }

    // MARK: Windows

    /// (1.2) `window.rootViewController = root`, recorded before the window installs it.
    package func windowRoot(_ root: AnyObject?, old: AnyObject?, scene: String?) {
        if let root, let old, root === old { return }
        let newID = root.flatMap(sentinel)?.id
        let oldID = old.flatMap(sentinel)?.id
        if newID == nil && oldID == nil { return }
        recorder.windowRoot(newID, old: oldID, scene: scene)
    }
}

/// Names from Swift's type names (platforms without the Objective-C runtime, tests): the
/// runtime name is the module-qualified one, `uikit` what `uikit` says for the class.
package struct SwiftTypeNaming: ClassNaming {
    private let uikit: @Sendable (AnyObject) -> String?
    package init(uikit: @escaping @Sendable (AnyObject) -> String? = { _ in nil }) { self.uikit = uikit }
    package func names(of object: AnyObject) -> ClassNames {
        let name = String(describing: type(of: object))
        return ClassNames(cls: name, runtimeName: name, uikit: uikit(object))
    }
}
