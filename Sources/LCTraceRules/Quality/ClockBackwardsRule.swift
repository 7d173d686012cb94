import LCTraceModel

/// LC903 clock-backwards (warning).
///
/// Finds: `t` decreasing while `seq` increases (the monotonic clock went backwards, or the
/// recorder mixed clocks): durations across that point are wrong. One finding per session,
/// with the count and the first occurrence.
///
/// Does not flag: equal `t` on consecutive events (UIKit delivers many callbacks at once).
enum ClockBackwardsRule: Rule {
    package static let info = RuleInfo(id: "LC903", name: "clock-backwards", severity: .warning, family: .quality,
                               summary: "t decreasing while seq increases",
                               explanation: "t decreasing while seq increases: the monotonic clock went backwards or the recorder mixed clocks, so durations across that point are wrong; one finding per session, with the count and the first occurrence. Not flagged: equal t on consecutive events (UIKit delivers many callbacks at once).",
                               help: "Record t from a monotonic clock (mach_continuous_time, CLOCK_MONOTONIC) on one thread-safe counter.",
                               report: ReportNeeds(sourcePlace: .none),
                               keyParts: "nothing more")
    package static let scope = RuleScope.session

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        let stats = model.stats
        guard let first = stats.clockBackwards.first else { return [] }
        return [Finding(info, model, t: first.t,
                        "t went backwards \(stats.clockBackwardsCount) time\(stats.clockBackwardsCount == 1 ? "" : "s"), first at seq \(first.seq) by \(MessageText.ms(first.previousT - first.t))",
                        evidence: stats.clockBackwards.flatMap { [$0.seq - 1, $0.seq] },
                        detail: ["count": .int(Int64(stats.clockBackwardsCount))])]
    }
}
