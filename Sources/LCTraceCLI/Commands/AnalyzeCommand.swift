import LCTrace
import LCTraceAnalysis
import LCTraceModel
import LCTraceRules
import LCTraceStore
import LCTraceReport

/// `lctrace analyze`: rebuilds the model tables and findings (changed sessions, or all).
enum AnalyzeCommand: Command {
    static let spec = CommandSpec(
        name: "analyze",
        summary: "Rebuild the model (instances, appearances, containment) and the findings.",
        options: [
            DatabaseOption.spec(),
            OptionSpec("all", help: "Rebuild every session, not only those whose events changed."),
        ] + TuningOptions.options,
        discussion: """
        `ingest` analyzes what it loads; run this after `ingest --no-analyze`, or with tuning
        options to store findings built with other settings (`report` then uses them).
        """)

    package static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let settings = try TuningOptions.settings(args)
        // Before opening: waiting for another writer's lock is interruptible too.
        let signals = SignalWatch()
        defer { signals.end() }
        let db: Storage
        do {
            db = try context.openForWriting(DatabaseOption.location(args, context), create: false, stop: signals.stop)
        } catch is Interrupted {
            return signals.interruptedWhileOpening(context.console)
        }
        let stored = try db.storedSettingsText()
        let all = args.has("all") || (stored != nil && !StoredModelPolicy.storedSettingsMatch(stored, settings))
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
}
