import LCTraceModel

/// Text for HTML, SVG and XML, whatever a trace put in it: the one escaper of every markup
/// output (the HTML report, SVG timelines, JUnit). The markup characters become entities, and
/// every character that XML 1.0 cannot carry even escaped, or that acts without showing, is
/// shown instead: C0 controls (but tab, line feed and carriage return) as their Control
/// Pictures (ESC is ␛), DEL as ␡; C1 controls (U+0080–U+009F, which HTML would even read as
/// Windows-1252 in a character reference), the bidirectional embeddings, overrides, isolates
/// and marks, and U+FFFE and U+FFFF (no XML characters) by their code, as `[U+202E]`. So a
/// class name or message from a device can neither add markup, nor make a file a parser
/// refuses, nor reach a reader as a terminal or bidirectional control.
enum MarkupText {
    /// Where the text goes, which decides the few characters written differently there.
    enum Context: Sendable {
        /// HTML or SVG content, or an attribute value in double quotes: `'` as `&#39;` too (safe
        /// in single quotes), tab and line feed as they are, carriage return as ␍.
        case html
        /// XML content or attribute value alike (JUnit): tab, line feed and carriage return as
        /// character references, which an attribute value keeps (written as they are, a parser
        /// reads them there as spaces) and no parser normalises; `'` as it is (attributes are
        /// in double quotes).
        case xml
    }

    /// `s` as text or a double-quoted attribute value of `context`.
    package static func escape(_ s: String, for context: Context = .html) -> String {
        // Most text needs nothing: one pass to find out.
        if !s.unicodeScalars.contains(where: { needsEscape($0, context) }) { return s }
        var out = ""
        out.reserveCapacity(s.utf8.count + 16)
        for ch in s.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += context == .html ? "&#39;" : "'"
            case "\t", "\n", "\r":
                if context == .xml {
                    out += "&#\(ch.value);"
                } else if ch == "\r" {
                    out += "\u{240D}"
                } else {
                    out.unicodeScalars.append(ch)
                }
            default:
                let v = ch.value
                if v < 0x20 {
                    out.unicodeScalars.append(Unicode.Scalar(0x2400 + v)!)
                } else if v == 0x7F {
                    out += "\u{2421}"
                } else if isShownByName(v) {
                    out += "[U+" + hex(v) + "]"
                } else {
                    out.unicodeScalars.append(ch)
                }
            }
        }
        return out
    }

    private static func needsEscape(_ ch: Unicode.Scalar, _ context: Context) -> Bool {
        switch ch {
        case "&", "<", ">", "\"": return true
        case "'", "\t", "\n": return context == .xml ? ch != "'" : ch == "'"
        default:
            let v = ch.value
            return v < 0x20 || v == 0x7F || isShownByName(v)
        }
    }

    /// C1 controls and the bidirectional formatting characters (embeddings, overrides,
    /// isolates, marks), which change how text around them reads without showing, and
    /// U+FFFE and U+FFFF, which are not XML characters.
    private static func isShownByName(_ v: UInt32) -> Bool {
        (0x80...0x9F).contains(v) || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v)
            || v == 0x200E || v == 0x200F || v == 0x061C || v == 0xFFFE || v == 0xFFFF
    }

    private static func hex(_ v: UInt32) -> String {
        let digits = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
