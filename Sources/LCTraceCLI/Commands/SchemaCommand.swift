import LCTrace
import LCTraceStore

/// `lctrace schema`: prints the documented SQL schema (tables, columns, views).
enum SchemaCommand: Command {
    static let spec = CommandSpec(
        name: "schema",
        summary: "Print the SQL schema of the database, every column commented.",
        options: [
            OptionSpec("db", value: "PATH", help: "First check that PATH is an lctrace database of this schema version (without it, nothing is opened)."),
        ])

    package static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        // Only an explicit --db is opened: the schema is printed whatever $LCTRACE_DB names.
        let ddl = try args.value("db").map { try context.openForReading($0).ddl } ?? Storage.defaultDDL
        context.console.write(ddl + "\n")
        return ExitStatus.ok
    }
}
