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
import CHeapProbe

/// Baseline files: written stable and sorted, read strictly (a bad file is an error naming
/// the file and the problem, never an empty baseline), notes kept across rewrites.
final class BaselineTests: TemporaryDirectoryTestCase {
    func loadSamples() {
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, TestSupport.root.appendingPathComponent("SampleTraces").path]).status, 0)
    }

    func testTheFileIsSortedOneEntryPerIdentityWithTheDocumentedKeys() throws {
        loadSamples()
        let file = dir + "/b.json"
        let r = TestSupport.run(["baseline", "--db", db, "-o", file])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.err.hasPrefix("Wrote \(file): 36 identities of 36 findings"), r.err)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertTrue(text.hasPrefix("{\"version\":1,\"tool\":\"lctrace \(CLI.version)\",\"entries\":[\n  {\"identity\":"), text)
        let doc = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let entries = try XCTUnwrap(doc["entries"] as? [[String: Any]])
        XCTAssertEqual(entries.count, 36)
        let keys = entries.map { $0["identity_key"] as! String }
        XCTAssertEqual(keys, keys.sorted())
        XCTAssertEqual(Set(keys).count, keys.count)
        XCTAssertEqual(Set(entries[0].keys), ["identity", "identity_key", "rule", "severity", "class", "occurrences", "sessions",
                                              "first_build", "last_build", "note"])
        let leak = try XCTUnwrap(entries.first { $0["identity_key"] as? String == "LC301|com.example.shop|ArticleViewController|pop" })
        XCTAssertEqual(leak["occurrences"] as? Int, 1)
        XCTAssertEqual(leak["first_build"] as? String, "816")
        XCTAssertEqual(leak["class"] as? String, "ArticleViewController")
        XCTAssertEqual(leak["note"] as? String, "")
        // Byte-identical when written again, and after the findings are rebuilt.
        XCTAssertEqual(TestSupport.run(["analyze", "--all", "--db", db]).status, 0)
        XCTAssertEqual(TestSupport.run(["baseline", "--db", db, "-o", "-"]).out, text)
    }

    func testNotesAreKeptWhenTheBaselineIsWrittenAgain() throws {
        loadSamples()
        let file = dir + "/b.json"
        XCTAssertEqual(TestSupport.run(["baseline", "--db", db, "-o", file]).status, 0)
        var text = try String(contentsOfFile: file, encoding: .utf8)
        let marker = "\"identity_key\":\"LC502|com.example.mail\""
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.contains(marker) })
        text = text.replacingOccurrences(of: String(line), with: line.replacingOccurrences(of: "\"note\":\"\"", with: "\"note\":\"JIRA-12: scene manifest\""))
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(TestSupport.run(["baseline", "--db", db, "-o", file]).status, 0)
        XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8), text, "the note survives, nothing else changes")
    }

    func testAFileThatIsNotAValidBaselineIsRefusedNamingTheFileAndTheProblem() throws {
        loadSamples()
        let good = FindingIdentity.hash("LC502|com.example.mail")
        let cases: [(String, String)] = [
            ("not json at all", "not a JSON object"),
            ("[1, 2]", "not a JSON object"),
            (#"{"version":2,"entries":[]}"#, "version 2"),
            (#"{"version":"1","entries":[]}"#, #"version "1" is a string (this lctrace reads baseline version 1, the number)"#),
            (#"{"version":1.5,"entries":[]}"#, "version 1.5 (this lctrace reads baseline version 1)"),
            (#"{"version":1,"entries":{}}"#, "no \"entries\" array"),
            (#"{"version":1,"entries":[3]}"#, "entry 1 is not an object"),
            (#"{"version":1,"entries":["#, "not a JSON object"),
            (#"{"version":1,"entries":[]} trailing"#, "not a JSON object"),
            (#"{"version":1,"entries":"#, "not a JSON object"),
            (#"{"entries":[]}"#, "no \"version\""),
            (#"{"version":1}"#, "no \"entries\" array"),
            (#"{"version":1,"entries":[{"identity_key":"LC502|com.example.mail"}]}"#, "entry 1 has no \"identity\""),
            (#"{"version":1,"entries":[{"identity":"\#(good)"}]}"#, "entry 1 has no \"identity_key\""),
            (#"{"version":1,"entries":[{"identity":"0123456789abcdef","identity_key":"LC502|com.example.mail"}]}"#,
             "entry 1: identity 0123456789abcdef is not the hash of its identity_key 'LC502|com.example.mail' (expected \(good))"),
        ]
        for (i, (text, problem)) in cases.enumerated() {
            let file = dir + "/bad-\(i).json"
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            let r = TestSupport.run(["report", "--db", db, "--baseline", file])
            XCTAssertEqual(r.status, 64, text)
            XCTAssertTrue(r.err.hasPrefix("Error: baseline \(file): \(problem)"), "\(text): \(r.err)")
            XCTAssertEqual(r.out, "", "no report on a bad baseline")
            let overwrite = TestSupport.run(["baseline", "--db", db, "-o", file])
            XCTAssertEqual(overwrite.status, 64, "an existing file that is not a baseline is not overwritten")
            XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8), text)
        }
        let missing = TestSupport.run(["report", "--db", db, "--baseline", dir + "/none.json"])
        XCTAssertEqual(missing.status, 64)
        XCTAssertTrue(missing.err.contains("baseline \(dir)/none.json: no such file"), missing.err)
        // Any layout of the same JSON reads the same: one line, or pretty-printed with the keys
        // in another order, an escaped key and unknown keys of every kind.
        let layouts = [
            #"{"version":1,"tool":"x","entries":[{"identity":"\#(good)","identity_key":"LC502|com.example.mail"}]}"#,
            "{\n  \"entries\" : [\n    {\n      \"extra\" : {\"a\":[1,2,{\"b\":null}]},\n      \"identity_key\" : \"LC502|com.example.mail\",\n"
                + "      \"\\u0069dentity\" : \"\(good)\", \"occurrences\": 2.5, \"note\": \"t\\u00e9\"\n    }\n  ],\n  \"version\" : 1, \"x\": true\n}\n",
        ]
        for (i, text) in layouts.enumerated() {
            let valid = dir + "/ok-\(i).json"
            try text.write(toFile: valid, atomically: true, encoding: .utf8)
            let r = TestSupport.run(["report", "--db", db, "--baseline", valid, "--scene", "--format", "json"])
            XCTAssertEqual(r.status, 0, "the only error of the scene family is known: \(r.err)")
            XCTAssertTrue(r.out.contains("\"baseline\":{\"file\":\(JSONText.quoted(valid)),\"new\":5,\"known\":1,\"fixed\":[]}"), r.out)
        }
    }

    /// Issue 25 item 14: a 100 MB baseline took 1.18 GB. What a read baseline keeps per entry
    /// is where its values are in the mapped file, not copies of them: the heap grows by about
    /// half the file's size (80 bytes a record, 16 of index, the array's slack), where the
    /// entries' strings took about one and a half times the file; every entry reads back as written.
    func testAReadBaselineKeepsLessThanThreeQuartersOfItsSizeOnTheHeap() throws {
        var entries: [BaselineEntry] = []
        for n in 0..<20_000 {
            let key = "LC301|com.example.shop|Feature\(n)ViewController|UINavigationController|path-\(n)"
            entries.append(BaselineEntry(identity: FindingIdentity.hash(key), identityKey: key, rule: "LC301", severity: "error",
                                         cls: "Feature\(n)ViewController", occurrences: n % 7 + 1, sessions: n % 3 + 1,
                                         firstBuild: "81\(n % 10)", lastBuild: "82\(n % 10)",
                                         note: n % 10 == 0 ? "accepted: SHOP-\(n) \u{1F600} \"quoted\"" : ""))
        }
        let file = dir + "/big.json"
        try Baseline.render(entries).write(toFile: file, atomically: true, encoding: .utf8)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        let heapBefore = lctrace_heap_in_use()
        let baseline = try Baseline.read(file)
        let grown = Int(lctrace_heap_in_use()) - Int(heapBefore)
        try XCTSkipIf(heapBefore == 0, "no heap statistics on this platform")
        XCTAssertLessThan(grown, size * 3 / 4, "\(grown) bytes of heap for a \(size)-byte baseline")
        XCTAssertEqual(baseline.entries.count, entries.count)
        XCTAssertEqual(Array(baseline.entries), entries)
        XCTAssertTrue(baseline.contains(identity: entries[12_345].identity))
        XCTAssertFalse(baseline.contains(identity: "0123456789abcdef"))
        XCTAssertEqual(baseline.note(ofIdentity: entries[10].identity), entries[10].note)
    }

    func testTextPutsNewFindingsFirstWithAMarkerAndListsTheFixedOnes() throws {
        loadSamples()
        let file = dir + "/b.json"
        let ghost = "LC301|com.example.shop|GoneViewController|pop"
        try "{\"version\":1,\"entries\":[{\"identity\":\"\(FindingIdentity.hash(ghost))\",\"identity_key\":\"\(ghost)\",\"rule\":\"LC301\",\"class\":\"GoneViewController\"},{\"identity\":\"\(FindingIdentity.hash("LC502|com.example.mail"))\",\"identity_key\":\"LC502|com.example.mail\"}]}"
            .write(toFile: file, atomically: true, encoding: .utf8)
        let r = TestSupport.run(["report", "--db", db, "--baseline", file])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.out.contains("35 new findings (35 identities), 1 known, 1 baseline entry not seen (fixed)"), r.out)
        XCTAssertTrue(r.out.contains("  NEW LC101 error MiniPlayerViewController ×1 in 1 session"), r.out)
        XCTAssertFalse(r.out.contains("NEW LC502"), "known identities get no marker")
        XCTAssertTrue(r.out.contains("In the baseline, not seen (fixed)") && r.out.contains(ghost), r.out)
        // A baseline entry of a family not reported is out of view, not fixed.
        let orphans = TestSupport.run(["report", "--db", db, "--baseline", file, "--orphans", "--format", "json"])
        XCTAssertTrue(orphans.out.contains("\"fixed\":[]"), orphans.out)
    }
}
