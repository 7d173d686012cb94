import LCTrace
import LCTraceAnalysis
import LCTraceModel
import LCTraceRules
import LCTraceStore
import LCTraceReport

/// `lctrace analyze`: rebuilds the model tables and findings (changed sessions, or all).
package enum AnalyzeCommand: Command {
    static let tuningOptions: [OptionSpec] = [
        OptionSpec("grace", value: "DURATION", help: "Leak grace period after a release, 0s to 24h with a unit (default 5s)."),
        OptionSpec("gap-threshold", value: "SPEC", help: "LC401 thresholds, 0s to 24h each, e.g. animated=1000ms,plain=250ms."),
        OptionSpec("max-live", value: "CLASS=N", help: "LC303 limit of live instances of a class, N from 0 to 1000000000 (repeatable).", repeatable: true),
    ]

    package static let spec = CommandSpec(
        name: "analyze",
        summary: "Rebuild the model (instances, appearances, containment) and the findings.",
        options: [
            OptionSpec("db", value: "PATH", help: "Database (default: $LCTRACE_DB, else ./lctrace.db)."),
            OptionSpec("all", help: "Rebuild every session, not only those whose events changed."),
        ] + tuningOptions,
        discussion: """
        `ingest` analyzes what it loads; run this after `ingest --no-analyze`, or with tuning
        options to store findings built with other settings (`report` then uses them).
        """)

    package static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let settings = try self.settings(args)
        // Before opening: waiting for another writer's lock is interruptible too.
        let signals = SignalWatch()
        defer { signals.end() }
        let db = try context.openForWriting(context.databasePath(args), create: false)
        let all = try args.has("all") || settingsChanged(db, settings)
        let progress = ProgressLine(console: context.console)
        let summary: AnalysisSummary
        var last = AnalysisProgress(sessionsDone: 0, sessions: 0, eventsIntoNext: 0)
        do {
            summary = try Analyzer(db: db, settings: settings).analyze(all: all, stop: signals.stop) { p in
                last = p
                progress.update { AnalyzeCommand.describe(p) }
            }
        } catch is Interrupted {
            progress.clear()
            let done = last.sessions > 0 ? "\(NumberFormat.thousands(last.sessionsDone)) of \(NumberFormat.thousands(last.sessions)) sessions analyzed"
                : "before any session was analyzed"
            context.console.writeError("interrupted: \(done); run the same command again to finish\n")
            db.tidyAfterInterruption()
            return SignalWatch.exitStatus(signals.stop.signal)
        }
        progress.clear()
        context.console.write("Analyzed \(NumberFormat.thousands(summary.sessions)) session\(summary.sessions == 1 ? "" : "s") (\(NumberFormat.thousands(summary.events)) events) in \(NumberFormat.seconds(summary.seconds)): \(NumberFormat.thousands(summary.findings)) findings\n")
        return ExitStatus.ok
    }

    /// The progress line of an analysis: a long session shows how far into it the model is.
    static func describe(_ p: AnalysisProgress) -> String {
        let line = "analyze \(NumberFormat.thousands(p.sessionsDone))/\(NumberFormat.thousands(p.sessions)) sessions"
        return p.eventsIntoNext > 0 ? line + " (\(NumberFormat.thousands(p.eventsIntoNext)) events into the next)" : line
    }

    /// True when stored findings were built with other tuning: then every session is stale.
    static func settingsChanged(_ db: Storage, _ settings: RuleSettings) throws -> Bool {
        try db.storedSettingsText().map { $0 != settings.canonicalText } ?? false
    }

    /// Rule settings from the tuning options.
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

    /// The accepted limits of `--max-live`.
    static let maxLiveRange = 0...1_000_000_000
}

