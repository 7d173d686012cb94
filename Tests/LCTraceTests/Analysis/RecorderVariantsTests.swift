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

/// Traces as real recorders write them, through ingest and report (the store's path, not only
/// the model's): a Codable recorder that omits nil keys, and an app extension.
final class RecorderVariantsTests: TemporaryDirectoryTestCase {

    /// A session of a custom container recorded by a Codable recorder: `willMove(toParent: nil)`
    /// and `didMove(toParent: nil)` arrive without `parent`, flags without their false values.
    func codableSession(sid: String) -> [String] {
        var b = TraceBuilder(sid: sid)
        b.vc(2, "init", "0xp", #""cls":"ContainerVC""#)
        b.vc(3, "viewWillAppear", "0xp")
        b.vc(4, "viewIsAppearing", "0xp")
        b.vc(20, "viewDidAppear", "0xp")
        b.vc(1000, "init", "0xc", #""cls":"ChildVC""#)
        b.vc(1000, "addChild", "0xc", #""parent":"0xp""#)
        b.vc(1000, "willMoveToParent", "0xc", #""parent":"0xp""#)
        b.vc(1001, "viewAttached", "0xc", #""host":"0xp""#)
        b.vc(1001, "viewWillAppear", "0xc", #""isMovingToParent":true"#)
        b.vc(1002, "viewIsAppearing", "0xc")
        b.vc(1005, "viewDidAppear", "0xc", #""isMovingToParent":true"#)
        b.vc(1005, "didMoveToParent", "0xc", #""parent":"0xp""#)
        b.vc(2000, "willMoveToParent", "0xc")
        b.vc(2000, "viewWillDisappear", "0xc", #""isMovingFromParent":true"#)
        b.vc(2001, "viewDidDisappear", "0xc", #""isMovingFromParent":true"#)
        b.vc(2001, "viewDetached", "0xc")
        b.vc(2001, "removeFromParent", "0xc")
        b.vc(2001, "didMoveToParent", "0xc")
        b.vc(2010, "deinit", "0xc")
        b.add(20_000, "sessionEnd", #""reason":"stopped""#)
        return b.lines
    }

    func report(_ path: String) throws -> [[String: Any]] {
        let ingest = TestSupport.run(["ingest", "--db", db, path])
        XCTAssertEqual(ingest.status, 0, ingest.err)
        XCTAssertEqual(ingest.err, "", "no line rejected")
        let out = TestSupport.run(["report", "--db", db, "--format", "json", "--fail-on", "never"])
        XCTAssertEqual(out.status, 0, out.err)
        let doc = try JSONSerialization.jsonObject(with: Data(out.out.utf8)) as! [String: Any]
        return doc["findings"] as! [[String: Any]]
    }

    func testCodableRecorderLosesNothingAndInventsNothing() throws {
        let file = dir + "/codable.jsonl"
        TestSupport.writeLines(codableSession(sid: "C1"), to: file)
        let findings = try report(file)
        XCTAssertEqual(findings.map { $0["rule"] as! String }, [], "no LC103, LC901, LC904; before 1.1 the absent keys were rejected")
        let db = try SQLiteDatabase(path: self.db, mode: .readOnly)
        let q = try db.prepare("SELECT count(*) FROM rejects")
        XCTAssertTrue(try q.step())
        XCTAssertEqual(q.int(0), 0)
    }

    func testAnExtensionSessionHasNoSceneLifeCycleToMiss() throws {
        func session(_ sid: String, _ extra: String) -> [String] {
            var b = TraceBuilder(sid: sid, record: false)
            b.add(0, "session", #""wall":"2026-11-02T10:15:03.120Z","app":"com.example.app.share","appVersion":"1.0","build":"1","os":"iOS","osVersion":"27.1","sdk":"27.0","device":"iPhone16,2""# + extra)
            b.vc(1, "init", "0xe", #""cls":"ShareViewController""#)
            b.vc(2, "viewDidLoad", "0xe")
            b.add(500, "sessionEnd", #""reason":"stopped""#)
            return b.lines
        }
        let file = dir + "/both.jsonl"
        TestSupport.writeLines(session("E1", #","extension":"com.apple.share-services""#) + session("A1", ""), to: file)
        let findings = try report(file)
        XCTAssertEqual(findings.map { "\($0["rule"]!) \($0["session"]!)" }, ["LC502 A1"],
                       "the share extension (its record says so) is not flagged; the app built the same way is")
    }
}
