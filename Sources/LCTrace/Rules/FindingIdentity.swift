/// The identity of a finding (rules.md 1.1, "Finding identity"): a readable key that names the
/// defect, never the occurrence, and a short hash of it. The same defect seen in 40 sessions on
/// 12 devices and 3 builds has one identity, so baselines and build comparisons can count it.
///
/// The key is `rule|app|part|…`: each rule declares its parts where it makes its findings (the
/// host's or parent's class is at hand there). A part that is not known is `?`, and so is the
/// app of a session without a session record and of a file-level finding (LC904: a file is no
/// session's, and may hold the sessions of several apps). A `|` or `%` inside a part is written
/// `%7C` or `%25`, so the parts of a key can always be told apart.
public enum FindingIdentity {
    /// What stands for a part (or an app) that is not known.
    public static let unknown = "?"

    /// The readable key of a finding of `rule` in `app` with the rule's `parts`.
    public static func key(rule: String, app: String?, parts: [String?]) -> String {
        ([rule, app ?? unknown] + parts.map { $0 ?? unknown }).map(escape).joined(separator: "|")
    }

    /// The identity of `key`: the first 8 bytes of its SHA-256, as 16 lowercase hex digits.
    public static func hash(_ key: String) -> String {
        var digest = SHA256()
        digest.update(Array(key.utf8))
        return String(digest.finalizeHex().prefix(16))
    }

    static func escape(_ part: String) -> String {
        guard part.contains("|") || part.contains("%") else { return part }
        return part.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "|", with: "%7C")
    }
}

/// A value of a finding's `detail`, with its JSON type kept: numbers stay numbers in the JSON
/// report and in `findings.detail` (so `json_extract(detail, '$.retained_ms') > 5000` works).
public enum DetailValue: Sendable, Equatable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    case text(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    /// A list of integers (seqs, line numbers).
    case ints([Int64])

    public init(stringLiteral value: String) { self = .text(value) }

    /// Milliseconds from nanoseconds, to a tenth of a millisecond.
    static func ms(_ ns: Int64) -> DetailValue { .double((Double(ns) / 100_000).rounded() / 10) }

    /// The value as JSON.
    public var json: String {
        switch self {
        case .text(let s): return jsonString(s)
        case .int(let n): return String(n)
        case .double(let d): return d.isFinite ? String(d) : "null"
        case .bool(let b): return b ? "true" : "false"
        case .ints(let list): return "[" + list.map(String.init).joined(separator: ",") + "]"
        }
    }

    /// The value as plain text (CSV, text reports).
    public var description: String {
        switch self {
        case .text(let s): return s
        case .ints(let list): return list.map(String.init).joined(separator: ",")
        default: return json
        }
    }

    /// The value as a number, for ordering (`nil` for text and lists).
    public var number: Double? {
        switch self {
        case .int(let n): return Double(n)
        case .double(let d): return d
        default: return nil
        }
    }

    /// A detail dictionary as a JSON object with sorted keys (the stored and printed form).
    public static func encode(_ detail: [String: DetailValue]) -> String {
        "{" + detail.keys.sorted().map { jsonString($0) + ":" + detail[$0]!.json }.joined(separator: ",") + "}"
    }

    /// Reads back what `encode` wrote (any flat JSON object of strings, numbers, booleans and
    /// integer lists); `nil` when the text is not such an object.
    public static func decode(_ text: String) -> [String: DetailValue]? {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { raw -> [String: DetailValue]? in
            var s = JSONScanner(UnsafeRawBufferPointer(raw))
            var out: [String: DetailValue] = [:]
            do {
                s.skipWhitespace()
                try s.expect(0x7b, "'{'")
                s.skipWhitespace()
                if !s.atEnd && s.peek() == 0x7d { return out }
                while true {
                    s.skipWhitespace()
                    guard !s.atEnd, s.peek() == 0x22 else { return nil }
                    let key = try s.scanString()
                    s.skipWhitespace()
                    try s.expect(0x3a, "':'")
                    s.skipWhitespace()
                    guard !s.atEnd else { return nil }
                    let value: DetailValue
                    switch s.peek() {
                    case 0x22:
                        let r = try s.scanString()
                        value = .text(s.string(r.range, escaped: r.escaped))
                    case 0x74, 0x66:
                        let start = s.index
                        _ = try s.scanValue(depth: 0)
                        value = .bool(s.bytes[start] == 0x74)
                    case 0x5b:
                        s.index += 1
                        var list: [Int64] = []
                        s.skipWhitespace()
                        while !s.atEnd && s.peek() != 0x5d {
                            guard let n = s.integer(try s.scanNumber()) else { return nil }
                            list.append(n)
                            s.skipWhitespace()
                            if !s.atEnd && s.peek() == 0x2c { s.index += 1; s.skipWhitespace() }
                        }
                        try s.expect(0x5d, "']'")
                        value = .ints(list)
                    default:
                        let r = try s.scanNumber()
                        if let n = s.integer(r) { value = .int(n) } else if let d = s.double(r) { value = .double(d) } else { return nil }
                    }
                    out[s.string(key.range, escaped: key.escaped)] = value
                    s.skipWhitespace()
                    guard !s.atEnd else { return nil }
                    if s.peek() == 0x2c { s.index += 1; continue }
                    try s.expect(0x7d, "'}'")
                    return out
                }
            } catch {
                return nil
            }
        }
    }
}
