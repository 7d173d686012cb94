import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 25 items 1, 2 and 4: `-o` never replaces what is not a regular file, a failed write
/// on standard output exits 74, and every gate and every `-o` says what it did on stderr.
final class OutputDestinationTests: XCTestCase {
    private static let sampleDB: String = {
        let dir = TestSupport.temporaryDirectory("OutputDestinationSample")
        let db = dir + "/sample.db"
        let ingest = TestSupport.run(["ingest", "-q", "--db", db, TestSupport.root.appendingPathComponent("SampleTraces").path])
        precondition(ingest.status == 0, ingest.err)
        return db
    }()

    private func fileType(_ path: String, follow: Bool = false) -> mode_t {
        var info = stat()
        XCTAssertEqual(follow ? stat(path, &info) : lstat(path, &info), 0, path)
        return info.st_mode & S_IFMT
    }

    func testOutputToSymlinkWritesTheTargetAndKeepsTheLink() throws {
        let dir = TestSupport.temporaryDirectory()
        let target = dir + "/target.sarif"
        try "old".write(toFile: target, atomically: true, encoding: .utf8)
        XCTAssertEqual(symlink("target.sarif", dir + "/link.sarif"), 0)
        let run = TestSupport.run(["report", "--db", Self.sampleDB, "-f", "sarif", "--fail-on", "never", "-o", dir + "/link.sarif"])
        XCTAssertEqual(run.status, 0, run.err)
        XCTAssertEqual(fileType(dir + "/link.sarif"), S_IFLNK, "the symlink was replaced")
        XCTAssertTrue(try String(contentsOfFile: target, encoding: .utf8).contains("\"runs\""))
        // A dangling link: its target is created, the link stays.
        XCTAssertEqual(symlink("new.json", dir + "/dangling.json"), 0)
        XCTAssertEqual(TestSupport.run(["export", "--db", Self.sampleDB, "--session", "db9c5598", "-o", dir + "/dangling.json"]).status, 0)
        XCTAssertEqual(fileType(dir + "/dangling.json"), S_IFLNK)
        XCTAssertEqual(fileType(dir + "/new.json"), S_IFREG)
    }

    func testOutputToFIFOIsWrittenThrough() throws {
        let dir = TestSupport.temporaryDirectory()
        let fifo = dir + "/pipe"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        // The reader: another process, as a consumer of a named pipe is.
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = ["-c", "cat '\(fifo)' > '\(dir)/received'"]
        try reader.run()
        let run = TestSupport.run(["report", "--db", Self.sampleDB, "--fail-on", "never", "-o", fifo])
        XCTAssertEqual(run.status, 0, run.err)
        if fileType(fifo) != S_IFIFO { reader.terminate() }
        reader.waitUntilExit()
        XCTAssertEqual(fileType(fifo), S_IFIFO, "the FIFO was replaced by a file")
        XCTAssertTrue(((try? String(contentsOfFile: dir + "/received", encoding: .utf8)) ?? "").contains("finding"), "the reader got nothing")
    }

    func testOutputToCharacterDeviceKeepsTheDevice() throws {
        var path = "/dev/null"
        if getuid() == 0 {
            path = TestSupport.temporaryDirectory() + "/null"
            XCTAssertEqual(mknod(path, S_IFCHR | 0o666, dev_t((1 << 8) | 3)), 0)
        }
        for args in [["report", "--fail-on", "never"], ["timeline", "--session", "db9c5598"], ["baseline"]] {
            let run = TestSupport.run(args + ["--db", Self.sampleDB, "-o", path])
            XCTAssertEqual(run.status, 0, "\(args): \(run.err)")
            XCTAssertEqual(fileType(path), S_IFCHR, "\(args) replaced \(path)")
        }
    }

    func testEveryOutputSaysWhatItWrote() throws {
        let dir = TestSupport.temporaryDirectory()
        for (name, args) in [("r.html", ["report", "-f", "html", "--fail-on", "never"]), ("t.svg", ["timeline", "--session", "db9c5598", "-f", "svg"]),
                             ("e.json", ["export", "--session", "db9c5598"])] {
            let run = TestSupport.run(args + ["--db", Self.sampleDB, "-o", dir + "/" + name])
            XCTAssertEqual(run.status, 0, run.err)
            XCTAssertTrue(run.err.contains("Wrote \(dir)/\(name) ("), "\(args): \(run.err)")
        }
    }

    /// `compare` gained `-o` (item 1) and gates like `report` (item 4): the file, its `Wrote`
    /// line, and the gate's line last, with and without `-o`.
    func testCompareWritesThroughOAndSaysWhatDecidedTheExitStatus() throws {
        let file = TestSupport.temporaryDirectory() + "/compare.txt"
        let args = ["compare", "--db", Self.sampleDB, "--base-build", "806", "--head-build", "812"]
        let written = TestSupport.run(args + ["-o", file])
        XCTAssertEqual(written.status, 1, written.err)
        XCTAssertEqual(written.out, "")
        XCTAssertTrue(try String(contentsOfFile: file, encoding: .utf8).hasPrefix("lctrace compare · base 806"))
        XCTAssertTrue(written.err.contains("Wrote \(file) ("), written.err)
        for run in [written, TestSupport.run(args)] {
            let last = run.err.split(separator: "\n").last ?? ""
            XCTAssertTrue(last.hasPrefix("gate: fails: ") && last.hasSuffix("new defects at or above error (--fail-on error)"), run.err)
        }
        let passing = TestSupport.run(args + ["--fail-on", "never"])
        XCTAssertEqual(passing.status, 0, passing.err)
        XCTAssertEqual(passing.err.split(separator: "\n").last, "gate: passes: --fail-on never")
    }

    /// `-o /dev/stdout` (a link to /proc/self/fd/1) writes through to standard output.
    func testOutputToDevStdoutReachesStandardOutput() throws {
        guard FileManager.default.fileExists(atPath: "/dev/stdout") else { throw XCTSkip("no /dev/stdout") }
        let out = TestSupport.temporaryDirectory() + "/captured.json"
        let command = ([TestSupport.binary, "report", "--db", Self.sampleDB, "-f", "json", "--fail-on", "never", "-o", "/dev/stdout"])
            .map { "'\($0)'" }.joined(separator: " ") + " > '\(out)'"
        let run = try TestSupport.process("/bin/sh", ["-c", command], timeout: 120)
        XCTAssertEqual(run.status, 0, run.err)
        let text = try String(contentsOfFile: out, encoding: .utf8)
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
        XCTAssertTrue(run.err.contains("Wrote /dev/stdout ("), run.err)
        // Still the system's link, not a file renamed over it.
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: "/dev/stdout")[.type] as? FileAttributeType, .typeSymbolicLink)
    }

    func testReportGateSaysWhatDecidedTheExitStatus() {
        let failing = TestSupport.run(["report", "--db", Self.sampleDB, "-f", "sarif", "--fail-on", "error"])
        XCTAssertEqual(failing.status, 1)
        let last = failing.err.split(separator: "\n").last ?? ""
        // Defects (identities) and their findings, as the report's JSON has them.
        let json = TestSupport.run(["report", "--db", Self.sampleDB, "-f", "json", "--fail-on", "never"])
        let findings = ((try? JSONSerialization.jsonObject(with: Data(json.out.utf8))) as? [String: Any])?["findings"] as? [[String: Any]] ?? []
        let errors = findings.filter { $0["severity"] as? String == "error" }
        let defects = Set(errors.compactMap { $0["identity"] as? String }).count
        XCTAssertGreaterThan(defects, 1)
        XCTAssertEqual(String(last), "gate: fails: \(defects) defects (\(errors.count) findings) at or above error (--fail-on error)", failing.err)
        let passing = TestSupport.run(["report", "--db", Self.sampleDB, "--fail-on", "never"])
        XCTAssertEqual(passing.status, 0)
        XCTAssertEqual(passing.err.split(separator: "\n").last, "gate: passes: --fail-on never")
    }

    func testWriteErrorOnStandardOutputExits74() throws {
        guard FileManager.default.fileExists(atPath: "/dev/full") else { throw XCTSkip("no /dev/full") }
        let db = Self.sampleDB
        for args in [["report", "-f", "sarif", "--fail-on", "never"], ["sessions"], ["baseline", "-o", "-"], ["export", "--session", "db9c5598"],
                     ["timeline", "--session", "db9c5598"], ["query", "SELECT * FROM events_v"]] {
            let command = ([TestSupport.binary] + args + ["--db", db]).map { "'\($0)'" }.joined(separator: " ") + " > /dev/full"
            let run = try TestSupport.process("/bin/sh", ["-c", command], timeout: 120)
            XCTAssertEqual(run.status, 74, "\(args): \(run.err)")
            XCTAssertTrue(run.err.contains("cannot write to standard output: no space left on device"), "\(args): \(run.err)")
        }
        // The gate's verdict is not said of a document nobody got.
        let report = try TestSupport.process("/bin/sh", ["-c", "'\(TestSupport.binary)' report --db '\(db)' --fail-on never > /dev/full"], timeout: 120)
        XCTAssertEqual(report.status, 74)
        XCTAssertFalse(report.err.contains("gate:"), report.err)
        // Warnings that cannot reach standard error fail a run that would pass.
        let dir = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        TestSupport.writeLines([#"{"v":1,"sid":"a","seq":0,"t":0,"ev":"session","wall":"2026-11-02T10:15:03.120Z"}"#, "not json"], to: dir + "/bad.jsonl")
        let ingest = "'\(TestSupport.binary)' ingest --db '\(dir)/x.db' '\(dir)/bad.jsonl' 2>/dev/full >/dev/null"
        XCTAssertEqual(try TestSupport.process("/bin/sh", ["-c", ingest], timeout: 120).status, 74)
        // A standard error left non-blocking (a parent's pipe) that fills up is waited for, not lost.
        // 200 files of bad lines: about 140 KB of warnings, more than a pipe holds.
        let many = dir + "/many"
        try FileManager.default.createDirectory(atPath: many, withIntermediateDirectories: true)
        for f in 0..<200 {
            let sid = #"{"v":1,"sid":"s\#(f)","seq":0,"t":0,"ev":"session","wall":"2026-11-02T10:15:03.120Z"}"#
            TestSupport.writeLines([sid] + (0..<7).map { "not json \(f) \($0)" }, to: many + "/device-\(f)-with-a-long-name-to-fill-the-pipe.jsonl")
        }
        let slow = Process()
        slow.executableURL = URL(fileURLWithPath: TestSupport.binary)
        slow.arguments = ["ingest", "-q", "--db", dir + "/y.db", many]
        let errors = Pipe()
        let writeEnd = errors.fileHandleForWriting.fileDescriptor
        XCTAssertEqual(fcntl(writeEnd, F_SETFL, fcntl(writeEnd, F_GETFL) | O_NONBLOCK), 0)
        slow.standardError = errors
        slow.standardOutput = FileHandle.nullDevice
        try slow.run()
        try errors.fileHandleForWriting.close()
        Thread.sleep(forTimeInterval: 1)  // the pipe fills (64 KiB) before anyone reads
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        slow.waitUntilExit()
        XCTAssertEqual(slow.terminationStatus, 0, said.suffix(300).description)
        XCTAssertGreaterThan(said.utf8.count, 65_536)
        XCTAssertEqual(said.components(separatedBy: "more rejected lines").count - 1, 200, said.suffix(300).description)
        // A closed pipe still ends quietly.
        let command = "'\(TestSupport.binary)' query --db '\(db)' 'SELECT * FROM events_v' | head -1 >/dev/null"
        let piped = try TestSupport.process("/bin/sh", ["-c", command], timeout: 120)
        XCTAssertEqual(piped.status, 0)
        XCTAssertEqual(piped.err, "")
    }
}

/// Issue 25 item 19: help names only documents the repository has.
final class HelpNamesExistingDocumentsTests: XCTestCase {
    func testReportHelpNamesNoMissingDocument() throws {
        let help = TestSupport.run(["report", "--help"]).out
        let named = help.split(whereSeparator: { $0 == " " || $0 == "(" || $0 == ")" || $0 == "," || $0 == "\n" })
            .filter { $0.hasSuffix(".md") }.map(String.init)
        for name in named {
            let path = TestSupport.root.appendingPathComponent(name).path
            XCTAssertTrue(FileManager.default.fileExists(atPath: path), "report --help names \(name), which does not exist")
        }
    }
}
