import Foundation
import XCTest
@testable import LCTraceRecorder
import LCTraceFormat
import LCTraceModel
import LCTraceRules

/// The platform-independent UIKit logic, driven by the callback orders UIKit delivers.
final class ControllerTrackerTests: XCTestCase {
    private var dir: URL!
    private var clock: TestClock!
    private var recorder: TraceRecorder!
    private var uikit: UIKitSimulator!

    override func setUpWithError() throws {
        dir = RecorderTests.directory(name)
        clock = TestClock()
        recorder = try TraceRecorder(configuration: RecorderTests.configuration(dir, clock: clock))
        uikit = UIKitSimulator(recorder: recorder, clock: clock)
    }

    override func tearDown() {
        recorder?.stop()
        uikit = nil
        recorder = nil
        try? FileManager.default.removeItem(at: dir)
    }

    private func stopAndRead() throws -> [TraceEvent] {
        XCTAssertTrue(recorder.stop())
        let files = try RecorderTests.files(dir)
        for f in files { XCTAssertEqual(f.rejects.count, 0, "\(f.rejects)") }
        return files.flatMap(\.events).sorted { $0.seq < $1.seq }
    }

    /// `name vc other` lines of the controller events, for readable comparisons.
    private func lines(_ events: [TraceEvent], _ kinds: Set<EventKind>? = nil) -> [String] {
        events.filter { kinds?.contains($0.kind) ?? true }.map { e in
            [e.name, e.vc ?? "-", e.other ?? (e.flags.contains(.otherPresent) ? "null" : "")].joined(separator: " ")
                .trimmingCharacters(in: .whitespaces)
        }
    }

    /// A session of the usual transitions (launch, push, pop, a full-screen modal, a sheet
    /// swiped away, a child added to and removed from a visible container, a cancelled
    /// interactive pop, backgrounding) records what happened and lctrace finds nothing.
    func testUsualTransitionsGiveZeroFindings() throws {
        let window = FakeWindow(scene: "S-1")
        let nav = FakeNavigationController()
        let list = ProductListViewController()
        uikit.launch(window: window, nav: nav, root: list)
        uikit.push(ProductDetailViewController(), on: nav)
        uikit.pop(nav)
        uikit.push(ProductDetailViewController(), on: nav)
        uikit.pop(nav, interactive: true, cancelled: true)
        uikit.pop(nav, interactive: true)
        uikit.present(CheckoutViewController(), from: nav, style: .fullScreen, window: window)
        uikit.dismiss(nav.presentedViewController!, receiver: nav, window: window)
        uikit.present(FilterSheetViewController(), from: nav, style: .pageSheet, window: window)
        uikit.dismiss(nav.presentedViewController!, receiver: nav, swipe: true, window: window)
        uikit.addChildWhileVisible(BannerViewController(), to: list)
        uikit.removeChild(list.children[0])
        uikit.background(window, for: 30_000)
        uikit.advance(8_000)
        let events = try stopAndRead()

        XCTAssertEqual(try RecorderTests.findings(events).map { "\($0.rule) \($0.vc ?? "") \($0.message)" }, [])
        // Every controller that went away was recorded gone: the pushed details, the modal, the sheet, the banner.
        let inits = events.filter { $0.kind == .`init` }
        XCTAssertEqual(inits.map { $0.cls ?? "" }, ["FakeNavigationController", "ProductListViewController",
                                                     "ProductDetailViewController", "ProductDetailViewController",
                                                     "CheckoutViewController", "FilterSheetViewController", "BannerViewController"])
        XCTAssertEqual(Set(inits.map(\.vc)).count, inits.count, "ids are fresh")
        XCTAssertEqual(events.filter { $0.kind == .`deinit` }.map(\.vc), ["vc3", "vc4", "vc5", "vc6", "vc7"])
        XCTAssertEqual(inits.first?.attrs, #"{"uikit":"UINavigationController"}"#)
    }

    /// A controller kept alive after its pop is lctrace's LC301.
    func testControllerRetainedAfterPopIsLC301() throws {
        let window = FakeWindow(scene: "S-1")
        let nav = FakeNavigationController()
        uikit.launch(window: window, nav: nav, root: ProductListViewController())
        let leaked = ProductDetailViewController()
        uikit.push(leaked, on: nav)
        uikit.pop(nav)
        uikit.advance(8_000)
        recorder.mark("session goes on past the grace period")
        let events = try stopAndRead()
        let findings = try RecorderTests.findings(events)
        XCTAssertEqual(findings.map(\.rule), ["LC301"])
        XCTAssertEqual(findings.first?.cls, "ProductDetailViewController")
        withExtendedLifetime(leaked) {}
    }

    /// Push and pop in UIKit's order: the inner addChild/willMove after `push`, removeFromParent
    /// with its former parent before UIKit's own didMove(nil), views attached under the nav.
    func testPushPopEventsAndTheirKeys() throws {
        let window = FakeWindow(scene: "S-1")
        let nav = FakeNavigationController()
        uikit.launch(window: window, nav: nav, root: ProductListViewController())
        let before = try XCTUnwrap(recorder.statistics.recorded)
        uikit.push(ProductDetailViewController(), on: nav)
        uikit.pop(nav)
        let events = try stopAndRead().dropFirst(Int(before))
        let structure: Set<EventKind> = [.push, .pop, .`init`, .addChild, .willMoveToParent, .didMoveToParent,
                                         .removeFromParent, .viewAttached, .viewDetached, .`deinit`]
        XCTAssertEqual(lines(Array(events), structure), [
            "init vc3", "push vc1 vc3", "addChild vc3 vc1", "willMoveToParent vc3 vc1", "viewAttached vc3 vc1",
            "viewDetached vc2 vc1", "didMoveToParent vc3 vc1",
            "pop vc1 vc3", "willMoveToParent vc3 null", "viewAttached vc2 vc1", "viewDetached vc3 vc1",
            "removeFromParent vc3 vc1", "didMoveToParent vc3 null", "deinit vc3",
        ])
    }

    /// removeFromParent names the former parent even when UIKit no longer does (the one
    /// recorded at addChild), and a detach names the host the view was attached under.
    func testRemovalAndDetachNameWhatTheyLeave() throws {
        let parent = CardContainerViewController(), child = BannerViewController()
        uikit.load(parent)
        uikit.addChild(child, to: parent)
        uikit.didMove(child, to: parent)
        uikit.load(child)
        uikit.attach(child, to: parent.view!)
        uikit.tracker.removeFromParent(child, currentParent: nil)
        uikit.tracker.rootViewMoved(child, attached: false, hosts: [])
        uikit.tracker.rootViewMoved(child, attached: false, hosts: [])  // a second detach: nothing
        let events = try stopAndRead()
        XCTAssertEqual(lines(events, [.removeFromParent, .viewDetached]), ["removeFromParent vc2 vc1", "viewDetached vc2 vc1"])
        withExtendedLifetime([parent, child]) {}
    }

    /// The first callback of an instance records its init (with `uikit`); ids are per
    /// session counters, never addresses, and never reused.
    func testInitAtFirstSightAndFreshIDs() throws {
        var ids: [InstanceID] = []
        for _ in 0..<3 {
            let vc = ProductDetailViewController()
            uikit.load(vc)
            ids.append(try XCTUnwrap(uikit.tracker.instanceID(of: vc)))
        }
        let events = try stopAndRead()
        XCTAssertEqual(ids.map(\.description), ["vc1", "vc2", "vc3"])
        XCTAssertEqual(lines(events, [.`init`, .loadView, .viewDidLoad, .`deinit`]), [
            "init vc1", "loadView vc1", "viewDidLoad vc1", "deinit vc1",
            "init vc2", "loadView vc2", "viewDidLoad vc2", "deinit vc2",
            "init vc3", "loadView vc3", "viewDidLoad vc3", "deinit vc3",
        ])
        XCTAssertEqual(events[1].attrs, #"{"uikit":"UIViewController"}"#)
    }

    /// Left-out classes record nothing; a view hosted in one counts for the recorded
    /// controller above it.
    func testFilteredClassesAreLeftOutAndHostsSkipThem() throws {
        let window = FakeWindow(scene: "S-1")
        let nav = FakeNavigationController()
        let list = ProductListViewController()
        uikit.launch(window: window, nav: nav, root: list)
        let privateHost = _UIPrivateHostViewController()
        let keyboard = UIInputWindowController()
        uikit.load(keyboard)
        uikit.addChildWhileVisible(privateHost, to: list)
        let banner = BannerViewController()
        uikit.load(banner)
        uikit.attach(banner, to: privateHost.view!)
        let events = try stopAndRead()
        XCTAssertFalse(events.contains { $0.cls == "UIInputWindowController" || $0.cls == "_UIPrivateHostViewController" })
        XCTAssertNil(uikit.tracker.instanceID(of: keyboard))
        XCTAssertEqual(lines(events, [.viewAttached]).last, "viewAttached vc3 vc2")
        // The child's addChild into the recorded list is kept only for recorded children.
        XCTAssertFalse(lines(events, [.addChild]).contains { $0.hasSuffix("vc2") && !$0.contains("vc3") })
    }

    /// Navigation: popToRoot pops each controller above the root (top first), a nested call
    /// of the same navigation controller records nothing more, and setViewControllers pops
    /// the controllers it removes and pushes those it adds.
    func testNavigationChangesAndNestedCalls() throws {
        let nav = FakeNavigationController()
        let root = ProductListViewController(), a = ProductDetailViewController(), b = CheckoutViewController()
        for vc in [root, a, b] { uikit.addChild(vc, to: nav) }
        let ids = [nav, root, a, b].map { uikit.tracker.instanceID(of: $0)!.description }
        uikit.tracker.navigation(nav, .popToRoot(stack: nav.children), animated: true, interactive: false) {
            // UIKit's popToRoot may go through its own methods: not recorded again.
            uikit.tracker.navigation(nav, .popTo(root, stack: nav.children), animated: true, interactive: false) {}
        }
        let c = BannerViewController()
        uikit.tracker.navigation(nav, .set(old: [root, a, b], new: [root, c]), animated: false, interactive: false) {}
        let events = try stopAndRead()
        let cID = "vc5"
        XCTAssertEqual(lines(events, [.push, .pop]), [
            "pop \(ids[0]) \(ids[3])", "pop \(ids[0]) \(ids[2])",
            "pop \(ids[0]) \(ids[3])", "pop \(ids[0]) \(ids[2])", "push \(ids[0]) \(cID)",
        ])
        XCTAssertEqual(events.first { $0.kind == .pop }?.flags.contains(.animated), true)
    }

    /// dismiss on the presenter, on the presented, and on a child of a presented container
    /// names the presented controller (the one that goes).
    func testDismissNamesThePresentedController() throws {
        let window = FakeWindow(scene: "S-1")
        let nav = FakeNavigationController()
        uikit.launch(window: window, nav: nav, root: ProductListViewController())
        var ids: [String] = []
        do {
            let modal = CheckoutViewController()
            uikit.present(modal, from: nav, style: .fullScreen, window: window)
            uikit.dismiss(modal, receiver: nav, window: window)           // the presenter dismisses
            ids.append(uikit.tracker.instanceID(of: modal)!.description)
        }
        do {
            let sheet = FilterSheetViewController()
            uikit.present(sheet, from: nav, style: .pageSheet, window: window)
            uikit.dismiss(sheet, receiver: sheet, window: window)          // forwarded to the presenter
            ids.append(uikit.tracker.instanceID(of: sheet)!.description)
        }
        do {
            let wrapped = FakeNavigationController(), inside = ProductDetailViewController()
            uikit.addChild(inside, to: wrapped)
            uikit.didMove(inside, to: wrapped)
            uikit.present(wrapped, from: nav, style: .formSheet, window: window)
            uikit.dismiss(wrapped, receiver: inside, window: window)       // a child of the presented nav
            ids.append(uikit.tracker.instanceID(of: wrapped)!.description)
        }
        uikit.advance(8_000)
        let events = try stopAndRead()
        XCTAssertEqual(lines(events, [.dismiss]), ids.map { "dismiss \($0)" })
        XCTAssertEqual(events.filter { $0.kind == .present }.map(\.detail), ["fullScreen", "pageSheet", "formSheet"])
        XCTAssertEqual(try RecorderTests.findings(events).map { "\($0.rule) \($0.message)" }, [])
    }

    /// Trait changes that change nothing recorded are not written; real ones are.
    func testTraitChangesAreRecordedOnlyWhenTheyDiffer() throws {
        let vc = ProductListViewController()
        uikit.load(vc)
        uikit.isAppearing(vc, animated: false)  // compact/regular/light
        uikit.tracker.traitsChanged(vc, traits: Traits(horizontal: .compact, vertical: .regular, style: .light))
        uikit.tracker.traitsChanged(vc, traits: Traits(horizontal: .compact, vertical: .regular, style: .dark))
        uikit.tracker.traitsChanged(vc, traits: Traits(horizontal: .compact, vertical: .regular, style: .dark))
        let events = try stopAndRead()
        XCTAssertEqual(events.filter { $0.kind == .traitChange }.map(\.attrs), [#"{"traits":{"h":"compact","v":"regular","style":"dark"}}"#])
        withExtendedLifetime(vc) {}
    }

    /// Layout callbacks are off by default and recorded when asked for.
    func testLayoutOnlyWhenConfigured() throws {
        let vc = ProductListViewController()
        uikit.tracker.layout(vc, did: false)
        var config = RecorderTests.configuration(RecorderTests.directory(), clock: clock)
        config.recordsLayout = true
        let other = try TraceRecorder(configuration: config)
        let tracker = ControllerTracker(recorder: other, storage: HeldSentinels(), naming: UIKitSimulator.naming)
        tracker.layout(vc, did: false)
        tracker.layout(vc, did: true)
        other.stop()
        XCTAssertFalse(try stopAndRead().contains { $0.kind == .viewWillLayoutSubviews })
        // The second session gave the same controller its own id and init (a sentinel of an
        // earlier session is replaced).
        XCTAssertEqual(lines(try RecorderTests.events(config.directory!), [.`init`, .viewWillLayoutSubviews, .viewDidLayoutSubviews]),
                       ["init vc1", "viewWillLayoutSubviews vc1", "viewDidLayoutSubviews vc1"])
        try? FileManager.default.removeItem(at: config.directory!)
        withExtendedLifetime(vc) {}
    }

    /// windowRoot names the new root and the old one (each with its init at first sight).
    func testWindowRootNamesNewAndOld() throws {
        let window = FakeWindow(scene: "S-9")
        let first = ProductListViewController(), second = CheckoutViewController()
        uikit.tracker.windowRoot(first, old: nil, scene: window.scene)
        uikit.tracker.windowRoot(second, old: first, scene: window.scene)
        uikit.tracker.windowRoot(second, old: second, scene: window.scene)  // the same root again: nothing
        let events = try stopAndRead()
        XCTAssertEqual(events.filter { $0.name == "windowRoot" }.map { "\($0.vc ?? "-") \($0.attrs ?? "")" },
                       [#"vc1 {"old":null,"scene":"S-9"}"#, #"vc2 {"old":"vc1","scene":"S-9"}"#])
        withExtendedLifetime([first, second]) {}
    }
}
