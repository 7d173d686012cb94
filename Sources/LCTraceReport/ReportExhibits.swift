import LCTraceFormat
import LCTraceModel
import LCTraceRules
import LCTraceStore

/// How much of its examples the HTML report draws. Examples beyond these are counted and
/// named with the command that shows them, never silently left out.
package struct ExhibitLimits: Sendable {
    /// Examples drawn (timeline, holders, raw events) per group, and on the page in all.
    var perGroup = 3
    package var total = 60
    /// Raw events listed per example.
    package var events = 24
    /// Lanes per timeline.
    package var lanes = 16
    package init() {}
}

/// What a report draws of one example finding: its session's timeline around the decisive
/// event (the model `lctrace timeline` draws), the controllers that held it, its raw events.
struct FindingExhibit: Sendable {
    package var timeline: Timeline?
    /// Why there is no timeline ("the session has no events").
    package var missing: String?
    var holders: [ExhibitHolder]
    /// Raw events of the instance nearest the decisive event (at most `ExhibitLimits.events`),
    /// and the finding's evidence, in seq order.
    package var events: [TraceEvent]
    /// Seqs of the finding's evidence among `events`.
    package var evidence: Set<Int64>
    /// Events of the instance in all (those listed are `events.count`).
    var eventsTotal: Int
    /// `lctrace query …` listing every event of the instance.
    var eventsCommand: String?
}

/// A controller related to an example's instance: what contained, presented or moved it, and
/// what it contained.
struct ExhibitHolder: Sendable, Equatable {
    /// "container", "presented by", "pushed by", "popped by", "dismissed by", "view put into",
    /// "released along with", "child".
    package var relation: String
    /// "Class vc#since".
    package var label: String
}

/// The examples a report draws, chosen from the view's groups, and the decisive seq of every
/// example it lists (what `lctrace timeline --around` takes).
package struct ReportExhibits: Sendable {
    var limits: ExhibitLimits
    /// Finding index → what is drawn of it.
    var drawn: [Int: FindingExhibit] = [:]
    /// Finding index → the seq of its decisive event, for every listed example with a session.
    var decisiveSeq: [Int: Int64] = [:]
    /// Examples that would be drawn but for `limits.total`.
    var leftOut = 0

    /// Families whose examples get a timeline: leaks and orphans (what an engineer has to see).
    package static let families: Set<RuleFamily> = [.leaks, .orphans]

    /// Draws the examples of `view`: in each group of a drawn family its first
    /// `limits.perGroup` listed examples, one round over every group at a time (each group
    /// gets its first before any gets its second) until `limits.total`. `progress` hears
    /// (done, to do).
    package static func gather(_ view: ReportView, db: Storage, limits: ExhibitLimits = ExhibitLimits(),
                              progress: ((Int, Int) -> Void)? = nil) throws -> ReportExhibits {
        var out = ReportExhibits(limits: limits)
        let query = ExhibitQuery(db: db.backend.reader)
        let listed = view.options.examples
        var rounds: [[Int]] = []
        // The listed examples' evidence, by session: their times are read a session at a time
        // (one statement each, not one per event: a server's round trips add up).
        var evidence: [Int64: [Int]] = [:]
        for family in view.sections {
            for section in family.rules {
                for group in section.groups {
                    let shown = group.examples.prefix(listed)
                    for i in shown where view.findings[i].t != nil {
                        guard let s = view.session(view.findings[i].session) else { continue }
                        evidence[s.id, default: []].append(i)
                    }
                    guard families.contains(family.family) else { continue }
                    let drawable = shown.filter { view.findings[$0].session != nil && view.findings[$0].t != nil }
                    for (k, i) in drawable.prefix(limits.perGroup).enumerated() {
                        if rounds.count <= k { rounds.append([]) }
                        rounds[k].append(i)
                    }
                }
            }
        }
        for (session, examples) in evidence.sorted(by: { $0.key < $1.key }) {
            let times = try query.eventTimes(session: session, seqs: examples.flatMap { view.findings[$0].evidence })
            for i in examples {
                if let seq = try TimelineReport.decisiveSeq(view.findings[i], time: { times[$0] }) { out.decisiveSeq[i] = seq }
            }
        }
        let candidates = rounds.flatMap { $0 }
        let chosen = Array(candidates.prefix(limits.total))
        out.leftOut = candidates.count - chosen.count

        // One session's source at a time (a session changed since its analysis is rebuilt once).
        var bySession: [String: [Int]] = [:]
        for i in chosen { bySession[view.findings[i].session!, default: []].append(i) }
        var done = 0
        let findingsBySession = try findings(of: bySession.keys.sorted().compactMap(view.session), view, db: db)
        for sid in bySession.keys.sorted() {
            guard let session = view.session(sid) else { continue }
            let source = try TimelineSource(db: db, session: session, settings: view.data.settings)
            let findingsOf = findingsBySession[sid] ?? []
            // The windows of the session's examples, whose rows are read once for all of them.
            let windows = bySession[sid]!.compactMap { i -> TimeWindow? in
                var request = timelineRequest(i, view, around: out.decisiveSeq[i], limits: limits)
                if let planned = try? TimelineReport.plan(source: source, findings: findingsOf, request) { return planned.window }
                request.vc = nil
                return try? TimelineReport.plan(source: source, findings: findingsOf, request).window
            }
            try source.share(windows, widest: TimelineReport.defaultWidth)
            for i in bySession[sid]! {
                progress?(done, chosen.count)
                out.drawn[i] = try exhibit(i, view, source: source, findings: findingsOf, query: query,
                                           around: out.decisiveSeq[i], limits: limits)
                done += 1
            }
        }
        progress?(done, chosen.count)
        return out
    }

    /// Every finding of each of `sessions` the report selects, in report order (a timeline
    /// marks them), by sid: from the view when it holds them all, else read again for those
    /// sessions (`ReportCollector.findings(_:of:db:)`).
    static func findings(of sessions: [SessionInfo], _ view: ReportView, db: Storage) throws -> [String: [Finding]] {
        if let all = view.findings.all {
            let wanted = Set(sessions.map(\.sid))
            var out: [String: [Finding]] = [:]
            for s in sessions { out[s.sid] = [] }
            for f in all { if let sid = f.session, wanted.contains(sid) { out[sid]!.append(f) } }
            return out
        }
        var request = ReportRequest()
        request.families = view.options.families
        request.minSeverity = view.data.minSeverity
        request.className = view.data.className
        request.settings = view.data.settings
        request.gapStatistics = false
        return try ReportCollector.findings(request, of: sessions, db: db)
    }

    static func exhibit(_ i: Int, _ view: ReportView, source: TimelineSource, findings: [Finding], query: ExhibitQuery,
                        around: Int64?, limits: ExhibitLimits) throws -> FindingExhibit {
        let f = view.findings[i]
        let session = source.session
        var request = timelineRequest(i, view, around: around, limits: limits)
        var timeline: Timeline?
        var missing: String?
        do {
            timeline = try TimelineReport.make(source: source, findings: findings, request)
        } catch TimelineError.noSuchInstance {
            // An id with no instance row (an unknown controller): the session around the event.
            request.vc = nil
            timeline = try? TimelineReport.make(source: source, findings: findings, request)
            if timeline == nil { missing = "the session has no event \(request.around.map(String.init) ?? "")" }
        } catch TimelineError.emptySession {
            missing = "the session has no events"
        } catch TimelineError.noSuchEvent(let seq, _) {
            missing = "the session has no event with seq \(seq)"
        }

        var events: [TraceEvent] = []
        var total = 0
        var command: String?
        let key = f.vc.map { InstanceKey(vc: $0, since: f.since ?? -1) }
        let lane = timeline.flatMap { t in t.lane(key).map { t.lanes[$0] } }
        if let vc = f.vc, let since = f.since {
            let end = lane?.endSeq
            (events, total) = try query.instanceEvents(session: session.id, sid: session.sid, vc: vc, since: since, end: end,
                                                       around: request.around ?? since, limit: limits.events)
            command = view.options.followUp.command(HintQueries.instanceEvents(sid: session.sid, vc: vc, since: since, end: end))
        }
        // The evidence is always listed, whatever the cap kept.
        let have = Set(events.map(\.seq))
        let extra = try query.events(session: session.id, sid: session.sid, seqs: f.evidence.filter { !have.contains($0) })
        if !extra.isEmpty {
            events = (events + extra).sorted { $0.seq < $1.seq }
            if f.vc == nil { total = events.count }
        }
        return FindingExhibit(timeline: timeline, missing: missing, holders: holders(f, lane: lane, timeline: timeline),
                              events: events, evidence: Set(f.evidence), eventsTotal: max(total, events.count),
                              eventsCommand: command)
    }

    /// The timeline drawn of example `i`: its instance around its decisive event.
    static func timelineRequest(_ i: Int, _ view: ReportView, around: Int64?, limits: ExhibitLimits) -> TimelineRequest {
        let f = view.findings[i]
        var request = TimelineRequest()
        request.vc = f.vc.map { v in f.since.map { "\(v)#\($0)" } ?? v }
        request.around = around ?? f.evidence.last
        request.maxLanes = limits.lanes
        request.findings.className = view.data.className
        return request
    }

    /// What contained, presented or moved the instance in the window, the controller whose
    /// release took it along, and its children.
    static func holders(_ f: Finding, lane: TimelineLane?, timeline: Timeline?) -> [ExhibitHolder] {
        guard let t = timeline, let lane else { return [] }
        var out: [ExhibitHolder] = []
        func add(_ relation: String, _ key: InstanceKey?) {
            guard let key else { return }
            let label = t.lane(key).map { t.lanes[$0].label } ?? "? \(key)"
            let h = ExhibitHolder(relation: relation, label: label)
            if !out.contains(h) { out.append(h) }
        }
        var seen: Set<InstanceKey> = [lane.key]
        var node = lane.parent
        while let p = node, seen.insert(p).inserted {
            add("container", p)
            node = t.lane(p).flatMap { t.lanes[$0].parent }
        }
        add("presented by", lane.presentedBy)
        let names: [EventKind: String] = [.push: "pushed by", .pop: "popped by", .present: "presented by",
                                          .dismiss: "dismissed by", .viewAttached: "view put into", .viewDetached: "view taken out of"]
        for a in t.arrows where a.to == lane.key {
            if let relation = names[a.kind] { add(relation, a.from) }
        }
        if let rule = RuleCatalog.info(f.rule), let keys = rule.report.heldByKeys, keys.count == 2,
           let vc = f.detail[keys[0]]?.description, let since = f.detail[keys[1]]?.number {
            add("released along with", InstanceKey(vc: vc, since: Int64(since)))
        }
        for other in t.lanes where other.parent == lane.key { add("child", other.key) }
        return out
    }
}
