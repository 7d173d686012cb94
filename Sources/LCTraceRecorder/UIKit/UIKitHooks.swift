#if canImport(UIKit) && !os(watchOS)
import ObjectiveC
import UIKit

// The swizzled UIKit methods. Each hook reads what UIKit knows (on the main thread only),
// makes one call into `ControllerTracker`, and calls the implementation it replaced exactly
// once: it never throws, asserts or skips the original. Not compiled by CI (Linux): read
// against UIKit's API. Closure types name UIKit's classes, main-actor classes and so Sendable.

/// Sentinels as associated objects: the runtime releases them as the controller is freed,
/// after the controller's own deinit, and the sentinel's deinit records the controller's.
struct AssociatedSentinels: SentinelStorage {
    private final class Key: Sendable {}
    private static let key = Key()
    private var address: UnsafeRawPointer { UnsafeRawPointer(Unmanaged.passUnretained(AssociatedSentinels.key).toOpaque()) }
    func sentinel(of object: AnyObject) -> InstanceSentinel? { objc_getAssociatedObject(object, address) as? InstanceSentinel }
    func attach(_ s: InstanceSentinel, to object: AnyObject) { objc_setAssociatedObject(object, address, s, .OBJC_ASSOCIATION_RETAIN) }
}

/// `cls` as Swift names the class, the runtime name for the filter, and `uikit`: the first
/// class up the chain that UIKit's own bundle defines. Asked once per class of an object
/// that exists (no class is looked up by name or scanned, so none is realized early).
struct RuntimeNaming: ClassNaming {
    func names(of object: AnyObject) -> ClassNames {
        // `classForCoder`, not `object_getClass`: a KVO-observed controller reports its own class.
        let cls: AnyClass = (object as? NSObject)?.classForCoder ?? type(of: object)
        let uikitBundle = Bundle(for: UIViewController.self)
        var node: AnyClass? = cls
        while let k = node, Bundle(for: k) != uikitBundle { node = class_getSuperclass(k) }
        return ClassNames(cls: String(describing: cls), runtimeName: NSStringFromClass(cls), uikit: node.map(NSStringFromClass))
    }
}

extension Traits {
    @MainActor init(_ t: UITraitCollection) {
        let sizes: [UIUserInterfaceSizeClass: SizeClass] = [.compact: .compact, .regular: .regular]
        let styles: [UIUserInterfaceStyle: Style] = [.light: .light, .dark: .dark]
        self.init(horizontal: sizes[t.horizontalSizeClass] ?? .unspecified, vertical: sizes[t.verticalSizeClass] ?? .unspecified,
                  style: styles[t.userInterfaceStyle] ?? .unspecified)
    }
}

extension PresentationStyle {
    /// Read after `present` returned, when reading `presentationController` no longer makes one.
    @MainActor init(presented vc: UIViewController) {
        switch vc.presentationController?.presentationStyle ?? vc.modalPresentationStyle {
        case .fullScreen: self = .fullScreen
        case .overFullScreen: self = .overFullScreen
        case .overCurrentContext: self = .overCurrentContext
        case .custom: self = .custom
        // Sheets, popovers and currentContext are unavailable on tvOS.
        #if !os(tvOS)
        case .currentContext: self = .fullScreen  // like fullScreen, takes the presenter's views away
        case .pageSheet: self = .pageSheet
        case .formSheet: self = .formSheet
        case .popover: self = .popover
        #endif
        default: self = .automatic
        }
    }
}

enum UIKitHooks {
    /// The tracker the hooks record into; nil when not recording (the hooks stay installed:
    /// unswizzling is unsafe in production, and others may have swizzled on top of ours).
    static let active = ActiveTracker()

    final class ActiveTracker: @unchecked Sendable {
        private let lock = RecorderLock()
        private var current: ControllerTracker?
        var tracker: ControllerTracker? {
            get { lock.withLock { current } }
            set { lock.withLock { current = newValue } }
        }
    }

    /// `body` with the tracker, on the main thread; off it (a misuse of UIKit) nothing.
    static func onMain<T: Sendable>(_ body: @MainActor (ControllerTracker) -> T) -> T? {
        guard Thread.isMainThread, let tracker = active.tracker else { return nil }
        return MainActor.assumeIsolated { body(tracker) }
    }

    private static let lock = RecorderLock()
    nonisolated(unsafe) private static var installed = Set<String>()  // behind `lock`

    /// Installs each hook once per class and selector (again: nothing), under a lock.
    static func install(layout: Bool) {
        lock.withLock {
            installController(layout: layout)
            installNavigation()
            installWindowAndViews()
        }
    }

    /// Replaces the implementation `cls` itself defines for `name` with `make(original,
    /// selector)`. A method the class only inherits is left alone: adding one to a class
    /// changes what it does (Sentry #1277: a `loadView` added where there was none lost the
    /// nib). The original is whatever is there now, maybe another SDK's hook.
    private static func hook<C, B>(_ cls: AnyClass, _ name: String, _ make: (C, Selector) -> B) {
        let selector = NSSelectorFromString(name)
        var count: UInt32 = 0
        guard installed.insert("\(NSStringFromClass(cls)) \(name)").inserted, let methods = class_copyMethodList(cls, &count) else { return }
        defer { free(methods) }
        guard let method = (0..<Int(count)).lazy.map({ methods[$0] }).first(where: { method_getName($0) == selector }) else { return }
        let original = unsafeBitCast(method_getImplementation(method), to: C.self)
        method_setImplementation(method, imp_implementationWithBlock(make(original, selector)))
    }

    private typealias VC = UIViewController
    private typealias Record<Arg> = @MainActor @Sendable (ControllerTracker, VC, Arg) -> Void

    /// The three shapes of controller method: none, a Bool (`animated`), a controller. Records, then the original.
    private static func plain(_ name: String, _ record: @escaping Record<Void>) {
        hook(VC.self, name) { (original: @convention(c) (VC, Selector) -> Void, sel) -> @convention(block) (VC) -> Void in
            { vc in _ = onMain { record($0, vc, ()) }; original(vc, sel) }
        }
    }

    private static func flag(_ name: String, _ record: @escaping Record<Bool>) {
        hook(VC.self, name) { (original: @convention(c) (VC, Selector, Bool) -> Void, sel) -> @convention(block) (VC, Bool) -> Void in
            { vc, flag in _ = onMain { record($0, vc, flag) }; original(vc, sel, flag) }
        }
    }

    private static func other(_ name: String, _ record: @escaping Record<VC?>) {
        hook(VC.self, name) { (original: @convention(c) (VC, Selector, VC?) -> Void, sel) -> @convention(block) (VC, VC?) -> Void in
            { vc, other in _ = onMain { record($0, vc, other) }; original(vc, sel, other) }
        }
    }

    private static func installController(layout: Bool) {
        plain("loadView") { t, vc, _ in t.loadView(vc) }
        plain("viewDidLoad") { t, vc, _ in t.viewDidLoad(vc) }
        flag("viewWillAppear:") { t, vc, animated in
            t.viewWillAppear(vc, animated: animated, isMovingToParent: vc.isMovingToParent, isBeingPresented: vc.isBeingPresented,
                             interactive: vc.transitionCoordinator?.isInteractive)
        }
        // Public from the iOS 17 SDK, in UIViewController since iOS 13: hooked where the class has it, never made up.
        flag("viewIsAppearing:") { t, vc, animated in
            let size = vc.viewIfLoaded.map { ViewSize(width: Double($0.bounds.width), height: Double($0.bounds.height)) }
            t.viewIsAppearing(vc, animated: animated, bounds: size, traits: Traits(vc.traitCollection))
        }
        flag("viewDidAppear:") { t, vc, animated in
            t.viewDidAppear(vc, animated: animated, isMovingToParent: vc.isMovingToParent, isBeingPresented: vc.isBeingPresented)
        }
        flag("viewWillDisappear:") { t, vc, animated in
            t.viewWillDisappear(vc, animated: animated, isMovingFromParent: vc.isMovingFromParent, isBeingDismissed: vc.isBeingDismissed,
                                interactive: vc.transitionCoordinator?.isInteractive)
        }
        flag("viewDidDisappear:") { t, vc, animated in
            t.viewDidDisappear(vc, animated: animated, isMovingFromParent: vc.isMovingFromParent, isBeingDismissed: vc.isBeingDismissed)
        }
        if layout {
            plain("viewWillLayoutSubviews") { t, vc, _ in t.layout(vc, did: false) }
            plain("viewDidLayoutSubviews") { t, vc, _ in t.layout(vc, did: true) }
        }
        hook(VC.self, "traitCollectionDidChange:") {
            (original: @convention(c) (VC, Selector, UITraitCollection?) -> Void, sel) -> @convention(block) (VC, UITraitCollection?) -> Void in
            { vc, previous in
                _ = onMain { if vc.isViewLoaded { $0.traitsChanged(vc, traits: Traits(vc.traitCollection)) } }
                original(vc, sel, previous)
            }
        }
        // Before the original: addChild's own willMove and removeFromParent's own didMove(nil) come after.
        other("addChildViewController:") { t, vc, child in if let child { t.addChild(child, parent: vc) } }
        other("willMoveToParentViewController:") { t, vc, parent in t.willMove(vc, toParent: parent) }
        other("didMoveToParentViewController:") { t, vc, parent in t.didMove(vc, toParent: parent) }
        plain("removeFromParentViewController") { t, vc, _ in t.removeFromParent(vc, currentParent: vc.parent) }
        // After the original: the presenter UIKit really used (maybe an ancestor); nothing if it refused.
        typealias Completion = (@convention(block) () -> Void)?
        hook(VC.self, "presentViewController:animated:completion:") {
            (original: @convention(c) (VC, Selector, VC, Bool, Completion) -> Void, sel) -> @convention(block) (VC, VC, Bool, Completion) -> Void in
            { vc, presented, animated, completion in
                original(vc, sel, presented, animated, completion)
                _ = onMain { t in
                    guard let presenter = presented.presentingViewController else { return }
                    t.present(presented, by: presenter, style: PresentationStyle(presented: presented), animated: animated,
                              interactive: presented.transitionCoordinator?.isInteractive)
                }
            }
        }
        // What goes is read before the original (it clears it), recorded after.
        hook(VC.self, "dismissViewControllerAnimated:completion:") {
            (original: @convention(c) (VC, Selector, Bool, Completion) -> Void, sel) -> @convention(block) (VC, Bool, Completion) -> Void in
            { vc, animated, completion in
                let before = onMain { _ in (vc.presentedViewController, vc.presentingViewController != nil, Array(sequence(first: vc) { $0.parent })) }
                original(vc, sel, animated, completion)
                guard let before else { return }
                _ = onMain { $0.dismiss(receiver: vc, presentedByReceiver: before.0, receiverIsPresented: before.1,
                                        ancestors: before.2.map { $0 as AnyObject }, animated: animated, interactive: nil) }
            }
        }
    }

    /// A navigation change recorded (on main) before `original`, which runs in any case.
    /// `pop`: the edge swipe calls popViewControllerAnimated: while its recognizer begins (read
    /// for pops only: a navigation controller pushes its root from inside its initializer).
    private static func navigating<R>(_ nav: UINavigationController, _ animated: Bool, pop: Bool = false,
                                      _ change: @MainActor (UINavigationController) -> NavigationChange, original: () -> R) -> R {
        let token = onMain { t -> NavigationToken? in
            // tvOS has no edge swipe (the property is unavailable there): no pop is interactive.
            #if os(tvOS)
            let state: UIGestureRecognizer.State? = nil
            #else
            let state = pop ? nav.interactivePopGestureRecognizer?.state : nil
            #endif
            return t.beginNavigation(nav, change(nav), animated: animated, interactive: state == .began || state == .changed)
        }
        defer { token??.end() }
        return original()
    }

    private static func installNavigation() {
        typealias Nav = UINavigationController
        hook(Nav.self, "pushViewController:animated:") {
            (original: @convention(c) (Nav, Selector, VC, Bool) -> Void, sel) -> @convention(block) (Nav, VC, Bool) -> Void in
            { nav, child, animated in navigating(nav, animated, { _ in .push(child) }) { original(nav, sel, child, animated) } }
        }
        hook(Nav.self, "popViewControllerAnimated:") {
            (original: @convention(c) (Nav, Selector, Bool) -> VC?, sel) -> @convention(block) (Nav, Bool) -> VC? in
            { nav, animated in navigating(nav, animated, pop: true, { .pop(stack: $0.viewControllers) }) { original(nav, sel, animated) } }
        }
        hook(Nav.self, "popToRootViewControllerAnimated:") {
            (original: @convention(c) (Nav, Selector, Bool) -> NSArray?, sel) -> @convention(block) (Nav, Bool) -> NSArray? in
            { nav, animated in navigating(nav, animated, pop: true, { .popToRoot(stack: $0.viewControllers) }) { original(nav, sel, animated) } }
        }
        hook(Nav.self, "popToViewController:animated:") {
            (original: @convention(c) (Nav, Selector, VC, Bool) -> NSArray?, sel) -> @convention(block) (Nav, VC, Bool) -> NSArray? in
            { nav, target, animated in
                navigating(nav, animated, pop: true, { .popTo(target, stack: $0.viewControllers) }) { original(nav, sel, target, animated) }
            }
        }
        // Assigning `viewControllers` bypasses pop and removeFromParent: the stack is diffed.
        hook(Nav.self, "setViewControllers:animated:") {
            (original: @convention(c) (Nav, Selector, NSArray, Bool) -> Void, sel) -> @convention(block) (Nav, NSArray, Bool) -> Void in
            { nav, list, animated in
                let new = (list as? [VC]) ?? []
                navigating(nav, animated, { .set(old: $0.viewControllers, new: new) }) { original(nav, sel, list, animated) }
            }
        }
        hook(Nav.self, "setViewControllers:") {
            (original: @convention(c) (Nav, Selector, NSArray) -> Void, sel) -> @convention(block) (Nav, NSArray) -> Void in
            { nav, list in
                let new = (list as? [VC]) ?? []
                navigating(nav, false, { .set(old: $0.viewControllers, new: new) }) { original(nav, sel, list) }
            }
        }
    }

    private static func installWindowAndViews() {
        hook(UIWindow.self, "setRootViewController:") {
            (original: @convention(c) (UIWindow, Selector, VC?) -> Void, sel) -> @convention(block) (UIWindow, VC?) -> Void in
            { window, root in
                _ = onMain { $0.windowRoot(root, old: window.rootViewController, scene: window.windowScene?.session.persistentIdentifier) }
                original(window, sel, root)
            }
        }
        // Every view's move comes here: anything but a controller's root view returns at once.
        hook(UIView.self, "didMoveToSuperview") {
            (original: @convention(c) (UIView, Selector) -> Void, sel) -> @convention(block) (UIView) -> Void in
            { view in
                original(view, sel)
                _ = onMain { t in
                    guard let owner = view.next as? VC, owner.viewIfLoaded === view else { return }
                    var hosts: [AnyObject] = []
                    var node = view.superview
                    while let v = node, hosts.count < 8 {
                        if let host = v.next as? VC, host.viewIfLoaded === v { hosts.append(host) }
                        node = v.superview
                    }
                    t.rootViewMoved(owner, attached: view.superview != nil, hosts: hosts)
                }
            }
        }
    }
}
#endif
