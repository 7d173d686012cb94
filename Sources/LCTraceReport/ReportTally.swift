import LCTraceModel
import LCTraceRules
import LCTraceStore

/// The findings a view keeps: every one when it was built from `ReportData.findings`, else
/// only those a reporter shows (examples, each identity's and group's first findings), by
/// their index in report order. `count` is every finding's.
package struct KeptFindings: Sendable {
    /// Every finding, when the view was built from them all.
    private(set) var all: [Finding]?
    private var kept: [Int: Finding] = [:]
    package private(set) var count = 0

    init(all: [Finding]) { self.all = all; count = all.count }
    init(kept: [Int: Finding], count: Int) { self.kept = kept; self.count = count }

    package var isEmpty: Bool { count == 0 }
    /// Finding `i` in report order; only a kept one can be asked for.
    package subscript(i: Int) -> Finding { all?[i] ?? kept[i]! }
    /// How many are held in memory (a test's bound).
    package var held: Int { all?.count ?? kept.count }
}

/// The first `limit` findings in example order (`ExampleKey`) of those offered one at a time,
/// holding at most about twice that many: what a report lists of a rule or a group, whatever
/// its number of findings.
struct TopExamples: Sendable {
    let limit: Int
    private(set) var items: [(key: ExampleKey, finding: Finding)] = []
    /// The worst key kept after the last pruning: anything after it cannot make the list.
    private var bound: ExampleKey?

    init(limit: Int) { self.limit = limit }

    mutating func offer(_ key: ExampleKey, _ finding: @autoclosure () -> Finding) {
        guard limit > 0 else { return }
        if let bound, !(key < bound) { return }
        items.append((key, finding()))
        if items.count >= 2 * limit + 16 { prune() }
    }

    /// The first `limit`, in example order.
    mutating func prune() {
        items.sort { $0.key < $1.key }
        if items.count > limit { items.removeLast(items.count - limit) }
        if items.count == limit { bound = items.last?.key }
    }
}

/// A finding's place in example order: new ones first under a baseline, then the worst by
/// the rule's `worstFirstBy` detail, then report order.
struct ExampleKey: Comparable, Sendable {
    var fresh: Int
    var worst: Double
    var index: Int

    static func < (a: ExampleKey, b: ExampleKey) -> Bool {
        if a.fresh != b.fresh { return a.fresh < b.fresh }
        if a.worst != b.worst { return a.worst > b.worst }
        return a.index < b.index
    }
}

/// Gathers a view's counts, groups and examples from the findings given one session at a time
/// in report order, holding no more of them than the reporters show (issue 25): distinct
/// sessions are counted as they change (a session's findings come together), devices and
/// builds as small numbers.
package struct ReportTally {
    let context: TallyContext
    var options: ReportOptions { context.options }
    var builds: BuildRanks { context.builds }
    var devices: Int { context.devices }

    private(set) var count = 0
    private(set) var bySeverity: [Severity: Int] = [:]
    private(set) var byRule: [String: Int] = [:]
    private(set) var newFindings = 0
    /// Per build rank: findings by severity.
    private(set) var perBuild: [[Severity: Int]]
    private(set) var identities: [IdentityTally] = []
    private var identityIndex: [String: Int] = [:]
    private(set) var rules: [String: RuleTally] = [:]

    /// One session's findings, held until the next session starts.
    private var batch: [Finding] = []
    private var batchSession: Int?
    private var batchStarted = false

    package init(sessions: ReportSessions, options: ReportOptions) {
        context = TallyContext(sessions: sessions, options: options)
        perBuild = Array(repeating: [:], count: context.builds.names.count)
    }

    package func state(_ f: Finding) -> BaselineState? { context.state(f) }

    /// The next finding in report order, of session `session` (index into the sessions).
    package mutating func add(_ f: Finding, session: Int?) {
        if batchStarted && session != batchSession { flush() }
        batchStarted = true
        batchSession = session
        batch.append(f)
    }

    /// Counts what is left; call once after the last finding.
    package mutating func finish() {
        flush()
        for i in rules.keys { rules[i]!.finish() }
    }

    private mutating func flush() {
        guard !batch.isEmpty else { return }
        let base = count
        let session = batchSession
        for (k, f) in batch.enumerated() { count1(f, index: base + k, session: session) }
        // Rule by rule, the session's findings grouped (held ones under their holder's group).
        var ofRule: [String: [Int]] = [:]
        for (k, f) in batch.enumerated() { ofRule[f.rule, default: []].append(k) }
        let context = context, limit = options.examples
        for (id, ks) in ofRule {
            let findings = ks.map { (base + $0, batch[$0]) }
            rules[id, default: RuleTally(rule: Self.info(findings[0].1), limit: limit)]
                .add(findings, session: session, tally: context)
        }
        batch.removeAll(keepingCapacity: true)
    }

    static func info(_ f: Finding) -> RuleInfo {
        RuleCatalog.info(f.rule) ?? RuleInfo(id: f.rule, name: f.name, severity: f.severity, family: .quality, summary: "")
    }

    private mutating func count1(_ f: Finding, index: Int, session: Int?) {
        count += 1
        bySeverity[f.severity, default: 0] += 1
        byRule[f.rule, default: 0] += 1
        let state = state(f)
        if state == .new { newFindings += 1 }
        if let s = session { perBuild[context.builds.rank(ofSession: s)][f.severity, default: 0] += 1 }
        var g = identityIndex[f.identity] ?? -1
        if g < 0 {
            let rule = Self.info(f)
            identities.append(IdentityTally(group: IdentityGroup(
                identity: f.identity, identityKey: f.identityKey, rule: rule, cls: f.cls, app: f.app,
                first: index, occurrences: 0, sessions: 0, devices: 0, builds: [], state: state,
                failing: options.failOn.map { f.severity >= $0 && state != .known } ?? false)))
            g = identities.count - 1
            identityIndex[f.identity] = g
        }
        identities[g].add(f, index: index, session: session, tally: context)
    }
}

/// What the tallies look up per finding: the sessions' builds and devices as small numbers,
/// and the baseline's identities.
final class TallyContext {
    let options: ReportOptions
    let builds: BuildRanks
    /// Per session its device's number (`ReportSessions.device`, shared), and per number
    /// whether the device is known.
    private let deviceOf: [Int32]
    private let deviceKnown: [Bool]
    /// Distinct devices of the sessions.
    let devices: Int
    /// The baseline whose identities are known (looked up in its index, never copied).
    let known: Baseline?

    init(sessions: ReportSessions, options: ReportOptions) {
        self.options = options
        builds = BuildOrder.ranks(sessions)
        deviceOf = sessions.device
        deviceKnown = sessions.devices.values.map { $0 != nil }
        devices = deviceKnown.count { $0 }
        known = options.baseline
    }

    /// Session `s`'s device's number, nil when unknown.
    func device(_ s: Int) -> Int32? {
        let d = deviceOf[s]
        return deviceKnown[Int(d)] ? d : nil
    }

    func state(_ f: Finding) -> BaselineState? { known.map { $0.contains(identity: f.identity) ? .known : .new } }
}

/// One identity while the findings go by.
struct IdentityTally {
    var group: IdentityGroup
    var lastSession: Int?
    var devices = Set<Int32>(), builds = Set<Int>()
    /// Its first findings (`SourcePlacements.findingsSearched` of them), by index.
    var first: [(Int, Finding)] = []

    mutating func add(_ f: Finding, index: Int, session: Int?, tally: TallyContext) {
        group.occurrences += 1
        if first.count < SourcePlacements.findingsSearched { first.append((index, f)) }
        guard f.session != nil, let s = session else { return }
        if s != lastSession { group.sessions += 1; lastSession = s }
        if let d = tally.device(s) { devices.insert(d) }
        builds.insert(tally.builds.rank(ofSession: s))
    }
}

/// One rule while the findings go by: its count, distinct sessions, examples and groups.
struct RuleTally {
    let rule: RuleInfo
    let limit: Int
    var count = 0
    var sessions = 0
    var lastSession: Int?
    var examples: TopExamples
    /// Groups by "label|value".
    var groups: [String: GroupTally] = [:]

    init(rule: RuleInfo, limit: Int) {
        self.rule = rule
        self.limit = limit
        examples = TopExamples(limit: limit)
    }

    func key(_ f: Finding, index: Int, tally: TallyContext) -> ExampleKey {
        let worst = rule.report.worstFirstBy.flatMap { f.detail[$0]?.number } ?? 0
        return ExampleKey(fresh: tally.state(f) == .known ? 1 : 0, worst: worst, index: index)
    }

    /// One session's findings of the rule, in report order.
    mutating func add(_ findings: [(index: Int, finding: Finding)], session: Int?, tally: TallyContext) {
        for (i, f) in findings {
            count += 1
            if let s = session, f.session != nil, s != lastSession { sessions += 1; lastSession = s }
            examples.offer(key(f, index: i, tally: tally), f)
        }
        if let detailKey = rule.report.groupBy {
            // Findings held by another finding's instance (the rule's `heldByKeys`) go under
            // that one's group, not as headlines; both are of the same session.
            func instanceKey(_ vc: String, _ since: String, _ session: String?) -> String { "\(vc)#\(since)@\(session ?? "")" }
            var byKey: [String: Int] = [:]
            for (k, (_, f)) in findings.enumerated() {
                guard let vc = f.vc else { continue }
                let key = instanceKey(vc, String(f.since ?? -1), f.session)
                if byKey[key] == nil { byKey[key] = k }
            }
            func holder(_ k: Int) -> Int? {
                let f = findings[k].finding
                guard let keys = rule.report.heldByKeys, keys.count == 2,
                      let vc = f.detail[keys[0]], let since = f.detail[keys[1]] else { return nil }
                return byKey[instanceKey(vc.description, since.description, f.session)]
            }
            func headline(_ k: Int) -> Int {
                var current = k
                var depth = 0
                while let h = holder(current), depth < 64 { current = h; depth += 1 }
                return current
            }
            for k in findings.indices {
                let held = holder(k) != nil
                let h = held ? headline(k) : k
                let value = findings[h].finding.detail[detailKey]?.description ?? FindingGroup.unknownLabel
                let label = findings[h].finding.cls ?? FindingGroup.unknownLabel
                let (i, f) = findings[k]
                groups["\(label)|\(value)", default: GroupTally(label: label, value: value, limit: limit)]
                    .add(f, index: i, session: session, held: held, key: key(f, index: i, tally: tally), tally: tally)
            }
        } else {
            for (i, f) in findings {
                let label = f.cls ?? (f.file != nil ? FindingGroup.fileLabel : f.vc == nil ? FindingGroup.sessionLabel : FindingGroup.unknownLabel)
                groups[label, default: GroupTally(label: label, value: nil, limit: limit)]
                    .add(f, index: i, session: session, held: false, key: key(f, index: i, tally: tally), tally: tally)
            }
        }
    }

    mutating func finish() {
        examples.prune()
        for k in groups.keys { groups[k]!.examples.prune() }
    }
}

/// One row of a rule's table while the findings go by.
struct GroupTally {
    var label: String
    var value: String?
    var count = 0
    var held: [String: Int] = [:]
    var lastSession: Int?
    var sessions = 0
    var devices = Set<Int32>(), builds = Set<Int>()
    /// The session (index) of the oldest build, the first seen of equals.
    var first: Int?
    var examples: TopExamples
    /// Its first headline findings, for the HTML report's search.
    var firstFindings: [(Int, Finding)] = []
    var identities: [String] = []
    var identitySet = Set<String>()
    var newFindings = 0
    static let firstKept = 3

    init(label: String, value: String?, limit: Int) {
        self.label = label
        self.value = value
        examples = TopExamples(limit: limit)
    }

    mutating func add(_ f: Finding, index: Int, session: Int?, held isHeld: Bool, key: ExampleKey, tally: TallyContext) {
        if identitySet.insert(f.identity).inserted { identities.append(f.identity) }
        if isHeld {
            held[f.cls ?? FindingGroup.unknownLabel, default: 0] += 1
            return
        }
        count += 1
        if tally.state(f) == .new { newFindings += 1 }
        if firstFindings.count < Self.firstKept { firstFindings.append((index, f)) }
        examples.offer(key, f)
        guard f.session != nil, let s = session else { return }
        if s != lastSession { sessions += 1; lastSession = s }
        if let d = tally.device(s) { devices.insert(d) }
        builds.insert(tally.builds.rank(ofSession: s))
        if first == nil || tally.builds.precedes(session: s, first!) { first = s }
    }
}
