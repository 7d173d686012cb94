import LCTrace
import LCTraceModel
import LCTraceReport
import LCTraceStore

/// A selection that holds no session, or a filter that names nothing in the database (exit 66):
/// a gate never passes because it saw nothing.
struct EmptySelection: Error {
    var message: String
    var hint: String? = nil
}

/// The sessions a report, baseline or comparison covers: `--session` (a prefix, any case),
/// `--app`, `--build`; and the rule that an empty selection fails unless `--allow-empty`.
enum Selection {
    static let allowEmpty = OptionSpec("allow-empty", help: "Exit 0 when no session is selected (default: exit 66).")
    static func allowsEmpty(_ args: ParsedArguments) -> Bool { args.has("allow-empty") }

    /// Candidates listed when a `--session` prefix is ambiguous.
    static let candidatesShown = 10

    /// The filter of `args`, its `--session` prefix resolved to one whole id.
    static func filter(_ args: ParsedArguments, _ db: Storage) throws -> SessionFilter {
        var filter = SessionOptions.appAndBuild(args)
        if let prefix = SessionOptions.sessionPrefix(args) {
            filter.session = try resolve(prefix, db)
        }
        return filter
    }

    /// One whole session id for `prefix`: an id equal to it (ignoring case), else the only one
    /// starting with it. Several: a usage error listing them; none: an empty selection.
    static func resolve(_ prefix: String, _ db: Storage) throws -> String {
        let path = db.shownLocation
        let candidates = try SessionChoice.candidates(prefix, db: db, limit: candidatesShown + 1).map(\.sid)
        if let exact = candidates.first(where: { $0.lowercased() == prefix.lowercased() }) { return exact }
        if candidates.count == 1 { return candidates[0] }
        if candidates.isEmpty { throw try noSession(prefix, db) }
        let shown = candidates.prefix(candidatesShown).joined(separator: ", ")
        let more = candidates.count > candidatesShown ? ", …" : ""
        throw UsageError("--session '\(prefix)' matches \(candidates.count > candidatesShown ? "more than \(candidatesShown)" : String(candidates.count)) sessions: \(shown)\(more)",
                         hint: "give more of the session id (lctrace sessions --db \(shell(path)) lists them)")
    }

    /// Throws `EmptySelection` when `sessions` is 0 and `--allow-empty` is not given.
    static func requireSessions(_ sessions: Int, _ filter: SessionFilter, _ db: Storage, _ args: ParsedArguments) throws {
        guard sessions == 0, !allowsEmpty(args) else { return }
        throw EmptySelection(message: try describeEmpty(filter, db))
    }

    /// Throws `EmptySelection` when `--class` names a class no session of the database holds:
    /// a typo must not pass a gate as "No findings." (a known class without findings does).
    static func requireKnownClass(_ name: String?, _ db: Storage) throws {
        guard let name, try !db.knowsClass(name) else { return }
        let near = nearest(name, in: try db.classNames(limit: candidatesRead))
        throw EmptySelection(message: "no class '\(name)' in any session of \(db.shownLocation)" + (near.map { " (did you mean '\($0)'?)" } ?? ""))
    }

    /// The error for a `--session` prefix that no session id starts with, naming the id whose
    /// start is nearest to it.
    static func noSession(_ prefix: String, _ db: Storage, hint: String? = nil) throws -> EmptySelection {
        let ids = try db.sessionIDs(matching: "", limit: candidatesRead)
        let starts = ids.map { String($0.lowercased().prefix(prefix.count)) }
        let near = nearest(prefix.lowercased(), in: starts).flatMap { start in ids.first { $0.lowercased().hasPrefix(start) } }
        return EmptySelection(message: "no session matches --session '\(prefix)' in \(db.shownLocation)" + (near.map { " (did you mean '\($0)'?)" } ?? ""),
                              hint: hint)
    }

    /// Values read from the database to find the one nearest to a typo.
    static let candidatesRead = 10_000

    /// The candidate nearest to `value` by edit distance when near enough to be a typo of it
    /// (at most a third of its characters, and never all of them: "2" is no typo of "1"), else
    /// the first that starts with it (4 characters or more); the first in order on a tie.
    static func nearest(_ value: String, in candidates: [String]) -> String? {
        let limit = max(1, value.count / 3)
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let d = ArgumentParser.editDistance(value, candidate)
            if d <= limit, d < value.count, d < (best?.distance ?? .max) { best = (candidate, d) }
        }
        return best?.candidate ?? (value.count >= 4 ? candidates.first { $0.hasPrefix(value) } : nil)
    }

    /// One line saying what matched nothing, with the nearest known value of each `--app` or
    /// `--build` that names nothing in the database (`buildOption`: how the command calls its build).
    static func describeEmpty(_ filter: SessionFilter, _ db: Storage, buildOption: String = "build") throws -> String {
        let path = db.shownLocation
        let total = try db.sessionCount()
        if total == 0 { return "no session in \(path): the database is empty (load traces with lctrace ingest)" }
        var parts: [String] = [], near: [String] = []
        for (option, field, value) in [("app", DatabaseReader.SessionField.app, filter.app), (buildOption, .build, filter.build)] {
            guard let value, try !db.knows(field, value) else { continue }
            if let n = nearest(value, in: try db.values(of: field, limit: candidatesRead)) { near.append("--\(option) '\(n)'") }
        }
        if let s = filter.session { parts.append("--session \(s)") }
        if let a = filter.app { parts.append("--app \(a)") }
        if let b = filter.build { parts.append("--build \(b)") }
        let guess = near.isEmpty ? "" : "; did you mean \(near.joined(separator: " and "))?"
        return "no session matches \(parts.joined(separator: " ")) (of \(total) session\(total == 1 ? "" : "s") in \(path)\(guess))"
    }

    /// The follow-up hints' database (as shown: never a password) and filters.
    static func followUp(_ filter: SessionFilter, className: String?, minSeverity: Severity, db: Storage) -> FollowUp {
        var conditions: [(String, String)] = []
        if let s = filter.session { conditions.append(("session", s)) }
        if let a = filter.app { conditions.append(("app", a)) }
        if let b = filter.build { conditions.append(("build", b)) }
        if let c = className { conditions.append(("class", c)) }
        return FollowUp(database: db.shownLocation, conditions: conditions, minSeverity: minSeverity)
    }

    /// `text` as one shell word.
    static func shell(_ text: String) -> String { Shell.word(text) }
}
