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
import LCTraceGen

/// SampleTraces/: what `lctrace report --all` finds there is exactly the list in its README,
/// which is exactly the generator's answer key; and the generator still writes these bytes.
final class SampleTracesTests: TemporaryDirectoryTestCase {

    struct Row: Hashable, Comparable, CustomStringConvertible {
        var file: String, session: String, rule: String, vc: String, since: String
        /// As the README shows it (a `\|` there is a `|` here), its paths relative to the repository.
        var message: String
        static func < (a: Row, b: Row) -> Bool {
            (a.file, a.session, a.rule, a.vc, a.since, a.message) < (b.file, b.session, b.rule, b.vc, b.since, b.message)
        }
        var description: String { "\(file) \(rule) \(session.prefix(8)) \(vc)#\(since) \(message)" }
    }

    /// Rows of the README's findings table (between the markers).
    func readmeRows() throws -> [Row] {
        let text = try String(contentsOf: TestSupport.root.appendingPathComponent("SampleTraces/README.md"), encoding: .utf8)
        guard let start = text.range(of: "<!-- findings:begin -->"), let end = text.range(of: "<!-- findings:end -->") else {
            XCTFail("README lacks the findings markers"); return []
        }
        return text[start.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line in
            // Cells split at unescaped bars; the message is the last one, as written.
            let cells = line.replacingOccurrences(of: "\\|", with: "\u{1}").split(separator: "|")
                .map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\u{1}", with: "|") }
            guard cells.count >= 7, cells[0].hasSuffix(".gz`") || cells[0].hasSuffix(".jsonl`") else { return nil }
            func plain(_ cell: String) -> String { cell.replacingOccurrences(of: "`", with: "") }
            return Row(file: plain(cells[0]), session: plain(cells[1]), rule: cells[2], vc: plain(cells[4]), since: cells[5],
                       message: cells[6])
        }
    }

    func testReportFindsExactlyTheReadmeList() throws {
        let db = dir + "/s.db"
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        let ingest = TestSupport.run(["ingest", "--db", db, samples])
        XCTAssertEqual(ingest.status, 0, ingest.err)
        let report = TestSupport.run(["report", "--all", "--db", db, "--format", "json"])
        XCTAssertEqual(report.status, 1, "the samples hold errors")
        let doc = try JSONSerialization.jsonObject(with: Data(report.out.utf8)) as! [String: Any]
        // Which file each session lives in (its first file).
        let files = try SQLiteDatabase(path: db, mode: .readOnly)
        var fileOf: [String: String] = [:]
        let q = try files.prepare("""
            SELECT DISTINCT s.sid, f.path FROM sessions s, files f
            WHERE f.id = (SELECT min(id) FROM files WHERE path LIKE '%' || substr(s.sid, 1, 8) || '%')
            """)
        while try q.step() { fileOf[q.text(0)!] = (q.text(1)! as NSString).lastPathComponent }
        var found: [Row] = []
        for f in doc["findings"] as! [[String: Any]] {
            let session = f["session"] as? String ?? "-"
            let file = (f["file"] as? String).map { ($0 as NSString).lastPathComponent } ?? fileOf[session] ?? "with-bad-lines.jsonl"
            found.append(Row(file: file, session: session, rule: f["rule"] as! String,
                             vc: f["vc"] as? String ?? "-", since: (f["since"] as? Int).map(String.init) ?? "-",
                             message: (f["message"] as! String).replacingOccurrences(of: TestSupport.root.path + "/", with: "")))
        }
        XCTAssertEqual(found.sorted(), try readmeRows().sorted(), "re-record with scripts/record-sample-findings when the change is intended")
    }

    func testReadmeListIsTheGeneratorsAnswerKey() throws {
        let key = try JSONSerialization.jsonObject(with: Data(contentsOf: TestSupport.root.appendingPathComponent("SampleTraces.expected.json"))) as! [String: Any]
        func keys(_ name: String) -> Set<String> {
            Set((key[name] as! [[String: Any]]).map { "\($0["rule"]!) \($0["session"]!) \($0["vc"] as? String ?? "-") \(($0["since"] as? Int).map(String.init) ?? "-")" })
        }
        let expected = keys("expected").union(keys("also_acceptable_leaks"))
        let listed = Set(try readmeRows().filter { $0.rule != "LC904" }.map { "\($0.rule) \($0.session) \($0.vc) \($0.since)" })
        XCTAssertEqual(listed, expected)
        let mustNot = (key["must_not_flag"] as! [[String: Any]]).map { "\($0["session"]!) \($0["vc"]!) \($0["since"]!)" }
        let flagged = Set(try readmeRows().filter { $0.rule.hasPrefix("LC2") || $0.rule == "LC301" }.map { "\($0.session) \($0.vc) \($0.since)" })
        XCTAssertTrue(flagged.isDisjoint(with: mustNot), "a look-alike is flagged")
        XCTAssertGreaterThanOrEqual(mustNot.count, 15)
        // Every rule of rules.md 1.2 that a default report can produce appears at least once (a
        // rule added since needs no plant: docs/architecture.md, "Add a rule").
        let rules = Set(try readmeRows().map(\.rule))
        let rulesMd = ["LC101", "LC102", "LC103", "LC104", "LC105", "LC201", "LC202", "LC203", "LC204", "LC205",
                       "LC301", "LC302", "LC401", "LC402", "LC501", "LC502", "LC901", "LC902", "LC903", "LC904"]
        for rule in rulesMd {
            XCTAssertTrue(rules.contains(rule), "SampleTraces plants no \(rule)")
        }
    }

    func testGeneratorIsDeterministic() throws {
        let out = dir + "/again"
        let written = try CorpusWriter.writeSample(to: out)
        for file in written.files {
            let a = try Data(contentsOf: URL(fileURLWithPath: out + "/" + file))
            let b = try Data(contentsOf: TestSupport.root.appendingPathComponent("SampleTraces/" + file))
            XCTAssertEqual(a, b, "\(file) differs from SampleTraces: regenerate with lctrace-gen --sample SampleTraces")
        }
        let key = try String(contentsOf: TestSupport.root.appendingPathComponent("SampleTraces.expected.json"), encoding: .utf8)
        XCTAssertEqual(CorpusWriter.expectedJSON(written.labels), key, "the answer key differs: regenerate with lctrace-gen --sample SampleTraces")
        // The folder holds the traces and this README only: the key lives beside it.
        let inFolder = try FileManager.default.contentsOfDirectory(atPath: TestSupport.root.appendingPathComponent("SampleTraces").path)
        XCTAssertEqual(Set(inFolder), Set(written.files + ["README.md"]))
    }

    func testLC303WithALimitOnTheSamples() throws {
        let db = dir + "/s.db"
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, TestSupport.root.appendingPathComponent("SampleTraces").path]).status, 0)
        let r = TestSupport.run(["report", "--db", db, "--leaks", "--max-live", "ImageCellController=10", "--format", "csv", "--fail-on", "never"])
        let key = try JSONSerialization.jsonObject(with: Data(contentsOf: TestSupport.root.appendingPathComponent("SampleTraces.expected.json"))) as! [String: Any]
        let growth = (key["expected_with_max_live"] as! [[String: Any]])[0]
        XCTAssertTrue(r.out.contains("LC303,instance-growth,warning,\(growth["session"]!),\(growth["vc"]!),\(growth["since"]!),ImageCellController"), r.out)
    }
}
