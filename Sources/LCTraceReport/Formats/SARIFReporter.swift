import Foundation
import LCTraceFormat
import LCTraceModel
import LCTraceRules

/// `--format sarif`: SARIF 2.1.0 for code scanning (GitHub, GitLab, Azure DevOps). Every rule
/// of the catalogue is a `reportingDescriptor`; there is one result per identity, not per
/// occurrence (a test campaign would exceed GitHub's 25,000 results), with the occurrences,
/// sessions and builds in its message and `properties`, and `partialFingerprints` from the
/// identity, so code scanning follows one defect across runs. With `--source-root` the result
/// points at the file declaring the class (`uriBaseId` SRCROOT).
enum SARIFReporter: Reporter {
    package static let id = "sarif"
    package static let summary = "SARIF 2.1.0, one result per identity, for code scanning"
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
        // The run's keys each on a line, a rule or a result a line.
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
        if let root = view.options.sourceRoot {
            json.layout("\n "); json.key("originalUriBaseIds")
            json.beginObject()
            json.key("SRCROOT")
            json.beginObject()
            json.key("uri"); json.string(directoryURI(root))
            json.endObject()
            json.endObject()
        }
        json.layout("\n "); json.key("results")
        json.beginArray()
        for g in view.identities {
            json.layout("\n  ")
            result(g, view, ruleIndex: ruleIndex[g.rule.id] ?? 0, into: &json)
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

    /// An identity as a `result`: its first occurrence's message with the counts, where the
    /// class is declared (with `--source-root`), and its fingerprint.
    static func result(_ g: IdentityGroup, _ view: ReportView, ruleIndex: Int, into json: inout JSONWriter) {
        let example = view.findings[g.findings[0]]
        let builds = g.builds.count <= 1 ? (g.builds.first.map { "build \($0)" } ?? "")
            : "builds \(g.builds.first!) to \(g.builds.last!)"
        var summary = "\(g.occurrences) occurrence\(g.occurrences == 1 ? "" : "s")"
        if g.sessions > 0 { summary += " in \(g.sessions) session\(g.sessions == 1 ? "" : "s")" }
        if !builds.isEmpty { summary += ", \(builds)" }
        json.beginObject()
        json.key("ruleId"); json.string(g.rule.id)
        json.key("ruleIndex"); json.int(ruleIndex)
        json.key("level"); json.string(level(g.rule.severity))
        json.key("message")
        json.beginObject()
        json.key("text"); json.string("\(example.message) (\(summary))")
        json.endObject()
        json.key("locations")
        json.beginArray()
        json.beginObject()
        if let cls = g.cls, let found = view.sourceLocations[cls] {
            json.key("physicalLocation")
            json.beginObject()
            json.key("artifactLocation")
            json.beginObject()
            json.key("uri"); json.string(pathURI(found.path))
            json.key("uriBaseId"); json.string("SRCROOT")
            json.endObject()
            json.key("region")
            json.beginObject()
            json.key("startLine"); json.int(found.line)
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
        json.key("partialFingerprints")
        json.beginObject()
        json.key(fingerprintKey); json.string(g.identity)
        json.endObject()
        if let state = g.state { json.key("baselineState"); json.string(state == .new ? "new" : "unchanged") }
        json.key("properties")
        json.beginObject()
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
        json.endObject()
        json.endObject()
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
