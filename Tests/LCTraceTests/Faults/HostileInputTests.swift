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
import LCTraceGen
#if canImport(Glibc)
import Glibc
#endif

/// The second round of hostile input (issue 12), run as real processes: whatever a user
/// types or a device writes, lctrace ends with a clear message and the documented exit
/// status, never a trap, a hang or a silent skip.
final class HostileInputTests: TemporaryDirectoryTestCase {

    /// Runs lctrace; one that runs more than a minute is killed (status 137: it hung).
    func lctrace(_ args: [String], timeout: Double = 60) throws -> (status: Int32, out: String, err: String) {
        try TestSupport.process(TestSupport.binary, args, timeout: timeout)
    }

    /// A small analyzed database to point the commands at.
    func sampleDatabase() throws -> String {
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"A""#)
        TestSupport.writeLines(b.lines, to: dir + "/s.jsonl")
        XCTAssertEqual(try lctrace(["ingest", "-q", "--db", db, dir + "/s.jsonl"]).status, 0)
        return db
    }

    // MARK: 1. Option values that do not fit

    func testOptionValuesThatDoNotFitAreUsageErrorsNamingTheRange() throws {
        let db = try sampleDatabase()
        let cases: [([String], String)] = [
            (["--grace", "10000000000s"], "invalid --grace '10000000000s': out of range (expected a duration from 0s to 24h)"),
            (["--grace", "9223372036854775807ns"], "invalid --grace '9223372036854775807ns': out of range"),
            (["--grace", "99999999999999999999999h"], "invalid --grace '99999999999999999999999h': out of range"),
            (["--gap-threshold", "animated=1e20ms"], "invalid --gap-threshold animated '1e20ms'"),
            (["--gap-threshold", "plain=25h"], "invalid --gap-threshold plain '25h': out of range"),
            (["--grace", "-5s"], "invalid --grace '-5s': out of range"),
            (["--grace", "5000"], "invalid --grace '5000': a duration needs a unit"),
            (["--gap-threshold", "animated=1000"], "invalid --gap-threshold animated '1000': a duration needs a unit"),
            (["--max-live", "A=99999999999999999999"], "invalid --max-live A '99999999999999999999' (expected a whole number from 0 to 1000000000)"),
            (["--max-live", "A=-1"], "invalid --max-live A '-1'"),
            (["--examples", "18446744073709551616"], "invalid --examples '18446744073709551616' (expected a whole number from 0 to 1000000)"),
        ]
        for (options, message) in cases {
            for command in ["report", "analyze"] where command == "report" || options[0] != "--examples" {
                let r = try lctrace([command, "--db", db] + options)
                XCTAssertEqual(r.status, 64, "\(command) \(options): \(r.err)")
                XCTAssertTrue(r.err.hasPrefix("Error: " + message), "\(options): \(r.err)")
            }
        }
        let hint = try lctrace(["report", "--db", db, "--grace", "5000"])
        XCTAssertTrue(hint.err.contains("Hint: write 5000ms or 5000s"), hint.err)
        // The edges of the range are accepted.
        XCTAssertEqual(try lctrace(["report", "--db", db, "--grace", "24h", "--fail-on", "never"]).status, 0)
        XCTAssertEqual(try lctrace(["report", "--db", db, "--grace", "0s", "--gap-threshold", "animated=0ns,plain=86400s",
                                    "--fail-on", "never"]).status, 0)
    }

    /// Times anywhere in Int64 (t = 2^63 - 1 is a valid line) through everything that draws or
    /// counts them: no trap, whatever the window.
    func testExtremeTimesAndSeqsFromATraceNeverTrap() throws {
        let max = Int64.max
        var lines = [
            #"{"v":1,"sid":"X","seq":0,"t":0,"ev":"session","wall":"2026-11-02T10:15:03.120Z","app":"a","sdk":"27.0","osVersion":"27.0"}"#,
            #"{"v":1,"sid":"X","seq":1,"t":0,"ev":"init","vc":"0x1","cls":"A"}"#,
            #"{"v":1,"sid":"X","seq":2,"t":1,"ev":"viewWillAppear","vc":"0x1","animated":true}"#,
            #"{"v":1,"sid":"X","seq":3,"t":2,"ev":"viewIsAppearing","vc":"0x1","bounds":[1e308,-1e308]}"#,
        ]
        lines += [4, 5, 6].map { #"{"v":1,"sid":"X","seq":\#($0),"t":\#(max),"ev":"\#(["viewDidAppear", "viewWillDisappear", "viewDidDisappear"][$0 - 4])","vc":"0x1","animated":true,"isMovingFromParent":true}"# }
        lines.append(#"{"v":1,"sid":"X","seq":\#(max),"t":0,"ev":"mark","name":"x"}"#)
        lines += [(0, max, "init"), (1, 0, "viewWillAppear"), (2, max, "viewIsAppearing"), (3, 0, "viewDidAppear"), (4, max, "viewDidDisappear")].map {
            #"{"v":1,"sid":"Z","seq":\#($0.0),"t":\#($0.1),"ev":"\#($0.2)","vc":"0x1","cls":"A","isMovingFromParent":true}"#
        }
        TestSupport.writeLines(lines, to: dir + "/extreme.jsonl")
        XCTAssertEqual(try lctrace(["ingest", "-q", "--db", db, dir + "/extreme.jsonl"]).status, 0)
        var runs: [[String]] = [["report", "--fail-on", "never"], ["report", "-f", "sarif", "--fail-on", "never"], ["sessions"],
                                ["report", "--grace", "24h", "--gap-threshold", "animated=0ns", "--fail-on", "never"]]
        for sid in ["X", "Z"] {
            for extra in [[], ["-f", "svg"], ["--window", "8784h"], ["--window", "1ns", "-f", "svg"], ["--vc", "0x1"], ["--around", "4"]] {
                runs.append(["timeline", "--session", sid] + extra)
            }
            runs.append(["export", "--session", sid, "-o", dir + "/\(sid).json"])
        }
        for args in runs {
            let r = try lctrace([args[0], "--db", db] + args.dropFirst())
            XCTAssertTrue([0, 64].contains(r.status), "\(args): exit \(r.status) \(r.err.prefix(300))")
        }
        for (option, value) in [("--width", "9223372036854775807"), ("--lanes", "-1"), ("--around", "99999999999999999999"), ("--window", "0ns")] {
            let r = try lctrace(["timeline", "--db", db, "--session", "X", option, value])
            XCTAssertEqual(r.status, 64, "\(option) \(value): \(r.err)")
            XCTAssertTrue(r.err.contains("invalid \(option) '\(value)'"), r.err)
        }
    }

    // MARK: 4. NUL inside strings

    func testANulInsideAStringIsStoredWhole() throws {
        var a = TraceBuilder(sid: "a\\u0000b")
        a.vc(2, "init", "0x1\\u0000x", #""cls":"Cell\u0000Controller""#)
        var b = TraceBuilder(sid: "a")
        b.vc(2, "init", "0x1", #""cls":"Cell""#)
        TestSupport.writeLines(a.lines + b.lines, to: dir + "/nul.jsonl")
        let r = try lctrace(["ingest", "--db", db, dir + "/nul.jsonl"])
        XCTAssertEqual(r.status, 0, r.err)
        let d = try SQLiteDatabase(path: db, mode: .readOnly)
        XCTAssertEqual(try d.scalarInt("SELECT count(*) FROM sessions"), 2, "a\\u0000b and a are two sessions")
        XCTAssertEqual(try d.scalarText("SELECT group_concat(length(CAST(sid AS BLOB)), ',') FROM (SELECT sid FROM sessions ORDER BY sid)"), "1,3")
        XCTAssertEqual(try d.scalarInt("SELECT count(*) FROM events WHERE session = (SELECT id FROM sessions WHERE sid = 'a')"), 3)
        XCTAssertEqual(try d.scalarText("SELECT hex(vc) FROM events_v WHERE event = 'init' AND class != 'Cell'"), "3078310078")
        XCTAssertEqual(try d.scalarInt("SELECT length(CAST(class AS BLOB)) FROM events_v WHERE event = 'init' AND class != 'Cell'"), 15)
    }

    // MARK: 2. Zip-bomb guard

    func testAHighlyCompressibleFileIsReadWholeAndARealBombIsCut() throws {
        // 20,001 events with a long constant key: more than 300:1, and every event is good.
        let path = dir + "/constant.jsonl.gz"
        let w = try TraceFileWriter(path: path, gzip: true)
        let pad = String(repeating: "x", count: 4000)
        w.write(TraceBuilder().lines[0] + "\n")
        for seq in 1...20_000 {
            w.write("{\"v\":1,\"sid\":\"S1\",\"seq\":\(seq),\"t\":\(seq * 1000),\"ev\":\"mark\",\"name\":\"m\",\"constant\":\"\(pad)\"}\n")
        }
        w.close()
        let inflated = 20_000 * (pad.count + 70)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        XCTAssertGreaterThan(inflated / size, 250, "the file compresses far more than 200:1")
        let r = try lctrace(["ingest", "--db", db, path])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(try SQLiteDatabase(path: db, mode: .readOnly).scalarInt("SELECT count(*) FROM events"), 20_001)

        // A real bomb: one line, then 1.1 GiB of spaces at about 1,030:1 in one member.
        let bomb = dir + "/bomb.gz"
        let b = try TraceFileWriter(path: bomb, gzip: true, level: 9)
        b.write("{\"v\":1,\"sid\":\"B\",\"seq\":0,\"t\":0,\"ev\":\"mark\"}\n")
        let mebibyte = [UInt8](repeating: 0x20, count: 1 << 20)
        for _ in 0..<1100 { b.write(bytes: mebibyte) }
        b.close()
        let cut = try lctrace(["ingest", "--db", dir + "/bomb.db", bomb])
        XCTAssertEqual(cut.status, 65, cut.err)
        XCTAssertTrue(cut.err.contains("gzip member 1 inflates more than 1000× its size past 1024 MiB (a zip bomb?); rest of file skipped"), cut.err)
        XCTAssertEqual(try SQLiteDatabase(path: dir + "/bomb.db", mode: .readOnly).scalarInt("SELECT count(*) FROM events"), 1)
    }

    // MARK: 3. Directories: names that are not UTF-8, unreadable folders, links

    /// Runs lctrace without the power to read what permissions forbid: as root (CI), with the
    /// capabilities that bypass them dropped (setpriv).
    func lctraceWithoutPrivilege(_ args: [String]) throws -> (status: Int32, out: String, err: String) {
        guard getuid() == 0 else { return try lctrace(args) }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            throw XCTSkip("running as root without setpriv: permissions cannot be tested")
        }
        return try TestSupport.process("/usr/bin/setpriv", ["--bounding-set=-dac_override,-dac_read_search", "--", TestSupport.binary] + args)
    }

    func testEveryPathOfAWalkIsLoadedOrReported() throws {
        let root = dir + "/logs"
        try FileManager.default.createDirectory(atPath: root + "/nested/locked", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir + "/elsewhere", withIntermediateDirectories: true)
        var a = TraceBuilder(sid: "NONUTF8")
        a.vc(2, "init", "0xa", #""cls":"A""#)
        // A file name with bytes that are not UTF-8 (0xFF 0xFE).
        let name = Array((root + "/device-").utf8) + [0xFF, 0xFE] + Array(".jsonl".utf8) + [0]
        let fd = name.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o644) } }
        XCTAssertGreaterThanOrEqual(fd, 0)
        let text = Array((a.lines.joined(separator: "\n") + "\n").utf8)
        XCTAssertEqual(write(fd, text, text.count), text.count)
        close(fd)
        var b = TraceBuilder(sid: "LINKED")
        b.vc(2, "init", "0xb", #""cls":"B""#)
        TestSupport.writeLines(b.lines, to: dir + "/elsewhere/b.jsonl")
        var c = TraceBuilder(sid: "LOCKED")
        c.vc(2, "init", "0xc", #""cls":"C""#)
        TestSupport.writeLines(c.lines, to: root + "/nested/locked/c.jsonl")
        try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: dir + "/elsewhere")
        try FileManager.default.createSymbolicLink(atPath: root + "/nested/loop", withDestinationPath: root)
        try FileManager.default.createSymbolicLink(atPath: root + "/gone.jsonl", withDestinationPath: dir + "/nothing")
        XCTAssertEqual(chmod(root + "/nested/locked", 0), 0)
        defer { chmod(root + "/nested/locked", 0o755) }

        let r = try lctraceWithoutPrivilege(["ingest", "--db", db, root])
        XCTAssertEqual(r.status, 66, r.out + r.err)
        XCTAssertTrue(r.err.contains("Error: \(root)/gone.jsonl: broken symbolic link"), r.err)
        XCTAssertTrue(r.err.contains("Error: \(root)/nested/locked: cannot read directory: Permission denied"), r.err)
        XCTAssertTrue(r.out.contains("Loaded 2 files (2 missing or unreadable)"), r.out)
        let d = try SQLiteDatabase(path: db, mode: .readOnly)
        XCTAssertEqual(try d.scalarText("SELECT group_concat(sid, ',') FROM (SELECT sid FROM sessions ORDER BY sid)"), "LINKED,NONUTF8")
        XCTAssertEqual(try d.scalarText("SELECT path FROM files WHERE path LIKE '%device-%'"), root + "/device-\\xFF\\xFE.jsonl")
        // An unreadable directory named directly, and a symbolic link to a directory named directly.
        let locked = try lctraceWithoutPrivilege(["ingest", "--db", dir + "/2.db", root + "/nested/locked"])
        XCTAssertEqual(locked.status, 66, locked.err)
        XCTAssertTrue(locked.err.contains("cannot read directory: Permission denied"), locked.err)
        let linked = try lctrace(["ingest", "-q", "--db", dir + "/3.db", root + "/link"])
        XCTAssertEqual(linked.status, 0, linked.err)
        XCTAssertEqual(try SQLiteDatabase(path: dir + "/3.db", mode: .readOnly).scalarInt("SELECT count(*) FROM sessions"), 1)
    }

    // MARK: 8. Things that are not regular files

    func testAFIFOInAWalkIsRefusedNotWaitedFor() throws {
        try FileManager.default.createDirectory(atPath: dir + "/logs", withIntermediateDirectories: true)
        XCTAssertEqual(mkfifo(dir + "/logs/stuck.jsonl", 0o644), 0)
        XCTAssertEqual(mkfifo(dir + "/named.jsonl", 0o644), 0)
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"A""#)
        TestSupport.writeLines(b.lines, to: dir + "/logs/ok.jsonl")
        let r = try lctrace(["ingest", "--db", db, dir + "/logs", dir + "/named.jsonl"])
        XCTAssertEqual(r.status, 66, r.err)
        XCTAssertTrue(r.err.contains("Error: \(dir)/logs/stuck.jsonl: not a regular file (a FIFO)"), r.err)
        XCTAssertTrue(r.err.contains("Error: \(dir)/named.jsonl: not a regular file (a FIFO)"), r.err)
        XCTAssertTrue(r.err.contains("Hint: lctrace reads regular files; pipe anything else in as standard input"), r.err)
        XCTAssertEqual(try SQLiteDatabase(path: db, mode: .readOnly).scalarInt("SELECT count(*) FROM events"), 3)
    }

    // MARK: 10. Zero padding after gzip

    func testGzipFollowedByZeroPaddingIsNotDamaged() throws {
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"A""#)
        let path = dir + "/padded.jsonl.gz"
        let w = try TraceFileWriter(path: path, gzip: true)
        w.write(b.lines.joined(separator: "\n") + "\n")
        w.close()
        let handle = FileHandle(forWritingAtPath: path)!
        handle.seekToEndOfFile()
        handle.write(Data(count: 4096 - Int(handle.offsetInFile % 4096)))
        handle.closeFile()
        let r = try lctrace(["ingest", "--db", db, path])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(r.err, "")
        XCTAssertEqual(try SQLiteDatabase(path: db, mode: .readOnly).scalarText("SELECT status FROM files"), "complete")
    }

    /// A device file whose first member was cut in its middle and whose later members are whole
    /// (a power cut that kept later blocks, files joined by `cat`): the later members' events
    /// are loaded, the file is damaged (exit 65) with one damage naming where reading went on,
    /// and the line the damage cut is a `cut-line` of LC904, not the file's last.
    func testEventsAfterADamagedGzipMemberAreLoaded() throws {
        func member(_ sid: String, _ count: Int) throws -> (bytes: [UInt8], lines: Int) {
            var b = TraceBuilder(sid: sid)
            for i in 0..<count { b.vc(Double(i + 1), "init", "0x\(i)", #""cls":"VC\#(i % 9)""#) }
            let path = dir + "/\(sid).gz"
            let w = try TraceFileWriter(path: path, gzip: true)
            w.write(b.lines.joined(separator: "\n") + "\n")
            w.close()
            return ([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), b.lines.count)
        }
        let first = try member("S1", 3000), second = try member("S2", 400), third = try member("S3", 200)
        let path = dir + "/joined.jsonl.gz"
        let cut = first.bytes.count / 2
        try Data(first.bytes.prefix(cut) + second.bytes + third.bytes).write(to: URL(fileURLWithPath: path))
        let r = try lctrace(["ingest", "--db", db, path])
        XCTAssertEqual(r.status, 65, r.err)
        let database = try SQLiteDatabase(path: db, mode: .readOnly)
        let kept = try database.scalarInt("SELECT count(*) FROM events_v") ?? 0
        XCTAssertTrue(r.err.contains("gzip member 1 is truncated at byte \(cut): another member starts there, and reading went on with it; \(NumberFormat.thousands(Int(kept))) events of it were kept"), r.err)
        XCTAssertEqual(try database.scalarInt("SELECT count(*) FROM events_v WHERE sid = 'S2'"), Int64(second.lines))
        XCTAssertEqual(try database.scalarInt("SELECT count(*) FROM events_v WHERE sid = 'S3'"), Int64(third.lines))
        XCTAssertEqual(try database.scalarInt("SELECT max(seq) FROM events_v WHERE sid = 'S3'"), Int64(third.lines - 1))
        XCTAssertGreaterThan(try database.scalarInt("SELECT count(*) FROM events_v WHERE sid = 'S1'") ?? 0, 1000)
        XCTAssertEqual(try database.scalarText("SELECT status FROM files"), "damaged")
        XCTAssertEqual(try database.scalarInt("SELECT count(*) FROM rejects WHERE kind = 'damage'"), 1)
        XCTAssertEqual(try database.scalarInt("SELECT count(*) FROM rejects WHERE reason LIKE 'line cut by damaged gzip data: %'"), 1)
        let report = try lctrace(["report", "--db", db, "--format", "json"])
        let findings = (try JSONSerialization.jsonObject(with: Data(report.out.utf8)) as? [String: Any])?["findings"] as? [[String: Any]] ?? []
        let kinds = Set(findings.filter { $0["rule"] as? String == "LC904" }.compactMap { ($0["detail"] as? [String: Any])?["kind"] as? String })
        XCTAssertTrue(kinds.isSuperset(of: ["truncated-gzip", "cut-line"]), "\(kinds)")
    }

    func testAFIFOAsTheDatabaseIsRefusedNotWaitedFor() throws {
        let fifo = dir + "/fifo.db"
        XCTAssertEqual(mkfifo(fifo, 0o644), 0)
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"A""#)
        TestSupport.writeLines(b.lines, to: dir + "/s.jsonl")
        for args in [["ingest", "--db", fifo, dir + "/s.jsonl"], ["report", "--db", fifo], ["sessions", "--db", fifo],
                     ["analyze", "--db", fifo], ["query", "--db", fifo, "SELECT 1"]] {
            let r = try lctrace(args, timeout: 20)
            XCTAssertEqual(r.status, 74, "\(args[0]): \(r.err)")
            XCTAssertTrue(r.err.contains("\(fifo) is not a regular file (a FIFO)"), r.err)
        }
        // A FIFO where the write-ahead log goes.
        let db = try sampleDatabase()
        let made = mkfifo(db + "-wal", 0o644); let why = String(cString: strerror(errno)); let listing = try FileManager.default.contentsOfDirectory(atPath: dir)
        XCTAssertEqual(made, 0, "\(why) \(listing)")
        let wal = try lctrace(["report", "--db", db], timeout: 20)
        XCTAssertEqual(wal.status, 74, wal.err)
        XCTAssertTrue(wal.err.contains("\(db)-wal is not a regular file (a FIFO)"), wal.err)
    }

    func testADatabaseWhoseSchemaWasChangedIsRefusedNamingWhat() throws {
        let db = try sampleDatabase()
        func alter(_ sql: String) throws { try SQLiteDatabase(path: db).execute(sql) }
        try SQLiteDatabase(path: db).execute("VACUUM INTO '\(dir)/clean.db'")
        func restore() throws {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + suffix) }
            try FileManager.default.copyItem(atPath: dir + "/clean.db", toPath: db)
        }
        try alter("""
            DROP TABLE findings;
            CREATE VIEW findings AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r)
            SELECT x AS id, 'LC101' AS rule, '' AS name, 'error' AS severity, NULL AS session, NULL AS vc, NULL AS since,
                   NULL AS cls, NULL AS t, '' AS message, '[]' AS evidence, 'high' AS confidence, NULL AS file, NULL AS detail FROM r;
            """)
        for args in [["report", "--db", db], ["sessions", "--db", db], ["query", "--db", db, "SELECT count(*) FROM findings"],
                     ["analyze", "--db", db]] {
            let r = try lctrace(args, timeout: 20)
            XCTAssertEqual(r.status, 74, "\(args[0]): \(r.err)")
            XCTAssertTrue(r.err.hasPrefix("Error: \(db): the schema is not lctrace's ("), r.err)
            XCTAssertTrue(r.err.contains("table findings is replaced by a view"), r.err)
        }
        // A trigger that drops every new event.
        try restore()
        try alter("CREATE TRIGGER swallow AFTER INSERT ON events BEGIN DELETE FROM events WHERE rowid = new.rowid; END")
        var b = TraceBuilder(sid: "NEW")
        b.vc(2, "init", "0xb", #""cls":"B""#)
        TestSupport.writeLines(b.lines, to: dir + "/new.jsonl")
        let ingest = try lctrace(["ingest", "--db", db, dir + "/new.jsonl"], timeout: 20)
        XCTAssertEqual(ingest.status, 74, ingest.err)
        XCTAssertTrue(ingest.err.contains("trigger swallow is not lctrace's"), ingest.err)
        // An index of its own is a change too; SQLite's statistics tables are not.
        try restore()
        try alter("ANALYZE")
        XCTAssertEqual(try lctrace(["report", "--db", db, "--fail-on", "never"]).status, 0, "sqlite_stat1 is SQLite's")
        try alter("CREATE INDEX mine ON events (t)")
        XCTAssertTrue(try lctrace(["report", "--db", db]).err.contains("index mine is not lctrace's"))
    }

    // MARK: 10. Exit codes

    func testACorruptPageUnderQueryIsADatabaseError() throws {
        var b = TraceBuilder()
        for i in 0..<20_000 { b.add(Double(10 + i), "mark", "\"name\":\"m\(i % 97)\"") }
        TestSupport.writeLines(b.lines, to: dir + "/s.jsonl")
        XCTAssertEqual(try lctrace(["ingest", "-q", "--no-analyze", "--db", db, dir + "/s.jsonl"]).status, 0)
        // Scribble over pages in the middle of the file (the events table), not the schema page.
        let handle = FileHandle(forUpdatingAtPath: db)!
        let size = handle.seekToEndOfFile()
        handle.seek(toFileOffset: size / 2)
        handle.write(Data(repeating: 0xA5, count: 16_384))
        handle.closeFile()
        let r = try lctrace(["query", "--db", db, "SELECT sum(t) FROM events"])
        let listing = try FileManager.default.contentsOfDirectory(atPath: dir)
        XCTAssertEqual(r.status, 74, r.out + r.err + "\(size) \(listing)")
        XCTAssertTrue(r.err.contains("malformed"), r.err)
        XCTAssertEqual(try lctrace(["query", "--db", db, "SELEC 1"]).status, 64, "bad SQL stays a usage error")
    }

    func testAnalyzeOnAMissingDatabaseSaysSoAndCreatesNothing() throws {
        let missing = dir + "/missing.db"
        let r = try lctrace(["analyze", "--db", missing])
        XCTAssertEqual(r.status, 74)
        XCTAssertEqual(r.err, "Error: no database at \(missing) (run `lctrace ingest` first, or pass --db)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing))
    }

    // MARK: 9. Query costs

    func testQueryCostsAreBoundedAndTheProcessRevealsNothing() throws {
        let db = try sampleDatabase()
        // 120,000 trailing spaces: quadratic before (about 30 s), now at once.
        let spaces = try lctrace(["query", "--db", db, "SELECT 1 AS one" + String(repeating: " ", count: 120_000)], timeout: 15)
        XCTAssertEqual(spaces.status, 0, spaces.err)
        for sql in ["SELECT hex(fts3_tokenizer('simple'))", "SELECT load_extension('/lib/x86_64-linux-gnu/libc.so.6')"] {
            let r = try lctrace(["query", "--db", db, sql])
            XCTAssertEqual(r.status, 64, sql)
            XCTAssertTrue(r.err.contains("not authorized to use function"), r.err)
        }
        let tooBig = try lctrace(["query", "--db", db, "SELECT zeroblob(100000000)"])
        XCTAssertEqual(tooBig.status, 64)
        XCTAssertTrue(tooBig.err.contains("string or blob too big"), tooBig.err)
        // 16 MB printed in pieces: every byte there, the table shows the beginning.
        let csv = try lctrace(["query", "--db", db, "-f", "csv", "SELECT zeroblob(16000000) AS z, 'after' AS a"])
        XCTAssertEqual(csv.status, 0, csv.err)
        XCTAssertEqual(csv.out.utf8.count, "z,a\n".utf8.count + 2 + 32_000_000 + 1 + ",after\n".utf8.count)
        XCTAssertTrue(csv.out.hasPrefix("z,a\nx'0000") && csv.out.hasSuffix("00',after\n"))
        let json = try lctrace(["query", "--db", db, "-f", "json", "SELECT printf('%.*c', 200000, 'q') || '\"' AS t"])
        let rows = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as! [[String: String]]
        XCTAssertEqual(rows.first?["t"], String(repeating: "q", count: 200_000) + "\"")
        let table = try lctrace(["query", "--db", db, "SELECT zeroblob(16000000) AS z"])
        XCTAssertTrue(table.out.contains("x'000000"), table.out)
        XCTAssertLessThan(table.out.utf8.count, 400)
        // A query that never ends, stopped by --timeout.
        let endless = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT max(x) FROM r"
        let stopped = try lctrace(["query", "--db", db, "--timeout", "300ms", endless], timeout: 20)
        XCTAssertEqual(stopped.status, 74, stopped.err)
        XCTAssertEqual(stopped.err, "Error: query stopped after 300ms (--timeout); what was printed before is incomplete\n")
        XCTAssertEqual(try lctrace(["query", "--db", db, "--timeout", "5", "SELECT 1"]).status, 64, "a unit is needed")
    }

    // MARK: 11. Terminal injection

    func testEscapeSequencesFromTracesAndFileNamesNeverReachATerminalRaw() throws {
        var b = TraceBuilder(sid: "S\\u001b]0;TITLE\\u0007")
        b.vc(2, "init", "0x\\u001b[2J", #""cls":"Evil\u001b[2JController""#)
        b.vc(3, "viewAttached", "0x\\u001b[2J", #""host":"0xh""#)
        b.vc(4, "init", "0xf", #""cls":"=HYPERLINK(\"http://x\")""#)
        b.vc(5, "viewAttached", "0xf", #""host":"0xh""#)
        var lines = b.lines
        lines.append(#"{"v":1,"sid":"S","seq":9,"t":1,"ev":"mark","\u001b[31m":1,"\u001b[31m":2}"#)
        let path = dir + "/dev\u{1B}[2J.jsonl"
        TestSupport.writeLines(lines, to: path)
        let ingest = try lctrace(["ingest", "--db", db, path])
        XCTAssertEqual(ingest.status, 0, ingest.err)
        XCTAssertTrue(ingest.err.contains("Warning: \(dir)/dev\\u001b[2J.jsonl:7: duplicate key '\\u001b[31m'"), ingest.err)
        var outputs = ["ingest": ingest.out + ingest.err]
        for (name, args) in [("report", ["report", "--db", db, "--fail-on", "never"]), ("sessions", ["sessions", "--db", db]),
                             ("query", ["query", "--db", db, "SELECT class, vc, sid FROM events_v WHERE event = 'init'"]),
                             ("error", ["report", "--db", db, "--session", "\u{1B}[2J"])] {
            let r = try lctrace(args)
            outputs[name] = r.out + r.err
        }
        for (name, text) in outputs {
            XCTAssertFalse(text.utf8.contains(0x1B), "\(name) printed a raw escape: \(text)")
            XCTAssertFalse(text.utf8.contains(0x07), "\(name) printed a raw bell")
        }
        XCTAssertTrue(outputs["report"]!.contains("Evil\\u001b[2JController"), outputs["report"]!)
        XCTAssertTrue(outputs["query"]!.contains("S\\u001b]0;TITLE\\u0007"), outputs["query"]!)
        XCTAssertTrue(outputs["error"]!.contains("no session matches --session '\\u001b[2J'"), outputs["error"]!)
        // JSON escapes as JSON does; CSV keeps the data, and neutralises formulas on request.
        let json = try lctrace(["report", "--db", db, "-f", "json", "--fail-on", "never"])
        XCTAssertFalse(json.out.utf8.contains(0x1B))
        XCTAssertTrue(json.out.contains("Evil\\u001b[2JController"), json.out)
        let csv = try lctrace(["report", "--db", db, "-f", "csv", "--fail-on", "never"]).out
        XCTAssertTrue(csv.contains("Evil\u{1B}[2JController"), "CSV is data")
        XCTAssertTrue(csv.contains(",\"=HYPERLINK(\"\"http://x\"\")\","), csv)
        let safe = try lctrace(["report", "--db", db, "-f", "csv", "--safe-csv", "--fail-on", "never"]).out
        XCTAssertTrue(safe.contains(",\"'=HYPERLINK(\"\"http://x\"\")\","), safe)
        let query = try lctrace(["query", "--db", db, "-f", "csv", "--safe-csv", "SELECT class, -1 AS n FROM events_v WHERE class LIKE '=%'"]).out
        XCTAssertEqual(query, "class,n\n\"'=HYPERLINK(\"\"http://x\"\")\",-1\n", "numbers are left alone")
    }

    /// The text timeline shows class, session and app names escaped as `report` does: a
    /// screen clear, a window title (OSC … BEL) and a right-to-left override stay visible text.
    func testTheTextTimelineEscapesTraceStringsAsReportDoes() throws {
        var b = TraceBuilder(sid: "T\\u001b]0;TITLE\\u0007", app: "App\\u202Eevil\\u001b[2J", version: "1\\u0007")
        b.vc(2, "init", "0xa", #""cls":"Evil\u001b[2JController""#)
        b.vc(3, "viewAttached", "0xa", #""host":"0xh""#)
        b.vc(4, "viewWillAppear", "0xa", #""animated":false"#)
        b.vc(5, "viewDidAppear", "0xa", #""animated":false"#)
        let path = dir + "/timeline.jsonl"
        TestSupport.writeLines(b.lines, to: path)
        XCTAssertEqual(try lctrace(["ingest", "--db", db, path]).status, 0)
        let r = try lctrace(["timeline", "--db", db, "--session", "T", "--width", "120"])
        XCTAssertEqual(r.status, 0, r.err)
        let text = r.out + r.err
        XCTAssertFalse(text.utf8.contains(0x1B), "timeline printed a raw escape: \(text)")
        XCTAssertFalse(text.utf8.contains(0x07), "timeline printed a raw bell: \(text)")
        XCTAssertFalse(text.unicodeScalars.contains("\u{202E}"), "timeline printed a raw RTL override")
        XCTAssertTrue(text.contains("Evil\\u001b[2JController"), text)
        XCTAssertTrue(text.contains("T\\u001b]0;TITLE\\u0007"), text)
        XCTAssertTrue(text.contains("App\\u202eevil\\u001b[2J"), text)
    }

    /// `compare --format text` escapes build, class and example text as `report` does.
    func testCompareTextEscapesTraceStrings() throws {
        for (i, build) in ["B\\u001b[2J", "2"].enumerated() {
            var b = TraceBuilder(sid: "C\(i)", build: build)
            b.vc(2, "init", "0xa", #""cls":"Evil\u001b]0;T\u0007Controller""#)
            b.vc(3, "viewAttached", "0xa", #""host":"0xh""#)
            let path = dir + "/compare\(i).jsonl"
            TestSupport.writeLines(b.lines, to: path)
            XCTAssertEqual(try lctrace(["ingest", "--db", db, path]).status, 0)
        }
        let r = try lctrace(["compare", "--db", db, "--base-build", "B\u{1B}[2J", "--head-build", "2", "--fail-on", "never"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertFalse((r.out + r.err).utf8.contains(0x1B), "compare printed a raw escape: \(r.out)\(r.err)")
        XCTAssertFalse((r.out + r.err).utf8.contains(0x07), "compare printed a raw bell")
        XCTAssertTrue(r.out.contains("B\\u001b[2J"), r.out)
    }

    /// `compare --format markdown` goes into a pull-request comment: rendered by a real
    /// CommonMark/GFM renderer (markdown-it-py), the class, app, session, view and build strings
    /// of a trace add no element, link, image, heading, comment or table cell, and every
    /// @mention, #reference and URL they carry stays inside a code span (where GitHub links
    /// nothing), kept whole.
    func testCompareMarkdownKeepsTraceTextInert() throws {
        guard let python = TestSupport.validatorPython else {
            throw XCTSkip("no renderer: run .ci/run (it makes .ci/venv with markdown-it-py) or set LCTRACE_VALIDATOR_PYTHON")
        }
        let planted = #"<img src=https://e.example/x.png>|`x``\r# Planted @octocat #1 [l](https://e.example) www.e.example <!-- \u202E"#
        let sides = [("B1", "1<details open>", "Old<details open><summary>s</summary>\n\n## Base @base"),
                     ("H1<b>@sid", "2 <img src=x> @build #2", "Evil" + planted)]
        for (sid, build, cls) in sides {
            var b = TraceBuilder(sid: sid, app: "com.<b>evil</b>@app\\r# App", build: build)
            b.vc(2, "init", "0x<a href=https://e.example>", #""cls":"\#(cls.replacingOccurrences(of: "\n", with: "\\n"))""#)
            b.vc(3, "viewAttached", "0x<a href=https://e.example>", #""host":"<a href=https://e.example>h</a>|x""#)
            let path = dir + "/\(sid.prefix(2)).jsonl"
            TestSupport.writeLines(b.lines, to: path)
            XCTAssertEqual(try lctrace(["ingest", "-q", "--db", db, path]).status, 0)
        }
        let r = try lctrace(["compare", "--db", db, "--base-build", "1<details open>", "--head-build", "2 <img src=x> @build #2",
                             "-f", "markdown", "--fail-on", "never"])
        XCTAssertEqual(r.status, 0, r.err)
        let file = dir + "/comment.md"
        try r.out.write(toFile: file, atomically: true, encoding: .utf8)
        let rendered = try TestSupport.process(python, [TestSupport.root.appendingPathComponent("scripts/render-markdown.py").path, file])
        if rendered.status == 3 { throw XCTSkip("\(python): \(rendered.out)") }
        XCTAssertEqual(rendered.status, 0, rendered.err)
        let html = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(rendered.out.utf8)) as? [String: Any])
        let tags = html["tags"] as? [String] ?? [], rows = html["rows"] as? [Int] ?? []
        let code = html["code"] as? [String] ?? [], outside = html["outside"] as? String ?? ""
        let context = "\(r.out)\n→\n\(html["html"] ?? "")"
        XCTAssertEqual(Set(tags).subtracting(["h3", "p", "strong", "table", "thead", "tbody", "tr", "th", "td", "code"]), [],
                       "the trace planted elements: \(context)")
        XCTAssertEqual(html["headings"] as? [String], ["✅ lctrace: build 2 <img src=x> @build #2 against 1<details open>"], context)
        XCTAssertEqual(html["comments"] as? [String], [], context)
        XCTAssertEqual(rows, Array(repeating: 6, count: rows.count), "a row gained or lost cells: \(context)")
        XCTAssertEqual(rows.count, 2, "a header and the new LC101 (LC502 persists): \(context)")
        for reference in ["@", "#1", "#2", "http", "www.", "<", "](", "\u{202E}", "\r"] {
            XCTAssertFalse(outside.contains(reference), "\(reference) outside a code span: \(context)")
        }
        // The text is kept, shown: the carriage return and the override as escapes, in code.
        XCTAssertTrue(code.contains { $0.hasPrefix("Evil<img src=https://e.example/x.png>|`x``\\u000d# Planted @octocat #1 [l](") },
                      "the class is not shown whole: \(code)")
        XCTAssertTrue(code.contains { $0.contains("Old<details open><summary>s</summary>\\u000a\\u000a## Base @base") }, "\(code)")
    }

    // MARK: 6. Reports on a database that is not analyzed

    /// What `report` (JSON, and its exit status at --fail-on warning) and `sessions` say of a database.
    func answers(_ db: String) throws -> [String] {
        let report = try lctrace(["report", "--db", db, "-f", "json", "--fail-on", "warning"])
        let sessions = try lctrace(["sessions", "--db", db, "-f", "csv"])
        return [report.out, "exit \(report.status)", sessions.out, sessions.err]
    }

    /// A copy of a database (with its log), analyzed.
    func analyzedCopy(of db: String, _ name: String) throws -> String {
        let copy = dir + "/" + name
        try SQLiteDatabase(path: db, mode: .readOnly).execute("VACUUM INTO '\(copy)'")
        let r = try lctrace(["analyze", "--db", copy])
        XCTAssertEqual(r.status, 0, r.err)
        return copy
    }

    func testReportAndSessionsOnADatabaseNotAnalyzedSayWhatAnAnalyzedOneSays() throws {
        let o = CorpusOptions.make(seed: 41, sessions: 16, scenarios: 80, rotateEvery: 500, linesPerMember: 400)
        let corpus = dir + "/corpus"
        try CorpusWriter.write(plans: CorpusWriter.randomPlans(o), to: corpus, options: o)
        _ = try CorpusWriter.writeBadLinesFile(to: corpus + "/bad.jsonl", seed: 41)
        let analyzed = dir + "/analyzed.db"
        XCTAssertEqual(try lctrace(["ingest", "-q", "--db", analyzed, corpus]).status, 0)
        let expected = try answers(analyzed)
        XCTAssertEqual(expected[1], "exit 1", "LC904 and others are warnings")
        XCTAssertTrue(expected[0].contains("\"LC904\""))

        // ingest --no-analyze: nothing analyzed at all.
        let loaded = dir + "/loaded.db"
        XCTAssertEqual(try lctrace(["ingest", "-q", "--no-analyze", "--db", loaded, corpus]).status, 0)
        XCTAssertEqual(try answers(loaded), expected, "after ingest --no-analyze")

        // A killed analyze: some sessions analyzed, the others dirty, no file findings stored.
        var killedMidway = 0
        for (i, fraction) in [0.3, 0.6].enumerated() {
            let db = dir + "/k\(i).db"
            XCTAssertEqual(try lctrace(["ingest", "-q", "--no-analyze", "--db", db, corpus]).status, 0)
            let started = Date()
            XCTAssertEqual(try lctrace(["analyze", "--db", try analyzedCopy(of: db, "timing\(i).db")]).status, 0)
            let duration = Date().timeIntervalSince(started)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: TestSupport.binary)
            p.arguments = ["analyze", "--all", "--db", db]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            usleep(useconds_t(duration * fraction * 1_000_000))
            if p.isRunning { kill(p.processIdentifier, SIGKILL); killedMidway += 1 }
            p.waitUntilExit()
            XCTAssertEqual(try answers(db), expected, "after analyze killed at \(fraction)")
            XCTAssertEqual(try answers(try analyzedCopy(of: db, "c\(i).db")), expected)
        }
        // A killed ingest: whatever was loaded is reported as an analysis of it would.
        let partial = dir + "/partial.db"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: TestSupport.binary)
        p.arguments = ["ingest", "-q", "--db", partial, corpus]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        usleep(300_000)
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        if FileManager.default.fileExists(atPath: partial) {
            XCTAssertEqual(try answers(partial), try answers(try analyzedCopy(of: partial, "partial-analyzed.db")), "after a killed ingest")
        }
        _ = killedMidway
    }

    // MARK: 7. Loads killed in another pid namespace

    /// A generated corpus of rotated, multi-member files, how long an ingest of it takes, and the
    /// logical dump of the database it makes.
    func corpusAndReference(seed: UInt64, sessions: Int) throws -> (corpus: String, seconds: Double, dump: String) {
        let o = CorpusOptions.make(seed: seed, sessions: sessions, scenarios: 60, rotateEvery: 400, linesPerMember: 300)
        let corpus = dir + "/corpus"
        try CorpusWriter.write(plans: CorpusWriter.randomPlans(o), to: corpus, options: o)
        let reference = dir + "/ref.db"
        let started = Date()
        XCTAssertEqual(try lctrace(["ingest", "-q", "--db", reference, corpus]).status, 0)
        return (corpus, Date().timeIntervalSince(started), try TestSupport.logicalDump(reference))
    }

    /// Runs `launcher + lctrace ingest` and kills it with SIGKILL after `seconds`; true when it
    /// was killed midway (a row left `loading`).
    func killIngestMidway(_ launcher: [String], db: String, input: String, after seconds: Double) throws -> Bool {
        let r = try signal(SIGKILL, after: seconds, ["ingest", "-q", "--db", db, input], launcher: launcher)
        guard r.wasRunning, FileManager.default.fileExists(atPath: db) else { return false }
        return (try SQLiteDatabase(path: db, mode: .readOnly).scalarInt("SELECT count(*) FROM files WHERE status = 'loading'") ?? 0) > 0
    }

    func testALoadKilledInAnotherPidNamespaceIsResumed() throws {
        let (corpus, duration, expected) = try corpusAndReference(seed: 23, sessions: 20)

        // A kill whose process id means something else here: pid 1 is alive in every namespace.
        var resumed = 0
        for (i, fraction) in [0.3, 0.5, 0.7].enumerated() {
            let db = dir + "/pid\(i).db"
            guard try killIngestMidway([], db: db, input: corpus, after: duration * fraction) else { continue }
            try SQLiteDatabase(path: db).execute("UPDATE files SET loader_pid = 1 WHERE status = 'loading'")
            XCTAssertEqual(try lctrace(["ingest", "-q", "--db", db, corpus]).status, 0)
            XCTAssertEqual(try TestSupport.logicalDump(db), expected, "a load of 'pid 1', killed, then resumed")
            resumed += 1
        }
        XCTAssertGreaterThan(resumed, 0, "a kill landed while a file was loading")

        // A real ingest in a pid namespace of its own (as in a container), killed there.
        let unshare = ["/usr/bin/unshare", "--pid", "--fork", "--kill-child"]
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: unshare[0]),
              (try? TestSupport.process(unshare[0], Array(unshare.dropFirst()) + ["/bin/true"]).status) == 0 else {
            throw XCTSkip("cannot make a pid namespace here (needs root and unshare)")
        }
        var inNamespace = 0
        for (i, fraction) in [0.3, 0.5, 0.7].enumerated() {
            let db = dir + "/ns\(i).db"
            guard try killIngestMidway(unshare, db: db, input: corpus, after: duration * fraction + 0.05) else { continue }
            let pids = try SQLiteDatabase(path: db, mode: .readOnly).scalarText("SELECT group_concat(loader_pid) FROM files WHERE status = 'loading'")
            XCTAssertEqual(try lctrace(["ingest", "-q", "--db", db, corpus]).status, 0)
            XCTAssertEqual(try TestSupport.logicalDump(db), expected, "killed in its own pid namespace (loader_pid \(pids ?? "?")), then resumed")
            inNamespace += 1
        }
        XCTAssertGreaterThan(inNamespace, 0, "a kill landed while a file was loading in the namespace")
    }

    // MARK: 12. Signals, and files that grew

    /// Starts `launcher + lctrace args` (a launcher such as unshare runs lctrace inside it), once
    /// `ready` holds waits `seconds` more, sends `signo`, and returns what it did.
    func signal(_ signo: Int32, after seconds: Double, _ args: [String], launcher: [String] = [], stdin: Pipe? = nil,
                once ready: (() -> Bool)? = nil) throws -> (status: Int32, err: String, wasRunning: Bool) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: launcher.first ?? TestSupport.binary)
        p.arguments = Array(launcher.dropFirst()) + (launcher.isEmpty ? [] : [TestSupport.binary]) + args
        let err = Pipe()
        p.standardOutput = FileHandle.nullDevice
        p.standardError = err
        if let stdin { p.standardInput = stdin }
        try p.run()
        if let ready {
            let deadline = Date().addingTimeInterval(20)
            while !ready() && Date() < deadline { usleep(10_000) }
        }
        usleep(useconds_t(seconds * 1_000_000))
        let running = p.isRunning
        kill(p.processIdentifier, signo)
        let watchdog = DispatchWorkItem { kill(p.processIdentifier, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 20, execute: watchdog)
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        watchdog.cancel()
        let status = p.terminationReason == .uncaughtSignal ? 128 + p.terminationStatus : p.terminationStatus
        return (status, text, running)
    }

    func testSIGINTAndSIGTERMEndAnIngestCleanlyAndTheSameCommandFinishesIt() throws {
        let (corpus, duration, expected) = try corpusAndReference(seed: 29, sessions: 40)
        // Each signal once it has landed while the ingest ran (timing varies on a loaded machine).
        var landed: Set<Int32> = []
        for (i, (signo, fraction)) in [SIGINT, SIGTERM].flatMap({ s in [0.3, 0.5, 0.15, 0.7].map { (s, $0) } }).enumerated()
        where !landed.contains(signo) {
            let db = dir + "/s\(i).db"
            let r = try signal(signo, after: duration * fraction, ["ingest", "-q", "--db", db, corpus],
                               once: { FileManager.default.fileExists(atPath: db + "-loaders") })
            guard r.wasRunning, r.status != 0 else { continue }
            landed.insert(signo)
            XCTAssertEqual(r.status, 128 + signo, r.err)
            let last = r.err.split(separator: "\n").last.map(String.init) ?? ""
            XCTAssertTrue(last.hasPrefix("interrupted: ") && last.hasSuffix(" loaded; run the same command again to finish"), r.err)
            // The log was copied back, no lock is held, and the same command finishes the work.
            XCTAssertEqual((try? FileManager.default.attributesOfItem(atPath: db + "-wal")[.size] as? Int) ?? 0, 0, "the log is empty")
            XCTAssertEqual(try SQLiteDatabase(path: db, mode: .readOnly).scalarText("PRAGMA integrity_check"), "ok")
            XCTAssertEqual(try lctrace(["ingest", "-q", "--db", db, corpus]).status, 0)
            XCTAssertEqual(try TestSupport.logicalDump(db), expected, "signal \(signo) at \(fraction), then the same command")
        }
        XCTAssertEqual(landed, [SIGINT, SIGTERM], "both signals landed while the ingest ran")

        // Waiting on a pipe that sends nothing: the signal still ends it.
        let silent = Pipe()
        let waiting = try signal(SIGTERM, after: 0.3, ["ingest", "--db", dir + "/pipe.db", "-"], stdin: silent,
                                 once: { FileManager.default.fileExists(atPath: self.dir + "/pipe.db-loaders") })
        XCTAssertEqual(waiting.status, 143, waiting.err)
        XCTAssertTrue(waiting.err.hasSuffix("interrupted: 0 files loaded; run the same command again to finish\n"), waiting.err)
        silent.fileHandleForWriting.closeFile()

        // analyze, stopped while it waits for another writer's lock: it stops before any work.
        let big = dir + "/s-analyze.db"
        XCTAssertEqual(try lctrace(["ingest", "-q", "--no-analyze", "--db", big, corpus]).status, 0)
        let holder = try SQLiteDatabase(path: big)
        try holder.execute("BEGIN IMMEDIATE")
        let release = DispatchWorkItem { try? holder.execute("ROLLBACK") }
        DispatchQueue.global().asyncAfter(deadline: .now() + 1.0, execute: release)
        let a = try signal(SIGINT, after: 0.6, ["analyze", "--all", "--db", big])
        release.wait()
        XCTAssertEqual(a.status, 130, a.err)
        XCTAssertEqual(a.err, "interrupted: before any session was analyzed; run the same command again to finish\n")
        XCTAssertEqual(try SQLiteDatabase(path: big, mode: .readOnly).scalarInt("SELECT count(*) FROM sessions WHERE dirty = 0"), 0)
        XCTAssertEqual(try lctrace(["analyze", "--db", big]).status, 0)
        XCTAssertEqual(try TestSupport.logicalDump(big), expected)
    }

    /// LC904 reads a file's rejects in the order they were stored, not sorted (a file of a
    /// million rejected lines sorted by line took SQLite a gigabyte and every later command
    /// seconds), and still tells what a read in line order told: a kind's lowest 20 lines in
    /// order, the kinds in the order of their first line, reasons grouped and counted.
    func testRejectsReadInStoredOrderGiveWhatALineOrderGave() throws {
        let db = dir + "/r.db"
        var lines = ["{\"v\":1,\"sid\":\"S\",\"seq\":0,\"t\":0,\"ev\":\"session\",\"wall\":\"2026-11-02T10:15:03.120Z\"}"]
        for i in 0..<3000 { lines.append(i % 100 == 7 ? "{\"v\":1}" : "x\(i % 3)") }
        TestSupport.writeLines(lines, to: dir + "/bad.jsonl")
        XCTAssertEqual(try lctrace(["ingest", "-q", "--db", db, dir + "/bad.jsonl"]).status, 0)
        // Rows stored out of line order, as a batch's refused lines then its other rejects are
        // on PostgreSQL: a not-JSON line before every stored one, and a kind of no line.
        let w = try SQLiteDatabase(path: db)
        try w.execute("INSERT INTO rejects (file, kind, line, reason) VALUES (1, 'line', 1, 'not valid JSON: expected ''{'', found ''q'' at column 1')")
        try w.execute("INSERT INTO rejects (file, kind, line, reason) VALUES (1, 'line', NULL, 'key ''name'': expected a string at column 9')")
        // Two reasons of one count, stored against their line order: the first in line order leads.
        try w.execute("INSERT INTO rejects (file, kind, line, reason) VALUES (1, 'line', 2000, 'unsupported format version 3 (lctrace reads version 1)')")
        try w.execute("INSERT INTO rejects (file, kind, line, reason) VALUES (1, 'line', 1000, 'unsupported format version 2 (lctrace reads version 1)')")
        let problems = try DatabaseReader(db: w).fileProblems()
        XCTAssertEqual(problems.count, 1)
        let kinds = problems[0].1.kinds
        // A row of no line first, as SQLite sorts NULL.
        XCTAssertEqual(kinds.map(\.kind), ["wrong-type", "not-json", "missing-key", "newer-version"])
        XCTAssertEqual(kinds[3].reasons.map(\.0), ["unsupported format version 2 (lctrace reads version 1)",
                                                    "unsupported format version 3 (lctrace reads version 1)"])
        XCTAssertEqual(kinds[3].lines, [1000, 2000])
        XCTAssertEqual(kinds[0].lines, [])
        XCTAssertEqual(kinds[0].reasons.map(\.0), ["key 'name': expected a string"])
        XCTAssertEqual(kinds[1].count, 2971)
        XCTAssertEqual(kinds[1].lines, Array(1...8) + Array(10...21))
        XCTAssertEqual(kinds[1].reasons.map(\.1), [2970, 1])
        XCTAssertEqual(kinds[2].count, 30)
        XCTAssertEqual(kinds[2].lines.prefix(3), [9, 109, 209])
    }

    func testAFileReadWhileGrowingIsReplacedByItsWholeRead() throws {
        var b = TraceBuilder()
        for i in 0..<3000 { b.add(Double(10 + i), "mark", "\"name\":\"m\(i % 13)\"") }
        let whole = dir + "/whole.jsonl.gz"
        let w = try TraceFileWriter(path: whole, gzip: true)
        w.write(b.lines.joined(separator: "\n") + "\n")
        w.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        // The recorder is still writing: a reader sees the first part of the stream.
        let growing = dir + "/device.jsonl.gz"
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: growing))
        let first = try lctrace(["ingest", "--db", db, growing])
        XCTAssertEqual(first.status, 65, first.err)
        XCTAssertTrue(first.err.contains("damaged: gzip stream truncated"), first.err)
        // It finished growing; the same path is loaded again.
        try bytes.write(to: URL(fileURLWithPath: growing))
        let second = try lctrace(["ingest", "--db", db, growing])
        XCTAssertEqual(second.status, 0, second.err)
        XCTAssertEqual(second.err, "")
        XCTAssertTrue(second.out.contains("replaced  \(growing): an earlier read of it while it was being written"), second.out)
        let d = try SQLiteDatabase(path: db, mode: .readOnly)
        XCTAssertEqual(try d.scalarText("SELECT group_concat(status) FROM files"), "complete")
        XCTAssertEqual(try d.scalarInt("SELECT count(*) FROM rejects"), 0)
        XCTAssertEqual(try d.scalarInt("SELECT count(*) FROM events"), 3002)
        let report = try lctrace(["report", "--db", db, "--quality", "--fail-on", "warning"])
        XCTAssertFalse(report.out.contains("LC904"), report.out)
        // A different file under the same path is not taken for a grown one.
        var other = TraceBuilder(sid: "OTHER")
        for i in 0..<5000 { other.add(Double(10 + i), "mark", "\"name\":\"n\(i % 7)\"") }
        TestSupport.writeLines(other.lines, to: dir + "/p.jsonl")
        try Data("{\"v\":1,\"sid\":\"X\",\"seq\":0,\"t\":0,\"ev\":\"mark\"}\n{\"cut".utf8).write(to: URL(fileURLWithPath: dir + "/q.jsonl"))
        XCTAssertEqual(try lctrace(["ingest", "-q", "--db", db, dir + "/q.jsonl"]).status, 0)
        try FileManager.default.removeItem(atPath: dir + "/q.jsonl")
        try FileManager.default.moveItem(atPath: dir + "/p.jsonl", toPath: dir + "/q.jsonl")
        XCTAssertEqual(try lctrace(["ingest", "-q", "--db", db, dir + "/q.jsonl"]).status, 0)
        XCTAssertEqual(try d.scalarInt("SELECT count(*) FROM files WHERE path = '\(dir)/q.jsonl'"), 2, "not a prefix: both reads stay")
    }
}
