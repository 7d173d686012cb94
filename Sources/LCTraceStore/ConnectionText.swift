import Foundation

/// `--db` values that are meant for a database server rather than a file: told apart before
/// the embedded backend takes them for a path (it claims every value no other backend does),
/// so a mistyped URL or a libpq connection string is refused by what it is, and its password
/// never reaches a message, a hint or a file name.
package enum ConnectionText {
    /// libpq's connection keywords (https://www.postgresql.org/docs/current/libpq-connect.html):
    /// a value made of `keyword=value` words is a connection string, not a path.
    static let keywords: Set<String> = [
        "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "connect_timeout",
        "options", "application_name", "sslmode", "sslcert", "sslkey", "sslpassword", "sslrootcert",
        "service", "target_session_attrs", "client_encoding", "gssencmode", "krbsrvname", "channel_binding",
    ]

    /// A connection parameter whose value is a secret: a password (`password`, `sslpassword`),
    /// a client secret (`oauth_client_secret`) or a SCRAM key (`scram_client_key`).
    package static func isSecretKey(_ key: String) -> Bool {
        let key = key.lowercased()
        return key.contains("password") || key.contains("secret") || key.hasPrefix("scram_")
    }

    /// Why `location` is not a file path, or nil when it may be one: a URL (`scheme://…`, or
    /// `postgres:/`, `postgresql:/` with one slash), credentials (`user:secret@host`), or a
    /// libpq string of `keyword=value` words (two or more, or one naming a secret).
    package static func notAPath(_ location: String) -> String? {
        let trimmed = location.trimmingCharacters(in: .whitespacesAndNewlines)
        let lower = trimmed.lowercased()
        if lower.hasPrefix("postgres:/") || lower.hasPrefix("postgresql:/") || trimmed.contains("://") || holdsCredentials(trimmed) {
            let spaced = trimmed != location ? " (spaces around it)" : ""
            return "a URL lctrace cannot use\(spaced): a PostgreSQL database is postgresql://USER@HOST:PORT/DBNAME (or postgres://…)"
        }
        if pairs(trimmed).filter({ keywords.contains($0.key.lowercased()) }).count >= 2 || hasSecretKey(trimmed) {
            return "a libpq connection string, which lctrace does not take: give the database as postgresql://USER@HOST:PORT/DBNAME?options=…"
        }
        return nil
    }

    /// `user:secret@host` somewhere: a `/`-separated part with a `:` before its last `@`.
    static func holdsCredentials(_ text: String) -> Bool {
        text.split(whereSeparator: { $0 == "/" || $0.isWhitespace }).contains { part in
            part.lastIndex(of: "@").map { part[..<$0].contains(":") } ?? false
        }
    }

    /// A key naming a secret followed by its '=' (`password=`, `sslpassword =`, `password%3D`).
    static func hasSecretKey(_ text: String) -> Bool {
        var i = text.startIndex
        while i < text.endIndex {
            let keyEnd = text[i...].firstIndex { $0 == "=" || $0 == "%" } ?? text.endIndex
            guard keyEnd < text.endIndex else { return false }
            let isEquals = text[keyEnd] == "=" || text[keyEnd...].lowercased().hasPrefix("%3d")
            let key = text[i..<keyEnd].split(whereSeparator: { " \t\n&?;".contains($0) }).last.map(String.init) ?? ""
            if isEquals, isSecretKey(key.trimmingCharacters(in: .whitespaces)) { return true }
            i = text.index(after: keyEnd)
        }
        return false
    }

    /// The `keyword=value` words of a libpq connection string (values quoted with `'`, `\`
    /// escaping), with where each value stands.
    static func pairs(_ text: String) -> [(key: String, value: Range<String.Index>)] {
        var out: [(key: String, value: Range<String.Index>)] = []
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
            let valueStart = i
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
            out.append((key, valueStart..<i))
        }
    }

    /// `text` with whatever may be a secret taken out: the `:secret` of `user:secret@host`
    /// (to the last `@` of its part; the user too when the part has no `//` before it), every
    /// URL parameter whose key, decoded, names a secret, and every such value of a connection
    /// string, replaced by `***`.
    package static func redacted(_ text: String) -> String {
        if text.contains(":/") || holdsCredentials(text) {
            var out = ""
            var query = false
            // Part by part between '/' and white space: a part's credentials end at its last '@'.
            var part = ""
            func flush() {
                if !query, let at = part.lastIndex(of: "@"), let colon = part[..<at].firstIndex(of: ":") {
                    part.removeSubrange(colon..<at)
                }
                out += part
                part = ""
            }
            for c in text {
                if !query && c == "?" { flush(); query = true }
                if !query && (c == "/" || c.isWhitespace) { flush(); out.append(c); continue }
                part.append(c)
            }
            flush()
            guard let question = out.firstIndex(of: "?") else { return out }
            let parameters = out[out.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map { parameter in
                let key = parameter.prefix { $0 != "=" }
                let secret = isSecretKey(String(key).removingPercentEncoding ?? String(key))
                    || isSecretKey(String(key)) || hasSecretKey(String(parameter))
                return secret && key.count < parameter.count ? key + "=***" : String(parameter)
            }
            return out[...question] + parameters.joined(separator: "&")
        }
        var out = text
        for (key, value) in pairs(text).reversed() where isSecretKey(key) {
            out.replaceSubrange(value, with: "***")
        }
        // What `pairs` cannot read (a key in a path: `mydir/password=x`): to the end of its word.
        var searchFrom = out.startIndex
        while let range = out.range(of: "password", options: .caseInsensitive, range: searchFrom..<out.endIndex) {
            var i = range.upperBound
            while i < out.endIndex, out[i] == " " || out[i] == "\t" { i = out.index(after: i) }
            var valueStart: String.Index?
            if i < out.endIndex, out[i] == "=" { valueStart = out.index(after: i) }
            else if out[i...].lowercased().hasPrefix("%3d") { valueStart = out.index(i, offsetBy: 3) }
            guard var start = valueStart else { searchFrom = range.upperBound; continue }
            while start < out.endIndex, out[start] == " " || out[start] == "\t" { start = out.index(after: start) }
            if out[start...].hasPrefix("***") { searchFrom = out.index(start, offsetBy: 3); continue }
            var end = start
            while end < out.endIndex, !out[end].isWhitespace { end = out.index(after: end) }
            out.replaceSubrange(start..<end, with: "***")
            searchFrom = out.index(start, offsetBy: 3)
        }
        return out
    }
}
