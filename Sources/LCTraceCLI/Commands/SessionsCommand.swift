import Foundation
import LCTrace
import LCTraceReport
import LCTraceStore

/// `lctrace sessions`: one line per session.
enum SessionsCommand: Command {
    static let spec = CommandSpec(
        name: "sessions",
        summary: "List sessions: app, version, device, OS, SDK, start, duration, events, lost events.",
        options: [
            DatabaseOption.spec(),
            SessionOptions.app(),
            SessionOptions.build(),
            FormatOption.spec(OutputFormats.rows),
            .safeCSV,
        ] + TableOptions.options,
        discussion: """
        Exit status: 0 listed (an empty list when the database holds no session), 66 an --app or
        --build that no session has (the error names the nearest value), 74 database.
        """)

    static let columns = ["session", "app", "version", "build", "device", "os", "sdk", "start", "duration_s",
                          "events", "lost", "end"]

    package static func run(_ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let style = try FormatOption.value(args, OutputFormats.rows)
        let db = try context.openForReading(DatabaseOption.location(args, context))
        // A value no session has is a typo, not an empty list (exit 66 with the nearest value).
        let filter = SessionOptions.appAndBuild(args)
        if try [(DatabaseReader.SessionField.app, filter.app), (.build, filter.build)].contains(where: { field, value in
            try value.map { try !db.knows(field, $0) } ?? false
        }) {
            throw EmptySelection(message: try Selection.describeEmpty(filter, db))
        }
        let maxWidth = try TableOptions.maxWidth(args)
        let out = RowFormatter(style: style, columns: columns, neutralizesFormulas: args.neutralizesFormulas,
                               maxWidth: maxWidth, bytes: { context.console.write(bytes: $0) })
        // Streamed: one session at a time, each as it is now (a dirty one is counted from its events).
        try ReportCollector.forEachCurrentSession(filter, db: db) { s in
            func text(_ v: String?) -> SQLValue { v.map { .text($0) } ?? .null }
            let os = [s.os, s.osVersion].compactMap { $0 }.joined(separator: " ")
            try out.add([
                .text(style == .table && maxWidth != nil ? String(s.sid.prefix(13)) : s.sid), text(s.app), text(s.appVersion), text(s.build),
                text(s.device), os.isEmpty ? .null : .text(os), text(s.sdk), text(s.wall),
                s.durationNs.map { .double((Double($0) / 1e8).rounded() / 10) } ?? .null,
                .int(Int64(s.events)), .int(Int64(s.lostEvents)), text(s.endReason ?? "abrupt"),
            ])
        }
        try out.finish()
        context.console.write(TableOptions.note(out))
        return ExitStatus.ok
    }
}
