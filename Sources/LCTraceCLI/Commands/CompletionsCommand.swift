import LCTraceModel

/// `lctrace completions bash|zsh|fish`: a completion script generated from the commands'
/// specs, so that every command and option, new ones too, completes as the help lists it.
enum CompletionsCommand: Command {
    static let spec = CommandSpec(
        name: "completions",
        summary: "Print a shell completion script for bash, zsh or fish.",
        positional: "SHELL",
        positionalHelp: "bash, zsh or fish.",
        minPositionals: 1,
        maxPositionals: 1,
        options: [],
        discussion: """
        Load it for the running shell, or install it where the shell looks:
          bash: source <(lctrace completions bash)    (in ~/.bashrc), or save it as
                ~/.local/share/bash-completion/completions/lctrace
          zsh:  source <(lctrace completions zsh)     (in ~/.zshrc, after compinit), or save it
                as _lctrace in a folder of $fpath
          fish: lctrace completions fish > ~/.config/fish/completions/lctrace.fish
        'make install' installs all three (see the README).
        """,
        positionalCompletion: .words(ShellCompletions.Shell.allCases.map(\.rawValue)))

    package static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let name = args.positionals[0]
        guard let shell = ShellCompletions.Shell(rawValue: name) else {
            let names = ShellCompletions.Shell.allCases.map(\.rawValue)
            throw UsageError("unknown shell '\(name)' (expected \(names.joined(separator: ", ")))",
                             hint: ArgumentParser.closest(name, in: names).map { "did you mean '\($0)'?" })
        }
        context.console.write(ShellCompletions.script(for: shell))
        return ExitStatus.ok
    }
}
