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
package enum IngestCommand: Command {
    package static let spec = CommandSpec(
        name: "ingest",
        summary: "Load trace files (gzip or plain JSON lines) into the database and analyze them.",
        positional: "PATH...",
        positionalHelp: "Files, directories (searched for *.gz, *.jsonl, *.jsonl.gz) or - for standard input.",
        minPositionals: 1, maxPositionals: nil,
        options: [
            OptionSpec("db", value: "PATH", help: "Database (default: $LCTRACE_DB, else ./lctrace.db)."),
            OptionSpec("no-analyze", help: "Load only; the model and findings are built by the next analyze or report."),
            OptionSpec("format", short: "f", value: "FORMAT", help: "Summary as text (default) or json.", choices: ["text", "json"]),
            OptionSpec("quiet", short: "q", help: "Print no summary (problems still go to stderr)."),
            OptionSpec("verbose", short: "v", help: "List every file skipped as already loaded (default: the first \(skippedShown))."),
        ] + AnalyzeCommand.tuningOptions,
        discussion: """
        Idempotent: loading the same file again (under any name) adds nothing; overlapping files
        de-duplicate on (sid, seq). Bad lines are stored in `rejects` and never stop a file.
        Exit status: 0 ok, 65 a file was damaged (the rest still loaded), 66 a path does not
        exist or cannot be read (the others still loaded), 74 the database could not be
        written, 130/143 interrupted (run the same command again to finish).
        """)

    package static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let format = try OutputFormat.parse(args.value("format"), allowed: [.text, .json], default: .text)
        let settings = try AnalyzeCommand.settings(args)
        let console = context.console
        let signals = SignalWatch()
        defer { signals.end() }
        let (inputs, missing) = Ingester.expand(args.positionals)
        let db = try context.openForWriting(context.databasePath(args))
        let ingester = try Ingester(db: db)
        ingester.stop = signals.stop
        let analyze = !args.has("no-analyze")
        let settingsChanged = try AnalyzeCommand.settingsChanged(db, settings)
        // Sessions are analyzed while later files load, unless new tuning means every
        // session is rebuilt after loading anyway.
        if analyze && !settingsChanged {
            try ingester.analyzeWhileLoading(settings: settings)
        }
        let progress = ProgressLine(console: console)
        ingester.analysis?.progress = { left in
            progress.update { "analyze: \(TextReport.group(left)) session\(left == 1 ? "" : "s") of the last files left" }
        }
        let summary: IngestSummary
        do {
            let started = Date()
            summary = try ingester.ingest(inputs, missing: missing) { p in
                progress.update { describe(p, seconds: Date().timeIntervalSince(started)) }
            }
        } catch let stopped as IngestInterrupted {
            return interrupted(stopped.summary, db, console, progress, signals.stop.signal)
        }
        var analysis: AnalysisSummary?
        if analyze {
            let analyzer = try Analyzer(db: db, settings: settings)
            do {
                var after = try analyzer.analyze(all: settingsChanged, stop: signals.stop) { p in
                    progress.update { AnalyzeCommand.describe(p) }
                }
                if let background = ingester.analysis { try after.add(background, from: db) }
                analysis = after
            } catch is Interrupted {
                return interrupted(summary, db, console, progress, signals.stop.signal)
            }
        }
        progress.clear()
        let database = context.databasePath(args)
        reportProblems(summary, console, database: database)
        let empty = emptyInputs(args.positionals, inputs).filter { path in !missing.contains { $0.path == path } }
        for path in empty { console.writeError("Error: \(shown(path)): no trace files in it (*.gz, *.jsonl, *.jsonl.gz)\n") }
        let invalid = filesWithoutEvents(summary)
        for file in invalid {
            console.writeError("Error: \(shown(file.path)): not a single valid trace line (\(TextReport.group(file.rejects)) of \(TextReport.group(file.lines)) lines rejected): is it a trace file?\n")
        }
        if !args.has("quiet") {
            console.write(format == .json ? json(summary, analysis) : text(summary, analysis, verbose: args.has("verbose")))
        }
        if !summary.missingFiles.isEmpty || !empty.isEmpty { return ExitStatus.noInput }
        if !summary.damagedFiles.isEmpty || !invalid.isEmpty { return ExitStatus.dataError }
        return ExitStatus.ok
    }

    /// The progress line of the whole run: files done of all, events, bytes, rate and the time
    /// left (from the bytes still to read at the rate so far), then the file being read.
    static func describe(_ p: IngestProgress, seconds: Double) -> String {
        let run = p.run
        var parts = ["ingest \(TextReport.group(run.filesDone))/\(TextReport.group(p.fileCount)) files",
                     "\(TextReport.group(run.events)) events"]
        let done = run.bytesRead + run.bytesSkipped
        parts.append(run.totalBytes.map { "\(megabytes(done)) of \(megabytes($0)) MB" } ?? "\(megabytes(done)) MB")
        if seconds > 0 { parts.append("\(TextReport.group(Int(Double(run.events) / seconds))) events/s") }
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
        reportProblems(summary, console, database: db.location.description)
        let loaded = loadedCount(summary)
        console.writeError("interrupted: \(TextReport.group(loaded)) file\(loaded == 1 ? "" : "s") loaded; run the same command again to finish\n")
        db.tidyAfterInterruption()
        return SignalWatch.exitStatus(signal)
    }

    /// Files read into the database in this run (whole or up to their damage).
    static func loadedCount(_ s: IngestSummary) -> Int {
        s.files.filter {
            switch $0.status { case .loaded, .damaged: return true; default: return false }
        }.count
    }

    /// The directories among `paths` in which no trace file was found: an ingest that loads
    /// nothing must not pass.
    static func emptyInputs(_ paths: [String], _ inputs: [InputLocation]) -> [String] {
        paths.filter { path in
            var isDirectory: ObjCBool = false
            guard path != "-", FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return false }
            let prefix = path.hasSuffix("/") ? path : path + "/"
            return !inputs.contains { $0 != .standardInput && $0.description.hasPrefix(prefix) }
        }
    }

    /// Files with rejected lines and not one valid event line (a text file, a JSON document):
    /// reported, and the ingest exits 65. An empty file (a recorder's fresh rotation) is not.
    static func filesWithoutEvents(_ summary: IngestSummary) -> [FileReport] {
        summary.files.filter { f in
            switch f.status {
            case .loaded, .damaged: return f.events == 0 && f.rejects > 0
            default: return false
            }
        }
    }

    /// Problems go to stderr, one line each, naming file, line and reason; the follow-up
    /// query names the database.
    static func reportProblems(_ summary: IngestSummary, _ console: Console, database: String) {
        for c in summary.recordConflicts {
            let records = c.count == 1 ? "1 session record disagrees" : "\(TextReport.group(c.count)) session records disagree"
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
            case .damaged(let why):
                console.writeError("Error: \(shown(file.path)): damaged: \(shown(why)); the \(TextReport.group(file.events)) events before it were kept\n")
            default: break
            }
            for example in file.rejectExamples {
                console.writeError("Warning: \(shown(file.path)):\(example.line): \(shown(example.reason))\n")
            }
            if file.rejects > file.rejectExamples.count {
                let query = FollowUp(database: database).command(HintQueries.rejectedLines(path: file.path))
                console.writeError("Warning: \(shown(file.path)): \(TextReport.group(file.rejects - file.rejectExamples.count)) more rejected lines (\(shown(query)))\n")
            }
            if file.conflicts > 0 {
                console.writeError("Warning: \(shown(file.path)): \(TextReport.group(file.conflicts)) conflicting duplicates of stored events (first copy kept; see rejects, kind 'conflict')\n")
            }
        }
    }

    /// Files skipped as already loaded that the summary names without `--verbose`.
    static let skippedShown = 3

    static func text(_ s: IngestSummary, _ a: AnalysisSummary?, verbose: Bool = false) -> String {
        let loaded = loadedCount(s)
        let skipped = s.files.filter {
            switch $0.status { case .alreadyLoaded, .sameContent: return true; default: return false }
        }.count
        var notes: [String] = []
        if skipped > 0 { notes.append("\(skipped) already loaded") }
        if !s.damagedFiles.isEmpty { notes.append("\(s.damagedFiles.count) damaged") }
        if !s.missingFiles.isEmpty { notes.append("\(s.missingFiles.count) missing or unreadable") }
        let rate = s.seconds > 0 ? Double(s.eventLines) / s.seconds : 0
        var out = "Loaded \(loaded) file\(loaded == 1 ? "" : "s")\(notes.isEmpty ? "" : " (" + notes.joined(separator: ", ") + ")") in \(Num.seconds(s.seconds)) (\(TextReport.group(Int(rate))) events/s)\n"
        out += "  events    \(TextReport.group(s.newEvents)) new, \(TextReport.group(s.duplicates)) duplicate, \(TextReport.group(s.conflicts)) conflicting\n"
        out += "  rejects   \(TextReport.group(s.rejects)) line\(s.rejects == 1 ? "" : "s")"
        let rejectFiles = s.files.filter { $0.rejects > 0 }.count
        out += rejectFiles > 0 ? " in \(rejectFiles) file\(rejectFiles == 1 ? "" : "s")\n" : "\n"
        if let a {
            let when = a.whileLoading > 0
                ? "(\(TextReport.group(a.whileLoading)) while loading, \(TextReport.group(a.sessions - a.whileLoading)) after in \(Num.seconds(a.seconds)))"
                : "in \(Num.seconds(a.seconds))"
            out += "  sessions  \(TextReport.group(a.sessions)) analyzed \(when): \(TextReport.group(a.findings)) findings (lctrace report)\n"
        } else {
            out += "  sessions  not analyzed (--no-analyze): run lctrace analyze\n"
        }
        // A re-run over a campaign skips every file: a count and the first few, not a line each.
        var skippedListed = 0
        for file in s.files {
            switch file.status {
            case .alreadyLoaded(let path), .sameContent(let path):
                skippedListed += 1
                if verbose || skippedListed <= skippedShown {
                    out += path == file.path ? "  skipped   \(shown(file.path)): already loaded\n"
                        : "  skipped   \(shown(file.path)): same content as \(shown(path)), already loaded\n"
                }
            case .damaged(let why):
                out += "  damaged   \(shown(file.path)): \(shown(why))\n"
            case .missing:
                out += "  missing   \(shown(file.path))\n"
            case .unreadable(let why):
                out += "  unreadable \(shown(file.path)): \(shown(why))\n"
            case .loaded:
                break
            }
            if file.replacedEarlierReads > 0 {
                out += "  replaced  \(shown(file.path)): \(file.replacedEarlierReads == 1 ? "an earlier read" : "\(file.replacedEarlierReads) earlier reads") of it while it was being written (the warnings of those reads are gone)\n"
            }
        }
        if !verbose && skipped > skippedShown {
            let more = skipped - skippedShown
            out += "  skipped   \(TextReport.group(more)) more file\(more == 1 ? "" : "s") already loaded (--verbose lists them)\n"
        }
        return out
    }

    static func json(_ s: IngestSummary, _ a: AnalysisSummary?) -> String {
        func status(_ st: FileReport.Status) -> (String, String?) {
            switch st {
            case .loaded: return ("loaded", nil)
            case .damaged(let w): return ("damaged", w)
            case .alreadyLoaded(let p): return ("already-loaded", p)
            case .sameContent(let p): return ("same-content", p)
            case .missing(let w): return ("missing", w)
            case .unreadable(let w): return ("unreadable", w)
            }
        }
        let files = s.files.map { f -> String in
            let (st, note) = status(f.status)
            return "{\"path\":\(jsonString(f.path)),\"status\":\"\(st)\",\"note\":\(note.map(jsonString) ?? "null"),\"lines\":\(f.lines),\"events\":\(f.events),\"new\":\(f.newEvents),\"duplicates\":\(f.duplicates),\"conflicts\":\(f.conflicts),\"rejects\":\(f.rejects)}"
        }
        var out = "{\"files\":[\(files.joined(separator: ","))],"
        out += "\"events\":{\"new\":\(s.newEvents),\"duplicate\":\(s.duplicates),\"conflicting\":\(s.conflicts)},"
        out += "\"record_conflicts\":\(s.recordConflicts.reduce(0) { $0 + $1.count }),"
        out += "\"rejects\":\(s.rejects),\"damaged_files\":\(s.damagedFiles.count),\"missing_files\":\(s.missingFiles.count),"
        out += "\"seconds\":\(String(format: "%.3f", s.seconds)),"
        out += "\"events_per_second\":\(s.seconds > 0 ? Int(Double(s.eventLines) / s.seconds) : 0),"
        if let a {
            out += "\"analysis\":{\"sessions\":\(a.sessions),\"while_loading\":\(a.whileLoading),\"findings\":\(a.findings),\"seconds\":\(String(format: "%.3f", a.seconds))}}\n"
        } else {
            out += "\"analysis\":null}\n"
        }
        return out
    }
}

/// A throttled progress line: drawn on a terminal at most ten times a second, never when piped.
package final class ProgressLine {
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

/// Number formatting for people.
package enum Num {
    static func seconds(_ s: Double) -> String {
        s < 10 ? String(format: "%.2f s", s) : String(format: "%.1f s", s)
    }
}
