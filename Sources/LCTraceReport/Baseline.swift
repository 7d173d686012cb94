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

    /// Reads a baseline file; every problem is a `BaselineError`, never an empty baseline.
    package static func read(_ path: String) throws -> Baseline {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw BaselineError(file: path, problem: FileManager.default.fileExists(atPath: path) ? "cannot be read" : "no such file")
        }
        return try parse(data, file: path)
    }

    package static func parse(_ data: Data, file: String) throws -> Baseline {
        func fail(_ problem: String) -> BaselineError { BaselineError(file: file, problem: problem) }
        guard let object = try? JSONSerialization.jsonObject(with: data), let root = object as? [String: Any] else {
            throw fail("not a JSON object (expected {\"version\":1,\"tool\":…,\"entries\":[…]} as `lctrace baseline` writes)")
        }
        guard let v = root["version"] else { throw fail("no \"version\"") }
        guard let n = v as? NSNumber, "\(n)" == String(version) else {
            throw fail("version \(v) (this lctrace reads baseline version \(version))")
        }
        guard let list = root["entries"] as? [Any] else { throw fail("no \"entries\" array") }
        var entries: [BaselineEntry] = []
        for (i, item) in list.enumerated() {
            let n = i + 1
            guard let e = item as? [String: Any] else { throw fail("entry \(n) is not an object") }
            guard let identity = e["identity"] as? String else { throw fail("entry \(n) has no \"identity\"") }
            guard let key = e["identity_key"] as? String else { throw fail("entry \(n) has no \"identity_key\"") }
            let expected = FindingIdentity.hash(key)
            guard identity == expected else {
                throw fail("entry \(n): identity \(identity) is not the hash of its identity_key '\(key)' (expected \(expected))")
            }
            let rule = (e["rule"] as? String) ?? key.split(separator: "|").first.map(String.init) ?? ""
            entries.append(BaselineEntry(
                identity: identity, identityKey: key, rule: rule,
                severity: (e["severity"] as? String) ?? RuleCatalog.info(rule)?.severity.rawValue ?? "",
                cls: e["class"] as? String, occurrences: (e["occurrences"] as? Int) ?? 0, sessions: (e["sessions"] as? Int) ?? 0,
                firstBuild: e["first_build"] as? String, lastBuild: e["last_build"] as? String,
                note: (e["note"] as? String) ?? ""))
        }
        return Baseline(file: file, entries: entries)
    }
}
