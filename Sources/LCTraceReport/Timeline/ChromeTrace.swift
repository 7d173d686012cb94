import LCTraceFormat
import LCTraceModel
import LCTraceStore

/// Sessions as Chrome Trace Event JSON, the format Perfetto UI (ui.perfetto.dev) and
/// chrome://tracing open. The shape follows the format's rules and what Perfetto's JSON
/// importer does with them:
/// - a process per session (`pid`), named by `process_name` metadata; a thread per controller
///   instance (`tid`, unique over the file), named "Class vc#since" by `thread_name`
///   metadata, in containment order, after a thread for the session's own events and findings;
/// - each instance's lifetime is one complete slice (`X`) on its thread: it nests nothing but
///   instants, and it is what flows bind to (Perfetto binds flows to thread slices only);
/// - its appearance cycles are nestable async slices (`b`/`e`) keyed by the instance (one `id`
///   and category per instance, unique over the whole file: Perfetto keys async tracks by
///   category and id, not by process), each cycle a slice named after the instance (the
///   track takes the name of its first slice) holding its appearing, visible and
///   disappearing phases; an `e` always closes the last `b` open on its track, with the same
///   name and category;
/// - lifecycle events, releases and findings are thread-scoped instants (`i`, `s: "t"`);
/// - flows (`s` then `f`, one id each) go from presenter to presented at `present`, and from
///   container to child at `addChild`; `s` binds to the enclosing slice, `f` with `bp: "e"`
///   to the enclosing one, or (without `bp`) to the next slice when the child begins later;
/// - `ts` in microseconds (fractions keep the nanoseconds), in time order on every track: a
///   thread's records are sorted by time; on an async track, where an `e` must follow its `b`,
///   a clock that went backwards (LC903) is held level instead.
/// No `displayTimeUnit`: Perfetto reads it as the unit of `ts`.
package final class ChromeTraceWriter {
    private let emit: (String) throws -> Void
    /// Records waiting to be emitted: a record at a time would be a write call each.
    private var buffer = ""
    private var wroteEvent = false
    private var nextFlow = 1
    private var nextProcess = 1
    /// Thread ids are unique over the file, not per process: Perfetto reads a tid met again
    /// in another process as a new thread, which would split a track at every session switch.
    private var nextThread = 1

    /// `emit` receives the document piece by piece, in order.
    package init(emit: @escaping (String) throws -> Void) { self.emit = emit }

    package func begin() throws { try emit("{\"traceEvents\":[") }

    package func finish() throws {
        buffer += wroteEvent ? "\n]}\n" : "]}\n"
        try emit(buffer)
        buffer = ""
    }

    /// Adds one session: `timeline` of the whole session (every instance a lane), and its
    /// events in seq order through `events`.
    package func add(_ timeline: Timeline, rows: TimelineRows,
                    events: ((TraceEvent) throws -> Void) throws -> Void) throws {
        let pid = nextProcess
        nextProcess += 1
        // The session's own thread, then one per lane.
        let base = nextThread
        nextThread += timeline.lanes.count + 1
        func tid(_ lane: Int?) -> Int { lane.map { base + 1 + $0 } ?? base }
        let s = timeline.session
        var meta: [String] = []
        let title = ["session \(s.sid)", [s.app, s.appVersion, s.build.map { "(\($0))" }].compactMap { $0 }.joined(separator: " "),
                     s.device ?? ""].filter { !$0.isEmpty }.joined(separator: " · ")
        meta.append(metadata("process_name", pid: pid, tid: nil, args: "{\"name\":\(jsonString(title))}"))
        meta.append(metadata("process_sort_index", pid: pid, tid: nil, args: "{\"sort_index\":\(pid)}"))
        meta.append(metadata("thread_name", pid: pid, tid: tid(nil), args: "{\"name\":\"session\"}"))
        meta.append(metadata("thread_sort_index", pid: pid, tid: tid(nil), args: "{\"sort_index\":0}"))
        for (i, lane) in timeline.lanes.enumerated() {
            let name = String(repeating: "› ", count: min(lane.depth, 8)) + lane.label
            meta.append(metadata("thread_name", pid: pid, tid: tid(i), args: "{\"name\":\(jsonString(name))}"))
            meta.append(metadata("thread_sort_index", pid: pid, tid: tid(i), args: "{\"sort_index\":\(i + 1)}"))
        }
        for m in meta { try write(m) }

        var tracks = Tracks()
        let end = timeline.sessionSpan.end
        for (i, lane) in timeline.lanes.enumerated() {
            let tid = tid(i)
            let laneEnd = max(lane.end ?? end, lane.start)
            var args = "{\"vc\":\(jsonString(lane.key.vc)),\"since\":\(lane.key.since),\"class\":\(lane.cls.map(jsonString) ?? "null")"
            args += ",\"end\":\(jsonString(lane.endHow ?? "alive at the end"))"
            if let r = lane.release { args += ",\"release\":\(jsonString(r.how)),\"release_seq\":\(r.seq)" }
            args += "}"
            tracks.thread(at: lane.start, rank: 0,
                          "{\"ph\":\"X\",\"cat\":\"lifetime\",\"name\":\(jsonString(lane.label)),\"pid\":\(pid),\"tid\":\(tid),\"ts\":\(micro(lane.start)),\"dur\":\(micro(laneEnd - lane.start)),\"args\":\(args)}")
            appearance(lane, pid: pid, tid: tid, into: &tracks)
            if let r = lane.release {
                tracks.thread(at: r.t, rank: 2, instant("release (\(r.how))", cat: "leak", pid: pid, tid: tid, t: r.t,
                                                              args: "{\"seq\":\(r.seq),\"how\":\(jsonString(r.how))}"))
            }
        }
        // A finding with no decisive event (lost events: a hole has no time) sits at the start.
        for f in timeline.findings + timeline.omitted.findings {
            let t = f.t ?? timeline.sessionSpan.start
            let tid = tid(timeline.lane(f.lane))
            var args = "{\"severity\":\(jsonString(f.finding.severity.rawValue)),\"message\":\(jsonString(f.finding.message))"
            args += ",\"evidence\":[\(f.finding.evidence.map(String.init).joined(separator: ","))],\"confidence\":\(jsonString(f.finding.confidence))}"
            tracks.thread(at: t, rank: 2, instant("\(f.finding.rule) \(f.finding.name)", cat: "finding", pid: pid, tid: tid, t: t, args: args))
        }
        flows(timeline, pid: pid, tid: tid, into: &tracks)

        let ids = InstanceResolver(rows.instances)
        try events { e in
            let tid = tid(e.vc.flatMap { ids.resolve($0, at: e.seq) }.flatMap(timeline.lane))
            tracks.thread(at: e.t, rank: 2, instant(e.name, cat: "lifecycle", pid: pid, tid: tid, t: e.t, args: Self.args(e)))
        }
        for record in tracks.ordered() { try write(record) }
    }

    // MARK: Pieces

    /// The cycles of a lane as async slices: a cycle named after the instance, its phases inside.
    private func appearance(_ lane: TimelineLane, pid: Int, tid: Int, into tracks: inout Tracks) {
        let id = jsonString("\(pid).\(tid)")
        var cycles: [(Int64, [TimelineSpan])] = []
        for span in lane.spans {
            if cycles.last?.0 == span.cycle { cycles[cycles.count - 1].1.append(span) } else { cycles.append((span.cycle, [span])) }
        }
        // In nesting order; a time is held level where the clock went backwards, never
        // reordered (an `e` must follow its `b`).
        var steps: [(ph: String, name: String, t: Int64, args: String?)] = []
        for (willSeq, spans) in cycles {
            guard let first = spans.first, let last = spans.last else { continue }
            steps.append(("b", lane.label, first.start, "{\"will_seq\":\(willSeq),\"interactive\":\(first.interactive)}"))
            for s in spans {
                steps.append(("b", s.phase.rawValue, s.start, nil))
                steps.append(("e", s.phase.rawValue, s.end, nil))
            }
            steps.append(("e", lane.label, last.end, nil))
        }
        var last = Int64.min
        tracks.async(steps.map { step in
            last = max(last, step.t)
            var json = "{\"ph\":\"\(step.ph)\",\"cat\":\"appearance\",\"id\":\(id),\"name\":\(jsonString(step.name)),\"pid\":\(pid),\"tid\":\(tid),\"ts\":\(micro(last))"
            if let args = step.args { json += ",\"args\":\(args)" }
            return (last, json + "}")
        })
    }

    /// Presenter → presented at `present`, container → child at `addChild`, each bound to the
    /// lifetime slices of both ends (a flow whose start has no enclosing slice is left out:
    /// Perfetto would drop it).
    private func flows(_ timeline: Timeline, pid: Int, tid: (Int?) -> Int, into tracks: inout Tracks) {
        func lifetime(_ i: Int) -> (Int64, Int64) {
            let lane = timeline.lanes[i]
            return (lane.start, max(lane.end ?? timeline.sessionSpan.end, lane.start))
        }
        func add(_ name: String, cat: String, from: Int, to: Int, t: Int64, seq: Int64) {
            let (fromStart, fromEnd) = lifetime(from), (toStart, toEnd) = lifetime(to)
            guard t >= fromStart && t < fromEnd, t < toEnd else { return }
            let id = nextFlow
            nextFlow += 1
            let common = "\"cat\":\"\(cat)\",\"name\":\"\(name)\",\"id\":\(id),\"pid\":\(pid)"
            tracks.thread(at: t, rank: 1, "{\"ph\":\"s\",\(common),\"tid\":\(tid(from)),\"ts\":\(micro(t)),\"args\":{\"seq\":\(seq)}}")
            let bind = t >= toStart ? ",\"bp\":\"e\"" : ""
            tracks.thread(at: t, rank: 1, "{\"ph\":\"f\",\(common),\"tid\":\(tid(to)),\"ts\":\(micro(t))\(bind)}")
        }
        for a in timeline.arrows where a.kind == .present {
            guard let from = timeline.lane(a.from), let to = timeline.lane(a.to), from != to else { continue }
            add("present", cat: "presentation", from: from, to: to, t: a.t, seq: a.seq)
        }
        for e in timeline.edges {
            guard let from = timeline.lane(e.parent), let to = timeline.lane(e.child), from != to else { continue }
            add("addChild", cat: "containment", from: from, to: to, t: e.addT, seq: e.addSeq)
        }
    }

    private func instant(_ name: String, cat: String, pid: Int, tid: Int, t: Int64, args: String) -> String {
        "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"\(cat)\",\"name\":\(jsonString(name)),\"pid\":\(pid),\"tid\":\(tid),\"ts\":\(micro(t)),\"args\":\(args)}"
    }

    private func metadata(_ name: String, pid: Int, tid: Int?, args: String) -> String {
        "{\"ph\":\"M\",\"name\":\"\(name)\",\"pid\":\(pid)\(tid.map { ",\"tid\":\($0)" } ?? ""),\"args\":\(args)}"
    }

    /// An event's keys as instant arguments: seq, the other controller, the detail, the flags given.
    package static func args(_ e: TraceEvent) -> String {
        var s = "{\"seq\":\(e.seq)"
        if let key = e.kind.otherKey, let other = e.other { s += ",\(jsonString(key)):\(jsonString(other))" }
        if let key = e.kind.detailKey, let detail = e.detail { s += ",\(jsonString(key)):\(jsonString(detail))" }
        let flags: [(String, EventFlags)] = [("animated", .animated), ("isMovingToParent", .isMovingToParent),
                                             ("isBeingPresented", .isBeingPresented), ("isMovingFromParent", .isMovingFromParent),
                                             ("isBeingDismissed", .isBeingDismissed), ("interactive", .interactive)]
        for (name, flag) in flags where e.flags.contains(EventFlags.present(flag)) { s += ",\"\(name)\":\(e.has(flag))" }
        return s + "}"
    }

    private func write(_ record: String) throws {
        buffer += wroteEvent ? ",\n" : "\n"
        buffer += record
        wroteEvent = true
        if buffer.utf8.count >= 1 << 16 {
            try emit(buffer)
            buffer = ""
        }
    }

    /// Nanoseconds as microseconds with three decimals.
    private func micro(_ ns: Int64) -> String {
        let sign = ns < 0 ? "-" : ""
        let v = ns.magnitude
        let frac = String(v % 1000)
        return "\(sign)\(v / 1000).\(String(repeating: "0", count: 3 - frac.count))\(frac)"
    }
}

/// The records of one session, put in time order: on every track, since each track's
/// records are either given in order (an async track's, whose `e` must follow its `b`) or
/// ordered here by time, then rank (a thread's: its lifetime slice, then flows, then
/// instants at one time, so that a flow finds its slice open).
private struct Tracks {
    private var records: [(t: Int64, rank: Int, index: Int, json: String)] = []

    /// A thread record; rank 0 a slice, 1 a flow, 2 an instant.
    package mutating func thread(at t: Int64, rank: Int, _ json: String) {
        records.append((t, rank, records.count, json))
    }

    /// An async track's records, in nesting order and time order.
    package mutating func async(_ list: [(Int64, String)]) {
        for (t, json) in list { records.append((t, 0, records.count, json)) }
    }

    package func ordered() -> [String] {
        records.sorted { ($0.t, $0.rank, $0.index) < ($1.t, $1.rank, $1.index) }.map(\.json)
    }
}
