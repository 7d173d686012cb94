import LCTrace
import LCTraceReport

/// `lctrace export`: sessions as a Chrome trace (Perfetto UI, chrome://tracing).
enum ExportCommand: Command {
    static let spec = CommandSpec(
        name: "export",
        summary: "Write sessions as a Chrome trace that Perfetto UI and chrome://tracing open.",
        options: [
            DatabaseOption.spec(),
            SessionOptions.session(help: "A session to export (a unique prefix is enough; repeatable).", repeatable: true),
            SessionOptions.app(help: "Every session of this app."),
            SessionOptions.build(help: "Every session of this build."),
        ]
            + FindingOptions.options
            + [FormatOption.spec(OutputFormats.export), OutputFile.option],
        discussion: """
        A process per session, a thread per controller instance (its lifetime, its events as
        instants, flows from presenter and container), and async slices for its appearances.
        Family flags, --class and --min-severity choose the findings included.
        Open the file at https://ui.perfetto.dev ("Open trace file") or in chrome://tracing.
        """)

    package static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        _ = try FormatOption.value(args, OutputFormats.export)
        let named = SessionOptions.sessionPrefixes(args)
        let app = SessionOptions.app(args), build = SessionOptions.build(args)
        guard !named.isEmpty || app != nil || build != nil else {
            throw UsageError("name what to export: --session SID, --build BUILD or --app BUNDLE",
                             hint: "list the sessions with: lctrace sessions --db \(Selection.shell(DatabaseOption.shown(args, context)))")
        }
        let findings = try FindingOptions.request(args)
        let db = try context.openForReading(DatabaseOption.location(args, context))
        let sessions = try SessionChoice.many(named, app: app, build: build, db: db)
        try Selection.requireKnownClass(findings.className, db)
        let output = try OutputFile(path: args.value("output"), console: context.console)
        let writer = ChromeTraceWriter(bytes: { try output.write(bytes: $0) })
        let progress = ProgressLine(console: context.console)
        try writer.begin()
        for (i, session) in sessions.enumerated() {
            progress.update { "export \(NumberFormat.thousands(i))/\(NumberFormat.thousands(sessions.count)) sessions" }
            try TimelineReport.export(db: db, session: session, findings: findings, to: writer) { events in
                progress.update {
                    "export \(NumberFormat.thousands(i))/\(NumberFormat.thousands(sessions.count)) sessions (rebuilding the next: \(NumberFormat.thousands(events)) events)"
                }
            }
        }
        try writer.finish()
        progress.clear()
        try output.finish()
        return ExitStatus.ok
    }
}
