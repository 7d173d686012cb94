import XCTest
@testable import LCTraceFormat
@testable import LCTraceModel
@testable import LCTraceRules
@testable import LCTraceIngest
@testable import LCTraceStore
@testable import LCTraceSQLite
@testable import LCTracePostgreSQL
@testable import LCTraceAnalysis
@testable import LCTraceReport
@testable import LCTrace

/// The unbalanced family (LC201–LC205): rule triplets (see `RuleTestCase`).
final class UnbalancedRuleTests: RuleTestCase {
    func testLC201DeinitWhileVisible() {
        var b = app()
        addChild(&b, 1000)
        b.vc(2000, "viewDetached", "0xc", #""host":"0xa""#)
        b.vc(2000, "removeFromParent", "0xc", #""parent":"0xa""#)
        b.vc(2010, "deinit", "0xc")
        end(&b, 10_000)
        XCTAssertEqual(b.findings(rules: ["LC201"]), ["LC201 0xc#17"])
    }

    func testLC201NeverFlagsVisibleAtEndOrBackgrounding() {
        var b = app()
        b.add(1000, "sceneWillResignActive", #""scene":"s1""#)
        b.add(1001, "sceneDidEnterBackground", #""scene":"s1""#)
        b.add(60_000, "sceneWillEnterForeground", #""scene":"s1""#)
        b.add(60_001, "sceneDidBecomeActive", #""scene":"s1""#)
        end(&b, 70_000)
        XCTAssertEqual(b.findings(), [])
        XCTAssertEqual(b.model().instance(InstanceKey(vc: "0xa", since: 3))?.state, .visible)
    }

    func testLC202DoubleAppear() {
        var b = app()
        b.vc(1000, "viewWillAppear", "0xa", #""animated":false"#)
        b.vc(1001, "viewIsAppearing", "0xa", #""animated":false"#)
        b.vc(1005, "viewDidAppear", "0xa", #""animated":false"#)
        b.vc(1006, "viewDidAppear", "0xa", #""animated":false"#)
        end(&b, 2000)
        XCTAssertEqual(b.findings(), ["LC202 0xa#3", "LC202 0xa#3"])
    }

    func testCancelledInteractivePopIsNeverFlagged() {
        var b = app()
        push(&b, 1000, "0xb")
        // Reference §3: B.willDisappear, A.willAppear … A.willDisappear, A.didDisappear, B.willAppear, B.didAppear.
        b.vc(3000, "pop", "0xn", #""child":"0xb","animated":true,"interactive":true"#)
        b.vc(3000, "viewWillDisappear", "0xb", #""animated":true,"isMovingFromParent":true"#)
        b.vc(3001, "viewWillAppear", "0xa", #""animated":true"#)
        b.vc(3001, "viewAttached", "0xa", #""host":"0xn""#)
        b.vc(3002, "viewIsAppearing", "0xa", #""animated":true"#)
        b.vc(9000, "viewWillDisappear", "0xa", #""animated":true"#)
        b.vc(9200, "viewDidDisappear", "0xa", #""animated":true"#)
        b.vc(9200, "viewDetached", "0xa", #""host":"0xn""#)
        b.vc(9201, "viewWillAppear", "0xb", #""animated":true"#)
        b.vc(9250, "viewDidAppear", "0xb", #""animated":true"#)
        end(&b, 30_000)
        XCTAssertEqual(b.findings(), [])
    }

    func testCancelledSheetSwipeIsNeverFlagged() {
        var b = app()
        b.vc(1000, "init", "0xs", #""cls":"SheetVC""#)
        b.vc(1000, "present", "0xa", #""presented":"0xs","style":"pageSheet","animated":true"#)
        b.vc(1001, "viewDidLoad", "0xs")
        b.vc(1001, "viewWillAppear", "0xs", #""animated":true,"isBeingPresented":true"#)
        b.vc(1001, "viewAttached", "0xs", #""host":null"#)
        b.vc(1002, "viewIsAppearing", "0xs", #""animated":true"#)
        b.vc(1400, "viewDidAppear", "0xs", #""animated":true,"isBeingPresented":true"#)
        b.vc(3000, "viewWillDisappear", "0xs", #""animated":true,"isBeingDismissed":true"#)
        b.vc(4000, "viewWillAppear", "0xs", #""animated":true"#)
        b.vc(4200, "viewDidAppear", "0xs", #""animated":true"#)
        end(&b, 20_000)
        XCTAssertEqual(b.findings(), [], "no callbacks for the presenter, no viewIsAppearing on the way back: all legal")
    }

    func testLC203StuckAppearing() {
        var b = app()
        b.vc(1000, "init", "0xc", #""cls":"ChildVC""#)
        b.vc(1000, "addChild", "0xc", #""parent":"0xa""#)
        b.vc(1000, "willMoveToParent", "0xc", #""parent":"0xa""#)
        b.vc(1001, "didMoveToParent", "0xc", #""parent":"0xa""#)
        b.vc(1001, "viewWillAppear", "0xc", #""animated":false"#)
        b.add(2500, "mark", #""name":"x""#)
        XCTAssertEqual(b.findings(), [], "1.5 s is not yet stuck")
        b.add(3100, "mark", #""name":"y""#)
        XCTAssertEqual(b.findings(), ["LC203 0xc#17"])
    }

    func testLC203DoesNotCountBackgroundTime() {
        var b = app()
        b.vc(1000, "viewWillDisappear", "0xa", #""animated":false"#)
        b.vc(1001, "viewDidDisappear", "0xa", #""animated":false"#)
        b.vc(1500, "viewWillAppear", "0xa", #""animated":false"#)
        b.add(1600, "sceneDidEnterBackground", #""scene":"s1""#)
        b.add(90_000, "mark", #""name":"killed in background""#)
        XCTAssertEqual(b.findings(rules: ["LC203"]), [])
    }

    func testLC204DisappearWithoutAppear() {
        var b = app()
        b.vc(1000, "viewDidDisappear", "0xa", #""animated":false"#)
        b.vc(1100, "viewWillDisappear", "0xa", #""animated":false"#)
        end(&b, 2000)
        XCTAssertEqual(b.findings(), ["LC204 0xa#3", "LC204 0xa#3"])
    }

    func testLC204NeverFlagsACancelledAppearance() {
        var b = app()
        b.vc(1000, "viewWillDisappear", "0xa", #""animated":false"#)
        b.vc(1001, "viewDidDisappear", "0xa", #""animated":false"#)
        b.vc(1500, "viewWillAppear", "0xa", #""animated":true"#)
        b.vc(1501, "viewIsAppearing", "0xa", #""animated":true"#)
        b.vc(1600, "viewWillDisappear", "0xa", #""animated":true"#)
        b.vc(1700, "viewDidDisappear", "0xa", #""animated":true"#)
        end(&b, 2000)
        XCTAssertEqual(b.findings(), [])
    }

    func testLC205LifecycleOrder() {
        var b = app()
        b.vc(1000, "viewDidLoad", "0xa")
        addChild(&b, 2000)
        removeChild(&b, 3000)
        b.vc(3100, "viewWillAppear", "0xc")
        b.vc(3200, "viewDidAppear", "0xc")
        end(&b, 5000)
        XCTAssertEqual(b.findings(), ["LC205 0xa#3", "LC205 0xc#18"])
        XCTAssertTrue(b.model().findings.contains { $0.message.contains("after its deinit (and 1 more events)") })
    }
}
