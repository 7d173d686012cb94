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

/// Rule triplets: a few inline trace lines, the rule, the expected findings; for each rule the
/// positive case and the legitimate look-alikes it must never flag.
final class RuleTests: XCTestCase {
    /// A tab-less app: navigation controller 0xn with root 0xa, both visible at t = 10 ms.
    func app() -> TraceBuilder {
        var b = TraceBuilder()
        b.vc(2, "init", "0xn", #""cls":"UINavigationController""#)
        b.vc(2, "init", "0xa", #""cls":"RootVC""#)
        b.vc(2, "addChild", "0xa", #""parent":"0xn""#)
        b.vc(2, "willMoveToParent", "0xa", #""parent":"0xn""#)
        b.vc(2, "didMoveToParent", "0xa", #""parent":"0xn""#)
        for vc in ["0xn", "0xa"] { b.vc(3, "viewDidLoad", vc) }
        for vc in ["0xn", "0xa"] { b.vc(4, "viewWillAppear", vc, #""animated":false"#) }
        b.vc(4, "viewAttached", "0xn", #""host":null"#)
        b.vc(4, "viewAttached", "0xa", #""host":"0xn""#)
        for vc in ["0xn", "0xa"] { b.vc(5, "viewIsAppearing", vc, #""animated":false"#) }
        for vc in ["0xn", "0xa"] { b.vc(10, "viewDidAppear", vc, #""animated":false"#) }
        return b
    }

    /// Pushes `vc` (class `cls`) onto 0xn over `over`, animated, with an is→did gap of `gap` ms.
    func push(_ b: inout TraceBuilder, _ at: Double, _ vc: String, over: String = "0xa", cls: String = "DetailVC",
              gap: Double = 400, isAppearing: Bool = true, interactive: Bool = false) {
        b.vc(at, "init", vc, "\"cls\":\"\(cls)\"")
        b.vc(at, "push", "0xn", "\"child\":\"\(vc)\",\"animated\":true,\"interactive\":\(interactive)")
        b.vc(at, "addChild", vc, #""parent":"0xn""#)
        b.vc(at, "willMoveToParent", vc, #""parent":"0xn""#)
        b.vc(at + 1, "viewDidLoad", vc)
        b.vc(at + 2, "viewWillDisappear", over, #""animated":true,"isMovingFromParent":false"#)
        b.vc(at + 2, "viewWillAppear", vc, #""animated":true,"isMovingToParent":true"#)
        b.vc(at + 2, "viewAttached", vc, #""host":"0xn""#)
        if isAppearing { b.vc(at + 3, "viewIsAppearing", vc, #""animated":true"#) }
        b.vc(at + 3 + gap, "viewDidDisappear", over, #""animated":true,"isMovingFromParent":false"#)
        b.vc(at + 3 + gap, "viewDidAppear", vc, #""animated":true,"isMovingToParent":true"#)
        b.vc(at + 3 + gap, "didMoveToParent", vc, #""parent":"0xn""#)
        b.vc(at + 3 + gap, "viewDetached", over, #""host":"0xn""#)
    }

    /// Pops `vc` off 0xn, revealing `under`; `deinitAfter` ms later it deinits (nil: never).
    func pop(_ b: inout TraceBuilder, _ at: Double, _ vc: String, under: String = "0xa", deinitAfter: Double? = 30,
             fingerMs: Double = 350, interactive: Bool = false) {
        b.vc(at, "pop", "0xn", "\"child\":\"\(vc)\",\"animated\":true,\"interactive\":\(interactive)")
        b.vc(at, "willMoveToParent", vc, #""parent":null"#)
        b.vc(at, "viewWillDisappear", vc, #""animated":true,"isMovingFromParent":true"#)
        b.vc(at + 1, "viewWillAppear", under, #""animated":true"#)
        b.vc(at + 1, "viewAttached", under, #""host":"0xn""#)
        b.vc(at + 2, "viewIsAppearing", under, #""animated":true"#)
        b.vc(at + 2 + fingerMs, "viewDidDisappear", vc, #""animated":true,"isMovingFromParent":true"#)
        b.vc(at + 2 + fingerMs, "viewDidAppear", under, #""animated":true"#)
        b.vc(at + 2 + fingerMs, "viewDetached", vc, #""host":"0xn""#)
        b.vc(at + 2 + fingerMs, "removeFromParent", vc, #""parent":"0xn""#)
        b.vc(at + 2 + fingerMs, "didMoveToParent", vc, #""parent":null"#)
        if let d = deinitAfter { b.vc(at + 2 + fingerMs + d, "deinit", vc) }
    }

    /// A custom child 0xc of 0xa, added properly while 0xa is visible.
    func addChild(_ b: inout TraceBuilder, _ at: Double, _ vc: String = "0xc", parent: String = "0xa", didMove: Bool = true) {
        b.vc(at, "init", vc, #""cls":"ChildVC""#)
        b.vc(at, "addChild", vc, "\"parent\":\"\(parent)\"")
        b.vc(at, "willMoveToParent", vc, "\"parent\":\"\(parent)\"")
        b.vc(at + 1, "viewDidLoad", vc)
        b.vc(at + 1, "viewAttached", vc, "\"host\":\"\(parent)\"")
        b.vc(at + 1, "viewWillAppear", vc, #""animated":false,"isMovingToParent":true"#)
        b.vc(at + 2, "viewIsAppearing", vc, #""animated":false"#)
        b.vc(at + 5, "viewDidAppear", vc, #""animated":false,"isMovingToParent":true"#)
        if didMove { b.vc(at + 5, "didMoveToParent", vc, "\"parent\":\"\(parent)\"") }
    }

    func removeChild(_ b: inout TraceBuilder, _ at: Double, _ vc: String = "0xc", parent: String = "0xa",
                     willMove: Bool = true, detach: Bool = true, deinitAfter: Double? = 10) {
        if willMove { b.vc(at, "willMoveToParent", vc, #""parent":null"#) }
        b.vc(at, "viewWillDisappear", vc, #""animated":false,"isMovingFromParent":true"#)
        b.vc(at + 1, "viewDidDisappear", vc, #""animated":false,"isMovingFromParent":true"#)
        if detach { b.vc(at + 1, "viewDetached", vc, "\"host\":\"\(parent)\"") }
        b.vc(at + 1, "removeFromParent", vc, "\"parent\":\"\(parent)\"")
        b.vc(at + 1, "didMoveToParent", vc, #""parent":null"#)
        if let d = deinitAfter { b.vc(at + 1 + d, "deinit", vc) }
    }

    func end(_ b: inout TraceBuilder, _ at: Double) { b.add(at, "sessionEnd", #""reason":"stopped""#) }

    // MARK: The clean baseline

    func testOrdinaryNavigationHasNoFindings() {
        var b = app()
        push(&b, 1000, "0xb")
        pop(&b, 3000, "0xb")
        addChild(&b, 5000)
        removeChild(&b, 7000)
        end(&b, 20_000)
        XCTAssertEqual(b.findings(), [])
    }

    // MARK: Orphans

    func testLC101OrphanView() {
        var b = app()
        b.vc(1000, "init", "0xo", #""cls":"CarouselVC""#)
        b.vc(1001, "viewDidLoad", "0xo")
        b.vc(1002, "viewAttached", "0xo", #""host":"0xa""#)
        b.vc(3000, "viewDetached", "0xo", #""host":"0xa""#)
        b.vc(3010, "deinit", "0xo")
        end(&b, 10_000)
        XCTAssertEqual(b.findings(), ["LC101 0xo#17"])
        let f = b.model().findings[0]
        XCTAssertEqual(f.evidence, [19, 20], "attach, then detach")
        XCTAssertEqual(f.t, 1_002_000_000)
    }

    func testLC101NeverFlagsPresentedOrContainedViews() {
        var b = app()
        // A presented controller sits in a transition container (host null).
        b.vc(1000, "init", "0xp", #""cls":"SheetVC""#)
        b.vc(1000, "present", "0xa", #""presented":"0xp","style":"pageSheet","animated":true"#)
        b.vc(1001, "viewWillAppear", "0xp", #""animated":true"#)
        b.vc(1001, "viewAttached", "0xp", #""host":null"#)
        b.vc(1002, "viewIsAppearing", "0xp", #""animated":true"#)
        b.vc(1400, "viewDidAppear", "0xp", #""animated":true"#)
        // A child whose view sits in a grandchild's view: still inside its parent's hierarchy.
        addChild(&b, 2000, "0xg")
        addChild(&b, 2100, "0xh", parent: "0xa")
        b.vc(2200, "viewAttached", "0xh", #""host":"0xg""#)
        end(&b, 3000)
        XCTAssertEqual(b.findings(rules: ["LC101", "LC105"]), [])
    }

    func testLC105AttachBeforeAddIsInfoNotOrphan() {
        var b = app()
        b.vc(1000, "init", "0xc", #""cls":"BannerVC""#)
        b.vc(1000, "viewAttached", "0xc", #""host":"0xa""#)
        b.vc(1001, "addChild", "0xc", #""parent":"0xa""#)
        b.vc(1001, "willMoveToParent", "0xc", #""parent":"0xa""#)
        b.vc(1002, "didMoveToParent", "0xc", #""parent":"0xa""#)
        end(&b, 3000)
        XCTAssertEqual(b.findings(), ["LC105 0xc#17"])
        XCTAssertEqual(b.model().findings[0].severity, .info)
    }

    func testLC102MissingDidMove() {
        var b = app()
        addChild(&b, 1000, didMove: false)
        removeChild(&b, 3000)
        end(&b, 10_000)
        XCTAssertEqual(b.findings(), ["LC102 0xc#17"])
    }

    func testLC102NeverFlagsASessionEndingWithinOneSecond() {
        var b = app()
        b.vc(1000, "init", "0xc", #""cls":"ChildVC""#)
        b.vc(1000, "addChild", "0xc", #""parent":"0xa""#)
        b.vc(1000, "willMoveToParent", "0xc", #""parent":"0xa""#)
        b.add(1800, "mark", #""name":"crash""#)
        XCTAssertEqual(b.findings(), [])
        b.add(2100, "mark", #""name":"later""#)
        XCTAssertEqual(b.findings(), ["LC102 0xc#17"], "past one second it is flagged")
    }

    func testLC103MissingWillMove() {
        var b = app()
        addChild(&b, 1000)
        removeChild(&b, 3000, willMove: false)
        end(&b, 10_000)
        XCTAssertEqual(b.findings(), ["LC103 0xc#17"])
    }

    func testLC104ViewLeftBehind() {
        var b = app()
        addChild(&b, 1000)
        removeChild(&b, 3000, detach: false)
        end(&b, 10_000)
        XCTAssertEqual(b.findings(), ["LC104 0xc#17"])
    }

    func testLC104NeverFlagsAViewDetachedJustAfterRemoval() {
        var b = app()
        addChild(&b, 1000)
        removeChild(&b, 3000, detach: false, deinitAfter: nil)
        b.vc(3005, "viewDetached", "0xc", #""host":"0xa""#)
        b.vc(3010, "deinit", "0xc")
        end(&b, 10_000)
        XCTAssertEqual(b.findings(), [])
    }

    // MARK: Unbalanced

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

    // MARK: Leaks

    func testLC301LeakAfterPop() {
        var b = app()
        push(&b, 1000, "0xb")
        pop(&b, 3000, "0xb", deinitAfter: nil)
        end(&b, 9000)
        XCTAssertEqual(b.findings(), ["LC301 0xb#17"])
        let f = b.model().findings[0]
        XCTAssertEqual(f.detail["how"], "pop")
        XCTAssertEqual(f.t, 3_352_000_000, "the clock starts at viewDidDisappear, not at the pop call")
    }

    func testLC302WhenTheSessionEndsInsideGrace() {
        var b = app()
        push(&b, 1000, "0xb")
        pop(&b, 3000, "0xb", deinitAfter: nil)
        end(&b, 6000)
        XCTAssertEqual(b.findings(), ["LC302 0xb#17"])
        var tuned = RuleSettings()
        tuned.leakGrace = 2_000_000_000
        XCTAssertEqual(b.findings(tuned), ["LC301 0xb#17"], "--grace 2s makes it a leak")
    }

    func testLC301NeverFlagsDeinitInsideGraceButFlagsALateOne() {
        var b = app()
        push(&b, 1000, "0xb")
        pop(&b, 3000, "0xb", deinitAfter: 3400)
        end(&b, 20_000)
        XCTAssertEqual(b.findings(), [])
        var late = app()
        push(&late, 1000, "0xb")
        pop(&late, 3000, "0xb", deinitAfter: 7000)
        end(&late, 20_000)
        XCTAssertEqual(late.findings(), ["LC301 0xb#17"])
        XCTAssertTrue(late.model().findings[0].message.contains("deallocated only 7.00 s after its pop"))
    }

    func testLC301NeverFlagsAControllerShownAgain() {
        var b = app()
        push(&b, 1000, "0xb")
        pop(&b, 3000, "0xb", deinitAfter: nil)
        // Kept in a cache and pushed again 20 s later: the viewWillAppear cancels the release.
        b.vc(23_000, "push", "0xn", #""child":"0xb","animated":true,"interactive":false"#)
        b.vc(23_000, "addChild", "0xb", #""parent":"0xn""#)
        b.vc(23_001, "viewWillDisappear", "0xa", #""animated":true"#)
        b.vc(23_001, "viewWillAppear", "0xb", #""animated":true,"isMovingToParent":true"#)
        b.vc(23_002, "viewIsAppearing", "0xb", #""animated":true"#)
        b.vc(23_400, "viewDidDisappear", "0xa", #""animated":true"#)
        b.vc(23_400, "viewDidAppear", "0xb", #""animated":true,"isMovingToParent":true"#)
        b.vc(23_400, "didMoveToParent", "0xb", #""parent":"0xn""#)
        end(&b, 40_000)
        XCTAssertEqual(b.findings(), [])
    }

    func testLC301GraceClockSkipsBackgroundTime() {
        var b = app()
        push(&b, 1000, "0xb")
        pop(&b, 3000, "0xb", deinitAfter: nil)
        b.add(3500, "sceneDidEnterBackground", #""scene":"s1""#)
        b.add(100_000, "sceneWillEnterForeground", #""scene":"s1""#)
        b.vc(100_100, "deinit", "0xb")
        end(&b, 120_000)
        XCTAssertEqual(b.findings(), [], "0.15 s of foreground time passed before the deinit")
    }

    func testLC301DismissedStackIsReleasedWithItsChildren() {
        var b = app()
        b.vc(1000, "init", "0xm", #""cls":"UINavigationController""#)
        b.vc(1000, "init", "0xr", #""cls":"LoginVC""#)
        b.vc(1000, "addChild", "0xr", #""parent":"0xm""#)
        b.vc(1000, "didMoveToParent", "0xr", #""parent":"0xm""#)
        b.vc(1000, "init", "0xt", #""cls":"TwoFactorVC""#)
        b.vc(1000, "addChild", "0xt", #""parent":"0xm""#)
        b.vc(1000, "didMoveToParent", "0xt", #""parent":"0xm""#)
        b.vc(1001, "present", "0xa", #""presented":"0xm","style":"fullScreen","animated":true"#)
        for vc in ["0xm", "0xt"] { b.vc(1002, "viewWillAppear", vc, #""animated":true"#) }
        for vc in ["0xm", "0xt"] { b.vc(1003, "viewIsAppearing", vc, #""animated":true"#) }
        for vc in ["0xm", "0xt"] { b.vc(1400, "viewDidAppear", vc, #""animated":true"#) }
        b.vc(5000, "dismiss", "0xm", #""animated":true"#)
        b.vc(5000, "viewWillDisappear", "0xm", #""animated":true,"isBeingDismissed":true"#)
        b.vc(5000, "viewWillDisappear", "0xt", #""animated":true"#)
        b.vc(5300, "viewDidDisappear", "0xm", #""animated":true,"isBeingDismissed":true"#)
        b.vc(5300, "viewDidDisappear", "0xt", #""animated":true"#)
        b.vc(5330, "deinit", "0xt")
        b.vc(5330, "deinit", "0xm")
        end(&b, 20_000)
        // The hidden root under the top one was released with the stack and never freed.
        XCTAssertEqual(b.findings(), ["LC301 0xr#18"])
        XCTAssertEqual(b.model().findings[0].detail["how"], "ancestor")
    }

    /// Findings name other instances (a container, an ancestor, the owner of events after its
    /// deinit) by class even after those ended and their ids were initialised again; in
    /// batches (`TraceBuilder.model`) those instances have left memory by then.
    func testFindingsNameInstancesWhoseIdsWereReused() {
        var b = app()
        b.vc(1000, "init", "0xm", #""cls":"UINavigationController""#)
        b.vc(1000, "init", "0xr", #""cls":"LoginVC""#)
        b.vc(1000, "addChild", "0xr", #""parent":"0xm""#)  // no didMove: LC102 names 0xm's class
        b.vc(1001, "present", "0xa", #""presented":"0xm","style":"fullScreen","animated":true"#)
        b.vc(1002, "viewWillAppear", "0xm", #""animated":true"#)
        b.vc(1003, "viewIsAppearing", "0xm", #""animated":true"#)
        b.vc(1400, "viewDidAppear", "0xm", #""animated":true"#)
        b.vc(5000, "dismiss", "0xm", #""animated":true"#)
        b.vc(5000, "viewWillDisappear", "0xm", #""animated":true,"isBeingDismissed":true"#)
        b.vc(5300, "viewDidDisappear", "0xm", #""animated":true,"isBeingDismissed":true"#)
        b.vc(5330, "deinit", "0xm")
        b.vc(5350, "viewAttached", "0xr", #""host":"0xm""#)  // names the host's class
        b.vc(5400, "viewWillAppear", "0xm")  // after its deinit: LC205, counted
        b.vc(5401, "viewDidAppear", "0xm")
        b.vc(6000, "init", "0xm", #""cls":"SettingsVC""#)  // the id is reused
        b.vc(6000, "deinit", "0xm")
        end(&b, 20_000)
        let model = b.model()
        let findings = model.findings
        XCTAssertEqual(b.findings(), ["LC102 0xr#18", "LC205 0xm#17", "LC301 0xr#18"])
        XCTAssertEqual(model.attachments.last?.hostClass, "UINavigationController")
        XCTAssertTrue(findings.contains { $0.rule == "LC301" && $0.message.contains("its container UINavigationController was released") },
                      findings.map(\.message).joined(separator: "\n"))
        XCTAssertTrue(findings.contains { $0.rule == "LC102" && $0.message.contains("added to UINavigationController (0xm)") })
        XCTAssertTrue(findings.contains { $0.rule == "LC205" && $0.message.contains("UINavigationController got viewWillAppear after its deinit (and 1 more events)") })
    }

    /// A presentation names its presenter on the presented instance, whether it was logged
    /// before or after that instance's init; a later instance of a reused id has none.
    func testAPresenterBelongsToOneInstance() {
        var b = app()
        b.vc(1000, "present", "0xa", #""presented":"0xp","style":"pageSheet","animated":true"#)
        b.vc(1000, "init", "0xp", #""cls":"SheetVC""#)
        b.vc(2000, "init", "0xq", #""cls":"OtherVC""#)
        b.vc(2001, "present", "0xa", #""presented":"0xq","style":"pageSheet","animated":true"#)
        b.vc(3000, "deinit", "0xp")
        b.vc(3000, "deinit", "0xq")
        b.vc(4000, "init", "0xp", #""cls":"SheetVC""#)
        b.vc(4000, "init", "0xq", #""cls":"OtherVC""#)
        end(&b, 10_000)
        let model = b.model()
        XCTAssertEqual(model.instances.filter { $0.key.vc == "0xp" }.map(\.presenter), ["0xa", nil])
        XCTAssertEqual(model.instances.filter { $0.key.vc == "0xq" }.map(\.presenter), ["0xa", nil])
    }

    func testReusedAddressStartsANewInstance() {
        var b = app()
        addChild(&b, 1000)
        removeChild(&b, 2000)
        addChild(&b, 3000)  // same id 0xc, new init
        // And an id init'ed again with no deinit recorded: the old object must be gone.
        b.vc(4000, "init", "0xc", #""cls":"ChildVC""#)
        end(&b, 20_000)
        let model = b.model()
        XCTAssertEqual(model.instances.filter { $0.key.vc == "0xc" }.map(\.key.since), [17, 33, 42])
        XCTAssertEqual(model.instance(InstanceKey(vc: "0xc", since: 33))?.end, .reused)
        XCTAssertEqual(b.findings(rules: ["LC201", "LC301", "LC205", "LC902"]), [])
    }

    func testLC303InstanceGrowthOnlyWithALimit() {
        var b = app()
        for i in 0..<5 { b.vc(1000 + Double(i), "init", "0xi\(i)", #""cls":"CellVC""#) }
        b.vc(1010, "deinit", "0xi0")
        end(&b, 2000)
        XCTAssertEqual(b.findings(), [])
        var settings = RuleSettings()
        settings.maxLive = ["CellVC": 3]
        XCTAssertEqual(b.findings(settings), ["LC303 0xi3#20"])
        XCTAssertTrue(b.model(settings).findings[0].message.hasPrefix("5 live CellVC instances at once (limit 3)"))
    }

    // MARK: Gaps

    func testLC401SlowAppearance() {
        var b = app()
        push(&b, 1000, "0xb", gap: 1500)
        pop(&b, 5000, "0xb")
        end(&b, 20_000)
        XCTAssertEqual(b.findings(), ["LC401 0xb#17"])
        var tuned = RuleSettings()
        tuned.gapAnimated = 2_000_000_000
        XCTAssertEqual(b.findings(tuned), [])
    }

    func testLC401PlainThresholdIs250ms() {
        var b = app()
        b.vc(1000, "viewWillDisappear", "0xa", #""animated":false"#)
        b.vc(1001, "viewDidDisappear", "0xa", #""animated":false"#)
        b.vc(1500, "viewWillAppear", "0xa", #""animated":false"#)
        b.vc(1501, "viewIsAppearing", "0xa", #""animated":false"#)
        b.vc(1801, "viewDidAppear", "0xa", #""animated":false"#)
        end(&b, 2000)
        XCTAssertEqual(b.findings(), ["LC401 0xa#3"])
    }

    func testLC401NeverFlagsAnInteractivePopOrABackgroundedAppearance() {
        var b = app()
        push(&b, 1000, "0xb")
        pop(&b, 3000, "0xb", fingerMs: 4000, interactive: true)
        push(&b, 10_000, "0xd", over: "0xa", gap: 400)
        b.vc(12_000, "pop", "0xn", #""child":"0xd","animated":true,"interactive":false"#)
        b.vc(12_000, "viewWillDisappear", "0xd", #""animated":true,"isMovingFromParent":true"#)
        b.vc(12_001, "viewWillAppear", "0xa", #""animated":true"#)
        b.vc(12_002, "viewIsAppearing", "0xa", #""animated":true"#)
        b.add(12_010, "sceneDidEnterBackground", #""scene":"s1""#)
        b.add(40_000, "sceneWillEnterForeground", #""scene":"s1""#)
        b.vc(40_100, "viewDidDisappear", "0xd", #""animated":true,"isMovingFromParent":true"#)
        b.vc(40_100, "viewDidAppear", "0xa", #""animated":true"#)
        b.vc(40_120, "deinit", "0xd")
        end(&b, 50_000)
        XCTAssertEqual(b.findings(), [])
    }

    func testLC402MissingIsAppearing() {
        var b = app()
        push(&b, 1000, "0xb", isAppearing: false)
        pop(&b, 3000, "0xb")
        end(&b, 10_000)
        XCTAssertEqual(b.findings(), ["LC402 0xb#17"])
        var old = TraceBuilder(sid: "S1", sdk: "16.4", os: "17.0")
        old.vc(1, "init", "0xa", #""cls":"A""#)
        old.vc(2, "viewWillAppear", "0xa")
        old.vc(3, "viewDidAppear", "0xa")
        XCTAssertEqual(old.findings(), [], "an app built with the iOS 16 SDK gets no viewIsAppearing")
    }

    // MARK: Scene and quality

    func testLC501AndLC502() {
        var b = TraceBuilder(sid: "S2", sdk: "27.0", os: "27.1", record: false)
        b.add(0, "session", #""wall":"2026-11-02T10:15:03.120Z","app":"a","sdk":"27.0","osVersion":"27.1","os":"iOS""#)
        b.add(1, "appDidFinishLaunching")
        b.add(2, "appDidBecomeActive")
        XCTAssertEqual(b.findings(), ["LC501 -#-", "LC502 -#-"])
        var legacy = TraceBuilder(sid: "S3", sdk: "25.0", os: "26.0", record: false)
        legacy.add(0, "session", #""wall":"2026-11-02T10:15:03.120Z","app":"a","sdk":"25.0""#)
        legacy.add(1, "appDidFinishLaunching")
        XCTAssertEqual(legacy.findings(), [], "deprecated only from SDK 26")
    }

    func testQualityRulesAndLowConfidence() {
        var b = app()
        b.seq += 3  // three lost events
        b.vc(1000, "viewWillAppear", "0xu")   // an id with no init
        b.add(900, "mark", #""name":"clock went back""#)
        push(&b, 2000, "0xb")
        pop(&b, 4000, "0xb", deinitAfter: nil)
        end(&b, 12_000)
        XCTAssertEqual(b.findings(), ["LC203 0xu#20", "LC301 0xb#22", "LC901 -#-", "LC902 0xu#20", "LC903 -#-"])
        let model = b.model()
        XCTAssertTrue(model.findings.allSatisfy { $0.confidence == "low" })
        XCTAssertTrue(model.findings.contains { $0.rule == "LC901" && $0.message.hasPrefix("3 events lost in 1 hole: seq 17–19") })
    }
}
