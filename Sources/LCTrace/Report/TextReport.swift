import Foundation

/// The report for people: grouped by rule then class, counts first, then the worst examples.
/// Colour only when `color` is set (a terminal).
public struct TextReport {
    public var data: ReportData
    public var color: Bool
    public var examples = 5

    /// `data` is shown with every text from traces escaped for terminals (`TerminalText`).
    public init(data: ReportData, color: Bool) {
        self.data = data.escapedForTerminal()
        self.color = color
    }

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

    private static let titles: [RuleFamily: String] = [
        .orphans: "Orphaned children", .unbalanced: "Appear with no matching disappear",
        .leaks: "Leaks: deinit never follows disappear", .gaps: "Timing gaps: viewIsAppearing → viewDidAppear",
        .scene: "App and scene life cycle", .quality: "Trace quality",
    ]

    public func render(families: Set<RuleFamily>) -> String {
        var out = header() + "\n"
        for family in RuleFamily.allCases where families.contains(family) {
            let findings = data.findings.filter { RuleCatalog.info($0.rule)?.family == family }
            let gapStats = family == .gaps && !data.gaps.isEmpty
            if findings.isEmpty && !gapStats { continue }
            out += "\n" + bold("━━ \(Self.titles[family]!) ━━") + "\n"
            if family == .gaps && gapStats { out += gapTable() }
            for rule in RuleCatalog.all where rule.family == family {
                let ruleFindings = findings.filter { $0.rule == rule.id }
                if ruleFindings.isEmpty { continue }
                out += "\n" + ruleHeader(rule, ruleFindings)
                out += rule.id == "LC301" ? leakTable(ruleFindings) : classTable(ruleFindings)
                out += exampleLines(rule, ruleFindings)
            }
        }
        if data.findings.isEmpty { out += "\nNo findings.\n" }
        return out
    }

    private func header() -> String {
        let counts = Severity.allCases.reversed().map { s -> String in
            let n = data.findings.filter { $0.severity == s }.count
            return "\(Self.group(n)) \(s == .info ? "info" : s.rawValue + (n == 1 ? "" : "s"))"
        }
        var text = bold("lctrace report") + " · \(Self.group(data.sessions.count)) session\(data.sessions.count == 1 ? "" : "s")"
        text += " · \(Self.group(data.events)) events · \(Self.group(data.findings.count)) finding\(data.findings.count == 1 ? "" : "s")"
        text += ": " + counts.joined(separator: ", ")
        return text
    }

    private func ruleHeader(_ rule: RuleInfo, _ findings: [Finding]) -> String {
        let sessions = Set(findings.compactMap(\.session)).count
        let where_ = sessions > 0 ? " in \(Self.group(sessions)) session\(sessions == 1 ? "" : "s")" : ""
        return bold("\(rule.id) \(rule.name)") + " · " + severity(rule.severity)
            + " · \(Self.group(findings.count)) finding\(findings.count == 1 ? "" : "s")\(where_) · \(dim(rule.summary))\n"
    }

    // MARK: Tables

    private func classTable(_ findings: [Finding]) -> String {
        let byClass = Dictionary(grouping: findings) { $0.cls ?? ($0.file != nil ? "(file)" : $0.vc == nil ? "(session)" : "?") }
        let rows = byClass.map { (cls, list) in
            (cls, list.count, Set(list.compactMap(\.session)).count)
        }.sorted { ($1.1, $0.0) < ($0.1, $1.0) }
        if rows.count == 1 && (rows[0].0 == "(session)" || rows[0].0 == "(file)") { return "" }
        var table = [["class", "count", "sessions"]]
        table += rows.map { [$0.0, Self.group($0.1), Self.group($0.2)] }
        return Self.align(table, rightAligned: [1, 2], indent: "  ", headerStyle: dim)
    }

    /// LC301 grouped by class × how the controller left; children held by a leaked parent are
    /// listed under the parent's group, not as headlines.
    private func leakTable(_ findings: [Finding]) -> String {
        let leakedKeys = Set(findings.compactMap { f in f.vc.map { "\($0)#\(f.since ?? -1)@\(f.session ?? "")" } })
        func parentKey(_ f: Finding) -> String? {
            guard let vc = f.detail["held_by"], let since = f.detail["held_by_since"] else { return nil }
            let key = "\(vc)#\(since)@\(f.session ?? "")"
            return leakedKeys.contains(key) ? key : nil
        }
        let heads = findings.filter { parentKey($0) == nil }
        let nested = findings.filter { parentKey($0) != nil }
        let byKey = Dictionary(findings.compactMap { f in f.vc.map { ("\($0)#\(f.since ?? -1)@\(f.session ?? "")", f) } },
                               uniquingKeysWith: { a, _ in a })
        // Walk up to the headline ancestor of a nested finding.
        func headline(_ f: Finding) -> Finding {
            var current = f
            var depth = 0
            while let p = parentKey(current), let parent = byKey[p], depth < 64 { current = parent; depth += 1 }
            return current
        }
        struct Group { var cls: String; var how: String; var findings: [Finding] = []; var children: [String: Int] = [:] }
        var groups: [String: Group] = [:]
        for f in heads {
            let key = "\(f.cls ?? "?")|\(f.detail["how"] ?? "?")"
            groups[key, default: Group(cls: f.cls ?? "?", how: f.detail["how"] ?? "?")].findings.append(f)
        }
        for f in nested {
            let h = headline(f)
            let key = "\(h.cls ?? "?")|\(h.detail["how"] ?? "?")"
            groups[key, default: Group(cls: h.cls ?? "?", how: h.detail["how"] ?? "?")].children[f.cls ?? "?", default: 0] += 1
        }
        var table = [["class", "left via", "count", "sessions", "devices", "builds", "first build"]]
        var childRows: [Int: [String]] = [:]
        for g in groups.values.sorted(by: { ($1.findings.count, $0.cls) < ($0.findings.count, $1.cls) }) {
            let infos = g.findings.compactMap { data.session($0.session) }
            let first = infos.min { Self.buildOrder($0).lexicographicallyPrecedes(Self.buildOrder($1)) }
            table.append([g.cls, g.how, Self.group(g.findings.count), Self.group(Set(infos.map(\.sid)).count),
                          Self.group(Set(infos.compactMap(\.device)).count),
                          Self.group(Set(infos.map { "\($0.appVersion ?? "")(\($0.build ?? ""))" }).count),
                          first.map(Self.buildName) ?? "?"])
            if !g.children.isEmpty {
                childRows[table.count - 1] = g.children.keys.sorted().map { "\($0) ×\(g.children[$0]!)" }
            }
        }
        let lines = Self.align(table, rightAligned: [2, 3, 4, 5], indent: "  ", headerStyle: dim).split(separator: "\n", omittingEmptySubsequences: false)
        var out = ""
        for (i, line) in lines.enumerated() where !line.isEmpty {
            out += line + "\n"
            if let children = childRows[i] {
                out += dim("      └ held by it: " + children.joined(separator: ", ")) + "\n"
            }
        }
        return out
    }

    private func exampleLines(_ rule: RuleInfo, _ findings: [Finding]) -> String {
        let ordered: [Finding]
        switch rule.id {
        case "LC301", "LC302":
            ordered = findings.sorted { (Int($0.detail["retained_ms"] ?? "") ?? 0) > (Int($1.detail["retained_ms"] ?? "") ?? 0) }
        case "LC401":
            ordered = findings.sorted { (Double($0.detail["gap_ms"] ?? "") ?? 0) > (Double($1.detail["gap_ms"] ?? "") ?? 0) }
        default:
            ordered = findings
        }
        let shown = ordered.prefix(examples)
        let title = rule.id == "LC301" ? "worst (longest retained first):" : rule.id == "LC401" ? "worst (slowest first):" : "examples:"
        var out = dim("  \(title)") + "\n"
        for f in shown {
            var parts: [String] = []
            if let s = f.session { parts.append(String(s.prefix(8))) }
            if let vc = f.vc { parts.append("\(vc)#\(f.since ?? 0)") }
            if let t = f.t { parts.append(String(format: "at %.2f s", Double(t) / 1e9)) }
            let low = f.confidence == "low" ? dim(" (low confidence: events lost)") : ""
            out += "    " + dim(parts.joined(separator: "  ")) + (parts.isEmpty ? "" : "  ") + f.message + low + "\n"
        }
        if findings.count > shown.count {
            out += dim("    … and \(Self.group(findings.count - shown.count)) more (--format json, or lctrace query \"SELECT * FROM findings_v WHERE rule = '\(rule.id)'\")") + "\n"
        }
        return out
    }

    private func gapTable() -> String {
        var table = [["class", "count", "p50", "p90", "p99", "max", "distribution (<50ms … >2s)"]]
        let rows = data.gaps.map { (cls, values) in (cls, values.sorted()) }.sorted { ($1.1.count, $0.0) < ($0.1.count, $1.0) }
        for (cls, sorted) in rows {
            table.append([cls, Self.group(sorted.count), Self.ms(Self.percentile(sorted, 0.5)), Self.ms(Self.percentile(sorted, 0.9)),
                          Self.ms(Self.percentile(sorted, 0.99)), Self.ms(sorted.last ?? 0), Self.histogram(sorted)])
        }
        return "\n" + Self.align(table, rightAligned: [1, 2, 3, 4, 5], indent: "  ", headerStyle: dim)
    }

    // MARK: Helpers

    static let histogramBounds: [Int64] = [50, 100, 250, 500, 1000, 2000].map { Int64($0) * 1_000_000 }

    /// One bar per bucket (<50 ms, <100, <250, <500, <1 s, <2 s, ≥2 s), height by share.
    static func histogram(_ sorted: [Int64]) -> String {
        var counts = Array(repeating: 0, count: histogramBounds.count + 1)
        for v in sorted { counts[histogramBounds.firstIndex { v < $0 } ?? histogramBounds.count] += 1 }
        let bars: [Character] = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
        let top = max(counts.max() ?? 1, 1)
        return String(counts.map { $0 == 0 ? "·" : bars[max(1, Int((Double($0) / Double(top) * 8).rounded()))] })
    }

    static func percentile(_ sorted: [Int64], _ p: Double) -> Int64 {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    static func ms(_ ns: Int64) -> String {
        let ms = Double(ns) / 1e6
        return ms >= 100 ? String(format: "%.0f ms", ms) : String(format: "%.1f ms", ms)
    }

    /// `n` with thousands separators (1,759,249): the one formatter of counts for people.
    public static func group(_ n: Int) -> String {
        let digits = String(abs(n))
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return n < 0 ? "-" + out : out
    }

    /// Sort key for "first build": app version numerically, then build number.
    static func buildOrder(_ s: SessionInfo) -> [Int] {
        let version = (s.appVersion ?? "").split(separator: ".").map { Int($0) ?? 0 }
        let build = Int(s.build ?? "") ?? 0
        return (version + Array(repeating: 0, count: max(0, 4 - version.count))) + [build]
    }

    static func buildName(_ s: SessionInfo) -> String {
        "\(s.appVersion ?? "?") (\(s.build ?? "?"))"
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
