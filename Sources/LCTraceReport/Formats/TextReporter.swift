import Foundation
import LCTraceModel

/// `--format text`: the report for people, grouped by family, rule and class, counts first,
/// then the worst examples; under a baseline the new identities come first with a NEW marker
/// and the baseline's entries no longer seen are listed last. Colour only on a terminal.
enum TextReporter: Reporter {
    static let fitsTerminalWidth = true
    package static let inputs: ReportInputs = [.terminalText]
    package static let id = "text"
    package static let summary = "grouped for people"

    /// Every text from traces and files is escaped for terminals (`TerminalText`).
    package static func render(_ view: ReportView) -> String { TextReport(view: view.escapedForTerminal()).render() }
}

/// The text report of one view.
struct TextReport {
    package let view: ReportView
    package var data: ReportData { view.data }
    package var color: Bool { view.options.color }
    package var examples: Int { view.options.examples }

    // MARK: Styling

    private func paint(_ text: String, _ code: String) -> String { color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
    private func bold(_ text: String) -> String { paint(text, "1") }
    private func dim(_ text: String) -> String { paint(text, "2") }
    private func severity(_ s: Severity) -> String {
        switch s {
        case .error: return paint("error", "31;1")
        case .warning: return paint("warning", "33")
        case .info: return paint("info", "36")
        }
    }

    package func render() -> String {
        var out = header() + "\n"
        if view.options.baseline != nil { out += baselineSection() }
        for family in view.sections {
            let gapStats = family.family == .gaps && !view.gapStats.isEmpty
            if family.rules.isEmpty && !gapStats { continue }
            out += "\n" + bold("━━ \(family.family.title) ━━") + "\n"
            if gapStats { out += gapTable() }
            for section in family.rules {
                out += "\n" + ruleHeader(section)
                out += section.groupedByDetail ? groupTable(section) : classTable(section)
                out += exampleLines(section)
            }
        }
        if view.findings.isEmpty { out += "\nNo findings.\n" }
        if view.options.baseline != nil && !view.fixed.isEmpty { out += fixedSection() }
        return out
    }

    /// Under a baseline: how many findings are new, and the new identities, worst first.
    private func baselineSection() -> String {
        let newGroups = view.identities.filter { $0.state == .new }
        let file = view.options.baseline!.file
        var out = "\n" + bold("━━ Baseline \(file) ━━") + "\n"
        out += "  \(NumberFormat.thousands(view.newFindings)) new finding\(view.newFindings == 1 ? "" : "s") (\(NumberFormat.thousands(newGroups.count)) identit\(newGroups.count == 1 ? "y" : "ies")), "
        out += "\(NumberFormat.thousands(view.knownFindings)) known, \(NumberFormat.thousands(view.fixed.count)) baseline entr\(view.fixed.count == 1 ? "y" : "ies") not seen (fixed)\n"
        for g in newGroups.prefix(20) {
            let f = view.findings[g.first]
            out += "  " + paint("NEW", "35;1") + " \(g.rule.id) \(severity(g.rule.severity)) \(g.cls ?? g.app ?? "?") ×\(NumberFormat.thousands(g.occurrences)) in \(NumberFormat.thousands(g.sessions)) session\(g.sessions == 1 ? "" : "s")  \(dim(g.identity))  \(f.message)\n"
        }
        if newGroups.count > 20 { out += dim("  … and \(NumberFormat.thousands(newGroups.count - 20)) more new identities (--format json)") + "\n" }
        return out
    }

    private func fixedSection() -> String {
        var out = "\n" + bold("━━ In the baseline, not seen (fixed) ━━") + "\n"
        for e in view.fixed.prefix(50) { out += "  \(e.rule) \(e.cls ?? "-")  \(dim(e.identity))  \(e.identityKey)\n" }
        if view.fixed.count > 50 { out += dim("  … and \(NumberFormat.thousands(view.fixed.count - 50)) more") + "\n" }
        return out
    }

    private func header() -> String {
        let counts = Severity.allCases.reversed().map { s -> String in
            let n = view.count(s)
            return "\(NumberFormat.thousands(n)) \(s == .info ? "info" : s.rawValue + (n == 1 ? "" : "s"))"
        }
        var text = bold("lctrace report") + " · \(NumberFormat.thousands(data.sessions.count)) session\(data.sessions.count == 1 ? "" : "s")"
        text += " · \(NumberFormat.thousands(data.events)) events · \(NumberFormat.thousands(view.findings.count)) finding\(view.findings.count == 1 ? "" : "s")"
        text += ": " + counts.joined(separator: ", ")
        return text
    }

    private func ruleHeader(_ section: RuleSection) -> String {
        let rule = section.rule, n = section.count, sessions = section.sessions
        let where_ = sessions > 0 ? " in \(NumberFormat.thousands(sessions)) session\(sessions == 1 ? "" : "s")" : ""
        return bold("\(rule.id) \(rule.name)") + " · " + severity(rule.severity)
            + " · \(NumberFormat.thousands(n)) finding\(n == 1 ? "" : "s")\(where_) · \(dim(rule.summary))\n"
    }

    // MARK: Tables

    private func classTable(_ section: RuleSection) -> String {
        if section.onlySessionOrFile { return "" }
        var table = [["class", "count", "sessions"]]
        table += section.groups.map { [$0.label, NumberFormat.thousands($0.count), NumberFormat.thousands($0.sessions)] }
        return Self.align(table, rightAligned: [1, 2], indent: "  ", headerStyle: dim)
    }

    /// Findings grouped by class × the rule's `groupBy` detail (how a leaked controller left),
    /// with sessions, devices, builds and the first build; findings held by another finding's
    /// instance are listed under that one's group, not as headlines.
    private func groupTable(_ section: RuleSection) -> String {
        let title = section.rule.report.groupByTitle ?? section.rule.report.groupBy ?? ""
        var table = [["class", title, "count", "sessions", "devices", "builds", "first build"]]
        var heldRows: [Int: [String]] = [:]
        for g in section.groups {
            table.append([g.label, g.value ?? "?", NumberFormat.thousands(g.count), NumberFormat.thousands(g.sessions), NumberFormat.thousands(g.devices),
                          NumberFormat.thousands(g.builds.count), g.firstBuild ?? "?"])
            if !g.held.isEmpty { heldRows[table.count - 1] = g.held.map { "\($0.cls) ×\($0.count)" } }
        }
        let lines = Self.align(table, rightAligned: [2, 3, 4, 5], indent: "  ", headerStyle: dim).split(separator: "\n", omittingEmptySubsequences: false)
        var out = ""
        for (i, line) in lines.enumerated() where !line.isEmpty {
            out += line + "\n"
            if let held = heldRows[i] { out += dim("      └ held by it: " + held.joined(separator: ", ")) + "\n" }
        }
        return out
    }

    /// The first examples of a rule, in the section's example order.
    private func exampleLines(_ section: RuleSection) -> String {
        let rule = section.rule
        let shown = section.examples.prefix(examples)
        let title = rule.report.worstFirstTitle.map { "worst (\($0)):" } ?? "examples:"
        var out = dim("  \(title)") + "\n"
        for i in shown {
            let f = view.findings[i]
            var parts: [String] = []
            if let s = f.session { parts.append(String(s.prefix(8))) }
            if let vc = f.vc { parts.append("\(vc)#\(f.since ?? 0)") }
            if let t = f.t { parts.append(String(format: "at %.2f s", Double(t) / 1e9)) }
            let low = f.confidence == "low" ? dim(" (low confidence: events lost)") : ""
            let marker = view.state(ofFinding: i) == .new ? paint("NEW", "35;1") + " " : ""
            out += "    " + marker + dim(parts.joined(separator: "  ")) + (parts.isEmpty ? "" : "  ") + f.message + low + "\n"
        }
        if section.count > shown.count {
            out += dim("    … and \(NumberFormat.thousands(section.count - shown.count)) more (--format json, or \(TerminalText.escaped(view.options.followUp.findingsQuery(rule: rule.id))))") + "\n"
        }
        return out
    }

    private func gapTable() -> String {
        var table = [["class", "count", "p50", "p90", "p99", "max", "distribution (<50ms … >2s)"]]
        for g in view.gapStats {
            table.append([g.cls, NumberFormat.thousands(g.count), Self.ms(g.p50), Self.ms(g.p90), Self.ms(g.p99), Self.ms(g.max),
                          Self.histogram(g.histogram)])
        }
        return "\n" + Self.align(table, rightAligned: [1, 2, 3, 4, 5], indent: "  ", headerStyle: dim)
    }

    // MARK: Helpers

    /// One bar per bucket of `GapStats.bounds`, height by share.
    static func histogram(_ counts: [Int]) -> String {
        let bars: [Character] = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
        let top = max(counts.max() ?? 1, 1)
        return String(counts.map { $0 == 0 ? "·" : bars[max(1, Int((Double($0) / Double(top) * 8).rounded()))] })
    }

    static func ms(_ ns: Int64) -> String {
        let ms = Double(ns) / 1e6
        return ms >= 100 ? String(format: "%.0f ms", ms) : String(format: "%.1f ms", ms)
    }

    /// Aligns rows into columns; the first row is the header.
    static func align(_ rows: [[String]], rightAligned: Set<Int>, indent: String, headerStyle: (String) -> String) -> String {
        guard let first = rows.first else { return "" }
        var widths = Array(repeating: 0, count: first.count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        var out = ""
        for (r, row) in rows.enumerated() {
            var cells: [String] = []
            for (i, cell) in row.enumerated() {
                let pad = String(repeating: " ", count: widths[i] - cell.count)
                cells.append(rightAligned.contains(i) ? pad + cell : (i == row.count - 1 ? cell : cell + pad))
            }
            let line = indent + cells.joined(separator: "  ")
            out += (r == 0 ? headerStyle(line) : line) + "\n"
        }
        return out
    }
}
