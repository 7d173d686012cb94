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
    var entries: [BaselineEntry]

    init(file: String, entries: [BaselineEntry]) {
        self.file = file
        self.entries = entries
    }

    /// The entries of the identities in `view`, sorted by key, with the notes of `previous`.
    package static func entries(of view: ReportView, keepingNotesOf previous: Baseline? = nil) -> [BaselineEntry] {
        let notes = Dictionary((previous?.entries ?? []).map { ($0.identity, $0.note) }, uniquingKeysWith: { a, _ in a })
        return view.identities.map { g in
            BaselineEntry(identity: g.identity, identityKey: g.identityKey, rule: g.rule.id, severity: g.rule.severity.rawValue,
                          cls: g.cls, occurrences: g.occurrences, sessions: g.sessions, firstBuild: g.firstBuild,
                          lastBuild: g.lastBuild, note: notes[g.identity] ?? "")
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
    /// file is mapped, not copied, and read value by value (`BaselineReader`): memory stays near
    /// the file's size plus its entries, however many there are.
    package static func read(_ path: String) throws -> Baseline {
        guard FileManager.default.fileExists(atPath: path) else { throw BaselineError(file: path, problem: "no such file") }
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) else {
            throw BaselineError(file: path, problem: "cannot be read")
        }
        return try parse(data, file: path)
    }

    package static func parse(_ data: Data, file: String) throws -> Baseline {
        try data.withUnsafeBytes { bytes in
            var reader = BaselineReader(bytes: bytes, file: file)
            return Baseline(file: file, entries: try reader.read())
        }
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

    /// A value as the baseline needs it: strings and integers decoded, anything else named.
    enum Value {
        case string(String)
        case integer(Int64)
        case other(String)

        var string: String? { if case .string(let s) = self { return s } else { return nil } }
        var integer: Int? { if case .integer(let n) = self { return Int(exactly: n) } else { return nil } }
    }

    func fail(_ problem: String) -> BaselineError { BaselineError(file: file, problem: problem) }

    static let shape = "(expected {\"version\":1,\"tool\":…,\"entries\":[…]} as `lctrace baseline` writes)"

    mutating func read() throws -> [BaselineEntry] {
        var version: Value?
        var entries: [BaselineEntry]?
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
                    var list: [BaselineEntry] = []
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
        case .string(let text):
            throw fail("version \(JSONText.quoted(text)) is a string (this lctrace reads baseline version \(Baseline.version), the number)")
        case .integer(let n): throw fail("version \(n) (this lctrace reads baseline version \(Baseline.version))")
        case .other(let what): throw fail("version \(what) (this lctrace reads baseline version \(Baseline.version))")
        }
        guard let entries else { throw fail("no \"entries\" array") }
        return entries
    }

    /// One element of `entries` (`n` counts from 1).
    mutating func entry(_ n: Int) throws -> BaselineEntry {
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
        guard let identity = fields["identity"]?.string else { throw fail("entry \(n) has no \"identity\"") }
        guard let key = fields["identity_key"]?.string else { throw fail("entry \(n) has no \"identity_key\"") }
        let expected = FindingIdentity.hash(key)
        guard identity == expected else {
            throw fail("entry \(n): identity \(identity) is not the hash of its identity_key '\(key)' (expected \(expected))")
        }
        let rule = fields["rule"]?.string ?? key.split(separator: "|").first.map(String.init) ?? ""
        return BaselineEntry(
            identity: identity, identityKey: key, rule: rule,
            severity: fields["severity"]?.string ?? RuleCatalog.info(rule)?.severity.rawValue ?? "",
            cls: fields["class"]?.string, occurrences: fields["occurrences"]?.integer ?? 0,
            sessions: fields["sessions"]?.integer ?? 0, firstBuild: fields["first_build"]?.string,
            lastBuild: fields["last_build"]?.string, note: fields["note"]?.string ?? "")
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
            return .string(scanner.string(range, escaped: escaped))
        }
        let kind = try scanner.scanValue(depth: 1)
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: scanner.bytes[start..<scanner.index]), as: UTF8.self)
        if kind == .number, let n = scanner.integer(start..<scanner.index) { return .integer(n) }
        return .other(kind == .object || kind == .array ? "\(kind)" : text)
    }
}
