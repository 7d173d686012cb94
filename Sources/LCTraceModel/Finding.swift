import LCTraceFormat

/// How bad a finding is. Ordered: info < warning < error.
public enum Severity: String, Comparable, CaseIterable, Sendable {
    case info, warning, error

    package var rank: Int { self == .info ? 0 : self == .warning ? 1 : 2 }
    public static func < (a: Severity, b: Severity) -> Bool { a.rank < b.rank }
}

/// One finding: a rule's verdict on one instance (or session, or file), in the shape of the
/// JSON report (docs/rule-reference.md). `session`, `vc` and `since` name the instance; the
/// `evidence` seqs lead to the raw events (`events_v`); `identity` names the defect across
/// sessions, devices and builds (baselines and comparisons count it).
public struct Finding: Sendable, Equatable {
    public var rule: String
    public var name: String
    public var severity: Severity
    public var session: String?
    public var vc: String?
    public var since: Int64?
    public var cls: String?
    public var t: Int64?
    public var message: String
    public var evidence: [Int64]
    /// "low" in sessions with lost events: the missing events might have explained it.
    public var confidence: String
    /// For file-level findings (LC904): the file's path.
    public var file: String?
    /// Rule-specific values, e.g. how a leaked controller left ("how": "pop"), typed.
    public var detail: [String: DetailValue]
    /// (1.1) The defect's readable key (`FindingIdentity`) and its hash: equal for every
    /// occurrence of the same defect, whatever the session, device or build.
    public var identityKey: String
    public var identity: String
    /// The session's app (bundle id), build and device; nil for file-level findings.
    public var app: String?
    public var build: String?
    public var device: String?

    /// A finding with every field given (the rules' own initializers, in LCTraceRules, derive
    /// the name, severity and identity from the rule).
    package init(rule: String, name: String, severity: Severity, session: String?, vc: String?, since: Int64?,
                 cls: String?, t: Int64?, message: String, evidence: [Int64], confidence: String, file: String?,
                 detail: [String: DetailValue], identityKey: String, identity: String,
                 app: String?, build: String?, device: String?) {
        self.rule = rule; self.name = name; self.severity = severity
        self.session = session; self.vc = vc; self.since = since; self.cls = cls; self.t = t
        self.message = message; self.evidence = evidence; self.confidence = confidence
        self.file = file; self.detail = detail
        self.identityKey = identityKey; self.identity = identity
        self.app = app; self.build = build; self.device = device
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
    package static func ms(_ ns: Int64) -> DetailValue { .double((Double(ns) / 100_000).rounded() / 10) }

    /// The value as JSON.
    package var json: String {
        var json = JSONWriter(capacity: 32)
        json.value(self)
        return json.text
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
    package static func encode(_ detail: [String: DetailValue]) -> String {
        var json = JSONWriter(capacity: 64)
        json.detail(detail)
        return json.text
    }

    /// Reads back what `encode` wrote (any flat JSON object of strings, numbers, booleans and
    /// integer lists); `nil` when the text is not such an object.
    package static func decode(_ text: String) -> [String: DetailValue]? {
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

extension JSONWriter {
    /// A detail value with its JSON type; a number that is not finite is null.
    package mutating func value(_ value: DetailValue) {
        switch value {
        case .text(let s): string(s)
        case .int(let n): int(n)
        case .double(let d): double(d)
        case .bool(let b): bool(b)
        case .ints(let list):
            beginArray()
            for n in list { int(n) }
            endArray()
        }
    }

    /// A detail dictionary as an object with sorted keys: the one form stored and printed, so
    /// that the same detail is the same text everywhere.
    package mutating func detail(_ detail: [String: DetailValue]) {
        beginObject()
        for name in detail.keys.sorted() {
            key(name)
            value(detail[name]!)
        }
        endObject()
    }
}
