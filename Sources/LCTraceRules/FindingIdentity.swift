import LCTraceModel

/// The identity of a finding (rules.md 1.1, "Finding identity"): a readable key that names the
/// defect, never the occurrence, and a short hash of it. The same defect seen in 40 sessions on
/// 12 devices and 3 builds has one identity, so baselines and build comparisons can count it.
///
/// The key is `rule|app|part|…`: each rule declares its parts where it makes its findings (the
/// host's or parent's class is at hand there). A part that is not known is `?`, and so is the
/// app of a session without a session record and of a file-level finding (LC904: a file is no
/// session's, and may hold the sessions of several apps). A `|` or `%` inside a part is written
/// `%7C` or `%25`, so the parts of a key can always be told apart.
package enum FindingIdentity {
    /// What stands for a part (or an app) that is not known.
    package static let unknown = "?"

    /// The readable key of a finding of `rule` in `app` with the rule's `parts`.
    package static func key(rule: String, app: String?, parts: [String?]) -> String {
        ([rule, app ?? unknown] + parts.map { $0 ?? unknown }).map(escape).joined(separator: "|")
    }

    /// The identity of `key`: the first 8 bytes of its SHA-256, as 16 lowercase hex digits.
    package static func hash(_ key: String) -> String {
        var digest = SHA256()
        digest.update(Array(key.utf8))
        return String(digest.finalizeHex().prefix(16))
    }

    /// The parts of `key` as they were given (`rule`, app, then the rule's parts), unescaped.
    package static func parts(of key: String) -> [String] {
        key.split(separator: "|", omittingEmptySubsequences: false).map { part in
            part.contains("%") ? part.replacingOccurrences(of: "%7C", with: "|").replacingOccurrences(of: "%25", with: "%") : String(part)
        }
    }

    package static func escape(_ part: String) -> String {
        guard part.contains("|") || part.contains("%") else { return part }
        return part.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "|", with: "%7C")
    }
}
