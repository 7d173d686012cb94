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

/// What holds across the rules (`RuleCatalog`): the clean baseline, instances across reused
/// ids, and what `settle` decides for a lossy session; rule triplets (see `RuleTestCase`).
final class RuleCatalogTests: RuleTestCase {
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

    // MARK: Instances across reused ids

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

    // MARK: 1.1: lossy sessions: no containment findings for an instance without init

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
}
