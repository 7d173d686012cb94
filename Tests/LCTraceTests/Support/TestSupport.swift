import Foundation
#if canImport(Glibc)
import Glibc
#endif
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
import LCTraceCLI
import LCTraceGen

/// Shared helpers: temporary folders, the repository root, running the CLI in-process or as
/// a real process, and a logical dump of a database for "same content" comparisons.
enum TestSupport {
    /// The repository root (this file is Tests/LCTraceTests/Support/TestSupport.swift).
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The Python of the virtualenv `.ci/run` makes (jsonschema, xmlschema, markdown-it-py), or
    /// `$LCTRACE_VALIDATOR_PYTHON`; nil when neither is there (the tests that need it skip).
    static var validatorPython: String? {
        let candidates = [ProcessInfo.processInfo.environment["LCTRACE_VALIDATOR_PYTHON"],
                          root.appendingPathComponent(".ci/venv/bin/python").path].compactMap { $0 }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Headless-capable Chromium (`$LCTRACE_CHROMIUM`, else Debian's `chromium`, which `.ci/run`
    /// installs); nil when absent (the browser tests skip).
    static var chromium: String? {
        let env = ProcessInfo.processInfo.environment
        let candidates = [env["LCTRACE_CHROMIUM"], "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func temporaryDirectory(_ name: String = #function) -> String {
        let clean = name.filter { $0.isLetter || $0.isNumber }
        let path = NSTemporaryDirectory() + "lctrace-tests-\(clean)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Runs lctrace in-process, as if started in `workingDirectory`: by default `/`, outside
    /// any Git work tree, so that no output depends on the checkout the tests run in.
    @discardableResult
    static func run(_ args: [String], env: [String: String] = [:],
                    workingDirectory: String = "/") -> (status: Int32, out: String, err: String) {
        let console = CapturingConsole()
        let status = CLI.run(args, console: console, environment: env, workingDirectory: workingDirectory)
        return (status, console.output, console.errors)
    }

    /// The built `lctrace` executable (swift test builds every product of the package).
    static var binary: String {
        let candidates = [".build/debug/lctrace", ".build/release/lctrace"].map { root.appendingPathComponent($0).path }
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) { return found }
        // Fall back to the folder the test bundle sits in.
        let bundle = Bundle(for: Marker.self).bundleURL.deletingLastPathComponent().appendingPathComponent("lctrace").path
        return bundle
    }
    private final class Marker {}

    /// Writes `lines` as a plain JSON-lines file.
    static func writeLines(_ lines: [String], to path: String) {
        try! (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Everything a user can see of a database, in a stable order, without ids or clocks.
    static func logicalDump(_ path: String) throws -> String {
        try logicalDump(Storage(try SQLiteDatabase(path: path, mode: .readOnly)))
    }

    /// The same of any backend's database (`--db` path or URL): the views and tables a user
    /// queries, through the shared read connection. A rejected line's first bytes that are not
    /// UTF-8 show as x'…' on both (PostgreSQL keeps them in `rejects.raw`).
    static func logicalDump(location: String) throws -> String {
        try logicalDump(Storage.openForReading(location))
    }

    static func logicalDump(_ storage: Storage) throws -> String {
        let db = storage.backend.reader
        let postgres = storage.kind.name == "postgresql"
        var out = ""
        let queries = [
            "SELECT sid, seq, t, event, vc, class, parent, host, presented, child, animated, is_moving_to_parent, is_being_presented, is_moving_from_parent, is_being_dismissed, interactive, detail, thread, wall, attrs FROM events_v ORDER BY sid, seq",
            "SELECT sid, app, app_version, build, os, os_version, sdk, device, recorder, wall, record_seq, record_conflicts, end_reason, events, first_seq, last_seq, first_t, last_t, lost_events, dirty FROM sessions ORDER BY sid",
            "SELECT path, size, sha256, gzip_members, lines, events, rejects, conflicts, status, damage FROM files ORDER BY path",
            "SELECT f.path, r.kind, r.line, r.\"offset\", r.reason, " + (postgres ? "coalesce(r.text, 'x''' || encode(r.raw, 'hex') || '''')" : "r.text")
                + " FROM rejects r JOIN files f ON f.id = r.file ORDER BY f.path, r.line, r.kind, r.reason",
            "SELECT sid, vc, since, class, init_t, end_seq, end_t, end_how, parent, presenter, release_seq, release_t, release_how, appearances, final_state FROM instances_v ORDER BY sid, vc, since",
            "SELECT sid, vc, since, will_seq, will_t, is_t, did_t, will_disappear_t, did_disappear_t, animated, interactive, backgrounded, outcome, ending FROM appearances_v ORDER BY sid, will_seq",
            "SELECT sid, child, child_since, parent, parent_since, add_seq, will_move_seq, did_move_seq, will_remove_seq, remove_seq, did_remove_seq FROM containment_v ORDER BY sid, add_seq",
            "SELECT rule, session, vc, since, class, t, message, evidence, confidence, file, detail FROM findings_v ORDER BY rule, session, vc, since, t, message",
        ]
        for sql in queries {
            let stmt = try db.query(sql)
            out += "## \(sql.prefix(40))\n"
            while try stmt.step() {
                out += (0..<stmt.columnCount).map { RowFormatter.plain(stmt.value($0)) }.joined(separator: "|") + "\n"
            }
        }
        return out
    }

    /// Runs a process to completion; returns its status and output. With `timeout`, a process
    /// still running after that many seconds is killed (status 137 then: a hang, for a test).
    @discardableResult
    static func process(_ path: String, _ args: [String], env: [String: String]? = nil,
                        timeout: Double? = nil) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        if let env { p.environment = env }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        var watchdog: DispatchWorkItem?
        if let timeout {
            let pid = p.processIdentifier
            let item = DispatchWorkItem { kill(pid, SIGKILL) }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: item)
            watchdog = item
        }
        // Both pipes are drained at once: a process that fills one while we wait on the other stalls.
        /// Written by the draining thread before `leave`, read after `wait`: the group orders them.
        final class Drained: @unchecked Sendable { var data = Data() }
        let o = Drained()
        let drained = DispatchGroup()
        drained.enter()
        DispatchQueue.global().async {
            o.data = out.fileHandleForReading.readDataToEndOfFile()
            drained.leave()
        }
        let e = err.fileHandleForReading.readDataToEndOfFile()
        drained.wait()
        p.waitUntilExit()
        watchdog?.cancel()
        let status = p.terminationReason == .uncaughtSignal ? 128 + p.terminationStatus : p.terminationStatus
        return (status, String(decoding: o.data, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }
}

extension CorpusOptions {
    /// Generator options in one expression, for the tests that write random corpora.
    static func make(seed: UInt64, sessions: Int, sessionsPerFile: Int = 2, scenarios: Int,
                     rotateEvery: Int = 0, linesPerMember: Int = 0) -> CorpusOptions {
        var o = CorpusOptions()
        o.seed = seed
        o.sessions = sessions
        o.sessionsPerFile = sessionsPerFile
        o.scenarios = scenarios
        o.rotateEvery = rotateEvery
        o.linesPerMember = linesPerMember
        return o
    }
}

/// A test case with a fresh temporary folder (`dir`) and a database path in it (`db`),
/// removed after each test.
class TemporaryDirectoryTestCase: XCTestCase {
    var dir = ""
    var db = ""

    override func setUp() {
        super.setUp()
        dir = TestSupport.temporaryDirectory(String(describing: type(of: self)))
        db = dir + "/t.db"
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: dir)
        super.tearDown()
    }
}

/// Builds trace lines tersely for tests: `L.line(seq, t_ms, "ev", ["vc": "0x1", …])`.
struct TraceBuilder {
    var sid = "S1"
    var seq: Int64 = 0
    var lines: [String] = []

    init(sid: String = "S1", sdk: String = "27.0", os: String = "27.1", osName: String = "iOS", record: Bool = true,
         app: String = "com.example.app", version: String = "1.0", build: String = "1", device: String = "iPhone16,2") {
        self.sid = sid
        if record {
            add(0, "session", "\"wall\":\"2026-11-02T10:15:03.120Z\",\"app\":\"\(app)\",\"appVersion\":\"\(version)\",\"build\":\"\(build)\",\"os\":\"\(osName)\",\"osVersion\":\"\(os)\",\"sdk\":\"\(sdk)\",\"device\":\"\(device)\"")
            add(1, "sceneWillConnect", "\"scene\":\"s1\"")
        }
    }

    /// Appends an event at `ms` milliseconds with raw extra JSON fields.
    mutating func add(_ ms: Double, _ ev: String, _ fields: String = "", vc: String? = nil) {
        var line = "{\"v\":1,\"sid\":\"\(sid)\",\"seq\":\(seq),\"t\":\(Int64(ms * 1_000_000)),\"ev\":\"\(ev)\""
        if let vc { line += ",\"vc\":\"\(vc)\"" }
        if !fields.isEmpty { line += "," + fields }
        lines.append(line + "}")
        seq += 1
    }

    mutating func vc(_ ms: Double, _ ev: String, _ vc: String, _ fields: String = "") { add(ms, ev, fields, vc: vc) }

    /// Builds the model and runs every rule over the lines (no database).
    func model(_ settings: RuleSettings = RuleSettings()) -> SessionModel {
        var meta = SessionMetadata(sid: sid)
        let decoder = EventDecoder()
        var events: [TraceEvent] = []
        for line in lines {
            var bytes = Array(line.utf8)
            let result = bytes.withUnsafeMutableBytes { decoder.decode(UnsafeRawBufferPointer($0)) }
            guard case .success(let e) = result else { XCTFail("bad test line \(line)"); continue }
            if let r = e.session, meta.recordSeq == nil {
                meta.osVersion = r.osVersion; meta.sdk = r.sdk; meta.osName = r.os; meta.recordSeq = e.seq
                meta.app = r.app; meta.appVersion = r.appVersion; meta.build = r.build; meta.device = r.device
                // The store reads `extension` from the kept record's attrs (DatabaseReader.sessionMetadata).
                if let attrs = e.attrs, let object = try? JSONSerialization.jsonObject(with: Data(attrs.utf8)) as? [String: Any] {
                    meta.extensionPoint = object["extension"] as? String
                }
            }
            events.append(e)
        }
        let ordered = events.sorted(by: { $0.seq < $1.seq })
        let builder = ModelBuilder(sid: sid, metadata: meta)
        for e in ordered { builder.consume(e) }
        let model = builder.finish()
        model.findings = RuleCatalog.check(model, settings)
        // Every scenario is also built with a batch after every event, which must change nothing.
        var batches: [SessionModel] = []
        var everyEvent = SessionAnalysis(settings: settings)
        everyEvent.factsPerBatch = 0
        let batched = try! everyEvent.build(sid: sid, metadata: meta, batches: { batches.append($0) }) { consume in
            for e in ordered { try consume(e) }
        }
        XCTAssertEqual(ModelFacts.of([batched] + batches), ModelFacts.of([model]), "facts differ when built in batches")
        XCTAssertEqual(batched.findings, model.findings, "findings differ when built in batches")
        // And with interned ids, as the SQLite store's events carry them (`StoredIDs`: the model
        // builder then finds instances by id), in batches too: the same facts, ids aside.
        var idOf: [String: Int64] = [:]
        func id(_ text: String?) -> Int64 {
            guard let text else { return 0 }
            if let known = idOf[text] { return known }
            idOf[text] = Int64(idOf.count + 1)
            return Int64(idOf.count)
        }
        var withIDs: [SessionModel] = []
        let byID = try! everyEvent.build(sid: sid, metadata: meta, batches: { withIDs.append($0) }) { consume in
            for var e in ordered {
                e.ids.vc = id(e.vc)
                e.ids.cls = id(e.cls)
                e.ids.other = id(e.other)
                try consume(e)
            }
        }
        XCTAssertEqual(ModelFacts.of([byID] + withIDs, idsCleared: true), ModelFacts.of([model]), "facts differ when built from ids")
        XCTAssertEqual(byID.findings, model.findings, "findings differ when built from ids")
        return model
    }

    /// (rule, vc, since) of every finding.
    /// "rule vc" of each finding (of `rules`), sorted: for scenarios whose seqs are not the point.
    func flagged(_ settings: RuleSettings = RuleSettings(), rules: Set<String>? = nil) -> [String] {
        model(settings).findings.filter { rules?.contains($0.rule) ?? true }.map { "\($0.rule) \($0.vc ?? "-")" }.sorted()
    }

    func findings(_ settings: RuleSettings = RuleSettings(), rules: Set<String>? = nil) -> [String] {
        model(settings).findings.filter { rules?.contains($0.rule) ?? true }.map {
            "\($0.rule) \($0.vc ?? "-")#\($0.since.map(String.init) ?? "-")"
        }.sorted()
    }
}

/// Every fact of a model, or of a model and its batches, as sorted lines to compare. Not an
/// instance's `afterEndCount`: once retired its tombstone counts (LC205's message compares it).
enum ModelFacts {
    /// `idsCleared`: the interned ids of the models' cycles and edges are set to 0 first.
    static func of(_ models: [SessionModel], idsCleared: Bool = false) -> [String] {
        var lines: [String] = []
        for m in models {
            if idsCleared {
                for i in m.cycles.indices { m.cycles[i].vcID = 0 }
                for i in m.edges.indices { (m.edges[i].childID, m.edges[i].parentID) = (0, 0) }
            }
            for x in m.instances {
                lines.append("instance \(x.key) \(x.cls ?? "-") init \(String(describing: x.initSeq)) \(String(describing: x.initT)) first \(x.firstT) \(x.unknownEventSeqs) \(x.firstEventName ?? "-") end \(String(describing: x.end)) \(String(describing: x.endSeq)) \(String(describing: x.endT)) \(x.state) loads \(x.viewDidLoadCount) parent \(x.lastParent ?? "-") presenter \(x.presenter ?? "-") \(String(describing: x.release)) cycles \(x.cycleCount) missing \(x.missingIsAppearingCount)")
            }
            lines += m.cycles.map { "cycle \($0)" }
            lines += m.attachments.map { "attachment \($0)" }
            lines += m.anomalies.map { "anomaly \($0)" }
            for e in m.edges {
                var edge = e
                edge.attachmentAtRemoval = nil
                lines.append("edge \(edge) left \(e.attachmentAtRemoval.map { m.attachments[$0].attachSeq }.map(String.init) ?? "-")")
            }
        }
        return lines.sorted()
    }
}

extension TestSupport {
    /// Four `lctrace ingest` processes on overlapping sets of `files` at once, the first killed
    /// twice (SIGKILL) and started again; then the database at `shared` must hold exactly what
    /// one clean ingest of every file put at `reference`. Any backend (a path or a URL).
    static func concurrentIngestsWithKills(_ files: [String], reference: String, shared: String, logs dir: String,
                                           file: StaticString = #filePath, line: UInt = #line) throws {
        let binary = TestSupport.binary
        let started = Date()
        XCTAssertEqual(try process(binary, ["ingest", "-q", "--db", reference] + files).status, 0, file: file, line: line)
        // The kills land at fractions of what a whole ingest takes here.
        let duration = Date().timeIntervalSince(started)
        let expected = try logicalDump(location: reference)
        // Each set is three files in four, so every file is loaded by two or three at once.
        let n = files.count
        let sets = (0..<4).map { k in (0..<n).filter { ($0 + k) % 4 != 0 }.map { files[$0] } }
        var logs = 0
        func start(_ set: [String]) throws -> Process {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: binary)
            p.arguments = ["ingest", "-q", "--db", shared] + set
            p.standardOutput = FileHandle.nullDevice
            logs += 1
            _ = FileManager.default.createFile(atPath: dir + "/ingester\(logs).err", contents: nil)
            p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: dir + "/ingester\(logs).err"))
            try p.run()
            return p
        }
        var running = try sets.map(start)
        var kills = 0
        for fraction in [0.3, 0.4] {
            usleep(useconds_t(duration * fraction * 1_000_000))
            if running[0].isRunning {
                kill(running[0].processIdentifier, SIGKILL)
                kills += 1
            }
            running[0].waitUntilExit()
            running[0] = try start(sets[0])
        }
        for p in running { p.waitUntilExit() }
        let errors = (1...logs).map { (try? String(contentsOfFile: dir + "/ingester\($0).err", encoding: .utf8)) ?? "" }
            .flatMap { $0.split(separator: "\n").filter { $0.hasPrefix("Error") } }
        XCTAssertEqual(running.map(\.terminationStatus), [0, 0, 0, 0], errors.joined(separator: "\n"), file: file, line: line)
        XCTAssertGreaterThan(kills, 0, "a kill landed while the first ingester ran", file: file, line: line)
        let dump = try logicalDump(location: shared)
        if dump != expected {
            let l = expected.split(separator: "\n"), r = dump.split(separator: "\n")
            let first = zip(l, r).enumerated().first { $0.element.0 != $0.element.1 }
            XCTFail("differs from one clean ingest (\(l.count) vs \(r.count) lines), first at \(first?.offset ?? -1):\n\(first?.element.0 ?? "")\n\(first?.element.1 ?? "")",
                    file: file, line: line)
        }
    }
}
