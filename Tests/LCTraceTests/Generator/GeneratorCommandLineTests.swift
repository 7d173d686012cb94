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
                let line = help.split(separator: "\n").first { $0.contains("--\(option.name) ") || $0.hasSuffix("--\(option.name)") }
                XCTAssertTrue(line?.contains("(default: \(value))") ?? false, "--\(option.name) does not say its default \(value): \(line ?? "-")")
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
        XCTAssertEqual(line.truthPath, dir + "/key.json")
        XCTAssertEqual(line.directory, dir + "/out")
        // Every option of the table was named above (a new one needs a line here).
        let named = Set(args.filter { $0.hasPrefix("--") }.map { String($0.dropFirst(2).prefix { $0 != "=" }) })
        XCTAssertEqual(named.union(["sample", "help"]), Set(GeneratorCommandLine.table.map(\.name)))
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
}
