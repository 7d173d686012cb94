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

/// No silent passes: an empty selection fails with one line (exit 66) unless --allow-empty,
/// session prefixes are resolved or refused with candidates, an ingest that loads nothing
/// fails, and every follow-up hint keeps the database and the filters.
final class SelectionTests: TemporaryDirectoryTestCase {
    /// Sessions `ab12…`, `AB13…`, `cd00…` (app com.example.app, build 1) with an orphan each.
    func load() { Self.load(into: db, dir: dir) }

    static func load(into db: String, dir: String) {
        for sid in ["ab12-0000", "AB13-0000", "cd00-0000"] {
            var b = TraceBuilder(sid: sid)
            b.vc(2, "init", "0xh", #""cls":"HostVC""#)
            b.vc(3, "init", "0xo", #""cls":"OrphanVC""#)
            b.vc(4, "viewAttached", "0xo", #""host":"0xh""#)
            b.add(9000, "sessionEnd", #""reason":"stopped""#)
            TestSupport.writeLines(b.lines, to: dir + "/\(sid).jsonl")
        }
        let r = TestSupport.run(["ingest", "-q", "--db", db, dir])
        XCTAssertEqual(r.status, 0, r.err)
    }

    /// Every filter of every command that names nothing in the database (`load`'s) is a typo,
    /// not an empty pass: exit 66, one line naming the value and the closest known one, nothing
    /// on standard output. Run on SQLite here and on PostgreSQL by `PostgreSQLSelectionTests`.
    static func assertFiltersNamingNothingExit66WithTheClosest(db: String, file: StaticString = #filePath, line: UInt = #line) {
        let session = "did you mean 'cd00-0000'?", app = "did you mean --app 'com.example.app'?"
        let cases: [([String], String)] = [
            (["report", "--session", "cd01"], session),
            (["baseline", "-o", "-", "--session", "cd01"], session),
            (["export", "-o", "-", "--session", "cd01"], session),
            (["timeline", "--session", "cd01"], session),
            (["report", "--app", "com.example.ap"], app),
            (["baseline", "-o", "-", "--app", "com.example.ap"], app),
            (["compare", "--base-build", "1", "--head-build", "1", "--app", "com.example.ap"], app),
            (["export", "-o", "-", "--app", "com.example.ap"], app),
            (["export", "-o", "-", "--session", "ab12", "--app", "com.example.ap"], app),
            (["report", "--build", "11"], "did you mean --build '1'?"),
            (["baseline", "-o", "-", "--build", "11"], "did you mean --build '1'?"),
            (["compare", "--base-build", "1", "--head-build", "11"], "did you mean --head-build '1'?"),
            (["compare", "--base-build", "2", "--head-build", "1"], "no session matches --build 2"),
            (["export", "-o", "-", "--build", "11"], "did you mean --build '1'?"),
            (["sessions", "--app", "com.example.ap"], app),
            (["sessions", "--build", "11"], "did you mean --build '1'?"),
            (["report", "--class", "OrphanVCC"], "did you mean 'OrphanVC'?"),
            (["export", "-o", "-", "--session", "ab12", "--class", "OrphanVCC"], "did you mean 'OrphanVC'?"),
            (["timeline", "--session", "ab12", "--class", "OrphanVCC"], "did you mean 'OrphanVC'?"),
            (["timeline", "--session", "ab12", "--vc", "0xoo"], "did you mean '0xo'?"),
        ]
        for (args, expected) in cases {
            let r = TestSupport.run(args + ["--db", db])
            XCTAssertEqual(r.status, 66, "\(args): \(r.err)", file: file, line: line)
            XCTAssertTrue(r.err.hasPrefix("Error: ") && r.err.contains(expected), "\(args): \(r.err)", file: file, line: line)
            XCTAssertEqual(r.out, "", "\(args)", file: file, line: line)
        }
        // Known values that select nothing together, or nothing near: no guess.
        let far = TestSupport.run(["report", "--db", db, "--app", "org.other.thing"])
        XCTAssertEqual(far.status, 66, file: file, line: line)
        XCTAssertFalse(far.err.contains("did you mean"), far.err, file: file, line: line)
    }

    func testEveryFilterNamingNothingExits66WithTheClosestKnownValue() {
        load()
        Self.assertFiltersNamingNothingExit66WithTheClosest(db: db)
    }

    func testAnEmptySelectionExits66WithOneLineUnlessAllowed() throws {
        load()
        let commands: [[String]] = [["report"], ["report", "--format", "json"], ["baseline", "-o", "-"],
                                    ["compare", "--base-build", "1", "--head-build", "2"]]
        for command in commands {
            let args = command + ["--db", db] + (command[0] == "compare" ? [] : ["--build", "999"])
            let r = TestSupport.run(args)
            XCTAssertEqual(r.status, 66, "\(args): \(r.err)")
            XCTAssertEqual(r.err.split(separator: "\n").count, 1, r.err)
            XCTAssertTrue(r.err.contains("no session matches --build \(command[0] == "compare" ? "2" : "999") (of 3 sessions in \(db))"), r.err)
            XCTAssertEqual(r.out, "")
            XCTAssertEqual(TestSupport.run(args + ["--allow-empty"]).status, 0, "\(args) --allow-empty")
        }
        XCTAssertTrue(TestSupport.run(["report", "--db", db, "--app", "com.other"]).err.contains("no session matches --app com.other"))
        // An empty database is an empty selection too.
        let empty = dir + "/empty.db"
        _ = try SQLiteSchema.openForWriting(path: empty)
        let r = TestSupport.run(["report", "--db", empty])
        XCTAssertEqual(r.status, 66)
        XCTAssertEqual(r.err, "Error: no session in \(empty): the database is empty (load traces with lctrace ingest)\n")
        XCTAssertEqual(TestSupport.run(["report", "--db", empty, "--allow-empty", "--format", "json"]).status, 0)
    }

    /// A `--class` that names no class of any session is a typo, not a pass: exit 66 with the
    /// closest known class; a known class without findings is "No findings." (exit 0).
    func testAClassThatNoSessionHasExits66WithTheClosestKnownOne() throws {
        load()
        for command in [["report"], ["report", "-f", "json"], ["baseline", "-o", "-"]] {
            let r = TestSupport.run(command + ["--db", db, "--class", "OrphanVCC"])
            XCTAssertEqual(r.status, 66, "\(command): \(r.out) \(r.err)")
            XCTAssertTrue(r.err.contains("no class 'OrphanVCC' in any session of \(db)"), r.err)
            XCTAssertTrue(r.err.contains("did you mean 'OrphanVC'?"), r.err)
            XCTAssertEqual(r.out, "")
        }
        let known = TestSupport.run(["report", "--db", db, "--class", "HostVC", "--fail-on", "never"])
        XCTAssertEqual(known.status, 0, known.err)
        XCTAssertTrue(known.out.contains("No findings."), known.out)
    }

    func testSessionPrefixesAreCaseInsensitiveAndAmbiguousOnesListTheCandidates() throws {
        load()
        let r = TestSupport.run(["report", "--db", db, "--session", "ab1"])
        XCTAssertEqual(r.status, 64)
        XCTAssertTrue(r.err.contains("--session 'ab1' matches 2 sessions: AB13-0000, ab12-0000"), r.err)
        XCTAssertTrue(r.err.contains("Hint: give more of the session id"), r.err)
        let one = TestSupport.run(["report", "--db", db, "--session", "aB12", "--format", "json", "--fail-on", "never"])
        XCTAssertEqual(one.status, 0, one.err)
        XCTAssertTrue(one.out.contains("\"session\":\"ab12-0000\""), one.out)
        XCTAssertFalse(one.out.contains("AB13-0000"))
        let exact = TestSupport.run(["report", "--db", db, "--session", "CD00-0000", "--format", "csv"])
        XCTAssertEqual(exact.out.split(separator: "\n").count, 2, "the exact id, whatever its case")
        XCTAssertEqual(TestSupport.run(["report", "--db", db, "--session", "zz"]).status, 66)
    }

    func testEveryHintKeepsTheDatabaseAndTheFilters() throws {
        load()
        let r = TestSupport.run(["report", "--db", db, "--app", "com.example.app", "--build", "1", "--min-severity", "warning", "--examples", "1"])
        let hint = try XCTUnwrap(r.out.split(separator: "\n").first { $0.contains("… and 2 more") })
        let expected = "lctrace query --db \(db) \"SELECT * FROM findings_v WHERE rule = 'LC101' AND app = 'com.example.app' AND build = '1' AND severity IN ('warning', 'error')\""
        XCTAssertTrue(hint.contains(expected), String(hint))
        // Pasting the hint answers the same question: the two findings not shown, and the one shown.
        let sql = try XCTUnwrap(expected.components(separatedBy: "\"").dropFirst().first)
        let rows = TestSupport.run(["query", "--db", db, "-f", "csv", sql.replacingOccurrences(of: "SELECT *", with: "SELECT session")])
        XCTAssertEqual(rows.out.split(separator: "\n").count, 4, rows.out)
        // The timeline's hints name the database too.
        let timeline = TestSupport.run(["timeline", "--db", db, "--session", "zz"])
        XCTAssertTrue(timeline.err.contains("lctrace sessions --db \(db)"), timeline.err)
        let seq = TestSupport.run(["timeline", "--db", db, "--session", "cd00", "--around", "999"])
        XCTAssertTrue(seq.err.contains("lctrace query --db \(db) \"SELECT seq, event, vc FROM events_v WHERE sid = 'cd00-0000'\""), seq.err)
        // A path with a space is quoted for the shell.
        let spaced = dir + "/my db.db"
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", spaced, dir]).status, 0)
        let quoted = TestSupport.run(["report", "--db", spaced, "--examples", "0"]).out
        XCTAssertTrue(quoted.contains("lctrace query --db '\(spaced)' \"SELECT"), quoted)
    }

    func testAnIngestThatLoadsNothingFails() throws {
        let emptyDir = dir + "/nothing"
        try FileManager.default.createDirectory(atPath: emptyDir, withIntermediateDirectories: true)
        try "hello".write(toFile: emptyDir + "/notes.txt", atomically: true, encoding: .utf8)
        let none = TestSupport.run(["ingest", "--db", db, emptyDir])
        XCTAssertEqual(none.status, 66)
        XCTAssertTrue(none.err.contains("Error: \(emptyDir): no trace files in it"), none.err)
        TestSupport.writeLines(["just some text", "and more"], to: dir + "/text.jsonl")
        try #"{"a": [1, 2,"#.write(toFile: dir + "/doc.jsonl", atomically: true, encoding: .utf8)
        for file in ["text.jsonl", "doc.jsonl"] {
            let r = TestSupport.run(["ingest", "--db", db, dir + "/" + file])
            XCTAssertEqual(r.status, 65, file)
            XCTAssertTrue(r.err.contains("Error: \(dir)/\(file): not a single valid trace line"), r.err)
        }
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"A""#)
        TestSupport.writeLines(b.lines + ["garbage"], to: dir + "/mostly-good.jsonl")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, dir + "/mostly-good.jsonl"]).status, 0, "a bad line among good ones")
        // The rejected-lines hint names the database.
        TestSupport.writeLines(b.lines.map { $0.replacingOccurrences(of: "\"S1\"", with: "\"S2\"") } + (0..<8).map { "bad \($0)" },
                               to: dir + "/many-bad.jsonl")
        let many = TestSupport.run(["ingest", "-q", "--db", db, dir + "/many-bad.jsonl"])
        XCTAssertTrue(many.err.contains("more rejected lines (lctrace query --db \(db) \"SELECT line, reason FROM rejects"), many.err)
    }
}
