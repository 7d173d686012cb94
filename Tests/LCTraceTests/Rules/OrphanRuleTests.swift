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

/// The orphans family (LC101–LC105): rule triplets (see `RuleTestCase`).
final class OrphanRuleTests: RuleTestCase {
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

    // MARK: 1.1: absent keys read as null

    /// A Codable recorder omits nil values: `willMove(toParent: nil)` arrives as
    /// `{"ev":"willMoveToParent","vc":"0xc"}` and `didMove(toParent: nil)` likewise. The
    /// removal is a proper one: no LC103, no lost or rejected events, full confidence.
    func testAbsentParentIsNilAndTheRemovalIsProper() {
        var b = app()
        addChild(&b, 1000)
        b.vc(2000, "willMoveToParent", "0xc")
        b.vc(2000, "viewWillDisappear", "0xc", #""isMovingFromParent":true"#)  // absent animated reads as false
        b.vc(2001, "viewDidDisappear", "0xc", #""isMovingFromParent":true"#)
        b.vc(2001, "viewDetached", "0xc")  // absent host: null
        b.vc(2001, "removeFromParent", "0xc")  // absent parent: the model knows it
        b.vc(2001, "didMoveToParent", "0xc")
        b.vc(2011, "deinit", "0xc")
        end(&b, 20_000)
        XCTAssertEqual(b.findings(), [])
        let model = b.model()
        XCTAssertEqual(model.stats.lostEvents, 0)
        XCTAssertEqual(model.edges.last?.willRemoveSeq, 26, "the absent parent is willMove(toParent: nil)")
        XCTAssertEqual(model.edges.last?.didRemoveSeq, 31)

        // Look-alike that is a real bug: no willMove at all before the removal.
        var bug = app()
        addChild(&bug, 1000)
        bug.vc(2001, "removeFromParent", "0xc")
        bug.vc(2011, "deinit", "0xc")
        end(&bug, 20_000)
        XCTAssertEqual(bug.findings(rules: ["LC103"]), ["LC103 0xc#17"])
    }

    // MARK: 1.1: over-current-context presentations are never orphans

    /// `.overCurrentContext` puts the presented view inside the context controller's view, so
    /// its `viewAttached` names that controller as host, though there is no addChild.
    func testOverCurrentContextPresentationIsNeverAnOrphan() {
        var b = app()
        b.vc(1000, "init", "0xo", #""cls":"FilterOverlayVC""#)
        b.vc(1000, "present", "0xa", #""presented":"0xo","style":"overCurrentContext","animated":true"#)
        b.vc(1001, "viewDidLoad", "0xo")
        b.vc(1001, "viewWillAppear", "0xo", #""animated":true,"isBeingPresented":true"#)
        b.vc(1001, "viewAttached", "0xo", #""host":"0xa""#)
        b.vc(1002, "viewIsAppearing", "0xo", #""animated":true"#)
        b.vc(1400, "viewDidAppear", "0xo", #""animated":true,"isBeingPresented":true"#)
        b.vc(3000, "dismiss", "0xo", #""animated":true"#)
        b.vc(3000, "viewWillDisappear", "0xo", #""animated":true,"isBeingDismissed":true"#)
        b.vc(3300, "viewDidDisappear", "0xo", #""animated":true,"isBeingDismissed":true"#)
        b.vc(3300, "viewDetached", "0xo", #""host":"0xa""#)
        b.vc(3310, "deinit", "0xo")
        end(&b, 20_000)
        XCTAssertEqual(b.findings(), [])

        // The attach logged before the present call: still a presentation, still no orphan.
        var early = app()
        early.vc(1000, "init", "0xo", #""cls":"FilterOverlayVC""#)
        early.vc(1001, "viewAttached", "0xo", #""host":"0xa""#)
        early.vc(1001, "present", "0xa", #""presented":"0xo","style":"overCurrentContext","animated":true"#)
        early.vc(1001, "viewWillAppear", "0xo", #""animated":true"#)
        early.vc(1002, "viewIsAppearing", "0xo", #""animated":true"#)
        early.vc(1400, "viewDidAppear", "0xo", #""animated":true"#)
        end(&early, 20_000)
        XCTAssertEqual(early.findings(rules: ["LC101", "LC105"]), [])

        // Look-alike that is an orphan: the same view added with addSubview, never presented.
        var orphan = app()
        orphan.vc(1000, "init", "0xo", #""cls":"FilterOverlayVC""#)
        orphan.vc(1001, "viewAttached", "0xo", #""host":"0xa""#)
        end(&orphan, 20_000)
        XCTAssertEqual(orphan.findings(rules: ["LC101"]), ["LC101 0xo#17"])
    }
}

// MARK: 1.2: one clock, holes, messages

extension OrphanRuleTests {
    /// (1.2, item 5) LC102's 1 s is foreground time: a push frozen by suspension (the app went
    /// to the background right after addChild and the session ended soon after its return) is
    /// not "missing didMove".
    func testMissingDidMoveCountsForegroundTime() {
        var b = app()
        b.vc(1000, "init", "0xc", #""cls":"ChildVC""#)
        b.vc(1000, "addChild", "0xc", #""parent":"0xa""#)
        b.add(1010, "sceneDidEnterBackground", #""scene":"s1""#)
        b.add(61_000, "sceneWillEnterForeground", #""scene":"s1""#)
        end(&b, 61_500)
        XCTAssertEqual(b.flagged(rules: ["LC102"]), [])
        // Look-alike: the same with the app in the foreground is flagged.
        var c = app()
        c.vc(1000, "init", "0xc", #""cls":"ChildVC""#)
        c.vc(1000, "addChild", "0xc", #""parent":"0xa""#)
        end(&c, 61_500)
        XCTAssertEqual(c.flagged(rules: ["LC102"]), ["LC102 0xc"])
    }

    /// (1.2, item 9) A containment step whose missing counterpart may lie in a seq hole is
    /// not judged: a removal without willMove, a child without didMove, a view without
    /// addChild, when lost events lie between them.
    func testAContainmentStepAcrossAHoleIsNotJudged() {
        var b = app()
        b.vc(1000, "init", "0xc", #""cls":"ChildVC""#)
        b.vc(1000, "addChild", "0xc", #""parent":"0xa""#)
        b.seq += 2   // willMoveToParent, didMoveToParent: lost
        b.vc(2000, "removeFromParent", "0xc", #""parent":"0xa""#)
        b.vc(2010, "deinit", "0xc")
        b.vc(3000, "init", "0xo", #""cls":"OverlayVC""#)
        b.seq += 1   // addChild: lost
        b.vc(3001, "viewAttached", "0xo", #""host":"0xa""#)
        end(&b, 30_000)
        XCTAssertEqual(b.flagged(rules: ["LC101", "LC102", "LC103", "LC104", "LC105"]), [])
        // Look-alike: without the holes every one is flagged.
        var c = app()
        c.vc(1000, "init", "0xc", #""cls":"ChildVC""#)
        c.vc(1000, "addChild", "0xc", #""parent":"0xa""#)
        c.vc(2000, "removeFromParent", "0xc", #""parent":"0xa""#)
        c.vc(2010, "deinit", "0xc")
        c.vc(3000, "init", "0xo", #""cls":"OverlayVC""#)
        c.vc(3001, "viewAttached", "0xo", #""host":"0xa""#)
        end(&c, 30_000)
        XCTAssertEqual(c.flagged(rules: ["LC101", "LC102", "LC103"]), ["LC101 0xo", "LC102 0xc", "LC103 0xc"])
    }

    /// (1.2) LC101 says what is wrong: a view in H's hierarchy while its controller is the
    /// child of another container is not "without addChild".
    func testOrphanViewOfAChildOfAnotherContainerSaysSo() {
        var b = app()
        push(&b, 1000, "0xb")
        addChild(&b, 2000, "0xc", parent: "0xb")
        b.vc(2100, "viewDetached", "0xc", #""host":"0xb""#)
        b.vc(2101, "viewAttached", "0xc", #""host":"0xa""#)
        end(&b, 30_000)
        let message = finding(b.model(), "LC101", "0xc")?.message ?? ""
        XCTAssertTrue(message.contains("child of DetailVC"), message)
        XCTAssertFalse(message.contains("without addChild"), message)
    }
}
