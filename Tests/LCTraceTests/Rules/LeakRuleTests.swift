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

/// The leaks family (LC301–LC303): rule triplets (see `RuleTestCase`).
final class LeakRuleTests: RuleTestCase {
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

    // MARK: 1.1: presentation chains

    /// A presents X full screen, X presents Y (sheet), Y presents Z (sheet). `dismiss` of X
    /// removes all three; only the top one (Z) gets the animated disappearance, X and Y get
    /// no callbacks (UIKit's dismiss(animated:) documentation). Z deinits, X and Y never do.
    /// (A appears again only when X, which covered it full screen, goes.)
    func chain(dismissing root: String = "0xx", deinit deinits: [String] = ["0xz"]) -> TraceBuilder {
        var b = app()
        present(&b, 1000, "0xx", by: "0xa", cls: "ComposeVC")
        present(&b, 2000, "0xy", by: "0xx", cls: "PickerVC", style: "pageSheet")
        present(&b, 3000, "0xz", by: "0xy", cls: "ConfirmVC", style: "pageSheet")
        b.vc(5000, "dismiss", root, #""animated":true"#)
        let revealsA = root != "0xy"
        b.vc(5000, "viewWillDisappear", "0xz", #""animated":true,"isBeingDismissed":true"#)
        if revealsA { b.vc(5001, "viewWillAppear", "0xa", #""animated":true"#) }
        if revealsA { b.vc(5002, "viewIsAppearing", "0xa", #""animated":true"#) }
        b.vc(5400, "viewDidDisappear", "0xz", #""animated":true,"isBeingDismissed":true"#)
        if revealsA { b.vc(5400, "viewDidAppear", "0xa", #""animated":true"#) }
        for vc in deinits { b.vc(5420, "deinit", vc) }
        end(&b, 30_000)
        return b
    }

    func testLC301PresentationChainReleasesTheControllersWithoutCallbacks() {
        let b = chain()
        XCTAssertEqual(b.findings(), ["LC301 0xx#17", "LC301 0xy#26"],
                       "X and Y are released when the dismissal ends, though they got no callbacks")
        let model = b.model()
        let x = finding(model, "LC301", "0xx"), y = finding(model, "LC301", "0xy")
        XCTAssertEqual(x?.detail["how"], "dismiss")
        XCTAssertEqual(y?.detail["how"], "chain")
        XCTAssertEqual(y?.detail["held_by"], "0xx", "names the controller whose dismissal took it along")
        XCTAssertTrue(y?.message.contains("the dismissal of ComposeVC took it along") ?? false, y?.message ?? "")
        XCTAssertEqual(y?.t, 5_400_000_000, "the clock starts when the dismissal ends")
        XCTAssertTrue(y?.evidence.contains(40) ?? false, "the dismiss call is evidence")
    }

    func testLC301PresentationChainFreedInTimeIsQuiet() {
        XCTAssertEqual(chain(deinit: ["0xz", "0xy", "0xx"]).findings(), [],
                       "the whole chain deallocated within grace; X and Y got no disappearance, legally (no LC201)")
    }

    /// `dismiss` of Y (the middle): Y and Z go, X stays on screen and is no leak.
    func testLC301DismissingTheMiddleOfAChainLeavesWhatIsBelow() {
        let b = chain(dismissing: "0xy", deinit: ["0xz"])
        XCTAssertEqual(b.findings(rules: ["LC301", "LC302"]), ["LC301 0xy#26"])
        XCTAssertEqual(finding(b.model(), "LC301", "0xy")?.detail["how"], "dismiss")
    }

    /// `dismiss` called on a controller that presents but was never presented (a window's
    /// root): UIKit dismisses what it presented, not the root itself.
    func testDismissOnARootReleasesOnlyWhatItPresented() {
        let b = chain(dismissing: "0xa", deinit: ["0xz", "0xy"])
        XCTAssertEqual(b.findings(rules: ["LC301", "LC302"]), ["LC301 0xx#17"])
        let x = finding(b.model(), "LC301", "0xx")
        XCTAssertEqual(x?.detail["how"], "chain")
        XCTAssertEqual(x?.detail["held_by"], "0xa")
    }

    /// A swipe on the top sheet of a chain, let go (cancelled), then that sheet dismissed on
    /// its own: the first dismissal never ended, so it takes nothing along later; X stays.
    func testACancelledChainDismissalTakesNothingAlongLater() {
        var b = app()
        present(&b, 1000, "0xx", by: "0xa", cls: "ComposeVC")
        present(&b, 2000, "0xy", by: "0xx", cls: "PickerVC", style: "pageSheet")
        b.vc(3000, "dismiss", "0xx", #""animated":true,"interactive":true"#)
        b.vc(3000, "viewWillDisappear", "0xy", #""animated":true,"isBeingDismissed":true"#)
        b.vc(3500, "viewWillAppear", "0xy", #""animated":true"#)
        b.vc(3600, "viewDidAppear", "0xy", #""animated":true"#)
        b.vc(6000, "dismiss", "0xy", #""animated":true"#)
        b.vc(6000, "viewWillDisappear", "0xy", #""animated":true,"isBeingDismissed":true"#)
        b.vc(6300, "viewDidDisappear", "0xy", #""animated":true,"isBeingDismissed":true"#)
        b.vc(6320, "deinit", "0xy")
        end(&b, 30_000)
        XCTAssertEqual(b.findings(), [], "X is still on screen")
    }

    // MARK: 1.1: adoption cancels a release

    /// A split view collapsing: its secondary navigation stack's top controller D is removed
    /// (`removeFromParent`) and added to the primary navigation controller. It moved; it did
    /// not leak.
    func testAddChildToANewParentCancelsTheRelease() {
        func collapse(adopted: Bool) -> TraceBuilder {
            var b = app()
            b.vc(1000, "init", "0xs", #""cls":"UINavigationController""#)
            b.vc(1000, "init", "0xd", #""cls":"DetailVC""#)
            b.vc(1000, "addChild", "0xd", #""parent":"0xs""#)
            b.vc(1000, "didMoveToParent", "0xd", #""parent":"0xs""#)
            b.vc(3000, "willMoveToParent", "0xd", #""parent":null"#)
            b.vc(3000, "removeFromParent", "0xd", #""parent":"0xs""#)
            b.vc(3000, "didMoveToParent", "0xd", #""parent":null"#)
            if adopted {
                b.vc(3001, "addChild", "0xd", #""parent":"0xn""#)
                b.vc(3001, "didMoveToParent", "0xd", #""parent":"0xn""#)
            }
            end(&b, 30_000)
            return b
        }
        XCTAssertEqual(collapse(adopted: true).findings(rules: ["LC301", "LC302"]), [])
        XCTAssertNil(collapse(adopted: true).model().instance(InstanceKey(vc: "0xd", since: 18))?.release)
        // Look-alike that is a leak: removed and never adopted again.
        XCTAssertEqual(collapse(adopted: false).findings(rules: ["LC301"]), ["LC301 0xd#18"])
    }

    /// A removed child presented later (a controller reused as a modal) is in use again; the
    /// next release starts the clock again. The `present` itself cancels the release, before
    /// any appearance callback (here none is recorded after it).
    func testPresentNamingAReleasedControllerCancelsItsRelease() {
        var b = app()
        addChild(&b, 1000)
        removeChild(&b, 2000, deinitAfter: nil)
        b.vc(2500, "present", "0xa", #""presented":"0xc","style":"formSheet","animated":true"#)
        end(&b, 30_000)
        XCTAssertEqual(b.findings(rules: ["LC301", "LC302"]), [])
        XCTAssertNil(b.model().instance(InstanceKey(vc: "0xc", since: 17))?.release)

        // Dismissed later and never freed: a leak from that dismissal, not from the removal.
        var again = app()
        addChild(&again, 1000)
        removeChild(&again, 2000, deinitAfter: nil)
        present(&again, 4000, "0xc", by: "0xa", cls: "ChildVC", initialise: false)
        again.vc(6000, "dismiss", "0xc", #""animated":true"#)
        again.vc(6000, "viewWillDisappear", "0xc", #""animated":true,"isBeingDismissed":true"#)
        again.vc(6300, "viewDidDisappear", "0xc", #""animated":true,"isBeingDismissed":true"#)
        end(&again, 30_000)
        XCTAssertEqual(again.findings(rules: ["LC301"]), ["LC301 0xc#17"])
        XCTAssertEqual(finding(again.model(), "LC301", "0xc")?.detail["how"], "dismiss")
        XCTAssertEqual(finding(again.model(), "LC301", "0xc")?.t, 6_300_000_000)
    }

    // MARK: 1.1: the leak clock and address reuse

    /// A session that ends in the background before release + grace of foreground time gives
    /// LC302, not LC301: the app was suspended (or killed there) and could run no deinit.
    func testLC302WhenTheSessionIsKilledInTheBackground() {
        var b = app()
        push(&b, 1000, "0xb")
        pop(&b, 3000, "0xb", deinitAfter: nil)
        b.add(4000, "sceneWillResignActive", #""scene":"s1""#)
        b.add(4001, "sceneDidEnterBackground", #""scene":"s1""#)
        b.add(600_000, "sessionEnd", #""reason":"background-kill""#)
        XCTAssertEqual(b.findings(), ["LC302 0xb#17"], "10 minutes in the background count for nothing")
    }

    /// The grace period counts foreground time only: a release followed by backgrounding and
    /// a deinit soon after returning is in time.
    func testLeakClockCountsForegroundTimeOnly() {
        var b = app()
        push(&b, 1000, "0xb")
        pop(&b, 3000, "0xb", deinitAfter: nil)
        b.add(4000, "appDidEnterBackground")
        b.add(500_000, "appWillEnterForeground")
        b.vc(503_000, "deinit", "0xb")
        end(&b, 520_000)
        XCTAssertEqual(b.findings(rules: ["LC301", "LC302"]), [], "4.0 s of foreground time passed, inside the 5 s grace")
        var late = app()
        push(&late, 1000, "0xb")
        pop(&late, 3000, "0xb", deinitAfter: nil)
        late.add(4000, "appDidEnterBackground")
        late.add(500_000, "appWillEnterForeground")
        late.vc(505_000, "deinit", "0xb")
        end(&late, 520_000)
        XCTAssertEqual(late.findings(rules: ["LC301"]), ["LC301 0xb#17"], "5.6 s of foreground time: late")
    }

    /// An app extension has no scene or app-delegate events: its host going to the background
    /// and back, which lctrace's recorder writes as marks, stops the foreground clock too.
    func testAnExtensionHostsBackgroundTimeDoesNotCount() {
        func session(_ marks: Bool, deinitAt: Double) -> [String] {
            var b = app()
            push(&b, 1000, "0xb")
            pop(&b, 3000, "0xb", deinitAfter: nil)
            if marks {
                b.add(4000, "mark", #""name":"extensionHostWillResignActive""#)
                b.add(4100, "mark", #""name":"extensionHostDidEnterBackground""#)
                b.add(124_000, "mark", #""name":"extensionHostWillEnterForeground""#)
                b.add(124_100, "mark", #""name":"extensionHostDidBecomeActive""#)
            }
            b.vc(deinitAt, "deinit", "0xb")
            end(&b, 150_000)
            return b.findings(rules: ["LC301", "LC302"])
        }
        XCTAssertEqual(session(true, deinitAt: 125_000), [], "1.9 s of foreground time: inside the grace")
        XCTAssertEqual(session(false, deinitAt: 125_000), ["LC301 0xb#17"], "without the marks, 122 s")
        XCTAssertEqual(session(true, deinitAt: 129_000), ["LC301 0xb#17"], "5.8 s of foreground time: late")
    }

    /// Background periods that overlap (the clock went backwards between them) count once, so
    /// the foreground clock never goes below zero nor overflows, even at the ends of `t`.
    func testOverlappingBackgroundPeriodsCountOnce() {
        var b = app()
        push(&b, 1000, "0xb")
        pop(&b, 3000, "0xb", deinitAfter: nil)
        for _ in 0..<3 {
            b.add(4000, "sceneDidEnterBackground", #""scene":"s1""#)
            b.add(9000, "sceneWillEnterForeground", #""scene":"s1""#)
        }
        end(&b, 20_000)
        let model = b.model()
        XCTAssertEqual(model.backgroundIntervals.count, 3)
        XCTAssertEqual(model.foregroundTime(from: 3_352_000_000, to: 20_000_000_000), 16_648_000_000 - 5_000_000_000,
                       "5 s of background, counted once")
        XCTAssertEqual(b.findings(rules: ["LC301"]), ["LC301 0xb#17"])
        model.backgroundIntervals = Array(repeating: (0, Int64.max), count: 4)
        XCTAssertEqual(model.foregroundTime(from: 0, to: Int64.max), 0, "no overflow at the ends of t")
        model.backgroundIntervals = [(10, 20), (5, 15), (30, 40)]
        XCTAssertEqual(model.foregroundTime(from: 0, to: 50), 50 - 15 - 10)
    }

    /// An `init` on the id of a released, live instance proves it was deallocated (UIKit reused
    /// the address): never a leak, though its deinit was not recorded.
    func testAddressReuseProvesDeallocation() {
        var b = app()
        push(&b, 1000, "0xb")
        pop(&b, 3000, "0xb", deinitAfter: nil)
        b.vc(3500, "init", "0xb", #""cls":"OtherVC""#)
        end(&b, 30_000)
        XCTAssertEqual(b.findings(rules: ["LC301", "LC302"]), [])
        XCTAssertEqual(b.model().instance(InstanceKey(vc: "0xb", since: 17))?.end, .reused)
    }
}

// MARK: 1.2: chains that children present, controllers UIKit owns, window roots, one clock

extension LeakRuleTests {
    /// (1.2, bug 2) A presented navigation controller AN (root A1): A1 presents sheet BN
    /// (root B1), B1 presents LB, then AN is dismissed. UIKit makes the container the
    /// presenter when a child calls `present`, so BN, B1 and LB go with AN's dismissal: the
    /// two that are never freed are leaks.
    func testAChainPresentedByAChildIsReleasedWithItsContainer() {
        var b = app()
        b.vc(1000, "init", "0xan", #""cls":"UINavigationController""#)
        b.vc(1000, "init", "0xa1", #""cls":"AccountVC""#)
        b.vc(1000, "addChild", "0xa1", #""parent":"0xan""#)
        b.vc(1000, "didMoveToParent", "0xa1", #""parent":"0xan""#)
        present(&b, 1000, "0xan", by: "0xa", cls: "UINavigationController", initialise: false)
        b.vc(1001, "viewWillAppear", "0xa1", #""animated":true"#)
        b.vc(1402, "viewDidAppear", "0xa1", #""animated":true"#)
        b.vc(2000, "init", "0xbn", #""cls":"UINavigationController""#)
        b.vc(2000, "init", "0xb1", #""cls":"BillingVC""#)
        b.vc(2000, "addChild", "0xb1", #""parent":"0xbn""#)
        b.vc(2000, "didMoveToParent", "0xb1", #""parent":"0xbn""#)
        present(&b, 2000, "0xbn", by: "0xa1", cls: "UINavigationController", style: "pageSheet", initialise: false)
        b.vc(2001, "viewWillAppear", "0xb1", #""animated":true"#)
        b.vc(2402, "viewDidAppear", "0xb1", #""animated":true"#)
        present(&b, 3000, "0xlb", by: "0xb1", cls: "LoadingVC", style: "pageSheet")
        b.vc(5000, "dismiss", "0xan", #""animated":true"#)
        b.vc(5000, "viewWillDisappear", "0xlb", #""animated":true,"isBeingDismissed":true"#)
        b.vc(5001, "viewWillAppear", "0xa", #""animated":true"#)
        b.vc(5400, "viewDidDisappear", "0xlb", #""animated":true,"isBeingDismissed":true"#)
        b.vc(5400, "viewDidAppear", "0xa", #""animated":true"#)
        for vc in ["0xlb", "0xa1", "0xan"] { b.vc(5420, "deinit", vc) }
        end(&b, 30_000)
        XCTAssertEqual(b.flagged(rules: ["LC301", "LC302"]), ["LC301 0xb1", "LC301 0xbn"])
        let bn = finding(b.model(), "LC301", "0xbn")
        XCTAssertEqual(bn?.detail["how"], "chain")
        XCTAssertEqual(bn?.detail["held_by"], "0xan", "the dismissed container took it along")
    }

    /// (1.2, item 5) One clock from every scene: a window in the background beside an active
    /// one stops nothing, so a controller leaked in the active window is LC301, not LC302.
    func testTheLeakClockRunsWhileAnySceneIsInTheForeground() {
        var b = app()
        b.add(500, "sceneWillConnect", #""scene":"s2""#)
        b.add(501, "sceneWillEnterForeground", #""scene":"s2""#)
        push(&b, 1000, "0xb")
        b.add(2500, "sceneDidEnterBackground", #""scene":"s2""#)
        pop(&b, 3000, "0xb", deinitAfter: nil)
        end(&b, 60_000)
        XCTAssertEqual(b.flagged(rules: ["LC301", "LC302"]), ["LC301 0xb"])
        // Look-alike: when every scene is in the background, the clock stops (LC302).
        var all = app()
        push(&all, 1000, "0xb")
        pop(&all, 3000, "0xb", deinitAfter: nil)
        all.add(3500, "sceneDidEnterBackground", #""scene":"s1""#)
        end(&all, 60_000)
        XCTAssertEqual(all.flagged(rules: ["LC301", "LC302"]), ["LC302 0xb"])
        let message = finding(all.model(), "LC302", "0xb")?.message ?? ""
        XCTAssertTrue(message.contains("ended 56.6 s ("), "the elapsed time, as elapsed: \(message)")
        XCTAssertTrue(message.contains("(148 ms of it in the foreground) after its pop"), "and the foreground time as such: \(message)")
    }

    /// (1.2, item 7) A cancelled search: UIKit keeps the UISearchController (and its results
    /// controller) in `navigationItem.searchController` and presents it again on the next
    /// search; it is never a leak. Known by `cls`, or by the `uikit` class of a subclass.
    func testSearchControllersUIKitOwnsAreNeverLeaks() {
        for (cls, uikit) in [("UISearchController", nil), ("ProductSearchController", "UISearchController")] {
            var b = app()
            let extra = uikit.map { ",\"uikit\":\"\($0)\"" } ?? ""
            b.vc(900, "init", "0xs", "\"cls\":\"\(cls)\"\(extra)")
            b.vc(900, "init", "0xr", #""cls":"SearchResultsVC""#)
            b.vc(900, "addChild", "0xr", #""parent":"0xs""#)
            b.vc(900, "didMoveToParent", "0xr", #""parent":"0xs""#)
            present(&b, 1000, "0xs", by: "0xa", cls: cls, style: "automatic", initialise: false)
            b.vc(1001, "viewWillAppear", "0xr", #""animated":true"#)
            b.vc(1402, "viewDidAppear", "0xr", #""animated":true"#)
            b.vc(3000, "dismiss", "0xs", #""animated":true"#)
            b.vc(3000, "viewWillDisappear", "0xs", #""animated":true,"isBeingDismissed":true"#)
            b.vc(3000, "viewWillDisappear", "0xr", #""animated":true"#)
            b.vc(3300, "viewDidDisappear", "0xr", #""animated":true"#)
            b.vc(3300, "viewDidDisappear", "0xs", #""animated":true,"isBeingDismissed":true"#)
            end(&b, 60_000)
            XCTAssertEqual(b.flagged(rules: ["LC301", "LC302"]), [], "\(cls)")
        }
        // Look-alike: any other dismissed controller that stays is a leak.
        var b = app()
        present(&b, 1000, "0xs", by: "0xa", cls: "ProductSearchController")
        b.vc(3000, "dismiss", "0xs", #""animated":true"#)
        b.vc(3000, "viewWillDisappear", "0xs", #""animated":true,"isBeingDismissed":true"#)
        b.vc(3300, "viewDidDisappear", "0xs", #""animated":true,"isBeingDismissed":true"#)
        end(&b, 60_000)
        XCTAssertEqual(b.flagged(rules: ["LC301", "LC302"]), ["LC301 0xs"])
    }

    /// (1.2, item 8) Replacing a window's root releases the old root, what it contains and
    /// every chain it presented: a root kept alive by a sheet left open is found (`root`).
    func testReplacingTheWindowRootReleasesTheOldOne() {
        var b = app()
        present(&b, 1000, "0xs", by: "0xn", cls: "OnboardingSheetVC", style: "pageSheet")
        b.vc(3000, "init", "0xr", #""cls":"MainTabBarController""#)
        b.vc(3000, "windowRoot", "0xr", #""old":"0xn","scene":"s1""#)
        b.vc(3001, "viewWillAppear", "0xr", #""animated":false"#)
        b.vc(3002, "viewIsAppearing", "0xr", #""animated":false"#)
        b.vc(3010, "viewDidAppear", "0xr", #""animated":false"#)
        end(&b, 60_000)
        XCTAssertEqual(b.flagged(rules: ["LC301", "LC302"]), ["LC301 0xa", "LC301 0xn", "LC301 0xs"])
        let model = b.model()
        XCTAssertEqual(finding(model, "LC301", "0xn")?.detail["how"], "root")
        XCTAssertTrue(finding(model, "LC301", "0xn")?.identityKey.hasSuffix("|root") ?? false)
        XCTAssertEqual(finding(model, "LC301", "0xa")?.detail["how"], "ancestor")
        XCTAssertEqual(finding(model, "LC301", "0xs")?.detail["how"], "chain")
        // Look-alike: the old root and its sheet freed at once.
        var freed = b
        freed.lines.removeLast()
        freed.seq -= 1
        for vc in ["0xs", "0xa", "0xn"] { freed.vc(3100, "deinit", vc) }
        end(&freed, 60_000)
        XCTAssertEqual(freed.flagged(rules: ["LC301", "LC302", "LC201"]), [], "nothing leaked; nothing was visible at its deinit")
    }
}
