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

/// Every example query of docs/queries.md (where the README's queries moved), pasted whole (its
/// `-- N.` comment included) into `lctrace query`, runs on SampleTraces, has the columns it
/// promises, returns rows, and answers what its comment says; and every `lctrace query "…"` of
/// the README and docs/ runs.
final class ReadmeQueryTests: TemporaryDirectoryTestCase {

    /// The columns of each numbered query of docs/queries.md. A query added there needs a row here.
    static let columns: [Int: [String]] = [
        1: ["app", "class", "leaks", "sessions", "builds"],
        2: ["seq", "ms", "event", "vc", "class", "parent", "host"],
        3: ["class", "n", "avg_ms", "max_ms"],
        4: ["class", "alive", "sessions"],
        5: ["seq", "ms", "event", "vc", "parent", "host", "child", "animated", "is_moving_from_parent", "is_being_dismissed"],
        6: ["app", "app_version", "build", "rule", "findings"],
        7: ["identity", "identity_key", "occurrences", "sessions"],
        8: ["path", "kind", "line", "reason"],
        9: ["sid", "device", "events", "lost_events", "ended"],
        10: ["parent_class", "rule", "findings", "sessions"],
        11: ["event", "key", "events"],
    ]

    static let page = "docs/queries.md"

    static func read(_ path: String) throws -> String {
        try String(contentsOf: TestSupport.root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The numbered queries of docs/queries.md, by number: every ```sql block that starts with a
    /// `-- 1.` comment, each query a `-- N.` comment and the SQL up to the next blank line, exactly
    /// as a user copies it. (SQL for a PostgreSQL server itself, roles and Citus in
    /// docs/postgresql.md, is run in `psql`, not `lctrace query`: it is not numbered.)
    static func readmeQueries() throws -> [Int: String] {
        var queries: [Int: String] = [:]
        for block in try read(page).components(separatedBy: "\n```sql\n").dropFirst() where block.hasPrefix("-- 1. ") {
            let body = block.components(separatedBy: "\n```")[0]
            for query in body.components(separatedBy: "\n\n") where !query.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                let number = query.dropFirst(3).prefix { $0.isNumber }
                guard query.hasPrefix("-- "), let n = Int(number) else {
                    XCTFail("a query of \(page) does not start with its '-- N.' comment: \(query.prefix(60))")
                    continue
                }
                XCTAssertNil(queries[n], "two queries of \(page) numbered \(n)")
                queries[n] = query
            }
        }
        return queries
    }

    override func setUp() {
        super.setUp()
        let ingest = TestSupport.run(["ingest", "-q", "--db", db, TestSupport.root.appendingPathComponent("SampleTraces").path])
        XCTAssertEqual(ingest.status, 0, ingest.err)
    }

    /// Rows of a query as CSV (header first), pasted whole as one argument.
    func rows(_ sql: String) -> [[String]] {
        let r = TestSupport.run(["query", "--db", db, "-f", "csv", sql])
        XCTAssertEqual(r.status, 0, "\(sql.prefix(60)): \(r.err)")
        return r.out.split(separator: "\n").map { line in
            // The queries' values hold no comma or quote but in paths and keys, read plainly.
            line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
    }

    func testEveryReadmeQueryRunsPastedWholeWithItsColumns() throws {
        let queries = try Self.readmeQueries()
        XCTAssertEqual(Set(queries.keys), Set(Self.columns.keys), "the queries of \(Self.page) and the columns this test expects")
        for (n, sql) in queries.sorted(by: { $0.key < $1.key }) {
            XCTAssertTrue(sql.hasPrefix("-- \(n). "), sql)
            let table = rows(sql)
            XCTAssertEqual(table.first, Self.columns[n], "columns of query \(n)")
            XCTAssertGreaterThan(table.count, 1, "query \(n) returns no row on SampleTraces")
            // The default table pastes as well.
            let r = TestSupport.run(["query", "--db", db, sql])
            XCTAssertEqual(r.status, 0, r.err)
            XCTAssertTrue(r.out.contains("\n(\(table.count - 1) row\(table.count == 2 ? "" : "s"))\n"), r.out)
        }
    }

    /// Q1 counts what `report` counts as leaks, with their builds; Q10 lists what `report
    /// --orphans` flags as LC102/LC103 and not the planted look-alike (an addChild cut short by
    /// the end of session 55cba8d6, whose container is a ThreadViewController).
    /// Every `lctrace query "…"` that the README and docs/ show outside the numbered list runs
    /// on SampleTraces too (those with an ellipsis are a shape, not a query).
    func testEveryQueryCommandOfTheDocsRuns() throws {
        let commands = try NSRegularExpression(pattern: #"lctrace query [^"\n`]*"([^"]+)""#)
        let docs = try FileManager.default.contentsOfDirectory(atPath: TestSupport.root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        var found: [String] = []
        for path in ["README.md"] + docs {
            let text = try Self.read(path)
            found += commands.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range(at: 1), in: text)!]) }
                .filter { !$0.contains("…") }
                // In prose the generated pages escape Markdown (`count(\*)`), which renders as the SQL.
                .map { $0.replacingOccurrences(of: #"\\([*_\[\]])"#, with: "$1", options: .regularExpression) }
        }
        XCTAssertGreaterThanOrEqual(found.count, 5, "\(found)")
        for sql in found {
            let r = TestSupport.run(["query", "--db", db, "-f", "csv", sql])
            XCTAssertEqual(r.status, 0, "\(sql): \(r.err)")
            XCTAssertGreaterThan(r.out.split(separator: "\n").count, 1, "\(sql) returns no row on SampleTraces")
        }
    }

    func testQueriesAnswerWhatTheirCommentsSay() throws {
        let queries = try Self.readmeQueries()
        let json = TestSupport.run(["report", "--db", db, "--format", "json", "--fail-on", "never"])
        let document = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as! [String: Any]
        let findings = document["findings"] as! [[String: Any]]
        func count(_ rules: Set<String>) -> Int { findings.filter { rules.contains($0["rule"] as! String) }.count }

        let leaks = rows(queries[1]!).dropFirst()
        XCTAssertEqual(leaks.map { Int($0[2])! }.reduce(0, +), count(["LC301"]))
        let leakBuilds = Set(findings.filter { $0["rule"] as? String == "LC301" }.map { "\($0["app"]!) \($0["class"]!) \($0["build"]!)" })
        XCTAssertEqual(leaks.map { Int($0[4])! }.reduce(0, +), leakBuilds.count, "builds per app and class")

        let containment = rows(queries[10]!).dropFirst()
        XCTAssertEqual(containment.map { Int($0[2])! }.reduce(0, +), count(["LC102", "LC103"]))
        XCTAssertFalse(containment.contains { $0[0] == "ThreadViewController" }, "Q10 lists the look-alike")
        // The raw edges do hold it: the query's join is what leaves it out.
        let raw = rows("SELECT parent_class FROM containment_v WHERE did_move_seq IS NULL").dropFirst()
        XCTAssertTrue(raw.contains { $0[0] == "ThreadViewController" }, "the look-alike is in the samples")

        let evidence = rows(queries[2]!).dropFirst().map { $0[0] }
        let firstLeak = findings.first { $0["rule"] as? String == "LC301" }!
        XCTAssertEqual(evidence, (firstLeak["evidence"] as! [Int]).map(String.init))
    }

    func testSQLFromAFileOrStandardInput() throws {
        let sql = try Self.readmeQueries()[1]!
        let direct = TestSupport.run(["query", "--db", db, sql])
        try sql.write(toFile: dir + "/q.sql", atomically: true, encoding: .utf8)
        XCTAssertEqual(TestSupport.run(["query", "--db", db, "--file", dir + "/q.sql"]).out, direct.out)
        for source in [["-"], ["--file", "-"]] {
            let console = CapturingConsole()
            let status = CLI.run(["query", "--db", db] + source, console: console, environment: [:],
                                 standardInput: { _ in Data(sql.utf8) })
            XCTAssertEqual(status, 0, console.errors)
            XCTAssertEqual(console.output, direct.out)
        }
        // A file ending in a comment, several blank lines and semicolons is still one statement.
        try (sql + "\n;\n-- the end\n\n").write(toFile: dir + "/tail.sql", atomically: true, encoding: .utf8)
        XCTAssertEqual(TestSupport.run(["query", "--db", db, "--file", dir + "/tail.sql"]).out, direct.out)

        let missing = TestSupport.run(["query", "--db", db, "--file", dir + "/none.sql"])
        XCTAssertEqual(missing.status, 66)
        XCTAssertEqual(missing.err, "Error: cannot read the SQL in \(dir)/none.sql: no such file\n")
        let folder = TestSupport.run(["query", "--db", db, "--file", dir])
        XCTAssertEqual(folder.status, 66)
        XCTAssertTrue(folder.err.hasPrefix("Error: cannot read the SQL in \(dir): "), folder.err)
        try Data([0x53, 0x45, 0xff]).write(to: URL(fileURLWithPath: dir + "/bad.sql"))
        XCTAssertEqual(TestSupport.run(["query", "--db", db, "--file", dir + "/bad.sql"]).status, 65)
        let both = TestSupport.run(["query", "--db", db, "--file", dir + "/q.sql", "SELECT 1"])
        XCTAssertEqual(both.status, 64)
        XCTAssertTrue(both.err.contains("give the SQL once"), both.err)
        let none = TestSupport.run(["query", "--db", db])
        XCTAssertEqual(none.status, 64)
        XCTAssertTrue(none.err.contains("missing SQL"), none.err)
        let tooLong = CapturingConsole()
        XCTAssertEqual(CLI.run(["query", "--db", db, "-"], console: tooLong, environment: [:], standardInput: { _ in nil }), 64)
        XCTAssertTrue(tooLong.errors.contains("longer than 16 MiB"), tooLong.errors)
    }

    /// SQL is never taken for an option, wherever it stands; an option's typo still gets its hint.
    func testSQLIsNeverAnOption() {
        let comment = "-- which events?\nSELECT count(*) AS n FROM events"
        let first = TestSupport.run(["query", comment, "--db", db, "-f", "csv"])
        XCTAssertEqual(first.status, 0, first.err)
        XCTAssertEqual(first.out, "n\n3579\n")
        XCTAssertEqual(TestSupport.run(["query", "--db", db, "-f", "csv", "--", comment]).out, first.out)
        let onlyComment = TestSupport.run(["query", "--db", db, "-- nothing here"])
        XCTAssertEqual(onlyComment.status, 64)
        XCTAssertEqual(onlyComment.err, "Error: empty query: the SQL holds only comments\n")
        let typo = TestSupport.run(["query", "--db", db, "--fromat", "csv", "SELECT 1"])
        XCTAssertEqual(typo.status, 64)
        XCTAssertEqual(typo.err, "Error: unknown option '--fromat' for 'lctrace query'\nHint: did you mean '--format'?\n")
        XCTAssertEqual(TestSupport.run(["query", "--db", db, "-x"]).status, 64)
        let two = TestSupport.run(["query", "--db", db, "SELECT 1", "-- and more"])
        XCTAssertEqual(two.status, 64)
        XCTAssertTrue(two.err.contains("unexpected argument '-- and more'"), two.err)
        for (arg, shaped) in [("--format", true), ("--format=csv", true), ("-f", true), ("-- 1. Which", false),
                              ("--\nSELECT 1", false), ("-1", false), ("--x=a\nb", false), ("-- ", false)] {
            XCTAssertEqual(ArgumentParser.looksLikeOption(arg), shaped, arg)
        }
    }
}
