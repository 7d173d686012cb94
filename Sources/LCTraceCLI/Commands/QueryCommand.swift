import Foundation
import LCTrace
import LCTraceReport
import LCTraceStore

/// `lctrace query SQL`: ad-hoc SQL over a read-only connection.
enum QueryCommand: Command {
    static let spec = CommandSpec(
        name: "query",
        summary: "Run ad-hoc SQL over the database (read-only).",
        positional: "SQL",
        positionalHelp: "One SQL statement, comments included (a README query pasted whole), or - to read it from standard input; start from the *_v views (see 'lctrace schema').",
        minPositionals: 0, maxPositionals: 1,
        options: [
            DatabaseOption.spec(),
            OptionSpec("file", value: "PATH", help: "Read the SQL from this file ('-': standard input)."),
            FormatOption.spec(OutputFormats.rows),
            OptionSpec("timeout", value: "DURATION", help: "Stop the query after this long, e.g. 30s (default: no limit)."),
            .safeCSV,
        ] + TableOptions.options,
        discussion: """
        The database is opened read-only: statements that write, ATTACH and pragmas that set
        values are refused and change nothing. On PostgreSQL the query runs as the role
        lctrace_reader where the login may enter it (SELECT on lctrace's tables and views only),
        and says on stderr when it cannot. Any one value is at most 64 MiB.
        An argument that is not one of these options is the SQL, even when it starts with
        '-- a comment'. Example: lctrace query "SELECT class, count(*) FROM live_instances_v GROUP BY class"
        """,
        freeTextPositional: true)

    /// The accepted range of `--timeout`: a millisecond to a day.
    static let timeoutRange: ClosedRange<Int64> = 1_000_000...86_400_000_000_000

    package static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let style = try FormatOption.value(args, OutputFormats.rows)
        let timeout = try args.value("timeout").map { try OptionValues.duration($0, option: "--timeout", range: timeoutRange) }
        let maxWidth = try TableOptions.maxWidth(args)
        let sql = try sqlText(args, context)
        let location = DatabaseOption.location(args, context)
        let rows: any QueryRows
        do {
            // The deadline starts before connecting: opening a server's database checks the
            // schema, which waits on a table another session holds locked.
            let storage = try context.databases.openForReading(location, timeout: timeout.map { Double($0) / 1e9 })
            rows = try storage.userQuery(sql)
        } catch let error as StorageFailure where error.kind == .stopped {
            throw stopped(after: timeout ?? 0)
        }
        for warning in rows.warnings { context.console.writeError("Warning: \(shown(warning))\n") }
        // Each row's values go from where the backend holds them straight into the output.
        let out = RowFormatter(style: style, columns: rows.columnNames, neutralizesFormulas: args.neutralizesFormulas,
                               maxWidth: maxWidth, bytes: { context.console.write(bytes: $0) })
        do {
            try rows.forEachRow(into: out)
        } catch {
            // An error ends the output where it stands: what was printed is whole rows.
            out.abandon()
            if let error = error as? StorageFailure, error.kind == .stopped { throw stopped(after: timeout ?? 0) }
            throw error
        }
        try out.finish()
        context.console.write(TableOptions.note(out))
        return ExitStatus.ok
    }

    /// The most SQL read from a file or standard input.
    static let maxSQLBytes = 16 << 20

    /// The SQL: the argument, `-` (standard input) or `--file PATH`, given exactly once.
    static func sqlText(_ args: ParsedArguments, _ context: CommandContext) throws -> String {
        switch (args.positionals.first, args.value("file")) {
        case (nil, nil):
            throw UsageError("missing SQL for 'lctrace query'",
                             hint: "lctrace query \"SELECT …\", lctrace query --file PATH, or lctrace query - < PATH")
        case (_?, _?):
            throw UsageError("give the SQL once: as an argument, - for standard input, or --file PATH")
        case ("-"?, nil), (nil, "-"?):
            guard let data = try context.standardInput(maxSQLBytes) else { throw SQLInputError.tooLong("standard input") }
            return try text(data, from: "standard input")
        case (let sql?, nil):
            return sql
        case (nil, let path?):
            return try text(read(path), from: path)
        }
    }

    /// The bytes of the file at `path`, at most `maxSQLBytes`.
    private static func read(_ path: String) throws -> Data {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let code = errno
            throw SQLInputError.unreadable(path, FileManager.default.fileExists(atPath: path) ? OutputFile.reason(code) : "no such file")
        }
        defer { try? handle.close() }
        do {
            guard let data = try handle.read(upToCount: maxSQLBytes + 1) else { return Data() }
            if data.count > maxSQLBytes { throw SQLInputError.tooLong(path) }
            return data
        } catch let error as SQLInputError {
            throw error
        } catch {
            throw SQLInputError.unreadable(path, (error as NSError).localizedFailureReason ?? OutputFile.reason(EISDIR))
        }
    }

    private static func text(_ data: Data, from source: String) throws -> String {
        guard let text = String(data: data, encoding: .utf8) else { throw SQLInputError.notText(source) }
        return text
    }

    /// The error of a query `--timeout` (nanoseconds) stopped, on either backend.
    private static func stopped(after timeout: Int64) -> QueryStopped {
        QueryStopped(message: "query stopped after \(OptionValues.describe(timeout)) (--timeout); what was printed before is incomplete")
    }
}

/// SQL that could not be read from a file or standard input.
enum SQLInputError: OneLineError {
    case unreadable(String, String), tooLong(String), notText(String)

    package var line: String {
        switch self {
        case .unreadable(let path, let why): return "cannot read the SQL in \(shown(path)): \(why)"
        case .tooLong(let source): return "the SQL in \(shown(source)) is longer than \(QueryCommand.maxSQLBytes >> 20) MiB"
        case .notText(let source): return "the SQL in \(shown(source)) is not UTF-8 text"
        }
    }

    package var status: Int32 {
        switch self {
        case .unreadable: return ExitStatus.noInput
        case .tooLong: return ExitStatus.usage
        case .notText: return ExitStatus.dataError
        }
    }
}

/// A query that ran past `--timeout`.
struct QueryStopped: Error {
    var message: String
}
