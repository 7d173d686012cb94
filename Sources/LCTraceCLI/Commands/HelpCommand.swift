/// `lctrace help [COMMAND]`: the overview, one command's help, or the whole manual page.
/// Every text comes from the commands' specs (`CommandSpec.help`, `ManPage`).
package enum HelpCommand: Command {
    package static let spec = CommandSpec(
        name: "help",
        summary: "Show the overview, a command's help, or the manual page (--man).",
        positional: "[COMMAND]",
        positionalHelp: "The command to explain (lctrace help report is lctrace report --help).",
        maxPositionals: 1,
        options: [
            OptionSpec("man", help: "Print the manual page of lctrace and every command, as roff (man -l -)."),
        ],
        positionalCompletion: .commands)

    package static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        if args.has("man") {
            if let name = args.positionals.first {
                throw UsageError("--man prints the whole manual; it takes no COMMAND ('\(name)')", hint: "lctrace help --man | man -l -")
            }
            context.console.write(ManPage.render())
            return ExitStatus.ok
        }
        guard let name = args.positionals.first else {
            context.console.write(CLI.overview)
            return ExitStatus.ok
        }
        guard let command = CLI.commands.first(where: { $0.spec.name == name }) else {
            throw UsageError("unknown command '\(name)'", hint: CLI.suggestion(for: name))
        }
        context.console.write(command.spec.help)
        return ExitStatus.ok
    }
}
