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
#if canImport(Glibc)
import Glibc
#endif

/// Limits with clear errors, and the database on a full or read-only disk.
final class LimitTests: TemporaryDirectoryTestCase {

    func testAnOverlongLineIsRejectedAndTheNextKept() throws {
        var b = TraceBuilder()
        b.add(2, "mark", "\"name\":\"before\"")
        var lines = b.lines
        lines.append("{\"v\":1,\"sid\":\"S1\",\"seq\":3,\"t\":1,\"ev\":\"mark\",\"blob\":\"" + String(repeating: "x", count: 8 << 20) + "\"}")
        b.seq = 4
        b.add(5, "mark", "\"name\":\"after\"")
        lines.append(b.lines.last!)
        TestSupport.writeLines(lines, to: dir + "/long.jsonl")
        let r = TestSupport.run(["ingest", "--db", db, dir + "/long.jsonl"])
        XCTAssertEqual(r.status, 0)
        XCTAssertTrue(r.err.contains("long.jsonl:4: line longer than 1048576 bytes (\(lines[3].utf8.count) bytes)"), r.err)
        let d = try SQLiteDatabase(path: db, mode: .readOnly)
        XCTAssertEqual(try d.scalarInt("SELECT count(*) FROM events"), 4)
        XCTAssertEqual(try d.scalarInt("SELECT length(text) FROM rejects"), 200, "only the first 200 bytes are kept")
        XCTAssertEqual(try d.scalarInt("SELECT offset FROM rejects"), Int64(lines[0..<3].map { $0.utf8.count + 1 }.reduce(0, +)))
    }

    func testALeadingByteOrderMarkIsTolerated() throws {
        var b = TraceBuilder()
        b.add(2, "mark", "\"name\":\"x\"")
        var data = Data([0xEF, 0xBB, 0xBF])
        data.append(Data((b.lines.joined(separator: "\n") + "\n").utf8))
        try data.write(to: URL(fileURLWithPath: dir + "/bom.jsonl"))
        let r = TestSupport.run(["ingest", "--db", dir + "/t.db", dir + "/bom.jsonl"])
        XCTAssertEqual(r.status, 0)
        XCTAssertEqual(r.err, "")
    }

    /// A small tmpfs: needs root and permission to mount (CI runs as root); skipped elsewhere.
    func mountTmpfs(_ path: String, size: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let r = try TestSupport.process("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path])
        if r.status != 0 { throw XCTSkip("cannot mount a tmpfs here: \(r.err)") }
        addTeardownBlock { _ = try? TestSupport.process("/bin/umount", ["-l", path]) }
    }

    func testAFullDiskExits74WithOneLine() throws {
        let mnt = dir + "/small"
        try mountTmpfs(mnt, size: "300k")
        let corpus = TestSupport.root.appendingPathComponent("SampleTraces").path
        let r = TestSupport.run(["ingest", "--db", mnt + "/t.db", corpus])
        XCTAssertEqual(r.status, 74, r.out + r.err)
        let errorLines = r.err.split(separator: "\n").filter { $0.hasPrefix("Error:") }
        XCTAssertEqual(errorLines.count, 1, r.err)
        XCTAssertTrue(errorLines[0].contains("database or disk is full") || errorLines[0].contains("disk I/O error"), r.err)
        // The hint is about the failure: a full disk, or the I/O error a full tmpfs can give.
        XCTAssertTrue(r.err.contains("Hint: the disk holding the database (or the temporary folder) is full")
                      || r.err.contains("Hint: the system could not read or write the database file"), r.err)
    }

    func testAReadOnlyDiskExits74() throws {
        let mnt = dir + "/ro"
        try mountTmpfs(mnt, size: "20m")
        var b = TraceBuilder()
        b.add(2, "mark", "\"name\":\"x\"")
        TestSupport.writeLines(b.lines, to: dir + "/x.jsonl")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", mnt + "/t.db", dir + "/x.jsonl"]).status, 0)
        let remount = try TestSupport.process("/bin/mount", ["-o", "remount,ro", mnt])
        XCTAssertEqual(remount.status, 0, remount.err)
        b.add(3, "mark", "\"name\":\"y\"")
        TestSupport.writeLines(b.lines, to: dir + "/y.jsonl")
        let r = TestSupport.run(["ingest", "--db", mnt + "/t.db", dir + "/y.jsonl"])
        XCTAssertEqual(r.status, 74, r.out + r.err)
        XCTAssertEqual(r.err.split(separator: "\n").filter { $0.hasPrefix("Error:") }.count, 1, r.err)
        // Reading still works.
        XCTAssertEqual(TestSupport.run(["sessions", "--db", mnt + "/t.db"]).status, 0)
    }
}
