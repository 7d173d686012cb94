/// A strict RFC 8259 scanner over the bytes of one line. It validates without building
/// dictionaries: the decoder asks it for the top-level members and copies only what it
/// needs. UTF-8 is validated inside strings (outside them any byte ≥ 0x80 is a syntax
/// error anyway), lone surrogate escapes are refused, nesting depth is bounded.
public struct JSONScanner {
    /// What went wrong and where (0-based byte offset in the line).
    @usableFromInline package struct Failure: Error {
        package var message: String
        package var offset: Int
    }

    public enum ValueKind: UInt8, Sendable { case string, number, object, array, bool, null }

    package static let maxDepth = 64

    @usableFromInline package let bytes: UnsafeRawBufferPointer
    @usableFromInline package var index = 0

    @inlinable @inline(__always) package init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    @inlinable @inline(__always) package var atEnd: Bool { index >= bytes.count }
    @inlinable @inline(__always) package func peek() -> UInt8 { bytes[index] }

    @inlinable @inline(__always) package mutating func skipWhitespace() {
        while index < bytes.count {
            let b = bytes[index]
            if b == 0x20 || b == 0x09 || b == 0x0a || b == 0x0d { index += 1 } else { return }
        }
    }

    @usableFromInline package func fail(_ message: String, at offset: Int? = nil) -> Failure {
        Failure(message: message, offset: offset ?? index)
    }

    @usableFromInline package func describeByte(at i: Int) -> String {
        guard i < bytes.count else { return "end of line" }
        let b = bytes[i]
        if b >= 0x20 && b < 0x7f { return "'\(Character(Unicode.Scalar(b)))'" }
        return "byte 0x\(String(b, radix: 16))"
    }

    @inlinable @inline(__always)
    package mutating func expect(_ byte: UInt8, _ what: String) throws {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == byte else {
            throw fail("expected \(what), found \(describeByte(at: index))")
        }
        index += 1
    }

    /// High bits marking the bytes of `w` (little-endian: byte 0 lowest) that are a quote, a
    /// backslash, below 0x20 or above 0x7F, by bit tricks on the whole word. A byte above a
    /// marked one may be marked wrongly (a borrow), never one below: the lowest mark is the
    /// first such byte.
    @inline(__always) package static func specialMask(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quote = w ^ (ones &* 0x22), backslash = w ^ (ones &* 0x5c)
        let zeroQuote = (quote &- ones) & ~quote & highs
        let zeroBackslash = (backslash &- ones) & ~backslash & highs
        let control = (w &- ones &* 0x20) & ~w & highs
        return zeroQuote | zeroBackslash | control | (w & highs)
    }

    /// True when none of the 8 bytes of `w` is a quote, a backslash, below 0x20 or above 0x7F.
    @inline(__always) package static func plainASCII(_ w: UInt64) -> Bool { specialMask(w) == 0 }

    /// Scans a string starting at `"`; returns the range of its content (between the quotes)
    /// and whether it contains escapes.
    package mutating func scanString() throws -> (range: Range<Int>, escaped: Bool) {
        let open = index
        index += 1  // opening quote
        let contentStart = index
        var escaped = false
        while true {
            // Eight plain bytes at a time (none is '"', '\\', a control byte or non-ASCII), then
            // straight to the first byte that is not.
            while index + 8 <= bytes.count {
                let mask = Self.specialMask(UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
                if mask == 0 {
                    index += 8
                } else {
                    index += mask.trailingZeroBitCount >> 3
                    break
                }
            }
            guard index < bytes.count else { throw fail("unterminated string", at: open) }
            let b = bytes[index]
            if b == 0x22 {
                let range = contentStart..<index
                index += 1
                return (range, escaped)
            } else if b == 0x5c {
                escaped = true
                index += 1
                guard index < bytes.count else { throw fail("unterminated string", at: open) }
                switch bytes[index] {
                case 0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74:
                    index += 1
                case 0x75:
                    let unit = try hex4(at: index + 1)
                    index += 5
                    if unit >= 0xD800 && unit <= 0xDBFF {
                        guard index + 1 < bytes.count, bytes[index] == 0x5c, bytes[index + 1] == 0x75,
                              let low = try? hex4(at: index + 2), low >= 0xDC00 && low <= 0xDFFF
                        else { throw fail("lone surrogate in \\u escape (not valid Unicode)", at: index - 6) }
                        index += 6
                    } else if unit >= 0xDC00 && unit <= 0xDFFF {
                        throw fail("lone surrogate in \\u escape (not valid Unicode)", at: index - 6)
                    }
                default:
                    throw fail("invalid escape \\\(describeByte(at: index))", at: index - 1)
                }
            } else if b < 0x20 {
                throw fail("control character in string", at: index)
            } else if b < 0x80 {
                index += 1
            } else {
                try skipUTF8Sequence()
            }
        }
    }

    private func hex4(at i: Int) throws -> UInt32 {
        guard i + 4 <= bytes.count else { throw fail("truncated \\u escape", at: i - 2) }
        var value: UInt32 = 0
        for j in i..<(i + 4) {
            let b = bytes[j]
            let digit: UInt8
            switch b {
            case 0x30...0x39: digit = b - 0x30
            case 0x61...0x66: digit = b - 0x61 + 10
            case 0x41...0x46: digit = b - 0x41 + 10
            default: throw fail("invalid \\u escape", at: i - 2)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Validates one multi-byte UTF-8 sequence (RFC 3629: no overlongs, no surrogates,
    /// nothing above U+10FFFF).
    private mutating func skipUTF8Sequence() throws {
        let b0 = bytes[index]
        let start = index
        func cont(_ i: Int, _ lo: UInt8 = 0x80, _ hi: UInt8 = 0xBF) -> Bool {
            i < bytes.count && bytes[i] >= lo && bytes[i] <= hi
        }
        let ok: Bool
        let length: Int
        switch b0 {
        case 0xC2...0xDF: length = 2; ok = cont(start + 1)
        case 0xE0: length = 3; ok = cont(start + 1, 0xA0, 0xBF) && cont(start + 2)
        case 0xE1...0xEC, 0xEE...0xEF: length = 3; ok = cont(start + 1) && cont(start + 2)
        case 0xED: length = 3; ok = cont(start + 1, 0x80, 0x9F) && cont(start + 2)
        case 0xF0: length = 4; ok = cont(start + 1, 0x90, 0xBF) && cont(start + 2) && cont(start + 3)
        case 0xF1...0xF3: length = 4; ok = cont(start + 1) && cont(start + 2) && cont(start + 3)
        case 0xF4: length = 4; ok = cont(start + 1, 0x80, 0x8F) && cont(start + 2) && cont(start + 3)
        default: length = 1; ok = false
        }
        guard ok else { throw Failure(message: "not valid UTF-8", offset: start) }
        index += length
    }

    /// Scans a number; returns its range.
    package mutating func scanNumber() throws -> Range<Int> {
        let start = index
        if index < bytes.count && bytes[index] == 0x2d { index += 1 }
        guard index < bytes.count else { throw fail("invalid number", at: start) }
        if bytes[index] == 0x30 {
            index += 1
        } else if bytes[index] >= 0x31 && bytes[index] <= 0x39 {
            while index < bytes.count && bytes[index] >= 0x30 && bytes[index] <= 0x39 { index += 1 }
        } else {
            throw fail("invalid number", at: start)
        }
        if index < bytes.count && bytes[index] == 0x2e {
            index += 1
            let digits = index
            while index < bytes.count && bytes[index] >= 0x30 && bytes[index] <= 0x39 { index += 1 }
            if index == digits { throw fail("invalid number", at: start) }
        }
        if index < bytes.count && (bytes[index] == 0x65 || bytes[index] == 0x45) {
            index += 1
            if index < bytes.count && (bytes[index] == 0x2b || bytes[index] == 0x2d) { index += 1 }
            let digits = index
            while index < bytes.count && bytes[index] >= 0x30 && bytes[index] <= 0x39 { index += 1 }
            if index == digits { throw fail("invalid number", at: start) }
        }
        return start..<index
    }

    private mutating func literal(_ word: StaticString) throws {
        let n = word.utf8CodeUnitCount
        guard index + n <= bytes.count else { throw fail("invalid literal") }
        let p = word.utf8Start
        for i in 0..<n where bytes[index + i] != p[i] { throw fail("invalid literal") }
        index += n
    }

    /// Scans any value (after whitespace); returns its kind. `depth` is the nesting level of
    /// the value being scanned.
    package mutating func scanValue(depth: Int) throws -> ValueKind {
        skipWhitespace()
        guard index < bytes.count else { throw fail("expected a value, found end of line") }
        switch bytes[index] {
        case 0x22: _ = try scanString(); return .string
        case 0x7b:
            if depth >= JSONScanner.maxDepth { throw fail("nested deeper than \(JSONScanner.maxDepth) levels") }
            index += 1
            skipWhitespace()
            if index < bytes.count && bytes[index] == 0x7d { index += 1; return .object }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == 0x22 else {
                    throw fail("expected a key string, found \(describeByte(at: index))")
                }
                _ = try scanString()
                try expect(0x3a, "':'")
                _ = try scanValue(depth: depth + 1)
                skipWhitespace()
                guard index < bytes.count else { throw fail("unterminated object") }
                if bytes[index] == 0x2c { index += 1; continue }
                if bytes[index] == 0x7d { index += 1; return .object }
                throw fail("expected ',' or '}', found \(describeByte(at: index))")
            }
        case 0x5b:
            if depth >= JSONScanner.maxDepth { throw fail("nested deeper than \(JSONScanner.maxDepth) levels") }
            index += 1
            skipWhitespace()
            if index < bytes.count && bytes[index] == 0x5d { index += 1; return .array }
            while true {
                _ = try scanValue(depth: depth + 1)
                skipWhitespace()
                guard index < bytes.count else { throw fail("unterminated array") }
                if bytes[index] == 0x2c { index += 1; continue }
                if bytes[index] == 0x5d { index += 1; return .array }
                throw fail("expected ',' or ']', found \(describeByte(at: index))")
            }
        case 0x74: try literal("true"); return .bool
        case 0x66: try literal("false"); return .bool
        case 0x6e: try literal("null"); return .null
        case 0x2d, 0x30...0x39: _ = try scanNumber(); return .number
        default: throw fail("unexpected \(describeByte(at: index))")
        }
    }

    // MARK: - Reading scanned values

    /// Decodes the content of a scanned string (escapes resolved).
    package func string(_ range: Range<Int>, escaped: Bool) -> String {
        let slice = UnsafeRawBufferPointer(rebasing: bytes[range])
        if !escaped { return String(decoding: slice, as: UTF8.self) }
        var out = [UInt8]()
        out.reserveCapacity(range.count)
        var i = range.lowerBound
        while i < range.upperBound {
            let b = bytes[i]
            if b != 0x5c { out.append(b); i += 1; continue }
            let e = bytes[i + 1]
            i += 2
            switch e {
            case 0x62: out.append(0x08)
            case 0x66: out.append(0x0c)
            case 0x6e: out.append(0x0a)
            case 0x72: out.append(0x0d)
            case 0x74: out.append(0x09)
            case 0x75:
                var scalar = (try? hex4(at: i)) ?? 0xFFFD
                i += 4
                if scalar >= 0xD800 && scalar <= 0xDBFF, let low = try? hex4(at: i + 2) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                }
                let s = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                out.append(contentsOf: Array(String(Character(s)).utf8))
            default: out.append(e)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Reads a scanned number as a non-negative or negative Int64 when it is an integer
    /// literal that fits; nil for fractions, exponents and overflow.
    package func integer(_ range: Range<Int>) -> Int64? {
        var i = range.lowerBound
        var negative = false
        if bytes[i] == 0x2d { negative = true; i += 1 }
        var value: Int64 = 0
        while i < range.upperBound {
            let b = bytes[i]
            guard b >= 0x30 && b <= 0x39 else { return nil }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(Int64(b - 0x30))
            if o1 || o2 { return nil }
            value = a
            i += 1
        }
        return negative ? -value : value
    }

    /// A number's value as an integer, whatever its spelling: JSON (and JSON Schema's
    /// `integer`) makes `5`, `5.0`, `0.5e1` and `500e-2` one value. Exact, from the digits
    /// (never through a Double, which would round 2^53 + 1).
    package enum Integral: Equatable { case value(Int64), fraction, outOfRange }

    /// `range` holds a scanned number (`scanNumber`): its integral value, if it has one.
    package func integral(_ range: Range<Int>) -> Integral {
        if let plain = integer(range) { return .value(plain) }
        var i = range.lowerBound
        let negative = bytes[i] == 0x2d
        if negative { i += 1 }
        var digits: [UInt8] = []
        var scale = 0
        var inFraction = false
        while i < range.upperBound, bytes[i] != 0x65, bytes[i] != 0x45 {
            if bytes[i] == 0x2e { inFraction = true } else {
                digits.append(bytes[i] - 0x30)
                if inFraction { scale -= 1 }
            }
            i += 1
        }
        if i < range.upperBound {
            // The exponent, held within what a line's digits can make up for (a line is at
            // most a few MiB: 0.000…1e150000 is 1), and no more.
            i += 1
            var expNegative = false
            if bytes[i] == 0x2d || bytes[i] == 0x2b { expNegative = bytes[i] == 0x2d; i += 1 }
            var exponent = 0
            while i < range.upperBound { exponent = min(exponent * 10 + Int(bytes[i] - 0x30), 1 << 40); i += 1 }
            scale += expNegative ? -exponent : exponent
        }
        // Leading zeros in one step (one at a time was quadratic in a hostile run of them).
        digits.removeFirst(digits.firstIndex { $0 != 0 } ?? digits.count)
        if digits.isEmpty { return .value(0) }
        while scale < 0, digits.last == 0 { digits.removeLast(); scale += 1 }
        if scale < 0 { return .fraction }
        guard digits.count + scale <= 19 else { return .outOfRange }
        var value: Int64 = 0
        for d in digits + [UInt8](repeating: 0, count: scale) {
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = negative ? m.subtractingReportingOverflow(Int64(d)) : m.addingReportingOverflow(Int64(d))
            if o1 || o2 { return .outOfRange }
            value = a
        }
        return .value(value)
    }

    package func double(_ range: Range<Int>) -> Double? {
        Double(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self))
    }
}
