import LCTraceModel
import LCTraceReport

/// The last line a gating command writes on stderr: what decided its exit status, whatever
/// the format (a CI log shows why a job failed or passed without opening the document).
enum GateLine {
    /// `count` items (`what`, singular; `whats`, plural) decided a failure; zero passes.
    /// `findings`: the findings those items hold, when an item is a defect (an identity, which
    /// the report's header may count several times, once per session).
    static func text(failing: Bool, count: Int, what: String, whats: String, findings: Int? = nil, failOn: Severity?) -> String {
        guard let failOn else { return "gate: passes: --fail-on never\n" }
        let level = "at or above \(failOn.rawValue) (--fail-on \(failOn.rawValue))"
        var items = "\(NumberFormat.thousands(count)) \(count == 1 ? what : whats)"
        if let findings { items += " (\(NumberFormat.thousands(findings)) finding\(findings == 1 ? "" : "s"))" }
        return failing ? "gate: fails: \(items) \(level)\n" : "gate: passes: no \(what) \(level)\n"
    }
}
