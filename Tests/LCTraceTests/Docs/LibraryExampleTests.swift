import XCTest
@testable import LCTraceCLI

/// docs/library.md's example is `Examples/LibraryExample/main.swift`, which the package
/// builds: the page shows that file exactly, and the built example works on SampleTraces.
final class LibraryExampleTests: TemporaryDirectoryTestCase {
    func testThePageShowsTheExampleThePackageBuilds() throws {
        let page = try String(contentsOf: TestSupport.root.appendingPathComponent("docs/library.md"), encoding: .utf8)
        let code = try String(contentsOf: TestSupport.root.appendingPathComponent("Examples/LibraryExample/main.swift"), encoding: .utf8)
        XCTAssertTrue(page.contains("```swift\n" + code + "```\n"), "docs/library.md must show Examples/LibraryExample/main.swift whole")
    }

    func testTheExampleLoadsReportsAndGates() throws {
        let binary = (TestSupport.binary as NSString).deletingLastPathComponent + "/lctrace-library-example"
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: binary), "the example is not built at \(binary)")
        let db = self.db
        let r = try TestSupport.process(binary, [db, TestSupport.root.appendingPathComponent("SampleTraces").path])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.hasPrefix("loaded 12 files, 3579 new events, 9 rejected lines\n"), r.out)
        // Every error finding of the samples is printed, and none of another severity.
        let expected = TestSupport.run(["query", "--db", db, "-f", "csv",
                                            "SELECT count(*) FROM findings_v WHERE severity = 'error'"]).out
        let errors = r.out.split(separator: "\n").filter { $0.hasPrefix("LC") }.count
        XCTAssertEqual("count(*)\n\(errors)\n", expected)
        XCTAssertTrue(r.out.hasSuffix("gate: fails\n"), "the samples hold error findings")
        let sarif = try String(contentsOfFile: db + ".sarif", encoding: .utf8)
        XCTAssertTrue(sarif.contains("\"version\":\"2.1.0\""), "a SARIF report was written")
    }
}
