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
/// positive case and the legitimate look-alikes it must never flag. One test class per rule
/// family (`RuleFamily`), each a `RuleTestCase` for these scenario builders; the rules.md 1.1
/// scenarios are written from UIKit's behaviour (the scenario in the comment, the rule, the
/// findings) with the look-alikes that must stay quiet.
class RuleTestCase: XCTestCase {
    /// A tab-less app: navigation controller 0xn with root 0xa, both visible at t = 10 ms.
    func app() -> TraceBuilder { .app() }

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
}

extension TraceBuilder {
    /// A tab-less app: navigation controller 0xn with root 0xa, both visible at t = 10 ms.
    static func app() -> TraceBuilder {
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
}
