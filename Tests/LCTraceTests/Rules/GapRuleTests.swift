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
