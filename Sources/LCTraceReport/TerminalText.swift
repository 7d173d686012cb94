import LCTraceStore
import LCTraceModel

/// Text from traces and file names, made safe to show to people. A class name, a session id
/// or a file name may hold control characters and escape sequences (`\e[2J` clears the
/// screen, `\e]0;…\a` sets the window title, others hide or rewrite lines): shown raw they
/// drive the terminal, or whatever later shows the piped text. Every text lctrace prints for
/// people (tables, grouped reports, warnings) goes through `escaped`; JSON escapes them as
/// JSON does, CSV keeps the data as it is.
package enum TerminalText {
    /// `text` with every control character (C0, DEL, C1), line and paragraph separator and
    /// bidirectional override shown as `\u001b`.
    package static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                let hex = String(scalar.value, radix: 16)
                out.append(contentsOf: ("\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex).unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// `escaped(text)`, setting `changed` when it differs from `text` (escaping only ever
    /// lengthens a text, so the byte counts tell).
    package static func escaped(_ text: String, noting changed: inout Bool) -> String {
        let out = escaped(text)
        if out.utf8.count != text.utf8.count { changed = true }
        return out
    }

    /// True for the scalars a terminal may act on rather than show.
    @inline(__always) static func needsEscape(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x00...0x1F, 0x7F...0x9F: return true            // C0, DEL, C1 (0x9B is CSI on its own)
        case 0x2028, 0x2029: return true                      // line and paragraph separators
        case 0x202A...0x202E, 0x2066...0x2069: return true    // bidirectional embeddings, overrides, isolates
        default: return false
        }
    }
}

extension TerminalText {
    /// `text` with every line wider than `width` columns broken at spaces, the rest of the line
    /// indented four more than its start: what a text report shows on a terminal of that
    /// width (a pipe or a file gets the lines whole, for grep). Colour escapes take no column.
    package static func wrapped(_ text: String, width: Int) -> String {
        guard width >= 20 else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + text.utf8.count / 16)
        var first = true
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !first { out += "\n" }
            first = false
            out += wrappedLine(Substring(line), width: width)
        }
        return out
    }

    private static func wrappedLine(_ line: Substring, width: Int) -> String {
        guard visibleWidth(line) > width else { return String(line) }
        let indent = line.prefix { $0 == " " }.count
        let continuation = String(repeating: " ", count: min(indent + 4, width / 2))
        var out = "", rest = line, lead = ""
        while visibleWidth(rest) + lead.count > width {
            // The last space at or before the width (colour escapes take no column).
            var column = lead.count, lastSpace: Substring.Index?, cut = rest.endIndex
            var i = rest.startIndex
            while i < rest.endIndex {
                if rest[i] == "\u{1B}", let end = escapeEnd(rest, from: i) { i = end; continue }
                if column == width { cut = i; break }
                if rest[i] == " " && column > lead.count + 8 { lastSpace = i }
                column += 1
                i = rest.index(after: i)
            }
            let breakAt = lastSpace ?? cut
            out += lead + String(rest[..<breakAt]).replacingOccurrences(of: " +$", with: "", options: .regularExpression) + "\n"
            rest = rest[breakAt...].drop { $0 == " " }
            lead = continuation
        }
        return out + lead + String(rest)
    }

    /// Columns `line` takes on a terminal: its characters but the escape sequences (CSI).
    static func visibleWidth(_ line: Substring) -> Int {
        var n = 0, i = line.startIndex
        while i < line.endIndex {
            if line[i] == "\u{1B}", let end = escapeEnd(line, from: i) { i = end; continue }
            n += 1
            i = line.index(after: i)
        }
        return n
    }

    /// The index after the CSI sequence (`ESC [ … final`) starting at `i`, nil for none.
    private static func escapeEnd(_ s: Substring, from i: Substring.Index) -> Substring.Index? {
        let open = s.index(after: i)
        guard open < s.endIndex, s[open] == "[" else { return nil }
        var j = s.index(after: open)
        while j < s.endIndex {
            if let a = s[j].asciiValue, (0x40...0x7E).contains(a) { return s.index(after: j) }
            j = s.index(after: j)
        }
        return nil
    }
}

package extension ReportData {
    /// The same data with every text that came from a trace or a file name escaped for a
    /// terminal (`TerminalText`): what the grouped text report shows. Identities (hashes) are
    /// kept as they are, so grouping and baseline verdicts do not change. `changed`: whether
    /// any text needed escaping (mostly none does: then the caller keeps what it built from
    /// the data as it is).
    func escapingForTerminal() -> (data: ReportData, changed: Bool) {
        var changed = false
        var copy = self
        copy.sessions = sessions.escapedForTerminal(noting: &changed)
        copy.findings = findings.map { $0.escapedForTerminal(noting: &changed) }
        copy.gapTable = gapTable.escapedForTerminal(noting: &changed)
        copy.className = className.map { TerminalText.escaped($0, noting: &changed) }
        return (copy, changed)
    }
}

package extension Finding {
    /// Its texts from traces and files escaped for a terminal (`TerminalText`), the identity
    /// (a hash) as it is; `changed` set when one needed it.
    func escapedForTerminal(noting changed: inout Bool) -> Finding {
        func x(_ s: String) -> String { TerminalText.escaped(s, noting: &changed) }
        var f = self
        f.session = f.session.map(x); f.vc = f.vc.map(x); f.cls = f.cls.map(x); f.file = f.file.map(x)
        f.app = f.app.map(x); f.build = f.build.map(x); f.device = f.device.map(x)
        f.message = x(f.message)
        f.identityKey = x(f.identityKey)
        f.detail = f.detail.mapValues { value in
            if case .text(let text) = value { return .text(x(text)) }
            return value
        }
        return f
    }
}

package extension ReportOptions {
    /// The options the text report shows: the baseline's entries (they come from a file)
    /// escaped, no source root (it names no source files). `changed` set when that changed any.
    func escapedForTerminal(noting changed: inout Bool) -> ReportOptions {
        var escaped = self
        escaped.sourceRoot = nil
        if sourceRoot != nil { changed = true }
        if let baseline = escaped.baseline {
            let result = baseline.escapedForTerminal()
            escaped.baseline = result.baseline
            if result.changed { changed = true }
        }
        return escaped
    }
}

package extension ReportView {
    /// The same view over `ReportData.escapingForTerminal()`, with the baseline's entries (they
    /// come from a file) escaped too: what the text report shows. A view streamed for the
    /// text report was escaped finding by finding already (`escapedForTerminal` true).
    func escapedForTerminal() -> ReportView {
        if isEscapedForTerminal { return self }
        var changed = false
        let escapedOptions = options.escapedForTerminal(noting: &changed)
        let escaped = data.escapingForTerminal()
        // Nothing to escape (the usual case): this view is already the one to show, and
        // building it again from the data would cost as much as the first time.
        guard changed || escaped.changed else { return self }
        return ReportView(data: escaped.data, options: escapedOptions, tool: tool)
    }
}
