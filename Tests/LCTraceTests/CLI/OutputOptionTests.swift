import Foundation
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

/// `-o/--output FILE` of `report` for every format, and the same behaviour for `baseline`:
/// the document in the file exactly as standard output would have it, nothing on standard
/// output, the exit status unchanged, a file that cannot be written refused with 74 and
/// nothing left under its name.
final class OutputOptionTests: TemporaryDirectoryTestCase {
    override func setUp() {
        super.setUp()
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, TestSupport.root.appendingPathComponent("SampleTraces").path]).status, 0)
    }

    func testEveryFormatOfReportGoesToTheFileAsItWouldToStandardOutput() throws {
        XCTAssertTrue(OutputFormats.report.ids.contains("html"))
        for format in OutputFormats.report.ids {
            let file = dir + "/report.\(format)"
            let stdout = TestSupport.run(["report", "--db", db, "-f", format])
            let written = TestSupport.run(["report", "--db", db, "-f", format, "-o", file])
            XCTAssertEqual(written.status, 1, "\(format): findings at error still fail the gate")
            XCTAssertEqual(stdout.status, 1, format)
            XCTAssertEqual(written.out, "", "\(format): nothing on standard output")
            XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8), stdout.out, format)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.contains(".tmp") }, [], "no temporary left")
        }
        // `--output` is the long form, and `-` is standard output.
        let long = TestSupport.run(["report", "--db", db, "--fail-on", "never", "--output", dir + "/long.txt"])
        XCTAssertEqual(long.status, 0)
        XCTAssertTrue(try String(contentsOfFile: dir + "/long.txt", encoding: .utf8).hasPrefix("lctrace report · 9 sessions"))
        XCTAssertTrue(TestSupport.run(["report", "--db", db, "--fail-on", "never", "-o", "-"]).out.hasPrefix("lctrace report · 9 sessions"))
    }

    func testAFileThatCannotBeWrittenIsRefusedAndNothingIsLeft() throws {
        for command in [["report", "-f", "html"], ["report", "-f", "json"], ["baseline"]] {
            let target = dir + "/no/such/dir/out"
            let r = TestSupport.run(command + ["--db", db, "-o", target])
            XCTAssertEqual(r.status, 74, "\(command): \(r.err)")
            XCTAssertTrue(r.err.contains("cannot write '\(target)': no such file or directory"), r.err)
            XCTAssertFalse(FileManager.default.fileExists(atPath: target))
        }
        // An empty selection fails before anything is written, and leaves no file.
        let file = dir + "/empty.html"
        XCTAssertEqual(TestSupport.run(["report", "--db", db, "--build", "nope", "-f", "html", "-o", file]).status, 66)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.contains(".tmp") }, [])
    }

    func testBaselineWritesThroughTheSameOutput() throws {
        let file = dir + "/b.json"
        let r = TestSupport.run(["baseline", "--db", db, "-o", file])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8), TestSupport.run(["baseline", "--db", db, "-o", "-"]).out)
        XCTAssertEqual(r.out, "")
    }

    func testAnHTMLReportOfAnEmptySelectionIsAPageThatSaysSo() throws {
        let file = dir + "/empty.html"
        let r = TestSupport.run(["report", "--db", db, "--build", "nope", "--allow-empty", "-f", "html", "-o", file])
        XCTAssertEqual(r.status, 0, r.err)
        let html = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertTrue(html.contains("<div><dt>sessions</dt><dd>0</dd></div>"))
        XCTAssertTrue(html.contains("<p>No findings.</p>"))
        XCTAssertTrue(html.hasSuffix("</html>\n"))
    }
}
