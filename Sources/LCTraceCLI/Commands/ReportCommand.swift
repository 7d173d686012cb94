import Foundation
import LCTrace
import LCTraceModel
import LCTraceReport
import LCTraceRules
import LCTraceStore

/// `lctrace report`: findings for people (text) and machines (json, csv, sarif, junit), with
/// an exit status CI can gate on; under `--baseline` only new findings fail the gate.
enum ReportCommand: Command {
    static let spec = CommandSpec(
        name: "report",
        summary: "Print findings: grouped for people, or as JSON/CSV/SARIF/JUnit; exit 1 on findings at --fail-on.",
        options: DatabaseOption.options
            + FamilyOptions.options
            + SessionOptions.options + FindingFilterOptions.options
            + TuningOptions.options
            + [
                FormatOption.spec(OutputFormats.report),
                .safeCSV,
                FailOnOption.spec(),
                OptionSpec("baseline", value: "FILE", help: "Mark findings new or known against a baseline file; --fail-on counts new ones only."),
                SourceRootOption.option,
                OptionSpec("examples", value: "N", help: "Examples per rule in text, per group in html, 0 to 1000000 (default 5)."),
                Selection.allowEmpty,
                OutputFile.option,
                ColorOption.option,
            ],
        discussion: """
        Findings are stored by `ingest`/`analyze`; with other tuning (--grace, --gap-threshold,
        --max-live) they are recomputed for this report without changing the database.
        Exit status: 0 no finding at or above --fail-on (no new one under --baseline), 1 there
        is one, 64 usage or a bad baseline file, 66 no session selected, 74 database.
        """)

    package static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let reporter = try FormatOption.value(args, OutputFormats.report)
        var options = ReportOptions()
        options.families = FamilyOptions.families(args)
        options.failOn = try FailOnOption.value(args)
        if let text = args.value("examples") {
            options.examples = try OptionValues.count(text, option: "--examples", range: 0...1_000_000)
        }
        options.neutralizesFormulas = args.neutralizesFormulas
        if let file = args.value("baseline") { options.baseline = try Baseline.read(file) }
        let placesFindings = reporter.inputs.contains(.sourcePlacements)
        options.sourceRoot = try SourceRootOption.value(args, context, wanted: placesFindings)
        options.sourceBase = options.sourceRoot.map { SourceRootOption.gitWorkTree(around: $0) ?? $0 }
        let output = try OutputFile(path: args.value("output"), console: context.console)
        options.color = try ColorOption.enabled(args, context, terminal: output.isTerminal)
        let path = DatabaseOption.location(args, context)
        // The findings stream from the database into the tally (and straight to the document
        // for json and csv): only what a report shows is held, whatever their number (issue 25).
        let escapes = reporter.inputs.contains(.terminalText)
        var escapedAny = false
        let shownOptions = escapes ? options.escapedForTerminal(noting: &escapedAny) : options
        let writer = (reporter as? any StreamingReporter.Type)?.writer(options) { try output.write(bytes: $0) }
        var tally: ReportTally?
        // The HTML report draws its examples while the gap statistics are read beside (on a
        // server backend), and settles them before rendering.
        let drawsExamples = reporter.inputs.contains(.exhibits)
        var (data, filter, db) = try collect(args, context, path: path, families: options.families,
                                             gapsBySession: reporter.inputs.contains(.gapsBySession),
                                             gapsSettledLater: drawsExamples && !escapes, begin: { sessions in
            tally = ReportTally(sessions: escapes ? sessions.escapedForTerminal(noting: &escapedAny) : sessions,
                                options: shownOptions)
        }, each: { f, session in
            let f = escapes ? f.escapedForTerminal(noting: &escapedAny) : f
            try writer?.add(f, state: tally!.state(f))
            tally!.add(f, session: session)
        })
        if escapes { data = data.escapingForTerminal().data }
        tally!.finish()
        options.followUp = Selection.followUp(filter, className: data.className, minSeverity: data.minSeverity, db: db)
        options.followUp.timelineOptions = FindingOptions.shellWords(args)
        // Whatever ends the report early, the gap statistics' read beside it ends first.
        defer { data.awaitGapsRead() }
        var view = ReportView(data: data, options: escapes ? options.escapedForTerminal(noting: &escapedAny) : options, tally: tally!)
        view.isEscapedForTerminal = escapes
        if drawsExamples {
            let progress = ProgressLine(console: context.console)
            view.exhibits = try ReportExhibits.gather(view, db: db) { done, total in
                progress.update { "draw examples: \(NumberFormat.thousands(done))/\(NumberFormat.thousands(total))" }
            }
            progress.clear()
        }
        if placesFindings { view.placements = try SourcePlacements.gather(view, db: db) }
        try view.settleGaps()
        if let writer {
            try writer.finish(view)
        } else {
            var rendered = reporter.render(view)
            // On a terminal the grouped text fits its width; a pipe or a file gets lines whole.
            if reporter.fitsTerminalWidth, output.isTerminal, let width = context.console.outputWidth {
                rendered = TerminalText.wrapped(rendered, width: width)
            }
            try output.write(rendered)
        }
        try output.finish()
        if placesFindings, let notice = SourceRootOption.notice(view.placements, view, root: options.sourceRoot,
                                                                given: args.value("source-root") != nil) {
            context.console.writeError(notice)
        }
        if !context.console.outputFailed {
            let new = options.baseline == nil ? "" : "new "
            context.console.writeError(GateLine.text(failing: view.failing, count: view.failingCount,
                                                     what: "\(new)defect", whats: "\(new)defects",
                                                     findings: view.failingOccurrences, failOn: options.failOn))
        }
        return view.failing ? ExitStatus.findings : ExitStatus.ok
    }

    /// The findings `report` and `baseline` select, after the empty-selection check, and the
    /// database they came from.
    static func collect(_ args: ParsedArguments, _ context: CommandContext, path: String, families: Set<RuleFamily>,
                        gapStatistics: Bool = true, gapsBySession: Bool = false) throws -> (ReportData, SessionFilter, Storage) {
        var findings: [Finding] = []
        var (data, filter, db) = try collect(args, context, path: path, families: families, gapStatistics: gapStatistics,
                                             gapsBySession: gapsBySession) { f, _ in findings.append(f) }
        data.findings = findings
        return (data, filter, db)
    }

    /// The same, the findings handed to `each` one at a time in report order with their
    /// session's index (`ReportCollector.collect(_:db:begin:each:)`); `begin` hears the
    /// sessions once they passed the empty-selection check.
    static func collect(_ args: ParsedArguments, _ context: CommandContext, path: String, families: Set<RuleFamily>,
                        gapStatistics: Bool = true, gapsBySession: Bool = false, gapsSettledLater: Bool = false,
                        begin: (ReportSessions) throws -> Void = { _ in },
                        each: (Finding, Int?) throws -> Void) throws -> (ReportData, SessionFilter, Storage) {
        var request = try FindingOptions.request(args)
        request.families = families
        request.gapStatistics = gapStatistics
        request.gapsBySession = gapsBySession
        request.gapsSettledLater = gapsSettledLater
        let db = try context.openForReading(path)
        request.sessions = try Selection.filter(args, db)
        let data = try ReportCollector.collect(request, db: db, begin: { sessions in
            try Selection.requireSessions(sessions.count, request.sessions, db, args)
            try Selection.requireKnownClass(request.className, db)
            try begin(sessions)
        }, each: each)
        return (data, request.sessions, db)
    }
}
