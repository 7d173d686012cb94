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

/// Colour follows `--color auto|always|never`, `NO_COLOR` and `TERM=dumb` on every command that
/// colours (report, timeline), and the option is in the help, the completions and the manual page.
final class ColorTests: TemporaryDirectoryTestCase {

    override func setUp() {
        super.setUp()
        let ingest = TestSupport.run(["ingest", "-q", "--db", db, TestSupport.root.appendingPathComponent("SampleTraces").path])
        XCTAssertEqual(ingest.status, 0, ingest.err)
    }

    /// Runs `args` with standard output a terminal or not; true when the output holds an escape.
    func colours(_ args: [String], terminal: Bool, env: [String: String] = [:]) -> Bool {
        let console = CapturingConsole(terminal: terminal)
        let status = CLI.run(args, console: console, environment: env)
        XCTAssertTrue([0, 1].contains(status), "\(args) \(env): \(console.errors)")
        XCTAssertFalse(console.output.isEmpty)
        return console.output.utf8.contains(0x1B)
    }

    func testEveryColouringCommandFollowsTheOptionAndTheEnvironment() throws {
        let commands = [["report", "--db", db], ["timeline", "--db", db, "--session", "db9c"]]
        for command in commands {
            let name = command[0]
            XCTAssertTrue(colours(command, terminal: true), "\(name): a terminal is coloured")
            XCTAssertFalse(colours(command, terminal: false), "\(name): a pipe is not")
            XCTAssertFalse(colours(command, terminal: true, env: ["NO_COLOR": "1"]), "\(name): NO_COLOR")
            XCTAssertFalse(colours(command, terminal: true, env: ["NO_COLOR": "no"]), "\(name): NO_COLOR, any value")
            XCTAssertTrue(colours(command, terminal: true, env: ["NO_COLOR": ""]), "\(name): an empty NO_COLOR is not set")
            XCTAssertFalse(colours(command, terminal: true, env: ["TERM": "dumb"]), "\(name): TERM=dumb")
            XCTAssertTrue(colours(command, terminal: true, env: ["TERM": "xterm-256color"]))
            XCTAssertFalse(colours(command + ["--color", "never"], terminal: true), "\(name): --color never")
            XCTAssertTrue(colours(command + ["--color", "auto"], terminal: true))
            XCTAssertTrue(colours(command + ["--color", "always"], terminal: false), "\(name): --color always, for less -R")
            XCTAssertTrue(colours(command + ["--color=always"], terminal: false, env: ["NO_COLOR": "1", "TERM": "dumb"]),
                          "\(name): the option overrides the environment")
            let bad = TestSupport.run(command + ["--color", "alway"])
            XCTAssertEqual(bad.status, 64)
            XCTAssertEqual(bad.err, "Error: invalid --color 'alway' (expected auto, always or never)\nHint: did you mean 'always'?\n")
            // Into a file: plain unless always.
            let file = dir + "/\(name).txt"
            XCTAssertTrue([0, 1].contains(TestSupport.run(command + ["-o", file, "--color", "always"]).status))
            XCTAssertTrue(try Data(contentsOf: URL(fileURLWithPath: file)).contains(0x1B))
            XCTAssertTrue([0, 1].contains(TestSupport.run(command + ["-o", file]).status))
            XCTAssertFalse(try Data(contentsOf: URL(fileURLWithPath: file)).contains(0x1B))
        }
    }

    /// The commands that write escapes for colour take --color; the option is documented everywhere.
    func testTheOptionIsInTheHelpCompletionsAndManualPage() throws {
        for name in ["report", "timeline"] {
            let spec = CLI.commands.first { $0.spec.name == name }!.spec
            let option = try XCTUnwrap(spec.options.first { $0.name == "color" }, name)
            XCTAssertEqual(option.choices, ["auto", "always", "never"])
            XCTAssertTrue(TestSupport.run(["help", name]).out.contains("--color WHEN"))
        }
        let bash = TestSupport.run(["completions", "bash"]).out
        XCTAssertTrue(bash.contains("--color"), "bash completion")
        XCTAssertTrue(bash.contains("auto always never") || bash.contains("'auto' 'always' 'never'"), "the values complete")
        // (Issue 25) Before the command name too (`lctrace --color <TAB>` offered nothing).
        let global = bash.components(separatedBy: "case $command in")[1].components(separatedBy: "esac")[0]
        XCTAssertTrue(global.contains("--color) _lctrace_reply -W 'auto always never'"), global)
        XCTAssertTrue(TestSupport.run(["completions", "fish"]).out.contains("-l color"))
        XCTAssertTrue(TestSupport.run(["completions", "zsh"]).out.contains("--color"))
        XCTAssertTrue(TestSupport.run(["help", "--man"]).out.contains("\\-\\-color"))
        let usage = try String(contentsOf: TestSupport.root.appendingPathComponent("docs/usage.md"), encoding: .utf8)
        XCTAssertTrue(usage.contains("NO_COLOR") && usage.contains("TERM=dumb"))
        let cli = try String(contentsOf: TestSupport.root.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        XCTAssertTrue(cli.contains("| `NO_COLOR` |") && cli.contains("| `TERM` |"), "docs/cli.md's environment")
    }
}
