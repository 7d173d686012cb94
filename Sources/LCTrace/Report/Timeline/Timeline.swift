/// What happened in one session over a window of its clock, ready to draw: one lane per
/// controller instance in containment order, its appearance phases, its release and end, the
/// presentations and navigation between lanes, and the session's findings at their decisive
/// event. Built once by `TimelineBuilder`; the text and SVG timelines and the Chrome trace
/// export all draw this same value, so they cannot disagree.
public struct Timeline: Sendable {
    public var session: SessionInfo
    /// The span drawn.
    public var window: TimeWindow
    /// The session's first to last event.
    public var sessionSpan: TimeWindow
    /// Lanes in display order: containment tree, depth first, each parent above its children.
    public var lanes: [TimelineLane]
    /// Presentations, dismissals, pushes, pops and views outside containment, in time order.
    public var arrows: [TimelineArrow]
    /// Containment edges between two lanes (container → child), in time order.
    public var edges: [TimelineEdge]
    /// The session's findings whose decisive event is in the window, in time order.
    public var findings: [TimelineFinding]
    /// When the app was in the background (clipped to the window).
    public var background: [TimeWindow]
    /// What the window and the lane limits left out, so a reader knows what is not shown.
    public var omitted: TimelineOmissions
    /// Why the window is where it is ("10 s around seq 187"), for the header.
    public var focus: String?

    /// The lane of an instance, when it is drawn.
    public func lane(_ key: InstanceKey?) -> Int? {
        guard let key else { return nil }
        return laneIndex[key]
    }
    var laneIndex: [InstanceKey: Int] = [:]
}

/// One controller instance.
public struct TimelineLane: Sendable {
    public var key: InstanceKey
    public var cls: String?
    /// Depth among the lanes drawn: under its container, or under its presenter when it has
    /// none (0: neither is drawn).
    public var depth: Int
    /// Its container during the window.
    public var parent: InstanceKey?
    /// The controller that presented it.
    public var presentedBy: InstanceKey?
    /// Drawn under its presenter (it has no container drawn): a modal screen above the one
    /// that presented it.
    public var underPresenter = false
    /// Its first event and its end (deinit or reused id); nil end: alive when the session ended.
    public var start: Int64
    public var end: Int64?
    public var endSeq: Int64?
    /// `deinit` or `reused`.
    public var endHow: String?
    /// Appearance phases in time order, clipped to nothing: renderers clip to the window.
    public var spans: [TimelineSpan]
    /// The release that started its leak clock (not cancelled by a later appearance).
    public var release: TimelineRows.ReleaseRow?
    /// Named by `--vc` (or the instance of the finding the window is centred on).
    public var focused: Bool

    /// "Class vc#since": how every output names an instance.
    public var label: String { "\(cls ?? "?") \(key)" }
}

/// One phase of one appearance cycle.
public struct TimelineSpan: Sendable, Equatable {
    /// appearing, visible or disappearing.
    public var phase: AppearanceState
    public var start: Int64
    public var end: Int64
    /// The cycle's viewWillAppear seq (its key in `appearances`).
    public var cycle: Int64
    /// The cycle ran inside an interactive transition (a finger drove it).
    public var interactive: Bool
}

/// A presentation or navigation call, from the controller that made it to the one it moved;
/// or a view put into (or taken out of) a controller's hierarchy that does not contain it.
public struct TimelineArrow: Sendable, Equatable {
    /// present, dismiss, push, pop, viewAttached or viewDetached.
    public var kind: EventKind
    public var seq: Int64
    public var t: Int64
    /// The presenter or navigation controller (for a dismissal, the presenter when known), or
    /// the view's host.
    public var from: InstanceKey?
    /// The presented, dismissed, pushed or popped controller, or the one whose view moved.
    public var to: InstanceKey?
    public var interactive: Bool
    /// The presentation style, for `present`.
    public var style: String?
}

/// An addChild edge between two lanes.
public struct TimelineEdge: Sendable, Equatable {
    public var parent: InstanceKey
    public var child: InstanceKey
    public var addSeq: Int64
    public var addT: Int64
    public var removeT: Int64?
}

/// A finding placed on the timeline: on its instance's lane, or on the session row.
public struct TimelineFinding: Sendable {
    public var finding: Finding
    /// The instance it is about, when that instance is a lane.
    public var lane: InstanceKey?
    /// Its decisive event's t, and seq when known (what `--around` takes).
    public var t: Int64?
    public var seq: Int64?
}

/// What a timeline does not show, counted, with the findings it leaves out.
public struct TimelineOmissions: Sendable {
    /// Instances with no moment in the window.
    public var outside = 0
    /// Instances alive in the window with nothing happening to them (hidden throughout).
    public var idle = 0
    /// Instances `--vc` or `--class` left out.
    public var filtered = 0
    /// Instances left out past the lane limit.
    public var overLimit = 0
    /// Findings whose decisive event is outside the window (or about an instance not drawn).
    public var findings: [TimelineFinding] = []

    public var isEmpty: Bool { outside == 0 && idle == 0 && filtered == 0 && overLimit == 0 && findings.isEmpty }

    /// The instances left out, as every timeline says it ("3 instances outside the window").
    public var instanceParts: [String] {
        var parts: [String] = []
        if outside > 0 { parts.append("\(TextReport.group(outside)) instance\(outside == 1 ? "" : "s") outside the window") }
        if idle > 0 { parts.append("\(TextReport.group(idle)) hidden throughout (--idle draws them)") }
        if filtered > 0 { parts.append("\(TextReport.group(filtered)) not related to the focus") }
        if overLimit > 0 { parts.append("\(TextReport.group(overLimit)) past the lane limit (--lanes N)") }
        return parts
    }

    /// The first `limit` findings left out ("LC101 at seq 54 (1.82 s)"), then how many more.
    public func findingParts(_ limit: Int) -> [String] {
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
