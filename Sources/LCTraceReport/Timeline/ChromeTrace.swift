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
/// - its appearance cycles are nestable async slices (`b`/`e`) keyed by the instance with a
///   process-scoped id (`id2: {local}`, one per instance): Perfetto puts a track keyed by a
///   plain `id` (or `id2.global`) in "Global Legacy Events", outside every process, and one
///   keyed by `id2.local` under its `pid`; each cycle a slice named after the instance (the
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
    /// The document, handed on in pieces of about 64 KiB: an export of many sessions never
    /// holds more than one session's records.
    private var json: JSONWriter
    private var nextFlow = 1
    private var nextProcess = 1
    /// Thread ids are unique over the file, not per process: Perfetto reads a tid met again
    /// in another process as a new thread, which would split a track at every session switch.
    private var nextThread = 1
    /// Bytes of a session's records held in memory before they go to a temporary file.
    let memoryLimit: Int
    /// The most bytes of records held at once, over every session added (tests guard the bound).
    private(set) var peakHeldBytes = 0
    /// Sorted runs written to the temporary file, over every session added.
    private(set) var spilledRuns = 0
    /// The most appearance, edge and event rows held at once by a session's export: those
    /// its source handed out in arrays, and appearances waiting for their instance's next
    /// one (tests guard that it does not grow with the session).
    private(set) var peakHeldRows = 0

    /// `emit` receives the document piece by piece, in order, each piece whole UTF-8.
    package init(bytes emit: @escaping ([UInt8]) throws -> Void, memoryLimit: Int) {
        json = JSONWriter(flushAt: 1 << 16, sink: emit)
        self.memoryLimit = memoryLimit
    }

    /// A writer holding at most 8 MB of a session's records: a 5 M-event session peaked at
    /// 163 MB with 32 MB runs, 130 MB with 8 MB ones, and ran a little faster (same bytes).
    package convenience init(bytes emit: @escaping ([UInt8]) throws -> Void) {
        self.init(bytes: emit, memoryLimit: 8 << 20)
    }

    /// `emit` receives the document piece by piece as text.
    package convenience init(emit: @escaping (String) throws -> Void) {
        self.init(bytes: { try emit(String(decoding: $0, as: UTF8.self)) })
    }

    package func begin() throws {
        json.beginObject()
        json.key("traceEvents")
        json.beginArray()
        try json.flush()
    }

    package func finish() throws {
        json.endArray(layout: "\n")
        json.endObject()
        json.raw("\n")
        try json.flush()
    }

    /// Adds one session, streaming: its lanes (`SessionLanes`, every instance in containment
    /// order) as metadata, then its records as `source` reads them, one row at a time, put in
    /// time order by `Tracks`: what is held is a few words per instance and the sorter's
    /// bounded buffer, whatever the number of appearances and events. `span`: the window of
    /// the whole session; `sessionSpan`: its first to last event; `findings` in the order they
    /// are written, each on its lane or (nil) the session's thread.
    func add(session s: SessionInfo, span: TimeWindow, sessionSpan: TimeWindow, lanes: SessionLanes,
             findings: [TimelineFinding], source: any SessionRowStream) throws {
        let pid = nextProcess
        nextProcess += 1
        // The session's own thread, then one per lane.
        let base = nextThread
        nextThread += lanes.count + 1
        func tid(_ lane: Int?) -> Int { lane.map { base + 1 + $0 } ?? base }
        let title = ["session \(s.sid)", [s.app, s.appVersion, s.build.map { "(\($0))" }].compactMap { $0 }.joined(separator: " "),
                     s.device ?? ""].filter { !$0.isEmpty }.joined(separator: " · ")
        try metadata("process_name", pid: pid, tid: nil) { $0.key("name"); $0.string(title) }
        try metadata("process_sort_index", pid: pid, tid: nil) { $0.key("sort_index"); $0.int(pid) }
        try metadata("thread_name", pid: pid, tid: tid(nil)) { $0.key("name"); $0.string("session") }
        try metadata("thread_sort_index", pid: pid, tid: tid(nil)) { $0.key("sort_index"); $0.int(0) }
        for i in 0..<lanes.count {
            let name = String(repeating: "› ", count: min(Int(lanes.lanes[i].depth), 8)) + lanes.label(i)
            try metadata("thread_name", pid: pid, tid: tid(i)) { $0.key("name"); $0.string(name) }
            try metadata("thread_sort_index", pid: pid, tid: tid(i)) { $0.key("sort_index"); $0.int(i + 1) }
        }

        // Records at one time and rank keep the order they had when each lane's records, then
        // the findings, the flows and the events were added one after another: a group each.
        let findingGroup = lanes.count, flowGroup = lanes.count + 1, eventGroup = lanes.count + 2
        var tracks = Tracks(memoryLimit: memoryLimit)
        let end = sessionSpan.end
        for i in 0..<lanes.count {
            let tid = tid(i), x = lanes.instance(i), label = lanes.label(i)
            let laneEnd = max(x.endT ?? end, x.firstT)
            tracks.thread(at: x.firstT, rank: 0, group: i) { json in
                json.beginObject()
                json.key("ph"); json.string("X")
                json.key("cat"); json.string("lifetime")
                json.key("name"); json.string(label)
                json.key("pid"); json.int(pid)
                json.key("tid"); json.int(tid)
                json.key("ts"); Self.micro(x.firstT, &json)
                json.key("dur"); Self.micro(laneEnd - x.firstT, &json)
                json.key("args")
                json.beginObject()
                json.key("vc"); json.string(x.key.vc)
                json.key("since"); json.int(x.key.since)
                json.key("class"); json.string(x.cls)
                json.key("end"); json.string(x.endHow ?? "alive at the end")
                if let r = x.release { json.key("release"); json.string(r.how); json.key("release_seq"); json.int(r.seq) }
                json.endObject()
                json.endObject()
            }
        }
        try appearances(lanes, span: span, sessionEnd: end, source: source, pid: pid, tid: tid, into: &tracks)
        for i in 0..<lanes.count {
            guard let r = lanes.instance(i).release else { continue }
            let tid = tid(i)
            tracks.thread(at: r.t, rank: 2, group: i) { json in
                Self.instant("release (\(r.how))", cat: "leak", pid: pid, tid: tid, t: r.t, &json) { json in
                    json.key("seq"); json.int(r.seq)
                    json.key("how"); json.string(r.how)
                }
            }
        }
        // A finding with no decisive event (lost events: a hole has no time) sits at the start.
        for f in findings {
            let t = f.t ?? sessionSpan.start
            let tid = tid(lanes.lane(f.lane))
            tracks.thread(at: t, rank: 2, group: findingGroup) { json in
                Self.instant("\(f.finding.rule) \(f.finding.name)", cat: "finding", pid: pid, tid: tid, t: t, &json) { json in
                    json.key("severity"); json.string(f.finding.severity.rawValue)
                    json.key("message"); json.string(f.finding.message)
                    json.key("evidence")
                    json.beginArray()
                    for seq in f.finding.evidence { json.int(seq) }
                    json.endArray()
                    json.key("confidence"); json.string(f.finding.confidence)
                }
            }
        }
        try flows(lanes, span: span, sessionEnd: end, source: source, pid: pid, tid: tid, group: flowGroup, into: &tracks)

        peakHeldRows = max(peakHeldRows, source.rowsHandedOut)
        let ids = lanes.ids
        try source.forEachEvent { e in
            let tid = tid(lanes.lane(ofInstance: e.vc.flatMap { ids.resolveIndex($0, at: e.seq) }))
            tracks.thread(at: e.t, rank: 2, group: eventGroup) { json in
                Self.instant(e.name, cat: "lifecycle", pid: pid, tid: tid, t: e.t, &json) { Self.args(e, into: &$0) }
            }
        }
        peakHeldBytes = max(peakHeldBytes, tracks.peakHeldBytes)
        spilledRuns += tracks.spilledRuns
        try tracks.forEachOrdered { record in
            json.layout("\n")
            json.rawValue(bytes: record)
            try json.flushIfFull()
        }
    }

    // MARK: Pieces

    /// The cycles of every lane as async slices, read one at a time in will_seq order: a
    /// cycle named after the instance, its phases inside. Held: per lane, the last time
    /// written; per instance, a cycle whose end waits for its next one (rare).
    private func appearances(_ lanes: SessionLanes, span: TimeWindow, sessionEnd: Int64, source: any SessionRowStream,
                             pid: Int, tid: (Int?) -> Int, into tracks: inout Tracks) throws {
        var last = [Int64](repeating: .min, count: lanes.count)
        var waiting: [Int: TimelineRows.Cycle] = [:]
        var spans: [TimelineSpan] = []
        func write(_ c: TimelineRows.Cycle, lane: Int, nextWillT: Int64?) {
            spans.removeAll(keepingCapacity: true)
            TimelineBuilder.spans(c, nextWillT: nextWillT, instance: lanes.instance(lane), sessionEnd: sessionEnd, into: &spans)
            spans.removeAll { !span.overlaps($0.start, $0.end) }
            appearance(c.willSeq, spans, label: lanes.label(lane), pid: pid, tid: tid(lane), group: lane,
                       last: &last[lane], into: &tracks)
        }
        try source.forEachCycle { c in
            guard let lane = lanes.lane(c.instance) else { return }
            if let before = waiting.removeValue(forKey: lane) { write(before, lane: lane, nextWillT: c.willT) }
            if TimelineBuilder.endsAtNextCycle(c) { waiting[lane] = c } else { write(c, lane: lane, nextWillT: nil) }
            peakHeldRows = max(peakHeldRows, source.rowsHandedOut + waiting.count)
        }
        for (lane, c) in waiting { write(c, lane: lane, nextWillT: nil) }
    }

    /// One cycle's async slices: the cycle named after the instance, its phases inside, in
    /// nesting order; a time is held level where the clock went backwards (`last`: the lane's
    /// latest time so far), never reordered (an `e` must follow its `b`).
    private func appearance(_ willSeq: Int64, _ spans: [TimelineSpan], label: String, pid: Int, tid: Int, group: Int,
                            last: inout Int64, into tracks: inout Tracks) {
        guard let first = spans.first, let final = spans.last else { return }
        let id = "\(pid).\(tid)"
        var steps: [(ph: String, name: String, t: Int64, cycle: (willSeq: Int64, interactive: Bool)?)] = []
        steps.append(("b", label, first.start, (willSeq, first.interactive)))
        for s in spans {
            steps.append(("b", s.phase.rawValue, s.start, nil))
            steps.append(("e", s.phase.rawValue, s.end, nil))
        }
        steps.append(("e", label, final.end, nil))
        for step in steps {
            last = max(last, step.t)
            let ts = last
            tracks.thread(at: ts, rank: 0, group: group) { json in
                json.beginObject()
                json.key("ph"); json.string(step.ph)
                json.key("cat"); json.string("appearance")
                json.key("id2"); json.beginObject(); json.key("local"); json.string(id); json.endObject()
                json.key("name"); json.string(step.name)
                json.key("pid"); json.int(pid)
                json.key("tid"); json.int(tid)
                json.key("ts"); Self.micro(ts, &json)
                if let cycle = step.cycle {
                    json.key("args")
                    json.beginObject()
                    json.key("will_seq"); json.int(cycle.willSeq)
                    json.key("interactive"); json.bool(cycle.interactive)
                    json.endObject()
                }
                json.endObject()
            }
        }
    }

    /// Presenter → presented at `present`, container → child at `addChild`, each bound to the
    /// lifetime slices of both ends (a flow whose start has no enclosing slice is left out:
    /// Perfetto would drop it). The presentations come first, then the edges, each read one
    /// at a time, as `TimelineBuilder` keeps them for lanes that are all drawn.
    private func flows(_ lanes: SessionLanes, span: TimeWindow, sessionEnd: Int64, source: any SessionRowStream, pid: Int,
                       tid: (Int?) -> Int, group: Int, into tracks: inout Tracks) throws {
        func lifetime(_ i: Int) -> (Int64, Int64) {
            let x = lanes.instance(i)
            return (x.firstT, max(x.endT ?? sessionEnd, x.firstT))
        }
        func add(_ name: String, cat: String, from: Int, to: Int, t: Int64, seq: Int64) {
            let (fromStart, fromEnd) = lifetime(from), (toStart, toEnd) = lifetime(to)
            guard t >= fromStart && t < fromEnd, t < toEnd else { return }
            let id = nextFlow
            nextFlow += 1
            func flow(_ ph: String, tid: Int, _ json: inout JSONWriter) {
                json.beginObject()
                json.key("ph"); json.string(ph)
                json.key("cat"); json.string(cat)
                json.key("name"); json.string(name)
                json.key("id"); json.int(id)
                json.key("pid"); json.int(pid)
                json.key("tid"); json.int(tid)
                json.key("ts"); Self.micro(t, &json)
            }
            tracks.thread(at: t, rank: 1, group: group) { json in
                flow("s", tid: tid(from), &json)
                json.key("args")
                json.beginObject()
                json.key("seq"); json.int(seq)
                json.endObject()
                json.endObject()
            }
            tracks.thread(at: t, rank: 1, group: group) { json in
                flow("f", tid: tid(to), &json)
                if t >= toStart { json.key("bp"); json.string("e") }
                json.endObject()
            }
        }
        let ids = lanes.ids
        try source.forEachMarkedEvent(window: nil) { e in
            guard e.kind == .present, span.contains(e.t), let vc = e.vc,
                  let from = lanes.lane(ofInstance: ids.resolveIndex(vc, at: e.seq)),
                  let to = lanes.lane(ofInstance: e.other.flatMap { ids.resolveIndex($0, at: e.seq, presentedLater: true) }),
                  from != to else { return }
            add("present", cat: "presentation", from: from, to: to, t: e.t, seq: e.seq)
        }
        try source.forEachEdge { e in
            guard span.overlaps(e.addT, e.removeT), let to = lanes.lane(e.child),
                  let from = lanes.lane(ids.resolve(e.parent, since: e.parentSince, at: e.addSeq)), from != to else { return }
            add("addChild", cat: "containment", from: from, to: to, t: e.addT, seq: e.addSeq)
        }
    }

    /// A thread-scoped instant; `args` writes the members of its arguments.
    private static func instant(_ name: String, cat: String, pid: Int, tid: Int, t: Int64, _ json: inout JSONWriter,
                                args: (inout JSONWriter) -> Void) {
        json.beginObject()
        json.key("ph"); json.string("i")
        json.key("s"); json.string("t")
        json.key("cat"); json.string(cat)
        json.key("name"); json.string(name)
        json.key("pid"); json.int(pid)
        json.key("tid"); json.int(tid)
        json.key("ts"); micro(t, &json)
        json.key("args")
        json.beginObject()
        args(&json)
        json.endObject()
        json.endObject()
    }

    /// A metadata record, written at once (metadata comes before a session's other records).
    private func metadata(_ name: String, pid: Int, tid: Int?, args: (inout JSONWriter) -> Void) throws {
        json.layout("\n")
        json.beginObject()
        json.key("ph"); json.string("M")
        json.key("name"); json.string(name)
        json.key("pid"); json.int(pid)
        if let tid { json.key("tid"); json.int(tid) }
        json.key("args")
        json.beginObject()
        args(&json)
        json.endObject()
        json.endObject()
        try json.flushIfFull()
    }

    /// An event's keys as instant arguments: seq, the other controller, the detail, the flags given.
    package static func args(_ e: TraceEvent, into json: inout JSONWriter) {
        json.key("seq"); json.int(e.seq)
        if let key = e.kind.otherKey, let other = e.other { json.key(key); json.string(other) }
        if let key = e.kind.detailKey, let detail = e.detail { json.key(key); json.string(detail) }
        let flags: [(String, EventFlags)] = [("animated", .animated), ("isMovingToParent", .isMovingToParent),
                                             ("isBeingPresented", .isBeingPresented), ("isMovingFromParent", .isMovingFromParent),
                                             ("isBeingDismissed", .isBeingDismissed), ("interactive", .interactive)]
        for (name, flag) in flags where e.flags.contains(EventFlags.present(flag)) { json.key(name); json.bool(e.has(flag)) }
    }

    /// Nanoseconds as microseconds with three decimals.
    private static func micro(_ ns: Int64, _ json: inout JSONWriter) { json.decimal(ns, places: 3) }
}

/// The records of one session, put in time order: on every track, since each track's
/// records are either given in order (an async track's, whose `e` must follow its `b`) or
/// ordered here by time, then rank (a thread's: its lifetime slice, then flows, then
/// instants at one time, so that a flow finds its slice open). Past `memoryLimit` bytes the
/// records go to a temporary file in sorted runs (`RecordSorter`), so a session of any
/// length is exported in bounded memory.
private struct Tracks {
    private var sorter: RecordSorter
    /// The first failure to spill, thrown when the records are read (the writers do not throw).
    private var failure: Error?

    init(memoryLimit: Int) { sorter = RecordSorter(memoryLimit: memoryLimit) }

    /// A record; rank 0 a slice (or the next record of an async track, whose records come in
    /// nesting order and time order), 1 a flow, 2 an instant; `group` orders ties before arrival.
    mutating func thread(at t: Int64, rank: Int, group: Int, _ write: (inout JSONWriter) -> Void) {
        guard failure == nil else { return }
        do { try sorter.append(t: t, rank: rank, group: group, write) } catch { failure = error }
    }

    /// Each record's JSON, in order.
    mutating func forEachOrdered(_ body: (ArraySlice<UInt8>) throws -> Void) throws {
        if let failure { throw failure }
        try sorter.forEachOrdered(body)
    }

    var peakHeldBytes: Int { sorter.peakHeldBytes }
    var spilledRuns: Int { sorter.spilledRuns }
}
