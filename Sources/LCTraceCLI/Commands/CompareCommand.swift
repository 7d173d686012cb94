import LCTrace
import LCTraceReport
import LCTraceStore

/// `lctrace compare --base-build B1 --head-build B2`: what a candidate build changed against a
/// release: new, fixed and persisting identities (per 100 sessions on each side) and
/// statistically significant timing regressions; exit 1 on a new finding at or above
/// `--fail-on` or a regression.
enum CompareCommand: Command {
    static let spec = CommandSpec(
        name: "compare",
        summary: "Compare two builds: new, fixed and persisting findings, and timing regressions.",
        options: [
            DatabaseOption.spec(help: "Database of the head build, and of the base unless --base-db: a SQLite file, or a postgresql:// URL (default: $LCTRACE_DB, else ./lctrace.db)."),
            OptionSpec("base-db", value: "PATH", help: "Database of the base build, when it is another one."),
            OptionSpec("base-build", value: "BUILD", help: "The build compared against (e.g. the last release)."),
            OptionSpec("head-build", value: "BUILD", help: "The candidate build."),
            SessionOptions.app(help: "Only sessions of this app (on both sides)."),
            FormatOption.spec(OutputFormats.compare), OutputFile.option,
            FailOnOption.spec(help: "Exit 1 on a new finding at or above it, or a timing regression: error (default), warning, info, never."),
        ] + TuningOptions.options + [Selection.allowEmpty],
        discussion: """
        Findings are counted per identity and per 100 sessions of each build (builds differ in
        session count). A timing regression is a class whose viewIsAppearing → viewDidAppear is
        slower in the head by a Mann–Whitney U test at p < 0.01, with the median slower by at
        least 20 % and 20 ms and at least 10 appearances on each side; `--fail-on never` mutes
        both reasons to exit 1.
        Exit status: 0 ok, 1 a new finding at or above --fail-on or a regression, 64 usage,
        66 a build with no session, 74 database.
        """)

    package static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let reporter = try FormatOption.value(args, OutputFormats.compare)
        guard let baseBuild = args.value("base-build"), let headBuild = args.value("head-build") else {
            throw UsageError("compare needs --base-build and --head-build",
                             hint: "lctrace compare --base-build 812 --head-build 816")
        }
        let failOn = try FailOnOption.value(args)
        let headPath = DatabaseOption.location(args, context)
        let basePath = args.value("base-db") ?? headPath
        let base = try side(baseBuild, option: "base-build", path: basePath, args, context)
        let head = try side(headBuild, option: "head-build", path: headPath, args, context)
        let comparison = BuildComparison(base: base, head: head, failOn: failOn)
        let output = try OutputFile(path: args.value("output"), console: context.console)
        try output.write(reporter.render(comparison))
        try output.finish()
        let regressions = comparison.regressionCount
        var gate = GateLine.text(failing: comparison.failing, count: comparison.newFailingCount,
                                 what: "new defect", whats: "new defects", failOn: failOn)
        if failOn != nil, regressions > 0 {
            gate = String(gate.dropLast()) + ", \(regressions) timing regression\(regressions == 1 ? "" : "s")\n"
        }
        if !context.console.outputFailed { context.console.writeError(gate) }
        return comparison.failing ? ExitStatus.findings : ExitStatus.ok
    }

    /// One build's findings and appearances, after the empty-selection check.
    static func side(_ build: String, option: String, path: String, _ args: ParsedArguments, _ context: CommandContext) throws -> ComparisonSide {
        var request = ReportRequest()
        request.settings = try TuningOptions.settings(args)
        request.sessions = SessionFilter(app: SessionOptions.app(args), build: build)
        let db = try context.openForReading(path)
        let data = try ReportCollector.collect(request, db: db)
        if data.sessions.isEmpty && !Selection.allowsEmpty(args) {
            let what = try Selection.describeEmpty(request.sessions, db, buildOption: option)
            throw EmptySelection(message: "--\(option) \(build): \(what)")
        }
        return ComparisonSide(build: build, data: data)
    }
}
