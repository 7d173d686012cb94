/// A byte range in an `EventBatch`'s arena.
public struct Span: Equatable, Sendable {
    public var start: Int32
    public var count: Int32
    public static let none = Span(start: -1, count: 0)
    @inline(__always) public var isNone: Bool { start < 0 }
}

/// One decoded line, its strings kept as spans of decoded UTF-8 in the batch arena, so that
/// decoding allocates nothing per line and the store interns straight from bytes.
public struct RawEvent: Sendable {
    public var seq: Int64 = 0
    public var t: Int64 = 0
    public var flags: Int64 = 0
    public var kind: EventKind = .unknown
    public var sid = Span.none
    public var name = Span.none
    public var vc = Span.none
    public var cls = Span.none
    public var other = Span.none
    public var detail = Span.none
    public var thread = Span.none
    public var wall = Span.none
    /// The JSON object of keys without a column (bounds, traits, unknown keys).
    public var attrs = Span.none
    /// Index into `EventBatch.sessionRecords` for `session` lines, else -1.
    public var record: Int32 = -1
    public var line = 0
    public var offset: Int64 = 0
}

/// A rejected line: where, why, and its first bytes.
public struct RawReject: Sendable {
    public var line: Int
    public var offset: Int64
    public var reason: String
    public var sample: Span
}

/// Decoded lines on their way from the reader thread to the store: events, rejects, and the
/// arena their strings live in. Reused from batch to batch (capacity is kept).
///
/// Sendable by hand-off: a batch belongs to one thread at a time, passed on through a
/// `BatchQueue` (whose lock orders the reader's writes before the writer's reads), never
/// touched by two threads at once.
public final class EventBatch: @unchecked Sendable {
    public var arena: [UInt8] = []
    public var events: [RawEvent] = []
    public var rejects: [RawReject] = []
    public var sessionRecords: [SessionRecord] = []
    /// Lines read so far in the file, and raw bytes read, when the batch was handed over.
    public var linesRead = 0
    public var rawBytesRead: Int64 = 0

    public init() {
        arena.reserveCapacity(1 << 20)
        events.reserveCapacity(4096)
    }

    public func reset() {
        arena.removeAll(keepingCapacity: true)
        events.removeAll(keepingCapacity: true)
        rejects.removeAll(keepingCapacity: true)
        sessionRecords.removeAll(keepingCapacity: true)
    }

    @inline(__always) func append(_ bytes: UnsafeRawBufferPointer) -> Span {
        let start = arena.count
        arena.append(contentsOf: bytes)
        return Span(start: Int32(start), count: Int32(bytes.count))
    }

    func append(_ bytes: [UInt8]) -> Span {
        let start = arena.count
        arena.append(contentsOf: bytes)
        return Span(start: Int32(start), count: Int32(bytes.count))
    }

    /// The text of a span (allocates: for rare paths and tests).
    public func string(_ span: Span) -> String? {
        guard !span.isNone else { return nil }
        return arena.withUnsafeBytes {
            String(decoding: UnsafeRawBufferPointer(rebasing: $0[Int(span.start)..<Int(span.start + span.count)]), as: UTF8.self)
        }
    }

    /// A decoded event as a `TraceEvent` (Strings): for tests, the fuzzer and rare paths.
    public func traceEvent(_ e: RawEvent) -> TraceEvent {
        var event = TraceEvent(sid: string(e.sid) ?? "", seq: e.seq, t: e.t, name: string(e.name) ?? "")
        event.wall = string(e.wall)
        event.thread = string(e.thread)
        event.vc = string(e.vc)
        event.cls = string(e.cls)
        event.other = string(e.other)
        event.flags = EventFlags(rawValue: e.flags)
        event.detail = string(e.detail)
        event.attrs = string(e.attrs)
        event.session = e.record >= 0 ? sessionRecords[Int(e.record)] : nil
        return event
    }
}
