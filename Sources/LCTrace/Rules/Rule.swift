/// How bad a finding is. Ordered: info < warning < error.
public enum Severity: String, Comparable, CaseIterable, Sendable {
    case info, warning, error

    var rank: Int { self == .info ? 0 : self == .warning ? 1 : 2 }
    public static func < (a: Severity, b: Severity) -> Bool { a.rank < b.rank }
}

/// The report sections of rules.md.
public enum RuleFamily: String, CaseIterable, Sendable {
    case orphans, unbalanced, leaks, gaps, scene, quality
}

/// A rule's fixed identity (rules.md): id, name and severity are a contract.
public struct RuleInfo: Sendable, Equatable {
    public var id: String
    public var name: String
    public var severity: Severity
    public var family: RuleFamily
    /// One line: what it finds.
    public var summary: String
    /// What it finds and what it deliberately does not flag, in a few sentences (SARIF's full
    /// description).
    public var explanation = ""
    /// What usually fixes it (SARIF's help text).
    public var help = ""
    /// What its findings need from a report.
    public var report = ReportNeeds()
}

/// What a rule's findings need from a report, declared by the rule, so that no reporter
/// special-cases a rule id (design.md, habit 8).
public struct ReportNeeds: Sendable, Equatable {
    /// Examples ordered by this numeric `detail` value, largest first (`retained_ms`), …
    public var worstFirstBy: String?
    /// … under this title ("longest retained first").
    public var worstFirstTitle: String?
    /// Findings grouped by class and this `detail` value (how a leaked controller left), with
    /// counts of sessions, devices and builds and the first build each group was seen in.
    public var groupBy: String?
    /// The column title of that value in text ("left via").
    public var groupByTitle: String?
    /// The `detail` keys of the id and `since` of the instance whose finding holds this one (a
    /// child released with its leaked container): such findings are listed under that one.
    public var heldByKeys: [String]?

    public init(worstFirstBy: String? = nil, worstFirstTitle: String? = nil, groupBy: String? = nil,
                groupByTitle: String? = nil, heldByKeys: [String]? = nil) {
        self.worstFirstBy = worstFirstBy; self.worstFirstTitle = worstFirstTitle; self.groupBy = groupBy
        self.groupByTitle = groupByTitle; self.heldByKeys = heldByKeys
    }
}

/// Tuning of the rules (`lctrace report --grace …`).
public struct RuleSettings: Equatable, Sendable {
    /// LC301/LC302: how long a released controller may take to deinit.
    public var leakGrace: Int64 = 5_000_000_000
    /// LC401 thresholds of viewIsAppearing → viewDidAppear.
    public var gapAnimated: Int64 = 1_000_000_000
    public var gapPlain: Int64 = 250_000_000
    /// LC303: per-class limits of live instances (off when empty).
    public var maxLive: [String: Int] = [:]
    /// LC203: how long a session must go on past a stuck viewWillAppear.
    public var stuckAppearing: Int64 = 2_000_000_000
    /// LC102: sessions that end this soon after addChild are not flagged.
    public var didMoveEndSlack: Int64 = 1_000_000_000

    public init() {}

    /// A stable text form, stored with the findings so a report knows what they were built with.
    public var fingerprint: String {
        let live = maxLive.keys.sorted().map { "\($0)=\(maxLive[$0]!)" }.joined(separator: ",")
        return "grace=\(leakGrace);animated=\(gapAnimated);plain=\(gapPlain);max-live=\(live)"
    }
}

/// One finding, in the shape of rules.md's machine-readable output.
public struct Finding: Sendable, Equatable {
    public var rule: String
    public var name: String
    public var severity: Severity
    public var session: String?
    public var vc: String?
    public var since: Int64?
    public var cls: String?
    public var t: Int64?
    public var message: String
    public var evidence: [Int64]
    /// "low" in sessions with lost events: the missing events might have explained it.
    public var confidence: String
    /// For file-level findings (LC904): the file's path.
    public var file: String?
    /// Rule-specific values, e.g. how a leaked controller left ("how": "pop"), typed.
    public var detail: [String: DetailValue]
    /// (1.1) The defect's readable key (`FindingIdentity`) and its hash: equal for every
    /// occurrence of the same defect, whatever the session, device or build.
    public var identityKey: String
    public var identity: String
    /// The session's app (bundle id), build and device; nil for file-level findings.
    public var app: String?
    public var build: String?
    public var device: String?

    /// `key`: the parts of the identity key after `rule|app|` (rules.md 1.1), nil parts unknown.
    public init(rule: RuleInfo, session: String?, vc: String? = nil, since: Int64? = nil, cls: String? = nil,
                t: Int64?, message: String, evidence: [Int64], lowConfidence: Bool = false,
                file: String? = nil, key: [String?], app: String? = nil, build: String? = nil, device: String? = nil,
                detail: [String: DetailValue] = [:]) {
        self.rule = rule.id; self.name = rule.name; self.severity = rule.severity
        self.session = session; self.vc = vc; self.since = since; self.cls = cls; self.t = t
        self.message = message; self.evidence = evidence; self.confidence = lowConfidence ? "low" : "high"
        self.file = file; self.detail = detail
        self.app = app; self.build = build; self.device = device
        identityKey = FindingIdentity.key(rule: rule.id, app: app, parts: key)
        identity = FindingIdentity.hash(identityKey)
    }

    /// A finding read back from the database, with its stored identity.
    public init(stored rule: RuleInfo, session: String?, vc: String?, since: Int64?, cls: String?, t: Int64?,
                message: String, evidence: [Int64], confidence: String, file: String?, detail: [String: DetailValue],
                identityKey: String, identity: String, app: String?, build: String?, device: String?) {
        self.rule = rule.id; self.name = rule.name; self.severity = rule.severity
        self.session = session; self.vc = vc; self.since = since; self.cls = cls; self.t = t
        self.message = message; self.evidence = evidence; self.confidence = confidence
        self.file = file; self.detail = detail
        self.identityKey = identityKey; self.identity = identity
        self.app = app; self.build = build; self.device = device
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
public enum RuleScope: Sendable {
    /// Each instance, cycle, edge, attachment or anomaly on its own.
    case facts
    /// The session as a whole (its stats, its event counts, all its instances).
    case session
}

/// A checker: one per file under `Rules/`, judging a built `SessionModel`.
public protocol Rule {
    static var info: RuleInfo { get }
    static var scope: RuleScope { get }
    static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding]
}

extension Rule {
    public static var scope: RuleScope { .facts }
}

/// Every session-level rule, in report order. LC904 works on files, see `RejectedLinesRule`.
public enum RuleCatalog {
    // Immutable lists of metatypes: `nonisolated(unsafe)` because a protocol's metatype is
    // Sendable only with SendableMetatype (Swift 6.2), and the package builds with 6.0 too.
    nonisolated(unsafe) public static let sessionRules: [any Rule.Type] = [
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
    public static let all: [RuleInfo] = sessionRules.map { $0.info } + [RejectedLinesRule.info]

    private static let byID = Dictionary(all.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })

    public static func info(_ id: String) -> RuleInfo? { byID[id] }

    /// Runs every session rule over `model`; findings ordered by t, then rule.
    public static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        sorted(settle(findings(model, settings, factsOnly: false), lossy: model.isLossy))
    }

    /// The containment rules (LC101–LC105) that an instance without a recorded `init` never
    /// gets in a session with lost events (1.1): its containment history is incomplete.
    static let containmentRules: Set<String> = ["LC101", "LC102", "LC103", "LC104", "LC105"]

    /// What only the session's end decides, applied to all of a session's findings (those of
    /// its batches too, which were judged before anyone knew whether events would be lost):
    /// in a lossy session every finding is low confidence, and the instances LC902 names (no
    /// `init` recorded) get no containment finding.
    static func settle(_ findings: [Finding], lossy: Bool) -> [Finding] {
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
    static func findings(_ model: SessionModel, _ settings: RuleSettings, factsOnly: Bool) -> [Finding] {
        var findings: [Finding] = []
        for rule in sessionRules where !factsOnly || rule.scope == .facts { findings += rule.check(model, settings) }
        return findings
    }

    /// By t, rule, instance; then by evidence and message, so that the order never depends on
    /// which batch a finding came from.
    static func sorted(_ findings: [Finding]) -> [Finding] {
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
enum Say {
    static func ms(_ ns: Int64) -> String {
        let ms = Double(ns) / 1_000_000
        if ms >= 10_000 { return String(format: "%.1f s", ms / 1000) }
        if ms >= 1000 { return String(format: "%.2f s", ms / 1000) }
        return String(format: "%.0f ms", ms)
    }

    static func seconds(_ ns: Int64) -> String {
        let s = Double(ns) / 1_000_000_000
        return s == s.rounded() ? String(format: "%.0f s", s) : String(format: "%.1f s", s)
    }

    static func cls(_ model: SessionModel, _ key: InstanceKey) -> String {
        model.cls(of: key) ?? key.vc
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
