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
@testable import LCTraceCLI

/// The gate a QA team keeps, end to end, on two builds written for it: the head build fixes
/// one leak, brings a new leak in several sessions, keeps an orphan, and slows one class's
/// appearance clearly while another class only has noise.
final class BuildGateEndToEndTests: TemporaryDirectoryTestCase {
    static let app = "com.example.shop"
    static let base = "100", head = "101"

    /// One session of `build`: a navigation controller with its root, then the planted facts.
    func session(_ sid: String, build: String, leakA: Bool, leakB: Bool, orphan: Bool,
                 slowGaps: [Double], noiseGaps: [Double]) -> [String] {
        var b = TraceBuilder(sid: sid, app: Self.app, version: build == Self.base ? "2.0" : "2.1", build: build)
        b.vc(2, "init", "0xn", #""cls":"UINavigationController""#)
        b.vc(2, "init", "0xa", #""cls":"RootVC""#)
        for ev in ["addChild", "willMoveToParent", "didMoveToParent"] { b.vc(2, ev, "0xa", #""parent":"0xn""#) }
        for vc in ["0xn", "0xa"] { b.vc(3, "viewWillAppear", vc, #""animated":false"#) }
        b.vc(3, "viewAttached", "0xn", #""host":null"#)
        b.vc(3, "viewAttached", "0xa", #""host":"0xn""#)
        for vc in ["0xn", "0xa"] { b.vc(4, "viewIsAppearing", vc, #""animated":false"#) }
        for vc in ["0xn", "0xa"] { b.vc(9, "viewDidAppear", vc, #""animated":false"#) }
        // A detail screen pushed and popped: deallocated 30 ms after the pop unless it leaks.
        func pushPop(_ at: Double, _ vc: String, _ cls: String, leaks: Bool) {
            b.vc(at, "init", vc, "\"cls\":\"\(cls)\"")
            b.vc(at, "push", "0xn", "\"child\":\"\(vc)\",\"animated\":true")
            b.vc(at, "addChild", vc, #""parent":"0xn""#)
            b.vc(at, "willMoveToParent", vc, #""parent":"0xn""#)
            b.vc(at + 1, "viewWillDisappear", "0xa", #""animated":true"#)
            b.vc(at + 1, "viewWillAppear", vc, #""animated":true,"isMovingToParent":true"#)
            b.vc(at + 1, "viewAttached", vc, #""host":"0xn""#)
            b.vc(at + 2, "viewIsAppearing", vc, #""animated":true"#)
            b.vc(at + 300, "viewDidDisappear", "0xa", #""animated":true"#)
            b.vc(at + 300, "viewDetached", "0xa", #""host":"0xn""#)
            b.vc(at + 300, "viewDidAppear", vc, #""animated":true,"isMovingToParent":true"#)
            b.vc(at + 300, "didMoveToParent", vc, #""parent":"0xn""#)
            b.vc(at + 1000, "pop", "0xn", "\"child\":\"\(vc)\",\"animated\":true")
            b.vc(at + 1000, "willMoveToParent", vc, #""parent":null"#)
            b.vc(at + 1000, "viewWillDisappear", vc, #""animated":true,"isMovingFromParent":true"#)
            b.vc(at + 1001, "viewWillAppear", "0xa", #""animated":true"#)
            b.vc(at + 1001, "viewAttached", "0xa", #""host":"0xn""#)
            b.vc(at + 1002, "viewIsAppearing", "0xa", #""animated":true"#)
            b.vc(at + 1300, "viewDidDisappear", vc, #""animated":true,"isMovingFromParent":true"#)
            b.vc(at + 1300, "viewDidAppear", "0xa", #""animated":true"#)
            b.vc(at + 1300, "viewDetached", vc, #""host":"0xn""#)
            b.vc(at + 1300, "removeFromParent", vc, #""parent":"0xn""#)
            b.vc(at + 1300, "didMoveToParent", vc, #""parent":null"#)
            if !leaks { b.vc(at + 1330, "deinit", vc) }
        }
        pushPop(1000, "0xd1", "CartViewController", leaks: leakA)
        pushPop(3000, "0xd2", "ReviewsViewController", leaks: leakB)
        if orphan {
            b.vc(5000, "init", "0xo", #""cls":"BannerViewController""#)
            b.vc(5001, "viewAttached", "0xo", #""host":"0xa""#)
        }
        // Appearances of two screens that come and go (never released): gaps in ms.
        var at = 6000.0
        for (vc, cls, gaps) in [("0xs", "GalleryViewController", slowGaps), ("0xq", "SearchViewController", noiseGaps)] {
            b.vc(at, "init", vc, "\"cls\":\"\(cls)\"")
            for gap in gaps {
                b.vc(at, "viewWillAppear", vc, #""animated":true"#)
                b.vc(at + 5, "viewIsAppearing", vc, #""animated":true"#)
                b.vc(at + 5 + gap, "viewDidAppear", vc, #""animated":true"#)
                b.vc(at + 600, "viewWillDisappear", vc, #""animated":true"#)
                b.vc(at + 900, "viewDidDisappear", vc, #""animated":true"#)
                at += 1000
            }
        }
        b.add(at + 20_000, "sessionEnd", #""reason":"stopped""#)
        return b.lines
    }

    /// Writes both builds' sessions and loads them: base 10 sessions, head 12.
    func loadTwoBuilds() {
        var rng = SplitMix(seed: 7)
        for i in 0..<10 {
            let noise = (0..<3).map { _ in 120 + Double(rng.next() % 80) }
            let slow = (0..<3).map { _ in 110 + Double(rng.next() % 40) }
            let lines = session("base-\(i)", build: Self.base, leakA: i < 3, leakB: false, orphan: i < 2, slowGaps: slow, noiseGaps: noise)
            TestSupport.writeLines(lines, to: dir + "/base-\(i).jsonl")
        }
        for i in 0..<12 {
            let noise = (0..<3).map { _ in 120 + Double(rng.next() % 80) }
            let slow = (0..<3).map { _ in 420 + Double(rng.next() % 60) }
            let lines = session("head-\(i)", build: Self.head, leakA: false, leakB: i < 4, orphan: i < 2, slowGaps: slow, noiseGaps: noise)
            TestSupport.writeLines(lines, to: dir + "/head-\(i).jsonl")
        }
        let r = TestSupport.run(["ingest", "-q", "--db", db, dir])
        XCTAssertEqual(r.status, 0, r.err)
    }

    func json(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    func testCompareFindsOneNewOneFixedOnePersistingAndOneRegression() throws {
        loadTwoBuilds()
        let r = TestSupport.run(["compare", "--db", db, "--base-build", Self.base, "--head-build", Self.head, "--format", "json"])
        XCTAssertEqual(r.status, 1, "a new error and a regression fail the gate: \(r.err)")
        let doc = try json(r.out)
        for (side, build, sessions) in [("base", Self.base, 10), ("head", Self.head, 12)] {
            let s = try XCTUnwrap(doc[side] as? [String: Any])
            XCTAssertEqual(s["build"] as? String, build)
            XCTAssertEqual(s["sessions"] as? Int, sessions)
            XCTAssertEqual(s.count, 2)
        }
        func keys(_ name: String) -> [String] { (doc[name] as? [[String: Any]] ?? []).map { $0["identity_key"] as! String } }
        XCTAssertEqual(keys("new"), ["LC301|com.example.shop|ReviewsViewController|pop"])
        XCTAssertEqual(keys("fixed"), ["LC301|com.example.shop|CartViewController|pop"])
        XCTAssertEqual(keys("persisting"), ["LC101|com.example.shop|BannerViewController|RootVC"])
        let new = try XCTUnwrap((doc["new"] as? [[String: Any]])?.first)
        XCTAssertEqual(Set(new.keys), ["identity", "identity_key", "rule", "severity", "class", "base_count", "head_count",
                                       "base_per_100", "head_per_100"])
        XCTAssertEqual(new["head_count"] as? Int, 4)
        XCTAssertEqual(new["head_per_100"] as? Double ?? 0, 33.33, accuracy: 0.001, "4 of 12 head sessions")
        XCTAssertEqual(new["identity"] as? String, FindingIdentity.hash("LC301|com.example.shop|ReviewsViewController|pop"))
        let fixed = try XCTUnwrap((doc["fixed"] as? [[String: Any]])?.first)
        XCTAssertEqual(fixed["base_per_100"] as? Double ?? 0, 30, accuracy: 0.001, "3 of 10 base sessions")
        let regressions = try XCTUnwrap(doc["regressions"] as? [[String: Any]])
        XCTAssertEqual(regressions.map { $0["class"] as? String }, ["GalleryViewController"], "the noisy class never flags")
        let slow = regressions[0]
        XCTAssertEqual(Set(slow.keys), ["class", "animated", "base_n", "head_n", "base_p50_ms", "base_p90_ms",
                                        "head_p50_ms", "head_p90_ms", "p_value"])
        XCTAssertEqual(slow["base_n"] as? Int, 30)
        XCTAssertEqual(slow["head_n"] as? Int, 36)
        XCTAssertEqual(slow["animated"] as? Bool, true)
        XCTAssertLessThan(slow["p_value"] as? Double ?? 1, 0.01)
        XCTAssertGreaterThan(slow["head_p50_ms"] as? Double ?? 0, 400)

        // JUnit: the new leak and the regression are the two failures.
        let junit = TestSupport.run(["compare", "--db", db, "--base-build", Self.base, "--head-build", Self.head, "--format", "junit"]).out
        XCTAssertEqual(junit.components(separatedBy: "<failure ").count - 1, 2, junit)
        XCTAssertTrue(junit.contains("name=\"LC301|com.example.shop|ReviewsViewController|pop\" time=\"0\">\n      <failure"), junit)
        XCTAssertTrue(junit.contains("<testcase classname=\"GalleryViewController\" name=\"animated\" time=\"0\">\n      <failure type=\"timing-regression\""), junit)
        try? junit.write(toFile: dir + "/compare-junit.xml", atomically: true, encoding: .utf8)

        // The same comparison with each build in its own database.
        let (baseDB, headDB) = (dir + "/base.db", dir + "/head.db")
        let baseFiles = (0..<10).map { dir + "/base-\($0).jsonl" }, headFiles = (0..<12).map { dir + "/head-\($0).jsonl" }
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", baseDB] + baseFiles).status, 0)
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", headDB] + headFiles).status, 0)
        let split = TestSupport.run(["compare", "--db", headDB, "--base-db", baseDB, "--base-build", Self.base,
                                     "--head-build", Self.head, "--format", "json"])
        XCTAssertEqual(split.out, r.out, "two databases compare like one")
        XCTAssertEqual(TestSupport.run(["compare", "--db", headDB, "--base-build", Self.base, "--head-build", Self.head]).status, 66,
                       "the base build is not in the head's database")

        let muted = TestSupport.run(["compare", "--db", db, "--base-build", Self.base, "--head-build", Self.head, "--fail-on", "never"])
        XCTAssertEqual(muted.status, 0, "--fail-on never mutes both reasons")
        XCTAssertTrue(muted.out.contains("REGRESSION"), muted.out)
        let markdown = TestSupport.run(["compare", "--db", db, "--base-build", Self.base, "--head-build", Self.head, "--format", "markdown"])
        XCTAssertTrue(markdown.out.contains("**1 new**, 1 fixed, 1 persisting; **1 timing regression**"), markdown.out)
        XCTAssertTrue(markdown.out.contains("| `GalleryViewController` (animated) |"), markdown.out)
    }

    func testBaselineOnTheBaseBuildFailsTheHeadOnTheNewLeakOnly() throws {
        loadTwoBuilds()
        let file = dir + "/baseline.json"
        let written = TestSupport.run(["baseline", "--db", db, "--build", Self.base, "-o", file])
        XCTAssertEqual(written.status, 0, written.err)
        let again = TestSupport.run(["baseline", "--db", db, "--build", Self.base, "-o", "-"])
        XCTAssertEqual(again.out, try String(contentsOfFile: file, encoding: .utf8), "same database and filters: same bytes")

        let r = TestSupport.run(["report", "--db", db, "--build", Self.head, "--baseline", file, "--format", "json"])
        XCTAssertEqual(r.status, 1, "the new leak fails the gate")
        let doc = try json(r.out)
        let findings = try XCTUnwrap(doc["findings"] as? [[String: Any]])
        let newKeys = Set(findings.filter { $0["baseline"] as? String == "new" }.map { $0["identity_key"] as! String })
        XCTAssertEqual(newKeys, ["LC301|com.example.shop|ReviewsViewController|pop"])
        XCTAssertEqual(Set(findings.filter { $0["baseline"] as? String == "known" }.map { $0["identity_key"] as! String }),
                       ["LC101|com.example.shop|BannerViewController|RootVC"])
        let summary = try XCTUnwrap(doc["baseline"] as? [String: Any])
        XCTAssertEqual(summary["file"] as? String, file)
        XCTAssertEqual(summary["new"] as? Int, 4)
        XCTAssertEqual(summary["known"] as? Int, 2)
        XCTAssertEqual((summary["fixed"] as? [[String: Any]])?.map { $0["identity_key"] as! String },
                       ["LC301|com.example.shop|CartViewController|pop"])
        // JUnit: only the new identity fails; SARIF marks it new.
        let junit = TestSupport.run(["report", "--db", db, "--build", Self.head, "--baseline", file, "--format", "junit"]).out
        XCTAssertEqual(junit.components(separatedBy: "<failure ").count - 1, 1, junit)
        XCTAssertTrue(junit.contains("name=\"LC301|com.example.shop|ReviewsViewController|pop\" time=\"0\">\n      <failure"), junit)
        try FileManager.default.createDirectory(atPath: dir + "/App", withIntermediateDirectories: true)
        try "final class ReviewsViewController: UIViewController {}\n".write(toFile: dir + "/App/Reviews.swift", atomically: true, encoding: .utf8)
        let sarif = TestSupport.run(["report", "--db", db, "--build", Self.head, "--baseline", file, "--format", "sarif",
                                     "--source-root", dir + "/App"]).out
        XCTAssertTrue(sarif.contains("\"baselineState\":\"new\""), sarif)
        XCTAssertTrue(sarif.contains("\"baseline_state\":\"unchanged\""), "a known identity without a file says so in its notification")

        // Accepting the new leak into the baseline (the head's baseline has its entry) passes the gate.
        let headEntries = TestSupport.run(["baseline", "--db", db, "--build", Self.head, "-o", "-"]).out
        let leak = try XCTUnwrap(headEntries.split(separator: "\n").first { $0.contains("ReviewsViewController|pop") })
        var text = try String(contentsOfFile: file, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"entries\":[\n", with: "\"entries\":[\n" + leak.trimmingCharacters(in: CharacterSet(charactersIn: ",")) + ",\n")
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let accepted = TestSupport.run(["report", "--db", db, "--build", Self.head, "--baseline", file])
        XCTAssertEqual(accepted.status, 0, accepted.out)
        XCTAssertEqual(TestSupport.run(["report", "--db", db, "--build", Self.head]).status, 1, "without the baseline every leak fails")
    }

    /// Identities of one rule and class that differ only by app or by a part of their key (here
    /// the host) are rows that tell what sets them apart, not look-alikes told apart by a hash.
    func testCompareRowsOfOneRuleAndClassShowWhatSetsThemApart() throws {
        var lines = TraceBuilder(sid: "B", build: "1").lines
        for (sid, app, host) in [("H1", "com.a", "HostOne"), ("H2", "com.b", "HostOne"), ("H3", "com.a", "HostTwo")] {
            var b = TraceBuilder(sid: sid, app: app, build: "2")
            b.vc(2, "init", "0xh", "\"cls\":\"\(host)\"")
            b.vc(3, "init", "0xo", #""cls":"OrphanVC""#)
            b.vc(4, "viewAttached", "0xo", #""host":"0xh""#)
            lines += b.lines
        }
        TestSupport.writeLines(lines, to: dir + "/apart.jsonl")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, dir + "/apart.jsonl"]).status, 0)
        for format in ["text", "markdown"] {
            let r = TestSupport.run(["compare", "--db", db, "--base-build", "1", "--head-build", "2", "-f", format, "--fail-on", "never"])
            XCTAssertEqual(r.status, 0, r.err)
            let rows = r.out.split(separator: "\n").filter { $0.contains("LC101") && $0.contains("OrphanVC") && !$0.contains("e.g.") }
            XCTAssertEqual(rows.count, 3, "\(format): \(r.out)")
            let withoutHash = Set(rows.map { $0.replacingOccurrences(of: #"[0-9a-f]{16}"#, with: "", options: .regularExpression) })
            XCTAssertEqual(withoutHash.count, 3, "\(format): rows that only the hash tells apart:\n\(rows.joined(separator: "\n"))")
            for (app, host) in [("com.a", "HostOne"), ("com.b", "HostOne"), ("com.a", "HostTwo")] {
                XCTAssertTrue(rows.contains { $0.contains(app) && $0.contains(host) }, "\(format): no row of \(app) in \(host):\n\(r.out)")
            }
        }
    }
}

/// A tiny deterministic generator for test data.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E3779B97F4A7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9
        z = (z ^ (z >> 27)) &* 0x94D049BB133111EB
        return z ^ (z >> 31)
    }
}
