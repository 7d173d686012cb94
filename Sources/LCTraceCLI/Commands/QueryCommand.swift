import LCTrace

/// `lctrace query SQL`: ad-hoc SQL over a read-only connection.
enum QueryCommand: Command {
    static let spec = CommandSpec(
        name: "query",
        summary: "Run ad-hoc SQL over the database (read-only).",
        positional: "SQL",
        positionalHelp: "One SQL statement; start from the *_v views (see 'lctrace schema').",
        minPositionals: 1, maxPositionals: 1,
        options: [
            OptionSpec("db", value: "PATH", help: "Database (default: $LCTRACE_DB, else ./lctrace.db)."),
            OptionSpec("format", short: "f", value: "FORMAT", help: "table (default), csv or json.", choices: ["table", "csv", "json"]),
            OptionSpec("timeout", value: "DURATION", help: "Stop the query after this long, e.g. 30s (default: no limit)."),
            .safeCSV,
        ],
        discussion: """
        The database is opened read-only: statements that write, ATTACH and pragmas that set
        values are refused and change nothing. Any one value is at most 64 MiB.
        Example: lctrace query "SELECT class, count(*) FROM live_instances_v GROUP BY class"
        """)

    /// The accepted range of `--timeout`: a millisecond to a day.
    static let timeoutRange: ClosedRange<Int64> = 1_000_000...86_400_000_000_000

    static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let format = try OutputFormat.parse(args.value("format"), allowed: [.table, .csv, .json], default: .table)
        let timeout = try args.value("timeout").map { try OptionValues.duration($0, option: "--timeout", range: timeoutRange) }
        let db = try SQLiteSchema.openForReading(path: context.databasePath(args))
        ReadOnlyQuery.restrict(db)
        let deadline = timeout.map { QueryDeadline(db, nanoseconds: $0) }
        let stmt: SQLiteStatement
        do {
            stmt = try ReadOnlyQuery.prepare(args.positionals[0], on: db)
        } catch let error as SQLiteError where deadline?.stopped(error) ?? false {
            throw stopped(deadline!)
        }
        let columns = (0..<stmt.columnCount).map { stmt.columnName($0) }
        let style: RowFormatter.Style = format == .csv ? .csv : format == .json ? .json : .table
        let out = RowFormatter(style: style, columns: columns, neutralizesFormulas: args.has("safe-csv")) { context.console.write($0) }
        do {
            while try stmt.step() {
                // A huge value is printed in pieces from where SQLite holds it, never copied whole.
                var large: [Int: Bool] = [:]
                for i in 0..<columns.count {
                    if let isText = stmt.withLargeValue(i, minimum: RowFormatter.largeValueBytes, { _, isText in isText }) { large[i] = isText }
                }
                if large.isEmpty {
                    out.add((0..<columns.count).map { stmt.value($0) })
                } else {
                    try withCells(stmt, columns.count, large) { out.add(cells: $0) }
                }
                if let deadline, deadline.passed { throw stopped(deadline) }
            }
        } catch let error as SQLiteError where deadline?.stopped(error) ?? false {
            throw stopped(deadline!)
        } catch let error as SQLiteError where ReadOnlyQuery.isQueryFault(error) {
            throw QueryRefused(message: "SQL error: \(error.message)")
        }
        out.finish()
        return ExitStatus.ok
    }

    /// The row's cells, the large ones as bytes where SQLite holds them (valid inside `body`).
    private static func withCells(_ stmt: SQLiteStatement, _ count: Int, _ large: [Int: Bool],
                                  _ body: ([RowFormatter.Cell]) throws -> Void) throws {
        func build(_ i: Int, _ cells: [RowFormatter.Cell]) throws {
            if i == count { return try body(cells) }
            guard large[i] != nil else { return try build(i + 1, cells + [.value(stmt.value(i))]) }
            try stmt.withLargeValue(i, minimum: RowFormatter.largeValueBytes) { bytes, isText in
                try build(i + 1, cells + [isText ? .largeText(bytes) : .largeBlob(bytes)])
            }
        }
        try build(0, [])
    }

    private static func stopped(_ deadline: QueryDeadline) -> QueryStopped {
        QueryStopped(message: "query stopped after \(OptionValues.describe(Int64(deadline.seconds * 1e9))) (--timeout); what was printed before is incomplete")
    }
}

/// A query that ran past `--timeout`.
struct QueryStopped: Error {
    var message: String
}
