import XCTest
@testable import LCTraceCLI

/// Every report and compare format on SampleTraces, compared with golden files
/// (`Tests/LCTraceTests/Report/Golden`, re-recorded with `LCTRACE_RECORD=1`): an output that
/// changes by accident fails here, whichever reporter or shared writer changed it. The
/// database's temporary path is written `$DB` in the files.
final class ReportGoldenTests: SampleDatabaseTestCase {
    func output(_ args: [String], status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) -> String {
        let r = TestSupport.run(args + ["--db", db])
        XCTAssertEqual(r.status, status, r.err, file: file, line: line)
        return r.out.replacingOccurrences(of: db, with: "$DB")
    }

    /// The files say `$ROOT` for whatever comes before `/SampleTraces/` (the checkout), on
    /// both sides, so they compare in any checkout.
    static func anyCheckout(_ text: String) -> String {
        text.replacingOccurrences(of: #"/[^\s"'<>=]*/SampleTraces/"#, with: "$ROOT/SampleTraces/", options: .regularExpression)
    }

    func testTextReport() {
        Golden.check(output(["report", "--fail-on", "never"]), "report.txt", steady: Self.anyCheckout)
    }

    func testTextReportOfOneFamilyWithGaps() {
        Golden.check(output(["report", "--gaps", "--fail-on", "never"]), "report-gaps.txt")
    }

    func testMachineFormats() {
        for format in ["json", "csv", "sarif", "junit"] {
            Golden.check(output(["report", "-f", format, "--fail-on", "never"]), "report.\(format)", steady: Self.anyCheckout)
        }
    }

    func testEveryCompareFormat() {
        for (format, suffix) in [("text", "txt"), ("json", "json"), ("markdown", "md"), ("junit", "junit")] {
            let out = output(["compare", "--base-build", "812", "--head-build", "816", "-f", format, "--fail-on", "never"])
            Golden.check(out, "compare.\(suffix)")
        }
    }

    func testIngestSummaryFormats() throws {
        let scratch = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        for format in ["text", "json"] {
            let target = scratch + "/\(format).db"
            let r = TestSupport.run(["ingest", "--db", target, "-f", format, TestSupport.root.appendingPathComponent("SampleTraces").path])
            XCTAssertEqual(r.status, 0, r.err)
            // Times, rates and how many sessions the analysis while loading took differ from
            // run to run: they are written as `#`.
            let steady = r.out.replacingOccurrences(of: TestSupport.root.path, with: "$ROOT").replacingOccurrences(of: scratch, with: "$SCRATCH")
                .replacingOccurrences(of: #"[0-9]+\.[0-9]+ s\b|"seconds":[0-9.]+|[0-9,]+ events/s|"events_per_second":[0-9]+"#,
                                      with: "#", options: .regularExpression)
                .replacingOccurrences(of: #"\([0-9,]+ while loading, [0-9,]+ after in #\)|in #(?=: )"#, with: "(#)",
                                      options: .regularExpression)
                .replacingOccurrences(of: #""while_loading":[0-9]+"#, with: "\"while_loading\":#", options: .regularExpression)
            Golden.check(steady, "ingest-summary.\(format == "text" ? "txt" : "json")")
        }
    }
}
