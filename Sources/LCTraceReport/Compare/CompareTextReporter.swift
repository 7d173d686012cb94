import LCTraceModel

/// `compare --format text`: new, fixed and persisting identities with their rates per 100
/// sessions and what sets each apart (`ComparedIdentity.detail`), then the timing comparison,
/// regressions first. Builds, classes and examples come
/// from traces: escaped for terminals (`TerminalText`), as `report` does.
enum CompareTextReporter: ComparisonReporter {
    package static let id = "text"
    package static let summary = "for people"

    package static func render(_ c: BuildComparison) -> String {
        var out = "lctrace compare · base \(x(c.base.build)) (\(NumberFormat.thousands(c.base.sessions)) sessions) → head \(x(c.head.build)) (\(NumberFormat.thousands(c.head.sessions)) sessions)\n"
        out += "\(c.new.count) new · \(c.fixed.count) fixed · \(c.persisting.count) persisting · \(c.regressions.count) timing regression\(c.regressions.count == 1 ? "" : "s")\n"
        for (title, list) in [("New", c.new), ("Fixed", c.fixed), ("Persisting", c.persisting)] where !list.isEmpty {
            out += "\n\(title) (\(list.count)):\n"
            var table = [["rule", "severity", "class", "app · detail", "base", "head", "per 100 base → head", "identity"]]
            for e in list {
                table.append([e.rule.id, e.rule.severity.rawValue, x(e.cls ?? "-"), x(e.detail), String(e.baseCount), String(e.headCount),
                              "\(CompareFormat.rate(e.basePer100)) → \(CompareFormat.rate(e.headPer100))", x(e.identity)])
            }
            out += TextReport.align(table, rightAligned: [4, 5], indent: "  ", headerStyle: { $0 })
            for e in list.prefix(3) { out += "    e.g. \(e.rule.id): \(x(e.example))\n" }
        }
        if !c.timings.isEmpty {
            out += "\nTiming viewIsAppearing → viewDidAppear (Mann–Whitney U, regression: p < \(BuildComparison.significance), p50 ≥ +\(Int(BuildComparison.minimumRelativeEffect * 100)) % and ≥ +\(BuildComparison.minimumAbsoluteEffect / 1_000_000) ms):\n"
            var table = [["class", "", "base n", "p50", "p90", "head n", "p50", "p90", "p", ""]]
            for t in c.timings.prefix(20) {
                table.append([x(t.cls), CompareFormat.animation(t.animated), String(t.baseN), CompareFormat.ms(t.baseP50), CompareFormat.ms(t.baseP90),
                              String(t.headN), CompareFormat.ms(t.headP50), CompareFormat.ms(t.headP90), CompareFormat.p(t.pValue),
                              t.regressed ? "REGRESSION" : ""])
            }
            out += TextReport.align(table, rightAligned: [2, 3, 4, 5, 6, 7, 8], indent: "  ", headerStyle: { $0 })
            if c.timings.count > 20 { out += "  … and \(c.timings.count - 20) more classes (--format json)\n" }
        }
        return out
    }

    private static func x(_ text: String) -> String { TerminalText.escaped(text) }
}
