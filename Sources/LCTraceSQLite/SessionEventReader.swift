import LCTraceFormat
import LCTraceModel

/// Reads back the events of one session in `seq` order, unpacked (`PackedEvent`) with interned
/// ids resolved, for the model builder. Streams: one row at a time from the primary key,
/// whatever the session size.
final class SessionEventReader {
    private let db: SQLiteDatabase
    private let select: SQLiteStatement
    private let selectBase: SQLiteStatement
    private var names = IDCache<String>(limit: StringPool.defaultMaxCached)
    /// Event kind by interned name id: classified once, not per event.
    private var kinds = IDCache<EventKind>(limit: 1024)
    /// The class and detail of interned `rest` objects, by id.
    private var rests = IDCache<(cls: Int64?, detail: Int64?)>(limit: StringPool.defaultMaxCached)
    private let selectString: SQLiteStatement

    package init(db: SQLiteDatabase) throws {
        self.db = db
        select = try db.prepare("SELECT seq, t, ev, vc, other, flags, rest FROM events WHERE session = ? ORDER BY seq")
        selectBase = try db.prepare("SELECT vc_base FROM sessions WHERE id = ?")
        selectString = try db.prepare("SELECT text FROM strings WHERE id = ?")
    }

    /// The text of an interned id (cached).
    package func text(_ id: Int64) throws -> String {
        if let s = names[id] { return s }
        selectString.reset()
        defer { selectString.reset() }
        selectString.bind(id, at: 1)
        let s = try selectString.step() ? (selectString.text(0) ?? "") : ""
        names[id] = s
        return s
    }

    /// Calls `body` with every event of `session` in seq order. Attribute keys that the rules
    /// do not need (wall, thread) are not read, nor the attrs of the events whose attrs the
    /// model does not read (`EventKind.modelReadsAttrs`).
    package func forEachEvent(session: Int64, sid: String, _ body: (TraceEvent) throws -> Void) throws {
        selectBase.reset()
        selectBase.bind(session, at: 1)
        let base = try selectBase.step() ? selectBase.int(0) : 0
        selectBase.reset()
        select.reset()
        // Reset when done (or thrown out): a statement left on a row keeps its snapshot.
        defer { select.reset() }
        select.bind(session, at: 1)
        var event = TraceEvent(sid: sid, seq: 0, t: 0, name: "", kind: .unknown)
        while try select.step() {
            let packed = select.int(5), stored = select.optionalInt(4)
            let classInOther = stored != nil && packed & PackedEvent.otherBit != 0
            let rest = try restIDs(column: 6)
            try fill(&event, seq: select.int(0), t: select.int(1), ev: select.int(2), vc: select.optionalInt(3).map { $0 &+ base },
                     cls: classInOther ? stored : rest.cls, other: classInOther ? nil : stored.map { $0 &+ base },
                     flags: PackedEvent.decodedFlags(packed, otherIsNull: stored == nil).rawValue, detail: rest.detail)
            event.attrs = event.kind.modelReadsAttrs ? try restAttrs(column: 6) : nil
            try body(event)
        }
    }

    /// The class and detail in the `rest` column `i` of the current row (cached by id when
    /// interned, read from the text when inline).
    @inline(__always)
    private func restIDs(column i: Int) throws -> (cls: Int64?, detail: Int64?) {
        if select.isInteger(i) {
            let id = select.int(i)
            if let known = rests[id] { return known }
            selectString.reset()
            defer { selectString.reset() }
            selectString.bind(id, at: 1)
            let ids = try selectString.step() ? selectString.withText(0, PackedEvent.restIDs) : (nil, nil)
            rests[id] = ids
            return ids
        }
        if select.isNull(i) { return (nil, nil) }
        return select.withText(i, PackedEvent.restIDs)
    }

    /// The attrs text in the `rest` column `i` of the current row, nil when it has none.
    private func restAttrs(column i: Int) throws -> String? {
        if select.isNull(i) { return nil }
        guard select.isInteger(i) else { return select.withText(i, PackedEvent.restAttrs) }
        selectString.reset()
        defer { selectString.reset() }
        selectString.bind(select.int(i), at: 1)
        return try selectString.step() ? selectString.withText(0, PackedEvent.restAttrs) : nil
    }

    /// Calls `body` with the events of captured rows (all of a session's rows), in seq order:
    /// the same events `forEachEvent(session:)` gives, without reading the table.
    package func forEachEvent(in captured: CapturedRows, sid: String, _ body: (TraceEvent) throws -> Void) throws {
        func id(_ value: Int32) -> Int64? { value == 0 ? nil : Int64(value) }
        var event = TraceEvent(sid: sid, seq: 0, t: 0, name: "", kind: .unknown)
        for r in captured.inSeqOrder() {
            try fill(&event, seq: r.seq, t: r.t, ev: Int64(r.ev), vc: id(r.vc), cls: id(r.cls), other: id(r.other),
                     flags: Int64(r.flags), detail: id(r.detail))
            event.attrs = captured.attrs.isEmpty ? nil : captured.attrs[r.seq]
            try body(event)
        }
    }

    /// Sets every field the table has of `event` from a row's values, texts looked up by id.
    /// One event is refilled row after row: building a new one per row copied and released
    /// all its strings twice (a third of the analysis thread's time).
    @inline(__always)
    private func fill(_ event: inout TraceEvent, seq: Int64, t: Int64, ev: Int64, vc: Int64?, cls: Int64?, other: Int64?,
                      flags: Int64, detail: Int64?) throws {
        event.seq = seq
        event.t = t
        event.name = try text(ev)
        if let known = kinds[ev] {
            event.kind = known
        } else {
            event.kind = EventKind(name: event.name)
            kinds[ev] = event.kind
        }
        event.vc = try vc.map(text)
        event.cls = try cls.map(text)
        event.other = try other.map(text)
        event.ids.vc = vc ?? 0
        event.ids.cls = cls ?? 0
        event.ids.other = other ?? 0
        event.flags = EventFlags(rawValue: flags)
        event.detail = try detail.map(text)
    }
}

/// Values by interned id. The low ids (event names, classes, threads: interned first) live in
/// an array, so a lookup hashes nothing; the rest (controller ids, mostly of one session) in a
/// dictionary emptied when it reaches `limit`, so memory stays flat.
private struct IDCache<Value> {
    private var low: [Value?] = []
    private var high: [Int64: Value] = [:]
    private let arrayLimit = 1 << 16
    package let limit: Int

    package init(limit: Int) { self.limit = limit }

    package subscript(id: Int64) -> Value? {
        get {
            if id >= 0 && id < arrayLimit { return id < low.count ? low[Int(id)] : nil }
            return high[id]
        }
        set {
            if id >= 0 && id < arrayLimit {
                let index = Int(id)
                if index >= low.count { low.append(contentsOf: repeatElement(nil, count: index + 1 - low.count)) }
                low[index] = newValue
            } else {
                if high.count >= limit { high.removeAll(keepingCapacity: true) }
                high[id] = newValue
            }
        }
    }
}
