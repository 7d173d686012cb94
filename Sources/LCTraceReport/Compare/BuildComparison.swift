import LCTraceModel
import LCTraceRules

/// One side of a comparison: a build and the findings and appearances of its sessions.
package struct ComparisonSide: Sendable {
    package var build: String
    package var data: ReportData
    package var sessions: Int { data.sessions.count }
    package init(build: String, data: ReportData) { self.build = build; self.data = data }
}

/// One identity in a comparison, with its findings on each side.
struct ComparedIdentity: Sendable {
    package var identity: String
    package var identityKey: String
    package var rule: RuleInfo
    package var cls: String?
    var baseCount: Int
    var headCount: Int
    /// Findings of this identity per 100 sessions of each side (builds differ in session count).
    var basePer100: Double
    var headPer100: Double
    /// A message of an occurrence (the head's when it has one).
    package var example: String

    /// What tells this identity apart from others of its rule and class: its app and the other
    /// parts of its key (an exit path, an ancestor, a host, an event), e.g.
    /// `com.example.shop · ancestor · UINavigationController`. Without it, the identities of one
    /// rule and class in several apps or hosts are rows only their hashes tell apart.
    var detail: String {
        var parts = Array(FindingIdentity.parts(of: identityKey).dropFirst())
        if let cls, parts.count > 1, let i = parts[1...].firstIndex(of: cls) { parts.remove(at: i) }
        return parts.joined(separator: " · ")
    }
}

/// viewIsAppearing → viewDidAppear of one class (animated or not) on both sides.
struct TimingComparison: Sendable {
    package var cls: String
    package var animated: Bool
    var baseN: Int, headN: Int
    var baseP50: Int64, baseP90: Int64, headP50: Int64, headP90: Int64
    var pValue: Double
    /// Significant (p < `BuildComparison.significance`) and at least the minimum effect.
    var regressed: Bool
}

/// The view model of `lctrace compare`: per identity new, fixed and persisting with their
/// rates on both sides, and the timing regressions. Built once; the compare reporters only
/// format it.
///
/// A timing regression is a class whose viewIsAppearing → viewDidAppear times (completed,
/// non-interactive, foreground appearances, animated and not apart) are slower in the head
/// build by a Mann–Whitney U test at p < 0.01 (`RankTest`), and whose median is slower by at
/// least 20 % and at least 20 ms (`minimumRelativeEffect`, `minimumAbsoluteEffect`), with at
/// least 10 appearances on each side: a difference that is significant but tiny (a large
/// campaign makes 2 ms significant) is not a regression, and noise never flags.
package struct BuildComparison: Sendable {
    static let significance = 0.01
    static let minimumRelativeEffect = 0.20
    static let minimumAbsoluteEffect: Int64 = 20_000_000
    static let minimumSamples = 10

    package let base: ComparisonSide
    package let head: ComparisonSide
    let new: [ComparedIdentity]
    let fixed: [ComparedIdentity]
    let persisting: [ComparedIdentity]
    /// Every class compared with enough samples on both sides, regressions first.
    let timings: [TimingComparison]
    package let failOn: Severity?

    var regressions: [TimingComparison] { timings.filter(\.regressed) }

    /// True when the gate fails: a new identity at or above `failOn`, or a timing regression
    /// (`--fail-on never` mutes both).
    package var failing: Bool {
        guard let failOn else { return false }
        return new.contains { $0.rule.severity >= failOn } || !regressions.isEmpty
    }

    /// New identities at or above `failOn`, and timing regressions: what `gate:` names.
    package var newFailingCount: Int { failOn.map { level in new.count { $0.rule.severity >= level } } ?? 0 }
    package var regressionCount: Int { regressions.count }

    package init(base: ComparisonSide, head: ComparisonSide, failOn: Severity?) {
        self.base = base
        self.head = head
        self.failOn = failOn
        struct Tally { var key: String; var rule: RuleInfo; var cls: String?; var base = 0; var head = 0; var example = "" }
        var tallies: [String: Tally] = [:]
        func count(_ findings: [Finding], head: Bool) {
            for f in findings {
                guard let rule = RuleCatalog.info(f.rule) else { continue }
                var t = tallies[f.identity] ?? Tally(key: f.identityKey, rule: rule, cls: f.cls)
                if head { t.head += 1; if t.example.isEmpty || t.head == 1 { t.example = f.message } } else {
                    t.base += 1; if t.example.isEmpty { t.example = f.message }
                }
                tallies[f.identity] = t
            }
        }
        count(base.data.findings, head: false)
        count(head.data.findings, head: true)
        func per100(_ n: Int, _ sessions: Int) -> Double { sessions == 0 ? 0 : (Double(n) * 10_000 / Double(sessions)).rounded() / 100 }
        let all = tallies.map { identity, t in
            ComparedIdentity(identity: identity, identityKey: t.key, rule: t.rule, cls: t.cls, baseCount: t.base, headCount: t.head,
                             basePer100: per100(t.base, base.sessions), headPer100: per100(t.head, head.sessions), example: t.example)
        }.sorted { a, b in
            if a.rule.severity != b.rule.severity { return a.rule.severity > b.rule.severity }
            if a.headCount + a.baseCount != b.headCount + b.baseCount { return a.headCount + a.baseCount > b.headCount + b.baseCount }
            return a.identityKey < b.identityKey
        }
        new = all.filter { $0.baseCount == 0 }
        fixed = all.filter { $0.headCount == 0 }
        persisting = all.filter { $0.baseCount > 0 && $0.headCount > 0 }
        var timings: [TimingComparison] = []
        for (series, headValues) in head.data.gapSeries {
            guard let baseValues = base.data.gapSeries[series], baseValues.count >= Self.minimumSamples,
                  headValues.count >= Self.minimumSamples else { continue }
            let (b, h) = (baseValues.sorted(), headValues.sorted())
            let p = RankTest.mannWhitney(b, h).p
            let (b50, h50) = (Percentile.of(b, 0.5), Percentile.of(h, 0.5))
            let effect = h50 - b50
            let regressed = p < Self.significance && effect >= Self.minimumAbsoluteEffect
                && Double(effect) >= Self.minimumRelativeEffect * Double(b50)
            timings.append(TimingComparison(cls: series.cls, animated: series.animated, baseN: b.count, headN: h.count,
                                            baseP50: b50, baseP90: Percentile.of(b, 0.9), headP50: h50,
                                            headP90: Percentile.of(h, 0.9), pValue: p, regressed: regressed))
        }
        self.timings = timings.sorted { a, b in
            if a.regressed != b.regressed { return a.regressed }
            if a.pValue != b.pValue { return a.pValue < b.pValue }
            return (a.cls, a.animated ? 1 : 0) < (b.cls, b.animated ? 1 : 0)
        }
    }
}
