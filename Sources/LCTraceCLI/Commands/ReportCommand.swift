import Foundation
import LCTrace
import LCTraceModel
import LCTraceReport
import LCTraceRules
import LCTraceStore

/// `lctrace report`: findings for people (text) and machines (json, csv, sarif, junit), with
/// an exit status CI can gate on; under `--baseline` only new findings fail the gate.
package enum ReportCommand: Command {
    static let familyFlags: [(String, RuleFamily, String)] = [
        ("leaks", .leaks, "Leaks: released controllers never deallocated (LC301–LC303)."),
        ("orphans", .orphans, "Orphaned children and containment protocol (LC101–LC105)."),
        ("unbalanced", .unbalanced, "Appear with no matching disappear (LC201–LC205)."),
        ("gaps", .gaps, "Slow viewIsAppearing → viewDidAppear, with per-class statistics (LC401–LC402)."),
        ("scene", .scene, "App and scene life cycle (LC501–LC502)."),
        ("quality", .quality, "Trace quality: lost events, unknown ids, clock, rejected lines (LC901–LC904)."),
    ]

    /// The options that choose findings, shared by the commands that show them (baseline, timeline, export).
    static let findingOptions: [OptionSpec] = familyFlags.map { OptionSpec($0.0, help: $0.2) }
        + [OptionSpec("all", help: "Every family (the default when none is named).")]
    static let classOptions: [OptionSpec] = [
        OptionSpec("class", value: "CLASS", help: "Only findings about this class."),
        OptionSpec("min-severity", value: "LEVEL", help: "info (default), warning or error.", choices: ["info", "warning", "error"]),
    ]
    /// The session and finding filters `report` and `baseline` share.
    static let filterOptions: [OptionSpec] = Selection.sessionOptions + classOptions

    static let failOnOption = OptionSpec("fail-on", value: "LEVEL",
                                         help: "Exit 1 when a finding at or above it exists: error (default), warning, info, never.",
                                         choices: ["error", "warning", "info", "never"])

    package static let spec = CommandSpec(
        name: "report",
        summary: "Print findings: grouped for people, or as JSON/CSV/SARIF/JUnit; exit 1 on findings at --fail-on.",
        options: [OptionSpec("db", value: "PATH", help: "Database (default: $LCTRACE_DB, else ./lctrace.db).")]
            + findingOptions
            + filterOptions
            + AnalyzeCommand.tuningOptions
            + [
                OptionSpec("format", short: "f", value: "FORMAT", help: "\(Reporters.help).", choices: Reporters.ids),
                .safeCSV,
                failOnOption,
                OptionSpec("baseline", value: "FILE", help: "Mark findings new or known against a baseline file; --fail-on counts new ones only."),
                OptionSpec("source-root", value: "DIR", help: "SARIF: point each result at the file declaring its class under DIR."),
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
        let reporter = try format(args)
        var options = ReportOptions()
        options.families = families(args)
        options.failOn = try failOn(args)
        if let text = args.value("examples") {
            options.examples = try OptionValues.count(text, option: "--examples", range: 0...1_000_000)
        }
        options.neutralizesFormulas = args.has("safe-csv")
        if let file = args.value("baseline") { options.baseline = try Baseline.read(file) }
        if let root = args.value("source-root") {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw UsageError("--source-root '\(root)' is not a directory")
            }
            options.sourceRoot = root
        }
        let output = try OutputFile(path: args.value("output"), console: context.console)
        options.color = try ColorOption.enabled(args, context, terminal: output.isTerminal)
        let path = context.databasePath(args)
        let (data, filter, db) = try collect(args, context, path: path, families: options.families,
                                             gapsBySession: reporter.inputs.contains(.gapsBySession))
        options.followUp = Selection.followUp(filter, className: data.className, minSeverity: data.minSeverity, path: path)
        options.followUp.timelineOptions = timelineOptions(args)
        var view = ReportView(data: data, options: options)
        if reporter.inputs.contains(.exhibits) {
            let progress = ProgressLine(console: context.console)
            view.exhibits = try ReportExhibits.gather(view, db: db) { done, total in
                progress.update { "draw examples: \(NumberFormat.thousands(done))/\(NumberFormat.thousands(total))" }
            }
            progress.clear()
        }
        try output.write(reporter.render(view))
        try output.finish()
        return view.failing ? ExitStatus.findings : ExitStatus.ok
    }

    /// The findings `report` and `baseline` select, after the empty-selection check, and the
    /// database they came from.
    static func collect(_ args: ParsedArguments, _ context: CommandContext, path: String, families: Set<RuleFamily>,
                        gapStatistics: Bool = true, gapsBySession: Bool = false) throws -> (ReportData, SessionFilter, Storage) {
        var request = try findingsRequest(args)
        request.families = families
        request.gapStatistics = gapStatistics
        request.gapsBySession = gapsBySession
        let db = try context.openForReading(path)
        request.sessions = try Selection.filter(args, db, path: path)
        let data = try ReportCollector.collect(request, db: db)
        try Selection.requireSessions(data.sessions.count, request.sessions, db, args, path: path)
        return (data, request.sessions, db)
    }

    /// The options of `args` that a pasted `lctrace timeline` needs to mark the same findings:
    /// the families named, `--class`, `--min-severity` and the tuning, as shell words.
    static func timelineOptions(_ args: ParsedArguments) -> [String] {
        var out: [String] = []
        if !args.has("all") { out += familyFlags.filter { args.has($0.0) }.map { "--\($0.0)" } }
        for option in classOptions + AnalyzeCommand.tuningOptions {
            for value in args.all(option.name) { out += ["--\(option.name)", Selection.shell(value)] }
        }
        return out
    }

    static func format(_ args: ParsedArguments) throws -> any Reporter.Type {
        guard let value = args.value("format") else { return TextReporter.self }
        if let reporter = Reporters.named(value) { return reporter }
        throw UsageError("unknown format '\(value)' (expected \(Reporters.ids.joined(separator: ", ")))",
                         hint: ArgumentParser.closest(value, in: Reporters.ids).map { "did you mean '\($0)'?" })
    }

    /// Families, class, severity and tuning from the options (`findingOptions`, `classOptions`,
    /// the tuning options); the sessions are the caller's.
    static func findingsRequest(_ args: ParsedArguments) throws -> ReportRequest {
        var request = ReportRequest()
        request.settings = try AnalyzeCommand.settings(args)
        request.families = families(args)
        request.className = args.value("class")
        request.minSeverity = try severity(args.value("min-severity"), option: "min-severity") ?? .info
        return request
    }

    static func families(_ args: ParsedArguments) -> Set<RuleFamily> {
        let named = Set(familyFlags.filter { args.has($0.0) }.map { $0.1 })
        return named.isEmpty || args.has("all") ? Set(RuleFamily.allCases) : named
    }

    /// `--fail-on`: a severity, or nil for never (default error).
    static func failOn(_ args: ParsedArguments) throws -> Severity? {
        if args.value("fail-on") == "never" { return nil }
        return try severity(args.value("fail-on"), option: "fail-on", extra: ["never"]) ?? .error
    }

    static func severity(_ text: String?, option: String, extra: [String] = []) throws -> Severity? {
        guard let text else { return nil }
        if let s = Severity(rawValue: text) { return s }
        let names = Severity.allCases.map(\.rawValue) + extra
        throw UsageError("invalid --\(option) '\(text)' (expected \(names.joined(separator: ", ")))",
                         hint: ArgumentParser.closest(text, in: names).map { "did you mean '\($0)'?" })
    }
}
