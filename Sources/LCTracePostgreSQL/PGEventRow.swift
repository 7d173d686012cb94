import LCTraceFormat
import LCTraceModel

/// How schema 4 packs a row of `events` (Schemas/lctrace-schema.postgresql.sql) for a server's
/// fixed-width rows: 8-byte columns first, ids as `integer`, the event name as `smallint`,
/// `other` holding the class on the events that name no other controller, flags in a
/// `smallint`, the rarer values in one `jsonb` only where present. A row is 56 bytes with its
/// 24-byte header (32 of data), the least one row per event with this key takes. The writers
/// use these encoders; `event_rows` spells the decoding in SQL, `PGEventReader` in Swift.
enum PGEventRow {
    /// `events.flags` bit 6: the other key was present (possibly null); bit 7: `other` holds the class.
    static let otherPresentBit: Int64 = 1 << 6
    static let classInOtherBit: Int64 = 1 << 7
    /// The booleans' value bits (0-5) and present bits (8-13), where `EventFlags` has them too.
    static let booleanBits: Int64 = 0x3f3f
    /// The largest event-name id `events.ev` holds; a larger one goes to `rest` ("ev") and `ev` is 0.
    static let maxEv = Int64(Int16.max)

    /// The COPY of packed rows, in the order `add` writes their fields.
    static let copy = "COPY events (t, seq, session, vc, other, ev, flags, rest) FROM STDIN"

    static func packedFlags(_ flags: Int64, classInOther: Bool) -> Int64 {
        (flags & booleanBits) | (flags & EventFlags.otherPresent.rawValue != 0 ? otherPresentBit : 0)
            | (classInOther ? classInOtherBit : 0)
    }

    /// `EventFlags` of a row's packed flags (what `event_rows.flags` gives).
    static func decodedFlags(_ packed: Int64) -> EventFlags {
        EventFlags(rawValue: (packed & booleanBits) | (packed & otherPresentBit != 0 ? EventFlags.otherPresent.rawValue : 0))
    }

    /// Adds an event's packed row to a COPY (`copy`): texts as their `strings` ids, the wall
    /// time and attrs as the UTF-8 bytes of the line (nil: absent).
    static func add(_ w: PGCopyWriter, session: Int64, seq: Int64, t: Int64, ev: Int64?, vc: Int64?, cls: Int64?, other: Int64?,
                    flags: Int64, detail: Int64?, thread: Int64?, wall: UnsafeRawBufferPointer?, attrs: UnsafeRawBufferPointer?) {
        let classInOther = other == nil && cls != nil
        let evFits = (ev ?? 0) <= maxEv
        w.add(t); w.add(seq); w.add(session); w.add(vc); w.add(classInOther ? cls : other)
        w.add(evFits ? ev : 0); w.add(packedFlags(flags, classInOther: classInOther))
        let rest = rest(ev: evFits ? nil : ev, cls: classInOther ? nil : cls, detail: detail, thread: thread, wall: wall, attrs: attrs)
        if let rest { rest.withUnsafeBytes { w.add(bytes: $0) } } else { w.add(bytes: nil) }
    }

    /// `events.rest`: the JSON object of the values present, keys in this order; nil when
    /// there are none (the column is then NULL).
    static func rest(ev: Int64?, cls: Int64?, detail: Int64?, thread: Int64?,
                     wall: UnsafeRawBufferPointer?, attrs: UnsafeRawBufferPointer?) -> [UInt8]? {
        guard ev != nil || cls != nil || detail != nil || thread != nil || wall != nil || attrs != nil else { return nil }
        var json = JSONWriter(capacity: 64)
        json.beginObject()
        if let ev { json.key("ev"); json.int(ev) }
        if let cls { json.key("class"); json.int(cls) }
        if let detail { json.key("detail"); json.int(detail) }
        if let thread { json.key("thread"); json.int(thread) }
        if let wall { json.key("wall"); json.string(bytes: wall) }
        if let attrs { json.key("attrs"); json.string(bytes: attrs) }
        json.endObject()
        return json.bytes
    }

    /// SQL of the packed columns, in `copy`'s order, of the plain rows of relation `b` (columns
    /// session, seq, t, ev, vc, cls, other, flags, detail, thread, wall, attrs, as version 3
    /// stored them): the packing of `add`, for the rows the merge path and the migration write.
    static let packedFromPlain = """
        b.t, b.seq, b.session, b.vc, CASE WHEN b.other IS NULL AND b.cls IS NOT NULL THEN b.cls ELSE b.other END,
        CASE WHEN b.ev <= \(maxEv) THEN b.ev ELSE 0 END,
        (b.flags & \(booleanBits)) | CASE WHEN b.flags & \(EventFlags.otherPresent.rawValue) <> 0 THEN \(otherPresentBit) ELSE 0 END
          | CASE WHEN b.other IS NULL AND b.cls IS NOT NULL THEN \(classInOtherBit) ELSE 0 END,
        nullif(jsonb_strip_nulls(jsonb_build_object('ev', CASE WHEN b.ev > \(maxEv) THEN b.ev END,
          'class', CASE WHEN b.other IS NOT NULL THEN b.cls END, 'detail', b.detail, 'thread', b.thread,
          'wall', b.wall, 'attrs', b.attrs)), '{}'::jsonb)
        """
}
