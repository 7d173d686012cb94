/// Counts, bounds and holes of one session's events, gathered in one pass in seq order.
public struct SessionStats: Equatable, Sendable {
    public var events = 0
    public var firstSeq: Int64?
    public var lastSeq: Int64?
    public var firstT: Int64?
    /// The largest `t` seen: where the session ends for "did it go on long enough" questions.
    public var lastT: Int64?
    /// Missing seq values below `lastSeq` (a session starts at seq 0).
    public var lostEvents: Int64 = 0
    /// Up to 20 (from, to) ranges of missing seqs, inclusive.
    public var lostRanges: [(Int64, Int64)] = []
    public var endReason: String?
    /// (seq, t, previous t) of the first times `t` went backwards, and how often it did.
    public var clockBackwards: [(seq: Int64, t: Int64, previousT: Int64)] = []
    public var clockBackwardsCount = 0
    private var previousT: Int64?

    public init() {}

    public mutating func add(_ e: TraceEvent) {
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

    public static func == (a: SessionStats, b: SessionStats) -> Bool {
        a.events == b.events && a.firstSeq == b.firstSeq && a.lastSeq == b.lastSeq && a.firstT == b.firstT
            && a.lastT == b.lastT && a.lostEvents == b.lostEvents && a.endReason == b.endReason
            && a.clockBackwardsCount == b.clockBackwardsCount
    }
}
