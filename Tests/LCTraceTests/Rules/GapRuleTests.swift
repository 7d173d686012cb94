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

/// The gaps family (LC401–LC402): rule triplets (see `RuleTestCase`).
final class GapRuleTests: RuleTestCase {
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

    // MARK: 1.1: interactive presentations and dismissals

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

    // MARK: 1.1: backgrounded appearances

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

// MARK: 1.2: interactive transitions scoped to what they move, known from the appearance events

extension GapRuleTests {
    /// (1.2, bug 3) A back swipe held 3.5 s reveals a screen with a child: the child's
    /// appearance is inside the interactive pop as its parent's is (the same for the child of
    /// an interactively pushed screen).
    func testAnInteractivePopOrPushCoversTheChildrenOfTheScreensItMoves() {
        var b = app()
        addChild(&b, 100, "0xc", parent: "0xa")
        push(&b, 1000, "0xb")
        // 0xa is revealed by the swipe; its child 0xc appears with it.
        b.vc(3000, "pop", "0xn", #""child":"0xb","animated":true,"interactive":true"#)
        b.vc(3000, "viewWillDisappear", "0xb", #""animated":true,"isMovingFromParent":true"#)
        b.vc(3001, "viewWillAppear", "0xa", #""animated":true"#)
        b.vc(3001, "viewWillAppear", "0xc", #""animated":true"#)
        b.vc(3002, "viewIsAppearing", "0xa", #""animated":true"#)
        b.vc(3002, "viewIsAppearing", "0xc", #""animated":true"#)
        b.vc(6500, "viewDidDisappear", "0xb", #""animated":true,"isMovingFromParent":true"#)
        b.vc(6500, "viewDidAppear", "0xa", #""animated":true"#)
        b.vc(6500, "viewDidAppear", "0xc", #""animated":true"#)
        b.vc(6500, "removeFromParent", "0xb", #""parent":"0xn""#)
        b.vc(6530, "deinit", "0xb")
        // An interactively pushed screen 0xd with a child 0xe.
        b.vc(8000, "init", "0xd", #""cls":"DetailVC""#)
        b.vc(8000, "init", "0xe", #""cls":"ChartVC""#)
        b.vc(8000, "addChild", "0xe", #""parent":"0xd""#)
        b.vc(8000, "push", "0xn", #""child":"0xd","animated":true,"interactive":true"#)
        b.vc(8000, "addChild", "0xd", #""parent":"0xn""#)
        b.vc(8001, "viewWillAppear", "0xd", #""animated":true,"isMovingToParent":true"#)
        b.vc(8001, "viewWillAppear", "0xe", #""animated":true"#)
        b.vc(8002, "viewIsAppearing", "0xd", #""animated":true"#)
        b.vc(8002, "viewIsAppearing", "0xe", #""animated":true"#)
        b.vc(11_000, "viewDidAppear", "0xd", #""animated":true,"isMovingToParent":true"#)
        b.vc(11_000, "viewDidAppear", "0xe", #""animated":true"#)
        end(&b, 20_000)
        XCTAssertEqual(b.flagged(rules: ["LC401"]), [], "the finger set every one of these lengths")
    }

    /// (1.2, bug 4) While a form sheet is dragged down (an interactive dismissal held for
    /// seconds), a programmatic 1.6 s push in the navigation controller under it is flagged:
    /// the dismissal moves the sheet and what it reveals, not every controller on screen.
    func testAnInteractiveDismissalCoversOnlyWhatItMoves() {
        var b = app()
        present(&b, 1000, "0xs", by: "0xn", cls: "FilterSheetVC", style: "formSheet")
        b.vc(3000, "dismiss", "0xs", #""animated":true,"interactive":true"#)
        b.vc(3000, "viewWillDisappear", "0xs", #""animated":true,"isBeingDismissed":true"#)
        push(&b, 3100, "0xd", gap: 1600)
        b.vc(9000, "viewDidAppear", "0xs", #""animated":true"#)   // let go: the sheet stays
        end(&b, 20_000)
        XCTAssertEqual(b.flagged(rules: ["LC401"]), ["LC401 0xd"])
    }

    /// (1.2, item 10) A 4.2 s back swipe recorded without push/pop events: the appearance
    /// events' own `interactive` key says the finger drives it, on the appearing controller
    /// (viewWillAppear) or on the one it uncovers (viewWillDisappear).
    func testInteractiveIsKnownFromTheAppearanceEvents() {
        for marked in ["0xa", "0xb"] {
            var b = app()
            push(&b, 1000, "0xb")
            b.vc(3000, "viewWillDisappear", "0xb", "\"animated\":true,\"isMovingFromParent\":true\(marked == "0xb" ? ",\"interactive\":true" : "")")
            b.vc(3001, "viewWillAppear", "0xa", "\"animated\":true\(marked == "0xa" ? ",\"interactive\":true" : "")")
            b.vc(3002, "viewIsAppearing", "0xa", #""animated":true"#)
            b.vc(7200, "viewDidDisappear", "0xb", #""animated":true,"isMovingFromParent":true"#)
            b.vc(7200, "viewDidAppear", "0xa", #""animated":true"#)
            b.vc(7200, "removeFromParent", "0xb", #""parent":"0xn""#)
            b.vc(7230, "deinit", "0xb")
            end(&b, 20_000)
            XCTAssertEqual(b.flagged(rules: ["LC401"]), [], "interactive on \(marked)")
        }
        // Look-alike: the same swipe without the key is a slow appearance.
        var b = app()
        push(&b, 1000, "0xb")
        b.vc(3000, "viewWillDisappear", "0xb", #""animated":true,"isMovingFromParent":true"#)
        b.vc(3001, "viewWillAppear", "0xa", #""animated":true"#)
        b.vc(3002, "viewIsAppearing", "0xa", #""animated":true"#)
        b.vc(7200, "viewDidDisappear", "0xb", #""animated":true,"isMovingFromParent":true"#)
        b.vc(7200, "viewDidAppear", "0xa", #""animated":true"#)
        end(&b, 20_000)
        XCTAssertEqual(b.flagged(rules: ["LC401"]), ["LC401 0xa"])
    }

    /// (1.2, item 5) One iPad window in the background beside an active one stops nothing: an
    /// appearance in the active window that overlaps the other's background is still judged.
    func testABackgroundedSecondWindowDoesNotExemptAnAppearance() {
        var b = app()
        b.add(500, "sceneWillConnect", #""scene":"s2""#)
        b.add(501, "sceneWillEnterForeground", #""scene":"s2""#)
        b.add(900, "sceneDidEnterBackground", #""scene":"s2""#)
        push(&b, 1000, "0xb", gap: 1500)
        end(&b, 20_000)
        XCTAssertEqual(b.flagged(rules: ["LC401"]), ["LC401 0xb"])
    }

    /// (1.2, item 11) LC402 on every OS that has viewIsAppearing: iPadOS, tvOS and Mac
    /// Catalyst 13+ with SDK 17+, and visionOS whatever its version (its numbering starts at 1).
    func testLC402CoversEveryOSThatHasViewIsAppearing() {
        for (os, version, sdk, flagged) in [("iPadOS", "17.2", "17.0", true), ("tvOS", "17.0", "17.0", true),
                                             ("Mac Catalyst", "17.1", "17.0", true), ("visionOS", "1.1", "1.0", true),
                                             ("visionOS", "2.0", "2.0", true), ("tvOS", "12.4", "17.0", false),
                                             ("iPadOS", "17.2", "16.4", false)] {
            var b = TraceBuilder(sid: "S-\(os)", sdk: sdk, os: version, osName: os)
            b.vc(1, "init", "0xa", #""cls":"A""#)
            b.vc(2, "viewWillAppear", "0xa")
            b.vc(3, "viewDidAppear", "0xa")
            XCTAssertEqual(b.flagged(rules: ["LC402"]), flagged ? ["LC402 0xa"] : [], "\(os) \(version), SDK \(sdk)")
        }
    }

    /// (1.2) LC402's message names the OS the session ran on (not "iOS" for every one).
    func testLC402MessageNamesTheSessionsOS() {
        for (os, version, said) in [("iPadOS", "17.2", "on iPadOS 17.2"), ("tvOS", "17.0", "on tvOS 17.0"),
                                    ("Mac Catalyst", "17.1", "on Mac Catalyst 17.1"), ("visionOS", "1.1", "on visionOS 1.1"),
                                    ("iOS", "17.4", "on iOS 17.4")] {
            var b = TraceBuilder(sid: "S-\(os)", sdk: "17.0", os: version, osName: os)
            b.vc(1, "init", "0xa", #""cls":"A""#)
            b.vc(2, "viewWillAppear", "0xa")
            b.vc(3, "viewDidAppear", "0xa")
            let message = finding(b.model(), "LC402", "0xa")?.message ?? ""
            XCTAssertTrue(message.contains(said + " built with SDK 17.0"), message)
        }
    }
}
