import LCTraceModel
import LCTraceRules
import LCTraceStore

/// What a report was asked to show and how: the options every reporter reads.
package struct ReportOptions: Sendable {
    package var families: Set<RuleFamily> = Set(RuleFamily.allCases)
    /// Findings at or above it fail the gate (new ones only under a baseline); nil: never.
    package var failOn: Severity? = .error
    package var baseline: Baseline?
    /// Colour in text (a terminal).
    package var color = false
    /// Examples per rule in text.
    package var examples = 5
    /// Where the app's sources are (`--source-root`, else the Git work tree): SARIF places
    /// each result on a file there.
    package var sourceRoot: String?
    /// What SARIF's paths are relative to (`SRCROOT`): the Git work tree holding the source
    /// root (code scanning reads paths from the repository's top), else the root itself.
    package var sourceBase: String?
    /// The follow-up `lctrace query` commands printed in text keep the database and filters.
    package var followUp = FollowUp()
    /// CSV: cells a spreadsheet would run as formulas start with `'` (`--safe-csv`).
    package var neutralizesFormulas = false
    package init() {}
}

/// How a finding stands against a baseline file.
package enum BaselineState: String, Sendable {
    case new, known
}

/// One defect: every finding of one identity, and what reports print about it.
struct IdentityGroup: Sendable {
    package var identity: String
    package var identityKey: String
    package var rule: RuleInfo
    package var cls: String?
    package var app: String?
    /// Its first finding (index into `ReportView.findings`).
    package var first: Int
    package var occurrences: Int
    /// Its first findings (`SourcePlacements.findingsSearched` at most), in report order.
    var firstFindings: [Int] = []
    package var sessions: Int
    package var devices: Int
    /// Distinct builds, oldest first (`BuildOrder`), as "version (build)".
    package var builds: [String]
    /// The `build` values of the oldest and newest sessions it was seen in.
    var firstBuild: String?
    var lastBuild: String?
    /// Under a baseline: new or known.
    package var state: BaselineState?
    /// At or above `--fail-on` (and new, under a baseline).
    package var failing: Bool
}

/// Per-class statistics of viewIsAppearing → viewDidAppear (ns), for `--gaps`.
package struct GapStats: Sendable {
    package var cls: String
    package var count: Int
    package var p50: Int64, p90: Int64, p99: Int64, max: Int64
    /// Appearances per bucket (`GapStats.bounds`, then ≥ the last bound).
    package var histogram: [Int]

    /// Bucket bounds: < 50 ms, < 100, < 250, < 500, < 1 s, < 2 s, then ≥ 2 s.
    package static let bounds: [Int64] = [50, 100, 250, 500, 1000, 2000].map { Int64($0) * 1_000_000 }

    package init(cls: String, values: [Int64]) {
        self.cls = cls
        count = values.count
        // Three selections instead of a sort: 800,000 gaps took 80 ms to sort on the 10 M
        // benchmark database, a fifth of `report`'s time.
        var work = values
        p50 = Percentile.select(&work, 0.5, from: 0)
        let above50 = Percentile.rank(count, 0.5)
        p90 = Percentile.select(&work, 0.9, from: above50)
        p99 = Percentile.select(&work, 0.99, from: Percentile.rank(count, 0.9))
        max = values.max() ?? 0
        var counts = Array(repeating: 0, count: Self.bounds.count + 1)
        for v in values { counts[Self.bounds.firstIndex { v < $0 } ?? Self.bounds.count] += 1 }
        histogram = counts
    }

    /// The same numbers from compact samples (`GapTable`), which it reorders.
    init(cls: String, samples: GapSamples) {
        self.cls = cls
        var work = samples
        count = work.count
        let p = work.percentiles([0.5, 0.9, 0.99])
        (p50, p90, p99) = (p[0], p[1], p[2])
        max = work.max
        var counts = Array(repeating: 0, count: Self.bounds.count + 1)
        work.forEach { v in counts[Self.bounds.firstIndex { v < $0 } ?? Self.bounds.count] += 1 }
        histogram = counts
    }
}

/// Nearest-rank percentiles of sorted values.
enum Percentile {
    package static func of(_ sorted: [Int64], _ p: Double) -> Int64 {
        guard !sorted.isEmpty else { return 0 }
        return sorted[rank(sorted.count, p)]
    }

    /// The index of the nearest-rank `p` percentile among `count` sorted values.
    package static func rank(_ count: Int, _ p: Double) -> Int {
        min(Swift.max(Int((p * Double(count)).rounded(.up)) - 1, 0), Swift.max(count - 1, 0))
    }

    /// The nearest-rank `p` percentile of `values`, which are reordered (Hoare's selection,
    /// median-of-three pivots) so that it sits at its sorted index with nothing larger
    /// before it. `from`: an index everything before which is already no larger than what
    /// follows (an earlier, lower selection), so the search starts there.
    package static func select(_ values: inout [Int64], _ p: Double, from: Int) -> Int64 {
        guard !values.isEmpty else { return 0 }
        return select(&values, at: rank(values.count, p), from: from)
    }

    /// The value of sorted index `k` (see `select(_:_:from:)`), of any integer width.
    static func select<T: FixedWidthInteger>(_ values: inout [T], at k: Int, from: Int) -> T {
        var lo = min(from, k), hi = values.count - 1
        while hi > lo {
            let mid = lo + (hi - lo) / 2
            // The median of three as the pivot keeps sorted and constant runs linear.
            let a = values[lo], b = values[mid], c = values[hi]
            let pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b))
            var i = lo, j = hi
            while i <= j {
                while values[i] < pivot { i += 1 }
                while values[j] > pivot { j -= 1 }
                if i <= j { values.swapAt(i, j); i += 1; j -= 1 }
            }
            if k <= j { hi = j } else if k >= i { lo = i } else { break }
        }
        return values[k]
    }
}

/// The data every reporter receives, built once from a report's findings: the identities
/// with their counts and builds, the baseline's verdicts, gap statistics and (gathered
/// on demand) exhibits and source placements. Reporters only format it; none re-derives it or special-cases a rule (what a
/// rule's findings need is declared in its `RuleInfo.report`).
package struct ReportView: Sendable {
    package private(set) var data: ReportData
    package let options: ReportOptions
    /// The findings in report order (sessions in listing order, time within each, files
    /// last): every one when the view was built from `data.findings`, else those it shows.
    package let findings: KeptFindings
    /// Every identity: under a baseline new ones first, then by severity, occurrences and key.
    let identities: [IdentityGroup]
    /// Baseline entries seen nowhere in the selection (only those the selection could show).
    let fixed: BaselineEntries
    /// Per class and animation (once settled: `settleGaps()`).
    var gapStats: [GapStats] {
        precondition(!gapsPending, "a report rendered while its gap statistics are pending: settleGaps() first")
        return settledGapStats
    }
    private var settledGapStats: [GapStats] = []
    /// Where each identity sits in the app's sources under `options.sourceRoot`, when a
    /// reporter needs it and it was gathered (`SourcePlacements.gather`).
    package var placements = SourcePlacements()
    /// "lctrace 0.3.0".
    let tool: String
    /// The builds of the selected sessions, oldest first, with their counts.
    let builds: [BuildSummary]
    /// Distinct devices of the selected sessions.
    package let devices: Int
    /// The findings by family and rule, each rule's grouped into the rows of its table.
    private(set) var sections: [FamilySection] = []
    /// Per class, the gaps build by build (when the report gathered `gapRows`).
    var gapsByBuild: [ClassGapsByBuild] {
        precondition(!gapsPending, "a report rendered while its gap statistics are pending: settleGaps() first")
        return settledGapsByBuild
    }
    private var settledGapsByBuild: [ClassGapsByBuild] = []
    /// The builds' ranks, for `gapsByBuild` (made when the gaps are settled).
    private let buildRanks: BuildRanks
    /// The examples drawn (timelines, holders, raw events), when a reporter needs them and
    /// they were gathered (`ReportExhibits.gather`).
    package var exhibits: ReportExhibits?
    /// Sessions by id (`session(_:)`).
    private let sessionLookup: SessionLookup
    /// Findings at each severity, per rule, and (under a baseline) of new identities.
    let bySeverity: [Severity: Int]
    let byRule: [String: Int]
    let newFindings: Int
    /// True when its texts were escaped for a terminal as they came (the streamed text report).
    package var isEscapedForTerminal = false
    /// The baseline, whose identities are known.
    private let known: Baseline?

    /// The view of `data.findings`, every one kept.
    package init(data: ReportData, options: ReportOptions, tool: String = ToolInfo.name) {
        var tally = ReportTally(sessions: data.sessions, options: options)
        let lookup = SessionLookup(data.sessions)
        for f in data.findings { tally.add(f, session: f.session.flatMap { lookup.index(of: $0, in: data.sessions) }) }
        tally.finish()
        self.init(data: data, options: options, tally: tally, findings: KeptFindings(all: data.findings), tool: tool)
    }

    /// The view of findings streamed into `tally` (`ReportCollector.collect(_:db:begin:each:)`),
    /// keeping only those it shows.
    package init(data: ReportData, options: ReportOptions, tally: ReportTally, tool: String = ToolInfo.name) {
        self.init(data: data, options: options, tally: tally, findings: nil, tool: tool)
    }

    private init(data: ReportData, options: ReportOptions, tally: ReportTally, findings: KeptFindings?, tool: String) {
        self.data = data
        self.options = options
        self.tool = tool
        sessionLookup = SessionLookup(data.sessions)
        bySeverity = tally.bySeverity
        byRule = tally.byRule
        newFindings = options.baseline == nil ? 0 : tally.newFindings
        known = tally.context.known
        let builds = tally.builds
        var kept: [Int: Finding] = [:]
        func keep(_ list: [(Int, Finding)]) -> [Int] {
            for (i, f) in list where kept[i] == nil { kept[i] = f }
            return list.map(\.0)
        }
        var groups: [IdentityGroup] = []
        for t in tally.identities {
            var g = t.group
            g.devices = t.devices.count
            let ranks = t.builds.sorted()
            g.builds = ranks.map { builds.names[$0] }
            g.firstBuild = ranks.first.map { builds.values[$0] } ?? nil
            g.lastBuild = ranks.last.map { builds.values[$0] } ?? nil
            g.firstFindings = keep(t.first)
            groups.append(g)
        }
        // Report order of identities: new before known, worst severity, most occurrences, key.
        identities = groups.sorted { x, y in
            let (nx, ny) = (x.state == .known ? 1 : 0, y.state == .known ? 1 : 0)
            if nx != ny { return nx < ny }
            if x.rule.severity != y.rule.severity { return x.rule.severity > y.rule.severity }
            if x.occurrences != y.occurrences { return x.occurrences > y.occurrences }
            return x.identityKey < y.identityKey
        }
        if let baseline = options.baseline {
            let seen = Set(groups.map(\.identity))
            let apps = data.sessions.apps
            fixed = baseline.entries { !seen.contains($0.identity) && data.couldShow($0, options.families, apps: apps) }
        } else {
            fixed = .none
        }
        buildRanks = builds
        self.builds = Self.buildSummaries(data.sessions, builds: builds, findings: tally.perBuild)
        devices = tally.devices
        sections = SectionBuilder.sections(tally, options: options, keep: keep)
        self.findings = findings ?? KeptFindings(kept: kept, count: tally.count)
        if data.pendingGaps == nil { makeGapStatistics() }
    }

    /// True while the gap statistics are still read beside (`ReportRequest.gapsSettledLater`):
    /// `settleGaps()` before rendering.
    package var gapsPending: Bool { data.pendingGaps != nil }

    /// Waits for the gap statistics read beside (when they are) and makes their tables.
    package mutating func settleGaps() throws {
        guard data.pendingGaps != nil else { return }
        try data.settleGaps()
        makeGapStatistics()
    }

    private mutating func makeGapStatistics() {
        settledGapStats = data.gapTable.statistics().sorted { ($1.count, $0.cls) < ($0.count, $1.cls) }
        settledGapsByBuild = Self.gapsByBuild(data.gapTable, gapStats: settledGapStats, builds: buildRanks)
    }

    /// The index in `data.sessions` of the session with id `sid` (the first of equals).
    package func sessionIndex(of sid: String) -> Int? { sessionLookup.index(of: sid, in: data.sessions) }

    package func session(_ sid: String?) -> SessionInfo? {
        sid.flatMap(sessionIndex(of:)).map { data.sessions[$0] }
    }

    /// Under a baseline: the state of `finding`.
    func state(of finding: Finding) -> BaselineState? { known.map { $0.contains(identity: finding.identity) ? .known : .new } }

    /// Under a baseline: the state of finding `i`.
    func state(ofFinding i: Int) -> BaselineState? { state(of: findings[i]) }

    var knownFindings: Int { options.baseline == nil ? 0 : findings.count - newFindings }
    /// Findings at `severity`.
    func count(_ severity: Severity) -> Int { bySeverity[severity] ?? 0 }

    /// True when the gate fails: a finding at or above `--fail-on` (a new one under a baseline).
    package var failing: Bool { identities.contains { $0.failing } }
    /// Defects (identity groups) that fail the gate: the number `gate:` names on stderr.
    package var failingCount: Int { identities.count { $0.failing } }
    /// The findings of those defects (a defect seen in three sessions is three findings, as
    /// the report's header counts them).
    package var failingOccurrences: Int { identities.reduce(0) { $0 + ($1.failing ? $1.occurrences : 0) } }
}

package extension ReportData {
    /// Whether the selection could have shown a baseline entry: its rule's family is
    /// reported and its app is among the sessions selected (an entry of another app, or of a
    /// family not asked for, is not "fixed", only out of view).
    internal func couldShow(_ entry: BaselineEntry, _ families: Set<RuleFamily>, apps: Set<String>) -> Bool {
        guard let rule = RuleCatalog.info(entry.rule), families.contains(rule.family) else { return false }
        if rule.severity < minSeverity { return false }
        if let cls = className, entry.cls != cls { return false }
        let app = entry.identityKey.split(separator: "|", omittingEmptySubsequences: false).dropFirst().first.map(String.init)
        if app == FindingIdentity.unknown || app == nil { return true }
        return app.map(apps.contains) ?? false
    }
}

/// Orders builds as people number them: app version numerically, then build number.
enum BuildOrder {
    package static func key(_ s: SessionInfo) -> [Int] { key(appVersion: s.appVersion, build: s.build) }

    static func key(appVersion: String?, build: String?) -> [Int] {
        let version = (appVersion ?? "").split(separator: ".").map { Int($0) ?? 0 }
        let build = Int(build ?? "") ?? 0
        return (version + Array(repeating: 0, count: Swift.max(0, 4 - version.count))) + [build]
    }

    static func precedes(_ a: SessionInfo, _ b: SessionInfo) -> Bool {
        let (x, y) = (key(a), key(b))
        return x != y ? x.lexicographicallyPrecedes(y) : (a.build ?? "") < (b.build ?? "")
    }

    /// "5.2.1 (812)".
    package static func name(_ s: SessionInfo) -> String { name(appVersion: s.appVersion, build: s.build) }

    static func name(appVersion: String?, build: String?) -> String { "\(appVersion ?? "?") (\(build ?? "?"))" }

    /// The distinct builds of `sessions` in build order (`BuildRanks`).
    static func ranks(_ sessions: ReportSessions) -> BuildRanks {
        let profiles = sessions.profiles.values
        let names = profiles.map { name(appVersion: $0.appVersion, build: $0.build) }
        let keys = profiles.map { key(appVersion: $0.appVersion, build: $0.build) }
        func precedes(_ a: Int, _ b: Int) -> Bool {
            keys[a] != keys[b] ? keys[a].lexicographicallyPrecedes(keys[b]) : (profiles[a].build ?? "") < (profiles[b].build ?? "")
        }
        // Profiles are numbered in order of first use, so a name's first profile is its first session's.
        var first: [String: Int] = [:]
        for p in profiles.indices where first[names[p]] == nil { first[names[p]] = p }
        let ordered = first.values.sorted().sorted(by: precedes)
        let rankOf = Dictionary(ordered.enumerated().map { (names[$1], $0) }, uniquingKeysWith: { a, _ in a })
        // `precedes` as numbers: equal for profiles neither of which precedes the other.
        let byOrder = profiles.indices.sorted(by: precedes)
        var precedence = Array(repeating: 0, count: profiles.count)
        for (k, p) in byOrder.enumerated() where k > 0 {
            precedence[p] = precedence[byOrder[k - 1]] + (precedes(byOrder[k - 1], p) ? 1 : 0)
        }
        return BuildRanks(profileRank: names.map { rankOf[$0]! }, precedence: precedence,
                          names: ordered.map { names[$0] }, values: ordered.map { profiles[$0].build },
                          sessionProfile: sessions.profile)
    }
}

/// The builds of a report's sessions, oldest first (`BuildOrder`), and each session's.
struct BuildRanks: Sendable {
    /// Per profile (`ReportSessions.profiles`): its build's rank.
    let profileRank: [Int]
    /// Per profile: one profile's build precedes another's (`BuildOrder.precedes`) when its number is lower.
    let precedence: [Int]
    /// Per rank: "5.2.1 (812)", and the `build` value.
    let names: [String]
    let values: [String?]
    /// Per session: its profile.
    let sessionProfile: [Int32]

    func rank(ofProfile p: Int32) -> Int { profileRank[Int(p)] }
    func rank(ofSession i: Int) -> Int { profileRank[Int(sessionProfile[i])] }
    /// Whether session `a`'s build precedes session `b`'s.
    func precedes(session a: Int, _ b: Int) -> Bool {
        precedence[Int(sessionProfile[a])] < precedence[Int(sessionProfile[b])]
    }
}

/// The tool's name and version, as reports and baseline files print it.
package enum ToolInfo {
    package static let version = "0.3.0"
    package static var name: String { "lctrace \(version)" }
}
