import LCTraceFormat
import LCTraceModel
import LCTraceStore

/// What happened in one session over a window of its clock, ready to draw: one lane per
/// controller instance in containment order, its appearance phases, its release and end, the
/// presentations and navigation between lanes, and the session's findings at their decisive
/// event. Built once by `TimelineBuilder`; the text and SVG timelines and the Chrome trace
/// export all draw this same value, so they cannot disagree.
package struct Timeline: Sendable {
    package var session: SessionInfo
    /// The span drawn.
    package var window: TimeWindow
    /// The session's first to last event.
    var sessionSpan: TimeWindow
    /// Lanes in display order: containment tree, depth first, each parent above its children.
    var lanes: [TimelineLane]
    /// Presentations, dismissals, pushes, pops and views outside containment, in time order.
    var arrows: [TimelineArrow]
    /// Containment edges between two lanes (container → child), in time order.
    var edges: [TimelineEdge]
    /// The session's findings whose decisive event is in the window, in time order.
    var findings: [TimelineFinding]
    /// When the app was in the background (clipped to the window).
    package var background: [TimeWindow]
    /// What the window and the lane limits left out, so a reader knows what is not shown.
    var omitted: TimelineOmissions
    /// Why the window is where it is ("10 s around seq 187"), for the header.
    var focus: String?

    /// The lane of an instance, when it is drawn.
    package func lane(_ key: InstanceKey?) -> Int? {
        guard let key else { return nil }
        return laneIndex[key]
    }
    var laneIndex: [InstanceKey: Int] = [:]
}

/// One controller instance.
struct TimelineLane: Sendable {
    package var key: InstanceKey
    package var cls: String?
    /// Depth among the lanes drawn: under its container, or under its presenter when it has
    /// none (0: neither is drawn).
    package var depth: Int
    /// Its container during the window.
    package var parent: InstanceKey?
    /// The controller that presented it.
    package var presentedBy: InstanceKey?
    /// Drawn under its presenter (it has no container drawn): a modal screen above the one
    /// that presented it.
    var underPresenter = false
    /// Its first event and its end (deinit or reused id); nil end: alive when the session ended.
    package var start: Int64
    package var end: Int64?
    package var endSeq: Int64?
    /// `deinit` or `reused`.
    package var endHow: String?
    /// Appearance phases in time order, clipped to nothing: renderers clip to the window.
    var spans: [TimelineSpan]
    /// The release that started its leak clock (not cancelled by a later appearance).
    package var release: TimelineRows.ReleaseRow?
    /// Named by `--vc` (or the instance of the finding the window is centred on).
    var focused: Bool

    /// "Class vc#since": how every output names an instance.
    package var label: String { "\(cls ?? "?") \(key)" }
}

/// One phase of one appearance cycle.
struct TimelineSpan: Sendable, Equatable {
    /// appearing, visible or disappearing.
    var phase: AppearanceState
    package var start: Int64
    package var end: Int64
    /// The cycle's viewWillAppear seq (its key in `appearances`).
    package var cycle: Int64
    /// The cycle ran inside an interactive transition (a finger drove it).
    package var interactive: Bool
}

/// A presentation or navigation call, from the controller that made it to the one it moved;
/// or a view put into (or taken out of) a controller's hierarchy that does not contain it.
struct TimelineArrow: Sendable, Equatable {
    /// present, dismiss, push, pop, viewAttached or viewDetached.
    package var kind: EventKind
    package var seq: Int64
    package var t: Int64
    /// The presenter or navigation controller (for a dismissal, the presenter when known), or
    /// the view's host.
    package var from: InstanceKey?
    /// The presented, dismissed, pushed or popped controller, or the one whose view moved.
    package var to: InstanceKey?
    package var interactive: Bool
    /// The presentation style, for `present`.
    package var style: String?
}

/// An addChild edge between two lanes.
struct TimelineEdge: Sendable, Equatable {
    package var parent: InstanceKey
    package var child: InstanceKey
    package var addSeq: Int64
    package var addT: Int64
    package var removeT: Int64?
}

/// A finding placed on the timeline: on its instance's lane, or on the session row.
struct TimelineFinding: Sendable {
    package var finding: Finding
    /// The instance it is about, when that instance is a lane.
    package var lane: InstanceKey?
    /// Its decisive event's t, and seq when known (what `--around` takes).
    package var t: Int64?
    package var seq: Int64?
}

/// What a timeline does not show, counted, with the findings it leaves out.
struct TimelineOmissions: Sendable {
    /// Instances with no moment in the window.
    package var outside = 0
    /// Instances alive in the window with nothing happening to them (hidden throughout).
    package var idle = 0
    /// Instances `--vc` or `--class` left out.
    var filtered = 0
    /// Instances left out past the lane limit.
    var overLimit = 0
    /// Findings whose decisive event is outside the window (or about an instance not drawn).
    package var findings: [TimelineFinding] = []

    package var isEmpty: Bool { outside == 0 && idle == 0 && filtered == 0 && overLimit == 0 && findings.isEmpty }

    /// The instances left out, as every timeline says it ("3 instances outside the window").
    var instanceParts: [String] {
        var parts: [String] = []
        if outside > 0 { parts.append("\(NumberFormat.thousands(outside)) instance\(outside == 1 ? "" : "s") outside the window") }
        if idle > 0 { parts.append("\(NumberFormat.thousands(idle)) hidden throughout (--idle draws them)") }
        if filtered > 0 { parts.append("\(NumberFormat.thousands(filtered)) not related to the focus") }
        if overLimit > 0 { parts.append("\(NumberFormat.thousands(overLimit)) past the lane limit (--lanes N)") }
        return parts
    }

    /// The first `limit` findings left out ("LC101 at seq 54 (1.82 s)"), then how many more.
    func findingParts(_ limit: Int) -> [String] {
        var parts = findings.prefix(limit).map { f -> String in
            var text = f.finding.rule
            if let seq = f.seq { text += " at seq \(seq)" }
            if let t = f.t { text += " (\(TextTimeline.seconds(t)))" }
            return text
        }
        if findings.count > limit { parts[parts.count - 1] += ", … \(findings.count - limit) more" }
        return parts
    }
}
