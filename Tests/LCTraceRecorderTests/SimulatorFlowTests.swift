import Foundation
import XCTest
@testable import LCTraceRecorder
import LCTraceFormat
import LCTraceModel
import LCTraceRules

/// The reference's callback orders (uikit-callback-orders.md) replayed through the core:
/// clean flows give no finding, each planted bug exactly its rule.
final class SimulatorFlowTests: XCTestCase {
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

    private func findings(extensionPoint: String? = nil) throws -> [String] {
        XCTAssertTrue(recorder.stop())
        let events = try RecorderTests.events(dir)
        return try RecorderTests.findings(events, extensionPoint: extensionPoint).map { "\($0.rule) \($0.cls ?? "")" }
    }

    private func launched() -> (FakeWindow, FakeNavigationController, ProductListViewController) {
        let window = FakeWindow(scene: "S-1")
        let nav = FakeNavigationController()
        let list = ProductListViewController()
        uikit.launch(window: window, nav: nav, root: list)
        return (window, nav, list)
    }

    /// A cancelled sheet swipe, then the sheet dismissed; an over-current-context modal.
    func testSheetsAndOverCurrentContextGiveZeroFindings() throws {
        let (window, nav, _) = launched()
        uikit.present(FilterSheetViewController(), from: nav, style: .pageSheet, window: window)
        uikit.cancelledSheetSwipe(nav.presentedViewController!)
        uikit.dismiss(nav.presentedViewController!, receiver: nav, window: window)
        uikit.present(CheckoutViewController(), from: nav, style: .overCurrentContext, window: window)
        uikit.dismiss(nav.presentedViewController!, receiver: nav, window: window)
        uikit.advance(8_000)
        XCTAssertEqual(try findings(), [])
    }

    /// Tab switches there and back: nobody leaves, nobody is flagged.
    func testTabSwitchGivesZeroFindings() throws {
        let window = FakeWindow(scene: "S-1")
        let tabs = FakeTabBarController()
        let a = ProductListViewController(), b = CheckoutViewController()
        uikit.launchTabs(window: window, tabs: tabs, children: [a, b])
        uikit.switchTab(tabs, from: a, to: b)
        uikit.switchTab(tabs, from: b, to: a)
        uikit.background(window, for: 10_000)
        uikit.advance(8_000)
        XCTAssertEqual(try findings(), [])
    }

    /// An app extension has no scenes: no LC502 when the session says it is one.
    func testAppExtensionGivesZeroFindings() throws {
        uikit.extensionSession(host: FakeWindow(scene: "host"), root: ShareComposeViewController())
        uikit.advance(8_000)
        XCTAssertEqual(try findings(extensionPoint: "com.apple.share-services"), [])
    }

    /// A child added to a visible container that never gets didMove(toParent:): LC102.
    func testChildAddedWithoutDidMoveIsLC102() throws {
        let (window, nav, list) = launched()
        let banner = BannerViewController()
        uikit.addChild(banner, to: list)
        uikit.load(banner)
        uikit.attach(banner, to: list.view!)
        uikit.willAppear(banner, animated: false)
        uikit.isAppearing(banner, animated: false)
        uikit.didAppear(banner, animated: false)
        uikit.advance(3_000)
        recorder.mark("session goes on")
        XCTAssertEqual(try findings(), ["LC102 BannerViewController"])
        withExtendedLifetime((window, nav, banner)) {}
    }

    /// viewWillAppear that never completes nor is cancelled: LC203.
    func testAppearWithoutDidAppearIsLC203() throws {
        let (window, nav, _) = launched()
        let checkout = CheckoutViewController()
        checkout.style = .pageSheet
        uikit.load(checkout)
        uikit.willAppear(checkout, animated: true, presented: true)
        nav.presentedViewController = checkout
        checkout.presentingViewController = nav
        uikit.tracker.present(checkout, by: nav, style: .pageSheet, animated: true, interactive: nil)
        uikit.attach(checkout, to: window)
        uikit.advance(3_000)
        recorder.mark("session goes on")
        XCTAssertEqual(try findings(), ["LC203 CheckoutViewController"])
        withExtendedLifetime(checkout) {}
    }

    /// A push whose appearance takes 1.5 s: LC401 (the 1 s animated threshold).
    func testSlowTransitionIsLC401() throws {
        let (_, nav, _) = launched()
        let detail = ProductDetailViewController()
        let a = nav.top!
        uikit.tracker.navigation(nav, .push(detail), animated: true, interactive: false) { uikit.addChild(detail, to: nav) }
        uikit.load(detail)
        uikit.willDisappear(a, animated: true)
        uikit.willAppear(detail, animated: true, toParent: true)
        uikit.attach(detail, to: nav.view!)
        uikit.isAppearing(detail, animated: true)
        uikit.advance(1_500)
        uikit.didDisappear(a, animated: true)
        uikit.detach(a)
        uikit.didAppear(detail, animated: true, toParent: true)
        uikit.didMove(detail, to: nav)
        uikit.advance(1_000)
        XCTAssertEqual(try findings(), ["LC401 ProductDetailViewController"])
        withExtendedLifetime(detail) {}
    }
}
