import LCTraceFormat
import LCTraceModel

/// How schema 4 packs an event (Schemas/lctrace-schema.postgresql.sql) for a server's
/// fixed-width values: ids as `integer`, the event name as `smallint`, `other` holding the
/// class on the events that name no other controller, flags in a `smallint`, the rarer values
/// in one `jsonb` only where present. Schema 7 stores those values in blocks of up to
/// `blockSize` events of one session (`event_blocks`, an array a column), because a row an
/// event cost 93 bytes with its key, most of it the row's header and the index entry, and
/// the server's CPU per row was the ingest's limit; the view `events` unnests them. The
/// writers use these encoders; `event_rows` spells the decoding in SQL, `PGEventReader` in Swift.
enum PGEventRow {
    /// `events.flags` bit 6: the other key was present (possibly null); bit 7: `other` holds the class.
    static let otherPresentBit: Int64 = 1 << 6
    static let classInOtherBit: Int64 = 1 << 7
    /// The booleans' value bits (0-5) and present bits (8-13), where `EventFlags` has them too.
    static let booleanBits: Int64 = 0x3f3f
    /// The largest event-name id `events.ev` holds; a larger one goes to `rest` ("ev") and `ev` is 0.
    static let maxEv = Int64(Int16.max)

    /// The most events a block holds. Larger blocks compress better and cost fewer rows; a
    /// look-up of a few seqs unnests the block or two whose bounds hold them.
    static let blockSize = 256

    /// The COPY of blocks, in the order `addBlock` writes their fields.
    static let copy = "COPY event_blocks (session, first_seq, last_seq, t, seq, vc, other, ev, flags, rest) FROM STDIN WITH (FORMAT binary)"

    /// An event's packed values, as one element of each of a block's arrays.
    struct Packed {
        var t, seq: Int64
        var vc, other: Int64?
        var ev, flags: Int64
        var rest: [UInt8]?
    }

    static func packedFlags(_ flags: Int64, classInOther: Bool) -> Int64 {
        (flags & booleanBits) | (flags & EventFlags.otherPresent.rawValue != 0 ? otherPresentBit : 0)
            | (classInOther ? classInOtherBit : 0)
    }

    /// `EventFlags` of a row's packed flags (what `event_rows.flags` gives).
    static func decodedFlags(_ packed: Int64) -> EventFlags {
        EventFlags(rawValue: (packed & booleanBits) | (packed & otherPresentBit != 0 ? EventFlags.otherPresent.rawValue : 0))
    }

    /// An event's packed values: texts as their `strings` ids, the wall time and attrs as the
    /// UTF-8 bytes of the line (nil: absent).
    static func packed(seq: Int64, t: Int64, ev: Int64?, vc: Int64?, cls: Int64?, other: Int64?, flags: Int64,
                       detail: Int64?, thread: Int64?, wall: UnsafeRawBufferPointer?, attrs: UnsafeRawBufferPointer?) -> Packed {
        let classInOther = other == nil && cls != nil
        let evFits = (ev ?? 0) <= maxEv
        return Packed(t: t, seq: seq, vc: vc, other: classInOther ? cls : other, ev: evFits ? (ev ?? 0) : 0,
                      flags: packedFlags(flags, classInOther: classInOther),
                      rest: rest(ev: evFits ? nil : ev, cls: classInOther ? nil : cls, detail: detail, thread: thread, wall: wall, attrs: attrs))
    }

    /// Adds a block of `copy` (binary): `events`, of one session, in rising seq order. A value
    /// past its column's width is refused, as the server refuses it in text (binary would
    /// store it cut): none can occur, ids stop at 2^31 - 1 and `packed` keeps ev and flags small.
    static func addBlock(_ w: PGCopyWriter, session: Int64, _ events: ArraySlice<Packed>) throws {
        precondition(!events.isEmpty && events.count <= blockSize)
        func fits(_ value: Int64?, _ type: PGCopyWriter.BinaryType) -> Bool {
            guard let value else { return true }
            return type == .int2 ? Int64(Int16.min)...Int64(Int16.max) ~= value : Int64(Int32.min)...Int64(Int32.max) ~= value
        }
        guard fits(session, .int4), events.allSatisfy({ fits($0.vc, .int4) && fits($0.other, .int4) && fits($0.ev, .int2) && fits($0.flags, .int2) }) else {
            throw PGSchema.Refused(description: "an event of session \(session) holds an id past the 2^31 - 1 that schema version \(PGSchema.version) stores")
        }
        let n = events.count, first = events.startIndex
        w.beginTuple(10)
        w.binary(session, .int4)
        w.binary(events.first!.seq, .int8)
        w.binary(events.last!.seq, .int8)
        w.binaryArray(.int8, count: n, hasNulls: false) { w.binary(events[first + $0].t, .int8) }
        w.binaryArray(.int8, count: n, hasNulls: false) { w.binary(events[first + $0].seq, .int8) }
        w.binaryArray(.int4, count: n, hasNulls: events.contains { $0.vc == nil }) { w.binary(events[first + $0].vc, .int4) }
        w.binaryArray(.int4, count: n, hasNulls: events.contains { $0.other == nil }) { w.binary(events[first + $0].other, .int4) }
        w.binaryArray(.int2, count: n, hasNulls: false) { w.binary(events[first + $0].ev, .int2) }
        w.binaryArray(.int2, count: n, hasNulls: false) { w.binary(events[first + $0].flags, .int2) }
        if events.contains(where: { $0.rest != nil }) {
            w.binaryArray(.jsonb, count: n, hasNulls: events.contains { $0.rest == nil }) { i in
                if let rest = events[first + i].rest { rest.withUnsafeBytes { w.binaryJSON($0) } } else { w.binaryJSON(nil) }
            }
        } else {
            w.binaryJSON(nil)
        }
        try w.endTuple()
    }

    /// The statement that stores the events of `from` (a FROM item named `p` with the columns
    /// t, seq, session, vc, other, ev, flags, rest, as `events` has them, no (session, seq)
    /// twice and none stored) as blocks of up to `blockSize`, in seq order: the merge path's
    /// rows and the migration's.
    static func insertBlocks(from: String) -> String {
        """
        INSERT INTO event_blocks (session, first_seq, last_seq, t, seq, vc, other, ev, flags, rest)
        SELECT session, min(seq), max(seq), array_agg(t ORDER BY seq), array_agg(seq ORDER BY seq), array_agg(vc ORDER BY seq),
               array_agg(other ORDER BY seq), array_agg(ev ORDER BY seq), array_agg(flags ORDER BY seq),
               CASE WHEN bool_or(rest IS NOT NULL) THEN array_agg(rest ORDER BY seq) END
        FROM (SELECT p.*, (row_number() OVER (PARTITION BY p.session ORDER BY p.seq) - 1) / \(blockSize) AS block FROM \(from)) AS numbered
        GROUP BY session, block
        """
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

    /// SQL of the packed columns (t, seq, session, vc, other, ev, flags, rest) of the plain rows of relation `b` (columns
    /// session, seq, t, ev, vc, cls, other, flags, detail, thread, wall, attrs, as version 3
    /// stored them): the packing of `packed`, for the rows the merge path and the migration write.
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
