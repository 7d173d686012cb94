import Foundation
import LCTrace
import LCTraceReport

/// `lctrace baseline -o FILE`: the identities of the current findings as a file to commit and
/// review; `report --baseline FILE` then fails only on findings that are not in it.
enum BaselineCommand: Command {
    static let spec = CommandSpec(
        name: "baseline",
        summary: "Write the current findings' identities as a baseline file for report --baseline.",
        options: [
            DatabaseOption.spec(),
            OptionSpec("output", short: "o", value: "FILE", help: "The baseline file to write ('-' for standard output)."),
        ] + FamilyOptions.options + SessionOptions.options + FindingFilterOptions.options + TuningOptions.options
            + [Selection.allowEmpty],
        discussion: """
        One entry per identity, sorted by identity_key, with rule, severity, class, occurrences,
        sessions, first and last build and a `note` for people; no timestamps, so the same
        database and filters give a byte-identical file. Rewriting an existing baseline keeps
        the notes of the identities still present.
        Exit status: 0 written, 64 usage or an existing FILE that is not a baseline, 66 no
        session selected, 74 database or file failure.
        """)

    package static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        guard let output = args.value("output") else {
            throw UsageError("missing -o FILE for 'lctrace baseline'",
                             hint: "lctrace baseline --db \(Shell.word(DatabaseOption.shown(args, context))) -o lctrace-baseline.json")
        }
        // An existing file must be a baseline: its notes are kept, and nothing else is overwritten.
        let previous = output != "-" && OutputFile.renameTarget(output) != nil && FileManager.default.fileExists(atPath: output) ? try Baseline.read(output) : nil
        let path = DatabaseOption.location(args, context)
        let (data, _, _) = try ReportCommand.collect(args, context, path: path, families: FamilyOptions.families(args), gapStatistics: false)
        var options = ReportOptions()
        options.families = FamilyOptions.families(args)
        let view = ReportView(data: data, options: options)
        let entries = Baseline.entries(of: view, keepingNotesOf: previous)
        // Written beside its name and renamed into place, as every -o of lctrace.
        let file = try OutputFile(path: output, console: context.console, announces: false)
        try file.write(Baseline.render(entries))
        try file.finish()
        if output != "-" {
            context.console.writeError("Wrote \(output): \(NumberFormat.thousands(entries.count)) identit\(entries.count == 1 ? "y" : "ies") of \(NumberFormat.thousands(view.findings.count)) finding\(view.findings.count == 1 ? "" : "s") in \(NumberFormat.thousands(data.sessions.count)) session\(data.sessions.count == 1 ? "" : "s")\n")
        }
        return ExitStatus.ok
    }
}
