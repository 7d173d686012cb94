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

/// The scene family (LC501–LC502): rule triplets (see `RuleTestCase`).
final class SceneRuleTests: RuleTestCase {
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

    // MARK: 1.1: LC501 counts only the deprecated state transitions

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

    // MARK: 1.1: LC502: not for app extensions, not without the session's start

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
}
