import LCTraceModel

/// Text for HTML and SVG, whatever a trace put in it: the markup characters as entities, and
/// every control character shown rather than passed on, so that a class name or message from
/// a device can neither add markup nor reach a reader as a terminal or bidirectional control.
package enum MarkupText {
    /// Content or a quoted attribute value. C0 controls but tab and newline become their
    /// Control Pictures (ESC is ␛), DEL ␡; C1 controls (U+0080–U+009F, which HTML would
    /// even read as Windows-1252 in a character reference) and the bidirectional embeddings,
    /// overrides and isolates become `[U+202E]`.
    package static func escape(_ s: String) -> String {
        // Most text needs nothing: one pass to find out.
        if !s.unicodeScalars.contains(where: needsEscape) { return s }
        var out = ""
        out.reserveCapacity(s.utf8.count + 16)
        for ch in s.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n": out.unicodeScalars.append(ch)
            default:
                let v = ch.value
                if v < 0x20 {
                    out.unicodeScalars.append(Unicode.Scalar(0x2400 + v)!)
                } else if v == 0x7F {
                    out += "\u{2421}"
                } else if isHidden(v) {
                    out += "[U+" + hex(v) + "]"
                } else {
                    out.unicodeScalars.append(ch)
                }
            }
        }
        return out
    }

    private static func needsEscape(_ ch: Unicode.Scalar) -> Bool {
        let v = ch.value
        return v < 0x20 || v == 0x7F || "&<>\"'".unicodeScalars.contains(ch) || isHidden(v)
    }

    /// C1 controls and the bidirectional formatting characters (embeddings, overrides,
    /// isolates, marks), which change how text around them reads without showing.
    private static func isHidden(_ v: UInt32) -> Bool {
        (0x80...0x9F).contains(v) || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v)
            || v == 0x200E || v == 0x200F || v == 0x061C
    }

    private static func hex(_ v: UInt32) -> String {
        let digits = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
