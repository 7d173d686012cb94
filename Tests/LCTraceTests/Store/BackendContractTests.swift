import XCTest
@testable import LCTraceStore
@testable import LCTracePostgreSQL
@testable import LCTrace
@testable import LCTraceCLI

/// The contract every storage backend keeps, run against each of them: what a user sees
/// through the commands and the documented views must not depend on where the data lives. A
/// new backend (docs/architecture.md, "Add a storage backend") adds one subclass with one
/// test method that runs `cases`; a case it fails is named in the failure.
///
/// (XCTest on Linux discovers only the test methods a class declares itself, so the cases
/// are a list each backend runs, not inherited test methods.)
class BackendContractTestCase: PostgreSQLTestCase {
    /// A new, empty database of the backend under test.
    func freshLocation(_ name: String) throws -> String { preconditionFailure("a backend's suite names its databases") }

    override func setUpWithError() throws {}   // the PostgreSQL suite asks for its server itself

    /// Every case of the contract, by name.
    static let cases: [(name: String, run: @Sendable (BackendContractTestCase) throws -> Void)] = [
        ("the same corpus gives the reference's content", { try $0.sameContentAsTheReference() }),
        ("loading the same files again adds nothing", { try $0.ingestIsIdempotent() }),
        ("every report format prints its golden file", { try $0.reportsPrintTheGoldenFiles() }),
        ("query reads and never writes", { try $0.queryOnlyReads() }),
        ("a database that is not there is refused", { try $0.aMissingDatabaseIsRefused() }),
        ("rejected lines become LC904 findings once", { try $0.rejectsBecomeFileFindingsOnce() }),
        ("a duplicate written by another JSON writer is no conflict (1.2)", { try $0.reencodedDuplicatesAreNoConflict() }),
        ("the attrs the rules read come back from the database (1.2)", { try $0.attrsTheRulesReadComeBack() }),
    ]

    /// Runs every case on fresh databases, and says which failed.
    func runContract(file: StaticString = #filePath, line: UInt = #line) {
        for c in Self.cases {
            let before = testRun?.failureCount ?? 0
            do { try c.run(self) } catch { XCTFail("\(c.name): \(error)", file: file, line: line) }
            if let failures = testRun?.failureCount, failures > before {
                XCTFail("the backend breaks the contract: \(c.name)", file: file, line: line)
            }
        }
    }

    private var samples: String { TestSupport.root.appendingPathComponent("SampleTraces").path }

    // MARK: The cases

    /// A corpus with rotations, gzip members, a copy, a cut file, overlapping lines and bad
    /// lines gives the same sessions, events, rejects, model rows and findings as SQLite does.
    func sameContentAsTheReference() throws {
        let input = try corpus("contract", seed: 31, sessions: 16)
        let reference = dir + "/reference.db", tested = try freshLocation("content")
        let a = TestSupport.run(["ingest", "-q", "--db", reference, input])
        let b = TestSupport.run(["ingest", "-q", "--db", tested, input])
        XCTAssertEqual(a.status, 65, "the cut file is damaged: \(a.err)")
        XCTAssertEqual(b.status, a.status, b.err)
        let left = try TestSupport.logicalDump(reference), right = try TestSupport.logicalDump(location: tested)
        XCTAssertGreaterThan(left.count, 100_000)
        XCTAssertTrue(left.contains("conflict") || left.contains("damage"), "the corpus exercises rejects")
        if left != right {
            let l = left.split(separator: "\n"), r = right.split(separator: "\n")
            let first = zip(l, r).enumerated().first { $0.element.0 != $0.element.1 }
            XCTFail("dumps differ (\(l.count) vs \(r.count) lines), first at \(first?.offset ?? -1):\n\(first?.element.0 ?? "")\n\(first?.element.1 ?? "")")
        }
        for format in ["json", "csv", "sarif", "junit"] {
            let x = TestSupport.run(["report", "--db", reference, "--format", format, "--fail-on", "never"])
            let y = TestSupport.run(["report", "--db", tested, "--format", format, "--fail-on", "never"])
            XCTAssertEqual(x.out, y.out, "report --format \(format)")
        }
    }

    /// Every file is known the second time (none is read), and the content stays.
    func ingestIsIdempotent() throws {
        let db = try freshLocation("idempotent")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, samples]).status, 0)
        let once = try TestSupport.logicalDump(location: db)
        let again = TestSupport.run(["ingest", "-f", "json", "--db", db, samples])
        XCTAssertEqual(again.status, 0, again.err)
        XCTAssertTrue(again.out.contains(#""events":{"new":0,"#), again.out)
        XCTAssertEqual(try TestSupport.logicalDump(location: db), once)
    }

    /// SampleTraces' reports, text and machine formats, are the golden files of
    /// `ReportGoldenTests`, the database's name and the checkout's path aside.
    func reportsPrintTheGoldenFiles() throws {
        let db = try freshLocation("goldens")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, samples]).status, 0)
        for (args, golden) in [(["report"], "report.txt"), (["report", "-f", "json"], "report.json"),
                               (["report", "-f", "csv"], "report.csv"), (["report", "-f", "sarif"], "report.sarif"),
                               (["report", "-f", "junit"], "report.junit")] {
            let r = TestSupport.run(args + ["--fail-on", "never", "--db", db])
            XCTAssertEqual(r.status, 0, r.err)
            let shown = try Storage.kind(of: db).shown(db)
            let expected = try String(contentsOf: Golden.directory.appendingPathComponent(golden), encoding: .utf8)
            let actual = r.out.replacingOccurrences(of: Shell.word(shown), with: "$DB").replacingOccurrences(of: shown, with: "$DB")
            XCTAssertEqual(ReportGoldenTests.anyCheckout(actual), expected, golden)
        }
    }

    /// A query's rows come back; a write is refused (exit 64) and changes nothing.
    func queryOnlyReads() throws {
        let db = try freshLocation("query")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, samples]).status, 0)
        let count = TestSupport.run(["query", "--db", db, "-f", "csv", "SELECT count(*) AS n FROM events_v"])
        XCTAssertEqual(count.status, 0, count.err)
        XCTAssertEqual(count.out, "n\n3579\n")
        let write = TestSupport.run(["query", "--db", db, "DELETE FROM findings"])
        XCTAssertEqual(write.status, 64, write.err)
        XCTAssertEqual(TestSupport.run(["query", "--db", db, "-f", "csv", "SELECT count(*) AS n FROM findings_v"]).out, "n\n36\n")
    }

    /// Reading commands refuse a database that holds no lctrace schema (exit 74), naming it.
    func aMissingDatabaseIsRefused() throws {
        let db = try freshLocation("missing")
        let r = TestSupport.run(["report", "--db", db])
        XCTAssertEqual(r.status, 74, r.err)
        XCTAssertTrue(r.err.hasPrefix("Error: "), r.err)
    }

    /// A file of bad lines gives one LC904 finding per kind of problem, from the analysis:
    /// analysing again replaces them rather than adding copies.
    func rejectsBecomeFileFindingsOnce() throws {
        let db = try freshLocation("rejects")
        let file = dir + "/bad-\(UInt32.random(in: 0...UInt32.max)).jsonl"
        TestSupport.writeLines([#"{"v":1,"sid":"S","seq":0,"t":0,"ev":"session","wall":"2026-11-02T10:15:03Z","app":"com.example.shop"}"#,
                                "not json", #"{"v":1,"sid":"S","seq":1}"#, "also not json"], to: file)
        // A file of nothing but bad lines belongs to no session: its app is not known.
        TestSupport.writeLines(["not json", "{\"v\":1}", ""], to: file + ".only-bad.jsonl")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, file]).status, 0)
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, file + ".only-bad.jsonl"]).status, 65)
        let query = "SELECT identity_key, count(*) AS n FROM findings_v WHERE rule = 'LC904' GROUP BY identity_key ORDER BY 1"
        // (1.2) The identity names the app of the file's sessions when it is known.
        let expected = "identity_key,n\nLC904|?|missing-key,1\nLC904|?|not-json,1\nLC904|com.example.shop|missing-key,1\nLC904|com.example.shop|not-json,1\n"
        XCTAssertEqual(TestSupport.run(["query", "--db", db, "-f", "csv", query]).out, expected)
        XCTAssertEqual(TestSupport.run(["analyze", "--all", "--db", db]).status, 0)
        XCTAssertEqual(TestSupport.run(["query", "--db", db, "-f", "csv", query]).out, expected)
    }
}

extension BackendContractTestCase {
    /// (1.2) The same lines written again by another JSON writer (spaces after `,` and `:`,
    /// another key order, `402.0` for `402`, `\u0041` for `A`) are duplicates, not conflicts,
    /// and make no LC904; a line whose nested value really differs still is a conflict.
    func reencodedDuplicatesAreNoConflict() throws {
        let db = try freshLocation("reencoded")
        let sid = "S-reencoded-\(UInt32.random(in: 0...UInt32.max))"
        let head = #"{"v":1,"sid":"\#(sid)","#
        let first = [
            head + #""seq":0,"t":0,"ev":"session","wall":"2026-11-02T10:15:03Z","app":"com.example.shop","build":"812"}"#,
            head + #""seq":1,"t":100,"ev":"init","vc":"0xA","cls":"ProductViewController"}"#,
            head + #""seq":2,"t":200,"ev":"viewIsAppearing","vc":"0xA","animated":true,"bounds":[402,874],"traits":{"h":"compact","v":"regular","style":"dark"},"x-note":"A-1"}"#,
        ]
        let again = [
            #"{ "ev": "session", "seq": 0, "v": 1, "t": 0, "sid": "\#(sid)", "build": "812", "app": "com.example.shop", "wall": "2026-11-02T10:15:03Z" }"#,
            #"{ "cls": "ProductViewController", "vc": "0xA", "ev": "init", "t": 100, "seq": 1, "sid": "\#(sid)", "v": 1 }"#,
            #"{ "x-note": "A-1", "traits": { "style": "dark", "v": "regular", "h": "compact" }, "bounds": [ 402.0, 8.74e2 ], "animated": true, "vc": "0xA", "ev": "viewIsAppearing", "t": 200, "seq": 2, "sid": "\#(sid)", "v": 1 }"#,
        ]
        let conflicting = head + #""seq":2,"t":200,"ev":"viewIsAppearing","vc":"0xA","animated":true,"bounds":[402,875],"traits":{"h":"compact","v":"regular","style":"dark"},"x-note":"A-1"}"#
        TestSupport.writeLines(first, to: dir + "/first-\(sid).jsonl")
        TestSupport.writeLines(again, to: dir + "/again-\(sid).jsonl")
        TestSupport.writeLines([conflicting], to: dir + "/conflict-\(sid).jsonl")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, dir + "/first-\(sid).jsonl"]).status, 0)
        let r = TestSupport.run(["ingest", "-f", "json", "--db", db, dir + "/again-\(sid).jsonl"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains(#""events":{"new":0,"duplicate":3,"conflicting":0}"#), r.out)
        XCTAssertEqual(r.err, "", "no warning about conflicts or session records")
        let lc904 = "SELECT count(*) AS n FROM findings_v WHERE rule = 'LC904'"
        XCTAssertEqual(TestSupport.run(["query", "--db", db, "-f", "csv", lc904]).out, "n\n0\n")
        let c = TestSupport.run(["ingest", "-f", "json", "--db", db, dir + "/conflict-\(sid).jsonl"])
        XCTAssertTrue(c.out.contains(#""events":{"new":0,"duplicate":0,"conflicting":1}"#), c.out)
        XCTAssertEqual(TestSupport.run(["query", "--db", db, "-f", "csv", lc904]).out, "n\n1\n")
    }
}

/// The embedded default keeps the contract.
final class SQLiteBackendContractTests: BackendContractTestCase {
    override func freshLocation(_ name: String) throws -> String { dir + "/\(name).db" }

    func testTheContract() { runContract() }
}

/// The team database keeps the contract (a real server: `LCTRACE_TEST_POSTGRES_URL`).
final class PostgreSQLBackendContractTests: BackendContractTestCase {
    override func setUpWithError() throws {
        guard let url = PGConnectionTests.url else {
            throw XCTSkip("no PostgreSQL server: set LCTRACE_TEST_POSTGRES_URL (.ci/run starts one)")
        }
        admin = try PGConnection(url: url)
    }

    override func freshLocation(_ name: String) throws -> String { try freshDatabase(name) }

    func testTheContract() { runContract() }
}

extension BackendContractTestCase {
    /// (1.2) `windowRoot`'s `old` and `init`'s `uikit` live in the stored attrs: the findings
    /// built from the database, at ingest (SQLite: from the rows the ingest kept) and by
    /// `analyze --all` (read back), are those of the session built in memory. The old root
    /// and its screen, let go by the root swap, leak; the search controller, known as one by
    /// its `uikit` key only, is never a leak.
    func attrsTheRulesReadComeBack() throws {
        let db = try freshLocation("attrs")
        var b = TraceBuilder()
        b.sid = "S-attrs-\(UInt32.random(in: 0...UInt32.max))"
        b.add(0, "session", #""wall":"2026-11-02T10:15:03Z","app":"com.example.shop","os":"iOS","osVersion":"27.1","sdk":"27.0""#)
        b.add(1, "sceneWillConnect", #""scene":"s1""#)
        b.add(2, "sceneDidBecomeActive", #""scene":"s1""#)
        b.vc(2, "init", "0xn", #""cls":"UINavigationController""#)
        b.vc(2, "init", "0xa", #""cls":"RootVC""#)
        b.vc(2, "addChild", "0xa", #""parent":"0xn""#)
        b.vc(2, "didMoveToParent", "0xa", #""parent":"0xn""#)
        for vc in ["0xn", "0xa"] { b.vc(4, "viewWillAppear", vc, #""animated":false"#) }
        for vc in ["0xn", "0xa"] { b.vc(5, "viewIsAppearing", vc, #""animated":false"#) }
        for vc in ["0xn", "0xa"] { b.vc(10, "viewDidAppear", vc, #""animated":false"#) }
        b.vc(900, "init", "0xs", #""cls":"ProductSearchController","uikit":"UISearchController""#)
        b.vc(1000, "present", "0xa", #""presented":"0xs","style":"automatic","animated":true"#)
        b.vc(1001, "viewWillAppear", "0xs", #""animated":true,"isBeingPresented":true"#)
        b.vc(1002, "viewIsAppearing", "0xs", #""animated":true"#)
        b.vc(1402, "viewDidAppear", "0xs", #""animated":true,"isBeingPresented":true"#)
        b.vc(2000, "dismiss", "0xs", #""animated":true"#)
        b.vc(2000, "viewWillDisappear", "0xs", #""animated":true,"isBeingDismissed":true"#)
        b.vc(2300, "viewDidDisappear", "0xs", #""animated":true,"isBeingDismissed":true"#)
        b.vc(3000, "init", "0xr", #""cls":"MainTabBarController""#)
        b.vc(3000, "windowRoot", "0xr", #""old":"0xn","scene":"s1""#)
        b.vc(3001, "viewWillAppear", "0xr", #""animated":false"#)
        b.vc(3002, "viewIsAppearing", "0xr", #""animated":false"#)
        b.vc(3010, "viewDidAppear", "0xr", #""animated":false"#)
        b.add(60_000, "sessionEnd", #""reason":"stopped""#)
        let inMemory = b.flagged(rules: ["LC201", "LC301", "LC302"])
        XCTAssertEqual(inMemory, ["LC301 0xa", "LC301 0xn"], "in memory")
        let file = dir + "/\(b.sid).jsonl"
        TestSupport.writeLines(b.lines, to: file)
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, file]).status, 0)
        func stored() throws -> [String] {
            let r = TestSupport.run(["report", "--db", db, "--format", "json", "--fail-on", "never"])
            XCTAssertEqual(r.status, 0, r.err)
            let doc = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
            return try XCTUnwrap(doc["findings"] as? [[String: Any]])
                .filter { ["LC201", "LC301", "LC302"].contains($0["rule"] as? String ?? "") }
                .map { "\($0["rule"]!) \($0["vc"]!)" }.sorted()
        }
        XCTAssertEqual(try stored(), inMemory, "analyzed by the ingest")
        XCTAssertEqual(TestSupport.run(["analyze", "--all", "--db", db]).status, 0)
        XCTAssertEqual(try stored(), inMemory, "analyzed again from the stored events")
    }
}
