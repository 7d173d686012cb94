/// The follow-up commands a report prints (`lctrace query "…"`), written so that pasting one
/// answers the same question: the database and the filters in force go with it.
public struct FollowUp: Sendable {
    /// The database the report read.
    public var database: String?
    /// (findings_v column, value) of every filter in force: app, build, session, class.
    public var conditions: [(String, String)] = []
    /// The lowest severity shown (`--min-severity`), when above info.
    public var minSeverity: Severity?
    /// The options a pasted `lctrace timeline` needs to mark the same findings: the families,
    /// `--class`, `--min-severity` and tuning in force, as shell words.
    public var timelineOptions: [String] = []

    public init(database: String? = nil, conditions: [(String, String)] = [], minSeverity: Severity? = nil) {
        self.database = database; self.conditions = conditions; self.minSeverity = minSeverity
    }

    /// `lctrace query --db DB "SELECT * FROM findings_v WHERE rule = 'LC301' AND build = '812'"`.
    public func findingsQuery(rule: String) -> String {
        command(HintQueries.findings(rule: rule, conditions: conditions, minSeverity: minSeverity))
    }

    /// `lctrace query --db DB "SELECT session, vc, since, t, message FROM findings_v WHERE identity IN (…)"`.
    public func findingsQuery(identities: [String]) -> String {
        command(HintQueries.findings(identities: identities, conditions: conditions, minSeverity: minSeverity))
    }

    /// `lctrace timeline --db DB --session SID --vc VC#SINCE --around SEQ …`: the timeline the
    /// HTML report draws of an example (10 s around its decisive event), with the options in force.
    public func timelineCommand(sid: String, vc: String?, since: Int64?, around: Int64?) -> String {
        var parts = ["lctrace", "timeline"]
        if let database { parts += ["--db", Self.shellWord(database)] }
        parts += ["--session", Self.shellWord(sid)]
        if let vc { parts += ["--vc", Self.shellWord(since.map { "\(vc)#\($0)" } ?? vc)] }
        if let around { parts += ["--around", String(around)] }
        return (parts + timelineOptions).joined(separator: " ")
    }

    /// `lctrace query --db DB SQL`, quoted for a POSIX shell.
    public func command(_ sql: String) -> String {
        var parts = ["lctrace", "query"]
        if let database { parts += ["--db", Self.shellWord(database)] }
        return (parts + [Self.shellWord(sql, preferDouble: true)]).joined(separator: " ")
    }

    /// `text` as one shell word: as is when it is plain, in double quotes when nothing in it
    /// is special there, else in single quotes.
    public static func shellWord(_ text: String, preferDouble: Bool = false) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) || "-_./:=@%+,".unicodeScalars.contains($0)
        }
        if plain { return text }
        if preferDouble && !text.contains(where: { "\"$`\\!".contains($0) }) { return "\"" + text + "\"" }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

import Foundation

extension FollowUp {
    /// `lctrace query …` of sessions, findings and findings per 100 sessions of every build;
    /// `rules`: those reported, when not every family is.
    public func findingsPerBuildQuery(rules: [String]?) -> String {
        command(HintQueries.findingsPerBuild(conditions: conditions, minSeverity: minSeverity, rules: rules))
    }
}
