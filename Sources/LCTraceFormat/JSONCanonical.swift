/// JSON values compared as values (trace format 1.2): key order, white space and the spelling
/// of numbers and strings (`1.0` and `1`, `"\u0041"` and `"A"`) make no difference. The
/// canonical text has no white space, object members sorted by key, strings escaped as
/// `JSONText` does and numbers as a normalised decimal.
package enum JSONCanonical {
    /// True when `a` and `b` are the same JSON value (both nil: the same absent value). Text
    /// that is not JSON equals only itself.
    package static func equal(_ a: UnsafeRawBufferPointer?, _ b: UnsafeRawBufferPointer?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (let a?, let b?):
            if a.elementsEqual(b) { return true }
            guard let x = text(of: a), let y = text(of: b) else { return false }
            return x == y
        default: return false
        }
    }

    /// The same for two texts.
    package static func equal(_ a: String?, _ b: String?) -> Bool {
        guard var a, var b else { return a == nil && b == nil }
        return a.withUTF8 { x in b.withUTF8 { y in equal(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) } }
    }

    /// The canonical text of the JSON value in `bytes`, or nil when it is not one value.
    package static func text(of bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        var scanner = JSONScanner(bytes)
        var out: [UInt8] = []
        guard (try? value(&scanner, into: &out, depth: 0)) != nil else { return nil }
        scanner.skipWhitespace()
        return scanner.atEnd ? out : nil
    }

    private static func value(_ s: inout JSONScanner, into out: inout [UInt8], depth: Int) throws {
        s.skipWhitespace()
        guard !s.atEnd else { throw s.fail("expected a value") }
        switch s.peek() {
        case 0x22:
            let (range, escaped) = try s.scanString()
            appendString(s.string(range, escaped: escaped), to: &out)
        case 0x7b:
            guard depth < JSONScanner.maxDepth else { throw s.fail("too deep") }
            s.index += 1
            var members: [(key: String, value: [UInt8])] = []
            s.skipWhitespace()
            if !s.atEnd && s.peek() == 0x7d {
                s.index += 1
            } else {
                while true {
                    s.skipWhitespace()
                    guard !s.atEnd, s.peek() == 0x22 else { throw s.fail("expected a key") }
                    let (range, escaped) = try s.scanString()
                    try s.expect(0x3a, "':'")
                    var member: [UInt8] = []
                    try value(&s, into: &member, depth: depth + 1)
                    members.append((s.string(range, escaped: escaped), member))
                    s.skipWhitespace()
                    guard !s.atEnd else { throw s.fail("unterminated object") }
                    if s.peek() == 0x2c { s.index += 1; continue }
                    if s.peek() == 0x7d { s.index += 1; break }
                    throw s.fail("expected ',' or '}'")
                }
            }
            // By the keys' UTF-8 bytes, as text compares in C.
            members.sort { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
            out.append(0x7b)
            for (i, m) in members.enumerated() {
                if i > 0 { out.append(0x2c) }
                appendString(m.key, to: &out)
                out.append(0x3a)
                out.append(contentsOf: m.value)
            }
            out.append(0x7d)
        case 0x5b:
            guard depth < JSONScanner.maxDepth else { throw s.fail("too deep") }
            s.index += 1
            out.append(0x5b)
            s.skipWhitespace()
            if !s.atEnd && s.peek() == 0x5d {
                s.index += 1
            } else {
                var first = true
                while true {
                    if !first { out.append(0x2c) }
                    first = false
                    try value(&s, into: &out, depth: depth + 1)
                    s.skipWhitespace()
                    guard !s.atEnd else { throw s.fail("unterminated array") }
                    if s.peek() == 0x2c { s.index += 1; continue }
                    if s.peek() == 0x5d { s.index += 1; break }
                    throw s.fail("expected ',' or ']'")
                }
            }
            out.append(0x5d)
        case 0x2d, 0x30...0x39:
            let range = try s.scanNumber()
            appendNumber(UnsafeRawBufferPointer(rebasing: s.bytes[range]), to: &out)
        default:
            let start = s.index
            _ = try s.scanValue(depth: depth)   // true, false or null, checked
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: s.bytes[start..<s.index]))
        }
    }

    private static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(0x22)
        var text = text
        text.withUTF8 { JSONText.appendEscaped(UnsafeRawBufferPointer($0), to: &out) }
        out.append(0x22)
    }

    /// A JSON number (already validated) as `[-]DIGITS[eEXP]`: the significant digits without
    /// leading or trailing zeros and the power of ten they are scaled by; zero is `0`.
    private static func appendNumber(_ n: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        var i = 0
        let negative = n[0] == 0x2d
        if negative { i = 1 }
        var digits: [UInt8] = []
        var scale = 0           // the value is digits × 10^scale
        var seenPoint = false
        while i < n.count, n[i] != 0x65 && n[i] != 0x45 {
            if n[i] == 0x2e {
                seenPoint = true
            } else {
                digits.append(n[i])
                if seenPoint { scale -= 1 }
            }
            i += 1
        }
        if i < n.count {        // an exponent
            i += 1
            var sign = 1
            if n[i] == 0x2d { sign = -1; i += 1 } else if n[i] == 0x2b { i += 1 }
            var exponent = 0
            while i < n.count {
                // Absurd exponents saturate: they differ from every real value anyway.
                exponent = min(exponent * 10 + Int(n[i] - 0x30), 1_000_000_000)
                i += 1
            }
            scale += sign * exponent
        }
        while digits.first == 0x30 { digits.removeFirst() }
        while digits.last == 0x30 { digits.removeLast(); scale += 1 }
        if digits.isEmpty { out.append(0x30); return }
        if negative { out.append(0x2d) }
        out.append(contentsOf: digits)
        if scale != 0 { out.append(0x65); out.append(contentsOf: String(scale).utf8) }
    }
}
