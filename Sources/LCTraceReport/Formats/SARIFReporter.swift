import Foundation
import LCTraceFormat
import LCTraceModel
import LCTraceRules

/// `--format sarif`: SARIF 2.1.0 for code scanning (GitHub, GitLab, Azure DevOps). Every rule
/// of the catalogue is a `reportingDescriptor`; there is one result per identity, not per
/// occurrence (a test campaign would exceed GitHub's 25,000 results), with `partialFingerprints`
/// from the identity, so code scanning follows one defect across runs. Its message is the same
/// text for the same identity in every run (the counts, builds and the first occurrence's own
/// words are in `properties`), so `sarif diff` sees a persisting defect as persisting. GitHub
/// neither shows nor accepts a result without a file: a result sits on the app's sources under
/// `--source-root` (`uriBaseId` SRCROOT) where its rule says (`SourcePlacements`), and an
/// identity without a file, such as every trace-quality finding, is a notification of the
/// run's invocation instead.
enum SARIFReporter: Reporter {
    package static let id = "sarif"
    package static let summary = "SARIF 2.1.0, one result per identity, for code scanning"
    package static let inputs: ReportInputs = [.sourcePlacements]
    static let fingerprintKey = "lctraceIdentity/v1"

    package static func render(_ view: ReportView) -> String {
        let rules = RuleCatalog.all
        let ruleIndex = Dictionary(rules.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a })
        var json = JSONWriter(capacity: 64 << 10)
        json.beginObject()
        json.key("$schema"); json.string("https://json.schemastore.org/sarif-2.1.0.json")
        json.key("version"); json.string("2.1.0")
        json.key("runs")
        json.beginArray()
        json.beginObject()
        // The run's keys each on a line, a rule, a result or a notification a line.
        json.layout("\n "); json.key("tool")
        json.beginObject()
        json.key("driver")
        json.beginObject()
        json.key("name"); json.string("lctrace")
        json.key("version"); json.string(ToolInfo.version)
        json.key("rules")
        json.beginArray()
        for rule in rules {
            json.layout("\n  ")
            descriptor(rule, into: &json)
        }
        json.endArray(layout: "\n ")
        json.endObject()
        json.endObject()
        let prefix = view.options.sourceRoot.map { rootPrefix($0, base: view.options.sourceBase ?? $0) } ?? ""
        let placed = view.identities.filter { view.placements.byIdentity[$0.identity] != nil }
        let unplaced = view.identities.filter { view.placements.byIdentity[$0.identity] == nil }
        json.layout("\n "); json.key("invocations")
        json.beginArray()
        json.beginObject()
        json.key("executionSuccessful"); json.bool(true)
        if !unplaced.isEmpty {
            json.key("toolExecutionNotifications")
            json.beginArray()
            for g in unplaced {
                json.layout("\n  ")
                notification(g, view, ruleIndex: ruleIndex[g.rule.id] ?? 0, into: &json)
            }
            json.endArray(layout: "\n ")
        }
        json.endObject()
        json.endArray()
        if let root = view.options.sourceRoot {
            json.layout("\n "); json.key("originalUriBaseIds")
            json.beginObject()
            json.key("SRCROOT")
            json.beginObject()
            json.key("uri"); json.string(directoryURI(view.options.sourceBase ?? root))
            json.endObject()
            json.endObject()
        }
        json.layout("\n "); json.key("results")
        json.beginArray()
        for g in placed {
            json.layout("\n  ")
            result(g, view, ruleIndex: ruleIndex[g.rule.id] ?? 0, prefix: prefix, into: &json)
        }
        json.endArray(layout: "\n ")
        json.endObject()
        json.endArray()
        json.endObject()
        json.raw("\n")
        return json.text
    }

    package static func level(_ s: Severity) -> String {
        switch s {
        case .error: return "error"
        case .warning: return "warning"
        case .info: return "note"
        }
    }

    /// A rule of the catalogue as a `reportingDescriptor`.
    static func descriptor(_ r: RuleInfo, into json: inout JSONWriter) {
        func text(_ key: String, _ value: String) {
            json.key(key)
            json.beginObject()
            json.key("text"); json.string(value)
            json.endObject()
        }
        json.beginObject()
        json.key("id"); json.string(r.id)
        json.key("name"); json.string(r.name)
        text("shortDescription", r.summary)
        text("fullDescription", r.explanation.isEmpty ? r.summary : r.explanation)
        text("help", r.help.isEmpty ? r.summary : r.help)
        json.key("defaultConfiguration")
        json.beginObject()
        json.key("level"); json.string(level(r.severity))
        json.endObject()
        json.key("properties")
        json.beginObject()
        json.key("family"); json.string(r.family.rawValue)
        json.key("tags")
        json.beginArray()
        json.string("uikit")
        json.string(r.family.rawValue)
        json.endArray()
        json.endObject()
        json.endObject()
    }

    /// The same text for the same identity in every run, nothing in it that counts or times:
    /// on its first line what the rule finds (the same for all of a rule's results, so tools
    /// that group results by rule and first line, as sarif-tools' `diff` does, keep one
    /// group from run to run), on the second the class (else the app), the rest of the
    /// identity key and the app.
    static func message(_ g: IdentityGroup) -> String {
        let key = g.identityKey.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        var rest = Array(key.dropFirst(2))
        if let cls = g.cls, rest.first == cls { rest.removeFirst() }
        rest.removeAll { $0 == FindingIdentity.unknown || $0.isEmpty }
        let app = key.count > 1 && key[1] != FindingIdentity.unknown ? key[1] : g.app
        var text = "\(g.rule.summary)\n\(g.cls ?? app ?? FindingIdentity.unknown)"
        if !rest.isEmpty { text += " (\(rest.joined(separator: ", ")))" }
        if g.cls != nil, let app { text += " in \(app)" }
        return text
    }

    /// An identity as a `result`: its message, where it sits in the app's sources, the class
    /// (or app) it is about as a logical location, its fingerprint and its counts.
    /// `prefix`: the source root's path under `SRCROOT` ("" or "App/").
    static func result(_ g: IdentityGroup, _ view: ReportView, ruleIndex: Int, prefix: String, into json: inout JSONWriter) {
        json.beginObject()
        json.key("ruleId"); json.string(g.rule.id)
        json.key("ruleIndex"); json.int(ruleIndex)
        json.key("level"); json.string(level(g.rule.severity))
        json.key("message")
        json.beginObject()
        json.key("text"); json.string(message(g))
        json.endObject()
        let placement = view.placements.byIdentity[g.identity]
        locations(g, view, placement: placement, prefix: prefix, into: &json)
        json.key("partialFingerprints")
        json.beginObject()
        json.key(fingerprintKey); json.string(g.identity)
        json.endObject()
        if let state = g.state { json.key("baselineState"); json.string(state == .new ? "new" : "unchanged") }
        properties(g, view, placement: placement, into: &json)
        json.endObject()
    }

    /// An identity without a file as a notification of the invocation: the same message,
    /// rule, logical location and properties as a result, and the fingerprint among them.
    static func notification(_ g: IdentityGroup, _ view: ReportView, ruleIndex: Int, into json: inout JSONWriter) {
        json.beginObject()
        json.key("level"); json.string(level(g.rule.severity))
        json.key("message")
        json.beginObject()
        json.key("text"); json.string(message(g))
        json.endObject()
        locations(g, view, placement: nil, prefix: "", into: &json)
        json.key("associatedRule")
        json.beginObject()
        json.key("id"); json.string(g.rule.id)
        json.key("index"); json.int(ruleIndex)
        json.endObject()
        properties(g, view, placement: nil, into: &json)
        json.endObject()
    }

    /// `locations`: the file and line of `placement` (with one), and the class or app.
    static func locations(_ g: IdentityGroup, _ view: ReportView, placement: SourcePlacement?, prefix: String,
                          into json: inout JSONWriter) {
        let example = view.findings[g.first]
        json.key("locations")
        json.beginArray()
        json.beginObject()
        if let placement {
            json.key("physicalLocation")
            json.beginObject()
            json.key("artifactLocation")
            json.beginObject()
            json.key("uri"); json.string(pathURI(prefix + placement.location.path))
            json.key("uriBaseId"); json.string("SRCROOT")
            json.endObject()
            json.key("region")
            json.beginObject()
            json.key("startLine"); json.int(placement.location.line)
            json.endObject()
            json.endObject()
        }
        json.key("logicalLocations")
        json.beginArray()
        json.beginObject()
        json.key("name"); json.string(g.cls ?? g.app ?? example.file ?? FindingIdentity.unknown)
        json.key("kind"); json.string(g.cls == nil ? "module" : "type")
        json.endObject()
        json.endArray()
        json.endObject()
        json.endArray()
    }

    /// `properties`: the identity, counts, builds, the first occurrence's own message, and
    /// which class the file declares when it is not the finding's own.
    static func properties(_ g: IdentityGroup, _ view: ReportView, placement: SourcePlacement?, into json: inout JSONWriter) {
        let example = view.findings[g.first]
        json.key("properties")
        json.beginObject()
        if placement == nil {
            json.key("identity"); json.string(g.identity)
            if let state = g.state { json.key("baseline_state"); json.string(state == .new ? "new" : "unchanged") }
        }
        json.key("identity_key"); json.string(g.identityKey)
        json.key("occurrences"); json.int(g.occurrences)
        json.key("sessions"); json.int(g.sessions)
        json.key("devices"); json.int(g.devices)
        json.key("builds")
        json.beginArray()
        for build in g.builds { json.string(build) }
        json.endArray()
        if let app = g.app { json.key("app"); json.string(app) }
        if let file = example.file { json.key("file"); json.string(file) }
        json.key("example"); json.string(example.message)
        if let placement, placement.via != "class" {
            json.key("placed_on"); json.string(placement.placedOn)
            json.key("placed_via"); json.string(placement.via)
        }
        json.endObject()
    }

    /// The path of `root` under `base` with a trailing `/` ("" when they are the same folder
    /// or `root` is not under `base`).
    static func rootPrefix(_ root: String, base: String) -> String {
        let r = URL(fileURLWithPath: root).standardizedFileURL.resolvingSymlinksInPath().path
        let b = URL(fileURLWithPath: base).standardizedFileURL.resolvingSymlinksInPath().path
        guard r != b, r.hasPrefix(b.hasSuffix("/") ? b : b + "/") else { return "" }
        return String(r.dropFirst(b.hasSuffix("/") ? b.count : b.count + 1)) + "/"
    }

    /// `file:///abs/dir/` for the source root.
    static func directoryURI(_ root: String) -> String {
        var path = URL(fileURLWithPath: root).standardizedFileURL.path
        if !path.hasSuffix("/") { path += "/" }
        return "file://" + pathURI(path)
    }

    /// A relative or absolute path as a URI reference: segments percent-encoded.
    static func pathURI(_ path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: ";?#[]")
        return path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
    }
}
