import LCTrace

/// `lctrace report`: findings for people (text) and machines (json, csv), with an exit status
/// CI can gate on.
enum ReportCommand: Command {
    static let familyFlags: [(String, RuleFamily, String)] = [
        ("leaks", .leaks, "Leaks: released controllers never deallocated (LC301–LC303)."),
        ("orphans", .orphans, "Orphaned children and containment protocol (LC101–LC105)."),
        ("unbalanced", .unbalanced, "Appear with no matching disappear (LC201–LC205)."),
        ("gaps", .gaps, "Slow viewIsAppearing → viewDidAppear, with per-class statistics (LC401–LC402)."),
        ("scene", .scene, "App and scene life cycle (LC501–LC502)."),
        ("quality", .quality, "Trace quality: lost events, unknown ids, clock, rejected lines (LC901–LC904)."),
    ]

    /// The options that choose findings, shared by the commands that show them (timeline, export).
    static let findingOptions: [OptionSpec] = familyFlags.map { OptionSpec($0.0, help: $0.2) }
        + [OptionSpec("all", help: "Every family (the default when none is named).")]
    static let classOptions: [OptionSpec] = [
        OptionSpec("class", value: "CLASS", help: "Only findings about this class."),
        OptionSpec("min-severity", value: "LEVEL", help: "info (default), warning or error.", choices: ["info", "warning", "error"]),
    ]

    static let spec = CommandSpec(
        name: "report",
        summary: "Print findings: grouped for people, or as JSON/CSV; exit 1 on findings at --fail-on.",
        options: [OptionSpec("db", value: "PATH", help: "Database (default: $LCTRACE_DB, else ./lctrace.db).")]
            + findingOptions
            + [
                OptionSpec("session", value: "SID", help: "Only this session (a unique prefix is enough)."),
                OptionSpec("app", value: "BUNDLE", help: "Only sessions of this app."),
                OptionSpec("build", value: "BUILD", help: "Only sessions of this build."),
            ]
            + classOptions
            + AnalyzeCommand.tuningOptions
            + [
                OptionSpec("format", short: "f", value: "FORMAT", help: "text (default), json or csv.", choices: ["text", "json", "csv"]),
                OptionSpec("fail-on", value: "LEVEL", help: "Exit 1 when a finding at or above it exists: error (default), warning, info, never.",
                           choices: ["error", "warning", "info", "never"]),
                OptionSpec("examples", value: "N", help: "Examples per rule in text output (default 5)."),
            ],
        discussion: """
        Findings are stored by `ingest`/`analyze`; with other tuning (--grace, --gap-threshold,
        --max-live) they are recomputed for this report without changing the database.
        Exit status: 0 no finding at or above --fail-on, 1 there is one, 64 usage, 74 database.
        """)

    static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let format = try OutputFormat.parse(args.value("format"), allowed: [.text, .json, .csv], default: .text)
        var request = try findingsRequest(args)
        request.sessions = SessionFilter(session: args.value("session"), app: args.value("app"), build: args.value("build"))
        let failOn: Severity?
        if args.value("fail-on") == "never" { failOn = nil } else {
            failOn = try severity(args.value("fail-on"), option: "fail-on", extra: ["never"]) ?? .error
        }
        var examples = 5
        if let text = args.value("examples") {
            guard let n = Int(text), n >= 0 else { throw UsageError("invalid --examples '\(text)' (expected a number)") }
            examples = n
        }
        let db = try Schema.openForReading(path: context.databasePath(args))
        let data = try ReportQuery.collect(request, db: db)
        if let sid = request.sessions.session, data.sessions.isEmpty {
            throw UsageError("no session matches '\(sid)'", hint: "list them with 'lctrace sessions'")
        }
        switch format {
        case .json: context.console.write(MachineReport.json(data))
        case .csv: context.console.write(MachineReport.csv(data))
        default:
            var report = TextReport(data: data, color: context.console.outputIsTerminal)
            report.examples = examples
            context.console.write(report.render(families: request.families))
        }
        if let failOn, data.findings.contains(where: { $0.severity >= failOn }) { return ExitStatus.findings }
        return ExitStatus.ok
    }

    /// Families, class, severity and tuning from the options (`findingOptions`, `classOptions`,
    /// the tuning options); the sessions are the caller's.
    static func findingsRequest(_ args: ParsedArguments) throws -> ReportRequest {
        var request = ReportRequest()
        request.settings = try AnalyzeCommand.settings(args)
        let named = Set(familyFlags.filter { args.has($0.0) }.map { $0.1 })
        request.families = named.isEmpty || args.has("all") ? Set(RuleFamily.allCases) : named
        request.className = args.value("class")
        request.minSeverity = try severity(args.value("min-severity"), option: "min-severity") ?? .info
        return request
    }

    static func severity(_ text: String?, option: String, extra: [String] = []) throws -> Severity? {
        guard let text else { return nil }
        if let s = Severity(rawValue: text) { return s }
        let names = Severity.allCases.map(\.rawValue) + extra
        throw UsageError("invalid --\(option) '\(text)' (expected \(names.joined(separator: ", ")))",
                         hint: ArgumentParser.closest(text, in: names).map { "did you mean '\($0)'?" })
    }
}
