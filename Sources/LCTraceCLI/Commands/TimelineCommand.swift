import LCTrace
import LCTraceReport
import LCTraceStore

/// `lctrace timeline`: what happened in one session, lane by lane, around a seq, an instance
/// or its worst finding; text for a terminal, or SVG.
enum TimelineCommand: Command {
    static let spec = CommandSpec(
        name: "timeline",
        summary: "Draw one session: a lane per controller, appearances, containment, presentations, findings.",
        options: [
            DatabaseOption.spec(),
            SessionOptions.session(help: "The session (required; a unique prefix is enough)."),
            OptionSpec("vc", value: "ID[#SINCE]", help: "Centre on this controller and draw what relates to it."),
            OptionSpec("around", value: "SEQ", help: "Centre on this event."),
            OptionSpec("window", value: "DURATION", help: "Width of the window, 1ns to 8784h with a unit, e.g. 10s (default: see below)."),
            OptionSpec("lanes", value: "N", help: "Lanes drawn at most, 0 to 100000 (default 40; 0: no limit)."),
            OptionSpec("idle", help: "Also draw controllers alive but hidden throughout the window."),
            OptionSpec("width", value: "COLUMNS", help: "Text width, 20 to 10000 (default: the terminal's, else 100)."),
        ]
            + FindingOptions.options
            + [FormatOption.spec(OutputFormats.timeline), OutputFile.option,
               ColorOption.option],
        discussion: """
        The window: --window wide around --around SEQ, the --vc controller's worst finding (or
        the middle of its life) or the session's worst finding; without --window, 10 s around a
        seq or a finding, a controller's whole life, and a session of up to 2 minutes whole.
        Family flags, --class and --min-severity choose the findings marked (--class also keeps
        only that class's lanes and their containers).
        """)

    package static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let format = try FormatOption.value(args, OutputFormats.timeline)
        guard let sid = SessionOptions.sessionPrefix(args) else {
            throw UsageError("missing --session SID for 'lctrace timeline'",
                             hint: "list the sessions with: lctrace sessions --db \(Selection.shell(DatabaseOption.shown(args, context)))")
        }
        var request = TimelineRequest()
        request.findings = try FindingOptions.request(args)
        request.vc = args.value("vc")
        request.around = try args.value("around").map { Int64(try OptionValues.count($0, option: "--around", range: 0...Int.max)) }
        if let text = args.value("window") {
            request.width = try OptionValues.duration(text, option: "--window", range: windowRange)
        }
        if let lanes = try args.value("lanes").map({ try OptionValues.count($0, option: "--lanes", range: 0...100_000) }) {
            request.maxLanes = lanes == 0 ? nil : lanes
        }
        request.showIdle = args.has("idle")
        let width = try args.value("width").map { try OptionValues.count($0, option: "--width", range: widthRange) }
        _ = try ColorOption.enabled(args, context, terminal: false)  // a bad value is refused before any work

        let db = try context.openForReading(DatabaseOption.location(args, context))
        let session = try SessionChoice.one(sid, db: db)
        try Selection.requireKnownClass(request.findings.className, db)
        let timeline: Timeline
        let progress = ProgressLine(console: context.console)
        do {
            timeline = try TimelineReport.make(db: db, session: session, request) { events in
                progress.update { "rebuild the model of \(session.sid.prefix(8)): \(NumberFormat.thousands(events)) events" }
            }
        } catch let e as TimelineError {
            progress.clear()
            throw try failure(e, db, database: db.shownLocation)
        }
        progress.clear()
        let output = try OutputFile(path: args.value("output"), console: context.console)
        switch format {
        case .svg:
            try output.write(SVGTimeline(timeline).render())
        default:
            let columns = width ?? (output.isTerminal ? context.console.outputWidth : nil) ?? 100
            let color = try ColorOption.enabled(args, context, terminal: output.isTerminal)
            try output.write(TextTimeline(timeline, width: columns, color: color, cutsLongLines: output.isTerminal).render())
        }
        try output.finish()
        return ExitStatus.ok
    }

    /// The accepted `--window`: a nanosecond to a year (sessions can run for days); `--width`:
    /// columns a terminal has.
    static let windowRange: ClosedRange<Int64> = 1...(366 * 86_400_000_000_000)
    static let widthRange = 20...10_000

    /// What the command says when the timeline cannot be drawn: a `--vc` that names no controller
    /// of the session is a filter naming nothing (exit 66, with the nearest controller).
    static func failure(_ e: TimelineError, _ db: Storage, database: String) throws -> Error {
        let followUp = FollowUp(database: database)
        switch e {
        case .noSuchEvent(let seq, let sid):
            return UsageError("session \(sid) has no event with seq \(seq)",
                              hint: "its seqs: " + followUp.command(HintQueries.events(sid: sid)))
        case .noSuchInstance(let vc, let sid):
            let near = Selection.nearest(vc, in: try db.controllers(sid: sid, limit: Selection.candidatesRead))
            return EmptySelection(message: "session \(sid) has no controller '\(vc)'" + (near.map { " (did you mean '\($0)'?)" } ?? ""),
                                  hint: "its controllers: " + followUp.command(HintQueries.instances(sid: sid)))
        case .emptySession(let sid):
            return UsageError("session \(sid) has no events to draw")
        }
    }
}
