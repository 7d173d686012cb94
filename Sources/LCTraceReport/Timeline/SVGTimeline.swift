import Foundation
import LCTraceModel
import LCTraceStore

/// A timeline as one SVG document: self-contained (no external reference: styles inline,
/// nothing fetched), labelled for screen readers (a title and description, and a label on
/// every lane, phase and mark), coloured through CSS classes so that it follows a light or
/// dark scheme (`prefers-color-scheme`, or a page setting the `--lct-*` custom properties).
/// The HTML report embeds it; `lctrace timeline --format svg` writes it as a file.
package struct SVGTimeline {
    package var timeline: Timeline
    /// Width of the drawing in CSS pixels.
    package var width = 960
    /// Prefix of the ids inside the document, so that several timelines can share one page.
    var idPrefix = "lct"
    /// With the XML namespace, for a file of its own; without it, for inline use in HTML.
    var standalone = true
    /// With its own `<style>`; a page that draws many sets `SVGTimeline.style` once instead.
    var includeStyle = true

    package init(_ timeline: Timeline) { self.timeline = timeline }

    static let laneHeight = 18
    static let labelWidth = 300
    package static let top = 46

    package func render() -> String {
        let t = timeline
        let rows = t.lanes.count + 1
        let chartLeft = Self.labelWidth, chartRight = width - 12
        let (legendMarks, legendLines) = legend()
        let height = Self.top + rows * Self.laneHeight + 12 + legendLines * 16
        let x = { (time: Int64) -> Double in
            let f = (Double(time) - Double(t.window.start)) / Double(max(t.window.duration, 1))
            return Double(chartLeft) + min(max(f, 0), 1) * Double(chartRight - chartLeft)
        }
        func y(_ row: Int) -> Int { Self.top + row * Self.laneHeight }

        var out = "<svg"
        if standalone { out += " xmlns=\"http://www.w3.org/2000/svg\"" }
        out += " class=\"lctrace-timeline\" viewBox=\"0 0 \(width) \(height)\" width=\"\(width)\" height=\"\(height)\""
        out += " role=\"img\" aria-labelledby=\"\(idPrefix)-title \(idPrefix)-desc\">\n"
        out += "<title id=\"\(idPrefix)-title\">\(esc(title()))</title>\n"
        out += "<desc id=\"\(idPrefix)-desc\">\(esc(description()))</desc>\n"
        if includeStyle { out += "<style>\(Self.style)</style>\n" }
        out += "<defs><marker id=\"\(idPrefix)-head\" viewBox=\"0 0 8 8\" refX=\"7\" refY=\"4\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path class=\"head\" d=\"M0,0 L8,4 L0,8 z\"/></marker></defs>\n"
        out += "<rect class=\"paper\" x=\"0\" y=\"0\" width=\"\(width)\" height=\"\(height)\"/>\n"
        out += "<text class=\"heading\" x=\"8\" y=\"16\">\(esc(heading()))</text>\n"

        // Axis: round ticks with their time.
        let step = TextTimeline.tickStep(duration: t.window.duration, columns: (chartRight - chartLeft) / 7)
        out += "<g class=\"axis\" aria-hidden=\"true\">"
        for tick in TextTimeline.ticks(t.window, step: step) {
            let tx = fmt(x(tick))
            out += "<line class=\"tick\" x1=\"\(tx)\" y1=\"\(Self.top - 6)\" x2=\"\(tx)\" y2=\"\(y(rows))\"/>"
            // Centred on its tick; the last ones end at it rather than run off the right edge.
            let label = TextTimeline.tickLabel(tick, step: step)
            let anchor = x(tick) + Double(label.count) * Self.charWidth / 2 > Double(width - 2) ? "end" : "middle"
            out += "<text x=\"\(tx)\" y=\"\(Self.top - 9)\" text-anchor=\"\(anchor)\">\(esc(label))</text>"
        }
        out += "</g>\n"

        // The session row: background periods and the session's own findings.
        out += "<g class=\"lane session\" aria-label=\"\(esc(sessionLabel()))\">"
        out += "<text class=\"label\" x=\"8\" y=\"\(y(0) + 13)\">app</text>"
        out += rect("foreground", x(t.window.start), x(t.window.end), y(0) + 8, 2)
        for b in t.background {
            out += rect("background", x(b.start), x(b.end), y(0) + 3, 12,
                        title: "in the background \(TextTimeline.span(b))")
        }
        for f in t.findings where f.lane == nil { out += findingMark(f, x: x, y: y(0)) }
        out += "</g>\n"

        for (i, lane) in t.lanes.enumerated() {
            let row = y(i + 1)
            out += "<g class=\"lane\(lane.focused ? " focused" : "")\" aria-label=\"\(esc(laneSummary(lane)))\">"
            let indent = 8 + 12 * min(lane.depth, 8)
            let name = TextTimeline.Label(prefix: lane.underPresenter ? "↳ " : "", cls: lane.cls ?? "?", key: lane.key.description)
            out += "<text class=\"label\" x=\"\(indent)\" y=\"\(row + 13)\"><title>\(esc(lane.label))</title>\(esc(name.fitted((Self.labelWidth - indent - 8) * 10 / 67)))</text>"
            let end = lane.end ?? t.sessionSpan.end
            if t.window.overlaps(lane.start, end) {
                out += rect("alive", x(max(lane.start, t.window.start)), x(min(end, t.window.end)), row + 8, 2)
            }
            if let r = lane.release, r.t <= t.window.end, end >= t.window.start {
                out += rect("released", x(max(r.t, t.window.start)), x(min(end, t.window.end)), row + 7, 4,
                            title: "released (\(r.how)) at \(TextTimeline.seconds(r.t)), not deallocated until \(lane.end.map(TextTimeline.seconds) ?? "the end")")
            }
            for s in lane.spans {
                let a = x(max(s.start, t.window.start)), b = x(min(s.end, t.window.end))
                out += rect("phase \(s.phase.rawValue)\(s.interactive ? " interactive" : "")", a, max(b, a + 1), row + 3, 12,
                            title: "\(s.phase.rawValue) \(TextTimeline.span(TimeWindow(start: s.start, end: s.end)))\(s.interactive ? " (interactive)" : "")")
            }
            if let r = lane.release, t.window.contains(r.t) {
                let rx = x(r.t)
                out += "<path class=\"release\" d=\"M\(fmt(rx)),\(row + 2) l5,7 l-5,7 l-5,-7 z\"><title>\(esc("release (\(r.how)) at \(TextTimeline.seconds(r.t)), seq \(r.seq)"))</title></path>"
            }
            if let e = lane.end, t.window.contains(e) {
                let ex = x(e)
                out += "<path class=\"end \(esc(lane.endHow ?? "end"))\" d=\"M\(fmt(ex - 4)),\(row + 5) l8,8 m0,-8 l-8,8\"><title>\(esc("\(lane.endHow ?? "end") at \(TextTimeline.seconds(e))\(lane.endSeq.map { ", seq \($0)" } ?? "")"))</title></path>"
            }
            for f in t.findings where f.lane == lane.key { out += findingMark(f, x: x, y: row) }
            out += "</g>\n"
        }

        // Arrows: from the caller's lane to the moved controller's lane.
        for a in t.arrows {
            guard let from = t.lane(a.from), let to = t.lane(a.to), from != to else { continue }
            let ax = fmt(x(a.t))
            let y1 = y(from + 1) + 9, y2 = y(to + 1) + (to > from ? 3 : 15)
            var what = "\(a.kind.rawValue) at \(TextTimeline.seconds(a.t)), seq \(a.seq): \(t.lanes[from].label) → \(t.lanes[to].label)"
            if let style = a.style { what += " (\(style))" }
            if a.interactive { what += " (interactive)" }
            out += "<line class=\"arrow \(a.kind.rawValue)\" x1=\"\(ax)\" y1=\"\(y1)\" x2=\"\(ax)\" y2=\"\(y2)\" marker-end=\"url(#\(idPrefix)-head)\"><title>\(esc(what))</title></line>\n"
        }
        out += "<g class=\"legend\" aria-hidden=\"true\" transform=\"translate(0,\(y(rows) + 8))\">\(legendMarks)</g>\n"
        out += "</svg>\n"
        return out
    }

    // MARK: Pieces

    private func rect(_ cls: String, _ a: Double, _ b: Double, _ y: Int, _ h: Int, title: String? = nil) -> String {
        var s = "<rect class=\"\(cls)\" x=\"\(fmt(a))\" y=\"\(y)\" width=\"\(fmt(max(b - a, 0)))\" height=\"\(h)\""
        if let title { s += "><title>\(esc(title))</title></rect>" } else { s += "/>" }
        return s
    }

    private func findingMark(_ f: TimelineFinding, x: (Int64) -> Double, y: Int) -> String {
        guard let t = f.t else { return "" }
        let what = "\(f.finding.rule) \(f.finding.name) (\(f.finding.severity.rawValue)) at \(TextTimeline.seconds(t)): \(f.finding.message)"
        return "<circle class=\"finding \(f.finding.severity.rawValue)\" cx=\"\(fmt(x(t)))\" cy=\"\(y + 9)\" r=\"5\"><title>\(esc(what))</title></circle>"
    }

    private func title() -> String { "Timeline of session \(timeline.session.sid)" }

    /// One line that fits the width: the session by its 8-character prefix (the title names
    /// it whole), cut with "…" when a long focus would still run past the right edge.
    private func heading() -> String {
        let t = timeline, s = t.session
        var text = "\(s.sid.prefix(8)) · \([s.app, s.appVersion, s.build.map { "(\($0))" }].compactMap { $0 }.joined(separator: " "))"
        text += " · \(TextTimeline.span(t.window))"
        if t.window != t.sessionSpan, let focus = t.focus { text += " around \(focus)" }
        let fits = max(Int(Double(width - 16) / Self.boldCharWidth), 8)
        return text.count <= fits ? text : text.prefix(fits - 1) + "…"
    }

    /// The advance of a character of the 11 px monospace font, regular and bold (with a margin).
    static let charWidth = 6.8, boldCharWidth = 7.0

    private func description() -> String {
        let t = timeline
        var text = "\(t.lanes.count) controller instance\(t.lanes.count == 1 ? "" : "s") from \(TextTimeline.span(t.window))"
        text += t.window == t.sessionSpan ? " (the whole session)" : " of \(TextTimeline.span(t.sessionSpan))"
        text += "; \(t.findings.count) finding\(t.findings.count == 1 ? "" : "s") in view"
        if !t.findings.isEmpty { text += ": " + t.findings.map { "\($0.finding.rule) \($0.finding.message)" }.joined(separator: "; ") }
        return text + "."
    }

    private func sessionLabel() -> String {
        let n = timeline.background.count
        return n == 0 ? "app: in the foreground throughout" : "app: \(n) background period\(n == 1 ? "" : "s")"
    }

    /// What a screen reader says for a lane: who, what it went through, how it ended.
    private func laneSummary(_ lane: TimelineLane) -> String {
        var parts = [lane.label]
        if let p = lane.parent, let i = timeline.lane(p) { parts.append("in \(timeline.lanes[i].label)") }
        let visible = lane.spans.filter { $0.phase == .visible }
        if !visible.isEmpty { parts.append("visible \(visible.count) time\(visible.count == 1 ? "" : "s")") }
        if let r = lane.release { parts.append("released (\(r.how)) at \(TextTimeline.seconds(r.t))") }
        if let e = lane.end { parts.append("\(lane.endHow ?? "ended") at \(TextTimeline.seconds(e))") } else { parts.append("alive at the end") }
        let findings = timeline.findings.filter { $0.lane == lane.key }
        if !findings.isEmpty { parts.append(findings.map(\.finding.rule).joined(separator: ", ")) }
        return parts.joined(separator: ", ")
    }

    /// Swatches and marks with their meaning, in as many lines as the width needs.
    private func legend() -> (String, Int) {
        let items: [(String, String)] = [
            ("<rect class=\"phase appearing\" x=\"0\" y=\"0\" width=\"12\" height=\"10\"/>", "appearing"),
            ("<rect class=\"phase visible\" x=\"0\" y=\"0\" width=\"12\" height=\"10\"/>", "visible"),
            ("<rect class=\"phase disappearing\" x=\"0\" y=\"0\" width=\"12\" height=\"10\"/>", "disappearing"),
            ("<rect class=\"released\" x=\"0\" y=\"3\" width=\"12\" height=\"4\"/>", "released, not deallocated"),
            ("<path class=\"release\" d=\"M6,-2 l5,7 l-5,7 l-5,-7 z\"/>", "release"),
            ("<path class=\"end\" d=\"M2,1 l8,8 m0,-8 l-8,8\"/>", "deinit"),
            ("<circle class=\"finding error\" cx=\"6\" cy=\"5\" r=\"5\"/>", "finding"),
            ("<line class=\"arrow\" x1=\"6\" y1=\"-2\" x2=\"6\" y2=\"10\" marker-end=\"url(#\(idPrefix)-head)\"/>", "present, dismiss, push, pop, view outside containment"),
            ("<text x=\"0\" y=\"9\">↳</text>", "presented"),
        ]
        var out = ""
        var x = 8.0, line = 0
        for (mark, text) in items {
            let advance = 16 + Double(text.count) * 6.7 + 14
            if x + advance > Double(width) && x > 8 { x = 8; line += 1 }
            out += "<g transform=\"translate(\(fmt(x)),\(line * 16))\">\(mark)<text x=\"16\" y=\"9\">\(esc(text))</text></g>"
            x += advance
        }
        return (out, line + 1)
    }

    private func fmt(_ v: Double) -> String { String(format: "%.1f", v) }

    /// Text for XML content and attribute values (controls shown, never passed on).
    func esc(_ s: String) -> String { MarkupText.escape(s) }

    /// Colours: (custom property, light, dark). A page can set the `--lct-*` properties; a
    /// renderer without custom properties uses the light value written before each `var()`.
    static let palette: [(String, String, String)] = [
        ("paper", "#ffffff", "#0d1117"), ("ink", "#1f2328", "#e6edf3"), ("muted", "#6e7781", "#8d96a0"),
        ("grid", "#d8dee4", "#30363d"), ("alive", "#afb8c1", "#484f58"), ("appearing", "#d4a72c", "#d29922"),
        ("visible", "#2da44e", "#3fb950"), ("disappearing", "#bf8700", "#9e6a03"), ("released", "#8250df", "#a371f7"),
        ("end", "#0969da", "#58a6ff"), ("error", "#cf222e", "#f85149"), ("warning", "#bc4c00", "#db6d28"),
        ("info", "#0969da", "#58a6ff"), ("arrow", "#57606a", "#8d96a0"), ("background", "#eaeef2", "#161b22"),
    ]

    /// (selector under `.lctrace-timeline`, property, colour) of every coloured part.
    static let rules: [(String, String, String)] = [
        (".paper", "fill", "paper"), ("text", "fill", "ink"), (".axis text", "fill", "muted"), (".legend text", "fill", "muted"),
        (".tick", "stroke", "grid"), (".alive", "fill", "alive"), (".foreground", "fill", "alive"),
        (".background", "fill", "background"), (".background", "stroke", "grid"), (".appearing", "fill", "appearing"),
        (".visible", "fill", "visible"), (".disappearing", "fill", "disappearing"), (".released", "fill", "released"),
        (".release", "fill", "released"), (".end", "stroke", "end"), (".finding", "stroke", "paper"),
        (".finding.error", "fill", "error"), (".finding.warning", "fill", "warning"), (".finding.info", "fill", "info"),
        (".arrow", "stroke", "arrow"), (".head", "fill", "arrow"),
    ]

    static let style: String = {
        let light = Dictionary(uniqueKeysWithValues: palette.map { ($0.0, $0.1) })
        var css = ".lctrace-timeline{font:11px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;"
        css += palette.map { "--lct-\($0.0):\($0.1)" }.joined(separator: ";") + "}\n"
        css += "@media (prefers-color-scheme:dark){.lctrace-timeline{"
        css += palette.map { "--lct-\($0.0):\($0.2)" }.joined(separator: ";") + "}}\n"
        for (selector, property, colour) in rules {
            css += ".lctrace-timeline \(selector){\(property):\(light[colour]!);\(property):var(--lct-\(colour),\(light[colour]!))}\n"
        }
        css += """
        .lctrace-timeline .heading{font-weight:bold}
        .lctrace-timeline .tick{stroke-width:1}
        .lctrace-timeline .interactive{fill-opacity:.6}
        .lctrace-timeline .released{fill-opacity:.5}
        .lctrace-timeline .end{stroke-width:2;fill:none}
        .lctrace-timeline .finding{stroke-width:1.5}
        .lctrace-timeline .arrow{stroke-width:1.2}
        .lctrace-timeline .focused .label{font-weight:bold}

        """
        return css
    }()
}
