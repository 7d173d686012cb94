import LCTraceModel

/// The report sections of rules.md.
package enum RuleFamily: String, CaseIterable, Sendable {
    case orphans, unbalanced, leaks, gaps, scene, quality
}

/// A rule's fixed identity (rules.md): id, name and severity are a contract.
package struct RuleInfo: Sendable, Equatable {
    package var id: String
    package var name: String
    package var severity: Severity
    package var family: RuleFamily
    /// One line: what it finds.
    package var summary: String
    /// What it finds and what it deliberately does not flag, in a few sentences (SARIF's full
    /// description).
    package var explanation = ""
    /// What usually fixes it (SARIF's help text).
    package var help = ""

    /// What its findings need from a report.
    package var report = ReportNeeds()
    /// The parts of its identity key after `rule|app|`, in words, and an example key: the
    /// rule reference's identity table is made from them.
    package var keyParts = "nothing more"
    package var keyExample = ""

    package init(id: String, name: String, severity: Severity, family: RuleFamily, summary: String,
                 explanation: String = "", help: String = "", report: ReportNeeds = ReportNeeds(),
                 keyParts: String = "nothing more", keyExample: String = "") {
        self.id = id; self.name = name; self.severity = severity; self.family = family; self.summary = summary
        self.explanation = explanation; self.help = help; self.report = report
        self.keyParts = keyParts; self.keyExample = keyExample
    }
}

/// What a rule's findings need from a report, declared by the rule, so that no reporter
/// special-cases a rule id (design.md, habit 8).
package struct ReportNeeds: Sendable, Equatable {
    /// Examples ordered by this numeric `detail` value, largest first (`retained_ms`), …
    package var worstFirstBy: String?
    /// … under this title ("longest retained first").
    package var worstFirstTitle: String?
    /// Findings grouped by class and this `detail` value (how a leaked controller left), with
    /// counts of sessions, devices and builds and the first build each group was seen in.
    package var groupBy: String?
    /// The column title of that value in text ("left via").
    package var groupByTitle: String?
    /// The `detail` keys of the id and `since` of the instance whose finding holds this one (a
    /// child released with its leaked container): such findings are listed under that one.
    package var heldByKeys: [String]?
    /// Where in the app's sources a finding belongs (SARIF's physical location).
    package var sourcePlace = SourcePlace.declaringClass

    package init(worstFirstBy: String? = nil, worstFirstTitle: String? = nil, groupBy: String? = nil,
                groupByTitle: String? = nil, heldByKeys: [String]? = nil, sourcePlace: SourcePlace = .declaringClass) {
        self.worstFirstBy = worstFirstBy; self.worstFirstTitle = worstFirstTitle; self.groupBy = groupBy
        self.groupByTitle = groupByTitle; self.heldByKeys = heldByKeys; self.sourcePlace = sourcePlace
    }
}

/// Where a rule's findings sit in the app's sources: code scanning shows a finding only on a file.
package enum SourcePlace: Sendable, Equatable {
    /// The declaration of the finding's class, or, for a class the app does not declare (a
    /// UIKit container), of the nearest related class it does: parent, presenter, holder.
    case declaringClass
    /// The app delegate (else the scene delegate): the app's life cycle is implemented there.
    case appDelegate
    /// Nowhere: a finding about the traces themselves, which no line of the app explains.
    case none
}

/// Tuning of the rules (`lctrace report --grace …`).
package struct RuleSettings: Equatable, Sendable {
    /// LC301/LC302: how long a released controller may take to deinit.
    package var leakGrace: Int64 = 5_000_000_000
    /// LC401 thresholds of viewIsAppearing → viewDidAppear.
    package var gapAnimated: Int64 = 1_000_000_000
    package var gapPlain: Int64 = 250_000_000
    /// LC303: per-class limits of live instances (off when empty).
    package var maxLive: [String: Int] = [:]
    /// LC203: how long a session must go on past a stuck viewWillAppear.
    package var stuckAppearing: Int64 = 2_000_000_000
    /// LC102: sessions that end this soon after addChild are not flagged.
    var didMoveEndSlack: Int64 = 1_000_000_000

    package init() {}

    /// The settings as one canonical text, stored with the findings so that a report knows
    /// what they were built with (equal settings, equal text).
    package var canonicalText: String {
        let live = maxLive.keys.sorted().map { "\($0)=\(maxLive[$0]!)" }.joined(separator: ",")
        // The rules' version and ids too: findings stored by older rules, or before a rule was
        // added, are stale as surely as findings stored with another grace.
        return "\(Self.rulesText);grace=\(leakGrace);animated=\(gapAnimated);plain=\(gapPlain);max-live=\(live)"
    }

    /// The part of `canonicalText` that names the rules, whatever the tuning: stored findings
    /// of the rules that need none (LC903) are current when it matches.
    package static let rulesText = "rules=\(RuleCatalog.rulesVersion):\(RuleCatalog.all.map(\.id).joined(separator: ","))"
}

package extension Finding {
    /// `key`: the parts of the identity key after `rule|app|` (rules.md 1.1), nil parts unknown.
    init(rule: RuleInfo, session: String?, vc: String? = nil, since: Int64? = nil, cls: String? = nil,
                t: Int64?, message: String, evidence: [Int64], lowConfidence: Bool = false,
                file: String? = nil, key: [String?], app: String? = nil, build: String? = nil, device: String? = nil,
                detail: [String: DetailValue] = [:]) {
        let identityKey = FindingIdentity.key(rule: rule.id, app: app, parts: key)
        self.init(rule: rule.id, name: rule.name, severity: rule.severity, session: session, vc: vc, since: since,
                  cls: cls, t: t, message: message, evidence: evidence, confidence: lowConfidence ? "low" : "high",
                  file: file, detail: detail, identityKey: identityKey, identity: FindingIdentity.hash(identityKey),
                  app: app, build: build, device: device)
    }

    /// A finding read back from the database, with its stored identity.
    init(stored rule: RuleInfo, session: String?, vc: String?, since: Int64?, cls: String?, t: Int64?,
                message: String, evidence: [Int64], confidence: String, file: String?, detail: [String: DetailValue],
                identityKey: String, identity: String, app: String?, build: String?, device: String?) {
        self.init(rule: rule.id, name: rule.name, severity: rule.severity, session: session, vc: vc, since: since,
                  cls: cls, t: t, message: message, evidence: evidence, confidence: confidence, file: file,
                  detail: detail, identityKey: identityKey, identity: identity, app: app, build: build, device: device)
    }

    /// A finding about one instance of `model`; `key` after `rule|app|class|`.
    init(_ rule: RuleInfo, _ model: SessionModel, _ instance: InstanceKey, t: Int64?, _ message: String,
         evidence: [Int64], key: [String?] = [], detail: [String: DetailValue] = [:]) {
        let cls = model.cls(of: instance)
        let m = model.metadata
        self.init(rule: rule, session: model.sid, vc: instance.vc, since: instance.since, cls: cls,
                  t: t, message: message, evidence: evidence, lowConfidence: model.isLossy,
                  key: [cls] + key, app: m.app, build: m.build, device: m.device, detail: detail)
    }

    /// A finding about the whole session; `key` after `rule|app|`.
    init(_ rule: RuleInfo, _ model: SessionModel, t: Int64?, _ message: String, evidence: [Int64],
         key: [String?] = [], detail: [String: DetailValue] = [:]) {
        let m = model.metadata
        self.init(rule: rule, session: model.sid, t: t, message: message, evidence: evidence,
                  lowConfidence: model.isLossy, key: key, app: m.app, build: m.build, device: m.device, detail: detail)
    }
}

/// What a rule judges. A long session's model is built in batches (`ModelBuilder.compact`):
/// rules that judge facts one by one run on each batch of final facts and on what is left at
/// the end; rules about the whole session run once, on the model left at the end.
package enum RuleScope: Sendable {
    /// Each instance, cycle, edge, attachment or anomaly on its own.
    case facts
    /// The session as a whole (its stats, its event counts, all its instances).
    case session
}

/// A checker: one per file under `Rules/`, judging a built `SessionModel`.
package protocol Rule {
    static var info: RuleInfo { get }
    static var scope: RuleScope { get }
    static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding]
}

package extension Rule {
    static var scope: RuleScope { .facts }
}

/// Every session-level rule, in report order. LC904 works on files, see `RejectedLinesRule`.
package enum RuleCatalog {
    /// The version of docs/rule-reference.md these rules implement.
    package static let rulesVersion = "1.2"

    // Immutable lists of metatypes: `nonisolated(unsafe)` because a protocol's metatype is
    // Sendable only with SendableMetatype (Swift 6.2), and the package builds with 6.0 too.
    nonisolated(unsafe) package static let sessionRules: [any Rule.Type] = [
        OrphanViewRule.self, MissingDidMoveRule.self, MissingWillMoveRule.self, ViewLeftBehindRule.self,
        AttachBeforeAddRule.self,
        DeinitWhileVisibleRule.self, DoubleAppearRule.self, StuckAppearingRule.self,
        DisappearWithoutAppearRule.self, LifecycleOrderRule.self,
        LeakedControllerRule.self, LeakUnconfirmedRule.self, InstanceGrowthRule.self,
        SlowAppearanceRule.self, MissingIsAppearingRule.self,
        AppDelegateLifecycleRule.self, NoSceneLifecycleRule.self,
        LostEventsRule.self, UnknownInstanceRule.self, ClockBackwardsRule.self,
    ]

    /// Every rule, in report order (made once: reports look rules up per finding).
    /// Every rule, in report order: by id (the families' ranges follow: LC1xx, LC2xx, …).
    package static let all: [RuleInfo] = (sessionRules.map { $0.info } + [RejectedLinesRule.info]).sorted { $0.id < $1.id }

    private static let byID = Dictionary(all.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })

    package static func info(_ id: String) -> RuleInfo? { byID[id] }

    /// LC903's id: a session without its finding has a clock that never went back, so a
    /// timeline reads a window of its time as a range of seqs.
    package static let clockBackwardsID = ClockBackwardsRule.info.id

    /// Runs every session rule over `model`; findings ordered by t, then rule.
    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        sorted(settle(findings(model, settings, factsOnly: false), lossy: model.isLossy))
    }

    /// The containment rules (LC101–LC105) that an instance without a recorded `init` never
    /// gets in a session with lost events (1.1): its containment history is incomplete.
    package static let containmentRules: Set<String> = ["LC101", "LC102", "LC103", "LC104", "LC105"]

    /// What only the session's end decides, applied to all of a session's findings (those of
    /// its batches too, which were judged before anyone knew whether events would be lost):
    /// in a lossy session every finding is low confidence, and the instances LC902 names (no
    /// `init` recorded) get no containment finding.
    package static func settle(_ findings: [Finding], lossy: Bool) -> [Finding] {
        guard lossy else { return findings.map { var f = $0; f.confidence = "high"; return f } }
        let uninitialised = Set(findings.filter { $0.rule == UnknownInstanceRule.info.id }.compactMap { f in
            f.vc.map { InstanceKey(vc: $0, since: f.since ?? -1) }
        })
        return findings.compactMap { f in
            if containmentRules.contains(f.rule), let vc = f.vc,
               uninitialised.contains(InstanceKey(vc: vc, since: f.since ?? -1)) { return nil }
            var f = f
            f.confidence = "low"
            return f
        }
    }

    /// The findings of the rules that judge facts one by one (a batch), or of all of them.
    package static func findings(_ model: SessionModel, _ settings: RuleSettings, factsOnly: Bool) -> [Finding] {
        var findings: [Finding] = []
        for rule in sessionRules where !factsOnly || rule.scope == .facts { findings += rule.check(model, settings) }
        return findings
    }

    /// By t, rule, instance; then by evidence and message, so that the order never depends on
    /// which batch a finding came from.
    package static func sorted(_ findings: [Finding]) -> [Finding] {
        func key(_ f: Finding) -> (Int64, String, String, Int64) { (f.t ?? -1, f.rule, f.vc ?? "", f.since ?? -1) }
        return findings.sorted {
            let (a, b) = (key($0), key($1))
            if a != b { return a < b }
            if $0.evidence != $1.evidence { return $0.evidence.lexicographicallyPrecedes($1.evidence) }
            return $0.message < $1.message
        }
    }
}

/// Formatting helpers for messages: short, lowercase, naming values.
enum MessageText {
    package static func ms(_ ns: Int64) -> String {
        let ms = Double(ns) / 1_000_000
        if ms >= 10_000 { return String(format: "%.1f s", ms / 1000) }
        if ms >= 1000 { return String(format: "%.2f s", ms / 1000) }
        return String(format: "%.0f ms", ms)
    }
    /// A duration the rules count in foreground time, said as such when it differs from the
    /// time that passed (`elapsed`): "62.0 s", or "3.2 s of foreground time (62.0 s in all)".
    package static func foreground(_ ns: Int64, elapsed: Int64) -> String {
        ns == elapsed ? ms(ns) : "\(ms(ns)) of foreground time (\(ms(elapsed)) in all)"
    }


    package static func seconds(_ ns: Int64) -> String {
        let s = Double(ns) / 1_000_000_000
        return s == s.rounded() ? String(format: "%.0f s", s) : String(format: "%.1f s", s)
    }

    package static func cls(_ model: SessionModel, _ key: InstanceKey) -> String {
        model.cls(of: key) ?? key.vc
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
