import LCTraceModel
import LCTraceStore

/// What `lctrace timeline` asks for: where to look in one session, and which findings to mark.
package struct TimelineRequest: Sendable {
    /// Centre on this event (`--around SEQ`).
    package var around: Int64?
    /// Centre on this controller: an id (every instance of it) or `id#since` (`--vc`).
    package var vc: String?
    /// Width of the window in ns (`--window`); nil: the default for the focus.
    package var width: Int64?
    /// Which findings are marked: families, class, severity and tuning, as for `report`.
    package var findings = ReportRequest()
    /// Lanes drawn at most; nil: no limit.
    package var maxLanes: Int? = 40
    package var showIdle = false
    package init() {}
}

/// Why a timeline cannot be drawn as asked (the CLI turns these into usage errors).
package enum TimelineError: Error, Equatable {
    case noSuchEvent(seq: Int64, sid: String)
    case noSuchInstance(vc: String, sid: String)
    case emptySession(sid: String)
}

/// Builds the timeline of one session as a request asks: finds the findings (stored, or
/// recomputed as `report` would), picks the window, reads only the rows it needs.
package enum TimelineReport {
    /// Width of the window around a seq or a finding when none is asked for.
    static let defaultWidth: Int64 = 10_000_000_000
    /// A session this short is drawn whole when nothing else is asked for.
    static let wholeSessionLimit: Int64 = 120_000_000_000

    /// `progress` hears how far the rebuild of a session changed since its analysis is (events read).
    package static func make(db: Storage, session listed: SessionInfo, _ request: TimelineRequest,
                            progress: ((Int) -> Void)? = nil) throws -> Timeline {
        let source = try TimelineSource(db: db, session: listed, settings: request.findings.settings, progress: progress)
        let findings = try self.findings(db: db, session: source.session, request.findings)
        return try make(source: source, findings: findings, request)
    }

    /// The timeline of a session whose source and findings the caller has already (the HTML
    /// report draws several examples of one session, from the findings it reports).
    static func make(source: TimelineSource, findings: [Finding], _ request: TimelineRequest) throws -> Timeline {
        let (window, options) = try plan(source: source, findings: findings, request)
        // The decisive event of a finding: the one of its evidence at its t (what --around takes).
        var decisive: [String: Int64] = [:]
        func key(_ f: Finding) -> String { "\(f.rule)|\(f.vc ?? "")|\(f.since ?? -1)|\(f.t ?? -1)|\(f.evidence)" }
        for f in findings {
            if let seq = try decisiveSeq(f, time: source.eventTime) { decisive[key(f)] = seq }
        }
        return try TimelineBuilder.build(session: source.session, reader: source, findings: findings, window: window,
                                         options: options) {
            decisive[key($0)] ?? $0.evidence.last
        }
    }

    /// Where the timeline `request` asks for looks (its window) and what it draws there.
    static func plan(source: TimelineSource, findings: [Finding], _ request: TimelineRequest) throws
        -> (window: TimeWindow, options: TimelineOptions) {
        let session = source.session
        guard let first = session.firstT, let last = session.lastT else { throw TimelineError.emptySession(sid: session.sid) }
        let span = TimeWindow(start: first, end: max(first, last))

        var options = TimelineOptions()
        options.maxLanes = request.maxLanes
        options.showIdle = request.showIdle
        options.className = request.findings.className
        // The focus: a span of time to centre on, and the instances it is about.
        var focus: TimeWindow?
        var whole = false
        if let vc = request.vc {
            let (id, since) = parseInstance(vc)
            let instances = try source.instances(vc: id).filter { since == nil || $0.key.since == since }
            guard !instances.isEmpty else { throw TimelineError.noSuchInstance(vc: vc, sid: session.sid) }
            options.focus = Set(instances.map(\.key))
            options.onlyRelated = true
            focus = TimeWindow(start: instances.map(\.firstT).min()!, end: instances.map { $0.endT ?? span.end }.max()!)
            options.focusDescription = instances.count == 1
                ? "\(instances[0].cls ?? "?") \(instances[0].key)" : "\(instances.count) instances of \(id)"
            // A window narrower than their lives is centred on their worst finding, if any.
            let theirs = findings.filter { f in f.vc.map { options.focus.contains(InstanceKey(vc: $0, since: f.since ?? -1)) } ?? false }
            if request.width != nil, let t = worstFinding(theirs)?.t { focus = TimeWindow(start: t, end: t) }
        }
        if let seq = request.around {
            guard let t = try source.eventTime(seq: seq) else { throw TimelineError.noSuchEvent(seq: seq, sid: session.sid) }
            focus = TimeWindow(start: t, end: t)
            options.focusDescription = (options.focusDescription.map { $0 + ", " } ?? "") + "seq \(seq)"
        }
        if request.vc == nil && request.around == nil {
            if request.width == nil && span.duration <= wholeSessionLimit {
                whole = true
            } else if let worst = worstFinding(findings), let t = worst.t {
                focus = TimeWindow(start: t, end: t)
                if let vc = worst.vc, let since = worst.since { options.focus = [InstanceKey(vc: vc, since: since)] }
                var what = worst.rule
                if let cls = worst.cls { what += " " + cls }
                if let vc = worst.vc { what += " " + InstanceKey(vc: vc, since: worst.since ?? -1).description }
                options.focusDescription = what
            }
        }
        let window: TimeWindow
        if whole {
            window = span
        } else if let width = request.width ?? (request.vc != nil && request.around == nil ? nil : defaultWidth) {
            window = centred(on: focus ?? TimeWindow(start: span.start, end: span.start), width: width, within: span)
        } else {
            // An instance's whole life, with a little room on either side.
            let f = focus!
            let pad = max(f.duration / 20, 100_000_000)
            window = TimeWindow(start: max(span.start, f.start.minusClamped(pad)), end: min(span.end, f.end.plusClamped(pad)))
        }
        return (window, options)
    }

    /// Adds the whole of `session` to an export: every instance a lane, every event an instant,
    /// and the findings `request` chooses (stored, or recomputed as `report` would). Streams:
    /// the lanes are found from the instances and edges, then appearances, presentations,
    /// edges and events are read one row at a time (`ChromeTraceWriter.add`).
    package static func export(db: Storage, session listed: SessionInfo, findings request: ReportRequest,
                              to writer: ChromeTraceWriter, progress: ((Int) -> Void)? = nil) throws {
        let source = try TimelineSource(db: db, session: listed, settings: request.settings, progress: progress)
        let session = source.session
        guard let first = session.firstT, let last = session.lastT else { return }
        let span = TimeWindow(start: first, end: max(first, last))
        let findings = try self.findings(db: db, session: session, request)
        let lanes = try SessionLanes(instances: try source.allInstances(), window: span) { try source.forEachEdge($0) }
        // As a timeline of the whole session lists them: those in the window on their lane (or
        // the session's), then those about an instance not drawn, then those outside the window.
        var placed: [TimelineFinding] = [], undrawn: [TimelineFinding] = [], outside: [TimelineFinding] = []
        for f in findings {
            guard let t = f.t, span.contains(t) else {
                outside.append(TimelineFinding(finding: f, lane: nil, t: f.t, seq: f.evidence.last))
                continue
            }
            let key = f.vc.map { InstanceKey(vc: $0, since: f.since ?? -1) }
            let placedFinding = TimelineFinding(finding: f, lane: key, t: t, seq: f.evidence.last)
            if key != nil && lanes.lane(key) == nil { undrawn.append(placedFinding) } else { placed.append(placedFinding) }
        }
        try writer.add(session: session, span: span,
                       sessionSpan: TimeWindow(start: session.firstT ?? span.start, end: session.lastT ?? span.end),
                       lanes: lanes, findings: placed + undrawn + outside, source: source)
    }

    /// The session's findings that `request` chooses: stored, or recomputed as `report` would.
    static func findings(db: Storage, session: SessionInfo, _ request: ReportRequest) throws -> [Finding] {
        try ReportCollector.findings(request, of: [session], db: db)[session.sid] ?? []
    }

    /// The seq of a finding's decisive event: the last of its evidence at its t (what
    /// `--around` takes); nil when none is (`time` gives an event's t, nil when absent).
    static func decisiveSeq(_ f: Finding, time: (Int64) throws -> Int64?) throws -> Int64? {
        guard let t = f.t else { return nil }
        for seq in f.evidence.reversed() where try time(seq) == t { return seq }
        return nil
    }

    /// `0x6000…` or `0x6000…#125`.
    static func parseInstance(_ text: String) -> (String, Int64?) {
        guard let hash = text.lastIndex(of: "#"), let since = Int64(text[text.index(after: hash)...]) else { return (text, nil) }
        return (String(text[..<hash]), since)
    }

    /// The first finding at the highest severity: where a reader wants to look first.
    static func worstFinding(_ findings: [Finding]) -> Finding? {
        let timed = findings.filter { $0.t != nil }
        guard let top = timed.map(\.severity).max() else { return nil }
        return timed.filter { $0.severity == top }.min { ($0.t!, $0.rule) < ($1.t!, $1.rule) }
    }

    /// A window `width` wide centred on `focus`, moved to stay inside `span`; the whole span
    /// when it is no wider.
    static func centred(on focus: TimeWindow, width: Int64, within span: TimeWindow) -> TimeWindow {
        let width = max(width, focus.duration, 1)
        if width >= span.duration { return span }
        var start = focus.start.plusClamped(focus.duration / 2).minusClamped(width / 2)
        start = min(start, span.end.minusClamped(width))
        start = max(start, span.start)
        return TimeWindow(start: start, end: start.plusClamped(width))
    }
}
