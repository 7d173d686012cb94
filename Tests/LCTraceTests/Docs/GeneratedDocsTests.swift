import XCTest
@testable import LCTraceModel
@testable import LCTraceRules
@testable import LCTraceStore
@testable import LCTraceSQLite
@testable import LCTracePostgreSQL
@testable import LCTrace
@testable import LCTraceCLI

/// The generated documents of the repository are what their generators write now: the
/// Markdown references (`lctrace help --markdown PAGE`), the manual page, and the target graph
/// of docs/architecture.md (`swift package describe`). A stale one fails with the command that
/// brings it up to date: scripts/generate-docs, or `LCTRACE_RECORD_DOCS=1` on this test class,
/// which writes them (as swift-argument-parser's snapshot tests re-record).
final class GeneratedDocsTests: XCTestCase {
    static let record = ProcessInfo.processInfo.environment["LCTRACE_RECORD_DOCS"] == "1"
    static let howToFix = "run scripts/generate-docs (or LCTRACE_RECORD_DOCS=1 swift test --filter GeneratedDocsTests)"

    func url(_ path: String) -> URL { TestSupport.root.appendingPathComponent(path) }

    /// `expected` is the content of `path` (written there when recording).
    func checkFresh(_ path: String, _ expected: String, file: StaticString = #filePath, line: UInt = #line) throws {
        if Self.record { try expected.write(to: url(path), atomically: true, encoding: .utf8) }
        let stored = try String(contentsOf: url(path), encoding: .utf8)
        XCTAssertTrue(stored == expected, "\(path) is stale: \(Self.howToFix)", file: file, line: line)
    }

    func testTheMarkdownReferencesAndTheManualPageAreFresh() throws {
        for page in MarkdownReference.Page.allCases {
            let printed = TestSupport.run(["help", "--markdown", page.rawValue])
            XCTAssertEqual(printed.status, 0, printed.err)
            XCTAssertEqual(printed.out, MarkdownReference.render(page), "lctrace help --markdown \(page.rawValue)")
            try checkFresh(page.path, printed.out)
        }
        XCTAssertEqual(TestSupport.run(["help", "--markdown"]).out, MarkdownReference.render(.cli), "the default page")
        try checkFresh("docs/lctrace.1", ManPage.render())
    }

    func testHelpMarkdownRefusesWhatIsNoPage() {
        let unknown = TestSupport.run(["help", "--markdown", "rule"])
        XCTAssertEqual(unknown.status, 64)
        XCTAssertEqual(unknown.err, "Error: unknown page 'rule' (expected cli, rules, schema)\nHint: did you mean 'rules'?\n")
        XCTAssertEqual(TestSupport.run(["help", "--man", "--markdown"]).status, 64)
        // The command help is still there.
        XCTAssertTrue(TestSupport.run(["help", "help"]).out.contains("--markdown"))
    }

    // MARK: what the pages hold

    func section(_ text: String, after heading: String) -> Substring? {
        guard let start = text.range(of: heading + "\n") else { return nil }
        let rest = text[start.upperBound...]
        return rest[..<(rest.range(of: "\n#")?.lowerBound ?? rest.endIndex)]
    }

    /// docs/cli.md has every command, argument, option and exit status, as the man page does.
    func testTheCLIReferenceHasEveryCommandOptionAndExitStatus() {
        let text = MarkdownReference.render(.cli)
        for option in CLI.globalOptions { XCTAssertTrue(text.contains("`--\(option.name)"), "global --\(option.name)") }
        for command in CLI.commands.map({ $0.spec }) {
            guard let section = section(text, after: "### lctrace \(command.name)") else {
                XCTFail("docs/cli.md lacks lctrace \(command.name)"); continue
            }
            XCTAssertTrue(section.contains("```\n\(command.usage)\n```"), "usage of \(command.name)")
            if let positional = command.positional { XCTAssertTrue(section.contains("| `\(positional)` |"), "\(command.name) \(positional)") }
            for option in command.optionsWithHelp {
                let spelled = (option.short.map { "`-\($0)`, " } ?? "") + "`--\(option.name)" + (option.value.map { " \($0)" } ?? "") + "`"
                XCTAssertTrue(section.contains("| \(spelled) |"), "docs/cli.md lacks \(spelled) of \(command.name)")
            }
        }
        for e in ExitStatus.meanings { XCTAssertTrue(text.contains("| \(e.status) | "), "exit status \(e.status)") }
    }

    /// Every rule's explanation says what it finds and what it never flags, in that order,
    /// which is where the rule reference splits it.
    func testEveryRuleSaysWhatItNeverFlags() {
        let reference = MarkdownReference.render(.rules)
        for rule in RuleCatalog.all {
            XCTAssertEqual(rule.explanation.components(separatedBy: " Not flagged: ").count, 2, "\(rule.id): one 'Not flagged:'")
            let (finds, never) = MarkdownReference.split(rule.explanation)
            XCTAssertFalse(finds.isEmpty || never.isEmpty, rule.id)
            XCTAssertTrue(reference.contains("**Never flags**: \(MarkdownReference.inline(never))\n"), rule.id)
            XCTAssertTrue(reference.contains("**Fix**: \(MarkdownReference.inline(rule.help))\n"), rule.id)
        }
    }

    /// docs/schema.md has every table, view and column of the schema, each column with what it
    /// means (a view's: the column it reads, or its expression); and the views of the two
    /// schema files have the same columns, which is what lets the page say so.
    func testTheSchemaReferenceHasEveryColumnWithAMeaning() throws {
        let text = MarkdownReference.render(.schema)
        let memory = try SQLiteDatabase(path: ":memory:")
        try memory.execute(SQLiteSchema.ddl)
        let objects = try memory.prepare("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")
        var documented = 0
        let lite = SQLSchemaText(SQLiteSchema.ddl), pg = SQLSchemaText(PGSchema.ddl)
        while try objects.step() {
            let name = objects.text(0)!, kind = objects.text(1)!
            var columns: [String] = []
            let info = try memory.prepare("SELECT name FROM pragma_table_info('\(name)')")
            while try info.step() { columns.append(info.text(0)!) }
            if kind == "view" && !name.hasSuffix("_v") {
                // The internal views are named with their columns.
                XCTAssertTrue(text.contains("- `\(name)`: "), name)
                for column in columns { XCTAssertTrue(text.contains("`\(column)`"), "\(name).\(column)") }
                continue
            }
            guard let section = section(text, after: "### \(name)") else { XCTFail("docs/schema.md lacks \(name)"); continue }
            for column in columns {
                let row = section.split(separator: "\n").first { $0.hasPrefix("| `\(column)` |") }
                guard let row else { XCTFail("docs/schema.md lacks \(name).\(column)"); continue }
                let cells = row.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                // | column | type or what it reads | meaning |
                XCTAssertFalse(cells[2].isEmpty && cells[3].isEmpty, "\(name).\(column) says nothing")
                if kind == "table" { XCTAssertFalse(cells[3].isEmpty, "\(name).\(column) has no meaning") }
                documented += 1
            }
            if kind == "view" {
                let sqliteView = try XCTUnwrap(lite.objects.first { $0.kind == .view && $0.name == name })
                let pgView = try XCTUnwrap(pg.objects.first { $0.kind == .view && $0.name == name }, "PostgreSQL lacks \(name)")
                XCTAssertEqual(lite.resolvedColumns(of: sqliteView).map(\.name), columns, "the parse of \(name)")
                XCTAssertEqual(pg.resolvedColumns(of: pgView).map(\.name), columns, "\(name) on PostgreSQL")
            }
        }
        XCTAssertGreaterThan(documented, 150)
        XCTAssertTrue(text.contains("## PostgreSQL"))
        XCTAssertTrue(text.contains("`changes`"), "PostgreSQL's own columns")
    }

    func testMarkdownTextIsEscapedOutsideCode() {
        XCTAssertEqual(MarkdownReference.inline("the *_v views, `*_v`, a<b> & [x] snake_case _x"),
                       "the \\*\\_v views, `*_v`, a&lt;b&gt; &amp; \\[x\\] snake_case \\_x")
        XCTAssertEqual(MarkdownReference.cell("`a|b` c|d"), "`a\\|b` c\\|d")
        XCTAssertEqual(MarkdownReference.anchor("Timing gaps: viewIsAppearing → viewDidAppear (`--gaps`)"),
                       "timing-gaps-viewisappearing--viewdidappear---gaps")
        XCTAssertEqual(MarkdownReference.anchor("LC101 orphan-view (error)"), "lc101-orphan-view-error")
    }

    // MARK: the target graph

    /// The arrows of docs/architecture.md's graph: (target, dependency) by name.
    static func pictureEdges(_ text: String) -> Set<[String]> {
        guard let begin = text.range(of: "<!-- targets:begin"), let end = text.range(of: "<!-- targets:end -->") else { return [] }
        var labels: [String: String] = [:], edges: Set<[String]> = []
        for line in text[begin.upperBound..<end.lowerBound].split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if let open = line.range(of: "[\""), line.hasSuffix("\"]") {
                labels[String(line[..<open.lowerBound])] = String(line[open.upperBound..<line.index(line.endIndex, offsetBy: -2)])
            } else if line.contains(" --> ") {
                let ends = line.components(separatedBy: " --> ")
                edges.insert([ends[0], ends[1]])
            }
        }
        return Set(edges.map { $0.map { labels[$0] ?? $0 } })
    }

    /// The graph, in the form scripts/generate-docs writes it.
    static func picture(_ edges: Set<[String]>, targets: Set<String>) -> String {
        let node = { (n: String) in n.replacingOccurrences(of: "-", with: "_") }
        let names = targets.union(edges.flatMap { $0 }).sorted()
        return (["```mermaid", "flowchart TD"] + names.map { "    \(node($0))[\"\($0)\"]" }
                + edges.sorted { $0.lexicographicallyPrecedes($1) }.map { "    \(node($0[0])) --> \(node($0[1]))" } + ["```"])
            .joined(separator: "\n")
    }

    func swift() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(folder)/swift") {
            return "\(folder)/swift"
        }
        throw XCTSkip("no swift on the PATH: the target graph is not checked")
    }

    func testTheTargetGraphIsThePackages() throws {
        let scratch = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        // A scratch path of its own: the one of the running `swift test` is locked.
        let r = try TestSupport.process(try swift(), ["package", "--package-path", TestSupport.root.path, "--scratch-path", scratch,
                                                      "describe", "--type", "json"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.err)
        let package = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        // The code's targets, as scripts/generate-docs draws them (no test targets).
        let targets = try XCTUnwrap(package["targets"] as? [[String: Any]]).filter { $0["type"] as? String != "test" }
        var edges: Set<[String]> = []
        for target in targets {
            for dependency in target["target_dependencies"] as? [String] ?? [] { edges.insert([target["name"] as! String, dependency]) }
        }
        XCTAssertTrue(edges.contains(["LCTraceStore", "LCTraceRules"]), "\(edges)")
        let path = "docs/architecture.md"
        var text = try String(contentsOf: url(path), encoding: .utf8)
        if Self.record, let begin = text.range(of: "<!-- targets:begin (scripts/generate-docs) -->\n"),
           let end = text.range(of: "<!-- targets:end -->", range: begin.upperBound..<text.endIndex) {
            text.replaceSubrange(begin.upperBound..<end.lowerBound,
                                 with: Self.picture(edges, targets: Set(targets.map { $0["name"] as! String })) + "\n")
            try text.write(to: url(path), atomically: true, encoding: .utf8)
        }
        let drawn = Self.pictureEdges(text)
        XCTAssertEqual(drawn.subtracting(edges).sorted { $0.lexicographicallyPrecedes($1) }, [], "\(path) draws arrows the package lacks: \(Self.howToFix)")
        XCTAssertEqual(edges.subtracting(drawn).sorted { $0.lexicographicallyPrecedes($1) }, [], "\(path) lacks arrows of the package: \(Self.howToFix)")
    }
}
