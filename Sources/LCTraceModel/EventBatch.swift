import LCTraceFormat

/// A byte range in an `EventBatch`'s arena.
public struct Span: Equatable, Sendable {
    @usableFromInline package var start: Int32
    @usableFromInline package var count: Int32

    @inlinable @inline(__always) package init(start: Int32, count: Int32) {
        self.start = start; self.count = count
    }
    @inlinable package static var none: Span { Span(start: -1, count: 0) }
    @inlinable @inline(__always) package var isNone: Bool { start < 0 }
}

/// One decoded line, its strings kept as spans of decoded UTF-8 in the batch arena, so that
/// decoding allocates nothing per line and the store interns straight from bytes.
package struct RawEvent: Sendable {
    package var seq: Int64 = 0
    package var t: Int64 = 0
    package var flags: Int64 = 0
    package var kind: EventKind = .unknown
    package var sid = Span.none
    package var name = Span.none
    package var vc = Span.none
    package var cls = Span.none
    package var other = Span.none
    package var detail = Span.none
    package var thread = Span.none
    package var wall = Span.none
    /// The JSON object of keys without a column (bounds, traits, unknown keys).
    package var attrs = Span.none
    /// Index into `EventBatch.sessionRecords` for `session` lines, else -1.
    package var record: Int32 = -1
    package var line = 0
    package var offset: Int64 = 0

    package init(seq: Int64 = 0, t: Int64 = 0, flags: Int64 = 0, kind: EventKind = .unknown, record: Int32 = -1,
                 line: Int = 0, offset: Int64 = 0) {
        self.seq = seq; self.t = t; self.flags = flags; self.kind = kind; self.record = record; self.line = line
        self.offset = offset
    }
}

/// A rejected line: where, why, and its first bytes.
package struct RawReject: Sendable {
    package var line: Int
    package var offset: Int64
    package var reason: String
    package var sample: Span

    package init(line: Int, offset: Int64, reason: String, sample: Span) {
        self.line = line; self.offset = offset; self.reason = reason; self.sample = sample
    }
}

/// Decoded lines on their way from the reader thread to the store: events, rejects, and the
/// arena their strings live in. Reused from batch to batch (capacity is kept).
///
/// Sendable by hand-off: a batch belongs to one thread at a time, passed on through a
/// `BatchQueue` (whose lock orders the reader's writes before the writer's reads), never
/// touched by two threads at once.
public final class EventBatch: @unchecked Sendable {
    @usableFromInline package var arena: [UInt8] = []
    package var events: [RawEvent] = []
    package var rejects: [RawReject] = []
    package var sessionRecords: [SessionRecord] = []
    /// Lines read so far in the file, and raw bytes read, when the batch was handed over.
    package var linesRead = 0
    package var rawBytesRead: Int64 = 0

    package init() {
        arena.reserveCapacity(1 << 20)
        events.reserveCapacity(4096)
    }

    package func reset() {
        arena.removeAll(keepingCapacity: true)
        events.removeAll(keepingCapacity: true)
        rejects.removeAll(keepingCapacity: true)
        sessionRecords.removeAll(keepingCapacity: true)
    }

    @inlinable @inline(__always) package func append(_ bytes: UnsafeRawBufferPointer) -> Span {
        let start = arena.count
        arena.append(contentsOf: bytes)
        return Span(start: Int32(start), count: Int32(bytes.count))
    }

    package func append(_ bytes: [UInt8]) -> Span {
        let start = arena.count
        arena.append(contentsOf: bytes)
        return Span(start: Int32(start), count: Int32(bytes.count))
    }

    /// The text of a span (allocates: for rare paths and tests).
    package func string(_ span: Span) -> String? {
        guard !span.isNone else { return nil }
        return arena.withUnsafeBytes {
            String(decoding: UnsafeRawBufferPointer(rebasing: $0[Int(span.start)..<Int(span.start + span.count)]), as: UTF8.self)
        }
    }

    /// A decoded event as a `TraceEvent` (Strings): for tests, the fuzzer and rare paths.
    package func traceEvent(_ e: RawEvent) -> TraceEvent {
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
