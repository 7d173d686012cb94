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
    /// Its findings.
    package var count: Int
    /// Distinct sessions of its findings.
    package var sessions: Int
    /// By class, or by class and the rule's `groupBy` detail; most findings first.
    package var groups: [FindingGroup]
    /// Its first findings in example order (`ReportOptions.examples` of them): new ones first
    /// under a baseline, then the worst by the rule's `worstFirstBy` detail, else report order.
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
    /// Headline findings.
    package var count: Int
    /// The first headline findings (indices into `ReportView.findings`, at most
    /// `GroupTally.firstKept`), in report order.
    var firstFindings: [Int]
    /// Findings held by a headline finding's instance (a child released with its leaked
    /// container): listed under it, counted by class.
    package var held: [HeldCount]
    /// Distinct sessions, devices and builds of the headline findings.
    package var sessions: Int
    package var devices: Int
    /// Distinct builds ("5.2.1 (812)"), oldest first; indices into `ReportView.builds`.
    package var builds: [Int]
    /// The build of the oldest session showing it ("5.2.1 (812)").
    var firstBuild: String?
    /// The first headline findings in example order (as `RuleSection.examples`).
    package var examples: [Int]
    /// Distinct identities of the group's findings (headline and held), in report order.
    package var identities: [String]
    /// Under a baseline: headline findings of new identities.
    var newFindings: Int
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

/// Builds the sections of a view once (text and HTML both lay them out) from what the tally
/// gathered.
enum SectionBuilder {
    /// `keep`: keeps findings the view shows and gives their indices.
    static func sections(_ tally: ReportTally, options: ReportOptions, keep: ([(Int, Finding)]) -> [Int]) -> [FamilySection] {
        var out: [FamilySection] = []
        for family in RuleFamily.allCases where options.families.contains(family) {
            var rules: [RuleSection] = []
            for rule in RuleCatalog.all where rule.family == family {
                guard let r = tally.rules[rule.id], r.count > 0 else { continue }
                rules.append(section(rule, r, tally: tally, keep: keep))
            }
            out.append(FamilySection(family: family, rules: rules))
        }
        return out
    }

    static func section(_ rule: RuleInfo, _ r: RuleTally, tally: ReportTally, keep: ([(Int, Finding)]) -> [Int]) -> RuleSection {
        let builds = tally.builds
        var groups = r.groups.values.map { d in
            FindingGroup(
                label: d.label, value: d.value, count: d.count, firstFindings: keep(d.firstFindings),
                held: d.held.keys.sorted().map { HeldCount(cls: $0, count: d.held[$0]!) },
                sessions: d.sessions, devices: d.devices.count, builds: d.builds.sorted(),
                firstBuild: d.first.map { builds.names[builds.rank(ofSession: $0)] },
                examples: keep(d.examples.items.map { ($0.key.index, $0.finding) }), identities: d.identities,
                newFindings: d.newFindings)
        }
        groups.sort { a, b in
            if a.count != b.count { return a.count > b.count }
            if a.label != b.label { return a.label < b.label }
            return (a.value ?? "") < (b.value ?? "")
        }
        return RuleSection(rule: rule, count: r.count, sessions: r.sessions, groups: groups,
                           examples: keep(r.examples.items.map { ($0.key.index, $0.finding) }))
    }
}
