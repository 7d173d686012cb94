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

/// The repository documents itself: every rule and every event of the format in docs/, links
/// that resolve inside the repository, no maintainer's paths, and README numbers that a real
/// run of the quick start gives.
final class DocumentationTests: TemporaryDirectoryTestCase {

    func read(_ path: String) throws -> String {
        try String(contentsOf: TestSupport.root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The user documents: README, the samples' README and docs/.
    func documents() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: TestSupport.root.appendingPathComponent("docs").path)
        // Text documents, not the folder of images.
        return ["README.md", "SampleTraces/README.md"] + docs.sorted().filter { $0.hasSuffix(".md") || $0.hasSuffix(".1") }.map { "docs/" + $0 }
    }

    /// Every image the README shows is in the repository, a PNG, and small.
    func testReadmeImagesExistAndAreSmallPNGs() throws {
        let readme = try read("README.md")
        let images = readme.components(separatedBy: "](docs/images/").dropFirst().map { "docs/images/" + $0.prefix { $0 != ")" } }
        XCTAssertEqual(Set(images), ["docs/images/html-report.png", "docs/images/html-report-leak.png", "docs/images/timeline-text.png"])
        for image in images {
            let data = try Data(contentsOf: TestSupport.root.appendingPathComponent(image))
            XCTAssertEqual(Array(data.prefix(4)), [0x89, 0x50, 0x4E, 0x47], "\(image) is a PNG")
            XCTAssertLessThan(data.count, 400_000, "\(image) is small")
        }
    }

    func testRuleReferenceDescribesEveryRule() throws {
        let text = try read("docs/rule-reference.md")
        var described: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("### LC") {
            let words = line.dropFirst(4).split(separator: " ")
            described[String(words[0])] = words.dropFirst().joined(separator: " ")
        }
        for rule in RuleCatalog.all {
            XCTAssertEqual(described[rule.id], "\(rule.name) (\(rule.severity.rawValue))", "docs/rule-reference.md: heading of \(rule.id)")
            guard let start = text.range(of: "### \(rule.id) ") else { continue }
            let rest = text[start.upperBound...]
            let section = rest[..<(rest.range(of: "\n#")?.lowerBound ?? rest.endIndex)]
            XCTAssertTrue(section.contains("**Finds**"), "\(rule.id) does not say what it finds")
            XCTAssertTrue(section.contains("**Never flags**"), "\(rule.id) does not say what it never flags")
        }
        XCTAssertEqual(Set(described.keys), Set(RuleCatalog.all.map(\.id)), "a rule documented that the catalogue lacks")
        // Every rule has a row in the identity table (ranges such as LC201–LC205 included).
        let identity = text[text.range(of: "## Finding identity (1.1)")!.upperBound...]
        let table = identity[..<(identity.range(of: "\n#")?.lowerBound ?? identity.endIndex)]
        let ids = RuleCatalog.all.map(\.id)
        var keyed: Set<String> = []
        for row in table.split(separator: "\n") where row.hasPrefix("| LC") {
            let cell = row.split(separator: "|")[0]
            for part in cell.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                let ends = part.components(separatedBy: "–")
                if ends.count == 2, let a = ids.firstIndex(of: ends[0]), let b = ids.firstIndex(of: ends[1]) {
                    keyed.formUnion(ids[a...b])
                } else {
                    keyed.insert(part)
                }
            }
        }
        XCTAssertEqual(keyed, Set(ids), "the identity table misses a rule")
        for e in ExitStatus.meanings { XCTAssertTrue(text.contains("| \(e.status) |"), "exit status \(e.status) undocumented") }
    }

    func testInputFormatNamesEveryEventAndRequiredKey() throws {
        let text = try read("docs/input-format.md")
        for kind in EventKind.allCases where kind != .unknown {
            XCTAssertTrue(text.contains("`\(kind.rawValue)`"), "docs/input-format.md lacks the event \(kind.rawValue)")
        }
        for key in ["v", "sid", "seq", "t", "ev", "wall", "thread", "vc", "cls", "parent", "host", "presented", "child",
                    "style", "animated", "interactive", "scene", "name", "reason", "extension", "bounds", "traits"] {
            XCTAssertTrue(text.contains("`\(key)`"), "docs/input-format.md lacks the key \(key)")
        }
        XCTAssertTrue(text.contains("\(LineReader.defaultMaxLineLength) bytes"), "the line limit is not the reader's")
        XCTAssertTrue(text.contains("\(EventDecoder.maxKeys) keys"))
        XCTAssertTrue(text.contains("\(EventDecoder.maxSessionIDLength) characters"))
    }

    func testDocumentsLinkOnlyInsideTheRepository() throws {
        let readme = try read("README.md")
        for outside in ["../shared", "rules.md", "trace-format-v1.md"] {
            XCTAssertFalse(readme.contains(outside), "README names \(outside), which is not in the repository")
        }
        XCTAssertTrue(readme.contains("(docs/input-format.md)"))
        XCTAssertTrue(readme.contains("(docs/rule-reference.md)"))
        for schema in ["Schemas/trace-line.schema.json", "Schemas/lctrace-schema.sql"] {
            let text = try read(schema)
            XCTAssertFalse(text.contains("shared/") || text.contains("rules.md") || text.contains("trace-format-v1"), "\(schema) points outside the repository")
        }
        // Every relative link resolves to a file of the repository.
        let link = try NSRegularExpression(pattern: #"\]\(([^)#\s]+)(#[^)]*)?\)"#)
        for path in try documents() where path.hasSuffix(".md") {
            let text = try read(path)
            let folder = (path as NSString).deletingLastPathComponent
            for match in link.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let target = String(text[Range(match.range(at: 1), in: text)!])
                if target.hasPrefix("http") { continue }
                let resolved = URL(fileURLWithPath: TestSupport.root.appendingPathComponent(folder).path).appendingPathComponent(target).standardizedFileURL.path
                XCTAssertTrue(resolved.hasPrefix(TestSupport.root.standardizedFileURL.path), "\(path) links outside the repository: \(target)")
                XCTAssertTrue(FileManager.default.fileExists(atPath: resolved), "\(path) links to a missing \(target)")
            }
        }
    }

    func testNoMaintainersPaths() throws {
        for path in try documents() {
            let text = try read(path)
            for prefix in ["/work/", "/Users/", "/home/", "/root/", "/private/var/", NSTemporaryDirectory()] {
                XCTAssertFalse(text.contains(prefix), "\(path) shows an absolute path under \(prefix)")
            }
        }
    }

    /// The README's JSON example is what the quick start's database really gives.
    func testReadmeJSONExampleIsARealRun() throws {
        let readme = try read("README.md")
        guard let start = readme.range(of: "```json\n{\"version\":1,"),
              let end = readme.range(of: "```", range: start.upperBound..<readme.endIndex) else {
            return XCTFail("README has no JSON example")
        }
        let example = try JSONSerialization.jsonObject(with: Data(readme[readme.index(start.lowerBound, offsetBy: 8)..<end.lowerBound].utf8)) as! [String: Any]
        // Ingested by the relative path, as the quick start does.
        let cwd = FileManager.default.currentDirectoryPath
        _ = FileManager.default.changeCurrentDirectoryPath(TestSupport.root.path)
        defer { _ = FileManager.default.changeCurrentDirectoryPath(cwd) }
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, "SampleTraces"]).status, 0)
        let report = TestSupport.run(["report", "--db", db, "--format", "json", "--fail-on", "never"])
        XCTAssertEqual(report.status, 0, report.err)
        let real = try JSONSerialization.jsonObject(with: Data(report.out.utf8)) as! [String: Any]
        XCTAssertEqual(example["version"] as? Int, real["version"] as? Int)
        XCTAssertEqual(example["summary"] as? NSDictionary, real["summary"] as? NSDictionary, "README summary differs from a real run")
        let realFindings = real["findings"] as! [[String: Any]]
        let shown = example["findings"] as! [[String: Any]]
        XCTAssertFalse(shown.isEmpty)
        for finding in shown {
            let same = realFindings.first { f in ["rule", "session", "vc", "since"].allSatisfy { "\(f[$0] ?? "-")" == "\(finding[$0] ?? "-")" } }
            guard let same else { XCTFail("README shows a finding the samples do not give: \(finding)"); continue }
            for (key, value) in finding {
                XCTAssertTrue((same[key] as? NSObject)?.isEqual(value) ?? false,
                              "README finding's \(key) is \(value), a real run gives \(same[key] ?? "nothing")")
            }
        }
        let count = (real["summary"] as! [String: Any])["findings"] as! Int
        XCTAssertTrue(readme.contains("it holds \(count) findings"), "README prose does not say \(count) findings")
    }
}

/// One spelling: `analyze` (the command's name), never `analyse`, in output, help and docs.
final class SpellingTests: XCTestCase {
    static let british = try! NSRegularExpression(pattern: "\\b(un)?analys(e|ed|es|ing)\\b", options: [.caseInsensitive])

    func british(_ text: String) -> [String] {
        Self.british.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range, in: text)!]) }
    }

    func testAnalyzeIsSpelledOneWay() throws {
        var texts: [String: String] = ["overview": TestSupport.run(["help"]).out, "man": TestSupport.run(["help", "--man"]).out]
        for name in CLI.commandNames { texts["help \(name)"] = TestSupport.run(["help", name]).out }
        let root = TestSupport.root
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path).filter { $0.hasSuffix(".md") || $0.hasSuffix(".1") }
        for path in ["README.md", "SampleTraces/README.md"] + docs.map({ "docs/" + $0 }) {
            texts[path] = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        }
        // Everything a source prints: its lines that are not comments.
        let sources = FileManager.default.enumerator(atPath: root.appendingPathComponent("Sources").path)!
        while let file = sources.nextObject() as? String {
            guard file.hasSuffix(".swift") else { continue }
            let text = try String(contentsOf: root.appendingPathComponent("Sources/" + file), encoding: .utf8)
            texts["Sources/" + file] = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
        }
        XCTAssertGreaterThan(texts.count, 50)
        for (name, text) in texts.sorted(by: { $0.key < $1.key }) {
            XCTAssertEqual(british(text), [], "\(name) spells analyze another way")
        }
        XCTAssertEqual(british("we analyse; Analysed and unanalysed; analysis stays"), ["analyse", "Analysed", "unanalysed"])
    }
}
