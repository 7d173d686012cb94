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

/// Rule triplets for what rules.md 1.1 changed, each written from UIKit's behaviour (the
/// scenario in the comment, the rule, the findings) with the look-alikes that must stay quiet.
extension RuleTests {

    /// `present` of `vc` (class `cls`) by `presenter`, with the presented controller's
    /// appearance completed `gap` ms after viewIsAppearing. A full-screen presentation also
    /// takes the presenter off screen (reference §4: B.didAppear before A.didDisappear); sheets
    /// and the other styles leave it without callbacks.
    func present(_ b: inout TraceBuilder, _ at: Double, _ vc: String, by presenter: String, cls: String,
                 style: String = "fullScreen", interactive: Bool = false, gap: Double = 400, initialise: Bool = true) {
        let covers = style == "fullScreen"
        if initialise { b.vc(at, "init", vc, "\"cls\":\"\(cls)\"") }
        b.vc(at, "present", presenter, "\"presented\":\"\(vc)\",\"style\":\"\(style)\",\"animated\":true,\"interactive\":\(interactive)")
        if initialise { b.vc(at + 1, "viewDidLoad", vc) }
        if covers { b.vc(at + 1, "viewWillDisappear", presenter, #""animated":true"#) }
        b.vc(at + 1, "viewWillAppear", vc, #""animated":true,"isBeingPresented":true"#)
        b.vc(at + 1, "viewAttached", vc, #""host":null"#)
        b.vc(at + 2, "viewIsAppearing", vc, #""animated":true"#)
        b.vc(at + 2 + gap, "viewDidAppear", vc, #""animated":true,"isBeingPresented":true"#)
        if covers { b.vc(at + 2 + gap, "viewDidDisappear", presenter, #""animated":true"#) }
    }

    /// The finding of `rule` about `vc`.
    func finding(_ model: SessionModel, _ rule: String, _ vc: String) -> Finding? {
        model.findings.first { $0.rule == rule && $0.vc == vc }
    }

    // MARK: 1. Absent keys read as null

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

    // MARK: 2. Presentation chains

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

    // MARK: 3. Adoption cancels a release

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

    // MARK: 4. Over-current-context presentations are never orphans

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

    // MARK: 5. Interactive presentations and dismissals

    /// A full-screen modal dismissed with an interactive swipe: the presenter's appearance
    /// lasts as long as the finger stays down; then the swipe is let go, twice: once
    /// cancelled (the modal appears again, no release), once completed.
    func testLC401NeverFlagsAppearancesInsideAnInteractiveDismissal() {
        var b = app()
        present(&b, 1000, "0xm", by: "0xa", cls: "PlayerVC")
        // Cancelled: A starts to appear, the finger lets go, M comes back (4 s under the finger).
        b.vc(3000, "dismiss", "0xm", #""animated":true,"interactive":true"#)
        b.vc(3000, "viewWillDisappear", "0xm", #""animated":true,"isBeingDismissed":true"#)
        b.vc(3001, "viewWillAppear", "0xa", #""animated":true"#)
        b.vc(3002, "viewIsAppearing", "0xa", #""animated":true"#)
        b.vc(7000, "viewWillDisappear", "0xa", #""animated":true"#)
        b.vc(7001, "viewDidDisappear", "0xa", #""animated":true"#)
        b.vc(7002, "viewWillAppear", "0xm", #""animated":true"#)
        b.vc(7003, "viewIsAppearing", "0xm", #""animated":true"#)
        b.vc(9500, "viewDidAppear", "0xm", #""animated":true"#)
        // Completed, again slowly under the finger.
        b.vc(12_000, "dismiss", "0xm", #""animated":true,"interactive":true"#)
        b.vc(12_000, "viewWillDisappear", "0xm", #""animated":true,"isBeingDismissed":true"#)
        b.vc(12_001, "viewWillAppear", "0xa", #""animated":true"#)
        b.vc(12_002, "viewIsAppearing", "0xa", #""animated":true"#)
        b.vc(15_000, "viewDidAppear", "0xa", #""animated":true"#)
        b.vc(15_000, "viewDidDisappear", "0xm", #""animated":true,"isBeingDismissed":true"#)
        b.vc(15_020, "deinit", "0xm")
        end(&b, 30_000)
        XCTAssertEqual(b.findings(), [], "the finger set the length; the cancelled dismissal released nothing")

        // Look-alike: the same slow appearance after a dismissal that is not interactive.
        var slow = app()
        present(&slow, 1000, "0xm", by: "0xa", cls: "PlayerVC")
        slow.vc(12_000, "dismiss", "0xm", #""animated":true"#)
        slow.vc(12_000, "viewWillDisappear", "0xm", #""animated":true,"isBeingDismissed":true"#)
        slow.vc(12_001, "viewWillAppear", "0xa", #""animated":true"#)
        slow.vc(12_002, "viewIsAppearing", "0xa", #""animated":true"#)
        slow.vc(15_000, "viewDidAppear", "0xa", #""animated":true"#)
        slow.vc(15_000, "viewDidDisappear", "0xm", #""animated":true,"isBeingDismissed":true"#)
        slow.vc(15_020, "deinit", "0xm")
        end(&slow, 30_000)
        XCTAssertEqual(slow.findings(), ["LC401 0xa#3"])
    }

    /// An interactive presentation (a card pulled up by the finger) is interactive until the
    /// presented controller's appearance ends; a slow appearance after it is flagged again.
    func testInteractivePresentationEndsWithItsAppearance() {
        var b = app()
        present(&b, 1000, "0xc", by: "0xa", cls: "CardVC", style: "custom", interactive: true, gap: 3000)
        b.vc(6000, "viewWillDisappear", "0xa", #""animated":false"#)
        b.vc(6001, "viewDidDisappear", "0xa", #""animated":false"#)
        b.vc(6100, "viewWillAppear", "0xa", #""animated":false"#)
        b.vc(6101, "viewIsAppearing", "0xa", #""animated":false"#)
        b.vc(6700, "viewDidAppear", "0xa", #""animated":false"#)
        end(&b, 30_000)
        XCTAssertEqual(b.findings(rules: ["LC401"]), ["LC401 0xa#3"], "the card's 3 s are the finger's; A's 600 ms later are not")
    }

    // MARK: 6. LC501 counts only the deprecated state transitions

    func testLC501IgnoresLaunchAndTerminate() {
        var b = TraceBuilder(sid: "S2", sdk: "26.2", os: "26.2")
        b.add(2, "appDidFinishLaunching")
        b.add(3, "sceneDidBecomeActive", #""scene":"s1""#)
        b.add(9000, "appWillTerminate")
        XCTAssertEqual(b.findings(), [], "appDidFinishLaunching and appWillTerminate are not deprecated")

        var legacy = TraceBuilder(sid: "S3", sdk: "26.2", os: "26.2")
        legacy.add(2, "appDidFinishLaunching")
        legacy.add(3, "appDidBecomeActive")
        legacy.add(100, "appWillResignActive")
        legacy.add(101, "appDidEnterBackground")
        legacy.add(200, "appWillEnterForeground")
        legacy.add(201, "appDidBecomeActive")
        let model = legacy.model()
        XCTAssertEqual(model.findings.filter { $0.rule == "LC501" }.map { $0.detail["event"]! },
                       ["appDidBecomeActive", "appWillResignActive", "appDidEnterBackground", "appWillEnterForeground"],
                       "one finding per deprecated event, in order of first use")
        let active = model.findings.first { $0.detail["event"] == "appDidBecomeActive" }
        XCTAssertEqual(active?.evidence, [3, 7])
        XCTAssertEqual(active?.message, "appDidBecomeActive (2 times) with SDK 26.2: deprecated app-delegate life cycle: use sceneDidBecomeActive")
    }

    // MARK: 7. LC502: not for app extensions, not without the session's start

    func testLC502NeverFlagsAnExtensionOrALostStart() {
        func session(_ record: String, firstSeq: Int64 = 0) -> TraceBuilder {
            var b = TraceBuilder(sid: "S4", sdk: "27.0", os: "27.1", record: false)
            b.seq = firstSeq
            b.add(0, "session", #""wall":"2026-11-02T10:15:03.120Z","app":"com.example.app.share","sdk":"27.0","osVersion":"27.1","os":"iOS""# + record)
            b.vc(1, "init", "0xe", #""cls":"ShareViewController""#)
            b.vc(2, "viewDidLoad", "0xe")
            return b
        }
        XCTAssertEqual(session("").findings(), ["LC502 -#-"], "an app built with SDK 27 and no scene life cycle")
        XCTAssertEqual(session(#","extension":"com.apple.share-services""#).findings(), [],
                       "a share extension has no scene life cycle")
        XCTAssertEqual(session("", firstSeq: 40).findings(rules: ["LC502"]), [],
                       "seq 0 is not in the trace: a lost first file may have held the scene events")
    }

    // MARK: 8. Lossy sessions: no containment findings for an instance without init

    /// The recorder lost events (the hole may hold 0xu's and 0xw's init, didMove, addChild):
    /// neither gets a containment finding. 0xo, whose init was recorded, still does.
    func testLossySessionGivesNoContainmentFindingsToInstancesWithoutInit() {
        func session(lossy: Bool) -> TraceBuilder {
            var b = app()
            if lossy { b.seq += 4 }
            b.vc(1000, "addChild", "0xu", #""parent":"0xa""#)       // no init, no didMove seen: LC102?
            b.vc(1000, "viewAttached", "0xu", #""host":"0xa""#)
            b.vc(1001, "viewAttached", "0xw", #""host":"0xa""#)     // no init, no addChild seen: LC101?
            b.vc(1002, "init", "0xo", #""cls":"BadgeVC""#)
            b.vc(1002, "viewAttached", "0xo", #""host":"0xa""#)     // init recorded: a real orphan
            end(&b, 10_000)
            return b
        }
        let rules: Set<String> = ["LC101", "LC102", "LC901", "LC902"]
        XCTAssertEqual(session(lossy: true).findings(rules: rules),
                       ["LC101 0xo#24", "LC901 -#-", "LC902 0xu#21", "LC902 0xw#23"])
        XCTAssertEqual(session(lossy: false).findings(rules: rules),
                       ["LC101 0xo#20", "LC101 0xw#19", "LC102 0xu#17", "LC902 0xu#17", "LC902 0xw#19"],
                       "without lost events the history is complete: their findings stand")
    }

    // MARK: 9. Behaviours the 1.1 contract states, each with a named test

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

    /// An appearance that overlaps a background period is not LC401: the app was suspended
    /// between viewIsAppearing and viewDidAppear.
    func testLC401SkipsBackgroundedAppearances() {
        var b = app()
        b.vc(1000, "viewWillDisappear", "0xa", #""animated":false"#)
        b.vc(1001, "viewDidDisappear", "0xa", #""animated":false"#)
        b.vc(1500, "viewWillAppear", "0xa", #""animated":false"#)
        b.vc(1501, "viewIsAppearing", "0xa", #""animated":false"#)
        b.add(1502, "sceneDidEnterBackground", #""scene":"s1""#)
        b.add(9000, "sceneWillEnterForeground", #""scene":"s1""#)
        b.vc(9001, "viewDidAppear", "0xa", #""animated":false"#)
        end(&b, 20_000)
        XCTAssertEqual(b.findings(), [])
    }
}
