/// `compare --format junit`: the comparison as a CI test report (junit-10.xsd): a testsuite
/// of the head's identities (`lctrace.compare.findings`: each new one at or above `--fail-on`
/// fails, persisting ones pass; fixed ones are not tests of the head) and one of the timings
/// (`lctrace.compare.timing`: a class compared per animation, failing on a regression).
enum CompareJUnitReporter: ComparisonReporter {
    package static let id = "junit"
    package static let summary = "JUnit XML: new identities and timing regressions as failures"

    package static func render(_ c: BuildComparison) -> String {
        let xml: (String) -> String = { MarkupText.escape($0, for: .xml) }
        let failOn = c.failOn
        var findings = ""
        var findingFailures = 0
        for (e, isNew) in c.new.map({ ($0, true) }) + c.persisting.map({ ($0, false) }) {
            let fails = isNew && failOn.map { e.rule.severity >= $0 } == true
            findingFailures += fails ? 1 : 0
            let text = "\(e.rule.id) \(e.rule.name) (\(e.rule.severity.rawValue)), identity \(e.identity): \(isNew ? "new" : "persisting"), "
                + "\(e.baseCount) in build \(c.base.build) (\(CompareFormat.rate(e.basePer100)) per 100 sessions), "
                + "\(e.headCount) in build \(c.head.build) (\(CompareFormat.rate(e.headPer100)) per 100 sessions)\ne.g. \(e.example)"
            findings += "    <testcase classname=\"\(xml(e.cls ?? e.identityKey.split(separator: "|").dropFirst().first.map(String.init) ?? "?"))\" name=\"\(xml(e.identityKey))\" time=\"0\">\n"
            findings += fails ? "      <failure type=\"\(xml(e.rule.id))\" message=\"\(xml("new: " + e.example))\">\(xml(text))</failure>\n"
                : "      <system-out>\(xml(text))</system-out>\n"
            findings += "    </testcase>\n"
        }
        var timing = ""
        var timingFailures = 0
        for t in c.timings {
            let fails = t.regressed && failOn != nil
            timingFailures += fails ? 1 : 0
            let text = "viewIsAppearing → viewDidAppear p50 \(CompareFormat.ms(t.baseP50)) → \(CompareFormat.ms(t.headP50)), "
                + "p90 \(CompareFormat.ms(t.baseP90)) → \(CompareFormat.ms(t.headP90)), \(t.baseN) → \(t.headN) appearances, p = \(CompareFormat.p(t.pValue))"
            timing += "    <testcase classname=\"\(xml(t.cls))\" name=\"\(CompareFormat.animation(t.animated))\" time=\"0\">\n"
            timing += fails ? "      <failure type=\"timing-regression\" message=\"\(xml("slower: " + text))\">\(xml(text))</failure>\n"
                : "      <system-out>\(xml(text))</system-out>\n"
            timing += "    </testcase>\n"
        }
        let findingTests = c.new.count + c.persisting.count
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            + "<testsuites name=\"lctrace compare \(xml(c.base.build)) → \(xml(c.head.build))\" tests=\"\(findingTests + c.timings.count)\" failures=\"\(findingFailures + timingFailures)\" errors=\"0\" time=\"0\">\n"
            + "  <testsuite name=\"lctrace.compare.findings\" tests=\"\(findingTests)\" failures=\"\(findingFailures)\" errors=\"0\" skipped=\"0\" time=\"0\">\n"
            + findings + "  </testsuite>\n"
            + "  <testsuite name=\"lctrace.compare.timing\" tests=\"\(c.timings.count)\" failures=\"\(timingFailures)\" errors=\"0\" skipped=\"0\" time=\"0\">\n"
            + timing + "  </testsuite>\n</testsuites>\n"
    }
}
