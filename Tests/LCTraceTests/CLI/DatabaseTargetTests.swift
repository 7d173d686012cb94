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
@testable import LCTraceCLI

/// A `--db` that cannot be a database is refused by every command with the path and the real
/// reason (not SQLite, a directory, a missing folder, no permission), never SQLite's bare words
/// or a hint about disks, and nothing is written to it or beside it.
final class DatabaseTargetTests: TemporaryDirectoryTestCase {

    /// Every command that opens a database, with the rest of what it needs to run.
    func invocations(_ path: String) -> [String: [String]] {
        let trace = dir + "/t.jsonl"
        if !FileManager.default.fileExists(atPath: trace) {
            var b = TraceBuilder()
            b.vc(2, "init", "0xa", #""cls":"A""#)
            TestSupport.writeLines(b.lines, to: trace)
        }
        let all: [String: [String]] = [
            "ingest": ["ingest", "--db", path, trace],
            "analyze": ["analyze", "--db", path],
            "report": ["report", "--db", path],
            "baseline": ["baseline", "--db", path, "-o", dir + "/b.json"],
            "compare": ["compare", "--db", path, "--base-build", "1", "--head-build", "2"],
            "timeline": ["timeline", "--db", path, "--session", "S1"],
            "export": ["export", "--db", path, "--session", "S1", "-o", dir + "/e.json"],
            "sessions": ["sessions", "--db", path],
            "query": ["query", "--db", path, "SELECT 1"],
            "schema": ["schema", "--db", path],
        ]
        let withDatabase = CLI.commands.map { $0.spec }.filter { $0.options.contains { $0.name == "db" } }.map(\.name)
        XCTAssertEqual(Set(all.keys), Set(withDatabase), "a command with --db is not tried here")
        return all
    }

    /// Runs every command on `path`: each exits 74 with `expected` (and the path) in one Error line.
    func refusedByEveryCommand(_ path: String, _ expected: String, hint: String? = nil, writersOnly: Bool = false,
                               file: StaticString = #filePath, line: UInt = #line) {
        for (name, args) in invocations(path).sorted(by: { $0.key < $1.key }) {
            if writersOnly && !["ingest", "analyze"].contains(name) { continue }
            let r = TestSupport.run(args)
            XCTAssertEqual(r.status, 74, "\(name): \(r.err)", file: file, line: line)
            let lines = r.err.split(separator: "\n").map(String.init)
            XCTAssertEqual(lines.first, "Error: " + expected, name, file: file, line: line)
            if let hint { XCTAssertEqual(lines.dropFirst().first, "Hint: " + hint, name, file: file, line: line) }
            XCTAssertFalse(r.err.lowercased().contains("disk"), "\(name) speaks of disks: \(r.err)", file: file, line: line)
            XCTAssertTrue(r.out.isEmpty, "\(name) printed \(r.out)", file: file, line: line)
        }
    }

    func testAFileThatIsNotSQLite() throws {
        let text = dir + "/notes.db"
        try "these are my notes\n".write(toFile: text, atomically: true, encoding: .utf8)
        refusedByEveryCommand(text, "\(text) is not an lctrace database (not SQLite)")
        XCTAssertEqual(try String(contentsOfFile: text, encoding: .utf8), "these are my notes\n", "never written")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("notes.db") }, ["notes.db"])
        // A trace given as the database: said so, with the command that loads it.
        let trace = dir + "/device.jsonl.gz"
        try Data([0x1f, 0x8b, 8, 0, 0, 0, 0, 0]).write(to: URL(fileURLWithPath: trace))
        refusedByEveryCommand(trace, "\(trace) is not an lctrace database (not SQLite)",
                              hint: "it is gzip, a trace perhaps: load it with 'lctrace ingest --db lctrace.db \(trace)'")
        let json = dir + "/s.jsonl"
        try #"{"v":1}"#.write(toFile: json, atomically: true, encoding: .utf8)
        refusedByEveryCommand(json, "\(json) is not an lctrace database (not SQLite)",
                              hint: "it is JSON text, a trace perhaps: load it with 'lctrace ingest --db lctrace.db \(json)'")
    }

    func testADirectoryAMissingFolderAndAFileInThePath() throws {
        refusedByEveryCommand(dir, "\(dir) is a directory, not a database file", hint: "--db names a file: --db \(dir)/lctrace.db")
        let missing = dir + "/no/such/folder/x.db"
        let ingest = TestSupport.run(invocations(missing)["ingest"]!)
        XCTAssertEqual(ingest.status, 74)
        XCTAssertEqual(ingest.err, "Error: cannot create database \(missing): its folder \(dir)/no/such/folder does not exist\nHint: create it first (mkdir -p \(dir)/no/such/folder) or choose another --db\n")
        for (name, args) in invocations(missing) where name != "ingest" {
            let r = TestSupport.run(args)
            XCTAssertEqual(r.status, 74, name)
            XCTAssertTrue(r.err.hasPrefix("Error: no database at \(missing): its folder \(dir)/no/such/folder does not exist\n"), "\(name): \(r.err)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/no"))
        let file = dir + "/plain"
        try "x".write(toFile: file, atomically: true, encoding: .utf8)
        refusedByEveryCommand(file + "/x.db", "cannot use database \(file)/x.db: a part of its folder \(file) is a file, not a folder")
        // An empty file: a new database for ingest, nothing to read for the others.
        let empty = dir + "/empty.db"
        XCTAssertTrue(FileManager.default.createFile(atPath: empty, contents: nil))
        let r = TestSupport.run(invocations(empty)["report"]!)
        XCTAssertEqual(r.status, 74)
        XCTAssertEqual(r.err, "Error: \(empty) is an empty file, not an lctrace database\nHint: load traces into it with 'lctrace ingest --db \(empty) PATH...'\n")
        XCTAssertEqual(TestSupport.run(invocations(empty)["ingest"]!).status, 0)
        XCTAssertEqual(TestSupport.run(invocations(empty)["report"]! + ["--fail-on", "never"]).status, 0)
    }

    /// Permissions, as a user who has them not (root has them all: the commands run as nobody
    /// through setpriv then, as real processes).
    func run(asAnotherUser args: [String]) throws -> (status: Int32, out: String, err: String) {
        if getuid() != 0 { return TestSupport.run(args) }
        let setpriv = "/usr/bin/setpriv"
        guard FileManager.default.isExecutableFile(atPath: setpriv) else {
            throw XCTSkip("running as root without setpriv (util-linux): permissions cannot be tried")
        }
        return try TestSupport.process(setpriv, ["--reuid=65534", "--regid=65534", "--clear-groups", TestSupport.binary] + args, timeout: 60)
    }

    func testPermissionsAreNamed() throws {
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, TestSupport.root.appendingPathComponent("SampleTraces").path]).status, 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir)
        let readOnly = dir + "/ro.db"
        try FileManager.default.copyItem(atPath: db, toPath: readOnly)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: readOnly)
        let other = getuid() == 0 ? 65534 : getuid()
        if other == 65534 { try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: db) }

        let ingest = try run(asAnotherUser: ["ingest", "--db", readOnly, dir + "/none.jsonl"])
        XCTAssertEqual(ingest.status, 74, ingest.err)
        XCTAssertEqual(ingest.err, "Error: database \(readOnly) is read-only (permission denied)\nHint: ingest and analyze write to it; report, query and the other reading commands read it as it is\n")
        // Reading it works, even in a folder this user may not write (immutable: no -shm can be made).
        let report = try run(asAnotherUser: ["report", "--db", readOnly, "--fail-on", "never", "-f", "json"])
        XCTAssertEqual(report.status, 0, report.err)
        XCTAssertTrue(report.out.contains("\"findings\":36"), report.out)

        if getuid() == 0 {
            // The folder belongs to root, 755: nobody may not create a database in it.
            let create = try run(asAnotherUser: ["ingest", "--db", dir + "/new.db", dir + "/none.jsonl"])
            XCTAssertEqual(create.status, 74)
            XCTAssertEqual(create.err, "Error: cannot create database \(dir)/new.db: its folder \(dir) is not writable (permission denied)\n")
            let writable = dir + "/w.db"
            try FileManager.default.copyItem(atPath: readOnly, toPath: writable)
            try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: writable)
            let beside = try run(asAnotherUser: ["ingest", "--db", writable, dir + "/none.jsonl"])
            XCTAssertEqual(beside.status, 74)
            XCTAssertTrue(beside.err.hasPrefix("Error: cannot write beside database \(writable): its folder \(dir) is not writable (permission denied)\n"), beside.err)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: writable)
            let unreadable = try run(asAnotherUser: ["query", "--db", writable, "SELECT 1"])
            XCTAssertEqual(unreadable.status, 74)
            XCTAssertEqual(unreadable.err, "Error: cannot read database \(writable): permission denied\n")
            let locked = dir + "/locked"
            try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            try FileManager.default.copyItem(atPath: readOnly, toPath: locked + "/x.db")
            let unreachable = try run(asAnotherUser: ["sessions", "--db", locked + "/x.db"])
            XCTAssertEqual(unreachable.status, 74)
            XCTAssertEqual(unreachable.err, "Error: cannot reach database \(locked)/x.db: permission denied (a folder on the way may not be searched)\n")
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/new.db"))
        }
    }

    /// The hint of a database failure is about its kind of failure.
    func testHintsFollowTheFailure() {
        func hint(_ code: Int32) -> String? { SQLiteError(code: code, message: "x", sql: nil).hint }
        XCTAssertTrue(hint(11)!.contains("damaged"), "SQLITE_CORRUPT")
        XCTAssertTrue(hint(26)!.contains("damaged"), "SQLITE_NOTADB")
        XCTAssertTrue(hint(13)!.contains("full"), "SQLITE_FULL")
        XCTAssertTrue(hint(8)!.contains("read-only"), "SQLITE_READONLY")
        XCTAssertFalse(hint(8)!.contains("disk"))
        XCTAssertNil(hint(5), "SQLITE_BUSY")
        XCTAssertNil(hint(1), "SQLITE_ERROR")
    }
}
