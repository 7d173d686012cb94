import LCTrace
import LCTraceStore

/// Turns what a user typed after `--session` into sessions: an exact id, or a prefix of one
/// (case-insensitive) that names a single session. An ambiguous prefix is refused with the
/// candidates, never guessed; one that names nothing, or an `--app` or `--build` that does, is
/// an empty selection (exit 66) naming the nearest known value.
enum SessionChoice {
    /// The one session `text` names.
    static func one(_ text: String, db: Storage) throws -> SessionInfo {
        let matches = try candidates(text, db: db)
        if matches.count == 1 { return matches[0] }
        if let exact = matches.first(where: { $0.sid.lowercased() == text.lowercased() }) { return exact }
        if matches.isEmpty {
            throw try Selection.noSession(text, db, hint: "list them with: lctrace sessions --db \(Selection.shell(db.shownLocation))")
        }
        let listed = matches.prefix(8).map { s in
            "\(s.sid) (\([s.app, s.appVersion, s.build.map { "(\($0))" }, s.wall].compactMap { $0 }.joined(separator: " ")))"
        }
        let more = matches.count > 8 ? "; \(matches.count - 8) more" : ""
        throw UsageError("session '\(text)' is ambiguous: \(matches.count) sessions match",
                         hint: "give more of the id: \(listed.joined(separator: ", "))\(more)")
    }

    /// Every session named by `texts` (each a unique prefix), plus every session of `app`
    /// and `build` when given, in listing order, each once.
    static func many(_ texts: [String], app: String?, build: String?, db: Storage) throws -> [SessionInfo] {
        var chosen = try texts.map { try one($0, db: db) }
        if app != nil || build != nil {
            // Selecting nothing is a typo (or a wrong pair) even beside --session: never dropped silently.
            let filter = SessionFilter(app: app, build: build)
            let selected = try db.sessions(filter)
            if selected.isEmpty {
                throw EmptySelection(message: try Selection.describeEmpty(filter, db),
                                     hint: "list them with: lctrace sessions --db \(Selection.shell(db.shownLocation))")
            }
            chosen += selected
        }
        var seen = Set<String>()
        return chosen.filter { seen.insert($0.sid).inserted }
    }

    /// Sessions whose id begins with `text`, ignoring case (at most `limit`), in id order.
    static func candidates(_ text: String, db: Storage, limit: Int = 1000) throws -> [SessionInfo] {
        try db.sessionIDs(matching: text, limit: limit).flatMap { try db.sessions(SessionFilter(session: $0)) }
    }
}
