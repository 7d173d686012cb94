import Foundation
import LCTrace

/// Exit statuses, decided in one place (sysexits.h values, as swift-argument-parser and BSD tools use).
public enum ExitStatus {
    public static let ok: Int32 = 0
    /// Findings at or above `--fail-on`.
    public static let findings: Int32 = 1
    public static let usage: Int32 = 64
    /// Damaged input: a file ended early or was corrupt (the rest still loaded).
    public static let dataError: Int32 = 65
    /// An input path does not exist or cannot be opened (the others still loaded); `report`,
    /// `baseline`, `compare`: the selection holds no session (without `--allow-empty`).
    public static let noInput: Int32 = 66
    /// The database could not be read or written: read-only, full disk, not a database.
    public static let ioError: Int32 = 74
}

/// What every command gets: where to write and the environment.
public struct CommandContext {
    public var console: Console
    public var environment: [String: String]

    /// `--db`, else `$LCTRACE_DB`, else `./lctrace.db`.
    public func databasePath(_ args: ParsedArguments) -> String {
        args.value("db") ?? environment["LCTRACE_DB"] ?? "lctrace.db"
    }
}

/// A subcommand: its spec (parser + help) and its body.
protocol Command {
    static var spec: CommandSpec { get }
    static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32
}

public enum CLI {
    static let commands: [any Command.Type] = [
        IngestCommand.self, AnalyzeCommand.self, ReportCommand.self, BaselineCommand.self, CompareCommand.self,
        TimelineCommand.self, ExportCommand.self,
        SessionsCommand.self, QueryCommand.self, SchemaCommand.self,
    ]

    public static let version = ToolInfo.version

    public static var commandNames: [String] { commands.map { $0.spec.name } }

    static var overview: String {
        var text = """
        lctrace \(version): UIKit view-controller lifecycle traces into answers.

        Usage: lctrace <command> [options] [arguments]

        Commands:

        """
        for c in commands {
            text += "  \(c.spec.name.padding(toLength: 10, withPad: " ", startingAt: 0)) \(c.spec.summary)\n"
        }
        text += "  help       Show help for a command: lctrace help <command>\n"
        text += "\nThe database is --db PATH, else $LCTRACE_DB, else ./lctrace.db.\n"
        text += "Exit status: 0 ok, 1 findings at or above --fail-on, 64 usage, 65 damaged input,\n"
        text += "66 missing input or no session selected, 74 database or I/O failure.\n"
        return text
    }

    /// Runs lctrace with `arguments` (without the program name). Never exits the process:
    /// returns the exit status, so tests call it in-process.
    public static func run(_ arguments: [String], console: Console = StandardConsole(),
                           environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32 {
        let context = CommandContext(console: console, environment: environment)
        guard let first = arguments.first else {
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
        case "help":
            guard arguments.count > 1 else { console.write(overview); return ExitStatus.ok }
            guard let command = commands.first(where: { $0.spec.name == arguments[1] }) else {
                return report(UsageError("unknown command '\(arguments[1])'", hint: suggestion(for: arguments[1])), console)
            }
            console.write(command.spec.help)
            return ExitStatus.ok
        default:
            break
        }
        guard let command = commands.first(where: { $0.spec.name == first }) else {
            return report(UsageError("unknown command '\(first)'", hint: suggestion(for: first)), console)
        }
        do {
            let args = try ArgumentParser.parse(Array(arguments.dropFirst()), spec: command.spec)
            if args.wantsHelp {
                console.write(command.spec.help)
                return ExitStatus.ok
            }
            return try command.run(args, context)
        } catch {
            return report(error, console)
        }
    }

    static func suggestion(for word: String) -> String {
        if let near = ArgumentParser.closest(word, in: commandNames) { return "did you mean '\(near)'?" }
        return "commands: \(commandNames.joined(separator: ", ")); see 'lctrace help'"
    }

    /// Turns an error into a message on stderr and an exit status: the one place that does so.
    static func report(_ error: Error, _ console: Console) -> Int32 {
        switch error {
        case let e as UsageError:
            var text = "Error: \(e.message)\n"
            if let hint = e.hint { text += "Hint: \(hint)\n" }
            console.writeError(text)
            return ExitStatus.usage
        case let e as OneLineError:
            console.writeError("Error: \(e.line)\n")
            return e.status
        case let e as DatabaseError:
            var text = "Error: database: \(e.message)\n"
            if e.isIOFailure { text += "Hint: check that the database and its folder are writable and the disk has room\n" }
            console.writeError(text)
            return ExitStatus.ioError
        case let e as QueryRefused:
            console.writeError("Error: \(e.message)\n")
            return ExitStatus.usage
        default:
            console.writeError("Error: \(error)\n")
            return ExitStatus.ioError
        }
    }
}

/// An error told in one `Error:` line, with the exit status of its kind.
protocol OneLineError: Error {
    var line: String { get }
    var status: Int32 { get }
}

extension Schema.VersionError: OneLineError {
    var line: String { description }
    var status: Int32 { ExitStatus.ioError }
}

extension BaselineError: OneLineError {
    var line: String { description }
    var status: Int32 { ExitStatus.usage }
}

extension EmptySelection: OneLineError {
    var line: String { message }
    var status: Int32 { ExitStatus.noInput }
}

extension FileError: OneLineError {
    var line: String { message }
    var status: Int32 { ExitStatus.ioError }
}

/// Output formats shared by query, sessions and report.
enum OutputFormat: String, CaseIterable {
    case table, text, csv, json, svg
    case chromeTrace = "chrome-trace"

    static func parse(_ value: String?, allowed: [OutputFormat], default def: OutputFormat) throws -> OutputFormat {
        guard let value else { return def }
        guard let format = OutputFormat(rawValue: value), allowed.contains(format) else {
            let names = allowed.map(\.rawValue)
            let near = ArgumentParser.closest(value, in: names)
            throw UsageError("unknown format '\(value)' (expected \(names.joined(separator: ", ")))",
                             hint: near.map { "did you mean '\($0)'?" })
        }
        return format
    }
}
