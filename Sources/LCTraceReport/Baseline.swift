import Foundation
import LCTraceFormat
import LCTraceModel
import LCTraceRules

/// One known defect in a baseline file.
package struct BaselineEntry: Sendable, Equatable {
    package var identity: String
    package var identityKey: String
    package var rule: String
    package var severity: String
    package var cls: String?
    package var occurrences: Int
    package var sessions: Int
    var firstBuild: String?
    var lastBuild: String?
    /// For people: why it is accepted, a ticket. lctrace keeps it when it rewrites the file.
    package var note: String

    /// The entry as one object (a line of the file, an element of the JSON report's `fixed`),
    /// keys in the documented order.
    package func write(to json: inout JSONWriter) {
        json.beginObject()
        json.key("identity"); json.string(identity)
        json.key("identity_key"); json.string(identityKey)
        json.key("rule"); json.string(rule)
        json.key("severity"); json.string(severity)
        json.key("class"); json.string(cls)
        json.key("occurrences"); json.int(occurrences)
        json.key("sessions"); json.int(sessions)
        json.key("first_build"); json.string(firstBuild)
        json.key("last_build"); json.string(lastBuild)
        json.key("note"); json.string(note)
        json.endObject()
    }
}

/// Why a baseline file cannot be used (exit 64): it names the file and what is wrong.
package struct BaselineError: Error, CustomStringConvertible {
    package var file: String
    package var problem: String
    package var description: String { "baseline \(file): \(problem)" }
}

/// A baseline: the identities of the findings a team has accepted, in a file meant to be
/// committed and reviewed (`lctrace baseline -o FILE`). `report --baseline FILE` marks every
/// finding new or known and gates on the new ones only.
///
/// The file is `{"version":1,"tool":"lctrace 0.3.0","entries":[…]}`, one entry per identity
/// and per line, sorted by `identity_key`, with no timestamps: the same database and
/// filters give a byte-identical file, and a diff shows exactly what changed.
package struct Baseline: Sendable {
    package static let version = 1
    package var file: String
    /// The file's bytes and where each entry's values are in them.
    fileprivate let storage: BaselineStorage
    /// Whether the text of class, identity_key and rule is escaped as entries are read (the
    /// text report's terminal escaping, `escapedForTerminal`).
    private var escapesForTerminal = false

    fileprivate init(file: String, storage: BaselineStorage) {
        self.file = file
        self.storage = storage
    }

    /// Every entry, in the file's order, each built when it is read.
    package var entries: BaselineEntries { BaselineEntries(baseline: self, positions: nil) }

    /// The entries for which `isIncluded` holds; only their positions are kept.
    package func entries(where isIncluded: (BaselineEntry) -> Bool) -> BaselineEntries {
        let positions = (0..<storage.records.count).filter { isIncluded(entry(at: $0)) }.map { Int32($0) }
        return BaselineEntries(baseline: self, positions: positions)
    }

    /// True when the file has an entry of `identity`.
    package func contains(identity: String) -> Bool { storage.position(of: identity) != nil }

    /// The note of `identity`'s entry (the first one, should the file repeat it).
    package func note(ofIdentity identity: String) -> String? {
        storage.position(of: identity).map { storage.text(storage.records[$0].note) ?? "" }
    }

    /// Entry `i` of the file.
    package func entry(at i: Int) -> BaselineEntry {
        let r = storage.records[i]
        let key = storage.text(r.identityKey) ?? ""
        let rule = storage.text(r.rule) ?? key.split(separator: "|").first.map(String.init) ?? ""
        var entry = BaselineEntry(
            identity: BaselineStorage.hex(r.identity), identityKey: key, rule: rule,
            severity: storage.text(r.severity) ?? RuleCatalog.info(rule)?.severity.rawValue ?? "",
            cls: storage.text(r.cls), occurrences: r.occurrences, sessions: r.sessions,
            firstBuild: storage.text(r.firstBuild), lastBuild: storage.text(r.lastBuild), note: storage.text(r.note) ?? "")
        if escapesForTerminal {
            var changed = false
            Self.escapeForTerminal(&entry, noting: &changed)
        }
        return entry
    }

    /// Escapes the texts of `entry` that the text report shows (class, identity_key, rule).
    private static func escapeForTerminal(_ entry: inout BaselineEntry, noting changed: inout Bool) {
        entry.cls = entry.cls.map { TerminalText.escaped($0, noting: &changed) }
        entry.identityKey = TerminalText.escaped(entry.identityKey, noting: &changed)
        entry.rule = TerminalText.escaped(entry.rule, noting: &changed)
    }

    /// This baseline as the text report shows it, and whether any entry's text changed.
    package func escapedForTerminal() -> (baseline: Baseline, changed: Bool) {
        var changed = false
        var copy = self
        copy.file = TerminalText.escaped(file, noting: &changed)
        for i in 0..<storage.records.count where !changed {
            var e = entry(at: i)
            Self.escapeForTerminal(&e, noting: &changed)
        }
        copy.escapesForTerminal = changed
        return (copy, changed)
    }

    /// The entries of the identities in `view`, sorted by key, with the notes of `previous`.
    package static func entries(of view: ReportView, keepingNotesOf previous: Baseline? = nil) -> [BaselineEntry] {
        view.identities.map { g in
            BaselineEntry(identity: g.identity, identityKey: g.identityKey, rule: g.rule.id, severity: g.rule.severity.rawValue,
                          cls: g.cls, occurrences: g.occurrences, sessions: g.sessions, firstBuild: g.firstBuild,
                          lastBuild: g.lastBuild, note: previous?.note(ofIdentity: g.identity) ?? "")
        }.sorted { ($0.identityKey, $0.identity) < ($1.identityKey, $1.identity) }
    }

    /// The file's text.
    package static func render(_ entries: [BaselineEntry], tool: String = ToolInfo.name) -> String {
        var json = JSONWriter(capacity: 256 + entries.count * 256)
        json.beginObject()
        json.key("version"); json.int(version)
        json.key("tool"); json.string(tool)
        json.key("entries")
        json.beginArray()
        for entry in entries {
            json.layout("\n  ")
            entry.write(to: &json)
        }
        json.endArray(layout: "\n")
        json.endObject()
        json.raw("\n")
        return json.text
    }

    /// Reads a baseline file; every problem is a `BaselineError`, never an empty baseline. The
    /// file is mapped, not copied, and read value by value (`BaselineReader`); what is kept per
    /// entry is where its values are in the file (about 100 bytes), so memory stays near the
    /// file's size however many entries it has.
    package static func read(_ path: String) throws -> Baseline {
        guard FileManager.default.fileExists(atPath: path) else { throw BaselineError(file: path, problem: "no such file") }
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) else {
            throw BaselineError(file: path, problem: "cannot be read")
        }
        return try parse(data, file: path)
    }

    package static func parse(_ data: Data, file: String) throws -> Baseline {
        guard data.count < Int(UInt32.max >> 1) else {
            throw BaselineError(file: file, problem: "larger than 2 GB (\(data.count) bytes): not a baseline lctrace wrote")
        }
        let records = try data.withUnsafeBytes { bytes in
            var reader = BaselineReader(bytes: bytes, file: file)
            return try reader.read()
        }
        return Baseline(file: file, storage: BaselineStorage(data: data, records: records))
    }
}

/// Entries of a baseline, built one at a time as they are read: `report --baseline` keeps the
/// positions of the entries it shows, not copies of them.
package struct BaselineEntries: RandomAccessCollection, Sendable {
    let baseline: Baseline
    /// Positions in the file; nil: every entry.
    let positions: [Int32]?

    package var startIndex: Int { 0 }
    package var endIndex: Int { positions?.count ?? baseline.storage.records.count }
    package subscript(i: Int) -> BaselineEntry { baseline.entry(at: positions.map { Int($0[i]) } ?? i) }

    /// No entries (a view without a baseline).
    package static let none = BaselineEntries(baseline: Baseline(file: "", storage: BaselineStorage(data: Data(), records: [])),
                                              positions: [])
}

/// Where the values of one entry are in the file: a string value as its byte range (the
/// high bit of the count marks escapes to decode), `absent` for a missing or non-string one.
struct BaselineRecord {
    struct Text {
        var start: UInt32
        var count: UInt32
        static let absent = Text(start: 0, count: UInt32.max)
        static let escapedBit: UInt32 = 1 << 31
    }
    /// The 16 hex digits of the identity, as a number.
    var identity: UInt64
    var identityKey = Text.absent, rule = Text.absent, severity = Text.absent, cls = Text.absent
    var firstBuild = Text.absent, lastBuild = Text.absent, note = Text.absent
    var occurrences = 0, sessions = 0
}

/// A baseline's mapped bytes, its records and an index by identity.
final class BaselineStorage: Sendable {
    let data: Data
    let records: [BaselineRecord]
    /// (identity, position), sorted: a lookup is a binary search, 16 bytes an entry.
    private let byIdentity: [(identity: UInt64, position: Int32)]

    init(data: Data, records: [BaselineRecord]) {
        self.data = data
        self.records = records
        byIdentity = records.enumerated().map { ($1.identity, Int32($0)) }.sorted { ($0.identity, $0.position) < ($1.identity, $1.position) }
    }

    /// The text of a value, nil when it is absent.
    func text(_ t: BaselineRecord.Text) -> String? {
        guard t.count != BaselineRecord.Text.absent.count else { return nil }
        let escaped = t.count & BaselineRecord.Text.escapedBit != 0
        let count = Int(t.count & ~BaselineRecord.Text.escapedBit)
        return data.withUnsafeBytes { JSONScanner($0).string(Int(t.start)..<Int(t.start) + count, escaped: escaped) }
    }

    /// The position of the first entry of `identity`, if the file has one.
    func position(of identity: String) -> Int? {
        guard let id = Self.number(identity) else { return nil }
        var low = 0, high = byIdentity.count
        while low < high {
            let mid = (low + high) / 2
            if byIdentity[mid].identity < id { low = mid + 1 } else { high = mid }
        }
        return low < byIdentity.count && byIdentity[low].identity == id ? Int(byIdentity[low].position) : nil
    }

    /// 16 lowercase hex digits as a number; nil for anything else.
    static func number(_ hex: String) -> UInt64? {
        guard hex.utf8.count == 16, hex.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        return UInt64(hex, radix: 16)
    }

    static func hex(_ n: UInt64) -> String {
        let digits = String(n, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// The baseline file read with the trace format's scanner, value by value: no tree of
/// Foundation objects (a 100 MB file took 1.2 GB through JSONSerialization). Any JSON layout is
/// accepted (a reformatted file reads the same); unknown keys are skipped.
private struct BaselineReader {
    var scanner: JSONScanner
    let file: String

    init(bytes: UnsafeRawBufferPointer, file: String) {
        scanner = JSONScanner(bytes)
        self.file = file
    }

    /// A value as the baseline needs it: where a string is, an integer decoded, anything else
    /// named.
    enum Value {
        case string(Range<Int>, escaped: Bool)
        case integer(Int64)
        case other(String)

        var integer: Int? { if case .integer(let n) = self { return Int(exactly: n) } else { return nil } }
        var text: BaselineRecord.Text {
            guard case .string(let range, let escaped) = self else { return .absent }
            return BaselineRecord.Text(start: UInt32(range.lowerBound),
                                       count: UInt32(range.count) | (escaped ? BaselineRecord.Text.escapedBit : 0))
        }
    }

    /// The decoded text of a string value, nil for any other.
    func string(_ value: Value?) -> String? {
        guard case .string(let range, let escaped)? = value else { return nil }
        return scanner.string(range, escaped: escaped)
    }

    func fail(_ problem: String) -> BaselineError { BaselineError(file: file, problem: problem) }

    static let shape = "(expected {\"version\":1,\"tool\":…,\"entries\":[…]} as `lctrace baseline` writes)"

    mutating func read() throws -> [BaselineRecord] {
        var version: Value?
        var entries: [BaselineRecord]?
        do {
            scanner.skipWhitespace()
            guard !scanner.atEnd, scanner.peek() == 0x7b else { throw fail("not a JSON object \(Self.shape)") }
            var more = try beginObject()
            while more {
                switch try key() {
                case "version": version = try value()
                case "entries":
                    scanner.skipWhitespace()
                    guard !scanner.atEnd, scanner.peek() == 0x5b else { _ = try value(); entries = nil; break }
                    var list: [BaselineRecord] = []
                    var another = try beginArray()
                    while another {
                        list.append(try entry(list.count + 1))
                        another = try endOfElement()
                    }
                    entries = list
                default: _ = try value()
                }
                more = try endOfMember()
            }
            scanner.skipWhitespace()
            guard scanner.atEnd else { throw scanner.fail("expected the end of the file after the object") }
        } catch let failure as JSONScanner.Failure {
            throw fail("not a JSON object \(Self.shape): \(failure.message) at byte \(failure.offset)")
        }
        switch version {
        case nil: throw fail("no \"version\"")
        case .integer(let n) where n == Int64(Baseline.version): break
        case .string:
            let text = string(version) ?? ""
            throw fail("version \(JSONText.quoted(text)) is a string (this lctrace reads baseline version \(Baseline.version), the number)")
        case .integer(let n): throw fail("version \(n) (this lctrace reads baseline version \(Baseline.version))")
        case .other(let what): throw fail("version \(what) (this lctrace reads baseline version \(Baseline.version))")
        }
        guard let entries else { throw fail("no \"entries\" array") }
        return entries
    }

    /// One element of `entries` (`n` counts from 1).
    mutating func entry(_ n: Int) throws -> BaselineRecord {
        scanner.skipWhitespace()
        guard !scanner.atEnd, scanner.peek() == 0x7b else {
            _ = try value()
            throw fail("entry \(n) is not an object")
        }
        var fields: [String: Value] = [:]
        var more = try beginObject()
        while more {
            let name = try key()
            fields[name] = try value()
            more = try endOfMember()
        }
        guard let identity = string(fields["identity"]) else { throw fail("entry \(n) has no \"identity\"") }
        guard let key = string(fields["identity_key"]) else { throw fail("entry \(n) has no \"identity_key\"") }
        let expected = FindingIdentity.hash(key)
        guard identity == expected, let number = BaselineStorage.number(identity) else {
            throw fail("entry \(n): identity \(identity) is not the hash of its identity_key '\(key)' (expected \(expected))")
        }
        var record = BaselineRecord(identity: number)
        record.identityKey = fields["identity_key"]!.text
        record.rule = fields["rule"]?.text ?? .absent
        record.severity = fields["severity"]?.text ?? .absent
        record.cls = fields["class"]?.text ?? .absent
        record.firstBuild = fields["first_build"]?.text ?? .absent
        record.lastBuild = fields["last_build"]?.text ?? .absent
        record.note = fields["note"]?.text ?? .absent
        record.occurrences = fields["occurrences"]?.integer ?? 0
        record.sessions = fields["sessions"]?.integer ?? 0
        return record
    }

    /// Enters the object at the scanner; false when it is empty (and passed).
    mutating func beginObject() throws -> Bool { try begin(0x7b, "'{'", close: 0x7d) }

    /// Enters the array at the scanner; false when it is empty (and passed).
    mutating func beginArray() throws -> Bool { try begin(0x5b, "'['", close: 0x5d) }

    private mutating func begin(_ open: UInt8, _ what: String, close: UInt8) throws -> Bool {
        try scanner.expect(open, what)
        scanner.skipWhitespace()
        if !scanner.atEnd, scanner.peek() == close { scanner.index += 1; return false }
        return true
    }

    /// A member's key and its colon; the value comes next.
    mutating func key() throws -> String {
        scanner.skipWhitespace()
        guard !scanner.atEnd, scanner.peek() == 0x22 else { throw scanner.fail("expected a key string") }
        let (range, escaped) = try scanner.scanString()
        try scanner.expect(0x3a, "':'")
        return scanner.string(range, escaped: escaped)
    }

    /// After a member's value: true at a comma (another member follows), false at the `}`.
    mutating func endOfMember() throws -> Bool { try end(0x7d, "',' or '}'") }

    /// After an element: true at a comma (another element follows), false at the `]`.
    mutating func endOfElement() throws -> Bool { try end(0x5d, "',' or ']'") }

    private mutating func end(_ close: UInt8, _ what: String) throws -> Bool {
        scanner.skipWhitespace()
        if !scanner.atEnd, scanner.peek() == 0x2c { scanner.index += 1; return true }
        try scanner.expect(close, what)
        return false
    }

    /// The value at the scanner, read whole (nested values are validated and skipped).
    mutating func value() throws -> Value {
        scanner.skipWhitespace()
        let start = scanner.index
        if !scanner.atEnd, scanner.peek() == 0x22 {
            let (range, escaped) = try scanner.scanString()
            return .string(range, escaped: escaped)
        }
        let kind = try scanner.scanValue(depth: 1)
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: scanner.bytes[start..<scanner.index]), as: UTF8.self)
        if kind == .number, let n = scanner.integer(start..<scanner.index) { return .integer(n) }
        return .other(kind == .object || kind == .array ? "\(kind)" : text)
    }
}
