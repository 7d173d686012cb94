import Foundation
import LCTraceModel
import LCTraceRules
import LCTraceStore

/// Where SARIF puts a defect: a line of the app's sources.
struct SourcePlacement: Sendable, Equatable {
    package var location: SourceLocation
    /// The class declared there (the finding's own, a related one, or a delegate).
    package var placedOn: String
    /// How that class relates to the finding: `class`, `parent`, `presenter`, `holder`,
    /// `app delegate`, `scene delegate`.
    package var via: String
}

/// Every identity's place in the app's sources under `--source-root`, as its rule declares
/// (`ReportNeeds.sourcePlace`): GitHub code scanning neither shows nor accepts a result
/// without a file, so SARIF lists the identities without one as notifications instead.
package struct SourcePlacements: Sendable {
    /// Identity → where it sits; an identity without an entry has no file.
    var byIdentity: [String: SourcePlacement] = [:]
    /// The walk of the sources stopped at `SourceIndex.entryLimit` entries: some declarations
    /// may not have been seen.
    package var searchCut = false
    /// How many related instances one identity's search reads at most: its first findings'.
    static let findingsSearched = 5
    /// How many containers and presenters up the search goes from the finding's instance.
    static let depth = 4

    package init() {}

    /// Identities without a file: those of trace-quality rules, which no line of the app
    /// explains, and the others (no declaration found, or no source root).
    package func unplaced(_ view: ReportView) -> (aboutTraces: Int, notFound: Int) {
        var out = (aboutTraces: 0, notFound: 0)
        for g in view.identities where byIdentity[g.identity] == nil {
            if g.rule.report.sourcePlace == .none { out.aboutTraces += 1 } else { out.notFound += 1 }
        }
        return out
    }

    /// Finds the places of `view`'s identities under `view.options.sourceRoot` (none without
    /// one): one walk of the sources for the findings' classes and the delegates, and, for a
    /// framework's class (a UIKit container), its related controllers from the database and
    /// a second walk for their classes.
    package static func gather(_ view: ReportView, db: Storage) throws -> SourcePlacements {
        var out = SourcePlacements()
        guard let root = view.options.sourceRoot else { return out }
        let own = Set(view.identities.filter { $0.rule.report.sourcePlace == .declaringClass }.compactMap(\.cls))
        var scan = SourceIndex.scan(classes: own, under: root)
        var chains: [Int: [(cls: String, via: String)]] = [:]
        let query = RelatedControllersQuery(db: db.backend.reader)
        for (k, g) in view.identities.enumerated() where g.rule.report.sourcePlace == .declaringClass {
            guard let cls = g.cls, scan.classes[cls] == nil, isFrameworkClass(cls) else { continue }
            chains[k] = try related(g, view, query: query)
        }
        let wanted = Set(chains.values.flatMap { $0.map(\.cls) })
        if !wanted.subtracting(scan.classes.keys).isEmpty {
            scan = SourceIndex.scan(classes: own.union(wanted), under: root)
        }
        out.searchCut = scan.searchCut
        for (k, g) in view.identities.enumerated() {
            switch g.rule.report.sourcePlace {
            case .none:
                continue
            case .appDelegate:
                if let d = scan.appDelegate {
                    out.byIdentity[g.identity] = SourcePlacement(location: d.location, placedOn: d.cls, via: "app delegate")
                } else if let d = scan.sceneDelegate {
                    out.byIdentity[g.identity] = SourcePlacement(location: d.location, placedOn: d.cls, via: "scene delegate")
                }
            case .declaringClass:
                guard let cls = g.cls else { continue }
                let candidates = [(cls: cls, via: "class")] + (chains[k] ?? [])
                if let c = candidates.first(where: { scan.classes[$0.cls] != nil }) {
                    out.byIdentity[g.identity] = SourcePlacement(location: scan.classes[c.cls]!, placedOn: c.cls, via: c.via)
                }
            }
        }
        return out
    }

    /// Prefixes of Apple's frameworks' classes (`UINavigationController`, `SFSafariViewController`,
    /// `MFMailComposeViewController` …), each followed by a capital.
    static let frameworkPrefixes = ["UI", "NS", "SF", "AV", "MF", "MK", "PH", "PK", "CN", "EK", "GK", "QL", "SK", "WK", "AS", "VN",
                                    "CP", "INUI"]

    /// Whether `cls` is a framework's (no app declares it): only such a finding moves to a
    /// related class. An app class not found under the root stays where it is, without a file,
    /// rather than land on a file that does not declare it.
    static func isFrameworkClass(_ cls: String) -> Bool {
        if cls.hasPrefix("_") || cls.contains("SwiftUI") { return true }
        return frameworkPrefixes.contains { prefix in
            cls.hasPrefix(prefix) && cls.dropFirst(prefix.count).first.map { $0.isUppercase } == true
        }
    }

    /// The classes related to `g`'s first findings' instances, nearest first: per level of
    /// containers and presenters, the parent, then the presenter, then (the finding's own
    /// instance only) what held it when it leaked.
    static func related(_ g: IdentityGroup, _ view: ReportView,
                        query: RelatedControllersQuery) throws -> [(cls: String, via: String)] {
        var out: [(cls: String, via: String)] = []
        var seen: Set<String> = g.cls.map { [$0] } ?? []
        func add(_ instance: RelatedControllersQuery.Instance?, _ via: String) -> RelatedControllersQuery.Instance? {
            guard let instance, let cls = instance.cls else { return nil }
            if seen.insert(cls).inserted { out.append((cls, via)) }
            return instance
        }
        for i in g.firstFindings.prefix(findingsSearched) {
            let f = view.findings[i]
            guard let session = view.session(f.session), let vc = f.vc, let since = f.since else { continue }
            var level = [RelatedControllersQuery.Instance(vc: vc, since: since, cls: f.cls)]
            for depth in 0..<depth where !level.isEmpty {
                var next: [RelatedControllersQuery.Instance] = []
                for instance in level {
                    let (parent, presenter) = try query.related(session: session.id, vc: instance.vc, since: instance.since)
                    next += [add(parent, "parent"), add(presenter, "presenter")].compactMap { $0 }
                    if depth == 0, let keys = g.rule.report.heldByKeys, keys.count == 2,
                       case .text(let holder)? = f.detail[keys[0]], case .int(let at)? = f.detail[keys[1]] {
                        next += [add(try query.instance(session: session.id, vc: holder, at: at), "holder")].compactMap { $0 }
                    }
                }
                level = next
            }
        }
        return out
    }
}
