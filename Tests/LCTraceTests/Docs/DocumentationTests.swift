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

/// The repository documents itself: the README is a short front door that links every page of
/// docs/, every rule and every event of the format are documented, links resolve inside the
/// repository (anchors too), no maintainer's paths, every `lctrace` command line of the docs
/// uses options the command has, and the JSON example is what a real run of the quick start gives.
final class DocumentationTests: TemporaryDirectoryTestCase {

    func read(_ path: String) throws -> String {
        try String(contentsOf: TestSupport.root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The user documents: README, CONTRIBUTING, the samples' README, the benchmark results and docs/.
    func documents() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: TestSupport.root.appendingPathComponent("docs").path)
        // Text documents, not the folder of images.
        return ["README.md", "CONTRIBUTING.md", "SampleTraces/README.md", "Benchmarks/RESULTS.md"]
            + docs.sorted().filter { $0.hasSuffix(".md") || $0.hasSuffix(".1") }.map { "docs/" + $0 }
    }

    // MARK: the README

    /// The README is the front door: at most 200 lines, a quick start of exactly two commands,
    /// the sections a new user looks for, and a link to every page of docs/.
    func testTheReadmeIsAShortFrontDoor() throws {
        let readme = try read("README.md")
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertLessThanOrEqual(lines.count, 200, "README.md has \(lines.count) lines: the reference goes to docs/")
        for heading in ["## Install", "## Quick start", "## A ten-line tour", "## Recording traces in your app",
                        "## What CI does not cover", "## Documentation"] {
            XCTAssertTrue(readme.contains("\n\(heading)\n"), "README lacks \(heading)")
        }
        for package in ["libsqlite3-dev", "zlib1g-dev", "libpq-dev", "libisal-dev"] {
            XCTAssertTrue(readme.contains("| `\(package)`"), "README does not say why \(package)")
        }
        XCTAssertTrue(readme.contains("brew install libpq"))
        let docs = try FileManager.default.contentsOfDirectory(atPath: TestSupport.root.appendingPathComponent("docs").path)
        for page in docs where page.hasSuffix(".md") {
            XCTAssertTrue(readme.contains("](docs/\(page))"), "README does not link docs/\(page)")
        }
        for page in ["CONTRIBUTING.md", "Benchmarks/RESULTS.md", "SampleTraces/README.md", "docs/lctrace.1"] {
            XCTAssertTrue(readme.contains("](\(page))"), "README does not link \(page)")
        }
        // The recording section says how an app starts the recorder, with names the package has.
        let start = try XCTUnwrap(readme.range(of: "## Recording traces in your app\n"))
        let section = String(readme[start.upperBound...]).components(separatedBy: "\n## ")[0]
        for needle in ["](docs/recording.md)", ".product(name: \"LCTraceRecorder\", package: \"lctrace\")",
                       "import LCTraceRecorder", "UIKitRecording.start()"] {
            XCTAssertTrue(section.contains(needle), "README's recording section lacks \(needle)")
        }
        let recorder = try String(contentsOf: TestSupport.root.appendingPathComponent("Sources/LCTraceRecorder/UIKit/UIKitRecording.swift"), encoding: .utf8)
        XCTAssertTrue(recorder.contains("public static func start("), "the README names UIKitRecording.start")
        let manifest = try String(contentsOf: TestSupport.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        XCTAssertTrue(manifest.contains(".library(name: \"LCTraceRecorder\""), "the README names the LCTraceRecorder product")
    }

    /// The quick start's commands as a user copies them: exactly two, one a line.
    static func quickStart(_ readme: String) -> [String] {
        guard let section = readme.range(of: "## Quick start\n"),
              let block = readme.range(of: "```sh\n", range: section.upperBound..<readme.endIndex),
              let end = readme.range(of: "\n```", range: block.upperBound..<readme.endIndex) else { return [] }
        return readme[block.upperBound..<end.lowerBound].split(separator: "\n").map(String.init)
    }

    func testTheQuickStartIsTwoCommandsThatLeaveOnlyIgnoredFiles() throws {
        let commands = Self.quickStart(try read("README.md"))
        XCTAssertEqual(commands.count, 2, "the quick start is two commands, one a line: \(commands)")
        XCTAssertEqual(commands, ["make sample", "swift test"])
        // The lctrace steps of `make sample`, run here on a folder of their own: what they leave
        // beside the database is ignored by git, so a clone stays clean.
        let makefile = try read("Makefile")
        let recipe = try XCTUnwrap(makefile.range(of: "\nsample: build\n"))
        let steps = makefile[recipe.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
            .prefix { $0.hasPrefix("\t") }.map { $0.dropFirst().replacingOccurrences(of: "\"$(BIN)\"", with: ".build/release/lctrace") }
        XCTAssertEqual(steps.count, 2, "\(steps)")
        let work = dir + "/clone"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: work + "/SampleTraces", withDestinationPath: TestSupport.root.appendingPathComponent("SampleTraces").path)
        for step in steps {
            let words = step.split(separator: " ").map(String.init)
            XCTAssertEqual(words.first, ".build/release/lctrace", step)
            let r = try TestSupport.process(TestSupport.binary, Array(words.dropFirst()).map { $0 == "sample.db" ? work + "/sample.db" : $0 == "SampleTraces" ? work + "/SampleTraces" : $0 })
            XCTAssertEqual(r.status, 0, "\(step): \(r.err)")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: work).filter { $0 != "SampleTraces" }.sorted()
        XCTAssertTrue(left.contains("sample.db"), "\(left)")
        let patterns = try read(".gitignore").split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.hasPrefix("!") }.map(String.init)
        for name in left {
            // The patterns that name a file by its end (`*.db-wal`), as git reads them.
            XCTAssertTrue(patterns.contains { $0.hasPrefix("*") && name.hasSuffix($0.dropFirst()) },
                          "the quick start leaves \(name), which .gitignore does not cover")
        }
        for name in ["sample.db-wal", "sample.db-shm"] {
            XCTAssertTrue(patterns.contains { $0.hasPrefix("*") && name.hasSuffix($0.dropFirst()) }, name)
        }
    }

    /// Every command is named in the README (its tour, or the line after it), and the tour's
    /// commands run on the quick start's database.
    func testTheReadmeNamesEveryCommandAndItsTourRuns() throws {
        let readme = try read("README.md")
        for name in CLI.commandNames { XCTAssertTrue(readme.contains("`lctrace \(name)") || readme.contains("\nlctrace \(name) "), "README lacks lctrace \(name)") }
        guard let tour = readme.range(of: "## A ten-line tour\n"),
              let block = readme.range(of: "```sh\n", range: tour.upperBound..<readme.endIndex),
              let end = readme.range(of: "\n```", range: block.upperBound..<readme.endIndex) else { return XCTFail("README has no tour") }
        let lines = readme[block.upperBound..<end.lowerBound].split(separator: "\n")
        XCTAssertEqual(lines.count, 10, "a ten-line tour")
        let cwd = FileManager.default.currentDirectoryPath
        _ = FileManager.default.changeCurrentDirectoryPath(TestSupport.root.path)
        defer { _ = FileManager.default.changeCurrentDirectoryPath(cwd) }
        for line in lines {
            var words = Self.shellWords(String(line))
            XCTAssertEqual(words.first, "lctrace", String(line))
            words = words.dropFirst().map { $0 == "sample.db" ? db : $0 == "lctrace-baseline.json" ? dir + "/baseline.json" : $0 }
            let r = TestSupport.run(words)
            // report exits 1 on the samples' errors, compare on their new ones.
            XCTAssertTrue([0, 1].contains(r.status), "\(line): \(r.status) \(r.err)")
            XCTAssertFalse(r.out.isEmpty && r.err.isEmpty, "\(line) printed nothing")
        }
    }

    /// A line of a code block as a shell splits it: words, double-quoted text one word, and no
    /// comment.
    static func shellWords(_ line: String) -> [String] {
        var words: [String] = [], current = "", quoted = false, any = false
        for c in line {
            if c == "\"" { quoted.toggle(); any = true; continue }
            if !quoted && c == "#" && current.isEmpty { break }
            if !quoted && c == " " {
                if any { words.append(current) }
                current = ""; any = false
                continue
            }
            current.append(c); any = true
        }
        if any { words.append(current) }
        return words
    }

    // MARK: the pages

    /// Every image a document shows is in the repository, a PNG, and small; and every image
    /// of docs/images is shown.
    func testDocumentImagesExistAndAreSmallPNGs() throws {
        var shown: Set<String> = []
        let image = try NSRegularExpression(pattern: #"!\[[^\]]*\]\(([^)]+\.png)\)"#)
        for path in try documents() where path.hasSuffix(".md") {
            let text = try read(path)
            let folder = (path as NSString).deletingLastPathComponent
            for match in image.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let target = String(text[Range(match.range(at: 1), in: text)!])
                shown.insert(((folder as NSString).appendingPathComponent(target) as NSString).standardizingPath)
            }
        }
        XCTAssertEqual(shown, ["docs/images/html-report.png", "docs/images/html-report-leak.png", "docs/images/timeline-text.png"])
        let stored = try FileManager.default.contentsOfDirectory(atPath: TestSupport.root.appendingPathComponent("docs/images").path)
        XCTAssertEqual(Set(stored.map { "docs/images/" + $0 }), shown, "an image of docs/images that no document shows")
        for image in shown {
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
            XCTAssertTrue(section.contains("**Fix**"), "\(rule.id) does not say what fixes it")
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
        let cli = try read("docs/cli.md")
        for e in ExitStatus.meanings { XCTAssertTrue(cli.contains("| \(e.status) |"), "exit status \(e.status) undocumented") }
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

    /// GitHub's anchor of a heading (as `MarkdownReference.anchor`), numbered when repeated.
    static func anchors(_ text: String) -> Set<String> {
        var seen: [String: Int] = [:], out: Set<String> = []
        var fenced = false
        for line in text.split(separator: "\n") {
            if line.hasPrefix("```") { fenced.toggle(); continue }
            guard !fenced, line.hasPrefix("#") else { continue }
            let heading = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            let base = MarkdownReference.anchor(heading)
            let n = seen[base, default: 0]
            seen[base] = n + 1
            out.insert(n == 0 ? base : "\(base)-\(n)")
        }
        return out
    }

    func testDocumentsLinkOnlyInsideTheRepository() throws {
        let readme = try read("README.md")
        for outside in ["../shared", "shared/", "rules.md", "trace-format-v1.md"] {
            XCTAssertFalse(readme.contains(outside), "README names \(outside), which is not in the repository")
        }
        XCTAssertTrue(readme.contains("(docs/input-format.md)"))
        XCTAssertTrue(readme.contains("(docs/rule-reference.md)"))
        for schema in ["Schemas/trace-line.schema.json", "Schemas/lctrace-schema.sql", "Schemas/lctrace-schema.postgresql.sql"] {
            let text = try read(schema)
            XCTAssertFalse(text.contains("shared/") || text.contains("rules.md") || text.contains("trace-format-v1") || text.contains("README"),
                           "\(schema) points outside the repository, or at a README section that moved")
        }
        // Every relative link resolves to a file of the repository, and its anchor to a heading.
        let link = try NSRegularExpression(pattern: #"\]\(([^)#\s]*)(#[^)\s]*)?\)"#)
        var checked = 0
        for path in try documents() where path.hasSuffix(".md") {
            let text = try read(path)
            let folder = (path as NSString).deletingLastPathComponent
            for match in link.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let target = String(text[Range(match.range(at: 1), in: text)!])
                if target.hasPrefix("http") { continue }
                let resolved = target.isEmpty ? TestSupport.root.appendingPathComponent(path).path
                    : URL(fileURLWithPath: TestSupport.root.appendingPathComponent(folder).path).appendingPathComponent(target).standardizedFileURL.path
                XCTAssertTrue(resolved.hasPrefix(TestSupport.root.standardizedFileURL.path), "\(path) links outside the repository: \(target)")
                XCTAssertTrue(FileManager.default.fileExists(atPath: resolved), "\(path) links to a missing \(target)")
                if let r = Range(match.range(at: 2), in: text), resolved.hasSuffix(".md"),
                   let linked = try? String(contentsOfFile: resolved, encoding: .utf8) {
                    let anchor = String(text[r].dropFirst())
                    XCTAssertTrue(Self.anchors(linked).contains(anchor), "\(path) links to \(target)#\(anchor), which has no such heading")
                }
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 100)
    }

    func testNoMaintainersPaths() throws {
        for path in try documents() {
            let text = try read(path)
            for prefix in ["/work/", "/Users/", "/home/", "/root/", "/private/var/", NSTemporaryDirectory()] {
                XCTAssertFalse(text.contains(prefix), "\(path) shows an absolute path under \(prefix)")
            }
        }
    }

    /// Every `lctrace COMMAND …` of a code block or code span of the docs names a command that
    /// exists and options that command has (the options before the name are the global ones).
    func testEveryCommandLineOfTheDocsUsesRealOptions() throws {
        let specs = Dictionary(uniqueKeysWithValues: CLI.commands.map { ($0.spec.name, $0.spec) })
        let invocation = try NSRegularExpression(pattern: #"(?:^|[\s'"(/])lctrace((?:\s+--(?:db|color)(?:=\S+|\s+\S+))*)\s+([a-z]+)\b([^|;>&#'`\n]*)"#)
        let option = try NSRegularExpression(pattern: #"(?:^|\s)(--?[a-zA-Z][a-zA-Z-]*)"#)
        var checked = 0
        for path in try documents() where path.hasSuffix(".md") {
            let text = try read(path)
            var code: [String] = []
            var fenced = false, block = ""
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("```") {
                    if fenced { code.append(block.replacingOccurrences(of: "\\\n", with: " ")) }
                    fenced.toggle(); block = ""; continue
                }
                if fenced { block += line + "\n"; continue }
                let spans = line.components(separatedBy: "`")
                code += stride(from: 1, to: spans.count, by: 2).map { spans[$0] }
            }
            for snippet in code {
                for match in invocation.matches(in: snippet, range: NSRange(snippet.startIndex..., in: snippet)) {
                    let name = String(snippet[Range(match.range(at: 2), in: snippet)!])
                    guard let spec = specs[name] else {
                        // Prose in code (`lctrace reads version 1`) is no command line; a near miss is a typo.
                        if let near = ArgumentParser.closest(name, in: CLI.commandNames) { XCTFail("\(path): lctrace \(name) is no command (\(near)?)") }
                        continue
                    }
                    // Quoted text is a value (SQL, a build), never options.
                    let rest = String(snippet[Range(match.range(at: 3), in: snippet)!])
                        .replacingOccurrences(of: #""[^"]*""#, with: "", options: .regularExpression)
                    for o in option.matches(in: rest, range: NSRange(rest.startIndex..., in: rest)) {
                        let word = String(rest[Range(o.range(at: 1), in: rest)!])
                        let known = word.hasPrefix("--") ? spec.optionsWithHelp.contains { "--\($0.name)" == word }
                            : spec.optionsWithHelp.contains { $0.short.map { "-\($0)" } == word }
                        XCTAssertTrue(known, "\(path): lctrace \(name) has no option \(word)")
                        checked += 1
                    }
                }
            }
        }
        XCTAssertGreaterThan(checked, 100)
    }

    /// The JSON example of docs/reports.md is what the quick start's database really gives.
    func testTheJSONExampleIsARealRun() throws {
        let page = try read("docs/reports.md")
        guard let start = page.range(of: "```json\n{\"version\":1,"),
              let end = page.range(of: "```", range: start.upperBound..<page.endIndex) else {
            return XCTFail("docs/reports.md has no JSON example")
        }
        let example = try JSONSerialization.jsonObject(with: Data(page[page.index(start.lowerBound, offsetBy: 8)..<end.lowerBound].utf8)) as! [String: Any]
        // Ingested by the relative path, as the quick start does.
        let cwd = FileManager.default.currentDirectoryPath
        _ = FileManager.default.changeCurrentDirectoryPath(TestSupport.root.path)
        defer { _ = FileManager.default.changeCurrentDirectoryPath(cwd) }
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, "SampleTraces"]).status, 0)
        let report = TestSupport.run(["report", "--db", db, "--format", "json", "--fail-on", "never"])
        XCTAssertEqual(report.status, 0, report.err)
        let real = try JSONSerialization.jsonObject(with: Data(report.out.utf8)) as! [String: Any]
        XCTAssertEqual(example["version"] as? Int, real["version"] as? Int)
        XCTAssertEqual(example["summary"] as? NSDictionary, real["summary"] as? NSDictionary, "docs/reports.md's summary differs from a real run")
        let realFindings = real["findings"] as! [[String: Any]]
        let shown = example["findings"] as! [[String: Any]]
        XCTAssertFalse(shown.isEmpty)
        for finding in shown {
            let same = realFindings.first { f in ["rule", "session", "vc", "since"].allSatisfy { "\(f[$0] ?? "-")" == "\(finding[$0] ?? "-")" } }
            guard let same else { XCTFail("docs/reports.md shows a finding the samples do not give: \(finding)"); continue }
            for (key, value) in finding {
                XCTAssertTrue((same[key] as? NSObject)?.isEqual(value) ?? false,
                              "docs/reports.md's finding's \(key) is \(value), a real run gives \(same[key] ?? "nothing")")
            }
        }
        let count = (real["summary"] as! [String: Any])["findings"] as! Int
        XCTAssertTrue(page.contains("it holds \(count) findings"), "docs/reports.md does not say \(count) findings")
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
        for path in ["README.md", "CONTRIBUTING.md", "SampleTraces/README.md"] + docs.map({ "docs/" + $0 }) {
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
