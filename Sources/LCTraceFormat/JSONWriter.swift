/// The bytes of `s` escaped for the inside of a JSON string.
package func jsonEscaped(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(s.utf8.count)
    for b in s.utf8 {
        switch b {
        case 0x22: out += [0x5c, 0x22]
        case 0x5c: out += [0x5c, 0x5c]
        case 0x0a: out += [0x5c, 0x6e]
        case 0x0d: out += [0x5c, 0x72]
        case 0x09: out += [0x5c, 0x74]
        case 0..<0x20:
            let hex = Array("0123456789abcdef".utf8)
            out += [0x5c, 0x75, 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xf)]]
        default: out.append(b)
        }
    }
    return out
}

/// `s` as a JSON string literal.
package func jsonString(_ s: String) -> String {
    "\"" + String(decoding: jsonEscaped(s), as: UTF8.self) + "\""
}
