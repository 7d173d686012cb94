import LCTraceModel
import LCTraceReport

/// The last line a gating command writes on stderr: what decided its exit status, whatever
/// the format (a CI log shows why a job failed or passed without opening the document).
enum GateLine {
    /// `count` items (`what`, singular; `whats`, plural) decided a failure; zero passes.
    static func text(failing: Bool, count: Int, what: String, whats: String, failOn: Severity?) -> String {
        guard let failOn else { return "gate: passes: --fail-on never\n" }
        let level = "at or above \(failOn.rawValue) (--fail-on \(failOn.rawValue))"
        let items = "\(NumberFormat.thousands(count)) \(count == 1 ? what : whats)"
        return failing ? "gate: fails: \(items) \(level)\n" : "gate: passes: no \(what) \(level)\n"
    }
}
