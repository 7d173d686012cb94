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

/// The command line in-process: help, usage errors with suggestions, exit statuses,
/// the read-only query command, and the docs' promises.
final class CLITests: TemporaryDirectoryTestCase {

    /// An error lctrace has no words for is a bug: exit 70 (EX_SOFTWARE), the error, and a
    /// request to report it; never 74, which tells the user their database is at fault.
    func testAnErrorWithoutWordsIsAnInternalError() {
        struct Unexpected: Error {}
        let console = CapturingConsole()
        XCTAssertEqual(CLI.report(Unexpected(), console), 70)
        XCTAssertTrue(console.errors.contains("Error: Unexpected()"), console.errors)
        XCTAssertTrue(console.errors.contains("This is a bug in lctrace"), console.errors)
        XCTAssertTrue(ExitStatus.meanings.contains { $0.status == 70 }, "the overview and the manual page list it")
    }

    /// The parser records what the command declares, so that reading any other option name
    /// traps in debug builds (every test runs in one).
    func testParsedArgumentsKnowTheDeclaredOptions() throws {
        for command in CLI.commands {
            let args = try ArgumentParser.parse(["--help"], spec: command.spec)
            XCTAssertEqual(args.declared, Set(command.spec.options.map(\.name)), command.spec.name)
        }
    }

    func loadSample() {
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"RootVC""#)
        b.vc(3, "viewWillAppear", "0xa", #""animated":false"#)
        b.vc(4, "viewIsAppearing", "0xa", #""animated":false"#)
        b.vc(5, "viewDidAppear", "0xa", #""animated":false"#)
        b.vc(6, "init", "0xo", #""cls":"OrphanVC""#)
        b.vc(7, "viewAttached", "0xo", #""host":"0xa""#)
        b.add(9000, "sessionEnd", #""reason":"stopped""#)
        TestSupport.writeLines(b.lines, to: dir + "/s.jsonl")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, dir + "/s.jsonl"]).status, 0)
    }

    func testHelpForEveryCommandAgrees() {
        for name in CLI.commandNames {
            let a = TestSupport.run([name, "--help"])
            let b = TestSupport.run(["help", name])
            let c = TestSupport.run([name, "-h"])
            XCTAssertEqual(a.status, 0)
            XCTAssertEqual(a.out, b.out)
            XCTAssertEqual(a.out, c.out)
            XCTAssertTrue(a.out.contains("Usage: lctrace \(name)"), a.out)
            // Every option of the table appears in the help text.
            let spec = CLI.commands.first { $0.spec.name == name }!.spec
            for option in spec.options { XCTAssertTrue(a.out.contains("--\(option.name)"), "\(name) help lacks --\(option.name)") }
        }
        let overview = TestSupport.run([])
        XCTAssertEqual(overview.status, 0)
        for name in CLI.commandNames { XCTAssertTrue(overview.out.contains(name)) }
        XCTAssertEqual(TestSupport.run(["--version"]).out, "lctrace \(CLI.version)\n")
    }

    func testUnknownOptionsAndCommandsSuggestTheClosest() {
        let r = TestSupport.run(["report", "--min-severty", "error"])
        XCTAssertEqual(r.status, 64)
        XCTAssertTrue(r.err.contains("unknown option '--min-severty'"), r.err)
        XCTAssertTrue(r.err.contains("did you mean '--min-severity'?"), r.err)
        let c = TestSupport.run(["repot"])
        XCTAssertEqual(c.status, 64)
        XCTAssertTrue(c.err.contains("did you mean 'report'?"), c.err)
        let f = TestSupport.run(["query", "--db", db, "--format", "jsn", "SELECT 1"])
        XCTAssertEqual(f.status, 64)
        XCTAssertTrue(f.err.contains("did you mean 'json'?"), f.err)
        XCTAssertEqual(TestSupport.run(["ingest"]).status, 64, "a path is required")
        XCTAssertEqual(TestSupport.run(["query", "--db", db]).status, 64)
        XCTAssertTrue(TestSupport.run(["report", "--grace", "soon"]).err.contains("invalid --grace 'soon'"))
        XCTAssertTrue(TestSupport.run(["report", "--fail-on", "errors"]).err.contains("did you mean 'error'?"))
    }

    func testDatabaseFromTheEnvironment() {
        loadSample()
        let r = TestSupport.run(["sessions", "--format", "csv"], env: ["LCTRACE_DB": db])
        XCTAssertEqual(r.status, 0)
        XCTAssertTrue(r.out.hasPrefix("session,app,version,build,device,os,sdk,start,duration_s,events,lost,end\nS1,com.example.app,1.0,1,\"iPhone16,2\""), r.out)
        XCTAssertEqual(TestSupport.run(["sessions"], env: ["LCTRACE_DB": dir + "/missing.db"]).status, 74)
    }

    func testQueryFormats() throws {
        loadSample()
        let table = TestSupport.run(["query", "--db", db, "SELECT event, count(*) AS n FROM events_v WHERE event IN ('init', 'sessionEnd') GROUP BY event ORDER BY event"])
        XCTAssertEqual(table.status, 0)
        XCTAssertEqual(table.out, "event       n\n----------  -\ninit        2\nsessionEnd  1\n(2 rows)\n")
        let csv = TestSupport.run(["query", "--db", db, "-f", "csv", "SELECT 'a,b' AS x, NULL AS y, 2.5 AS z"])
        XCTAssertEqual(csv.out, "x,y,z\n\"a,b\",,2.5\n")
        let json = TestSupport.run(["query", "--db", db, "--format=json", "SELECT 'q\"' AS x, 3 AS n"])
        let parsed = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as! [[String: Any]]
        XCTAssertEqual(parsed.first?["x"] as? String, "q\"")
        XCTAssertEqual(parsed.first?["n"] as? Int, 3)
        XCTAssertEqual(TestSupport.run(["query", "--db", db, "-f", "json", "SELECT 1 WHERE 0"]).out, "[]\n")
    }

    func testQueryIsReadOnly() throws {
        loadSample()
        let before = try TestSupport.logicalDump(db)
        for sql in ["DELETE FROM events", "DROP TABLE events", "UPDATE sessions SET app = 'x'",
                    "INSERT INTO strings(text) VALUES ('x')", "ATTACH DATABASE '\(dir)/other.db' AS o",
                    "PRAGMA user_version = 7", "PRAGMA journal_mode = DELETE", "CREATE TABLE t(x)",
                    "SELECT 1; DELETE FROM events", "VACUUM"] {
            let r = TestSupport.run(["query", "--db", db, sql])
            XCTAssertEqual(r.status, 64, "\(sql) was not refused: \(r.out)")
            XCTAssertTrue(r.err.hasPrefix("Error: "), r.err)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/other.db"))
        XCTAssertEqual(try TestSupport.logicalDump(db), before)
        XCTAssertEqual(TestSupport.run(["query", "--db", db, "PRAGMA user_version"]).status, 0)
        XCTAssertEqual(TestSupport.run(["query", "--db", db, "SELECT * FROM pragma_table_info('events')"]).status, 0)
        let bad = TestSupport.run(["query", "--db", db, "SELEC 1"])
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.err.contains("SQL error"), bad.err)
    }

    func testReportExitStatusFollowsFailOn() throws {
        loadSample()
        XCTAssertEqual(TestSupport.run(["report", "--db", db]).status, 1, "LC101 is an error")
        XCTAssertEqual(TestSupport.run(["report", "--db", db, "--fail-on", "never"]).status, 0)
        XCTAssertEqual(TestSupport.run(["report", "--db", db, "--gaps"]).status, 0, "no error among the gap findings")
        XCTAssertEqual(TestSupport.run(["report", "--db", db, "--class", "RootVC"]).status, 0)
        let json = TestSupport.run(["report", "--db", db, "--format", "json", "--fail-on", "warning"])
        XCTAssertEqual(json.status, 1)
        let doc = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as! [String: Any]
        XCTAssertEqual(doc["version"] as? Int, 1)
        let findings = doc["findings"] as! [[String: Any]]
        XCTAssertEqual(findings.map { $0["rule"] as! String }, ["LC101"])
        XCTAssertEqual(findings[0]["since"] as? Int, 6)
        XCTAssertEqual(Set(findings[0].keys), Set(JSONReporter.columns))
        let summary = doc["summary"] as! [String: Any]
        XCTAssertEqual((summary["by_rule"] as! [String: Int])["LC101"], 1)
        XCTAssertEqual(summary["sessions"] as? Int, 1)
        let csv = TestSupport.run(["report", "--db", db, "--format", "csv", "--fail-on", "never"]).out
        XCTAssertTrue(csv.hasPrefix(JSONReporter.columns.joined(separator: ",") + "\nLC101,orphan-view,error,S1,0xo,6,OrphanVC,"), csv)
        XCTAssertEqual(TestSupport.run(["report", "--db", db, "--session", "nope"]).status, 66, "no session selected")
    }

    func testFromAFindingToItsRawEventsInOneQuery() {
        loadSample()
        let r = TestSupport.run(["query", "--db", db, "-f", "csv", """
            SELECT e.seq, e.event, e.vc FROM findings_v f, json_each(f.evidence) j
            JOIN events_v e ON e.session_id = f.session_id AND e.seq = j.value WHERE f.rule = 'LC101' ORDER BY e.seq
            """])
        XCTAssertEqual(r.out, "seq,event,vc\n7,viewAttached,0xo\n")
    }

    /// The README names every command (its tour and links are the front door); every option
    /// is in docs/cli.md (generated from the specs: GeneratedDocsTests keeps it fresh), every
    /// rule in docs/rule-reference.md.
    func testTheDocsNameEveryCommandOptionAndRule() throws {
        func read(_ path: String) throws -> String { try String(contentsOf: TestSupport.root.appendingPathComponent(path), encoding: .utf8) }
        let readme = try read("README.md"), cli = try read("docs/cli.md"), rules = try read("docs/rule-reference.md")
        for command in CLI.commands {
            XCTAssertTrue(readme.contains("lctrace \(command.spec.name)"), "README lacks lctrace \(command.spec.name)")
            XCTAssertTrue(cli.contains("### lctrace \(command.spec.name)\n"), "docs/cli.md lacks lctrace \(command.spec.name)")
            for option in command.spec.options {
                XCTAssertTrue(cli.contains("`--\(option.name)"), "docs/cli.md lacks --\(option.name) of \(command.spec.name)")
            }
        }
        for rule in RuleCatalog.all { XCTAssertTrue(rules.contains("### \(rule.id) "), "docs/rule-reference.md lacks \(rule.id)") }
    }

    func testDurationsAndTuningParse() throws {
        func ns(_ text: String) throws -> Int64 { try OptionValues.duration(text, option: "--grace", range: OptionValues.ruleDurations) }
        XCTAssertEqual(try ns("5s"), 5_000_000_000)
        XCTAssertEqual(try ns("2500ms"), 2_500_000_000)
        XCTAssertEqual(try ns("1.5s"), 1_500_000_000)
        XCTAssertEqual(try ns("1m"), 60_000_000_000)
        XCTAssertEqual(try ns("24h"), 86_400_000_000_000)
        XCTAssertEqual(try ns("300us"), 300_000)
        XCTAssertEqual(try ns("0.000000001s"), 1)
        XCTAssertEqual(try ns("007ms"), 7_000_000)
        for bad in ["fast", "1.5", "5000", "", "s", "1e3s", ".5s", "5.s", "0x10s", "nans", "infs", "+5s", " 5s", "5 s"] {
            XCTAssertThrowsError(try ns(bad), "'\(bad)' was accepted")
        }
        XCTAssertEqual(OptionValues.describe(86_400_000_000_000), "24h")
        XCTAssertEqual(OptionValues.describe(1_500_000), "1500us")
        let args = try ArgumentParser.parse(["--gap-threshold", "animated=2s,plain=100ms", "--max-live", "A=3", "--max-live", "B=4"],
                                            spec: ReportCommand.spec)
        let settings = try TuningOptions.settings(args)
        XCTAssertEqual(settings.gapAnimated, 2_000_000_000)
        XCTAssertEqual(settings.gapPlain, 100_000_000)
        XCTAssertEqual(settings.maxLive, ["A": 3, "B": 4])
    }

    /// The ingest JSON summary has exactly the keys docs/usage.md documents.
    func testIngestJSONSummaryHasTheDocumentedKeys() throws {
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"A""#)
        TestSupport.writeLines(b.lines, to: dir + "/one.jsonl")
        let r = TestSupport.run(["ingest", "--db", db, "--format", "json", dir + "/one.jsonl"])
        XCTAssertEqual(r.status, 0, r.err)
        let json = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as! [String: Any]
        XCTAssertEqual(Set(json.keys), ["files", "events", "record_conflicts", "rejects", "damaged_files", "missing_files",
                                        "seconds", "events_per_second", "analysis", "database"])
        let file = (json["files"] as! [[String: Any]])[0]
        XCTAssertEqual(Set(file.keys), ["path", "status", "note", "lines", "events", "new", "duplicates", "conflicts", "rejects"])
        XCTAssertEqual(Set((json["events"] as! [String: Any]).keys), ["new", "duplicate", "conflicting"])
        let analysis = json["analysis"] as! [String: Any]
        XCTAssertEqual(Set(analysis.keys), ["sessions", "while_loading", "findings", "seconds"])
        XCTAssertEqual(analysis["sessions"] as? Int, 1)
        let database = json["database"] as! [String: Any]
        XCTAssertEqual(Set(database.keys), ["sessions", "events", "session_findings", "file_findings"])
        XCTAssertEqual(database["sessions"] as? Int, 1)
        let usage = try String(contentsOf: TestSupport.root.appendingPathComponent("docs/usage.md"), encoding: .utf8)
        for key in json.keys.sorted() + file.keys.sorted() + analysis.keys.sorted() + database.keys.sorted() {
            XCTAssertTrue(usage.contains("`\(key)`"), "docs/usage.md does not document \(key)")
        }
    }

    /// (Issue 25) A run that loads only a wrong file promised "1 findings (lctrace report)" and
    /// `report` then found an empty database: the summary says this run's numbers apart from
    /// what the database holds.
    func testTheIngestSummarySaysTheRunApartFromTheDatabase() throws {
        let wrong = dir + "/notes.txt"
        try "hello, this is not a trace\n".write(toFile: wrong, atomically: true, encoding: .utf8)
        let first = TestSupport.run(["ingest", "--db", db, wrong])
        XCTAssertEqual(first.status, 65, first.err)
        XCTAssertTrue(first.out.contains("  sessions  0 analyzed in ") && first.out.contains(": 0 findings\n"), first.out)
        XCTAssertTrue(first.out.contains("  database  0 sessions, 0 events, 0 findings on sessions, 1 finding on files: no session yet"), first.out)
        XCTAssertFalse(first.out.contains("(lctrace report)"), "nothing for report to show:\n\(first.out)")

        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"A""#)
        TestSupport.writeLines(b.lines, to: dir + "/one.jsonl")
        XCTAssertEqual(TestSupport.run(["ingest", "--db", db, dir + "/one.jsonl"]).status, 0)
        // A second run over the same file analyses nothing; the database still holds the session.
        let again = TestSupport.run(["ingest", "--db", db, dir + "/one.jsonl"])
        XCTAssertEqual(again.status, 0, again.err)
        XCTAssertTrue(again.out.contains("  sessions  0 analyzed in "), again.out)
        XCTAssertTrue(again.out.contains("  database  1 session, "), again.out)
        // The command it suggests reads the database the run named (pasted after a run on
        // sample.db it read ./lctrace.db); without --db, the default needs none.
        XCTAssertTrue(again.out.contains("1 finding on files (lctrace report --db \(Shell.word(db)))"), again.out)
        let unnamed = TestSupport.run(["ingest", "--no-analyze", dir + "/one.jsonl"], env: ["LCTRACE_DB": db])
        XCTAssertTrue(unnamed.out.contains("(lctrace report)") && unnamed.out.contains("run lctrace analyze\n"), unnamed.out)
        let named = TestSupport.run(["ingest", "--no-analyze", "--db", db, dir + "/one.jsonl"])
        XCTAssertTrue(named.out.contains("run lctrace analyze --db \(Shell.word(db))\n"), named.out)
        let baseline = TestSupport.run(["baseline", "--db", db])
        XCTAssertEqual(baseline.status, 64)
        XCTAssertTrue(baseline.err.contains("Hint: lctrace baseline --db \(Shell.word(db)) -o lctrace-baseline.json"), baseline.err)
    }

    /// A database named where no file goes (`lctrace report sample.db`) is shown where it
    /// goes; a URL so given never shows its password.
    func testADatabaseGivenAsAnArgumentIsShownAfterDb() {
        let r = TestSupport.run(["report", "sample.db"])
        XCTAssertEqual(r.status, 64)
        XCTAssertTrue(r.err.contains("Hint: a database goes after --db: lctrace report --db sample.db"), r.err)
        let url = TestSupport.run(["sessions", "postgresql://qa:Hunter2@h/lc"])
        XCTAssertTrue(url.err.contains("unexpected argument (a database URL or connection string, not shown)") && url.err.contains("--db postgresql://qa@h/lc"), url.err)
        XCTAssertFalse(url.err.contains("Hunter2"), url.err)
        let other = TestSupport.run(["sessions", "notes.txt"])
        XCTAssertTrue(other.err.contains("Hint: usage: lctrace sessions"), other.err)
    }

    /// A file of nothing (a device copy that failed) or of blank lines loads nothing, and the
    /// run says so by name; an ingest of only such files is not an error.
    func testAnEmptyFileIsNamedNotPassedOverInSilence() throws {
        try Data().write(to: URL(fileURLWithPath: dir + "/empty.jsonl.gz"))
        try "\n\n".write(toFile: dir + "/blank.jsonl", atomically: true, encoding: .utf8)
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"A""#)
        TestSupport.writeLines(b.lines, to: dir + "/one.jsonl")
        let r = TestSupport.run(["ingest", "--db", db, dir + "/empty.jsonl.gz", dir + "/blank.jsonl", dir + "/one.jsonl"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.err.contains("Warning: \(dir)/empty.jsonl.gz: empty: no trace line loaded from it\n"), r.err)
        XCTAssertTrue(r.err.contains("Warning: \(dir)/blank.jsonl: only blank lines: no trace line loaded from it\n"), r.err)
        XCTAssertFalse(r.err.contains("one.jsonl"), r.err)
    }

    /// (Issue 25) The grouped text report fits the terminal's width, broken at spaces with the
    /// rest indented, and says the same words as the whole lines a pipe gets.
    func testTheTextReportFitsTheTerminalAndAPipeGetsWholeLines() {
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, samples]).status, 0)
        let terminal = CapturingConsole(terminal: true)
        terminal.outputWidth = 72
        XCTAssertEqual(CLI.run(["report", "--db", db], console: terminal, environment: [:]), 1)
        let shown = terminal.output.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
        for line in shown.split(separator: "\n") {
            XCTAssertLessThanOrEqual(line.count, 72, "fits the terminal: \(line)")
        }
        let piped = TestSupport.run(["report", "--db", db]).out
        XCTAssertTrue(piped.split(separator: "\n").contains { $0.count > 72 }, "a pipe gets whole lines")
        XCTAssertEqual(shown.split(whereSeparator: \.isWhitespace), piped.split(whereSeparator: \.isWhitespace),
                       "the same words, only broken")
    }

    func testAnalysisProgressSaysHowFarIntoALongSession() {
        XCTAssertEqual(AnalyzeCommand.describe(AnalysisProgress(sessionsDone: 0, sessions: 1, eventsIntoNext: 3_276_800)),
                       "analyze 0/1 sessions (3,276,800 events into the next)")
        XCTAssertEqual(AnalyzeCommand.describe(AnalysisProgress(sessionsDone: 2, sessions: 5, eventsIntoNext: 0)),
                       "analyze 2/5 sessions")
    }

    func testProgressIsDrawnOnATerminalOnly() {
        var b = TraceBuilder()
        for i in 0..<40_000 { b.add(Double(i), "mark", "\"name\":\"m\"") }
        TestSupport.writeLines(b.lines, to: dir + "/big.jsonl")
        let piped = CapturingConsole(terminal: false)
        XCTAssertEqual(CLI.run(["ingest", "--db", db, dir + "/big.jsonl"], console: piped, environment: [:]), 0)
        XCTAssertTrue(piped.progressLines.isEmpty)
        let terminal = CapturingConsole(terminal: true)
        XCTAssertEqual(CLI.run(["ingest", "--db", dir + "/t2.db", dir + "/big.jsonl"], console: terminal, environment: [:]), 0)
        XCTAssertFalse(terminal.progressLines.isEmpty)
        // The first line is drawn some 16,384 lines into the file: the run so far, then the file.
        XCTAssertTrue(terminal.progressLines[0].hasPrefix("ingest 0/1 files · "), terminal.progressLines[0])
        XCTAssertTrue(terminal.progressLines[0].contains(" MB · ") && terminal.progressLines[0].contains(" · big.jsonl "),
                      terminal.progressLines[0])
    }

    /// The progress line of the whole run: files done of all, events, bytes, rate, time left.
    func testIngestProgressShowsTheWholeRun() {
        var p = IngestProgress(fileIndex: 12, fileCount: 300, path: "/logs/device-013.jsonl.gz", lines: 5_000, events: 4_990,
                               rawBytes: 250_000, rawSize: 1_000_000)
        p.run = IngestProgress.Run(filesDone: 12, events: 1_234_567, bytesRead: 40_000_000, bytesSkipped: 5_000_000, totalBytes: 282_000_000)
        XCTAssertEqual(IngestCommand.describe(p, seconds: 4),
                       "ingest 12/300 files · 1,234,567 events · 45.0 of 282.0 MB · 308,641 events/s · ETA 0:24 · device-013.jsonl.gz 25%")
        // The time left is the bytes still to read at the rate so far: 3,604 GB at 1 GB/s.
        p.run.bytesRead = 4_000_000_000
        p.run.totalBytes = 8_000_000_000 + 5_000_000 + 3_600 * 1_000_000_000
        XCTAssertTrue(IngestCommand.describe(p, seconds: 4).contains(" · ETA 1:00:04 · "), IngestCommand.describe(p, seconds: 4))
        // Standard input has no size: bytes without a total, no ETA; the last file done: no file.
        p.run.totalBytes = nil
        p.run.filesDone = 300
        XCTAssertEqual(IngestCommand.describe(p, seconds: 4), "ingest 300/300 files · 1,234,567 events · 4005.0 MB · 308,641 events/s")
        // (Issue 25) On an 80-column terminal the ETA was cut ("… · ETA 0:2…"): the file's name
        // gives way first, cut from its start, then the parts before the time left.
        p.run = IngestProgress.Run(filesDone: 12, events: 1_234_567, bytesRead: 40_000_000, bytesSkipped: 5_000_000, totalBytes: 282_000_000)
        p.path = "/logs/device-farm-run-2026-12-04-iphone15-pro-device-013.jsonl.gz"
        let line = IngestCommand.describe(p, seconds: 4)
        XCTAssertGreaterThan(line.count, 80)
        let at120 = StandardConsole.fitted(line, width: 120)
        XCTAssertLessThanOrEqual(at120.count, 119, at120)
        XCTAssertTrue(at120.contains(" · ETA 0:24 · …") && at120.hasSuffix("013.jsonl.gz 25%"), at120)
        let at80 = StandardConsole.fitted(line, width: 80)
        XCTAssertLessThanOrEqual(at80.count, 79, at80)
        XCTAssertTrue(at80.hasSuffix(" · ETA 0:24"), at80)
        let at40 = StandardConsole.fitted(line, width: 40)
        XCTAssertLessThanOrEqual(at40.count, 39, at40)
        XCTAssertTrue(at40.hasPrefix("ingest 12/300 files") && at40.hasSuffix("ETA 0:24"), at40)
        XCTAssertEqual(StandardConsole.fitted("short", width: 80), "short")
        XCTAssertEqual(IngestCommand.clock(59.2), "1:00")
        XCTAssertEqual(IngestCommand.clock(3_661), "1:01:01")
    }
}
