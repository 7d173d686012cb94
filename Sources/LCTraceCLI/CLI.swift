import Foundation
import LCTrace
import LCTraceModel
import LCTraceReport
import LCTraceStore

/// Exit statuses, decided in one place (sysexits.h values, as swift-argument-parser and BSD tools use).
enum ExitStatus {
    package static let ok: Int32 = 0
    /// Findings at or above `--fail-on`.
    package static let findings: Int32 = 1
    package static let usage: Int32 = 64
    /// Damaged input: a file ended early or was corrupt (the rest still loaded).
    static let dataError: Int32 = 65
    /// An input path does not exist or cannot be opened (the others still loaded); `report`,
    /// `baseline`, `compare`: the selection holds no session (without `--allow-empty`); every
    /// command: a filter names nothing in the database.
    static let noInput: Int32 = 66
    /// An error lctrace has no words for: a bug in lctrace (EX_SOFTWARE).
    static let internalError: Int32 = 70
    /// The database could not be read or written: read-only, full disk, not a database.
    static let ioError: Int32 = 74
    /// Ended by a signal, cleanly (SIGINT, SIGTERM): 128 + its number, as shells report it.
    package static func interrupted(by signal: Int32) -> Int32 { 128 + signal }

    /// Every status with what it means, for the overview and the manual page.
    static let meanings: [(status: Int32, short: String, meaning: String)] = [
        (ok, "ok", "done; no finding at or above --fail-on"),
        (findings, "findings at or above --fail-on", "report, compare: a finding at or above --fail-on (new ones only under a baseline), or a significant timing regression"),
        (usage, "usage", "usage: unknown command or option, bad value (a duration without a unit, a number outside its range), refused query"),
        (dataError, "damaged input", "ingest: damaged input (truncated or corrupt file, or a file without one valid line); everything else loaded"),
        (noInput, "missing input or no session selected", "ingest: a path does not exist or cannot be read (permissions, a broken link, a FIFO, an unreadable directory), or no trace file was found; report, baseline, compare: the selection holds no session (unless --allow-empty); report, baseline, compare, export, timeline: a --session, --app, --build, --class or --vc that names nothing in the database (the nearest known value named)"),
        (internalError, "internal error", "an error lctrace cannot explain: a bug in lctrace; the message asks you to report it"),
        (ioError, "database or I/O failure", "the database cannot be opened, read or written (permissions, a missing folder), is missing, is a directory or not SQLite, is not a regular file, has a schema that is not lctrace's or a corrupt page; query: stopped by --timeout"),
        (interrupted(by: SIGINT), "interrupted (SIGINT)", "ingest, analyze: ended by SIGINT (Ctrl-C) after rolling back the batch in flight; the same command finishes the work"),
        (interrupted(by: SIGTERM), "interrupted (SIGTERM)", "ingest, analyze: the same, ended by SIGTERM"),
    ]
}

/// What every command gets: where to write, the environment and where it was started.
struct CommandContext {
    package var console: Console
    package var environment: [String: String]
    /// The directory the command was started in: `report --format sarif` looks for the Git
    /// work tree around it (tests give their own, so no output depends on the checkout).
    package var workingDirectory = FileManager.default.currentDirectoryPath
    /// Reads standard input to its end, at most `limit` bytes (more: nil); tests pass their own.
    package var standardInput: (_ limit: Int) throws -> Data? = CommandContext.readStandardInput

    /// Standard input of this process, read in pieces up to `limit` bytes (nil beyond it).
    static func readStandardInput(_ limit: Int) throws -> Data? {
        var data = Data()
        let handle = FileHandle.standardInput
        while let piece = try handle.read(upToCount: 1 << 16), !piece.isEmpty {
            data += piece
            if data.count > limit { return nil }
        }
        return data
    }

    /// The databases the command opens, closed (and their folders tidied) when it ends.
    let databases = OpenedDatabases()

    /// Opens `path` for a command that only reads (see `OpenedDatabases`).
    func openForReading(_ path: String) throws -> Storage { try databases.openForReading(path) }

    /// Opens (with `create`, makes) `path` for a command that writes.
    func openForWriting(_ path: String, create: Bool = true, stop: StopRequest? = nil) throws -> Storage {
        try databases.openForWriting(path, create: create, stop: stop)
    }
}

/// A subcommand: its spec (parser + help) and its body.
protocol Command {
    static var spec: CommandSpec { get }
    static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32
}

package enum CLI {
    // Immutable lists of metatypes: `nonisolated(unsafe)` because a protocol's metatype is
    // Sendable only with SendableMetatype (Swift 6.2), and the package builds with 6.0 too.
    nonisolated(unsafe) static let commands: [any Command.Type] = [
        IngestCommand.self, AnalyzeCommand.self, ReportCommand.self, BaselineCommand.self, CompareCommand.self,
        TimelineCommand.self, ExportCommand.self,
        SessionsCommand.self, QueryCommand.self, SchemaCommand.self,
        HelpCommand.self, CompletionsCommand.self,
    ]

    package static let version = ToolInfo.version

    static var commandNames: [String] { commands.map { $0.spec.name } }

    /// Options that go before the command name: `lctrace --db x report` is `lctrace report --db x`.
    static let globalOptions: [OptionSpec] = [
        OptionSpec("db", value: "PATH", help: "Database of the command, as if given after its name: a SQLite file, or a postgresql:// URL (default: $LCTRACE_DB, else ./lctrace.db)."),
        OptionSpec("color", value: "WHEN", help: "Colour of the command's output (auto, always, never), as if given after its name.",
                   choices: ColorOption.option.choices),
        OptionSpec("version", help: "Print the version."),
        OptionSpec("help", short: "h", help: "Show this overview."),
    ]

    static var overview: String {
        var text = """
        lctrace \(version): UIKit view-controller lifecycle traces into answers.

        Usage: lctrace [--db PATH] [--color WHEN] <command> [options] [arguments]

        Commands:

        """
        let width = commandNames.map(\.count).max()! + 2
        for c in commands {
            text += "  \(c.spec.name.padding(toLength: width, withPad: " ", startingAt: 0))\(c.spec.summary)\n"
        }
        text += "\nOptions:\n"
        for o in globalOptions {
            let left = (o.short.map { "-\($0), " } ?? "") + "--\(o.name)" + (o.value.map { " \($0)" } ?? "")
            text += "  \(left.padding(toLength: width, withPad: " ", startingAt: 0))\(o.help)\n"
        }
        text += "\n'lctrace help <command>' shows a command's options; 'lctrace help --man' prints the manual page.\n"
        var line = "Exit status:"
        for (i, e) in ExitStatus.meanings.enumerated() {
            let item = " \(e.status) \(e.short)" + (i == ExitStatus.meanings.count - 1 ? "." : ",")
            if line.count + item.count > 90 { text += line + "\n"; line = "" }
            line += line.isEmpty ? String(item.dropFirst()) : item
        }
        text += line + "\n"
        return text
    }

    /// Runs lctrace with `arguments` (without the program name). Never exits the process:
    /// returns the exit status, so tests call it in-process.
    package static func run(_ arguments: [String], console: Console = StandardConsole(),
                           environment: [String: String] = ProcessInfo.processInfo.environment,
                           standardInput: ((_ limit: Int) throws -> Data?)? = nil,
                           workingDirectory: String = FileManager.default.currentDirectoryPath) -> Int32 {
        let status = runCommand(arguments, console: console, environment: environment, standardInput: standardInput,
                                workingDirectory: workingDirectory)
        // A document that did not reach standard output is a failure whatever the command decided.
        if let code = (console as? StandardConsole)?.outputFailure {
            console.writeError("Error: cannot write to standard output: \(systemErrorReason(code))\n")
            return ExitStatus.ioError
        }
        // Warnings lost on the way to standard error: nothing can say so, but the run must not pass.
        if status == ExitStatus.ok, (console as? StandardConsole)?.errorFailure != nil { return ExitStatus.ioError }
        return status
    }

    private static func runCommand(_ arguments: [String], console: Console, environment: [String: String],
                                   standardInput: ((_ limit: Int) throws -> Data?)?, workingDirectory: String) -> Int32 {
        var context = CommandContext(console: console, environment: environment)
        context.workingDirectory = workingDirectory
        if let standardInput { context.standardInput = standardInput }
        do {
            var rest = arguments[...]
            let leading = try leadingOptions(&rest)
            guard let first = rest.first else {
                if let given = leading.first {
                    throw UsageError("missing command after --\(given.name)", hint: "usage: lctrace [--db PATH] [--color WHEN] <command> [options]")
                }
                console.write(overview)
                return ExitStatus.ok
            }
            switch first {
            case "-h", "--help":
                console.write(overview)
                return ExitStatus.ok
            case "--version", "version":
                console.write("lctrace \(version)\n")
                return ExitStatus.ok
            default:
                break
            }
            guard let command = commands.first(where: { $0.spec.name == first }) else {
                throw UsageError("unknown command '\(first)'", hint: suggestion(for: first))
            }
            var commandArguments = Array(rest.dropFirst())
            for (name, value) in leading.reversed() {
                guard command.spec.options.contains(where: { $0.name == name }) else {
                    let what = name == "db" ? "opens no database" : "prints no colours"
                    throw UsageError("'lctrace \(first)' \(what): --\(name) does not apply")
                }
                commandArguments.insert(contentsOf: ["--\(name)", value], at: 0)
            }
            let args = try ArgumentParser.parse(commandArguments, spec: command.spec)
            if args.wantsHelp {
                console.write(command.spec.help)
                return ExitStatus.ok
            }
            defer { context.databases.closeAll() }
            return try command.run(args, context)
        } catch {
            return report(error, console)
        }
    }

    /// Takes the options before the command name off `rest` (`--db PATH`, `--color WHEN`, also
    /// spelt `--name=value`), in order, each at most once; stops at `-h`, `--help`, `--version`
    /// (left for the caller) or the first word.
    static func leadingOptions(_ rest: inout ArraySlice<String>) throws -> [(name: String, value: String)] {
        // The global options with a value are the command's own, forwarded to it.
        let forwarded = globalOptions.filter { $0.value != nil }.map(\.name)
        var taken: [(name: String, value: String)] = []
        while let arg = rest.first, arg.hasPrefix("-"), !["-h", "--help", "--version"].contains(arg) {
            let name: String, value: String
            if let n = forwarded.first(where: { arg == "--\($0)" }) {
                guard rest.count > 1 else {
                    throw UsageError("option '--\(n)' needs a value (\(globalOptions.first { $0.name == n }!.value!))")
                }
                (name, value) = (n, rest[rest.startIndex + 1])
                rest = rest.dropFirst(2)
            } else if let n = forwarded.first(where: { arg.hasPrefix("--\($0)=") }) {
                (name, value) = (n, String(arg.dropFirst(n.count + 3)))
                rest = rest.dropFirst()
            } else {
                // The name only: a value after '=' may be a database URL with its password.
                let option = String(arg.prefix { $0 != "=" })
                let near = ArgumentParser.closest(option, in: globalOptions.map { "--\($0.name)" })
                throw UsageError("unknown option '\(option)' before the command",
                                 hint: near.map { "did you mean '\($0)'?" } ?? "a command's options go after its name: lctrace <command> \(option)")
            }
            guard !taken.contains(where: { $0.name == name }) else { throw UsageError("option '--\(name)' given more than once") }
            taken.append((name, value))
        }
        return taken
    }

    static func suggestion(for word: String) -> String {
        if let near = ArgumentParser.closest(word, in: commandNames) { return "did you mean '\(near)'?" }
        return "commands: \(commandNames.joined(separator: ", ")); see 'lctrace help'"
    }

    /// Turns an error into a message on stderr and an exit status: the one place that does so.
    /// Every line goes through `ConnectionText.scrubbedLine`: a database URL typed where
    /// another value was expected is echoed by messages that know nothing of databases.
    static func report(_ error: Error, _ console: Console) -> Int32 {
        func shown(_ text: String) -> String { LCTraceCLI.shown(ConnectionText.scrubbedLine(text)) }
        switch error {
        case let e as UsageError:
            var text = "Error: \(shown(e.message))\n"
            if let hint = e.hint { text += "Hint: \(shown(hint))\n" }
            console.writeError(text)
            return ExitStatus.usage
        case let e as OneLineError:
            var text = "Error: \(shown(e.line))\n"
            if let hint = e.hint { text += "Hint: \(shown(hint))\n" }
            console.writeError(text)
            return e.status
        case let e as StorageFailure:
            var text = "Error: \(shown(e.line))\n"
            if let hint = e.hint { text += "Hint: \(shown(hint))\n" }
            console.writeError(text)
            switch e.kind {
            case .unavailable, .stopped: return ExitStatus.ioError
            case .refused: return ExitStatus.usage
            }
        case let e as QueryStopped:
            console.writeError("Error: \(ConnectionText.scrubbedLine(e.message))\n")
            return ExitStatus.ioError
        default:
            console.writeError("Error: \(shown(String(describing: error)))\n")
            console.writeError("This is a bug in lctrace \(version), please report it with the command that failed.\n")
            return ExitStatus.internalError
        }
    }
}

/// Text from traces, file names or users, escaped for people's terminals (`TerminalText`): the
/// form every message and summary shows it in.
package func shown(_ text: String) -> String { TerminalText.escaped(text) }

extension OptionSpec {
    /// `--safe-csv` of query, sessions and report.
    static let safeCSV = OptionSpec("safe-csv", help: "CSV: put ' before cells starting with = + - @ so spreadsheets show them as text.")
}

extension ParsedArguments {
    /// `--safe-csv` (`OptionSpec.safeCSV`).
    var neutralizesFormulas: Bool { has("safe-csv") }
}

/// An error told in one `Error:` line (and a `Hint:` where one helps), with the exit status of its kind.
protocol OneLineError: Error {
    var line: String { get }
    var hint: String? { get }
    var status: Int32 { get }
}

extension OneLineError {
    var hint: String? { nil }
}

extension BaselineError: OneLineError {
    package var line: String { description }
    package var status: Int32 { ExitStatus.usage }
}

/// A table too large for memory could not be spilled to a temporary file.
extension TableSpillError: OneLineError {
    package var line: String { description }
    package var status: Int32 { ExitStatus.ioError }
}

extension EmptySelection: OneLineError {
    package var line: String { message }
    package var status: Int32 { ExitStatus.noInput }
}
