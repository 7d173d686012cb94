import Foundation
import LCTraceModel

/// The HTML report's plots, as inline SVG drawn from the view model: findings per 100
/// sessions per build, and per class the distribution of viewIsAppearing → viewDidAppear in
/// each build with its p50 and p90. Sized in CSS pixels so that text stays readable (a narrow
/// screen scrolls the plot sideways rather than shrinking it); coloured by the page's classes;
/// each with a title, a description and a title on every bar or column.
enum HTMLCharts {
    static func esc(_ s: String) -> String { MarkupText.escape(s) }
    static func fmt(_ v: Double) -> String { String(format: "%.1f", v) }

    /// Per build, its findings per 100 sessions stacked by severity (errors at the bottom).
    package static func findingsPerBuild(_ builds: [BuildSummary], id: String) -> String {
        let n = max(builds.count, 1)
        let labels = builds.map { short($0.build ?? $0.name) }
        let bar = min(max(48.0, labelWidth(labels) + 6), max(10.0, 620.0 / Double(n)))
        let left = 44.0, top = 28.0, plotH = 180.0, bottom = 34.0
        let items = [("bar error", "errors"), ("bar warning", "warnings"), ("bar info", "info")]
        let width = max(left + bar * Double(n) + 12, legendEnd(items, x: left) + 4)
        let height = top + plotH + bottom
        let top100 = builds.map { $0.perHundredSessions() }.max() ?? 0
        let scale = niceCeiling(max(top100, 1))
        func y(_ v: Double) -> Double { top + plotH - v / scale * plotH }

        var out = svgOpen(id: id, width: width, height: height,
                          title: "Findings per 100 sessions, by build",
                          desc: builds.map { "\($0.name): \(per100($0.perHundredSessions())) per 100 sessions (\($0.findings) findings in \($0.sessions) sessions)" }.joined(separator: "; "))
        out += legend(items, x: left, y: 12)
        out += "<g class=\"axis\" aria-hidden=\"true\">"
        for k in 0...4 {
            let v = scale * Double(k) / 4
            out += "<line class=\"grid\" x1=\"\(fmt(left))\" x2=\"\(fmt(width - 8))\" y1=\"\(fmt(y(v)))\" y2=\"\(fmt(y(v)))\"/>"
            out += "<text x=\"\(fmt(left - 4))\" y=\"\(fmt(y(v) + 4))\" text-anchor=\"end\">\(esc(per100(v)))</text>"
        }
        // A label every few builds, so that labels never overlap.
        let every = max(1, Int(((labelWidth(labels) + 6) / bar).rounded(.up)))
        for (i, label) in labels.enumerated() where i % every == 0 {
            let x = left + bar * (Double(i) + 0.5)
            out += "<text x=\"\(fmt(x))\" y=\"\(fmt(top + plotH + 14))\" text-anchor=\"middle\">\(esc(label))</text>"
        }
        out += "</g>"
        for (i, b) in builds.enumerated() {
            let x = left + bar * Double(i) + 1
            var base = 0.0
            out += "<g>"
            for s in [Severity.error, .warning, .info] {
                let v = b.perHundredSessions(s)
                guard v > 0 else { continue }
                out += "<rect class=\"bar \(s.rawValue)\" x=\"\(fmt(x))\" y=\"\(fmt(y(base + v)))\" width=\"\(fmt(max(bar - 2, 1)))\" height=\"\(fmt(y(base) - y(base + v)))\">"
                out += "<title>\(esc("\(b.name): \(b.findings(s)) \(s == .info || b.findings(s) == 1 ? s.rawValue : s.rawValue + "s") in \(b.sessions) session\(b.sessions == 1 ? "" : "s"), \(per100(v)) per 100"))</title></rect>"
                base += v
            }
            out += "</g>"
        }
        out += "<text class=\"axis\" x=\"\(fmt(left))\" y=\"\(fmt(height - 4))\">build</text>"
        return out + "</svg>"
    }

    /// One class: a column per build, the share of its appearances in each `GapDistribution`
    /// bin as the cell's strength (log time upwards), p50 as a line and p90 dashed.
    static func gapsByBuild(_ c: ClassGapsByBuild, builds: [BuildSummary], id: String) -> String {
        let bins = GapDistribution.bounds.count + 1
        let n = max(c.builds.count, 1)
        let labels = c.builds.map { short(builds[$0.build].build ?? builds[$0.build].name) }
        let col = min(max(36.0, labelWidth(labels) + 6), max(7.0, 320.0 / Double(n)))
        let left = 52.0, top = 24.0, cell = 9.0, bottom = 30.0
        // A gap's place among the log-spaced bounds, interpolated (1 ms is the top of bin 0).
        func position(ns: Int64) -> Double { min(max(log10(max(Double(ns) / 1e6, 0.5)) * 4 + 1, 0), Double(bins)) }
        // Rows only from the lowest to the highest bin with data (p90 included), at least a
        // decade: a class whose gaps all sit between 10 and 100 ms is not drawn 17 rows high.
        let used = c.builds.flatMap { b in b.distribution.enumerated().filter { $0.element > 0 }.map(\.offset) }
        let marks = c.builds.flatMap { [position(ns: $0.stats.p50), position(ns: $0.stats.p90)] }
        var low = min(used.min() ?? 0, Int((marks.min() ?? 0).rounded(.down)))
        var high = min(max(used.max() ?? 0, Int((marks.max() ?? 0).rounded(.up)) - 1), bins - 1)
        while high - low < 4 { if low > 0 { low -= 1 } else if high < bins - 1 { high += 1 } else { break } }
        let plotH = cell * Double(high - low + 1)
        let items = [("cell", "share of appearances"), ("p50", "p50"), ("p90", "p90")]
        let width = max(left + col * Double(n) + 12, legendEnd(items, x: left) + 4)
        let height = top + plotH + bottom
        func y(ns: Int64) -> Double { top + plotH - (min(max(position(ns: ns), Double(low)), Double(high + 1)) - Double(low)) * cell }
        let first = c.builds.first.map { builds[$0.build].name } ?? "", last = c.builds.last.map { builds[$0.build].name } ?? ""
        var desc = "\(c.all.count) appearances in \(c.builds.count) build\(c.builds.count == 1 ? "" : "s")"
        if let a = c.builds.first, let b = c.builds.last {
            desc += c.builds.count == 1 ? ": p50 \(ms(a.stats.p50)), p90 \(ms(a.stats.p90))"
                : "; p50 \(ms(a.stats.p50)) in \(first) and \(ms(b.stats.p50)) in \(last), p90 \(ms(a.stats.p90)) and \(ms(b.stats.p90))"
        }
        var out = svgOpen(id: id, width: width, height: height, title: "\(c.cls): viewIsAppearing → viewDidAppear by build", desc: desc)
        out += legend(items, x: left, y: 10, lines: true)
        out += "<g class=\"axis\" aria-hidden=\"true\">"
        for (label, ns) in [("1 ms", Int64(1_000_000)), ("10 ms", 10_000_000), ("100 ms", 100_000_000), ("1 s", 1_000_000_000), ("10 s", 10_000_000_000)]
        where (Double(low)...Double(high + 1)).contains(position(ns: ns)) {
            let gy = y(ns: ns)
            out += "<line class=\"grid\" x1=\"\(fmt(left))\" x2=\"\(fmt(left + col * Double(n)))\" y1=\"\(fmt(gy))\" y2=\"\(fmt(gy))\"/>"
            out += "<text x=\"\(fmt(left - 4))\" y=\"\(fmt(gy + 4))\" text-anchor=\"end\">\(label)</text>"
        }
        let every = max(1, Int(((labelWidth(labels) + 6) / col).rounded(.up)))
        for (i, label) in labels.enumerated() where i % every == 0 {
            let x = left + col * (Double(i) + 0.5)
            out += "<text x=\"\(fmt(x))\" y=\"\(fmt(top + plotH + 14))\" text-anchor=\"middle\">\(esc(label))</text>"
        }
        out += "</g><g aria-hidden=\"true\">"
        for (i, b) in c.builds.enumerated() {
            let x = left + col * Double(i)
            let most = max(b.distribution.max() ?? 1, 1)
            for (k, count) in b.distribution.enumerated() where count > 0 {
                let strength = 0.12 + 0.88 * Double(count) / Double(most)
                out += "<rect class=\"cell\" x=\"\(fmt(x + 0.5))\" y=\"\(fmt(top + plotH - Double(k - low + 1) * cell))\" width=\"\(fmt(max(col - 1, 1)))\" height=\"\(fmt(cell - 0.5))\" fill-opacity=\"\(String(format: "%.2f", strength))\"/>"
            }
        }
        out += "</g>"
        func line(_ cls: String, _ value: (BuildGaps) -> Int64) -> String {
            let points = c.builds.enumerated().map { i, b in "\(fmt(left + col * (Double(i) + 0.5))),\(fmt(y(ns: value(b))))" }
            if points.count == 1 {
                let p = points[0].split(separator: ",")
                return "<line class=\"\(cls)\" x1=\"\(fmt(left + 2))\" x2=\"\(fmt(left + col - 2))\" y1=\"\(p[1])\" y2=\"\(p[1])\"/>"
            }
            return "<polyline class=\"\(cls)\" points=\"\(points.joined(separator: " "))\"/>"
        }
        out += line("p50") { $0.stats.p50 } + line("p90") { $0.stats.p90 }
        // A column per build that names its numbers, for a pointer.
        for (i, b) in c.builds.enumerated() {
            let name = builds[b.build].name
            out += "<rect class=\"hit\" x=\"\(fmt(left + col * Double(i)))\" y=\"\(fmt(top))\" width=\"\(fmt(col))\" height=\"\(fmt(plotH))\"><title>\(esc("\(name): \(b.stats.count) appearances, p50 \(ms(b.stats.p50)), p90 \(ms(b.stats.p90)), max \(ms(b.stats.max))"))</title></rect>"
        }
        return out + "</svg>"
    }

    // MARK: Pieces

    static func svgOpen(id: String, width: Double, height: Double, title: String, desc: String) -> String {
        "<svg class=\"plot\" viewBox=\"0 0 \(fmt(width)) \(fmt(height))\" width=\"\(fmt(width))\" height=\"\(fmt(height))\" role=\"img\" aria-labelledby=\"\(id)-title \(id)-desc\">"
            + "<title id=\"\(id)-title\">\(esc(title))</title><desc id=\"\(id)-desc\">\(esc(desc))</desc>"
    }

    /// Where a legend of `items` drawn from `x` ends (the same advance as `legend`).
    static func legendEnd(_ items: [(String, String)], x: Double) -> Double {
        items.reduce(x) { $0 + legendAdvance($1.1) } - 14
    }

    static func legendAdvance(_ text: String) -> Double { 17 + Double(text.count) * 6.5 + 14 }

    /// The widest of `labels` in the plots' 11 px font (6.5 px a character at most, digits less).
    static func labelWidth(_ labels: [String]) -> Double { Double(labels.map(\.count).max() ?? 0) * 6.5 }

    static func legend(_ items: [(String, String)], x: Double, y: Double, lines: Bool = false) -> String {
        var out = "<g class=\"legend\" aria-hidden=\"true\">"
        var at = x
        for (cls, text) in items {
            if lines && (cls == "p50" || cls == "p90") {
                out += "<line class=\"\(cls)\" x1=\"\(fmt(at))\" x2=\"\(fmt(at + 14))\" y1=\"\(fmt(y - 4))\" y2=\"\(fmt(y - 4))\"/>"
            } else {
                out += "<rect class=\"\(cls)\" x=\"\(fmt(at))\" y=\"\(fmt(y - 9))\" width=\"10\" height=\"10\"/>"
            }
            out += "<text x=\"\(fmt(at + 17))\" y=\"\(fmt(y))\">\(esc(text))</text>"
            at += legendAdvance(text)
        }
        return out + "</g>"
    }

    /// 1, 2, 2.5, 5 × 10^k at or above `v`.
    static func niceCeiling(_ v: Double) -> Double {
        let magnitude = pow(10, (log10(v)).rounded(.down))
        for step in [1.0, 2, 2.5, 5, 10] where step * magnitude >= v { return step * magnitude }
        return 10 * magnitude
    }

    static func per100(_ v: Double) -> String { v >= 10 || v == 0 ? String(format: "%.0f", v) : String(format: "%.1f", v) }

    static func ms(_ ns: Int64) -> String { TextReport.ms(ns) }

    /// A build label short enough for an axis: its last 8 characters.
    static func short(_ s: String) -> String { s.count <= 8 ? s : "…" + s.suffix(7) }
}
