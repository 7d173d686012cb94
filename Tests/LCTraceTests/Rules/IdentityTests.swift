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

/// Finding identities (rules.md 1.1): the key each rule declares, the hash, and what makes two
/// findings the same defect; typed detail values.
final class IdentityTests: TemporaryDirectoryTestCase {
    func testHashIsTheFirstEightBytesOfSHA256InLowercaseHex() {
        XCTAssertEqual(FindingIdentity.hash("abc"), "ba7816bf8f01cfea", "SHA-256('abc') = ba7816bf8f01cfea414140de…")
        XCTAssertEqual(FindingIdentity.hash("LC502|com.example.mail").count, 16)
    }

    func testKeyPartsAreEscapedAndUnknownPartsAreQuestionMarks() {
        XCTAssertEqual(FindingIdentity.key(rule: "LC101", app: "a|b", parts: ["C%", nil]), "LC101|a%7Cb|C%25|?")
        XCTAssertEqual(FindingIdentity.key(rule: "LC904", app: nil, parts: ["not-json"]), "LC904|?|not-json")
    }

    /// The samples hold every rule: each key has exactly the parts of rules.md's table.
    func testEveryRuleBuildsTheKeyOfRulesMd() throws {
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, TestSupport.root.appendingPathComponent("SampleTraces").path]).status, 0)
        let q = try SQLiteDatabase(path: db, mode: .readOnly).prepare("SELECT DISTINCT identity_key, identity FROM findings ORDER BY 1")
        var keys: [String] = []
        while try q.step() {
            let key = q.text(0)!
            keys.append(key)
            XCTAssertEqual(q.text(1), FindingIdentity.hash(key))
        }
        XCTAssertEqual(keys, [
            "LC101|com.example.shop|MiniPlayerViewController|ProductListViewController",
            "LC102|com.example.shop|BannerViewController|CheckoutViewController",
            "LC102|com.example.shop|MiniPlayerViewController|ProductListViewController",
            "LC103|com.example.news|BannerViewController|InboxViewController",
            "LC104|com.example.news|BannerViewController|InboxViewController",
            "LC105|com.example.news|PromoCardViewController|InboxViewController",
            "LC201|com.example.mail|BannerViewController|deinit|visible",
            "LC202|com.example.mail|PromoCardViewController|viewWillAppear|visible",
            "LC203|com.example.shop|BannerViewController|viewWillAppear|appearing",
            "LC204|com.example.mail|BannerViewController|viewWillDisappear|hidden",
            "LC205|com.example.mail|PromoCardViewController|viewDidLoad|visible",
            "LC301|com.example.news|ImagePreviewViewController|dismiss",
            "LC301|com.example.news|OrderDetailViewController|pop",
            "LC301|com.example.shop|ArticleViewController|pop",
            "LC301|com.example.shop|CheckoutViewController|pop",
            "LC301|com.example.shop|LoginViewController|ancestor|UINavigationController",
            "LC301|com.example.shop|SettingsViewController|pop",
            "LC301|com.example.shop|UINavigationController|dismiss",
            "LC302|com.example.news|ArticleViewController|pop",
            "LC401|com.example.shop|OrderDetailViewController|animated",
            "LC402|com.example.shop|OrderDetailViewController|animated",
            "LC501|com.example.mail|appDidBecomeActive",
            "LC501|com.example.news|appDidBecomeActive",
            "LC501|com.example.news|appDidEnterBackground",
            "LC501|com.example.news|appWillEnterForeground",
            "LC501|com.example.news|appWillResignActive",
            "LC502|com.example.mail",
            "LC901|com.example.shop",
            "LC902|com.example.shop|?",
            "LC903|com.example.shop",
            // (1.2) The file's sessions are of one app: its findings name it.
            "LC904|com.example.shop|bad-value", "LC904|com.example.shop|missing-key", "LC904|com.example.shop|newer-version",
            "LC904|com.example.shop|not-json", "LC904|com.example.shop|not-utf8", "LC904|com.example.shop|wrong-type",
        ])
    }

    /// An orphan of `cls` in host `host`, at other addresses and times in each session.
    func orphan(_ sid: String, build: String, address: String, at: Double, host: String = "HostVC") -> Finding? {
        var b = TraceBuilder(sid: sid, build: build, device: sid.hasPrefix("a") ? "iPhone16,2" : "iPad14,5")
        b.vc(at, "init", "0xh\(address)", "\"cls\":\"\(host)\"")
        b.vc(at + 1, "init", address, #""cls":"BadgeVC""#)
        b.vc(at + 2, "viewAttached", address, "\"host\":\"0xh\(address)\"")
        b.add(at + 5000, "sessionEnd", #""reason":"stopped""#)
        return b.model().findings.first { $0.rule == "LC101" }
    }

    func testTheSameDefectHasOneIdentityWhateverTheSessionAddressTimeDeviceOrBuild() throws {
        let a = try XCTUnwrap(orphan("a-session", build: "7", address: "0x1", at: 100))
        let b = try XCTUnwrap(orphan("b-session", build: "9", address: "0x2222", at: 9000))
        XCTAssertNotEqual(a.session, b.session)
        XCTAssertEqual(a.identityKey, "LC101|com.example.app|BadgeVC|HostVC")
        XCTAssertEqual(a.identity, b.identity)
        XCTAssertEqual([a.app, a.build, a.device], ["com.example.app", "7", "iPhone16,2"])
        let other = try XCTUnwrap(orphan("c-session", build: "7", address: "0x1", at: 100, host: "OtherHostVC"))
        XCTAssertNotEqual(other.identity, a.identity, "another host class is another defect")
    }

    func testDetailValuesKeepTheirJSONTypes() throws {
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, TestSupport.root.appendingPathComponent("SampleTraces").path]).status, 0)
        let r = TestSupport.run(["report", "--db", db, "--format", "json", "--fail-on", "never"])
        let doc = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let findings = try XCTUnwrap(doc["findings"] as? [[String: Any]])
        func detail(_ rule: String) throws -> [String: Any] {
            try XCTUnwrap(findings.first { $0["rule"] as? String == rule }?["detail"] as? [String: Any])
        }
        XCTAssertTrue(try detail("LC301")["retained_ms"] is Int)
        XCTAssertTrue(try detail("LC301")["how"] is String)
        XCTAssertTrue(try detail("LC401")["gap_ms"] is Double)
        XCTAssertEqual(try detail("LC401")["animated"] as? Bool, true)
        XCTAssertTrue(try detail("LC904")["lines"] is [Int])
        XCTAssertTrue(r.out.contains("\"animated\":true"), "a boolean, not \"true\"")
        let leak = try XCTUnwrap(findings.first { $0["rule"] as? String == "LC301" })
        for key in ["identity", "identity_key", "app", "build", "device"] { XCTAssertNotNil(leak[key] as? String, key) }
        // Stored typed: SQL can compare numbers.
        let slow = TestSupport.run(["query", "--db", db, "-f", "csv", "SELECT count(*) FROM findings WHERE json_extract(detail, '$.retained_ms') > 5000"])
        XCTAssertEqual(slow.out, "count(*)\n7\n", "the seven LC301 leaks, held 16 s to 77 s")
    }

    func testDetailRoundTripsThroughItsStoredText() {
        let detail: [String: DetailValue] = ["s": "a \"quoted\" \\ ü", "n": .int(-42), "d": .double(1.5), "b": .bool(false),
                                             "l": .ints([1, 20, 300]), "e": .ints([]), "z": .double(1200)]
        XCTAssertEqual(DetailValue.decode(DetailValue.encode(detail)), detail)
        XCTAssertEqual(DetailValue.decode("{}"), [:])
        XCTAssertNil(DetailValue.decode("not json"))
    }

    func testEveryRuleDescribesItselfForSARIF() {
        for rule in RuleCatalog.all {
            XCTAssertGreaterThan(rule.explanation.count, 80, rule.id)
            XCTAssertGreaterThan(rule.help.count, 30, rule.id)
        }
    }
}
