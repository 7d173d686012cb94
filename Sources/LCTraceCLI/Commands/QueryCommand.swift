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
        ],
        discussion: """
        The database is opened read-only: statements that write, ATTACH and pragmas that set
        values are refused and change nothing.
        Example: lctrace query "SELECT class, count(*) FROM live_instances_v GROUP BY class"
        """)

    static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let format = try OutputFormat.parse(args.value("format"), allowed: [.table, .csv, .json], default: .table)
        let db = try Schema.openForReading(path: context.databasePath(args))
        ReadOnlyQuery.restrict(db)
        let stmt = try ReadOnlyQuery.prepare(args.positionals[0], on: db)
        let columns = (0..<stmt.columnCount).map { stmt.columnName($0) }
        let style: RowFormatter.Style = format == .csv ? .csv : format == .json ? .json : .table
        let out = RowFormatter(style: style, columns: columns) { context.console.write($0) }
        do {
            while try stmt.step() {
                out.add((0..<columns.count).map { stmt.value($0) })
            }
        } catch let error as DatabaseError {
            throw QueryRefused(message: "SQL error: \(error.message)")
        }
        out.finish()
        return ExitStatus.ok
    }
}
