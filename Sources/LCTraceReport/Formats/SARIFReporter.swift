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
package enum SARIFReporter: Reporter {
    package static let id = "sarif"
    package static let summary = "SARIF 2.1.0, one result per identity, for code scanning"
    package static let fingerprintKey = "lctraceIdentity/v1"

    package static func render(_ view: ReportView) -> String {
        let rules = RuleCatalog.all
        let ruleIndex = Dictionary(rules.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a })
        var out = "{\"$schema\":\"https://json.schemastore.org/sarif-2.1.0.json\",\"version\":\"2.1.0\",\"runs\":[{\n"
        out += " \"tool\":{\"driver\":{\"name\":\"lctrace\",\"version\":\(jsonString(ToolInfo.version)),"
        out += "\"rules\":["
        out += rules.map { "\n  " + descriptor($0) }.joined(separator: ",") + "\n ]}},\n"
        if let root = view.options.sourceRoot {
            out += " \"originalUriBaseIds\":{\"SRCROOT\":{\"uri\":\(jsonString(directoryURI(root)))}},\n"
        }
        out += " \"results\":["
        out += view.identities.map { "\n  " + result($0, view, ruleIndex: ruleIndex[$0.rule.id] ?? 0) }.joined(separator: ",")
        out += view.identities.isEmpty ? "]}]}\n" : "\n ]}]}\n"
        return out
    }

    package static func level(_ s: Severity) -> String {
        switch s {
        case .error: return "error"
        case .warning: return "warning"
        case .info: return "note"
        }
    }

    package static func descriptor(_ r: RuleInfo) -> String {
        "{\"id\":\(jsonString(r.id)),\"name\":\(jsonString(r.name)),"
            + "\"shortDescription\":{\"text\":\(jsonString(r.summary))},"
            + "\"fullDescription\":{\"text\":\(jsonString(r.explanation.isEmpty ? r.summary : r.explanation))},"
            + "\"help\":{\"text\":\(jsonString(r.help.isEmpty ? r.summary : r.help))},"
            + "\"defaultConfiguration\":{\"level\":\"\(level(r.severity))\"},"
            + "\"properties\":{\"family\":\(jsonString(r.family.rawValue)),\"tags\":[\"uikit\",\(jsonString(r.family.rawValue))]}}"
    }

    package static func result(_ g: IdentityGroup, _ view: ReportView, ruleIndex: Int) -> String {
        let example = view.findings[g.findings[0]]
        let builds = g.builds.count <= 1 ? (g.builds.first.map { "build \($0)" } ?? "")
            : "builds \(g.builds.first!) to \(g.builds.last!)"
        var summary = "\(g.occurrences) occurrence\(g.occurrences == 1 ? "" : "s")"
        if g.sessions > 0 { summary += " in \(g.sessions) session\(g.sessions == 1 ? "" : "s")" }
        if !builds.isEmpty { summary += ", \(builds)" }
        let message = "\(example.message) (\(summary))"
        var location = "{"
        if let cls = g.cls, let found = view.sourceLocations[cls] {
            location += "\"physicalLocation\":{\"artifactLocation\":{\"uri\":\(jsonString(pathURI(found.path))),\"uriBaseId\":\"SRCROOT\"},"
            location += "\"region\":{\"startLine\":\(found.line)}},"
        }
        let logical = g.cls.map { "{\"name\":\(jsonString($0)),\"kind\":\"type\"}" }
            ?? "{\"name\":\(jsonString(g.app ?? example.file ?? FindingIdentity.unknown)),\"kind\":\"module\"}"
        location += "\"logicalLocations\":[\(logical)]}"
        var properties = "\"identity_key\":\(jsonString(g.identityKey)),\"occurrences\":\(g.occurrences),"
        properties += "\"sessions\":\(g.sessions),\"devices\":\(g.devices),"
        properties += "\"builds\":[" + g.builds.map(jsonString).joined(separator: ",") + "]"
        if let app = g.app { properties += ",\"app\":\(jsonString(app))" }
        if let file = example.file { properties += ",\"file\":\(jsonString(file))" }
        var out = "{\"ruleId\":\(jsonString(g.rule.id)),\"ruleIndex\":\(ruleIndex),\"level\":\"\(level(g.rule.severity))\","
        out += "\"message\":{\"text\":\(jsonString(message))},\"locations\":[\(location)],"
        out += "\"partialFingerprints\":{\"\(fingerprintKey)\":\(jsonString(g.identity))},"
        if let state = g.state { out += "\"baselineState\":\"\(state == .new ? "new" : "unchanged")\"," }
        out += "\"properties\":{\(properties)}}"
        return out
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
