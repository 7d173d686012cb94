/// `--color auto|always|never` of the commands that colour text (report, timeline). `auto`
/// colours a terminal only, and never when `NO_COLOR` is set to anything but the empty string
/// (https://no-color.org) or `TERM` is `dumb`; `always` colours whatever the output (for
/// `less -R`, or a file read with it), `never` never does.
enum ColorOption {
    static let option = OptionSpec("color", value: "WHEN",
                                   help: "Colour: auto (default: on a terminal, unless NO_COLOR is set or TERM=dumb), always (e.g. for less -R) or never.",
                                   choices: ["auto", "always", "never"])

    /// Whether to colour output that goes to a terminal when `terminal`.
    static func enabled(_ args: ParsedArguments, _ context: CommandContext, terminal: Bool) throws -> Bool {
        switch args.value("color") ?? "auto" {
        case "always": return true
        case "never": return false
        case "auto":
            if let noColor = context.environment["NO_COLOR"], !noColor.isEmpty { return false }
            if context.environment["TERM"] == "dumb" { return false }
            return terminal
        case let other:
            throw UsageError("invalid --color '\(other)' (expected auto, always or never)",
                             hint: ArgumentParser.closest(other, in: ["auto", "always", "never"]).map { "did you mean '\($0)'?" })
        }
    }
}
