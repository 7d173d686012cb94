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

    /// Why `location` is not a file path, or nil when it may be one: a URL (`scheme://…`, or
    /// `postgres:`/`postgresql:` with one slash), or a libpq `keyword=value` string.
    package static func notAPath(_ location: String) -> String? {
        let trimmed = location.trimmingCharacters(in: .whitespacesAndNewlines)
        let lower = trimmed.lowercased()
        if lower.hasPrefix("postgres:") || lower.hasPrefix("postgresql:") || trimmed.contains("://") {
            let spaced = trimmed != location ? " (spaces around it)" : ""
            return "a URL lctrace cannot use\(spaced): a PostgreSQL database is postgresql://USER@HOST:PORT/DBNAME (or postgres://…)"
        }
        // `keyword=value` first (values may be quoted and hold spaces), or a password anywhere.
        let firstKey = trimmed.prefix { $0 != "=" }.trimmingCharacters(in: .whitespaces).lowercased()
        if (trimmed.contains("=") && keywords.contains(firstKey)) || hasPasswordKey(trimmed) {
            return "a libpq connection string, which lctrace does not take: give the database as postgresql://USER@HOST:PORT/DBNAME?options=…"
        }
        return nil
    }

    /// A key naming a password followed by its '=' (`password=`, `sslpassword =`, `password%3D`).
    static func hasPasswordKey(_ text: String) -> Bool {
        var from = text.startIndex
        while let key = text.range(of: "password", options: .caseInsensitive, range: from..<text.endIndex) {
            let after = text[key.upperBound...].drop { $0 == " " || $0 == "\t" }
            if after.hasPrefix("=") || after.lowercased().hasPrefix("%3d") { return true }
            from = key.upperBound
        }
        return false
    }

    /// `text` with whatever may be a password taken out: the `:secret` of `user:secret@` after
    /// a scheme, and the value of every key naming a password (`password=`, `sslpassword=`,
    /// in a URL's parameters or a connection string) replaced by `***`.
    package static func redacted(_ text: String) -> String {
        var out = text
        if let scheme = out.range(of: ":/") {
            var start = scheme.upperBound
            while start < out.endIndex, out[start] == "/" { start = out.index(after: start) }
            let rest = out[start...]
            if let at = rest.firstIndex(where: { $0 == "@" || $0 == "/" }), rest[at] == "@",
               let colon = rest[..<at].firstIndex(of: ":") {
                out.removeSubrange(colon..<at)
            }
        }
        // A URL's parameters: every one whose key, decoded, names a password (`pass%77ord=`).
        if out.contains(":/"), let question = out.firstIndex(of: "?") {
            let parameters = out[out.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map { parameter in
                let key = parameter.prefix { $0 != "=" }
                let named = (String(key).removingPercentEncoding ?? String(key)).lowercased().contains("password")
                return named && key.count < parameter.count ? key + "=***" : String(parameter)
            }
            out = out[...question] + parameters.joined(separator: "&")
        }
        var searchFrom = out.startIndex
        while let key = out.range(of: "password", options: .caseInsensitive, range: searchFrom..<out.endIndex) {
            // The key goes on to its '=' (percent-encoded keys spell it %3D; spaces may stand around it).
            var valueStart: String.Index?
            var i = key.upperBound
            while i < out.endIndex, !"&?/\n".contains(out[i]) {
                if out[i] == "=" { valueStart = out.index(after: i); break }
                if out[i...].hasPrefix("%3D") || out[i...].hasPrefix("%3d") { valueStart = out.index(i, offsetBy: 3); break }
                i = out.index(after: i)
            }
            guard var value = valueStart else { searchFrom = key.upperBound; continue }
            while value < out.endIndex, out[value] == " " || out[value] == "\t" { value = out.index(after: value) }
            var end = value
            if end < out.endIndex, out[end] == "'" {
                // A quoted value of a connection string: to the closing quote.
                end = out.index(after: end)
                while end < out.endIndex, out[end] != "'" {
                    if out[end] == "\\" { end = out.index(after: end); if end == out.endIndex { break } }
                    end = out.index(after: end)
                }
                if end < out.endIndex { end = out.index(after: end) }
            } else {
                while end < out.endIndex, !" &\t\n".contains(out[end]) { end = out.index(after: end) }
            }
            out.replaceSubrange(value..<end, with: "***")
            searchFrom = out.index(value, offsetBy: 3)
        }
        return out
    }
}
