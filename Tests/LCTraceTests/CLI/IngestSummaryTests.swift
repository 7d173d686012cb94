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

/// The ingest summary of a run over files loaded before: a count and the first few, every file
/// with --verbose, never a line per file.
final class IngestSummaryTests: TemporaryDirectoryTestCase {

    func testReingestSummarisesSkippedFiles() throws {
        let logs = dir + "/logs"
        try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: true)
        for i in 0..<40 {
            var b = TraceBuilder(sid: "S\(i)")
            b.vc(2, "init", "0xa", #""cls":"A""#)
            TestSupport.writeLines(b.lines, to: logs + String(format: "/f%02d.jsonl", i))
        }
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, logs]).status, 0)
        let again = TestSupport.run(["ingest", "--db", db, logs])
        XCTAssertEqual(again.status, 0, again.err)
        let skipped = again.out.split(separator: "\n").filter { $0.hasPrefix("  skipped") }
        XCTAssertEqual(skipped, ["  skipped   \(logs)/f00.jsonl: already loaded", "  skipped   \(logs)/f01.jsonl: already loaded",
                                 "  skipped   \(logs)/f02.jsonl: already loaded",
                                 "  skipped   37 more files already loaded (--verbose lists them)"])
        XCTAssertTrue(again.out.hasPrefix("Loaded 0 files (40 already loaded) in "), again.out)
        XCTAssertTrue(again.err.isEmpty, again.err)
        let verbose = TestSupport.run(["ingest", "--verbose", "--db", db, logs])
        XCTAssertEqual(verbose.out.split(separator: "\n").filter { $0.hasPrefix("  skipped") }.count, 40)
        XCTAssertFalse(verbose.out.contains("more files"))
        XCTAssertEqual(TestSupport.run(["ingest", "-v", "--db", db, logs]).out.split(separator: "\n").filter { $0.hasPrefix("  skipped") }.count, 40)
        // A copy under another name: named with the file it repeats.
        try FileManager.default.copyItem(atPath: logs + "/f05.jsonl", toPath: dir + "/copy.jsonl")
        let copy = TestSupport.run(["ingest", "--db", db, dir + "/copy.jsonl"])
        XCTAssertTrue(copy.out.contains("  skipped   \(dir)/copy.jsonl: same content as \(logs)/f05.jsonl, already loaded\n"), copy.out)
        // JSON lists every file whatever the options.
        let json = TestSupport.run(["ingest", "--db", db, "-f", "json", logs])
        let files = (try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as! [String: Any])["files"] as! [[String: Any]]
        XCTAssertEqual(files.count, 40)
        XCTAssertEqual(Set(files.map { $0["status"] as! String }), ["already-loaded"])
    }
}
