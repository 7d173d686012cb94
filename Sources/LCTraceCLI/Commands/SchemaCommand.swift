import LCTrace

/// `lctrace schema`: prints the documented SQL schema (tables, columns, views).
enum SchemaCommand: Command {
    static let spec = CommandSpec(
        name: "schema",
        summary: "Print the SQL schema of the database, every column commented.",
        options: [])

    static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        context.console.write(Schema.ddl + "\n")
        return ExitStatus.ok
    }
}
