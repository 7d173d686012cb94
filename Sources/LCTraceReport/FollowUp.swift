import LCTraceModel
import LCTraceStore

/// The follow-up commands a report prints (`lctrace query "…"`), written so that pasting one
/// answers the same question: the database and the filters in force go with it.
package struct FollowUp: Sendable {
    /// The database the report read.
    package var database: String?
    /// (findings_v column, value) of every filter in force: app, build, session, class.
    package var conditions: [(String, String)] = []
    /// The lowest severity shown (`--min-severity`), when above info.
    package var minSeverity: Severity?
    /// The options a pasted `lctrace timeline` needs to mark the same findings: the families,
    /// `--class`, `--min-severity` and tuning in force, as shell words.
    package var timelineOptions: [String] = []

    package init(database: String? = nil, conditions: [(String, String)] = [], minSeverity: Severity? = nil) {
        self.database = database; self.conditions = conditions; self.minSeverity = minSeverity
    }

    /// `lctrace query --db DB "SELECT * FROM findings_v WHERE rule = 'LC301' AND build = '812'"`.
    func findingsQuery(rule: String) -> String {
        command(HintQueries.findings(rule: rule, conditions: conditions, minSeverity: minSeverity))
    }

    /// `lctrace query --db DB "SELECT session, vc, since, t, message FROM findings_v WHERE identity IN (…)"`.
    func findingsQuery(identities: [String]) -> String {
        command(HintQueries.findings(identities: identities, conditions: conditions, minSeverity: minSeverity))
    }

    /// `lctrace timeline --db DB --session SID --vc VC#SINCE --around SEQ …`: the timeline the
    /// HTML report draws of an example (10 s around its decisive event), with the options in force.
    func timelineCommand(sid: String, vc: String?, since: Int64?, around: Int64?) -> String {
        var parts = ["lctrace", "timeline"]
        if let database { parts += ["--db", Shell.word(database)] }
        parts += ["--session", Shell.word(sid)]
        if let vc { parts += ["--vc", Shell.word(since.map { "\(vc)#\($0)" } ?? vc)] }
        if let around { parts += ["--around", String(around)] }
        return (parts + timelineOptions).joined(separator: " ")
    }

    /// `lctrace query --db DB SQL`, quoted for a POSIX shell.
    package func command(_ sql: String) -> String {
        var parts = ["lctrace", "query"]
        if let database { parts += ["--db", Shell.word(database)] }
        return (parts + [Shell.word(sql, preferDouble: true)]).joined(separator: " ")
    }
}

import Foundation

package extension FollowUp {
    /// `lctrace query …` of sessions, findings and findings per 100 sessions of every build;
    /// `rules`: those reported, when not every family is.
    func findingsPerBuildQuery(rules: [String]?) -> String {
        command(HintQueries.findingsPerBuild(conditions: conditions, minSeverity: minSeverity, rules: rules))
    }
}
