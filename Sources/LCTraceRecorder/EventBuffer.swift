/// The bounded buffer between the recording threads and the writer. A recording thread
/// takes the lock only to stamp `seq` and `t` and store the event: no allocation, no I/O,
/// no waiting. When the buffer is full the event is dropped and counted; its `seq` is used
/// all the same, so the hole shows in the trace (lctrace's LC901), and the next event that
/// finds room is preceded by a `mark` naming how many were dropped.
///
/// The writer takes a range of slots under the lock, reads them without it (no recording
/// thread writes a slot between `head` and `tail`), and gives them back under the lock.
final class EventBuffer: @unchecked Sendable {
    /// The mark that reports dropped events: `{"ev":"mark","name":"recorder.dropped","dropped":N,"firstSeq":S}`:
    /// N seqs from S on, before the mark's own, were lost (the others in between are the
    /// session records the writer put at the top of rotated files).
    static let droppedMarkName = "recorder.dropped"

    let lock = RecorderLock()
    let capacity: Int
    private let slots: UnsafeMutablePointer<RecordedEvent>
    private let clock: MonotonicClock
    /// The clock's reading at the session's first event (its `t` is 0); behind `lock`.
    private var origin: UInt64?
    // Behind `lock`:
    private var head = 0            // absolute index of the first slot not yet taken back
    private var tail = 0            // absolute index of the next slot to fill
    private var nextSeq: Int64 = 0
    private var droppedRun: Int64 = 0
    private var droppedRunFirstSeq: Int64 = 0
    private(set) var droppedTotal: Int64 = 0
    private(set) var recordedTotal: Int64 = 0
    private var accepting = true
    /// Waiting events that wake the writer before its interval is up.
    let wakeCount: Int

    init(capacity: Int, wakeCount: Int, clock: MonotonicClock) {
        self.capacity = max(capacity, 4)
        self.wakeCount = max(1, min(wakeCount, self.capacity / 2))
        self.clock = clock
        slots = .allocate(capacity: self.capacity)
    }

    deinit {
        for i in head..<tail { (slots + i % capacity).deinitialize(count: 1) }
        slots.deallocate()
    }

    /// Nanoseconds since the session's first event (the lock held).
    func nowLocked() -> Int64 {
        let reading = clock.nanoseconds()
        guard let origin else { origin = reading; return 0 }
        return reading >= origin ? Int64(reading - origin) : 0
    }

    /// `nowLocked`, taking the lock.
    func now() -> Int64 { lock.withLock { nowLocked() } }

    /// Stamps and stores `event`; false when it was dropped (buffer full) or recording ended.
    @discardableResult
    func record(_ event: RecordedEvent) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard accepting else { return false }
        return store(event)
    }

    /// `record` with the lock held (the writer's rotation markers).
    func recordLocked(_ event: RecordedEvent) -> Bool {
        accepting && store(event)
    }

    /// `record` for the last event (`sessionEnd`): waits up to `timeout` for room, then
    /// closes the buffer to everything after it. Returns its seq, or nil when none came.
    func recordLast(_ event: RecordedEvent, timeoutNanoseconds: UInt64) -> Int64? {
        lock.lock()
        defer { lock.unlock() }
        guard accepting else { return nil }
        // Real time, not the injectable clock: a test's frozen clock must not make this wait forever.
        let deadline = MonotonicClock.system.nanoseconds() &+ timeoutNanoseconds
        while tail - head + (droppedRun > 0 ? 2 : 1) > capacity && MonotonicClock.system.nanoseconds() < deadline {
            lock.broadcast()
            lock.wait(nanoseconds: 5_000_000)
        }
        accepting = false
        let stored = store(event)
        lock.broadcast()
        return stored ? nextSeq - 1 : nil
    }

    /// A seq and t for an event the writer writes itself (a session record at the top of a
    /// rotated file), taken in order with the others so that `t` never runs backwards.
    func stampOutOfBand() -> (seq: Int64, t: Int64) {
        lock.withLock {
            defer { nextSeq += 1 }
            return (nextSeq, nowLocked())
        }
    }

    /// Counts `count` events as dropped, exactly as a full buffer drops them (their seqs used,
    /// the `recorder.dropped` mark before the next event that finds room). For simulators
    /// that plant a hole where they choose (`lctrace-gen --via-recorder`).
    func dropAsIfFull(_ count: Int) {
        lock.withLock {
            guard accepting else { return }
            for _ in 0..<max(0, count) { dropLocked() }
        }
    }

    /// Ends recording without a last event: what a killed process leaves (no `sessionEnd`).
    func close() {
        lock.withLock { accepting = false }
        lock.broadcast()
    }

    private func dropLocked() {
        if droppedRun == 0 { droppedRunFirstSeq = nextSeq }
        nextSeq += 1
        droppedRun += 1
        droppedTotal += 1
    }

    private func store(_ event: RecordedEvent) -> Bool {
        let waiting = tail - head
        let needed = droppedRun > 0 ? 2 : 1
        guard waiting + needed <= capacity else {
            dropLocked()
            return false
        }
        let t = nowLocked()
        if droppedRun > 0 {
            var mark = RecordedEvent(.mark)
            mark.text = EventBuffer.droppedMarkName
            mark.numbers = [("dropped", droppedRun), ("firstSeq", droppedRunFirstSeq)]
            put(mark, t: t)
            droppedRun = 0
        }
        put(event, t: t)
        let after = tail - head
        if after >= wakeCount && waiting < wakeCount { lock.broadcast() }
        return true
    }

    private func put(_ event: RecordedEvent, t: Int64) {
        var event = event
        event.seq = nextSeq
        event.t = t
        nextSeq += 1
        recordedTotal += 1
        (slots + tail % capacity).initialize(to: event)
        tail += 1
    }

    // MARK: The writer's side

    /// Events waiting (the lock held).
    var waitingLocked: Int { tail - head }

    var waiting: Int { lock.withLock { tail - head } }

    /// The range of slots holding events, for `drain` (the lock held).
    func takeLocked() -> Range<Int> { head..<tail }

    /// Moves the events of `range` out to `body` in order, without the lock, then frees
    /// their slots.
    func drain(_ range: Range<Int>, _ body: (RecordedEvent) -> Void) {
        for i in range { body((slots + i % capacity).move()) }
        lock.withLock {
            head = range.upperBound
            lock.broadcast()
        }
    }
}
