import LCTraceModel
import LCTraceRules
import LCTraceStore

/// The findings of one family, as every report for people lays them out: a section per rule.
struct FamilySection: Sendable {
    package var family: RuleFamily
    package var rules: [RuleSection]
}

/// The findings of one rule: its groups (the rows of its table) and its examples.
struct RuleSection: Sendable {
    package var rule: RuleInfo
    /// Indices into `ReportView.findings`, in report order.
    package var findings: [Int]
    /// Distinct sessions of its findings.
    package var sessions: Int
    /// By class, or by class and the rule's `groupBy` detail; most findings first.
    package var groups: [FindingGroup]
    /// Every finding of the rule in example order: new ones first under a baseline, then the
    /// worst by the rule's `worstFirstBy` detail, else report order.
    package var examples: [Int]
    /// True when the rule groups by `groupBy` (class and how a leaked controller left).
    var groupedByDetail: Bool { rule.report.groupBy != nil }
    /// True when its only group is the session or the file (nothing per class to tabulate).
    var onlySessionOrFile: Bool {
        groups.count == 1 && (groups[0].label == FindingGroup.sessionLabel || groups[0].label == FindingGroup.fileLabel)
    }
}

/// One row of a rule's table: the findings about one class (and one `groupBy` value).
struct FindingGroup: Sendable {
    /// What a finding without a class is listed under.
    static let sessionLabel = "(session)", fileLabel = "(file)", unknownLabel = "?"

    /// The class, or `(session)`, `(file)`, `?`.
    package var label: String
    /// The rule's `groupBy` detail value ("pop"); nil when the rule groups by class only.
    package var value: String?
    /// Headline findings (indices into `ReportView.findings`), in report order.
    package var findings: [Int]
    /// Findings held by a headline finding's instance (a child released with its leaked
    /// container): listed under it, counted by class.
    package var held: [HeldCount]
    var heldFindings: [Int]
    /// Distinct sessions, devices and builds of the headline findings.
    package var sessions: Int
    package var devices: Int
    /// Distinct builds ("5.2.1 (812)"), oldest first; indices into `ReportView.builds`.
    package var builds: [Int]
    /// The build of the oldest session showing it ("5.2.1 (812)").
    var firstBuild: String?
    /// The headline findings in example order (as `RuleSection.examples`).
    package var examples: [Int]
    /// Distinct identities of the group's findings (headline and held), in report order.
    package var identities: [String]
    /// Under a baseline: headline findings of new identities.
    var newFindings: Int
    package var count: Int { findings.count }
}

/// A class of findings held by another, with how many.
struct HeldCount: Sendable, Equatable {
    package var cls: String
    package var count: Int
}

/// Family titles, as every report for people prints them.
package extension RuleFamily {
    var title: String {
        switch self {
        case .orphans: return "Orphaned children"
        case .unbalanced: return "Appear with no matching disappear"
        case .leaks: return "Leaks: deinit never follows disappear"
        case .gaps: return "Timing gaps: viewIsAppearing → viewDidAppear"
        case .scene: return "App and scene life cycle"
        case .quality: return "Trace quality"
        }
    }
}

/// Builds the sections of a view once (text and HTML both lay them out).
enum SectionBuilder {
    /// `buildRank`: per session index its build's place in build order.
    static func sections(_ view: ReportView, buildRank: [Int]) -> [FamilySection] {
        var byRule: [String: [Int]] = [:]
        for (i, f) in view.findings.enumerated() { byRule[f.rule, default: []].append(i) }
        var out: [FamilySection] = []
        for family in RuleFamily.allCases where view.options.families.contains(family) {
            var rules: [RuleSection] = []
            for rule in RuleCatalog.all where rule.family == family {
                guard let indices = byRule[rule.id], !indices.isEmpty else { continue }
                rules.append(section(rule, indices, view, buildRank: buildRank))
            }
            out.append(FamilySection(family: family, rules: rules))
        }
        return out
    }

    static func section(_ rule: RuleInfo, _ indices: [Int], _ view: ReportView, buildRank: [Int]) -> RuleSection {
        let findings = view.findings
        let order = exampleOrder(rule, indices, view)
        let place = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })

        struct Draft { var label: String; var value: String?; var findings: [Int] = []; var held: [String: Int] = [:]; var heldFindings: [Int] = [] }
        var drafts: [String: Draft] = [:]
        if let detailKey = rule.report.groupBy {
            // Findings held by another finding's instance (the rule's `heldByKeys`) go under
            // that one's group, not as headlines.
            func instanceKey(_ vc: String, _ since: String, _ session: String?) -> String { "\(vc)#\(since)@\(session ?? "")" }
            var byKey: [String: Int] = [:]
            for i in indices {
                let f = findings[i]
                guard let vc = f.vc else { continue }
                let key = instanceKey(vc, String(f.since ?? -1), f.session)
                if byKey[key] == nil { byKey[key] = i }
            }
            func holder(_ i: Int) -> Int? {
                let f = findings[i]
                guard let keys = rule.report.heldByKeys, keys.count == 2,
                      let vc = f.detail[keys[0]], let since = f.detail[keys[1]] else { return nil }
                return byKey[instanceKey(vc.description, since.description, f.session)]
            }
            func headline(_ i: Int) -> Int {
                var current = i
                var depth = 0
                while let h = holder(current), depth < 64 { current = h; depth += 1 }
                return current
            }
            for i in indices {
                let held = holder(i) != nil
                let h = held ? headline(i) : i
                let value = findings[h].detail[detailKey]?.description ?? FindingGroup.unknownLabel
                let label = findings[h].cls ?? FindingGroup.unknownLabel
                let key = "\(label)|\(value)"
                var draft = drafts[key] ?? Draft(label: label, value: value)
                if held {
                    draft.held[findings[i].cls ?? FindingGroup.unknownLabel, default: 0] += 1
                    draft.heldFindings.append(i)
                } else {
                    draft.findings.append(i)
                }
                drafts[key] = draft
            }
        } else {
            for i in indices {
                let f = findings[i]
                let label = f.cls ?? (f.file != nil ? FindingGroup.fileLabel : f.vc == nil ? FindingGroup.sessionLabel : FindingGroup.unknownLabel)
                drafts[label, default: Draft(label: label, value: nil)].findings.append(i)
            }
        }

        var groups: [FindingGroup] = []
        for d in drafts.values {
            var sids = Set<String>(), devices = Set<String>(), ranks = Set<Int>()
            var first: SessionInfo?
            for i in d.findings {
                guard let sid = findings[i].session, let s = view.sessionIndex[sid] else { continue }
                let info = view.data.sessions[s]
                sids.insert(sid)
                if let device = info.device { devices.insert(device) }
                ranks.insert(buildRank[s])
                if first == nil || BuildOrder.precedes(info, first!) { first = info }
            }
            var identities: [String] = []
            var seen = Set<String>()
            for i in (d.findings + d.heldFindings).sorted() where seen.insert(findings[i].identity).inserted {
                identities.append(findings[i].identity)
            }
            groups.append(FindingGroup(
                label: d.label, value: d.value, findings: d.findings,
                held: d.held.keys.sorted().map { HeldCount(cls: $0, count: d.held[$0]!) }, heldFindings: d.heldFindings,
                sessions: sids.count, devices: devices.count, builds: ranks.sorted(), firstBuild: first.map(BuildOrder.name),
                examples: d.findings.sorted { place[$0]! < place[$1]! }, identities: identities,
                newFindings: d.findings.filter { view.state(ofFinding: $0) == .new }.count))
        }
        groups.sort { a, b in
            if a.count != b.count { return a.count > b.count }
            if a.label != b.label { return a.label < b.label }
            return (a.value ?? "") < (b.value ?? "")
        }
        return RuleSection(rule: rule, findings: indices, sessions: Set(indices.compactMap { findings[$0].session }).count,
                           groups: groups, examples: order)
    }

    /// New ones first under a baseline, then the worst by the rule's `worstFirstBy` detail,
    /// else in report order.
    static func exampleOrder(_ rule: RuleInfo, _ indices: [Int], _ view: ReportView) -> [Int] {
        let worstBy = rule.report.worstFirstBy
        func worst(_ i: Int) -> Double { worstBy.flatMap { view.findings[i].detail[$0]?.number } ?? 0 }
        func fresh(_ i: Int) -> Int { view.state(ofFinding: i) == .known ? 1 : 0 }
        return indices.enumerated().sorted { a, b in
            if fresh(a.element) != fresh(b.element) { return fresh(a.element) < fresh(b.element) }
            if worstBy != nil, worst(a.element) != worst(b.element) { return worst(a.element) > worst(b.element) }
            return a.offset < b.offset
        }.map(\.element)
    }
}
