import LCTraceFormat
import LCTraceModel

/// How schema 3 packs the rows of `events` and of the model tables (Schemas/lctrace-schema.sql):
/// the encoders the writers use and the decoders the SQLite readers use, the same rules the
/// schema's `*_rows` and `*_v` views spell in SQL. A database stays under 40 bytes per event
/// this way; the views give every documented column back.
enum PackedEvent {
    /// Bit 0 of `events.flags`: `other` holds the class (when it is not NULL), or the other key
    /// was present with a null value (when it is).
    static let otherBit: Int64 = 1
    /// The booleans of format v1 in the order of their bit pairs (k: bits 2k+1 present, 2k+2 value).
    private static let booleans: [EventFlags] = [.animated, .isMovingToParent, .isBeingPresented,
                                                 .isMovingFromParent, .isBeingDismissed, .interactive]

    /// The packed `flags` of an event whose decoded flags are `flags`. `classInOther`: the
    /// row's `other` holds its class; `otherIsNull`: the row's `other` is NULL.
    @inline(__always)
    package static func flags(_ flags: EventFlags, classInOther: Bool, otherIsNull: Bool) -> Int64 {
        var packed: Int64 = classInOther || (otherIsNull && flags.contains(.otherPresent)) ? otherBit : 0
        for (k, flag) in booleans.enumerated() {
            if flags.contains(.present(flag)) { packed |= 1 << (2 * k + 1) }
            if flags.contains(flag) { packed |= 1 << (2 * k + 2) }
        }
        return packed
    }

    /// The decoded flags of a row whose packed `flags` are `packed` and whose `other` column
    /// is NULL or not (`event_rows.flags`).
    @inline(__always)
    static func decodedFlags(_ packed: Int64, otherIsNull: Bool) -> EventFlags {
        var flags: EventFlags = []
        for (k, flag) in booleans.enumerated() {
            if packed & (1 << (2 * k + 1)) != 0 { flags.insert(.present(flag)) }
            if packed & (1 << (2 * k + 2)) != 0 { flags.insert(flag) }
        }
        if (packed & otherBit != 0) == otherIsNull { flags.insert(.otherPresent) }
        return flags
    }

    /// Appends the JSON object of an event's rarer values (`events.rest`) to `out`: ids for the
    /// class, detail and thread (and for a wall time holding a NUL, which SQLite's JSON
    /// functions would cut: `wallID`), text for the wall time and the attrs, keys in this order,
    /// only those present. False when there are none (the column is then NULL).
    static func appendRest(to out: inout [UInt8], cls: Int64?, detail: Int64?, thread: Int64?, wallID: Int64? = nil,
                           wall: UnsafeRawBufferPointer?, attrs: UnsafeRawBufferPointer?) -> Bool {
        guard cls != nil || detail != nil || thread != nil || wallID != nil || wall != nil || attrs != nil else { return false }
        var first = true
        func key(_ name: StaticString) {
            out.append(first ? 0x7b : 0x2c)   // { or ,
            first = false
            out.append(0x22)
            name.withUTF8Buffer { out.append(contentsOf: $0) }
            out.append(0x22)
            out.append(0x3a)
        }
        if let cls { key("class"); appendInteger(cls, to: &out) }
        if let detail { key("detail"); appendInteger(detail, to: &out) }
        if let thread { key("thread"); appendInteger(thread, to: &out) }
        if let wallID { key("wall_id"); appendInteger(wallID, to: &out) }
        if let wall { key("wall"); appendJSONString(wall, to: &out) }
        if let attrs { key("attrs"); appendJSONString(attrs, to: &out) }
        out.append(0x7d)
        return true
    }

    /// The class and detail ids of a `rest` object (what the model needs of it).
    static func restIDs(_ json: UnsafeRawBufferPointer) -> (cls: Int64?, detail: Int64?) {
        (integer(after: "\"class\":", in: json), integer(after: "\"detail\":", in: json))
    }

    /// The attrs text of a `rest` object (the JSON string after `"attrs":`, unescaped), nil
    /// when it has none. The object is ours (`appendRest`): its strings escape only quote,
    /// backslash and control characters.
    static func restAttrs(_ json: UnsafeRawBufferPointer) -> String? {
        let key: StaticString = "\"attrs\":\""
        return key.withUTF8Buffer { k -> String? in
            guard json.count > k.count else { return nil }
            var i = 0
            while i + k.count <= json.count {
                if json[i] == k[0] && memcmp(json.baseAddress! + i, k.baseAddress!, k.count) == 0 { break }
                i += 1
            }
            guard i + k.count <= json.count else { return nil }
            var out: [UInt8] = []
            var j = i + k.count
            while j < json.count, json[j] != 0x22 {
                guard json[j] == 0x5c, j + 1 < json.count else { out.append(json[j]); j += 1; continue }
                switch json[j + 1] {
                case 0x6e: out.append(0x0a); j += 2
                case 0x72: out.append(0x0d); j += 2
                case 0x74: out.append(0x09); j += 2
                case 0x75 where j + 5 < json.count:
                    let hex = String(decoding: UnsafeRawBufferPointer(rebasing: json[(j + 2)..<(j + 6)]), as: UTF8.self)
                    out.append(UInt8(UInt32(hex, radix: 16) ?? 0x3f))   // appendJSONString writes \u00XX only
                    j += 6
                default: out.append(json[j + 1]); j += 2
                }
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// The integer after `key` in `json`. A key with its quotes and colon cannot occur inside
    /// a JSON string (a quote there is escaped), so the first match is the key itself.
    private static func integer(after key: StaticString, in json: UnsafeRawBufferPointer) -> Int64? {
        key.withUTF8Buffer { k -> Int64? in
            guard json.count >= k.count else { return nil }
            var i = 0
            while i + k.count <= json.count {
                if json[i] == k[0] && memcmp(json.baseAddress! + i, k.baseAddress!, k.count) == 0 {
                    var j = i + k.count
                    var negative = false
                    if j < json.count && json[j] == 0x2d { negative = true; j += 1 }
                    var value: Int64 = 0
                    var digits = 0
                    while j < json.count, json[j] >= 0x30, json[j] <= 0x39 {
                        value = value &* 10 &+ Int64(json[j] - 0x30)
                        j += 1
                        digits += 1
                    }
                    return digits == 0 ? nil : (negative ? -value : value)
                }
                i += 1
            }
            return nil
        }
    }

    private static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        out.append(contentsOf: String(value).utf8)
    }

    /// True when `bytes` hold a NUL: such a text goes to `strings`, not into a JSON object.
    static func holdsNUL(_ bytes: UnsafeRawBufferPointer) -> Bool {
        !bytes.isEmpty && memchr(bytes.baseAddress!, 0, bytes.count) != nil
    }

    /// `bytes` (UTF-8) as a JSON string literal, escaped by the one JSON escaper (`JSONText`:
    /// quote, backslash and control characters, which `restAttrs` reads back).
    static func appendJSONString(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        out.append(0x22)
        JSONText.appendEscaped(bytes, to: &out)
        out.append(0x22)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
