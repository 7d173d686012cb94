import XCTest
@testable import LCTraceFormat
@testable import LCTraceModel
@testable import LCTraceRules
@testable import LCTraceIngest
@testable import LCTraceStore
@testable import LCTraceSQLite
@testable import LCTracePostgreSQL
@testable import LCTraceAnalysis
@testable import LCTraceReport
@testable import LCTrace

/// `lctrace export` against the Trace Event Format's rules and what Perfetto's importer does
/// with them: valid JSON, metadata naming every process and thread, every `b` closed by an
/// `e` of the same id, category and name, `ts` in order on every track, async ids scoped to
/// their process (`id2.local`: a global id lands in "Global Legacy Events"), thread ids owned
/// by one process (Perfetto reads a tid met in another process as a new thread),
/// flows starting and ending on a slice they bind to. PerfettoUITests loads the export in
/// Perfetto's own UI and asks it where the tracks went.
final class ChromeTraceTests: SampleDatabaseTestCase {

    typealias Event = [String: Any]

    /// What breaks the rules in `json`, as readable lines (empty: none).
    static func violations(_ json: String) throws -> [String] {
        guard let doc = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let events = doc["traceEvents"] as? [Event] else { return ["not an object with traceEvents"] }
        var out: [String] = []
        var named = Set<String>(), lastTs: [String: Double] = [:], open: [String: [String]] = [:]
        var slices: [String: [(Double, Double)]] = [:], flows: [String: [Event]] = [:]
        var bound = Set<String>(), pendingEnds: [String: [String]] = [:], threadOwner: [Int: Int] = [:]
        for e in events where e["ph"] as? String == "M" {
            let name = e["name"] as? String ?? "", pid = e["pid"] as? Int ?? -1
            guard ((e["args"] as? [String: Any])?.isEmpty == false) else { out.append("metadata without args: \(e)"); continue }
            if name == "process_name" { named.insert("p\(pid)") }
            if name == "thread_name", let tid = e["tid"] as? Int { named.insert("t\(pid).\(tid)") }
        }
        for e in events {
            guard let ph = e["ph"] as? String, let pid = e["pid"] as? Int else { out.append("no ph or pid: \(e)"); continue }
            let tid = e["tid"] as? Int
            if ph == "M" { continue }
            guard let ts = e["ts"] as? Double, let tid, let cat = e["cat"] as? String, let name = e["name"] as? String else {
                out.append("no ts, tid, cat or name: \(e)"); continue
            }
            if let owner = threadOwner[tid], owner != pid { out.append("tid \(tid) in processes \(owner) and \(pid)") }
            threadOwner[tid] = pid
            if !named.contains("p\(pid)") { out.append("process \(pid) not named") }
            if !named.contains("t\(pid).\(tid)") { out.append("thread \(pid).\(tid) not named") }
            let isAsync = ph == "b" || ph == "e"
            var track = "thread \(pid).\(tid)"
            if isAsync {
                // A global `id` (or `id2.global`) puts the track in Perfetto's "Global Legacy
                // Events", outside every process; only `id2.local` keys it under its `pid`.
                if e["id"] != nil || (e["id2"] as? [String: Any])?["global"] != nil {
                    out.append("async with a global id (a global track, outside its process): \(e)")
                }
                guard let id = (e["id2"] as? [String: Any])?["local"] as? String else { out.append("async without a string id2.local: \(e)"); continue }
                track = "async \(pid) \(cat) \(id)"
            }
            if let last = lastTs[track], ts < last { out.append("ts goes back on \(track): \(last) then \(ts)") }
            lastTs[track] = ts
            switch ph {
            case "b": open[track, default: []].append(name)
            case "e":
                if open[track]?.last == name { open[track]!.removeLast() } else { out.append("e \(name) does not close the open b on \(track): \(open[track] ?? [])") }
            case "X":
                guard let dur = e["dur"] as? Double, dur >= 0 else { out.append("X without dur: \(e)"); break }
                slices[track, default: []].append((ts, ts + dur))
                // A flow end waiting for the next slice on this thread binds to this one.
                if let waiting = pendingEnds[track] { for key in waiting { bound.insert(key) }; pendingEnds[track] = nil }
            case "i":
                if e["s"] as? String != "t" { out.append("instant not thread-scoped: \(e)") }
            case "s", "f":
                guard let id = e["id"] as? Int else { out.append("flow without id: \(e)"); break }
                let key = "\(cat) \(name) \(id)"
                flows[key, default: []].append(e)
                // Bound as the importer binds, reading in order: to a slice already begun and
                // still open, or (an `f` without `bp`) to the next slice begun on the thread.
                let open = (slices[track] ?? []).contains { $0.0 <= ts && (ph == "s" ? ts < $0.1 : ts <= $0.1) }
                if ph == "s" || e["bp"] as? String == "e" {
                    if open { bound.insert(key + " " + ph) }
                } else {
                    pendingEnds[track, default: []].append(key + " f")
                }
            default:
                out.append("unexpected phase \(ph)")
            }
        }
        for (track, names) in open where !names.isEmpty { out.append("b left open on \(track): \(names)") }
        for (key, list) in flows {
            guard list.map({ $0["ph"] as! String }) == ["s", "f"] else { out.append("flow \(key) is not one s then one f"); continue }
            let (s, f) = (list[0], list[1])
            if !bound.contains(key + " s") { out.append("flow \(key) starts where no slice of its thread is open") }
            if !bound.contains(key + " f") {
                out.append(f["bp"] as? String == "e" ? "flow \(key) ends where no slice of its thread is open"
                                                     : "flow \(key) has no next slice on its thread")
            }
            if (s["ts"] as! Double) > (f["ts"] as! Double) { out.append("flow \(key) goes back in time") }
        }
        return out
    }

    func export(_ args: [String], file: StaticString = #filePath, line: UInt = #line) -> String {
        let r = TestSupport.run(["export", "--db", db] + args)
        XCTAssertEqual(r.status, 0, r.err, file: file, line: line)
        return r.out
    }

    func testEverySampleSessionFollowsTheRules() throws {
        // Every sample session in one file: nine processes, one of them with lost events and a clock going backwards.
        let sids = try DatabaseReader(db: try SQLiteDatabase(path: db, mode: .readOnly)).sessions().map(\.sid)
        let json = export(sids.flatMap { ["--session", $0] })
        XCTAssertEqual(try Self.violations(json), [])
        let doc = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
        let events = doc["traceEvents"] as! [Event]
        let processes = events.filter { $0["name"] as? String == "process_name" }.compactMap { ($0["args"] as? [String: Any])?["name"] as? String }
        XCTAssertEqual(processes.count, 9, "a process per session")
        XCTAssertTrue(processes.contains { $0.hasPrefix("session 51956284-18a6-7b18-47db-765408e69765 · com.example.shop 5.2.2 (816)") }, "\(processes)")
        // Every event is an instant of its session's process; every finding is there.
        let database = try SQLiteDatabase(path: db, mode: .readOnly)
        let stored = try database.scalarInt("SELECT count(*) FROM events") ?? 0
        XCTAssertEqual(Int64(events.filter { $0["cat"] as? String == "lifecycle" }.count), stored)
        let findings = try database.scalarInt("SELECT count(*) FROM findings WHERE session IS NOT NULL") ?? 0
        XCTAssertEqual(Int64(events.filter { $0["cat"] as? String == "finding" }.count), findings)
        XCTAssertTrue(events.contains { $0["cat"] as? String == "presentation" && $0["ph"] as? String == "s" }, "presenter → presented flows")
        XCTAssertTrue(events.contains { $0["cat"] as? String == "containment" && $0["ph"] as? String == "f" }, "container → child flows")
        XCTAssertTrue(events.contains { $0["cat"] as? String == "appearance" && $0["name"] as? String == "visible" })
    }

    func testAWholeBuildIsOneFile() throws {
        let json = export(["--build", "812"])
        XCTAssertEqual(try Self.violations(json), [])
        let names = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
        let processes = (names["traceEvents"] as! [Event]).filter { $0["name"] as? String == "process_name" }
        XCTAssertEqual(processes.count, 3, "aad71e75, caa69c1e and the bad-lines session are build 812")
    }

    func testTheFindingsFollowTheReportFilters() throws {
        let all = export(["--session", "db9c5598"])
        let leaks = export(["--session", "db9c5598", "--leaks"])
        XCTAssertTrue(all.contains("\"name\":\"LC101 orphan-view\""))
        XCTAssertFalse(leaks.contains("\"name\":\"LC101 orphan-view\""))
        XCTAssertTrue(leaks.contains("\"name\":\"LC301 leaked-controller\""))
    }

    func testABackwardsClockInsideAnAppearanceKeepsEveryTrackInOrder() throws {
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"ClockVC""#)
        b.vc(500, "viewWillAppear", "0xa", #""animated":false"#)
        b.vc(400, "viewDidAppear", "0xa", #""animated":false"#)
        b.vc(300, "viewWillDisappear", "0xa", #""animated":false"#)
        b.vc(900, "viewDidDisappear", "0xa", #""animated":false"#)
        b.vc(1, "deinit", "0xa")
        b.add(2000, "sessionEnd", #""reason":"stopped""#)
        let dir = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        TestSupport.writeLines(b.lines, to: dir + "/clock.jsonl")
        let loaded = TestSupport.run(["ingest", "-q", "--db", dir + "/clock.db", dir + "/clock.jsonl"])
        XCTAssertEqual(loaded.status, 0, loaded.err)
        let r = TestSupport.run(["export", "--db", dir + "/clock.db", "--session", b.sid])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("\"will_seq\""), "the appearance is exported")
        XCTAssertEqual(try Self.violations(r.out), [])
    }

    /// The checker itself: each rule, broken once, is caught.
    func testTheCheckerCatchesEachBrokenRule() throws {
        let head = #"{"traceEvents":[{"ph":"M","name":"process_name","pid":1,"args":{"name":"p"}},{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"t"}},"#
        func check(_ body: String) throws -> [String] { try Self.violations(head + body + "]}") }
        XCTAssertEqual(try check(#"{"ph":"X","cat":"c","name":"n","pid":1,"tid":2,"ts":1.0,"dur":5.0}"#), [])
        XCTAssertFalse(try check(#"{"ph":"b","cat":"c","id2":{"local":"1"},"name":"n","pid":1,"tid":2,"ts":1.0}"#).isEmpty, "b never closed")
        XCTAssertEqual(try check(#"{"ph":"b","cat":"c","id2":{"local":"1"},"name":"n","pid":1,"tid":2,"ts":1.0},{"ph":"e","cat":"c","id2":{"local":"1"},"name":"n","pid":1,"tid":2,"ts":2.0}"#), [], "a process-scoped async slice")
        XCTAssertFalse(try check(#"{"ph":"b","cat":"c","id":"1","name":"n","pid":1,"tid":2,"ts":1.0},{"ph":"e","cat":"c","id":"1","name":"n","pid":1,"tid":2,"ts":2.0}"#).isEmpty, "a global async id")
        XCTAssertFalse(try check(#"{"ph":"b","cat":"c","id2":{"local":"1"},"name":"n","pid":1,"tid":2,"ts":1.0},{"ph":"e","cat":"c","id2":{"local":"1"},"name":"m","pid":1,"tid":2,"ts":2.0}"#).isEmpty, "e of another name")
        XCTAssertFalse(try check(#"{"ph":"i","s":"t","cat":"c","name":"n","pid":1,"tid":2,"ts":3.0},{"ph":"i","s":"t","cat":"c","name":"n","pid":1,"tid":2,"ts":2.0}"#).isEmpty, "ts backwards")
        XCTAssertFalse(try check(#"{"ph":"i","s":"t","cat":"c","name":"n","pid":1,"tid":3,"ts":3.0}"#).isEmpty, "thread not named")
        XCTAssertFalse(try check(#"{"ph":"X","cat":"c","name":"n","pid":1,"tid":2,"ts":1.0,"dur":1.0},{"ph":"s","cat":"f","name":"n","id":1,"pid":1,"tid":2,"ts":5.0},{"ph":"f","cat":"f","name":"n","id":1,"pid":1,"tid":2,"ts":5.0,"bp":"e"}"#).isEmpty, "flow bound to nothing")
        XCTAssertFalse(try check(#"{"ph":"s","cat":"f","name":"n","id":1,"pid":1,"tid":2,"ts":5.0}"#).isEmpty, "flow never finished")
        XCTAssertFalse(try check(#"{"ph":"s","cat":"f","name":"n","id":1,"pid":1,"tid":2,"ts":1.0},{"ph":"X","cat":"c","name":"n","pid":1,"tid":2,"ts":1.0,"dur":1.0},{"ph":"f","cat":"f","name":"n","id":1,"pid":1,"tid":2,"ts":1.5,"bp":"e"}"#).isEmpty, "a flow read before the slice it means to start from")
        XCTAssertEqual(try check(#"{"ph":"X","cat":"c","name":"n","pid":1,"tid":2,"ts":1.0,"dur":1.0},{"ph":"s","cat":"f","name":"n","id":1,"pid":1,"tid":2,"ts":1.0},{"ph":"f","cat":"f","name":"n","id":1,"pid":1,"tid":2,"ts":2.5},{"ph":"X","cat":"c","name":"n","pid":1,"tid":2,"ts":3.0,"dur":1.0}"#), [], "an f without bp binds to the next slice")
        XCTAssertThrowsError(try Self.violations("{\"traceEvents\":["))
    }
}
