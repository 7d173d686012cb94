import LCTrace
import LCTraceModel
import LCTraceReport
import LCTraceRules
import LCTraceStore

/// Options declared once and composed into every command that takes them, as
/// swift-argument-parser's `@OptionGroup`: a group lists its specs (which the parser, the help,
/// the manual page, the completions and docs/cli.md read) and reads its typed value, so no
/// command spells another's option names.
protocol OptionGroup {
    static var options: [OptionSpec] { get }
}

/// `--db`: where the data is.
enum DatabaseOption: OptionGroup {
    static let defaultHelp = "Database: a SQLite file, or a postgresql:// URL (default: $LCTRACE_DB, else ./lctrace.db)."
    static let options = [spec()]

    /// The option with a help line of the command's own (compare's head build, schema's check).
    static func spec(help: String = defaultHelp) -> OptionSpec { OptionSpec("db", value: "PATH", help: help) }

    /// `--db`, else `$LCTRACE_DB` (an empty one is unset, as an empty NO_COLOR is:
    /// https://no-color.org), else `./lctrace.db`.
    static func location(_ args: ParsedArguments, _ context: CommandContext) -> String {
        args.value("db") ?? context.environment["LCTRACE_DB"].flatMap { $0.isEmpty ? nil : $0 } ?? "lctrace.db"
    }

    /// The location as hints show it before anything is opened: a server's URL without its
    /// password (`location` is for opening only; an open database has `shownLocation`).
    static func shown(_ args: ParsedArguments, _ context: CommandContext) -> String {
        Storage.shown(location(args, context))
    }
}

/// The rules' tuning: `--grace`, `--gap-threshold`, `--max-live`, read into `RuleSettings`.
enum TuningOptions: OptionGroup {
    static let options: [OptionSpec] = [
        OptionSpec("grace", value: "DURATION", help: "Leak grace period after a release, 0s to 24h with a unit (default 5s)."),
        OptionSpec("gap-threshold", value: "SPEC", help: "LC401 thresholds, 0s to 24h each, e.g. animated=1000ms,plain=250ms."),
        OptionSpec("max-live", value: "CLASS=N", help: "LC303 limit of live instances of a class, N from 0 to 1000000000 (repeatable).", repeatable: true),
    ]

    /// The accepted limits of `--max-live`.
    static let maxLiveRange = 0...1_000_000_000

    static func settings(_ args: ParsedArguments) throws -> RuleSettings {
        var settings = RuleSettings()
        if let grace = args.value("grace") {
            settings.leakGrace = try OptionValues.duration(grace, option: "--grace", range: OptionValues.ruleDurations)
        }
        if let spec = args.value("gap-threshold") {
            for part in spec.split(separator: ",", omittingEmptySubsequences: false) {
                let kv = part.split(separator: "=", maxSplits: 1).map(String.init)
                guard kv.count == 2 else {
                    throw UsageError("invalid --gap-threshold '\(spec)' (expected animated=1000ms,plain=250ms)")
                }
                let ns = try OptionValues.duration(kv[1], option: "--gap-threshold \(kv[0])", range: OptionValues.ruleDurations)
                switch kv[0] {
                case "animated": settings.gapAnimated = ns
                case "plain", "not-animated": settings.gapPlain = ns
                default:
                    throw UsageError("invalid --gap-threshold key '\(kv[0])' (expected animated or plain)")
                }
            }
        }
        for item in args.all("max-live") {
            let kv = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard kv.count == 2, !kv[0].isEmpty else {
                throw UsageError("invalid --max-live '\(item)' (expected CLASS=N)")
            }
            settings.maxLive[kv[0]] = try OptionValues.count(kv[1], option: "--max-live \(kv[0])", range: maxLiveRange)
        }
        return settings
    }
}

/// The rule families: `--leaks`, `--orphans`, … and `--all` (the default when none is named).
enum FamilyOptions: OptionGroup {
    static let flags: [(name: String, family: RuleFamily, help: String)] = [
        ("leaks", .leaks, "Leaks: released controllers never deallocated"),
        ("orphans", .orphans, "Orphaned children and containment protocol"),
        ("unbalanced", .unbalanced, "Appear with no matching disappear"),
        ("gaps", .gaps, "Slow viewIsAppearing → viewDidAppear, with per-class statistics"),
        ("scene", .scene, "App and scene life cycle"),
        ("quality", .quality, "Trace quality: lost events, unknown ids, clock, rejected lines"),
    ]

    /// The family's rules as the help names them, from the catalogue: "(LC301–LC303)".
    static func range(_ family: RuleFamily) -> String {
        let ids = RuleCatalog.all.filter { $0.family == family }.map(\.id).sorted()
        guard let first = ids.first, let last = ids.last else { return "" }
        return " (\(first == last ? first : "\(first)–\(last)"))"
    }

    static let options: [OptionSpec] = flags.map { OptionSpec($0.name, help: $0.help + range($0.family) + ".") }
        + [OptionSpec("all", help: "Every family (the default when none is named).")]

    static func families(_ args: ParsedArguments) -> Set<RuleFamily> {
        let named = Set(flags.filter { args.has($0.name) }.map(\.family))
        return named.isEmpty || args.has("all") ? Set(RuleFamily.allCases) : named
    }
}

/// The findings shown: `--class`, `--min-severity`.
enum FindingFilterOptions: OptionGroup {
    static let options: [OptionSpec] = [
        OptionSpec("class", value: "CLASS", help: "Only findings about this class."),
        OptionSpec("min-severity", value: "LEVEL", help: "info (default), warning or error.", choices: ["info", "warning", "error"]),
    ]

    static func className(_ args: ParsedArguments) -> String? { args.value("class") }

    static func minSeverity(_ args: ParsedArguments) throws -> Severity {
        try SeverityValue.parse(args.value("min-severity"), option: "min-severity") ?? .info
    }
}

/// The sessions: `--session` (a unique prefix), `--app`, `--build`. A command that says them
/// its own way (export's repeatable `--session`, compare's `--app` on both sides) takes the
/// spec with its own help; every command reads them here.
enum SessionOptions: OptionGroup {
    static let options: [OptionSpec] = [session(), app(), build()]

    static func session(help: String = "Only this session (a unique prefix is enough, any case).",
                        repeatable: Bool = false) -> OptionSpec {
        OptionSpec("session", value: "SID", help: help, repeatable: repeatable)
    }
    static func app(help: String = "Only sessions of this app.") -> OptionSpec {
        OptionSpec("app", value: "BUNDLE", help: help)
    }
    static func build(help: String = "Only sessions of this build.") -> OptionSpec {
        OptionSpec("build", value: "BUILD", help: help)
    }

    /// `--session` as given (a prefix, not yet resolved: `Selection.resolve`).
    static func sessionPrefix(_ args: ParsedArguments) -> String? { args.value("session") }
    /// Every `--session` of a command that repeats it.
    static func sessionPrefixes(_ args: ParsedArguments) -> [String] { args.all("session") }
    static func app(_ args: ParsedArguments) -> String? { args.value("app") }
    static func build(_ args: ParsedArguments) -> String? { args.value("build") }
    /// `--app` and `--build` as a filter (the session, a prefix, is resolved against a database).
    static func appAndBuild(_ args: ParsedArguments) -> SessionFilter {
        SessionFilter(app: app(args), build: build(args))
    }
}

/// Everything that chooses findings (families, their filters, the tuning), read into the
/// request of a report, baseline, timeline or export; the sessions are the command's.
enum FindingOptions: OptionGroup {
    static let options = FamilyOptions.options + FindingFilterOptions.options + TuningOptions.options

    static func request(_ args: ParsedArguments) throws -> ReportRequest {
        var request = ReportRequest()
        request.settings = try TuningOptions.settings(args)
        request.families = FamilyOptions.families(args)
        request.className = FindingFilterOptions.className(args)
        request.minSeverity = try FindingFilterOptions.minSeverity(args)
        return request
    }

    /// The options of `args` a pasted `lctrace timeline` needs to mark the same findings:
    /// the families named, `--class`, `--min-severity` and the tuning, as shell words.
    static func shellWords(_ args: ParsedArguments) -> [String] {
        var out: [String] = []
        if !args.has("all") { out += FamilyOptions.flags.filter { args.has($0.name) }.map { "--\($0.name)" } }
        for option in FindingFilterOptions.options + TuningOptions.options {
            for value in args.all(option.name) { out += ["--\(option.name)", Shell.word(value)] }
        }
        return out
    }
}

/// `--fail-on`: the severity at which a gate fails, or never.
enum FailOnOption {
    static func spec(help: String = "Exit 1 when a finding at or above it exists: error (default), warning, info, never.") -> OptionSpec {
        OptionSpec("fail-on", value: "LEVEL", help: help, choices: ["error", "warning", "info", "never"])
    }

    /// A severity, or nil for never (default error).
    static func value(_ args: ParsedArguments) throws -> Severity? {
        if args.value("fail-on") == "never" { return nil }
        return try SeverityValue.parse(args.value("fail-on"), option: "fail-on", extra: ["never"]) ?? .error
    }
}

/// A severity named on the command line.
enum SeverityValue {
    static func parse(_ text: String?, option: String, extra: [String] = []) throws -> Severity? {
        guard let text else { return nil }
        if let s = Severity(rawValue: text) { return s }
        let names = Severity.allCases.map(\.rawValue) + extra
        throw UsageError("invalid --\(option) '\(text)' (expected \(names.joined(separator: ", ")))",
                         hint: ArgumentParser.closest(text, in: names).map { "did you mean '\($0)'?" })
    }
}

/// `-f/--format` of a command, from its entry in `OutputFormats`: the help, the completions
/// and the check all come from there.
enum FormatOption {
    static func spec<Value>(_ choices: FormatChoices<Value>, help: String? = nil) -> OptionSpec {
        OptionSpec("format", short: "f", value: "FORMAT", help: help ?? "\(choices.help).", choices: choices.ids)
    }

    static func value<Value>(_ args: ParsedArguments, _ choices: FormatChoices<Value>) throws -> Value {
        guard let text = args.value("format") else { return choices.defaultFormat.value }
        if let format = choices.named(text) { return format.value }
        throw UsageError("unknown format '\(text)' (expected \(choices.ids.joined(separator: ", ")))",
                         hint: ArgumentParser.closest(text, in: choices.ids).map { "did you mean '\($0)'?" })
    }
}
