/// Counts, bounds and holes of one session's events, gathered in one pass in seq order.
package struct SessionStats: Equatable, Sendable {
    package var events = 0
    package var firstSeq: Int64?
    package var lastSeq: Int64?
    package var firstT: Int64?
    /// The largest `t` seen: where the session ends for "did it go on long enough" questions.
    package var lastT: Int64?
    /// Missing seq values below `lastSeq` (a session starts at seq 0).
    package var lostEvents: Int64 = 0
    /// Up to 20 (from, to) ranges of missing seqs, inclusive.
    package var lostRanges: [(Int64, Int64)] = []
    package var endReason: String?
    /// (seq, t, previous t) of the first times `t` went backwards, and how often it did.
    package var clockBackwards: [(seq: Int64, t: Int64, previousT: Int64)] = []
    package var clockBackwardsCount = 0
    private var previousT: Int64?

    package init() {}

    package mutating func add(_ e: TraceEvent) {
        let expected = (lastSeq ?? -1) + 1
        if e.seq > expected {
            lostEvents += e.seq - expected
            if lostRanges.count < 20 { lostRanges.append((expected, e.seq - 1)) }
        }
        if let previous = previousT, e.t < previous {
            clockBackwardsCount += 1
            if clockBackwards.count < 5 { clockBackwards.append((e.seq, e.t, previous)) }
        }
        events += 1
        if firstSeq == nil { firstSeq = e.seq; firstT = e.t }
        lastSeq = e.seq
        lastT = max(lastT ?? e.t, e.t)
        previousT = e.t
        if e.kind == .sessionEnd { endReason = e.detail ?? "" }
    }

    package static func == (a: SessionStats, b: SessionStats) -> Bool {
        a.events == b.events && a.firstSeq == b.firstSeq && a.lastSeq == b.lastSeq && a.firstT == b.firstT
            && a.lastT == b.lastT && a.lostEvents == b.lostEvents && a.endReason == b.endReason
            && a.clockBackwardsCount == b.clockBackwardsCount
    }
}
