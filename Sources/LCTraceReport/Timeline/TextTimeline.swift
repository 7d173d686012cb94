import Foundation
import LCTraceModel
import LCTraceStore

/// A timeline for a terminal: one row per lane, one character per slice of time, so that it
/// fits `width` columns; colour only when `color` is set (a terminal), plain characters
/// otherwise, so that a pipe or a CI log reads the same. Below the chart, what the marks are
/// (arrows, releases, deinits) and the findings, then what the window left out and how to see it.
/// Every text from a trace (session, app, device, class, message) is escaped for terminals
/// (`TerminalText`), as `report` and `sessions` do: a class name must not clear the screen.
package struct TextTimeline {
    package var timeline: Timeline
    /// Columns available, labels included.
    package var width: Int
    package var color: Bool
    /// Long lines cut to the width (a terminal) rather than kept whole (a pipe, a log).
    package var cutsLongLines: Bool
    /// Lines of the event list before it says how many more there are.
    var maxListed = 30

    /// `cutsLongLines` nil: as `color` (colour and cut lines go together on a terminal).
    package init(_ timeline: Timeline, width: Int, color: Bool, cutsLongLines: Bool? = nil) {
        self.timeline = timeline
        self.width = width
        self.color = color
        self.cutsLongLines = cutsLongLines ?? color
    }

    /// The narrowest timeline drawn: below it, lines wrap.
    static let minimumWidth = 60

    static let legend = ["/ appearing", "# visible", "\\ disappearing", ". hidden", ": released, not deallocated",
                         "R release", "X deinit", "x id reused", "o-v o-^ present, dismiss, push, pop, view outside containment", "! finding",
                         "~ background", "> presented"]

    package func render() -> String {
        let t = timeline
        var out = header()
        let labels = [Label(prefix: "", cls: "app", key: "")]
            + t.lanes.map { Label(prefix: String(repeating: "  ", count: min($0.depth, 8)) + ($0.underPresenter ? "> " : ""),
                                  cls: shown($0.cls ?? "?"), key: shown($0.key.description)) }
        let labelWidth = min(labels.map(\.full.count).max() ?? 10, max(24, width * 45 / 100))
        let columns = max(20, max(width, Self.minimumWidth) - labelWidth - 1)
        let grid = Grid(window: t.window, columns: columns)

        let indent = String(repeating: " ", count: labelWidth + 1)
        let (ticks, ruler) = axis(grid)
        out += indent + ticks + "\n" + indent + ruler + "\n"
        var rows: [[Cell]] = [appRow(grid)] + t.lanes.map { laneRow($0, grid) }
        drawArrows(into: &rows, grid)
        for (i, row) in rows.enumerated() {
            out += pad(labels[i].fitted(labelWidth), labelWidth) + " " + paint(row) + "\n"
        }
        if t.lanes.isEmpty { out += "(no controller instance in this window)\n" }
        for line in Self.wrap(Self.legend, separator: "  ", width: max(width, Self.minimumWidth), first: "legend: ") {
            out += dim(line) + "\n"
        }
        out += eventList()
        out += findingList()
        out += omissions()
        // Cells after a lane's end are blanks: no line ends in spaces. On a terminal a long
        // line is cut to the width rather than wrapped across the chart; in a pipe it stays
        // whole (a log is searched, not looked at).
        let total = max(width, Self.minimumWidth)
        return out.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let text = String(line).trimmingTrailingSpaces()
            guard cutsLongLines, !text.contains("\u{1B}"), text.count > total else { return text }
            return String(text.prefix(total - 1)) + "…"
        }.joined(separator: "\n")
    }

    // MARK: Header

    private func header() -> String {
        let t = timeline, s = t.session
        var parts = [shown(s.sid)]
        let app = [s.app, s.appVersion, s.build.map { "(\($0))" }].compactMap { $0.map(shown) }.joined(separator: " ")
        if !app.isEmpty { parts.append(app) }
        if let device = s.device { parts.append(shown(device)) }
        let os = [s.os, s.osVersion].compactMap { $0.map(shown) }.joined(separator: " ")
        if !os.isEmpty { parts.append(os) }
        parts.append("\(NumberFormat.thousands(s.events)) events")
        let lines = Self.wrap(parts, separator: " · ", width: max(width, Self.minimumWidth), first: "timeline ")
        var text = bold("timeline") + lines[0].dropFirst("timeline".count) + "\n"
        for line in lines.dropFirst() { text += line + "\n" }
        if t.window == t.sessionSpan {
            text += "window \(Self.span(t.window)): the whole session\n"
        } else {
            let parts = ["\(Self.span(t.window)) of \(Self.span(t.sessionSpan))"] + (t.focus.map { ["around \(shown($0))"] } ?? [])
            for line in Self.wrap(parts, separator: ", ", width: max(width, Self.minimumWidth), first: "window ") {
                text += line + "\n"
            }
        }
        return text + "\n"
    }

    // MARK: Rows

    /// A lane's name: indentation (and '> ' under a presenter), class, instance.
    struct Label {
        package var prefix: String
        package var cls: String
        package var key: String

        package var full: String { key.isEmpty ? prefix + cls : prefix + cls + " " + key }

        /// The name in `width` columns: the class is shortened first, since the instance is
        /// what a reader looks up; then the indentation.
        func fitted(_ width: Int) -> String {
            guard full.count > width else { return full }
            let room = width - prefix.count - key.count - 2
            if room >= 1 { return prefix + cls.prefix(room) + "… " + key }
            return String(full.suffix(width))
        }
    }

    /// A character and how to colour it.
    struct Cell: Equatable {
        var char: Character
        package var style: Style
        package enum Style: Equatable { case plain, appearing, visible, released, release, end, finding, arrow, background }
    }

    /// Columns over the window: column i covers [start + i·step, start + (i+1)·step).
    struct Grid {
        package let window: TimeWindow
        package let columns: Int
        package let step: Double

        package init(window: TimeWindow, columns: Int) {
            self.window = window
            self.columns = columns
            step = max(Double(window.duration), 1) / Double(columns)
        }

        package func column(_ t: Int64) -> Int {
            // In Double: a trace's times may be anywhere in Int64, so no difference of two may trap.
            let c = ((Double(t) - Double(window.start)) / step).rounded(.down)
            return c.isFinite ? Int(min(max(c, 0), Double(columns - 1))) : 0
        }

        package func range(_ i: Int) -> (Double, Double) {
            (Double(window.start) + Double(i) * step, Double(window.start) + Double(i + 1) * step)
        }
    }

    private func appRow(_ grid: Grid) -> [Cell] {
        var row = [Cell](repeating: Cell(char: "-", style: .plain), count: grid.columns)
        for b in timeline.background {
            for i in grid.column(b.start)...grid.column(b.end) { row[i] = Cell(char: "~", style: .background) }
        }
        for f in timeline.findings where f.lane == nil {
            if let t = f.t { row[grid.column(t)] = Cell(char: "!", style: .finding) }
        }
        return row
    }

    private func laneRow(_ lane: TimelineLane, _ grid: Grid) -> [Cell] {
        let end = Double(lane.end ?? timeline.sessionSpan.end)
        let released = lane.release.map { Double($0.t) }
        var row: [Cell] = []
        row.reserveCapacity(grid.columns)
        for i in 0..<grid.columns {
            let (a, b) = grid.range(i)
            guard Double(lane.start) < b, end >= a else { row.append(Cell(char: " ", style: .plain)); continue }
            // The phase that fills most of the column; a phase shorter than a column still shows.
            var best: (TimelineSpan, Double)?
            for s in lane.spans where Double(s.start) < b && Double(s.end) >= a {
                let overlap = min(b, Double(s.end)) - max(a, Double(s.start))
                if best == nil || overlap > best!.1 { best = (s, overlap) }
            }
            if let (span, _) = best {
                switch span.phase {
                case .appearing: row.append(Cell(char: "/", style: .appearing))
                case .visible: row.append(Cell(char: "#", style: .visible))
                case .disappearing: row.append(Cell(char: "\\", style: .appearing))
                case .hidden: row.append(Cell(char: ".", style: .plain))
                }
            } else if let r = released, r < b {
                row.append(Cell(char: ":", style: .released))
            } else {
                row.append(Cell(char: ".", style: .plain))
            }
        }
        if let r = lane.release, timeline.window.contains(r.t) { row[grid.column(r.t)] = Cell(char: "R", style: .release) }
        if let e = lane.end, timeline.window.contains(e) {
            row[grid.column(e)] = Cell(char: lane.endHow == InstanceEnd.reused.rawValue ? "x" : "X", style: .end)
        }
        for f in timeline.findings where f.lane == lane.key {
            if let t = f.t { row[grid.column(t)] = Cell(char: "!", style: .finding) }
        }
        return row
    }

    /// An arrow from its caller's row ('o') to the moved controller's row ('v' below, '^'
    /// above), through the rows between where they show nothing but time passing.
    private func drawArrows(into rows: inout [[Cell]], _ grid: Grid) {
        for a in timeline.arrows {
            let c = grid.column(a.t)
            let from = timeline.lane(a.from).map { $0 + 1 }, to = timeline.lane(a.to).map { $0 + 1 }
            func mark(_ row: Int, _ char: Character) {
                if [" ", ".", ":", "-", "/", "#", "\\"].contains(rows[row][c].char) { rows[row][c] = Cell(char: char, style: .arrow) }
            }
            if let from, let to, from != to {
                // Through lanes alive there and hidden; a lane not alive stays blank.
                for r in (min(from, to) + 1)..<max(from, to) where [".", ":"].contains(rows[r][c].char) {
                    rows[r][c] = Cell(char: "|", style: .arrow)
                }
                mark(from, "o")
                mark(to, to > from ? "v" : "^")
            } else if let to {
                mark(to, "v")
            } else if let from {
                mark(from, "o")
            }
        }
    }

    // MARK: Axis

    /// Tick labels over a ruler with '+' at each tick.
    private func axis(_ grid: Grid) -> (String, String) {
        let step = Self.tickStep(duration: timeline.window.duration, columns: grid.columns)
        var labels = [Character](repeating: " ", count: grid.columns)
        var ruler = [Character](repeating: "-", count: grid.columns)
        var free = 0
        for tick in Self.ticks(timeline.window, step: step) {
            let c = grid.column(tick)
            ruler[c] = "+"
            let text = Array(Self.tickLabel(tick, step: step))
            if c >= free && c + text.count <= grid.columns {
                for (k, ch) in text.enumerated() { labels[c + k] = ch }
                free = c + text.count + 1
            }
        }
        return (String(labels).trimmingTrailingSpaces(), String(ruler))
    }

    /// The multiples of `step` in `window`, computed so that no time near the end of Int64 traps.
    static func ticks(_ window: TimeWindow, step: Int64) -> [Int64] {
        var out: [Int64] = []
        var tick = window.start.plusClamped(step - 1) / step * step
        while tick <= window.end {
            out.append(tick)
            let (next, overflow) = tick.addingReportingOverflow(step)
            if overflow { break }
            tick = next
        }
        return out
    }

    /// A round tick interval (1, 2 or 5 times a power of ten, in ns) every 8 columns or more.
    static func tickStep(duration: Int64, columns: Int) -> Int64 {
        let target = Double(max(duration, 1)) * 8 / Double(max(columns, 1))
        var unit: Double = 1_000_000  // 1 ms
        while true {
            for m in [1.0, 2.0, 5.0] where unit * m >= target { return Int64(unit * m) }
            unit *= 10
        }
    }

    static func tickLabel(_ t: Int64, step: Int64) -> String {
        let seconds = Double(t) / 1e9
        if step >= 1_000_000_000 { return String(format: "%.0fs", seconds) }
        if step >= 100_000_000 { return String(format: "%.1fs", seconds) }
        if step >= 10_000_000 { return String(format: "%.2fs", seconds) }
        return String(format: "%.3fs", seconds)
    }

    // MARK: Lists

    private func eventList() -> String {
        var lines: [(Int64, Int64, String)] = []
        for a in timeline.arrows {
            var text = a.kind == .viewAttached || a.kind == .viewDetached
                ? "\(pad(a.kind.rawValue, 12)) \(name(a.to))'s view \(a.kind == .viewAttached ? "into" : "out of") \(name(a.from)), not its container"
                : "\(pad(a.kind.rawValue, 12)) \(name(a.from)) -> \(name(a.to))"
            var notes: [String] = []
            if let style = a.style { notes.append(shown(style)) }
            if a.interactive { notes.append("interactive") }
            if !notes.isEmpty { text += " (\(notes.joined(separator: ", ")))" }
            lines.append((a.t, a.seq, text))
        }
        for lane in timeline.lanes {
            if let r = lane.release, timeline.window.contains(r.t) {
                lines.append((r.t, r.seq, "\(pad("release", 12)) \(shown(lane.label)) (\(shown(r.how)))"))
            }
            if let e = lane.end, timeline.window.contains(e) {
                lines.append((e, lane.endSeq ?? -1, "\(pad(shown(lane.endHow ?? "end"), 12)) \(shown(lane.label))"))
            }
        }
        guard !lines.isEmpty else { return "" }
        lines.sort { ($0.0, $0.1) < ($1.0, $1.1) }
        var out = "\nevents:\n"
        for (t, seq, text) in lines.prefix(maxListed) {
            out += "  \(pad(Self.seconds(t), 10, right: true))  \(pad("seq \(seq)", 10)) \(text)\n"
        }
        if lines.count > maxListed {
            out += "  … \(NumberFormat.thousands(lines.count - maxListed)) more in this window (narrow it with --window or --vc)\n"
        }
        return out
    }

    private func findingList() -> String {
        guard !timeline.findings.isEmpty else { return "" }
        var out = "\nfindings:\n"
        for f in timeline.findings {
            let who = shown(f.finding.vc.map { InstanceKey(vc: $0, since: f.finding.since ?? -1).description } ?? "session")
            let evidence = f.finding.evidence.map(String.init).joined(separator: ", ")
            out += "  ! \(pad(f.t.map(Self.seconds) ?? "-", 10, right: true))  "
                + "\(f.finding.rule) \(f.finding.severity.rawValue)  \(who): \(shown(f.finding.message)) [seq \(evidence)]\n"
        }
        return out
    }

    private func omissions() -> String {
        let o = timeline.omitted
        guard !o.isEmpty else { return "" }
        var out = "\n"
        if !o.instanceParts.isEmpty { out += "left out: " + o.instanceParts.joined(separator: ", ") + "\n" }
        if !o.findings.isEmpty { out += "findings outside: " + o.findingParts(5).joined(separator: ", ") + "\n" }
        out += "see more with --around SEQ, --window DURATION, --vc ID[#SINCE]\n"
        return out
    }

    // MARK: Formatting

    /// `items` joined by `separator` in lines of at most `width` columns (an item longer than
    /// a line gets a line of its own); the first line begins with `first`, the others are
    /// indented as far.
    static func wrap(_ items: [String], separator: String, width: Int, first: String) -> [String] {
        var lines: [String] = []
        var line = first
        var empty = true
        let indent = String(repeating: " ", count: first.count)
        for item in items {
            if !empty && line.count + separator.count + item.count > width {
                lines.append(line)
                line = indent
                empty = true
            }
            line += (empty ? "" : separator) + item
            empty = false
        }
        lines.append(line)
        return lines
    }

    private func name(_ key: InstanceKey?) -> String {
        guard let key else { return "?" }
        if let i = timeline.lane(key) { return shown(timeline.lanes[i].label) }
        return shown(key.description)
    }

    /// Text from a trace, safe for a terminal or a pipe.
    private func shown(_ text: String) -> String { TerminalText.escaped(text) }

    private func pad(_ text: String, _ n: Int, right: Bool = false) -> String {
        let count = text.count
        guard count < n else { return text }
        let space = String(repeating: " ", count: n - count)
        return right ? space + text : text + space
    }

    package static func seconds(_ t: Int64) -> String { String(format: "%.2f s", Double(t) / 1e9) }

    package static func span(_ w: TimeWindow) -> String {
        String(format: "%.2f–%.2f s", Double(w.start) / 1e9, Double(w.end) / 1e9)
    }

    private func bold(_ text: String) -> String { color ? "\u{1B}[1m\(text)\u{1B}[0m" : text }
    private func dim(_ text: String) -> String { color ? "\u{1B}[2m\(text)\u{1B}[0m" : text }

    /// Cells as text, with one colour escape per run of one style.
    private func paint(_ cells: [Cell]) -> String {
        guard color else { return String(cells.map(\.char)) }
        var out = ""
        var i = 0
        while i < cells.count {
            var j = i
            while j < cells.count && cells[j].style == cells[i].style { j += 1 }
            let text = String(cells[i..<j].map(\.char))
            if let code = Self.codes[cells[i].style] { out += "\u{1B}[\(code)m\(text)\u{1B}[0m" } else { out += text }
            i = j
        }
        return out
    }

    private static let codes: [Cell.Style: String] = [
        .appearing: "33", .visible: "32", .released: "35", .release: "35;1", .end: "34;1", .finding: "31;1",
        .arrow: "36", .background: "2",
    ]
}

extension TextTimeline.Cell.Style: Hashable {}

package extension String {
    func trimmingTrailingSpaces() -> String {
        var s = Substring(self)
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
