import Foundation
import LCTrace
import LCTraceAnalysis
import LCTraceIngest
import LCTraceModel
import LCTraceReport
import LCTraceStore
import LCTraceFormat

/// `lctrace ingest PATH...`: loads trace files into the database, then rebuilds the model
/// and findings of the sessions that changed.
enum IngestCommand: Command {
    static let spec = CommandSpec(
        name: "ingest",
        summary: "Load trace files (gzip or plain JSON lines) into the database and analyze them.",
        positional: "PATH...",
        positionalHelp: "Files, tar archives of them (.tar, .tar.gz, .tgz), directories (searched for *.gz, *.jsonl, *.tar, *.tgz) or - for standard input.",
        minPositionals: 1, maxPositionals: nil,
        options: [
            DatabaseOption.spec(),
            OptionSpec("no-analyze", help: "Load only; the model and findings are built by the next analyze or report."),
            FormatOption.spec(OutputFormats.ingestSummary, help: "The summary: \(OutputFormats.ingestSummary.help)."),
            OptionSpec("quiet", short: "q", help: "Print no summary (problems still go to stderr)."),
            OptionSpec("verbose", short: "v", help: "List every file skipped as already loaded (default: the first \(IngestSummaryReporter.skippedShown))."),
        ] + TuningOptions.options,
        discussion: """
        Idempotent: loading the same file again (under any name) adds nothing; overlapping files
        de-duplicate on (sid, seq). Bad lines are stored in `rejects` and never stop a file.
        A tar archive loads member by member, each a file named ARCHIVE:MEMBER; a zip archive
        is refused (extract it first).
        Exit status: 0 ok, 65 a file was damaged or refused (the rest still loaded), 66 a path does not
        exist or cannot be read (the others still loaded), 74 the database could not be
        written, 130/143 interrupted (run the same command again to finish).
        """)

    package static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let format = try FormatOption.value(args, OutputFormats.ingestSummary)
        let settings = try TuningOptions.settings(args)
        // A database given where trace files go (`lctrace ingest postgresql://… logs/`) is
        // refused as one, not reported as a missing file with its password.
        // (A server's URL is shown without its password; any other such value not at all.)
        if let database = args.positionals.first(where: { ConnectionText.notAPath($0) != nil || Storage.isServer($0) }) {
            let url = Shell.word(Storage.shown(database))
            throw UsageError("an argument is a database (\(Storage.isServer(database) ? url : "not shown: it may hold a password")), not a trace file",
                             hint: "a database goes after --db: lctrace ingest --db \(url) PATH...")
        }
        let console = context.console
        let signals = SignalWatch()
        defer { signals.end() }
        let db: Storage
        do {
            db = try context.openForWriting(DatabaseOption.location(args, context), stop: signals.stop)
        } catch is Interrupted {
            return signals.interruptedWhileOpening(console)
        }
        let job = IngestRun(db: db, analyze: !args.has("no-analyze"), settings: settings)
        job.stop = signals.stop
        let progress = ProgressLine(console: console)
        let started = Date()
        job.loadingProgress = { p in progress.update { describe(p, seconds: Date().timeIntervalSince(started)) } }
        job.loadingAnalysisLeft = { left in
            progress.update { "analyze: \(NumberFormat.thousands(left)) session\(left == 1 ? "" : "s") of the last files left" }
        }
        job.analysisProgress = { p in progress.update { AnalyzeCommand.describe(p) } }
        let outcome: IngestRun.Outcome
        do {
            outcome = try job.run(args.positionals)
        } catch let stopped as IngestInterrupted {
            return interrupted(stopped.summary, db, console, progress, signals.stop.signal)
        }
        progress.clear()
        let summary = outcome.ingest
        reportProblems(summary, console, database: db.shownLocation)
        for path in outcome.emptyDirectories {
            console.writeError("Error: \(shown(path)): no trace files in it (*.gz, *.jsonl, *.tar, *.tgz)\n")
        }
        for file in outcome.filesWithoutEvents {
            let rejected = "\(NumberFormat.thousands(file.rejects)) of \(NumberFormat.thousands(file.lines)) lines rejected"
            console.writeError("Error: \(shown(file.path)): not a single valid trace line (\(rejected)): is it a trace file?\n")
        }
        // A device copy that failed can leave a file of nothing: loaded, it adds nothing, and
        // says so (not an error: a recorder may end a file before its first line).
        for file in summary.files where file.events == 0 && file.rejects == 0 && file.conflicts == 0 {
            guard case .loaded = file.status else { continue }
            let what = file.lines == 0 ? "empty" : "only blank lines"
            console.writeError("Warning: \(shown(file.path)): \(what): no trace line loaded from it\n")
        }
        if !args.has("quiet") {
            let totals = try DatabaseReader(db: db.backend.reader).totals()
            console.write(format == .json ? IngestSummaryReporter.json(summary, outcome.analysis, database: totals)
                          : IngestSummaryReporter.text(summary, outcome.analysis, database: totals, verbose: args.has("verbose"),
                                                       databaseOption: args.value("db") == nil ? "" : " --db " + Shell.word(db.shownLocation)))
        }
        if !summary.missingFiles.isEmpty || !outcome.emptyDirectories.isEmpty { return ExitStatus.noInput }
        if !summary.damagedFiles.isEmpty || !summary.refusedFiles.isEmpty || !outcome.filesWithoutEvents.isEmpty {
            return ExitStatus.dataError
        }
        return ExitStatus.ok
    }

    /// The progress line of the whole run: files done of all, events, bytes, rate and the time
    /// left (from the bytes still to read at the rate so far), then the file being read.
    static func describe(_ p: IngestProgress, seconds: Double) -> String {
        let run = p.run
        var parts = ["ingest \(NumberFormat.thousands(run.filesDone))/\(NumberFormat.thousands(p.fileCount)) files",
                     "\(NumberFormat.thousands(run.events)) events"]
        let done = run.bytesRead + run.bytesSkipped
        parts.append(run.totalBytes.map { "\(megabytes(done)) of \(megabytes($0)) MB" } ?? "\(megabytes(done)) MB")
        if seconds > 0 { parts.append("\(NumberFormat.thousands(Int(Double(run.events) / seconds))) events/s") }
        if let total = run.totalBytes, run.bytesRead > 0, seconds >= 1 {
            let left = Double(max(total - done, 0)) / (Double(run.bytesRead) / seconds)
            parts.append("ETA \(clock(left))")
        }
        if run.filesDone < p.fileCount {
            let share = p.rawSize.flatMap { $0 > 0 && p.rawBytes > 0 ? " \(Int(Double(p.rawBytes) * 100 / Double($0)))%" : nil } ?? ""
            parts.append(shown((p.path as NSString).lastPathComponent) + share)
        }
        return parts.joined(separator: " · ")
    }

    static func megabytes(_ bytes: Int64) -> String { String(format: "%.1f", Double(bytes) / 1e6) }

    /// Seconds as m:ss, or h:mm:ss from an hour.
    static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
    }

    /// The end of an interrupted ingest: the problems of the files loaded, then one line; the
    /// write-ahead log is copied back into the database file (https://sqlite.org/pragma.html#pragma_wal_checkpoint).
    static func interrupted(_ summary: IngestSummary, _ db: Storage, _ console: Console, _ progress: ProgressLine,
                            _ signal: Int32) -> Int32 {
        progress.clear()
        reportProblems(summary, console, database: db.shownLocation)
        let loaded = IngestSummaryReporter.loadedFiles(summary)
        console.writeError("interrupted: \(NumberFormat.thousands(loaded)) file\(loaded == 1 ? "" : "s") loaded; run the same command again to finish\n")
        db.tidyAfterInterruption()
        return SignalWatch.exitStatus(signal)
    }

    /// Problems go to stderr, one line each, naming file, line and reason; the follow-up
    /// query names the database.
    static func reportProblems(_ summary: IngestSummary, _ console: Console, database: String) {
        for c in summary.recordConflicts {
            let records = c.count == 1 ? "1 session record disagrees" : "\(NumberFormat.thousands(c.count)) session records disagree"
            console.writeError("Warning: session \(shown(c.sid)): \(records) with the one kept on \(c.fields.joined(separator: ", ")) (the earliest record is kept; see sessions.record_conflicts)\n")
        }
        for file in summary.files {
            switch file.status {
            case .missing(let why): console.writeError("Error: \(shown(file.path)): \(shown(why))\n")
            case .unreadable(let why):
                console.writeError("Error: \(shown(file.path)): \(shown(why))\n")
                if why.hasPrefix("not a regular file") {
                    console.writeError("Hint: lctrace reads regular files; pipe anything else in as standard input: lctrace ingest - < PATH\n")
                }
            case .refused(let why): console.writeError("Error: \(shown(file.path)): \(shown(why))\n")
            case .damaged(let why):
                // Reading may have gone on after the damage (a later gzip member): the events
                // kept are not all before it.
                let kept = why.contains("reading went on") ? "\(NumberFormat.thousands(file.events)) events of it were kept"
                    : "the \(NumberFormat.thousands(file.events)) events before it were kept"
                console.writeError("Error: \(shown(file.path)): damaged: \(shown(why)); \(kept)\n")
            default: break
            }
            for example in file.rejectExamples {
                console.writeError("Warning: \(shown(file.path)):\(example.line): \(shown(example.reason))\n")
            }
            if file.rejects > file.rejectExamples.count {
                let query = FollowUp(database: database).command(HintQueries.rejectedLines(path: file.path))
                console.writeError("Warning: \(shown(file.path)): \(NumberFormat.thousands(file.rejects - file.rejectExamples.count)) more rejected lines (\(shown(query)))\n")
            }
            if file.conflicts > 0 {
                console.writeError("Warning: \(shown(file.path)): \(NumberFormat.thousands(file.conflicts)) conflicting duplicates of stored events (first copy kept; see rejects, kind 'conflict')\n")
            }
        }
    }

}

/// A throttled progress line: drawn on a terminal at most ten times a second, never when piped.
final class ProgressLine {
    private let console: Console
    private var last = Date.distantPast
    private var shown = false

    init(console: Console) { self.console = console }

    func update(_ text: () -> String) {
        guard console.errorIsTerminal else { return }
        let now = Date()
        guard now.timeIntervalSince(last) >= 0.1 else { return }
        last = now
        console.progress(text())
        shown = true
    }

    func clear() {
        if shown { console.clearProgress() }
        shown = false
    }
}
