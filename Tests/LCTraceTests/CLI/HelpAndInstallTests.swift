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

/// Help, global options, shell completions, the manual page and `make install`: all generated
/// from the commands' specs, and tried in the real shells and man tools where they exist.
final class HelpAndInstallTests: TemporaryDirectoryTestCase {

    /// The commands that open no database.
    static let withoutDatabase: Set<String> = ["help", "completions"]

    func loadSamples() {
        let ingest = TestSupport.run(["ingest", "-q", "--db", db, TestSupport.root.appendingPathComponent("SampleTraces").path])
        XCTAssertEqual(ingest.status, 0, ingest.err)
    }

    // MARK: help and options

    func testOverviewListsEveryCommandAndGlobalOption() {
        let overview = TestSupport.run([])
        XCTAssertEqual(overview.status, 0)
        XCTAssertEqual(TestSupport.run(["--help"]).out, overview.out)
        XCTAssertEqual(TestSupport.run(["help"]).out, overview.out)
        for name in CLI.commandNames { XCTAssertTrue(overview.out.contains("\n  \(name) "), "overview lacks \(name)") }
        for option in ["--db PATH", "--version", "-h, --help"] { XCTAssertTrue(overview.out.contains(option), "overview lacks \(option)") }
        for e in ExitStatus.meanings { XCTAssertTrue(overview.out.contains("\(e.status) \(e.short)"), "overview lacks exit \(e.status)") }
        XCTAssertEqual(TestSupport.run(["version"]).out, "lctrace \(CLI.version)\n")
    }

    func testHelpHelp() {
        let help = TestSupport.run(["help", "help"])
        XCTAssertEqual(help.status, 0, help.err)
        XCTAssertTrue(help.out.contains("Usage: lctrace help [options] [COMMAND]"), help.out)
        XCTAssertTrue(help.out.contains("--man"), help.out)
        XCTAssertEqual(TestSupport.run(["help", "--help"]).out, help.out)
        let unknown = TestSupport.run(["help", "repot"])
        XCTAssertEqual(unknown.status, 64)
        XCTAssertEqual(unknown.err, "Error: unknown command 'repot'\nHint: did you mean 'report'?\n")
        XCTAssertEqual(TestSupport.run(["help", "report", "ingest"]).status, 64)
        XCTAssertEqual(TestSupport.run(["help", "--man", "report"]).status, 64)
    }

    func testDatabaseBeforeTheCommandName() {
        loadSamples()
        let after = TestSupport.run(["report", "--db", db, "--fail-on", "never", "--format", "csv"])
        XCTAssertEqual(after.status, 0, after.err)
        XCTAssertFalse(after.out.isEmpty)
        XCTAssertEqual(TestSupport.run(["--db", db, "report", "--fail-on", "never", "--format", "csv"]).out, after.out)
        XCTAssertEqual(TestSupport.run(["--db=\(db)", "report", "--fail-on", "never", "--format", "csv"]).out, after.out)
        // $LCTRACE_DB yields to it, as to --db after the name.
        let sessions = TestSupport.run(["--db", db, "sessions", "-f", "csv"], env: ["LCTRACE_DB": dir + "/none.db"])
        XCTAssertEqual(sessions.status, 0, sessions.err)
        XCTAssertEqual(sessions.out.split(separator: "\n").count, 10)
        let twice = TestSupport.run(["--db", db, "report", "--db", db])
        XCTAssertEqual(twice.status, 64)
        XCTAssertTrue(twice.err.contains("'--db' given more than once"), twice.err)
        let noCommand = TestSupport.run(["--db", db])
        XCTAssertEqual(noCommand.status, 64)
        XCTAssertTrue(noCommand.err.contains("missing command after --db"), noCommand.err)
        XCTAssertEqual(TestSupport.run(["--db"]).err, "Error: option '--db' needs a value (PATH)\n")
        let typo = TestSupport.run(["--dbb", db, "report"])
        XCTAssertEqual(typo.status, 64)
        XCTAssertEqual(typo.err, "Error: unknown option '--dbb' before the command\nHint: did you mean '--db'?\n")
        let misplaced = TestSupport.run(["--leaks", "report"])
        XCTAssertEqual(misplaced.status, 64)
        XCTAssertTrue(misplaced.err.contains("a command's options go after its name"), misplaced.err)
        let noDatabase = TestSupport.run(["--db", db, "completions", "bash"])
        XCTAssertEqual(noDatabase.status, 64)
        XCTAssertEqual(noDatabase.err, "Error: 'lctrace completions' opens no database: --db does not apply\n")
    }

    /// An empty path is refused (SQLite opened a temporary database for `--db ""` and said
    /// "no such table: events"); an empty $LCTRACE_DB counts as unset.
    func testAnEmptyPathIsAUsageError() {
        for args in [["ingest", "--db", "", "SampleTraces"], ["--db", "", "report"], ["report", "--db="],
                     ["baseline", "--db", db, "-o", ""], ["query", "--db", db, "--file", "", "SELECT 1"]] {
            let r = TestSupport.run(args)
            XCTAssertEqual(r.status, 64, "\(args): \(r.err)")
            XCTAssertTrue(r.err.contains("got an empty value"), "\(args): \(r.err)")
        }
        loadSamples()
        let r = TestSupport.run(["report", "--fail-on", "never"], env: ["LCTRACE_DB": ""])
        XCTAssertFalse(r.err.contains("no such table"), r.err)
        XCTAssertFalse(r.err.contains("empty"), "an empty $LCTRACE_DB is unset: \(r.err)")
    }

    /// (Issue 25) A mistyped global option is named without its value: `--dbx=URL` echoed the
    /// URL, password and all.
    func testAMistypedGlobalOptionIsNamedWithoutItsValue() {
        let r = TestSupport.run(["--dbx=postgresql://qa:hunter2@db.example/lctrace", "report"])
        XCTAssertEqual(r.status, 64, r.err)
        XCTAssertTrue(r.err.contains("unknown option '--dbx' before the command") && r.err.contains("did you mean '--db'?"), r.err)
        XCTAssertFalse(r.err.contains("hunter2") || r.out.contains("hunter2"), r.err)
    }

    /// `--color` before the command name is the command's own (`lctrace --color always report | less -R`).
    func testColorBeforeTheCommandName() {
        loadSamples()
        let after = TestSupport.run(["report", "--db", db, "--fail-on", "never", "--color", "always"])
        XCTAssertTrue(after.out.contains("\u{1B}["), "--color always colours a pipe")
        XCTAssertEqual(TestSupport.run(["--color", "always", "report", "--db", db, "--fail-on", "never"]).out, after.out)
        XCTAssertEqual(TestSupport.run(["--db", db, "--color=always", "report", "--fail-on", "never"]).out, after.out)
        let never = TestSupport.run(["--color", "never", "--db", db, "report", "--fail-on", "never"], env: ["TERM": "xterm"])
        XCTAssertEqual(never.status, 0, never.err)
        XCTAssertFalse(never.out.contains("\u{1B}["))
        let bad = TestSupport.run(["--color", "sometimes", "report", "--db", db])
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.err.contains("invalid --color 'sometimes'"), bad.err)
        let plain = TestSupport.run(["--color", "never", "schema"])
        XCTAssertEqual(plain.status, 64)
        XCTAssertEqual(plain.err, "Error: 'lctrace schema' prints no colours: --color does not apply\n")
        XCTAssertEqual(TestSupport.run(["--color", "never", "--color", "never", "report"]).err,
                       "Error: option '--color' given more than once\n")
        XCTAssertTrue(TestSupport.run(["--color", "never"]).err.contains("missing command after --color"))
    }

    /// docs/usage.md says every command that opens a database takes --db: new commands too.
    func testEveryCommandWithADatabaseTakesDB() throws {
        for command in CLI.commands where !Self.withoutDatabase.contains(command.spec.name) {
            XCTAssertTrue(command.spec.options.contains { $0.name == "db" && $0.value == "PATH" }, "lctrace \(command.spec.name) lacks --db PATH")
        }
        let usage = try String(contentsOf: TestSupport.root.appendingPathComponent("docs/usage.md"), encoding: .utf8)
        XCTAssertTrue(usage.contains("lctrace --db x report"), "docs/usage.md does not say --db may come before the command")
    }

    func testSchemaChecksTheDatabaseItIsGiven() throws {
        let plain = TestSupport.run(["schema"], env: ["LCTRACE_DB": dir + "/none.db"])
        XCTAssertEqual(plain.status, 0, "without --db nothing is opened")
        XCTAssertEqual(plain.out, SQLiteSchema.ddl + "\n")
        let missing = TestSupport.run(["schema", "--db", dir + "/none.db"])
        XCTAssertEqual(missing.status, 74)
        XCTAssertTrue(missing.err.contains("no database at \(dir)/none.db"), missing.err)
        try "not a database".write(toFile: dir + "/text.db", atomically: true, encoding: .utf8)
        XCTAssertEqual(TestSupport.run(["schema", "--db", dir + "/text.db"]).status, 74)
        loadSamples()
        XCTAssertEqual(TestSupport.run(["--db", db, "schema"]).out, plain.out)
        XCTAssertEqual(TestSupport.run(["schema", "--db", db]).status, 0)
    }

    /// The values completions offer are the ones the command accepts, and only those.
    func testCompletedChoicesAreAccepted() {
        loadSamples()
        var tried = 0
        for command in CLI.commands {
            for option in command.spec.options where !option.choices.isEmpty {
                // What else each command needs to get as far as reading the option.
                let tail = ["query": ["SELECT 1"], "ingest": [dir + "/none"], "timeline": ["--session", "db9c"],
                            "baseline": ["-o", "-"], "compare": ["--base-build", "806", "--head-build", "812"],
                            "export": ["--session", "db9c", "-o", dir + "/export.json"]][command.spec.name] ?? []
                for choice in option.choices {
                    let r = TestSupport.run([command.spec.name, "--db", db, "--\(option.name)", choice] + tail)
                    XCTAssertNotEqual(r.status, 64, "\(command.spec.name) --\(option.name) \(choice): \(r.err)")
                    tried += 1
                }
                let bad = TestSupport.run([command.spec.name, "--db", db, "--\(option.name)", "bogus"] + tail)
                XCTAssertEqual(bad.status, 64, "\(command.spec.name) --\(option.name) bogus was accepted")
            }
        }
        XCTAssertGreaterThanOrEqual(tried, 16)
    }

    // MARK: completions

    func testCompletionsNameEveryCommandAndOption() {
        for shell in ShellCompletions.Shell.allCases {
            let r = TestSupport.run(["completions", shell.rawValue])
            XCTAssertEqual(r.status, 0)
            XCTAssertEqual(r.out, ShellCompletions.script(for: shell))
            for command in CLI.commands {
                XCTAssertTrue(r.out.contains(command.spec.name), "\(shell) lacks \(command.spec.name)")
                for option in command.spec.options {
                    let spelling = shell == .fish ? "-l \(option.name)" : "--\(option.name)"
                    XCTAssertTrue(r.out.contains(spelling), "\(shell) lacks \(spelling) of \(command.spec.name)")
                    for choice in option.choices { XCTAssertTrue(r.out.contains(choice)) }
                }
            }
        }
        let unknown = TestSupport.run(["completions", "zhs"])
        XCTAssertEqual(unknown.status, 64)
        XCTAssertEqual(unknown.err, "Error: unknown shell 'zhs' (expected bash, zsh, fish)\nHint: did you mean 'zsh'?\n")
        XCTAssertEqual(TestSupport.run(["completions"]).status, 64)
    }

    /// What a user gets after typing each line and Tab, in every shell that is installed.
    static let cases: [(line: String, expected: [String])] = [
        ("lctrace rep", ["report"]),
        ("lctrace --db x rep", ["report"]),
        ("lctrace report --fo", ["--format"]),
        ("lctrace report --format ", OutputFormats.report.ids.sorted()),
        ("lctrace report --fail-on ", ["error", "info", "never", "warning"]),
        ("lctrace help re", ["report"]),
        ("lctrace completions ", ["bash", "fish", "zsh"]),
        ("lctrace ingest ", ["a file.jsonl", "b.gz"]),
        ("lctrace sessions -", ["--app", "--build", "--db", "--format", "--help", "--max-width", "--no-truncate", "--safe-csv", "-f", "-h"]),
    ]

    func prepareFolder() throws -> String {
        let folder = dir + "/cwd"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in ["a file.jsonl", "b.gz"] { _ = FileManager.default.createFile(atPath: folder + "/" + name, contents: Data()) }
        return folder
    }

    func shell(_ name: String) throws -> String {
        for path in ["/usr/bin/\(name)", "/bin/\(name)", "/usr/local/bin/\(name)", "/opt/homebrew/bin/\(name)"]
        where FileManager.default.isExecutableFile(atPath: path) { return path }
        throw XCTSkip("\(name) is not installed (.ci/run installs it)")
    }

    func testBashCompletesForReal() throws {
        let bash = try shell("bash")
        let script = dir + "/lctrace.bash"
        try ShellCompletions.script(for: .bash).write(toFile: script, atomically: true, encoding: .utf8)
        var program = "cd \(ShellCompletions.quoted(try prepareFolder())) && source \(ShellCompletions.quoted(script)) && complete -p lctrace\n"
        program += "t() { read -r -a COMP_WORDS <<< \"$1\"; [[ $1 == *' ' ]] && COMP_WORDS+=(''); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _lctrace; printf '%s\\n' \"${COMPREPLY[@]}\" | LC_ALL=C sort | paste -sd '|'; }\n"
        for c in Self.cases { program += "t \(ShellCompletions.quoted(c.line))\n" }
        let r = try TestSupport.process(bash, ["--norc", "--noprofile", "-c", program], env: ["HOME": dir, "PATH": "/usr/bin:/bin"])
        XCTAssertEqual(r.status, 0, r.err)
        let lines = r.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(lines.first, "complete -o filenames -F _lctrace lctrace")
        for (i, c) in Self.cases.enumerated() {
            XCTAssertEqual(lines.count > i + 1 ? lines[i + 1] : "-", c.expected.sorted().joined(separator: "|"), c.line)
        }
    }

    func testFishCompletesForReal() throws {
        let fish = try shell("fish")
        let script = dir + "/lctrace.fish"
        try ShellCompletions.script(for: .fish).write(toFile: script, atomically: true, encoding: .utf8)
        var program = "cd \(ShellCompletions.fishQuoted(try prepareFolder())); and source \(ShellCompletions.fishQuoted(script))\n"
        for c in Self.cases {
            program += "set -l found (complete -C \(ShellCompletions.fishQuoted(c.line)) | string split -f1 \\t | sort); echo (string join '|' -- $found)\n"
        }
        let r = try TestSupport.process(fish, ["--no-config", "-c", program], env: ["HOME": dir, "PATH": "/usr/bin:/bin", "LC_ALL": "C"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.err.isEmpty, r.err)
        let lines = r.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (i, c) in Self.cases.enumerated() {
            XCTAssertEqual(lines.count > i ? lines[i] : "-", c.expected.sorted().joined(separator: "|"), c.line)
        }
    }

    /// zsh completes only inside its line editor: a pseudo-terminal (zsh/zpty) runs an
    /// interactive zsh, types each line and a Tab, and a wrapper of compadd writes the
    /// candidates to a file.
    static let zshHarness = #"""
    zmodload zsh/zpty || exit 3
    script=$1 out=$2 line=$3
    : > $out
    zpty z zsh -f -i
    zpty -w z "PS1=''; autoload -Uz compinit; compinit -u -D; source ${(q)script}"
    zpty -w z "compadd() { if [[ \" \$* \" == *' -'[OAD]' '* ]]; then builtin compadd \"\$@\"; return; fi; local -a found; builtin compadd -A found \"\$@\"; (( \$#found )) && print -rl -- \$found >> ${(q)out}; builtin compadd \"\$@\"; }"
    # comppostfuncs run once the completion is over: completion gives up while keys are
    # pending, so nothing more is typed before then.
    zpty -w z "comppostfuncs=(__finished); __finished() { print > ${(q)out}.finished }; print > ${(q)out}.ready"
    for i in {1..400}; do [[ -e $out.ready ]] && break; zpty -r -t z junk; sleep 0.05; done
    zpty -w -n z "$line"$'\t'
    for i in {1..400}; do [[ -e $out.finished ]] && break; zpty -r -t z junk; sleep 0.05; done
    zpty -d z
    [[ -e $out.finished ]] || exit 2
    rm -f $out.ready $out.finished
    """#

    func testZshCompletesForReal() throws {
        let zsh = try shell("zsh")
        let script = dir + "/_lctrace", harness = dir + "/harness.zsh", out = dir + "/candidates"
        try ShellCompletions.script(for: .zsh).write(toFile: script, atomically: true, encoding: .utf8)
        try Self.zshHarness.write(toFile: harness, atomically: true, encoding: .utf8)
        let folder = try prepareFolder()
        let check = try TestSupport.process(zsh, ["-n", script])
        XCTAssertEqual(check.status, 0, check.err)
        for c in Self.cases {
            let r = try TestSupport.process(zsh, ["-f", "-c", "cd \(ShellCompletions.quoted(folder)) && source \(ShellCompletions.quoted(harness)) \(ShellCompletions.quoted(script)) \(ShellCompletions.quoted(out)) \(ShellCompletions.quoted(c.line))"],
                                            env: ["HOME": dir, "PATH": "/usr/bin:/bin", "TERM": "dumb"])
            XCTAssertEqual(r.status, 0, "\(c.line): \(r.err)")
            // zsh quotes what it would insert: a\ file.jsonl.
            let found = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").map { $0.replacingOccurrences(of: "\\ ", with: " ") }
            XCTAssertEqual(Set(found), Set(c.expected), c.line)
        }
    }

    // MARK: manual page

    /// docs/lctrace.1 is `lctrace help --man`; scripts/generate-docs (or LCTRACE_RECORD=1 here)
    /// rewrites it after a merge that adds commands or options.
    func testManPageInTheRepositoryIsInStep() throws {
        let path = TestSupport.root.appendingPathComponent("docs/lctrace.1").path
        let man = TestSupport.run(["help", "--man"])
        XCTAssertEqual(man.status, 0)
        XCTAssertEqual(man.out, ManPage.render())
        if ProcessInfo.processInfo.environment["LCTRACE_RECORD"] == "1" {
            try man.out.write(toFile: path, atomically: true, encoding: .utf8)
        }
        let stored = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertEqual(stored, man.out, "docs/lctrace.1 is stale: run scripts/generate-docs (or LCTRACE_RECORD=1 swift test --filter HelpAndInstallTests/testManPageInTheRepositoryIsInStep)")
        for command in CLI.commands {
            XCTAssertTrue(man.out.contains(".SS \(command.spec.name)\n"), "man page lacks \(command.spec.name)")
            for option in command.spec.options {
                XCTAssertTrue(man.out.contains("\\fB" + ManPage.text("--" + option.name) + "\\fR"), "man page lacks --\(option.name) of \(command.spec.name)")
            }
        }
        for e in ExitStatus.meanings { XCTAssertTrue(man.out.contains(".B \(e.status)\n")) }
    }

    func testManPageRendersWithoutWarnings() throws {
        let page = dir + "/lctrace.1"
        try ManPage.render().write(toFile: page, atomically: true, encoding: .utf8)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/groff") else { throw XCTSkip("groff is not installed") }
        let lint = try TestSupport.process("/usr/bin/groff", ["-man", "-Tutf8", "-ww", "-z", page])
        XCTAssertEqual(lint.status, 0, lint.err)
        XCTAssertEqual(lint.err, "", "groff warns")
        let text = try TestSupport.process("/usr/bin/groff", ["-man", "-Tascii", "-P-c", "-P-b", "-P-u", page])
        XCTAssertTrue(text.out.contains("lctrace - UIKit view-controller lifecycle traces into findings"), text.out)
        XCTAssertTrue(text.out.contains("lctrace report [options]"), text.out)
        XCTAssertTrue(text.out.contains("--fail-on LEVEL"), text.out)
        XCTAssertTrue(text.out.contains("EXIT STATUS"), text.out)
        // The two wrapped verbatim lines of `completions` stay as written.
        XCTAssertTrue(text.out.contains("bash: source <(lctrace completions bash)"), text.out)
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/man") {
            let man = try TestSupport.process("/usr/bin/man", ["-l", page], env: ["MANWIDTH": "100", "PAGER": "cat", "MANPAGER": "cat", "PATH": "/usr/bin:/bin"])
            XCTAssertEqual(man.status, 0, man.err)
            XCTAssertTrue(man.out.contains("COMMANDS"), man.out)
        }
    }

    // MARK: make install

    func testMakeInstallPutsEverythingUnderThePrefix() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/make") else { throw XCTSkip("make is not installed") }
        let built = TestSupport.root.appendingPathComponent(".build/debug/lctrace").path
        guard FileManager.default.isExecutableFile(atPath: built) else { throw XCTSkip("no debug build at \(built)") }
        let prefix = dir + "/prefix with space"
        // SWIFT=true: the debug binary swift test built is installed as it is.
        let install = try TestSupport.process("/usr/bin/make", ["-s", "-C", TestSupport.root.path, "install", "PREFIX=\(prefix)", "CONFIGURATION=debug", "SWIFT=true"])
        XCTAssertEqual(install.status, 0, install.err)
        let version = try TestSupport.process(prefix + "/bin/lctrace", ["--version"])
        XCTAssertEqual(version.out, "lctrace \(CLI.version)\n")
        let files: [(String, String)] = [
            ("share/man/man1/lctrace.1", ManPage.render()),
            ("share/bash-completion/completions/lctrace", ShellCompletions.script(for: .bash)),
            ("share/zsh/site-functions/_lctrace", ShellCompletions.script(for: .zsh)),
            ("share/fish/vendor_completions.d/lctrace.fish", ShellCompletions.script(for: .fish)),
        ]
        for (path, content) in files {
            XCTAssertEqual(try? String(contentsOfFile: prefix + "/" + path, encoding: .utf8), content, path)
        }
        let uninstall = try TestSupport.process("/usr/bin/make", ["-s", "-C", TestSupport.root.path, "uninstall", "PREFIX=\(prefix)"])
        XCTAssertEqual(uninstall.status, 0, uninstall.err)
        for (path, _) in files + [("bin/lctrace", "")] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: prefix + "/" + path), "\(path) left after uninstall")
        }
    }
}
