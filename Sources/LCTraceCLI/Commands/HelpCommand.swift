/// `lctrace help [COMMAND]`: the overview, one command's help, the whole manual page, or a
/// reference page of docs/ as Markdown. Every text comes from the commands' specs
/// (`CommandSpec.help`, `ManPage`, `MarkdownReference`).
enum HelpCommand: Command {
    static let spec = CommandSpec(
        name: "help",
        summary: "Show the overview, a command's help, or the manual page (--man).",
        positional: "[COMMAND]",
        positionalHelp: "The command to explain (lctrace help report is lctrace report --help); with --markdown, the page: "
            + MarkdownReference.Page.allCases.map { "\($0.rawValue) (\($0.path))" }.joined(separator: ", ") + ".",
        maxPositionals: 1,
        options: [
            OptionSpec("man", help: "Print the manual page of lctrace and every command, as roff (man -l -)."),
            OptionSpec("markdown", help: "Print a reference page of docs/ as Markdown (default: cli, the commands)."),
        ],
        positionalCompletion: .commands)

    package static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        if args.has("man") {
            if let name = args.positionals.first {
                throw UsageError("--man prints the whole manual; it takes no COMMAND ('\(name)')", hint: "lctrace help --man | man -l -")
            }
            if args.has("markdown") { throw UsageError("give --man or --markdown, not both") }
            context.console.write(ManPage.render())
            return ExitStatus.ok
        }
        if args.has("markdown") {
            let name = args.positionals.first ?? MarkdownReference.Page.cli.rawValue
            guard let page = MarkdownReference.Page(rawValue: name) else {
                let names = MarkdownReference.Page.allCases.map(\.rawValue)
                throw UsageError("unknown page '\(name)' (expected \(names.joined(separator: ", ")))",
                                 hint: ArgumentParser.closest(name, in: names).map { "did you mean '\($0)'?" })
            }
            context.console.write(MarkdownReference.render(page))
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
