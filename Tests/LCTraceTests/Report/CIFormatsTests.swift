import XCTest
#if canImport(FoundationXML)
import FoundationXML
#endif
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

/// SARIF and JUnit: their shape (every rule described, one result or testcase per identity,
/// fingerprints from the identity, the class's declaration with --source-root), and their
/// validity against the public schemas with validators from PyPI (skipped where absent).
final class CIFormatsTests: TemporaryDirectoryTestCase {
    func loadSamples() {
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, TestSupport.root.appendingPathComponent("SampleTraces").path]).status, 0)
    }

    func identities() throws -> Int {
        Int(try SQLiteDatabase(path: db, mode: .readOnly).scalarInt("SELECT count(DISTINCT identity) FROM findings") ?? 0)
    }

    /// A source tree with look-alikes of the declarations lctrace must find.
    func writeSources() throws -> String {
        let root = dir + "/App"
        let files: [String: String] = [
            "A/Extensions.swift": "extension ProductListViewController {}\nfinal class ProductListViewControllerCell: UITableViewCell {}\n",
            "B/ProductList.swift": "import UIKit\n\n@MainActor\npublic final class ProductListViewController: UIViewController {\n}\n",
            "C/Legacy.h": "@interface ProductListViewController (Private)\n@end\n@interface MiniPlayerViewController : UIViewController\n@end\n",
            "Z/Duplicate.swift": "class MiniPlayerViewController {}\n",
            "B/Checkout.swift": "    open class CheckoutViewController<T>: UIViewController {\n    class func make() {}\n",
            ".build/Hidden.swift": "class SettingsViewController {}\n",
        ]
        for (path, text) in files {
            let full = root + "/" + path
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: full, atomically: true, encoding: .utf8)
        }
        return root
    }

    func testSourceIndexFindsPrimaryDeclarationsOnly() throws {
        XCTAssertEqual(SourceIndex.declaredClass(in: "final class A: UIViewController {"), "A")
        XCTAssertEqual(SourceIndex.declaredClass(in: "  @objc(AX) open class A {"), "A")
        XCTAssertEqual(SourceIndex.declaredClass(in: "@interface A : UIViewController <P>"), "A")
        XCTAssertEqual(SourceIndex.declaredClass(in: "@interface A: UIViewController"), "A")
        XCTAssertNil(SourceIndex.declaredClass(in: "@interface A (Category)"))
        XCTAssertNil(SourceIndex.declaredClass(in: "extension A: UITableViewDelegate {"))
        XCTAssertNil(SourceIndex.declaredClass(in: "    class func make() -> A {"))
        XCTAssertNil(SourceIndex.declaredClass(in: "// see class A"), "a comment is no declaration")
        let found = SourceIndex.locate(classes: ["ProductListViewController", "MiniPlayerViewController", "CheckoutViewController",
                                                 "SettingsViewController"], under: try writeSources())
        XCTAssertEqual(found["ProductListViewController"], SourceLocation(path: "B/ProductList.swift", line: 4))
        XCTAssertEqual(found["MiniPlayerViewController"], SourceLocation(path: "C/Legacy.h", line: 3), "the first by path")
        XCTAssertEqual(found["CheckoutViewController"], SourceLocation(path: "B/Checkout.swift", line: 1))
        XCTAssertNil(found["SettingsViewController"], "hidden folders (.build) are not searched")
        // A walk stops at its limit of files and folders (a work tree may be a whole home folder).
        XCTAssertFalse(SourceIndex.scan(classes: [], under: dir + "/App").searchCut)
        let cut = SourceIndex.scan(classes: ["ProductListViewController"], under: dir + "/App", limit: 3)
        XCTAssertTrue(cut.searchCut)
        XCTAssertLessThan(SourceIndex.sourceFiles(under: dir + "/App", limit: 3).files.count, 3)
    }

    /// A source file that is not UTF-8 (an old Objective-C header in Latin-1) is still searched.
    func testSourceIndexReadsAFileThatIsNotUTF8() throws {
        let root = dir + "/latin1"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let bytes = Array("// Caf".utf8) + [0xE9] + Array("\n@interface OldViewController : UIViewController\n@end\n".utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: root + "/Old.h"))
        XCTAssertNil(String(data: Data(bytes), encoding: .utf8), "the file is not UTF-8")
        XCTAssertEqual(SourceIndex.locate(classes: ["OldViewController"], under: root)["OldViewController"],
                       SourceLocation(path: "Old.h", line: 2))
    }

    func testSARIFDescribesEveryRuleAndGivesOneResultPerIdentity() throws {
        loadSamples()
        let root = try writeSources()
        let r = TestSupport.run(["report", "--db", db, "--format", "sarif", "--source-root", root])
        XCTAssertEqual(r.status, 1, "errors among the samples")
        let doc = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        XCTAssertEqual(doc["version"] as? String, "2.1.0")
        let run = try XCTUnwrap((doc["runs"] as? [[String: Any]])?.first)
        let driver = try XCTUnwrap((run["tool"] as? [String: Any])?["driver"] as? [String: Any])
        let rules = try XCTUnwrap(driver["rules"] as? [[String: Any]])
        XCTAssertEqual(rules.map { $0["id"] as? String }, RuleCatalog.all.map(\.id))
        for rule in rules {
            for key in ["name", "shortDescription", "fullDescription", "help", "defaultConfiguration"] {
                XCTAssertNotNil(rule[key], "\(rule["id"]!) lacks \(key)")
            }
            XCTAssertGreaterThan(((rule["fullDescription"] as? [String: Any])?["text"] as? String)?.count ?? 0, 60)
        }
        let results = try XCTUnwrap(run["results"] as? [[String: Any]])
        let notifications = ((run["invocations"] as? [[String: Any]])?.first?["toolExecutionNotifications"] as? [[String: Any]]) ?? []
        XCTAssertEqual(results.count + notifications.count, try identities(), "one result or notification per identity")
        let fingerprints = results.compactMap { ($0["partialFingerprints"] as? [String: String])?["lctraceIdentity/v1"] }
        XCTAssertEqual(Set(fingerprints).count, results.count)
        for result in results {
            let index = try XCTUnwrap(result["ruleIndex"] as? Int)
            XCTAssertEqual(rules[index]["id"] as? String, result["ruleId"] as? String)
        }
        // The orphan MiniPlayerViewController points at its declaration, relative to SRCROOT.
        let orphan = try XCTUnwrap(results.first { ($0["ruleId"] as? String) == "LC101" })
        let location = try XCTUnwrap((orphan["locations"] as? [[String: Any]])?.first)
        let physical = try XCTUnwrap(location["physicalLocation"] as? [String: Any])
        XCTAssertEqual(physical["artifactLocation"] as? [String: String], ["uri": "C/Legacy.h", "uriBaseId": "SRCROOT"])
        XCTAssertEqual((physical["region"] as? [String: Int])?["startLine"], 3)
        XCTAssertEqual(((location["logicalLocations"] as? [[String: String]])?.first)?["name"], "MiniPlayerViewController")
        let properties = try XCTUnwrap(orphan["properties"] as? [String: Any])
        XCTAssertEqual(properties["occurrences"] as? Int, 1)
        XCTAssertEqual(properties["identity_key"] as? String, "LC101|com.example.shop|MiniPlayerViewController|ProductListViewController")
        XCTAssertEqual(orphan["level"] as? String, "error")
    }

    func testJUnitHasASuitePerFamilyAndACasePerIdentity() throws {
        loadSamples()
        let r = TestSupport.run(["report", "--db", db, "--format", "junit", "--fail-on", "warning"])
        XCTAssertEqual(r.status, 1)
        let xml = r.out
        XCTAssertEqual(xml.components(separatedBy: "<testsuite ").count - 1, RuleFamily.allCases.count)
        XCTAssertEqual(xml.components(separatedBy: "<testcase ").count - 1, try identities())
        let errorsAndWarnings = Int(try SQLiteDatabase(path: db, mode: .readOnly)
            .scalarInt("SELECT count(DISTINCT identity) FROM findings WHERE severity IN ('error', 'warning')") ?? 0)
        XCTAssertEqual(xml.components(separatedBy: "<failure ").count - 1, errorsAndWarnings, "info identities pass")
        XCTAssertTrue(xml.contains("<testcase classname=\"MiniPlayerViewController\" name=\"LC101|com.example.shop|MiniPlayerViewController|ProductListViewController\""), xml)
        XCTAssertTrue(xml.contains("<testcase classname=\"com.example.mail\" name=\"LC502|com.example.mail\""), "session-level: the app")
        XCTAssertEqual(MarkupText.escape("a<b & \"c\"\u{1}\n", for: .xml), "a&lt;b &amp; &quot;c&quot;␁&#10;")
    }

    /// Names from a device with markup, controls, bidirectional overrides and non-characters:
    /// the JUnit report and comparison still parse and validate, every name shown.
    func testJUnitOfHostileNamesIsWellFormedAndValid() throws {
        let name = #"Evil<&\"'>\u0000\u0001\u001b[31m\t\r\n\u007f\u0085\u202e\ufffe\uffffVC"#
        for build in ["1", "2"] {
            var b = TraceBuilder(sid: "S" + build, app: #"com.evil\u0002"#, build: build)
            b.vc(2, "init", "0xa", #""cls":"\#(name)""#)
            b.vc(3, "viewWillAppear", "0xa", #""animated":false"#)
            b.vc(4, "viewDidAppear", "0xa", #""animated":false"#)
            b.add(100, "sessionEnd", #""reason":"stopped""#)
            TestSupport.writeLines(b.lines, to: dir + "/\(build).jsonl")
        }
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, dir + "/1.jsonl", dir + "/2.jsonl"]).status, 0)
        let junit = TestSupport.run(["report", "--db", db, "--format", "junit", "--fail-on", "never"]).out
        let compare = TestSupport.run(["compare", "--db", db, "--base-build", "1", "--head-build", "2", "--format", "junit",
                                       "--fail-on", "never"]).out
        XCTAssertTrue(junit.contains("Evil&lt;&amp;&quot;'&gt;␀␁␛[31m&#9;&#13;&#10;␡[U+0085][U+202E][U+FFFE][U+FFFF]VC"), junit)
        XCTAssertTrue(junit.contains("com.evil␂"), junit)
        for (document, file) in [(junit, "hostile.xml"), (compare, "hostile-compare.xml")] {
            XCTAssertTrue(XMLParser(data: Data(document.utf8)).parse(), "\(file) is not well-formed:\n\(document)")
            try validate("junit", schema: "junit-10.xsd", document: document, file: file)
        }
    }

    // MARK: Against the public schemas

    /// The reference schemas beside the repository (absent in a user's clone).
    var formats: URL { TestSupport.root.deletingLastPathComponent().appendingPathComponent("shared/reference/formats") }


    func validate(_ kind: String, schema: String, document: String, file: String) throws {
        let schemaPath = formats.appendingPathComponent(schema).path
        guard FileManager.default.fileExists(atPath: schemaPath) else {
            throw XCTSkip("\(schemaPath) is absent (a clone without ../shared): \(kind) not validated")
        }
        guard let python = TestSupport.validatorPython else {
            throw XCTSkip("no validator: run .ci/run (it makes .ci/venv with jsonschema and xmlschema) or set LCTRACE_VALIDATOR_PYTHON")
        }
        let path = dir + "/" + file
        try document.write(toFile: path, atomically: true, encoding: .utf8)
        let script = TestSupport.root.appendingPathComponent("scripts/validate-ci-formats.py").path
        let r = try TestSupport.process(python, [script, kind, schemaPath, path])
        if r.status == 3 { throw XCTSkip("\(python): \(r.out)") }
        XCTAssertEqual(r.status, 0, "\(kind) does not validate against \(schema):\n\(r.out)\(r.err)")
    }

    func testSARIFAndJUnitValidateAgainstThePublicSchemas() throws {
        loadSamples()
        let root = try writeSources()
        let baseline = dir + "/baseline.json"
        XCTAssertEqual(TestSupport.run(["baseline", "--db", db, "--build", "812", "-o", baseline]).status, 0)
        let sarif = TestSupport.run(["report", "--db", db, "--format", "sarif", "--source-root", root, "--baseline", baseline]).out
        let plainSarif = TestSupport.run(["report", "--db", db, "--format", "sarif"]).out
        let junit = TestSupport.run(["report", "--db", db, "--format", "junit", "--baseline", baseline]).out
        let emptyJunit = TestSupport.run(["report", "--db", db, "--format", "junit", "--class", "MainTabBarController"]).out
        XCTAssertTrue(emptyJunit.contains("<testsuite") && !emptyJunit.contains("<failure"), "a known class without findings: an empty JUnit report\n\(emptyJunit)")
        let compareJunit = TestSupport.run(["compare", "--db", db, "--base-build", "812", "--head-build", "816", "--format", "junit"]).out
        XCTAssertTrue(compareJunit.contains("<failure type=\"LC301\""), compareJunit)
        try validate("junit", schema: "junit-10.xsd", document: compareJunit, file: "c.xml")
        XCTAssertTrue(sarif.contains("\"toolExecutionNotifications\""), "the notifications are validated too")
        XCTAssertTrue(sarif.contains("\"physicalLocation\""))
        try validate("sarif", schema: "sarif-schema-2.1.0.json", document: sarif, file: "a.sarif")
        try validate("sarif", schema: "sarif-schema-2.1.0.json", document: plainSarif, file: "b.sarif")
        try validate("junit", schema: "junit-10.xsd", document: junit, file: "a.xml")
        try validate("junit", schema: "junit-10.xsd", document: emptyJunit, file: "b.xml")
    }
}
