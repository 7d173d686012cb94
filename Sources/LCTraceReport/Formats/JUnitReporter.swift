import LCTraceModel
import LCTraceRules

/// `--format junit`: JUnit XML (Jenkins' junit-10.xsd) for CI test reports (GitLab, Jenkins,
/// GitHub test reporters): a testsuite per rule family, a testcase per identity (`classname`
/// the controller class, or the app for session-level rules; `name` the identity key), and a
/// `failure` for those at or above `--fail-on`; under a baseline known identities pass.
enum JUnitReporter: Reporter {
    package static let id = "junit"
    package static let summary = "JUnit XML, a testcase per identity, for CI test reports"

    package static func render(_ view: ReportView) -> String {
        let xml: (String) -> String = { MarkupText.escape($0, for: .xml) }
        var suites: [String] = []
        var total = 0, failures = 0
        for family in RuleFamily.allCases where view.options.families.contains(family) {
            let groups = view.identities.filter { $0.rule.family == family }
            let failing = groups.filter(\.failing).count
            total += groups.count
            failures += failing
            var suite = "  <testsuite name=\"lctrace.\(family.rawValue)\" tests=\"\(groups.count)\" failures=\"\(failing)\" errors=\"0\" skipped=\"0\" time=\"0\">\n"
            for g in groups {
                let example = view.findings[g.first]
                let classname = g.cls ?? g.app ?? example.file ?? FindingIdentity.unknown
                suite += "    <testcase classname=\"\(xml(classname))\" name=\"\(xml(g.identityKey))\" time=\"0\">\n"
                var text = "\(g.rule.id) \(g.rule.name) (\(g.rule.severity.rawValue)), identity \(g.identity)\n"
                text += "\(g.occurrences) occurrence\(g.occurrences == 1 ? "" : "s") in \(g.sessions) session\(g.sessions == 1 ? "" : "s")"
                if !g.builds.isEmpty { text += ", builds: " + g.builds.joined(separator: ", ") }
                if let state = g.state { text += "\nbaseline: \(state.rawValue)" }
                text += "\ne.g. \(example.message)"
                if let sid = example.session { text += "\n(session \(sid)" + (example.vc.map { ", \($0)#\(example.since ?? 0)" } ?? "") + ")" }
                if g.failing {
                    suite += "      <failure type=\"\(xml(g.rule.id))\" message=\"\(xml(example.message))\">\(xml(text))</failure>\n"
                } else {
                    suite += "      <system-out>\(xml(text))</system-out>\n"
                }
                suite += "    </testcase>\n"
            }
            suites.append(suite + "  </testsuite>\n")
        }
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            + "<testsuites name=\"lctrace\" tests=\"\(total)\" failures=\"\(failures)\" errors=\"0\" time=\"0\">\n"
            + suites.joined() + "</testsuites>\n"
    }
}
