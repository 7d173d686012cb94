/// JSON escaping, the one copy every output shares (reports, rows, the recorder's lines).
package enum JSONText {
    /// Calls `run` with each stretch of `bytes` (UTF-8) that needs no escape and `escape` with
    /// the escape of each byte that does (`"`, `\`, the C0 controls), so that a writer copies
    /// plain runs at once. Bytes above 0x7F pass through: JSON text is UTF-8.
    @inline(__always)
    package static func forEachEscapedPiece(_ bytes: UnsafeRawBufferPointer,
                                            run: (UnsafeRawBufferPointer) -> Void,
                                            escape: (StaticString) -> Void, control: (UInt8) -> Void) {
        var start = 0
        for (j, b) in bytes.enumerated() where b < 0x20 || b == 0x22 || b == 0x5c {
            if j > start { run(UnsafeRawBufferPointer(rebasing: bytes[start..<j])) }
            start = j + 1
            switch b {
            case 0x22: escape("\\\"")
            case 0x5c: escape("\\\\")
            case 0x0a: escape("\\n")
            case 0x0d: escape("\\r")
            case 0x09: escape("\\t")
            default: control(b)
            }
        }
        if start < bytes.count { run(UnsafeRawBufferPointer(rebasing: bytes[start...])) }
    }

    /// Appends `bytes` escaped for the inside of a JSON string to `out`.
    package static func appendEscaped(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        forEachEscapedPiece(bytes, run: { out.append(contentsOf: $0) },
                            escape: { s in s.withUTF8Buffer { out.append(contentsOf: $0) } },
                            control: { b in out.append(contentsOf: controlEscape(b)) })
    }

    /// `\u00XX` of a control byte.
    package static func controlEscape(_ b: UInt8) -> [UInt8] {
        let hex = Array("0123456789abcdef".utf8)
        return [0x5c, 0x75, 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xf)]]
    }

    /// The bytes of `s` escaped for the inside of a JSON string.
    package static func escaped(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        var s = s
        s.withUTF8 { appendEscaped(UnsafeRawBufferPointer($0), to: &out) }
        return out
    }

    /// `s` as a JSON string literal.
    package static func quoted(_ s: String) -> String {
        "\"" + String(decoding: escaped(s), as: UTF8.self) + "\""
    }
}

/// Writes JSON text value by value into a byte buffer, placing the commas and escapes, so no
/// output spells JSON by hand. Layout (line breaks, indentation) is the caller's: `layout`
/// text goes after the comma that separates the next element, and `endArray(layout:)` before
/// the bracket of a list that holds any. With a `sink`, the bytes are handed on at `flush` and
/// whenever `flushIfFull` finds `flushAt` held, so a long document streams in flat memory;
/// each piece ends where a call ended, so it is whole UTF-8.
///
///     var json = JSONWriter()
///     json.beginObject()
///     json.key("rule"); json.string("LC301")
///     json.key("evidence"); json.beginArray(); json.int(812); json.int(880); json.endArray()
///     json.endObject()      // {"rule":"LC301","evidence":[812,880]}
package struct JSONWriter {
    package private(set) var bytes: [UInt8] = []
    /// One entry per open container: true until its first element is written.
    private var first: [Bool] = []
    /// After a key: the value needs no comma.
    private var afterKey = false
    /// Whitespace to write before the next element (after its comma).
    private var pendingLayout: String?
    private let flushAt: Int
    private let sink: (([UInt8]) throws -> Void)?

    package init(capacity: Int = 256) {
        flushAt = .max
        sink = nil
        bytes.reserveCapacity(capacity)
    }

    /// A writer that hands its bytes to `sink` whenever it holds `flushAt` of them (and at `flush`).
    package init(flushAt: Int = 1 << 16, sink: @escaping ([UInt8]) throws -> Void) {
        self.flushAt = flushAt
        self.sink = sink
        bytes.reserveCapacity(min(flushAt, 1 << 20) + 256)
    }

    /// The text written so far (a writer without a sink).
    package var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Takes the bytes written so far, leaving the writer empty (its open containers stay open).
    package mutating func takeBytes() -> [UInt8] {
        defer { bytes.removeAll(keepingCapacity: true) }
        return bytes
    }

    /// Hands what is held to the sink.
    package mutating func flush() throws {
        guard let sink, !bytes.isEmpty else { return }
        try sink(bytes)
        bytes.removeAll(keepingCapacity: true)
    }

    /// Flushes when the writer holds `flushAt` bytes: call between elements of a long document.
    @inline(__always)
    package mutating func flushIfFull() throws {
        if bytes.count >= flushAt { try flush() }
    }

    // MARK: Structure

    /// Whitespace written before the next element of the open container, after its comma.
    package mutating func layout(_ whitespace: String) { pendingLayout = whitespace }

    /// Text written as it is, outside the comma rules: whitespace, or a complete JSON value
    /// made elsewhere (use `rawValue` for a value that takes an element's place).
    package mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    package mutating func beginObject() { element(); bytes.append(0x7b); first.append(true) }
    /// `layout`: whitespace before the brace when the object holds a member (none when empty).
    package mutating func endObject(layout: String = "") { close(0x7d, layout: layout) }
    package mutating func beginArray() { element(); bytes.append(0x5b); first.append(true) }
    /// `layout`: whitespace before the bracket when the array holds an element, so that a list
    /// written one element a line closes on its own line and an empty one stays `[]`.
    package mutating func endArray(layout: String = "") { close(0x5d, layout: layout) }

    /// The key of the next member of the open object.
    package mutating func key(_ name: String) {
        element()
        appendString(name)
        bytes.append(0x3a)
        afterKey = true
    }

    // MARK: Values

    package mutating func string(_ value: String) { element(); appendString(value) }
    package mutating func string(_ value: String?) { if let value { string(value) } else { null() } }
    /// A string from UTF-8 bytes.
    package mutating func string(bytes value: UnsafeRawBufferPointer) {
        element()
        bytes.append(0x22)
        JSONText.appendEscaped(value, to: &bytes)
        bytes.append(0x22)
    }
    package mutating func int(_ value: Int64) { element(); appendDigits(value) }
    package mutating func int(_ value: Int) { int(Int64(value)) }
    package mutating func int(_ value: Int64?) { if let value { int(value) } else { null() } }
    /// A number as Swift prints it (shortest round trip); not finite: null.
    package mutating func double(_ value: Double) {
        guard value.isFinite else { return null() }
        element()
        bytes.append(contentsOf: String(value).utf8)
    }
    package mutating func bool(_ value: Bool) { element(); bytes.append(contentsOf: (value ? "true" : "false").utf8) }
    package mutating func bool(_ value: Bool?) { if let value { bool(value) } else { null() } }
    /// `value` / 10^`places`, with exactly `places` digits after the point (`decimal(-1500, places: 3)`
    /// is `-1.500`): a fixed-point number (nanoseconds as microseconds) without a Double's rounding.
    package mutating func decimal(_ value: Int64, places: Int) {
        precondition((0...18).contains(places), "JSONWriter.decimal: places from 0 to 18")
        element()
        if value < 0 { bytes.append(0x2d) }
        var scale: UInt64 = 1
        for _ in 0..<places { scale *= 10 }
        let magnitude = value.magnitude
        appendDigits(magnitude / scale)
        guard places > 0 else { return }
        bytes.append(0x2e)
        let fraction = magnitude % scale
        var digits = 1, rest = fraction
        while rest >= 10 { rest /= 10; digits += 1 }
        for _ in digits..<places { bytes.append(0x30) }
        appendDigits(fraction)
    }
    package mutating func null() { element(); bytes.append(contentsOf: "null".utf8) }
    /// A complete JSON value made elsewhere, in an element's place.
    package mutating func rawValue(_ json: String) { element(); bytes.append(contentsOf: json.utf8) }
    /// A complete JSON value made elsewhere as bytes (by another writer), in an element's place.
    package mutating func rawValue<Bytes: Sequence<UInt8>>(bytes json: Bytes) { element(); bytes.append(contentsOf: json) }

    // MARK: Internals

    private mutating func element() {
        if afterKey { afterKey = false; return }
        guard let last = first.indices.last else { return }
        if first[last] { first[last] = false } else { bytes.append(0x2c) }
        if let pendingLayout {
            bytes.append(contentsOf: pendingLayout.utf8)
            self.pendingLayout = nil
        }
    }

    private mutating func close(_ byte: UInt8, layout: String) {
        precondition(!first.isEmpty, "JSONWriter: a container closed that was never opened")
        if !first.removeLast() { bytes.append(contentsOf: layout.utf8) }
        pendingLayout = nil
        bytes.append(byte)
    }

    /// The decimal digits of `value`, with its sign (no String made: a long document writes many).
    private mutating func appendDigits(_ value: Int64) {
        if value < 0 { bytes.append(0x2d) }
        appendDigits(value.magnitude)
    }

    private mutating func appendDigits(_ value: UInt64) {
        var v = value, count = 1
        while v >= 10 { v /= 10; count += 1 }
        let end = bytes.count + count
        bytes.append(contentsOf: repeatElement(0x30, count: count))
        v = value
        for i in stride(from: end - 1, through: end - count, by: -1) {
            bytes[i] = UInt8(truncatingIfNeeded: v % 10) + 0x30
            v /= 10
        }
    }

    private mutating func appendString(_ s: String) {
        bytes.append(0x22)
        var s = s
        s.withUTF8 { JSONText.appendEscaped(UnsafeRawBufferPointer($0), to: &bytes) }
        bytes.append(0x22)
    }
}
