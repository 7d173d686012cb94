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

// MARK: 1.2: chain intermediates hidden, holes, one clock

extension UnbalancedRuleTests {
    /// (1.2, item 6) Dismissing X takes Y (a navigation controller with child Y1) and Z along
    /// without callbacks: from the dismissal's end they and what they contain are hidden, so
    /// their later deinit is not LC201.
    func testChainDismissalLeavesTheIntermediatesHidden() {
        var b = app()
        present(&b, 1000, "0xx", by: "0xa", cls: "ComposeVC")
        b.vc(2000, "init", "0xy", #""cls":"UINavigationController""#)
        b.vc(2000, "init", "0xy1", #""cls":"PickerVC""#)
        b.vc(2000, "addChild", "0xy1", #""parent":"0xy""#)
        b.vc(2000, "didMoveToParent", "0xy1", #""parent":"0xy""#)
        present(&b, 2000, "0xy", by: "0xx", cls: "UINavigationController", style: "pageSheet", initialise: false)
        b.vc(2001, "viewWillAppear", "0xy1", #""animated":true"#)
        b.vc(2402, "viewDidAppear", "0xy1", #""animated":true"#)
        present(&b, 3000, "0xz", by: "0xy1", cls: "ConfirmVC", style: "pageSheet")
        b.vc(5000, "dismiss", "0xx", #""animated":true"#)
        b.vc(5000, "viewWillDisappear", "0xz", #""animated":true,"isBeingDismissed":true"#)
        b.vc(5001, "viewWillAppear", "0xa", #""animated":true"#)
        b.vc(5400, "viewDidDisappear", "0xz", #""animated":true,"isBeingDismissed":true"#)
        b.vc(5400, "viewDidAppear", "0xa", #""animated":true"#)
        for vc in ["0xz", "0xy1", "0xy", "0xx"] { b.vc(5420, "deinit", vc) }
        end(&b, 30_000)
        XCTAssertEqual(b.flagged(rules: ["LC201", "LC202", "LC204", "LC205", "LC301"]), [])
    }

    /// (1.2, item 9) A push whose viewDidAppear and didMove lie in a lost file, then a pop:
    /// the events around the hole are not judged as an order break (the lost ones may have
    /// completed the push), and the state resumes from what the next event implies.
    func testATransitionAcrossAHoleIsNotJudged() {
        var b = app()
        push(&b, 1000, "0xb")
        // A normal push and pop of 0xd, with a hole in the middle of the push.
        b.vc(3000, "init", "0xd", #""cls":"DetailVC""#)
        b.vc(3000, "push", "0xn", #""child":"0xd","animated":true"#)
        b.vc(3000, "addChild", "0xd", #""parent":"0xn""#)
        b.vc(3001, "viewWillAppear", "0xd", #""animated":true,"isMovingToParent":true"#)
        b.seq += 4   // viewIsAppearing, viewDidAppear, didMoveToParent and a scene event were lost
        b.vc(4000, "viewWillAppear", "0xd", #""animated":true"#)   // shown again after a tab switch the hole hid
        b.vc(4001, "viewDidAppear", "0xd", #""animated":true"#)
        b.vc(6000, "viewWillDisappear", "0xd", #""animated":true,"isMovingFromParent":true"#)
        b.vc(6300, "viewDidDisappear", "0xd", #""animated":true,"isMovingFromParent":true"#)
        b.vc(6300, "removeFromParent", "0xd", #""parent":"0xn""#)
        b.vc(6320, "deinit", "0xd")
        end(&b, 30_000)
        XCTAssertEqual(b.flagged(rules: ["LC202", "LC203", "LC204", "LC205"]), [])
        // Look-alike: the same order break with no hole is LC202.
        var c = app()
        c.vc(3000, "init", "0xd", #""cls":"DetailVC""#)
        c.vc(3001, "viewWillAppear", "0xd", #""animated":true"#)
        c.vc(4000, "viewWillAppear", "0xd", #""animated":true"#)
        c.vc(4001, "viewDidAppear", "0xd", #""animated":true"#)
        end(&c, 30_000)
        XCTAssertEqual(c.flagged(rules: ["LC202"]), ["LC202 0xd"])
    }

    /// (1.2) The hole is measured from the instance's previous appearance event: a didMove
    /// or viewDetached recorded after the hole (or a pop's willMove) does not make the next
    /// appearance step judgeable.
    func testAHoleFollowedByAContainmentEventStillExemptsTheNextAppearanceStep() {
        var b = app()
        b.vc(3000, "init", "0xd", #""cls":"DetailVC""#)
        b.vc(3000, "push", "0xn", #""child":"0xd","animated":true"#)
        b.vc(3000, "addChild", "0xd", #""parent":"0xn""#)
        // Lost: willMove, loadView, viewDidLoad, 0xa.viewWillDisappear, 0xd.viewWillAppear,
        // viewIsAppearing, 0xa.viewDidDisappear, 0xd.viewDidAppear.
        b.seq += 8
        b.vc(3400, "didMoveToParent", "0xd", #""parent":"0xn""#)
        b.vc(3400, "viewDetached", "0xa", #""host":"0xn""#)
        pop(&b, 5000, "0xd")
        end(&b, 30_000)
        XCTAssertEqual(b.flagged(rules: ["LC202", "LC203", "LC204", "LC205"]), [])
        // Look-alike: without the hole, the same lines are an order break.
        var c = app()
        c.vc(3000, "init", "0xd", #""cls":"DetailVC""#)
        c.vc(3000, "push", "0xn", #""child":"0xd","animated":true"#)
        c.vc(3000, "addChild", "0xd", #""parent":"0xn""#)
        c.vc(3400, "didMoveToParent", "0xd", #""parent":"0xn""#)
        c.vc(3400, "viewDetached", "0xa", #""host":"0xn""#)
        pop(&c, 5000, "0xd")
        end(&c, 30_000)
        XCTAssertFalse(c.flagged(rules: ["LC202", "LC203", "LC204", "LC205"]).isEmpty)
    }

    /// (1.2, item 5) LC203's 2 s are foreground time: an appearance begun just before the
    /// whole app went to the background, in a session that ended soon after its return, is
    /// not stuck (with another window still active, the clock would have run).
    func testStuckAppearingCountsForegroundTime() {
        var b = app()
        b.vc(1000, "init", "0xd", #""cls":"DetailVC""#)
        b.vc(1001, "viewWillAppear", "0xd", #""animated":true"#)
        b.add(1100, "sceneDidEnterBackground", #""scene":"s1""#)
        b.add(50_000, "sceneWillEnterForeground", #""scene":"s1""#)
        end(&b, 50_500)
        XCTAssertEqual(b.flagged(rules: ["LC203"]), [])
        var two = app()
        two.add(500, "sceneWillConnect", #""scene":"s2""#)
        two.add(501, "sceneWillEnterForeground", #""scene":"s2""#)
        two.vc(1000, "init", "0xd", #""cls":"DetailVC""#)
        two.vc(1001, "viewWillAppear", "0xd", #""animated":true"#)
        two.add(1100, "sceneDidEnterBackground", #""scene":"s1""#)
        two.add(50_000, "sceneWillEnterForeground", #""scene":"s1""#)
        end(&two, 50_500)
        XCTAssertEqual(two.flagged(rules: ["LC203"]), ["LC203 0xd"])
    }

    /// (1.2) LC203's message states foreground time as such, not the elapsed time: an
    /// appearance stuck 3 s in the foreground and 60 s in the background says so.
    func testStuckAppearingMessageStatesForegroundTime() {
        var b = app()
        b.vc(1000, "init", "0xd", #""cls":"DetailVC""#)
        b.vc(1001, "viewWillAppear", "0xd", #""animated":true"#)
        b.add(2001, "sceneDidEnterBackground", #""scene":"s1""#)
        b.add(62_001, "sceneWillEnterForeground", #""scene":"s1""#)
        end(&b, 64_001)
        let message = finding(b.model(), "LC203", "0xd")?.message ?? ""
        XCTAssertTrue(message.contains("3.00 s of foreground time (63.0 s in all) after viewWillAppear"), message)
    }

    /// (1.2, item 9) An event after a deinit with a seq hole between them is not LC205: the
    /// new `init` of a controller at the reused address may lie in the hole.
    func testAnEventAfterDeinitAcrossAHoleIsNotJudged() {
        var b = app()
        b.vc(3000, "init", "0xd", #""cls":"DetailVC""#)
        b.vc(3001, "deinit", "0xd")
        b.seq += 2   // the new init of 0xd and its viewDidLoad were lost
        b.vc(4000, "viewWillAppear", "0xd", #""animated":true"#)
        b.vc(4001, "viewDidAppear", "0xd", #""animated":true"#)
        end(&b, 30_000)
        XCTAssertEqual(b.flagged(rules: ["LC205"]), [])
        // Look-alike: with no hole the event after deinit is LC205.
        var c = app()
        c.vc(3000, "init", "0xd", #""cls":"DetailVC""#)
        c.vc(3001, "deinit", "0xd")
        c.vc(4000, "viewWillAppear", "0xd", #""animated":true"#)
        end(&c, 30_000)
        XCTAssertEqual(c.flagged(rules: ["LC205"]), ["LC205 0xd"])
    }

    /// (1.2, item 5) A scene that connects while the app is in the background (a window the
    /// system restores, say) starts no foreground clock until it enters the foreground; when
    /// it does, the clock counts from its connection.
    func testASceneConnectingInTheBackgroundStartsNoClock() {
        func session(enters: Bool) -> TraceBuilder {
            var b = app()
            b.add(20, "sceneWillConnect", #""scene":"s1""#)
            b.add(21, "sceneWillEnterForeground", #""scene":"s1""#)
            b.vc(1000, "init", "0xd", #""cls":"DetailVC""#)
            b.vc(1001, "viewWillAppear", "0xd", #""animated":true"#)
            b.add(1100, "sceneDidEnterBackground", #""scene":"s1""#)
            b.add(20_000, "sceneWillConnect", #""scene":"s2""#)
            if enters { b.add(49_500, "sceneWillEnterForeground", #""scene":"s2""#) }
            end(&b, 50_000)
            return b
        }
        XCTAssertEqual(session(enters: false).flagged(rules: ["LC203"]), [])
        // Look-alike: the scene enters the foreground later; its 30 s from the connection count.
        XCTAssertEqual(session(enters: true).flagged(rules: ["LC203"]), ["LC203 0xd"])
    }

    /// (1.2, item 6) The intermediates of a chain dismissal are hidden for every rule, not
    /// only LC201: presented again later, they appear from `hidden` (no LC202).
    func testChainIntermediatesAreHiddenForEveryRule() {
        var b = app()
        present(&b, 1000, "0xx", by: "0xa", cls: "ComposeVC", style: "pageSheet")
        present(&b, 2000, "0xy", by: "0xx", cls: "PickerVC", style: "pageSheet")
        present(&b, 3000, "0xz", by: "0xy", cls: "ConfirmVC", style: "pageSheet")
        b.vc(5000, "dismiss", "0xx", #""animated":true"#)
        b.vc(5000, "viewWillDisappear", "0xz", #""animated":true,"isBeingDismissed":true"#)
        b.vc(5400, "viewDidDisappear", "0xz", #""animated":true,"isBeingDismissed":true"#)
        present(&b, 8000, "0xy", by: "0xa", cls: "PickerVC", style: "pageSheet", initialise: false)
        end(&b, 30_000)
        XCTAssertEqual(b.flagged(rules: ["LC202", "LC203", "LC204", "LC205"]), [])
    }

    /// (1.2, item 8) A replaced window root and what it contains are hidden from the swap:
    /// made the root again later, they appear from `hidden` (no LC202), and their deinit after
    /// a second swap is not LC201.
    func testAReplacedWindowRootIsHiddenForEveryRule() {
        var b = app()
        b.vc(3000, "init", "0xr", #""cls":"LoginVC""#)
        b.vc(3000, "windowRoot", "0xr", #""old":"0xn","scene":"s1""#)
        for (t, ev) in [(3001.0, "viewWillAppear"), (3002, "viewIsAppearing"), (3010, "viewDidAppear")] {
            b.vc(t, ev, "0xr", #""animated":false"#)
        }
        b.vc(9000, "windowRoot", "0xn", #""old":"0xr","scene":"s1""#)
        for vc in ["0xn", "0xa"] {
            for (t, ev) in [(9001.0, "viewWillAppear"), (9002, "viewIsAppearing"), (9010, "viewDidAppear")] {
                b.vc(t, ev, vc, #""animated":false"#)
            }
        }
        b.vc(9100, "deinit", "0xr")
        end(&b, 30_000)
        XCTAssertEqual(b.flagged(rules: ["LC201", "LC202", "LC203", "LC204", "LC205"]), [])
    }
}
