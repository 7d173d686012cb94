import LCTraceModel

/// LC901 lost-events (warning).
///
/// Finds: holes in `seq` (lost events), with their count and ranges. Every finding in such a
/// session is marked `confidence: low`: a missing event may have explained it.
///
/// Does not flag: events lost after the last one recorded (nothing shows them).
enum LostEventsRule: Rule {
    package static let info = RuleInfo(id: "LC901", name: "lost-events", severity: .warning, family: .quality,
                               summary: "holes in seq",
                               explanation: "Holes in the session's seq (events the recorder lost), with their count and ranges; every finding of such a session gets confidence low. Not flagged: events lost after the last one recorded (nothing shows them).",
                               help: "Check the recorder's buffer and file rotation; collect every file of the session.",
                               report: ReportNeeds(sourcePlace: .none),
                               keyParts: "nothing more")
    package static let scope = RuleScope.session

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        let stats = model.stats
        guard stats.lostEvents > 0 else { return [] }
        let ranges = stats.lostRanges.map { $0.0 == $0.1 ? "\($0.0)" : "\($0.0)–\($0.1)" }
        let more = stats.lostRanges.count >= 20 ? ", …" : ""
        let evidence = stats.lostRanges.prefix(10).flatMap { [$0.0 - 1, $0.1 + 1].filter { $0 >= 0 } }
        return [Finding(info, model, t: nil,
                        "\(stats.lostEvents) event\(stats.lostEvents == 1 ? "" : "s") lost in \(stats.lostRanges.count)\(more.isEmpty ? "" : "+") hole\(stats.lostRanges.count == 1 && more.isEmpty ? "" : "s"): seq \(ranges.joined(separator: ", "))\(more)",
                        evidence: evidence, detail: ["lost": .int(stats.lostEvents)])]
    }
}
