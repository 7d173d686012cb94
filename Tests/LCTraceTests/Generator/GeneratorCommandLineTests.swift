import XCTest
@testable import LCTraceGen

/// lctrace-gen's command line: every flag documented with its default, bad values refused,
/// and the answer key written beside the folder, where an `ingest DIR/*` never reads it.
final class GeneratorCommandLineTests: TemporaryDirectoryTestCase {

    func testHelpDocumentsEveryOptionWithItsDefault() {
        let help = GeneratorCommandLine.help
        let defaults = CorpusOptions()
        for option in GeneratorCommandLine.table {
            XCTAssertTrue(help.contains("--\(option.name)"), "help lacks --\(option.name)")
            if let value = option.defaultValue(defaults) {
                // The option's entry: its line and the indented lines under it.
                let lines = help.split(separator: "\n")
                guard let at = lines.firstIndex(where: { $0.contains("--\(option.name) ") || $0.hasSuffix("--\(option.name)") }) else {
                    XCTFail("no line for --\(option.name)"); continue
                }
                let entry = ([lines[at]] + lines[(at + 1)...].prefix { $0.hasPrefix(String(repeating: " ", count: 26)) }).joined(separator: "\n")
                XCTAssertTrue(entry.contains("(default: \(value))"), "--\(option.name) does not say its default \(value): \(entry)")
                XCTAssertTrue(lines.allSatisfy { $0.count <= 100 }, "the help fits 100 columns")
            }
        }
        // The defaults said are the ones used.
        XCTAssertTrue(help.contains("--sessions N") && help.contains("(default: \(defaults.sessions))"))
        XCTAssertTrue(help.contains("(default: \(defaults.bugRate))"))
        XCTAssertTrue(help.contains("DIR.expected.json"))
        if case .help = try! GeneratorCommandLine.parse(["--seed", "3", "-h"]) {} else { XCTFail("-h is help") }
    }

    func testEveryOptionIsParsed() throws {
        let args = ["--seed", "7", "--sessions=3", "--per-file", "2", "--scenarios", "5", "--bug-rate", "0.5",
                    "--look-alike-rate", "0", "--rotate-every", "100", "--lines-per-member", "10", "--plain",
                    "--app", "com.example.mail", "--app-version", "6.0", "--build", "901", "--plant", "leakPop, orphanView",
                    "--truth", dir + "/key.json", dir + "/out"]
        guard case .generate(let line) = try GeneratorCommandLine.parse(args) else { return XCTFail("not a run") }
        XCTAssertEqual(line.options.seed, 7)
        XCTAssertEqual(line.options.sessions, 3)
        XCTAssertEqual(line.options.sessionsPerFile, 2)
        XCTAssertEqual(line.options.scenarios, 5)
        XCTAssertEqual(line.options.bugRate, 0.5)
        XCTAssertEqual(line.options.lookAlikeRate, 0)
        XCTAssertEqual(line.options.rotateEvery, 100)
        XCTAssertEqual(line.options.linesPerMember, 10)
        XCTAssertFalse(line.options.gzip)
        XCTAssertEqual(line.options.app, "com.example.mail")
        XCTAssertEqual(line.options.appVersion, "6.0")
        XCTAssertEqual(line.options.build, "901")
        XCTAssertEqual(line.options.regressions, [.leakPop, .orphanView])
        guard case .generate(let recorded) = try GeneratorCommandLine.parse(["--via-recorder", dir + "/r"]) else { return XCTFail("not a run") }
        XCTAssertTrue(recorded.options.viaRecorder)
        XCTAssertEqual(line.truthPath, dir + "/key.json")
        XCTAssertEqual(line.directory, dir + "/out")
        // Every option of the table was named above (a new one needs a line here).
        let named = Set(args.filter { $0.hasPrefix("--") }.map { String($0.dropFirst(2).prefix { $0 != "=" }) })
        XCTAssertEqual(named.union(["sample", "help", "via-recorder"]), Set(GeneratorCommandLine.table.map(\.name)))
    }

    func testBadValuesAreUsageErrorsNamingTheOption() {
        let cases: [([String], String)] = [
            (["--seed", "x", "d"], "invalid --seed 'x'"),
            (["--sessions", "-1", "d"], "invalid --sessions '-1'"),
            (["--per-file", "0", "d"], "invalid --per-file '0'"),
            (["--bug-rate", "1.5", "d"], "invalid --bug-rate '1.5'"),
            (["--look-alike-rate", "nan", "d"], "invalid --look-alike-rate 'nan'"),
            (["--sesions", "3", "d"], "unknown option '--sesions'"),
            (["-x", "d"], "unknown option '-x'"),
            (["--seed"], "option '--seed' needs a value"),
            (["--plain=yes", "d"], "option '--plain' takes no value"),
            (["--seed", "1", "--seed", "2", "d"], "given more than once"),
            ([], "missing DIR"),
            (["a", "b"], "one DIR only"),
            (["--sample", "--seed", "3", "d"], "--sample writes the fixed set: --seed does not apply"),
            (["--truth", "d/expected.json", "d"], "is inside 'd'"),
            (["--truth", "./d/../d/k.json", "d/"], "is inside 'd/'"),
            (["--plant", "leakPop,bogus", "d"], "invalid --plant 'bogus' (expected one of: orphanView,"),
            (["--plant", "stuckAppearing", "d"], "invalid --plant 'stuckAppearing'"),
            (["--plant", "", "d"], "invalid --plant ''"),
            (["--build", "", "d"], "invalid --build ''"),
            (["--app", "a\u{1b}[2J", "d"], "expected text without control characters"),
            (["--via-recorder", "--plain", "d"], "--via-recorder writes each session's own gzip files as the recorder does: --plain does not apply"),
            (["--via-recorder", "--per-file", "2", "d"], "--per-file does not apply"),
        ]
        for (args, message) in cases {
            XCTAssertThrowsError(try GeneratorCommandLine.parse(args), "\(args)") { error in
                XCTAssertTrue("\(error)".contains(message), "\(args): \(error)")
            }
        }
    }

    func testTheAnswerKeyGoesBesideTheFolder() {
        XCTAssertEqual(GeneratorCommandLine.defaultTruthPath(forDirectory: "logs"), "logs.expected.json")
        XCTAssertEqual(GeneratorCommandLine.defaultTruthPath(forDirectory: "runs/logs//"), "runs/logs.expected.json")
        XCTAssertEqual(GeneratorCommandLine.defaultTruthPath(forDirectory: "/tmp/x/."), "/tmp/x.expected.json")
        XCTAssertEqual(GeneratorCommandLine.defaultTruthPath(forDirectory: "/tmp/x/y/.."), "/tmp/x.expected.json")
    }

    /// The real program: a corpus folder holds traces only, so `ingest DIR/*` rejects nothing.
    func testGeneratedFolderHoldsOnlyTraces() throws {
        let gen = URL(fileURLWithPath: TestSupport.binary).deletingLastPathComponent().appendingPathComponent("lctrace-gen").path
        guard FileManager.default.isExecutableFile(atPath: gen) else { throw XCTSkip("lctrace-gen is not built at \(gen)") }
        let out = try TestSupport.process(gen, ["--sessions", "3", "--per-file", "1", "--scenarios", "4", dir + "/logs"])
        XCTAssertEqual(out.status, 0, out.err)
        XCTAssertTrue(out.out.contains("answer key"), out.out)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/logs.expected.json"))
        let files = try FileManager.default.contentsOfDirectory(atPath: dir + "/logs").sorted()
        XCTAssertEqual(files.count, 3, "\(files)")
        XCTAssertTrue(files.allSatisfy { $0.hasSuffix(".jsonl.gz") }, "\(files)")
        let ingest = TestSupport.run(["ingest", "--db", db, "--format", "json"] + files.map { dir + "/logs/" + $0 })
        XCTAssertEqual(ingest.status, 0, ingest.err)
        let summary = try JSONSerialization.jsonObject(with: Data(ingest.out.utf8)) as! [String: Any]
        XCTAssertEqual(summary["rejects"] as? Int, 0, ingest.out)
        let bad = try TestSupport.process(gen, ["--bug-rate", "2", dir + "/other"])
        XCTAssertEqual(bad.status, 64)
        XCTAssertEqual(bad.err, "lctrace-gen: invalid --bug-rate '2' (expected a probability from 0 to 1)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/other"), "nothing written on a usage error")
        let help = try TestSupport.process(gen, ["--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertEqual(help.out, GeneratorCommandLine.help)
    }

    /// Issue 25, item 20: the two-build workflow of docs/reports.md with the repository's own
    /// tools. Two builds of one seed, the second with a regression: they load into one database
    /// (their sessions are their own), a baseline of the first passes the first and fails the
    /// second on the regression's findings only, and compare names exactly those as new.
    func testTwoBuildsOfOneSeedDifferByTheirRegression() throws {
        for (build, extra) in [("900", [String]()), ("901", ["--plant", "leakPop"])] {
            let args = ["--seed", "7", "--sessions", "12", "--app", "com.example.shop", "--app-version", "5.3", "--build", build]
            guard case .generate(let line) = try GeneratorCommandLine.parse(args + extra + [dir + "/b" + build]) else { return XCTFail() }
            _ = try line.run()
        }
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, dir + "/b900", dir + "/b901"]).status, 0)
        let sessions = TestSupport.run(["query", "--db", db, "-f", "csv", "SELECT build, count(*) AS n FROM sessions GROUP BY build ORDER BY build"])
        XCTAssertEqual(sessions.out, "build,n\n900,12\n901,12\n", sessions.err)
        XCTAssertEqual(TestSupport.run(["baseline", "--db", db, "--build", "900", "-o", dir + "/base.json"]).status, 0)
        XCTAssertEqual(TestSupport.run(["report", "--db", db, "--build", "900", "--baseline", dir + "/base.json"]).status, 0)
        let head = TestSupport.run(["report", "--db", db, "--build", "901", "--baseline", dir + "/base.json", "-f", "json"])
        XCTAssertEqual(head.status, 1, head.err)
        let doc = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(head.out.utf8)) as? [String: Any])
        let findings = try XCTUnwrap(doc["findings"] as? [[String: Any]])
        let new = findings.filter { ($0["baseline"] as? String) == "new" }
        XCTAssertEqual(new.count, 12, "one regression a session")
        XCTAssertTrue(new.allSatisfy { ($0["class"] as? String ?? "").hasPrefix("New") && ["LC301", "LC302"].contains($0["rule"] as? String ?? "") },
                      "\(new.map { "\($0["rule"]!) \($0["class"]!)" })")
        let compare = TestSupport.run(["compare", "--db", db, "--app", "com.example.shop", "--base-build", "900", "--head-build", "901", "-f", "json"])
        let c = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(compare.out.utf8)) as? [String: Any])
        XCTAssertEqual((c["fixed"] as? [Any])?.count, 0, compare.out)
        XCTAssertGreaterThan((c["persisting"] as? [Any])?.count ?? 0, 10, compare.out)
        let newInCompare = try XCTUnwrap(c["new"] as? [[String: Any]], compare.out).compactMap { $0["identity"] as? String }
        XCTAssertEqual(Set(newInCompare), Set(new.compactMap { $0["identity"] as? String }), compare.out)
    }
}
