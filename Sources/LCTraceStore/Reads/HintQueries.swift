import LCTraceModel

/// The SQL of the follow-up commands lctrace prints (`lctrace query "…"`), kept with the rest
/// of the SQL: questions a user can paste, against the public views.
package enum HintQueries {
    /// The findings of `rule` under the filters (findings_v column, value) and lowest severity.
    package static func findings(rule: String, conditions: [(String, String)], minSeverity: Severity?) -> String {
        "SELECT * FROM findings_v WHERE " + (["rule = \(literal(rule))"] + filterTerms(conditions, minSeverity)).joined(separator: " AND ")
    }

    /// The conditions of the filters in force over findings_v: `column = value`, and the
    /// severities at or above the lowest one shown.
    static func filterTerms(_ conditions: [(String, String)], _ minSeverity: Severity?) -> [String] {
        var terms = conditions.map { "\($0.0) = \(literal($0.1))" }
        if let minSeverity, minSeverity > .info {
            let allowed = Severity.allCases.filter { $0 >= minSeverity }.map { literal($0.rawValue) }
            terms.append("severity IN (\(allowed.joined(separator: ", ")))")
        }
        return terms
    }

    /// Every rejected line of the file loaded under `path`.
    package static func rejectedLines(path: String) -> String {
        "SELECT line, reason FROM rejects JOIN files ON files.id = rejects.file WHERE path = \(literal(path))"
    }

    /// A session's events.
    package static func events(sid: String) -> String {
        "SELECT seq, event, vc FROM events_v WHERE sid = \(literal(sid))"
    }

    /// A session's controller instances.
    package static func instances(sid: String) -> String {
        "SELECT vc, since, class FROM instances_v WHERE sid = \(literal(sid))"
    }

    /// A SQL string literal.
    package static func literal(_ value: String) -> String { "'" + value.replacingOccurrences(of: "'", with: "''") + "'" }
}
