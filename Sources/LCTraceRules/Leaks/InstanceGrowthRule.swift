import LCTraceModel

/// LC303 instance-growth (warning). Off unless limits are set (`--max-live Class=N`).
///
/// Finds: more than N live instances of one class at once; reported once per class and
/// session, at the instance that crossed the limit, with the largest count reached.
///
/// Does not flag: classes without a limit; instances whose id was reused (counted as freed).
enum InstanceGrowthRule: Rule {
    package static let info = RuleInfo(id: "LC303", name: "instance-growth", severity: .warning, family: .leaks,
                               summary: "too many live instances of one class",
                               explanation: "More than N live instances of one class at once, with per-class limits given by --max-live Class=N (repeatable; the rule is off without one): one finding per class and session, at the instance that crossed the limit, with the largest count reached (peak). Not flagged: a class without a limit; instances whose id was reused (counted as freed).",
                               help: "Look for controllers created again and again without the old ones going away (a leak that never gets a release, such as a child kept in a cache).",
                               keyParts: "class",
                               keyExample: "LC303|com.example.shop|ProductDetailViewController")
    package static let scope = RuleScope.session

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        guard !settings.maxLive.isEmpty else { return [] }
        // Sweep births and ends in seq order.
        var points: [(seq: Int64, delta: Int, x: Instance)] = []
        for x in model.growthCandidates ?? model.instances {
            guard let cls = x.cls, settings.maxLive[cls] != nil else { continue }
            points.append((x.key.since, 1, x))
            if let end = x.endSeq { points.append((end, -1, x)) }
        }
        points.sort { ($0.seq, $0.delta) < ($1.seq, $1.delta) }
        var live: [String: Int] = [:]
        var peak: [String: Int] = [:]
        var crossing: [String: Instance] = [:]
        for p in points {
            let cls = p.x.cls!
            live[cls, default: 0] += p.delta
            if live[cls]! > settings.maxLive[cls]! && crossing[cls] == nil { crossing[cls] = p.x }
            peak[cls] = max(peak[cls] ?? 0, live[cls]!)
        }
        return crossing.keys.sorted().map { cls in
            let x = crossing[cls]!
            return Finding(info, model, x.key, t: x.initT ?? x.firstT,
                           "\(peak[cls]!) live \(cls) instances at once (limit \(settings.maxLive[cls]!))",
                           evidence: [x.key.since], detail: ["peak": .int(Int64(peak[cls]!)), "limit": .int(Int64(settings.maxLive[cls]!))])
        }
    }
}
