import Foundation

/// Database locations and messages as outputs may show them: never a secret. A `--db` value
/// meant for a server rather than a file is told apart before the embedded backend takes it
/// for a path (it claims every value no other backend does), so a mistyped URL or a libpq
/// connection string is refused by what it is; and every URL, key and credential that could
/// hold a password is shown without it, however it was typed (a `/` or `@` left unencoded in
/// a password, a parameter after a wrong separator, a secret inside `options`).
package enum ConnectionText {
    /// libpq's connection keywords (https://www.postgresql.org/docs/current/libpq-connect.html):
    /// a value made of `keyword=value` words is a connection string, not a path.
    static let keywords: Set<String> = [
        "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "connect_timeout",
        "options", "application_name", "sslmode", "sslcert", "sslkey", "sslpassword", "sslrootcert",
        "service", "target_session_attrs", "client_encoding", "gssencmode", "krbsrvname", "channel_binding",
    ]

    /// What a key naming a secret holds: `password`, `sslpassword`, `passwd`, `pwd`,
    /// `oauth_client_secret`, `scram_client_key`.
    static let secretWords = ["password", "passwd", "pwd", "secret", "scram"]

    /// A key naming a secret: one ending in `password`, `passwd`, `pwd` or `secret`
    /// (`sslpassword`, `x.password`, `oauth_client_secret`), a SCRAM key (`scram_…`), or an odd
    /// key (`p%61ssword%zz`) holding such a word. Not `password_encryption` or `passfile`.
    package static func isSecretKey(_ key: String) -> Bool {
        let key = key.lowercased()
        if ["password", "passwd", "pwd", "secret"].contains(where: key.hasSuffix) || key.hasPrefix("scram_") { return true }
        let plain = key.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || "_.-".contains($0) }
        return !plain && secretWords.contains { key.contains($0) }
    }

    // MARK: Paths or not

    /// Why `location` is not a file path, or nil when it may be one: a URL (`scheme://…`,
    /// `postgres:/`, `postgresql:/` with one slash, `//user@…`), credentials (`holdsCredentials`),
    /// a libpq string (starting with a keyword: two or more `keyword=value` words, or a secret's
    /// one), or a secret's key and value in a value of no folder.
    package static func notAPath(_ location: String) -> String? {
        let trimmed = location.trimmingCharacters(in: .whitespacesAndNewlines)
        let lower = trimmed.lowercased()
        if lower.hasPrefix("postgres:/") || lower.hasPrefix("postgresql:/") || trimmed.contains("://") || holdsCredentials(trimmed)
            || (trimmed.hasPrefix("//") && trimmed.contains("@")) {
            let spaced = trimmed != location ? " (with spaces around it)" : ""
            return "a URL lctrace cannot use\(spaced): a PostgreSQL database is postgresql://USER@HOST:PORT/DBNAME (or postgres://…)"
        }
        // A connection string starts with a libpq keyword (a path may hold `password=old/`).
        let keys = pairKeys(trimmed)
        let startsAsConnectionString = keys.first.map { first in
            first.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
                && (keywords.contains(first.lowercased()) || isSecretKey(first))
                && (keys.count >= 2 || isSecretKey(first))
        } ?? false
        // Or a secret's key and value in a value of no folder (`Server=h;Uid=u;Pwd=…`, `password:…`).
        if startsAsConnectionString || (!trimmed.contains("/") && !secretValueRanges(in: bestEffortDecoded(trimmed)).isEmpty) {
            return "a libpq connection string, which lctrace does not take: give the database as postgresql://USER@HOST:PORT/DBNAME?options=…"
        }
        return nil
    }

    /// `user:secret@host` without a scheme: a `:` before an `@` and no `/` before it (a path
    /// `runs/10:30@ci/lctrace.db` is a path).
    static func holdsCredentials(_ text: String) -> Bool {
        guard let at = text.lastIndex(of: "@") else { return false }
        let before = text[..<at]
        return before.contains(":") && !before.contains("/")
    }

    // MARK: The secrets a text holds

    /// `%XX` escapes decoded where they are valid, the rest as written (`p%61ssword%zz`).
    static func bestEffortDecoded<S: StringProtocol>(_ text: S) -> String {
        var bytes: [UInt8] = []
        let raw = Array(text.utf8)
        var i = 0
        func hex(_ b: UInt8) -> UInt8? {
            switch b {
            case 0x30...0x39: return b - 0x30
            case 0x41...0x46: return b - 0x41 + 10
            case 0x61...0x66: return b - 0x61 + 10
            default: return nil
            }
        }
        while i < raw.count {
            if raw[i] == 0x25, i + 2 < raw.count, let h = hex(raw[i + 1]), let l = hex(raw[i + 2]) {
                bytes.append(h << 4 | l)
                i += 3
            } else {
                bytes.append(raw[i])
                i += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Where the values of secret keys stand in `text`: a key naming a secret, then `=` or `:`
    /// (spaces around it), then a value quoted with `'` or running to white space, `&`, `;`,
    /// `,` or a quote. A connection string's `\` escapes a character of the value.
    static func secretValueRanges(in text: String, colons: Bool = true) -> [Range<String.Index>] {
        let lower = text.lowercased()
        // Lower-casing that changes the count of characters (rare scripts): the text as it is.
        let f = Array(lower.count == text.count ? lower : text), t = Array(text)
        let starts = text.indices.map { $0 } + [text.endIndex]
        func isKeyCharacter(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" || c == "." || c == "-" }
        var out: [Range<String.Index>] = []
        var i = 0
        while i < f.count {
            guard let word = secretWords.first(where: { w in i + w.count <= f.count && String(f[i..<i + w.count]) == w }) else { i += 1; continue }
            // The whole key around the word: letters, digits, `_`, `.`, `-`.
            var keyStart = i
            while keyStart > 0, isKeyCharacter(f[keyStart - 1]) { keyStart -= 1 }
            var j = i + word.count
            while j < f.count, isKeyCharacter(f[j]) { j += 1 }
            var k = j
            while k < f.count, f[k] == " " || f[k] == "\t" { k += 1 }
            // `:` only after a bare `password`, `passwd` or `pwd` starting a word (a host named
            // secret-db:5432 is a host), and when `colons` (a location; not a message).
            let key = String(f[keyStart..<j])
            let wordStart = keyStart == 0 || f[keyStart - 1].isWhitespace
            guard isSecretKey(key), k < f.count,
                  f[k] == "=" || (colons && wordStart && f[k] == ":" && ["password", "passwd", "pwd"].contains(key)) else { i = j; continue }
            k += 1
            while k < f.count, f[k] == " " || f[k] == "\t" { k += 1 }
            let start = k
            if k < f.count, t[k] == "'" {
                k += 1
                while k < f.count, t[k] != "'" { if t[k] == "\\" { k += 1 }; k += 1 }
                k = min(k + 1, f.count)
            } else {
                while k < f.count, !t[k].isWhitespace, !"&;,'\"".contains(t[k]) { if t[k] == "\\" { k += 1 }; k += 1 }
                k = min(k, f.count)
            }
            if k > start { out.append(starts[start]..<starts[k]) }
            i = max(k, j)
        }
        return out
    }

    /// The secret values of `text` as written: those of secret keys (in the text and in its
    /// `%`-decoded form) and the password of credentials, with its parts.
    package static func secretValues(in text: String) -> [String] {
        var found: [String] = []
        let decoded = bestEffortDecoded(text)
        for t in [text, decoded] {
            found += secretValueRanges(in: t).map { String(t[$0]).trimmingCharacters(in: CharacterSet(charactersIn: "'")) }
        }
        var parts: [String] = []
        if let password = credentialsPassword(in: text) {
            found.append(password)
            // Its parts too, which libpq quotes when it reads them as a host or a port (3
            // characters at least: shorter ones would scrub common words).
            parts = password.split(whereSeparator: { "/@:? ".contains($0) }).map(String.init).filter { $0.count >= 3 }
        }
        found += found.map { bestEffortDecoded($0) }
        return Array(Set((found + parts).filter { !$0.isEmpty && $0 != "***" }))
    }

    /// The password of `user:password@host` in `text`: after the first `:` of the user
    /// information (after `//`, else after the scheme's `:`, else from the start) up to the
    /// last `@` before any `?`.
    static func credentialsPassword(in text: String) -> String? {
        guard let span = credentialsSpan(in: text) else { return nil }
        return String(text[span.password])
    }

    /// Where the user information of `text` stands, and its password within it.
    static func credentialsSpan(in text: String) -> (user: Range<String.Index>, password: Range<String.Index>)? {
        var start = text.startIndex
        if let slashes = text.range(of: "//") { start = slashes.upperBound }
        else if let scheme = text.range(of: ":/") { start = text[scheme.upperBound...].firstIndex { $0 != "/" } ?? text.endIndex }
        else if let scheme = text.firstIndex(of: ":"), text[..<scheme].lowercased().hasPrefix("postgres") { start = text.index(after: scheme) }
        // The user information ends at an '@' before the first '/', as libpq ends it.
        if let slash = text[start...].firstIndex(of: "/"), let at = text[start..<slash].lastIndex(of: "@") {
            guard let colon = text[start..<at].firstIndex(of: ":") else { return nil }
            return (start..<colon, text.index(after: colon)..<at)
        }
        var end = text[start...].firstIndex(of: "?") ?? text.endIndex
        // A `?` inside the password (`u:pa?ss@host`): the part before it holds a `:` but no `@`
        // and no `/`, and an `@` follows. (A URL with no user, a port, no database and an `@`
        // in a parameter is then shown cut short: never a password.)
        if end < text.endIndex, !text[start..<end].contains("@"), !text[start..<end].contains("/"),
           text[start..<end].contains(":"), let at = text[end...].firstIndex(of: "@") {
            end = text.index(after: at)
        }
        guard let at = text[start..<end].lastIndex(of: "@"), let colon = text[start..<at].firstIndex(of: ":") else { return nil }
        // A '/' before the '@' (none before it held one): a password with a '/', unless the ':'
        // is a port's (`host:5432/team@mobile` names a database).
        if let slash = text[colon..<at].firstIndex(of: "/"),
           text[text.index(after: colon)..<slash].allSatisfy(\.isNumber) { return nil }
        return (start..<colon, text.index(after: colon)..<at)
    }

    // MARK: Shown

    /// What stands for a value meant for a server that lctrace refuses: not shown at all.
    package static let hidden = "URL"

    /// `location` (a URL the PostgreSQL backend takes, or any `--db` value) as outputs show
    /// it: the user's password taken out (`user:secret@` → `user@`, to the last `@` before the
    /// parameters), every parameter whose key names a secret dropped, every other whose value
    /// holds a secret (inside `options`) or credentials shown as `***`, and any other secret
    /// key's value (after a wrong separator) as `***`. A follow-up command pasted as printed
    /// still runs: libpq takes the password from PGPASSWORD, ~/.pgpass or a passfile.
    package static func shownLocation(_ location: String) -> String {
        var text = location
        if let span = credentialsSpan(in: text) {
            // The colon goes with the password; an empty user takes its '@' along.
            let colon = text.index(before: span.password.lowerBound)
            let at = span.password.upperBound
            text.replaceSubrange(colon...at, with: span.user.isEmpty ? "" : "@")
        }
        var head = text, query: String?
        if text.contains("://") || text.lowercased().hasPrefix("postgres"), let question = text.firstIndex(of: "?") {
            // (After the credentials went: a `?` of the password went with them.)
            head = String(text[..<question])
            query = String(text[text.index(after: question)...])
        }
        head = maskingSecretValues(head)
        guard let query else { return head }
        let kept = query.split(separator: "&", omittingEmptySubsequences: false).compactMap { parameter -> String? in
            let key = parameter.prefix { $0 != "=" }
            if isSecretKey(bestEffortDecoded(key)) { return nil }
            let value = key.count < parameter.count ? parameter[parameter.index(after: key.endIndex)...] : ""
            let decoded = bestEffortDecoded(value)
            // A secret setting in `options` (`-cx.password=…`), a URL with credentials as a value.
            if !secretValueRanges(in: decoded, colons: false).isEmpty
                || (decoded.contains("://") && credentialsSpan(in: decoded) != nil) { return key + "=***" }
            return String(parameter)
        }
        return kept.isEmpty ? head : head + "?" + kept.joined(separator: "&")
    }

    /// A file path as outputs show it: a secret key's value in it (`keys/password=…/x.db`, a
    /// folder someone named so) as `***`, to the end of its part.
    package static func shownPath(_ path: String) -> String {
        var out = path
        for range in secretValueRanges(in: path, colons: false).reversed() {
            let end = path[range].firstIndex(of: "/") ?? range.upperBound
            out.replaceSubrange(range.lowerBound..<end, with: "***")
        }
        return out
    }

    /// `text` with the value of every secret key (`password=…`, and `pwd: …` when `colons`)
    /// as `***`.
    static func maskingSecretValues(_ text: String, colons: Bool = true) -> String {
        var out = text
        for range in secretValueRanges(in: text, colons: colons).reversed() { out.replaceSubrange(range, with: "***") }
        return out
    }

    /// `message` with every secret of `location` as `***` (libpq and the server quote what
    /// they cannot use: a database name, a host, a token they cannot decode).
    package static func scrubbed(_ message: String, of location: String) -> String {
        // A password that is also the user, host or database (`postgres:postgres@…/postgres`)
        // hides nothing the shown URL does not say: masking it would hide the server's words.
        let shown = shownLocation(location)
        return secretValues(in: location).filter { !shown.contains($0) }.sorted { $0.count > $1.count }
            .reduce(message) { $0.replacingOccurrences(of: $1, with: "***") }
    }

    /// A line of an error or a hint as the command line prints it: every URL in it shown
    /// without secrets (`shownLocation`), and every `key=value` secret's value `***`: a value
    /// typed where another was expected (`--output postgresql://u:pw@h/db`) is echoed by
    /// messages that know nothing of databases. File names, sessions and classes are left as
    /// given (`10:30@ci.json`, `Login:password:`).
    package static func scrubbedLine(_ line: String) -> String {
        guard line.contains("@") || secretWords.contains(where: line.lowercased().contains) else { return line }
        var out = ""
        var word = ""
        // Word by word (a URL is one), then the secret keys of the whole line.
        func flush() {
            // Only what is a URL (a file name `10:30@ci.json` is a file name).
            out += word.contains("://") || word.lowercased().hasPrefix("postgres") ? shownLocation(word) : word
            word = ""
        }
        for c in line {
            if c.isWhitespace || c == "'" || c == "\"" || c == "`" { flush(); out.append(c) } else { word.append(c) }
        }
        flush()
        return maskingSecretValues(out, colons: false)
    }

    // MARK: libpq connection strings

    /// The keys of the `keyword=value` words a libpq connection string starts with (values
    /// quoted with `'`, `\` escaping, are stepped over).
    static func pairKeys(_ text: String) -> [String] {
        var out: [String] = []
        var i = text.startIndex
        func skipSpace() { while i < text.endIndex, text[i].isWhitespace { i = text.index(after: i) } }
        while true {
            skipSpace()
            guard i < text.endIndex else { return out }
            let keyStart = i
            while i < text.endIndex, text[i] != "=", !text[i].isWhitespace { i = text.index(after: i) }
            let key = String(text[keyStart..<i])
            skipSpace()
            guard i < text.endIndex, text[i] == "=" else { return out }
            i = text.index(after: i)
            skipSpace()
            if i < text.endIndex, text[i] == "'" {
                i = text.index(after: i)
                while i < text.endIndex, text[i] != "'" {
                    if text[i] == "\\" { i = text.index(after: i); if i == text.endIndex { break } }
                    i = text.index(after: i)
                }
                if i < text.endIndex { i = text.index(after: i) }
            } else {
                while i < text.endIndex, !text[i].isWhitespace {
                    if text[i] == "\\" { i = text.index(after: i); if i == text.endIndex { break } }
                    i = text.index(after: i)
                }
            }
            out.append(key)
        }
    }
}
