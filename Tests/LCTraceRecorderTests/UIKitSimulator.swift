import Foundation
@testable import LCTraceRecorder

// A stand-in for UIKit on any platform: controllers, views and windows with just the state
// the hooks read, and a simulator that delivers callbacks in the orders UIKit really does
// (shared/reference/uikit-callback-orders.md), calling the tracker exactly as the UIKit
// adapter's hooks do: one call per hook, with the values the hook reads from UIKit.

class FakeView {
    weak var superview: FakeView?
    var subviews: [FakeView] = []
    /// The controller whose root view this is (UIKit: `next` is that controller).
    weak var owner: FakeViewController?

    func add(_ child: FakeView) {
        child.superview?.subviews.removeAll { $0 === child }
        subviews.append(child)
        child.superview = self
    }

    func removeFromSuperview() {
        superview?.subviews.removeAll { $0 === self }
        superview = nil
    }

    /// The controllers up the view hierarchy, nearest first (the adapter's responder walk).
    var hostsAbove: [AnyObject] {
        var hosts: [AnyObject] = []
        var view = superview
        while let v = view {
            if let owner = v.owner { hosts.append(owner) }
            view = v.superview
        }
        return hosts
    }
}

final class FakeWindow: FakeView {
    var rootViewController: FakeViewController?
    let scene: String
    init(scene: String) { self.scene = scene }
}

class FakeViewController: SentinelHolder {
    var recorderSentinel: InstanceSentinel?
    weak var parent: FakeViewController?
    var children: [FakeViewController] = []
    private(set) var view: FakeView?
    weak var presentingViewController: FakeViewController?
    var presentedViewController: FakeViewController?
    var style: PresentationStyle = .automatic
    required init() {}

    var isViewLoaded: Bool { view != nil }

    /// UIKit's `presentingViewController`: its own presenter, or an ancestor's.
    var presentingThroughAncestors: FakeViewController? {
        var node: FakeViewController? = self
        while let n = node {
            if let p = n.presentingViewController { return p }
            node = n.parent
        }
        return nil
    }

    func makeView() {
        let v = FakeView()
        v.owner = self
        view = v
    }
}

final class FakeNavigationController: FakeViewController {
    var top: FakeViewController? { children.last }
}

final class ProductListViewController: FakeViewController {}
final class ProductDetailViewController: FakeViewController {}
final class CheckoutViewController: FakeViewController {}
final class BannerViewController: FakeViewController {}
final class FilterSheetViewController: FakeViewController {}
final class FakeTabBarController: FakeViewController {}
final class ShareComposeViewController: FakeViewController {}
final class CardContainerViewController: FakeViewController {}
/// Names the default filter leaves out.
final class UIInputWindowController: FakeViewController {}
final class _UIPrivateHostViewController: FakeViewController {}

/// Replays UIKit's callback orders into a `ControllerTracker`.
final class UIKitSimulator {
    let tracker: ControllerTracker
    let clock: TestClock
    var recorder: TraceRecorder { tracker.recorder }

    static let naming = SwiftTypeNaming { object in object is FakeNavigationController ? "UINavigationController" : "UIViewController" }

    init(recorder: TraceRecorder, clock: TestClock) {
        tracker = ControllerTracker(recorder: recorder, storage: HeldSentinels(), naming: UIKitSimulator.naming)
        self.clock = clock
    }

    func advance(_ ms: UInt64) { clock.advance(milliseconds: ms) }

    // MARK: Single hooks (what each swizzled method does)

    func load(_ vc: FakeViewController) {
        guard !vc.isViewLoaded else { return }
        tracker.loadView(vc)
        vc.makeView()
        tracker.viewDidLoad(vc)
    }

    func willAppear(_ vc: FakeViewController, animated: Bool, toParent: Bool = false, presented: Bool = false, interactive: Bool? = nil) {
        tracker.viewWillAppear(vc, animated: animated, isMovingToParent: toParent, isBeingPresented: presented, interactive: interactive)
    }

    func isAppearing(_ vc: FakeViewController, animated: Bool) {
        tracker.viewIsAppearing(vc, animated: animated, bounds: ViewSize(width: 393, height: 852),
                                traits: Traits(horizontal: .compact, vertical: .regular, style: .light))
    }

    func didAppear(_ vc: FakeViewController, animated: Bool, toParent: Bool = false, presented: Bool = false) {
        tracker.viewDidAppear(vc, animated: animated, isMovingToParent: toParent, isBeingPresented: presented)
    }

    func willDisappear(_ vc: FakeViewController, animated: Bool, fromParent: Bool = false, dismissed: Bool = false, interactive: Bool? = nil) {
        tracker.viewWillDisappear(vc, animated: animated, isMovingFromParent: fromParent, isBeingDismissed: dismissed, interactive: interactive)
    }

    func didDisappear(_ vc: FakeViewController, animated: Bool, fromParent: Bool = false, dismissed: Bool = false) {
        tracker.viewDidDisappear(vc, animated: animated, isMovingFromParent: fromParent, isBeingDismissed: dismissed)
    }

    /// `superview.addSubview(vc.view)`: the root view's didMoveToSuperview hook.
    func attach(_ vc: FakeViewController, to superview: FakeView) {
        superview.add(vc.view!)
        tracker.rootViewMoved(vc, attached: true, hosts: vc.view!.hostsAbove)
    }

    func detach(_ vc: FakeViewController) {
        vc.view?.removeFromSuperview()
        tracker.rootViewMoved(vc, attached: false, hosts: [])
    }

    /// `parent.addChild(child)`: recorded, then UIKit's addChild calls `willMove(toParent:)`.
    func addChild(_ child: FakeViewController, to parent: FakeViewController) {
        tracker.addChild(child, parent: parent)
        tracker.willMove(child, toParent: parent)
        parent.children.append(child)
        child.parent = parent
    }

    func didMove(_ child: FakeViewController, to parent: FakeViewController?) { tracker.didMove(child, toParent: parent) }

    func willMove(_ child: FakeViewController, to parent: FakeViewController?) { tracker.willMove(child, toParent: parent) }

    /// `child.removeFromParent()`: recorded, then UIKit's calls `didMove(toParent: nil)`.
    func removeFromParent(_ child: FakeViewController) {
        tracker.removeFromParent(child, currentParent: child.parent)
        child.parent?.children.removeAll { $0 === child }
        child.parent = nil
        tracker.didMove(child, toParent: nil)
    }

    // MARK: Transitions (reference §1–§6)

    /// §1 first display of a window's root (a navigation controller with its root).
    func launch(window: FakeWindow, nav: FakeNavigationController, root: FakeViewController) {
        recorder.scene(.willConnect, scene: window.scene)
        addChild(root, to: nav)
        didMove(root, to: nav)
        tracker.windowRoot(nav, old: window.rootViewController, scene: window.scene)
        window.rootViewController = nav
        load(nav)
        load(root)
        attach(nav, to: window)
        attach(root, to: nav.view!)
        willAppear(nav, animated: false)
        willAppear(root, animated: false)
        isAppearing(nav, animated: false)
        isAppearing(root, animated: false)
        advance(16)
        didAppear(nav, animated: false)
        didAppear(root, animated: false)
        recorder.scene(.didBecomeActive, scene: window.scene)
        advance(500)
    }

    /// §2 push A→B, animated.
    func push(_ b: FakeViewController, on nav: FakeNavigationController) {
        let a = nav.top!
        tracker.navigation(nav, .push(b), animated: true, interactive: false) {
            addChild(b, to: nav)
        }
        load(b)
        willDisappear(a, animated: true)
        willAppear(b, animated: true, toParent: true)
        attach(b, to: nav.view!)
        isAppearing(b, animated: true)
        advance(400)
        didDisappear(a, animated: true)
        detach(a)
        didAppear(b, animated: true, toParent: true)
        didMove(b, to: nav)
        advance(300)
    }

    /// §2 pop B→A, animated; `cancelled`: §3, an interactive pop the finger gives up.
    func pop(_ nav: FakeNavigationController, interactive: Bool = false, cancelled: Bool = false) {
        let b = nav.top!
        let a = nav.children[nav.children.count - 2]
        tracker.navigation(nav, .pop(stack: nav.children), animated: true, interactive: interactive) {
            if !cancelled { willMove(b, to: nil) }
        }
        willDisappear(b, animated: true, fromParent: true, interactive: interactive)
        willAppear(a, animated: true, interactive: interactive)
        attach(a, to: nav.view!)
        isAppearing(a, animated: true)
        advance(interactive ? 1200 : 400)
        if cancelled {
            willDisappear(a, animated: true)
            didDisappear(a, animated: true)
            detach(a)
            willAppear(b, animated: true)
            isAppearing(b, animated: true)
            didAppear(b, animated: true)
        } else {
            didDisappear(b, animated: true, fromParent: true)
            didAppear(a, animated: true)
            detach(b)
            removeFromParent(b)
        }
        advance(300)
    }

    /// §4 a presentation (`.fullScreen` covers A: A gets callbacks; sheets do not).
    /// UIKit's present loads B and starts its appearance before returning; the hook records
    /// `present` after the original returned.
    func present(_ b: FakeViewController, from a: FakeViewController, style: PresentationStyle, window: FakeWindow) {
        let coversPresenter = style == .fullScreen
        b.style = style
        load(b)
        if coversPresenter { willDisappear(a, animated: true) }
        willAppear(b, animated: true, presented: true)
        a.presentedViewController = b
        b.presentingViewController = a
        tracker.present(b, by: a, style: style, animated: true, interactive: nil)
        attach(b, to: window)
        isAppearing(b, animated: true)
        advance(450)
        didAppear(b, animated: true, presented: true)
        if coversPresenter {
            didDisappear(a, animated: true)
            detach(a)
        }
        advance(500)
    }

    /// §4 `receiver.dismiss(animated:)`; `swipe`: a sheet swiped away (no dismiss call at all).
    func dismiss(_ b: FakeViewController, receiver: FakeViewController, swipe: Bool = false, window: FakeWindow) {
        let a = b.presentingViewController!
        let coveredPresenter = b.style == .fullScreen
        if !swipe {
            let presentedByReceiver = receiver.presentedViewController
            var ancestors: [AnyObject] = []
            var node: FakeViewController? = receiver
            while let n = node { ancestors.append(n); node = n.parent }
            tracker.dismiss(receiver: receiver, presentedByReceiver: presentedByReceiver,
                            receiverIsPresented: receiver.presentingThroughAncestors != nil,
                            ancestors: ancestors, animated: true, interactive: nil)
        }
        willDisappear(b, animated: true, dismissed: true, interactive: swipe ? true : nil)
        if coveredPresenter {
            willAppear(a, animated: true)
            attach(a, to: window)
            isAppearing(a, animated: true)
        }
        advance(swipe ? 900 : 450)
        if coveredPresenter { didAppear(a, animated: true) }
        didDisappear(b, animated: true, dismissed: true)
        detach(b)
        a.presentedViewController = nil
        b.presentingViewController = nil
        advance(300)
    }

    /// §6 a child added to a visible custom container, then removed properly.
    func addChildWhileVisible(_ child: FakeViewController, to parent: FakeViewController) {
        addChild(child, to: parent)
        load(child)
        attach(child, to: parent.view!)
        willAppear(child, animated: false)
        isAppearing(child, animated: false)
        didAppear(child, animated: false)
        didMove(child, to: parent)
        advance(200)
    }

    func removeChild(_ child: FakeViewController) {
        willMove(child, to: nil)
        willDisappear(child, animated: false)
        didDisappear(child, animated: false)
        detach(child)
        removeFromParent(child)
        advance(200)
    }

    /// §4 a sheet's swipe the finger gives up: B disappears, then appears again (no dismiss).
    func cancelledSheetSwipe(_ b: FakeViewController) {
        willDisappear(b, animated: true, interactive: true)
        advance(600)
        willAppear(b, animated: true, interactive: true)
        isAppearing(b, animated: true)
        didAppear(b, animated: true)
        advance(300)
    }

    /// §5 tab switch A→B: B's willAppear before A's willDisappear; neither goes away.
    func switchTab(_ tabs: FakeViewController, from a: FakeViewController, to b: FakeViewController) {
        load(b)
        willAppear(b, animated: false)
        attach(b, to: tabs.view!)
        isAppearing(b, animated: false)
        willDisappear(a, animated: false)
        didDisappear(a, animated: false)
        detach(a)
        didAppear(b, animated: false)
        advance(200)
    }

    /// §5 a tab bar controller as a window's root, its first tab shown.
    func launchTabs(window: FakeWindow, tabs: FakeViewController, children: [FakeViewController]) {
        recorder.scene(.willConnect, scene: window.scene)
        for child in children { addChild(child, to: tabs); didMove(child, to: tabs) }
        tracker.windowRoot(tabs, old: window.rootViewController, scene: window.scene)
        window.rootViewController = tabs
        load(tabs)
        load(children[0])
        attach(tabs, to: window)
        attach(children[0], to: tabs.view!)
        for vc in [tabs, children[0]] { willAppear(vc, animated: false) }
        for vc in [tabs, children[0]] { isAppearing(vc, animated: false) }
        advance(16)
        for vc in [tabs, children[0]] { didAppear(vc, animated: false) }
        recorder.scene(.didBecomeActive, scene: window.scene)
        advance(500)
    }

    /// An app extension's root (no scenes: the host's window holds it), shown then closed.
    func extensionSession(host: FakeWindow, root: FakeViewController) {
        recorder.mark("extensionHostWillEnterForeground")
        load(root)
        attach(root, to: host)
        willAppear(root, animated: true, presented: true)
        isAppearing(root, animated: true)
        advance(400)
        didAppear(root, animated: true, presented: true)
        advance(2_000)
        willDisappear(root, animated: true, dismissed: true)
        advance(400)
        didDisappear(root, animated: true, dismissed: true)
        detach(root)
        recorder.mark("extensionHostDidEnterBackground")
    }

    /// §7 background and back: no controller callbacks.
    func background(_ window: FakeWindow, for ms: UInt64) {
        recorder.scene(.willResignActive, scene: window.scene)
        recorder.scene(.didEnterBackground, scene: window.scene)
        advance(ms)
        recorder.scene(.willEnterForeground, scene: window.scene)
        recorder.scene(.didBecomeActive, scene: window.scene)
    }
}
