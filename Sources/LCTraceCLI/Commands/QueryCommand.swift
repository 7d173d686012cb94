import Foundation
import LCTrace

/// `lctrace query SQL`: ad-hoc SQL over a read-only connection.
enum QueryCommand: Command {
    static let spec = CommandSpec(
        name: "query",
        summary: "Run ad-hoc SQL over the database (read-only).",
        positional: "SQL",
        positionalHelp: "One SQL statement, comments included (a README query pasted whole), or - to read it from standard input; start from the *_v views (see 'lctrace schema').",
        minPositionals: 0, maxPositionals: 1,
        options: [
            OptionSpec("db", value: "PATH", help: "Database (default: $LCTRACE_DB, else ./lctrace.db)."),
            OptionSpec("file", value: "PATH", help: "Read the SQL from this file ('-': standard input)."),
            OptionSpec("format", short: "f", value: "FORMAT", help: "table (default), csv or json.", choices: ["table", "csv", "json"]),
            OptionSpec("timeout", value: "DURATION", help: "Stop the query after this long, e.g. 30s (default: no limit)."),
            .safeCSV,
        ] + TableOptions.options,
        discussion: """
        The database is opened read-only: statements that write, ATTACH and pragmas that set
        values are refused and change nothing. Any one value is at most 64 MiB.
        An argument that is not one of these options is the SQL, even when it starts with
        '-- a comment'. Example: lctrace query "SELECT class, count(*) FROM live_instances_v GROUP BY class"
        """,
        freeTextPositional: true)

    /// The accepted range of `--timeout`: a millisecond to a day.
    static let timeoutRange: ClosedRange<Int64> = 1_000_000...86_400_000_000_000

    static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let format = try OutputFormat.parse(args.value("format"), allowed: [.table, .csv, .json], default: .table)
        let timeout = try args.value("timeout").map { try OptionValues.duration($0, option: "--timeout", range: timeoutRange) }
        let maxWidth = try TableOptions.maxWidth(args)
        let sql = try sqlText(args, context)
        let location = context.databasePath(args)
        let style: RowFormatter.Style = format == .csv ? .csv : format == .json ? .json : .table
        if case .postgres = StorageLocation(location) {
            return try onServer(location, sql: sql, timeout: timeout, style: style, maxWidth: maxWidth, args, context)
        }
        // SQLite: the connection itself, its rows read in place (QueryRow).
        let db = try context.databases.openSQLiteForReading(location)
        ReadOnlyQuery.restrict(db)
        let deadline = timeout.map { QueryDeadline(db, nanoseconds: $0) }
        let stmt: SQLiteStatement
        do {
            stmt = try ReadOnlyQuery.prepare(sql, on: db)
        } catch let error as SQLiteError where deadline?.stopped(error) ?? false {
            throw stopped(after: timeout ?? 0)
        }
        // Each row's values go from where SQLite holds them straight into the output.
        return try write(columns: stmt.columnNames, style: style, maxWidth: maxWidth, args, context, rows: { out in
            try stmt.forEachRow { row in
                try out.add(row)
                if let deadline, deadline.passed { throw stopped(after: timeout ?? 0) }
            }
        }, meaning: { error in
            guard let error = error as? SQLiteError else { return error }
            if let deadline, deadline.stopped(error) { return stopped(after: timeout ?? 0) }
            return ReadOnlyQuery.isQueryFault(error) ? QueryRefused(message: "SQL error: \(error.message)") : error
        })
    }

    /// Streams the rows `rows` hands to the formatter; an error ends the output where it
    /// stands, told as `meaning` says (a timeout, a refused statement).
    private static func write(columns: [String], style: RowFormatter.Style, maxWidth: Int?, _ args: ParsedArguments,
                              _ context: CommandContext, rows: (RowFormatter) throws -> Void,
                              meaning: (Error) -> Error) throws -> Int32 {
        let out = RowFormatter(style: style, columns: columns, neutralizesFormulas: args.has("safe-csv"),
                               maxWidth: maxWidth, bytes: { context.console.write(bytes: $0) })
        do {
            try rows(out)
        } catch {
            out.abandon()
            throw meaning(error)
        }
        try out.finish()
        context.console.write(TableOptions.note(out))
        return ExitStatus.ok
    }

    /// A PostgreSQL database: the statement checked, then run in a READ ONLY transaction on a
    /// connection of its own, its rows fetched a page at a time (`Storage.userQuery`).
    private static func onServer(_ location: String, sql: String, timeout: Int64?, style: RowFormatter.Style,
                                 maxWidth: Int?, _ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let seconds = timeout.map { Double($0) / 1e9 }
        let rows: UserQueryRows
        do {
            // The deadline starts before connecting: opening checks the schema, which waits on
            // a table another session holds locked.
            let storage = try context.databases.openForReading(location, timeout: seconds)
            rows = try storage.userQuery(sql)
        } catch let error as StorageFailure where error.kind == .stopped {
            throw stopped(after: timeout ?? 0)
        }
        for warning in rows.warnings { context.console.writeError("Warning: \(shown(warning))\n") }
        return try write(columns: rows.columnNames, style: style, maxWidth: maxWidth, args, context, rows: { out in
            try rows.forEachRow { try out.add($0) }
        }, meaning: { error in
            (error as? StorageFailure)?.kind == .stopped ? stopped(after: timeout ?? 0) : error
        })
    }

    /// The most SQL read from a file or standard input.
    static let maxSQLBytes = 16 << 20

    /// The SQL: the argument, `-` (standard input) or `--file PATH`, given exactly once.
    static func sqlText(_ args: ParsedArguments, _ context: CommandContext) throws -> String {
        switch (args.positionals.first, args.value("file")) {
        case (nil, nil):
            throw UsageError("missing SQL for 'lctrace query'",
                             hint: "lctrace query \"SELECT …\", lctrace query --file PATH, or lctrace query - < PATH", command: "query")
        case (_?, _?):
            throw UsageError("give the SQL once: as an argument, - for standard input, or --file PATH", command: "query")
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

    var line: String {
        switch self {
        case .unreadable(let path, let why): return "cannot read the SQL in \(shown(path)): \(why)"
        case .tooLong(let source): return "the SQL in \(shown(source)) is longer than \(QueryCommand.maxSQLBytes >> 20) MiB"
        case .notText(let source): return "the SQL in \(shown(source)) is not UTF-8 text"
        }
    }

    var status: Int32 {
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
