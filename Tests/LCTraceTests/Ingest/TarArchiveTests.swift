import Foundation
import XCTest
@testable import LCTraceIngest
@testable import LCTraceSQLite

/// Tar archives of traces (device farms and CI artefacts arrive as tarballs): read member by
/// member, each a trace file named ARCHIVE:MEMBER; a zip archive refused by name. The
/// archives are made by the system's own tar in the formats it writes.
final class TarArchiveTests: TemporaryDirectoryTestCase {
    /// A folder name longer than 100 bytes, so that a member's name needs ustar's prefix, a pax
    /// `path` record or a GNU long name.
    let longFolder = "device-farm-run-2026-12-05/" + String(repeating: "x", count: 80)

    /// `farm/`: a gzip'd trace in a long-named folder, a plain trace, and an empty folder.
    func makeFarm() throws -> String {
        let farm = dir + "/farm"
        try FileManager.default.createDirectory(atPath: farm + "/" + longFolder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: farm + "/empty", withIntermediateDirectories: true)
        var a = TraceBuilder(sid: "SA", build: "41")
        a.vc(2, "init", "0xa", #""cls":"HomeViewController""#)
        TestSupport.writeLines(a.lines, to: farm + "/\(longFolder)/a.jsonl")
        XCTAssertEqual(try TestSupport.process("/usr/bin/gzip", [farm + "/\(longFolder)/a.jsonl"]).status, 0)
        var b = TraceBuilder(sid: "SB", build: "42")
        b.vc(3, "init", "0xb", #""cls":"LoginViewController""#)
        TestSupport.writeLines(b.lines, to: farm + "/b.jsonl")
        return farm
    }

    func tar(_ args: [String]) throws {
        let r = try TestSupport.process("/usr/bin/tar", args)
        XCTAssertEqual(r.status, 0, r.err)
    }

    func sessions() throws -> [String] {
        let r = TestSupport.run(["query", "--db", db, "-f", "csv", "SELECT sid, app, build FROM sessions ORDER BY sid"])
        XCTAssertEqual(r.status, 0, r.err)
        return r.out.split(separator: "\n").dropFirst().map(String.init)
    }

    func filePaths() throws -> [String] {
        let r = TestSupport.run(["query", "--db", db, "-f", "csv", "SELECT path, status, rejects FROM files ORDER BY path"])
        XCTAssertEqual(r.status, 0, r.err)
        return r.out.split(separator: "\n").dropFirst().map(String.init)
    }

    /// ustar, pax and GNU archives, gzip'd or not, each loads every member whole: the session
    /// record of each member is read (app and build kept), nothing is rejected, and loading the
    /// archive again adds nothing.
    func testTarArchivesLoadMemberByMemberInEveryFormat() throws {
        let farm = try makeFarm()
        for (format, name) in [("ustar", "farm.tar.gz"), ("pax", "farm.tgz"), ("gnu", "farm.tar"), ("pax", "farm-renamed.gz")] {
            try? FileManager.default.removeItem(atPath: db)
            let archive = dir + "/" + name
            let compress = name.hasSuffix("gz") ? ["-z"] : []
            try tar(["--format=\(format)"] + compress + ["-cf", archive, "-C", farm, "."])
            let first = TestSupport.run(["ingest", "--db", db, archive])
            XCTAssertEqual(first.status, 0, "\(format) \(name): \(first.err)")
            XCTAssertEqual(try sessions(), ["SA,com.example.app,41", "SB,com.example.app,42"], "\(format) \(name)")
            XCTAssertEqual(try filePaths(), ["\(archive):./b.jsonl,complete,0", "\(archive):./\(longFolder)/a.jsonl.gz,complete,0"],
                           "\(format) \(name)")
            let before = try TestSupport.logicalDump(db)
            let again = TestSupport.run(["ingest", "--db", db, archive])
            XCTAssertEqual(again.status, 0, again.err)
            XCTAssertEqual(try TestSupport.logicalDump(db), before, "re-ingesting \(name) changed the database")
            XCTAssertTrue(again.out.hasPrefix("Loaded 0 files"), again.out)
        }
    }

    /// A directory walk loads the tarballs in it too.
    func testDirectoryWalkLoadsTarballs() throws {
        let farm = try makeFarm()
        let drop = dir + "/drop"
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        try tar(["-czf", drop + "/farm.tgz", "-C", farm, "b.jsonl"])
        let r = TestSupport.run(["ingest", "--db", db, drop])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(try sessions(), ["SB,com.example.app,42"])
    }

    /// A bad line inside a gzip'd member is named by archive, member and line; a member that is
    /// not trace lines (documentation) is rejected as a plain file would be.
    func testErrorsNameArchiveMemberAndLine() throws {
        let farm = try makeFarm()
        try "# Campaign\nnotes\n".write(toFile: farm + "/README.md", atomically: true, encoding: .utf8)
        var c = TraceBuilder(sid: "SC")
        c.lines.insert("{not json", at: 1)
        TestSupport.writeLines(c.lines, to: farm + "/c.jsonl")
        XCTAssertEqual(try TestSupport.process("/usr/bin/gzip", [farm + "/c.jsonl"]).status, 0)
        let archive = dir + "/farm.tar.gz"
        try tar(["-czf", archive, "-C", farm, "README.md", "c.jsonl.gz", "b.jsonl"])
        let r = TestSupport.run(["ingest", "--db", db, archive])
        XCTAssertEqual(r.status, 65, r.err)
        XCTAssertTrue(r.err.contains("Warning: \(archive):c.jsonl.gz:2: "), r.err)
        XCTAssertTrue(r.err.contains("Warning: \(archive):README.md:1: "), r.err)
        XCTAssertTrue(r.err.contains("Error: \(archive):README.md: not a single valid trace line"), r.err)
        XCTAssertEqual(try sessions(), ["SB,com.example.app,42", "SC,com.example.app,1"])
    }

    /// A tarball cut inside its second member: the first member loaded whole, the second up
    /// to the cut, and the damage named with archive and member; exit 65.
    func testTruncatedTarballKeepsGoodMembersAndSaysWhere() throws {
        let farm = try makeFarm()
        var big = TraceBuilder(sid: "SZ")
        for i in 0..<400 { big.vc(Double(10 + i), "init", "0x\(i)", #""cls":"PaddingViewController""#) }
        TestSupport.writeLines(big.lines, to: farm + "/z.jsonl")
        let archive = dir + "/cut.tar"
        try tar(["-cf", archive, "-C", farm, "b.jsonl", "z.jsonl"])
        let whole = try Data(contentsOf: URL(fileURLWithPath: archive))
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: archive))
        let r = TestSupport.run(["ingest", "--db", db, archive])
        XCTAssertEqual(r.status, 65, r.err)
        XCTAssertTrue(r.err.contains("Error: \(archive):z.jsonl: damaged: the archive ends inside member z.jsonl"), r.err)
        XCTAssertEqual(try sessions(), ["SB,com.example.app,42", "SZ,com.example.app,1"])
        let files = try filePaths()
        XCTAssertEqual(files.first, "\(archive):b.jsonl,complete,0")
        XCTAssertTrue(files.last?.hasPrefix("\(archive):z.jsonl,damaged,") == true, "\(files)")

        // Cut at a member boundary: no end-of-archive block, said of the archive.
        try tar(["-cf", archive, "-C", farm, "b.jsonl"])
        let one = try Data(contentsOf: URL(fileURLWithPath: archive))
        try one.prefix(1024).write(to: URL(fileURLWithPath: archive))
        let cut = TestSupport.run(["ingest", "--db", dir + "/two.db", archive])
        XCTAssertEqual(cut.status, 65, cut.err)
        XCTAssertTrue(cut.err.contains("Error: \(archive): damaged: the archive ends without its end-of-archive block"), cut.err)

        // A gzip'd tarball cut short: the gzip damage is named.
        try tar(["-czf", archive + ".gz", "-C", farm, "b.jsonl", "z.jsonl"])
        let gz = try Data(contentsOf: URL(fileURLWithPath: archive + ".gz"))
        try gz.prefix(gz.count / 2).write(to: URL(fileURLWithPath: archive + ".gz"))
        let cutGz = TestSupport.run(["ingest", "--db", dir + "/three.db", archive + ".gz"])
        XCTAssertEqual(cutGz.status, 65, cutGz.err)
        XCTAssertTrue(cutGz.err.contains("archive damaged: gzip stream truncated"), cutGz.err)
    }

    /// A zip archive is refused by name, and by content under another name: exit 65, "extract it first".
    func testZipArchiveIsRefused() throws {
        let farm = try makeFarm()
        let zip = dir + "/farm.zip"
        let r = try TestSupport.process("/usr/bin/python3", ["-m", "zipfile", "-c", zip, farm + "/b.jsonl"])
        XCTAssertEqual(r.status, 0, r.err)
        let refused = TestSupport.run(["ingest", "--db", db, zip])
        XCTAssertEqual(refused.status, 65, refused.err)
        XCTAssertTrue(refused.err.contains("Error: \(zip): a zip archive"), refused.err)
        XCTAssertTrue(refused.err.contains("extract it first"), refused.err)
        try FileManager.default.moveItem(atPath: zip, toPath: dir + "/farm.bin")
        let renamed = TestSupport.run(["ingest", "--db", db, dir + "/farm.bin", farm + "/b.jsonl"])
        XCTAssertEqual(renamed.status, 65, renamed.err)
        XCTAssertTrue(renamed.err.contains("extract it first"), renamed.err)
        XCTAssertEqual(try sessions(), ["SB,com.example.app,42"])
    }

    /// The reader on its own: pax `path` records and GNU base-256 sizes are honoured.
    func testHeaderFields() {
        XCTAssertEqual(TarReader.paxRecords(Array("29 path=dir/a-very-long-name\n11 size=42\n".utf8)),
                       ["path": "dir/a-very-long-name", "size": "42"])
        var header = [UInt8](repeating: 0, count: 512)
        header[124] = 0x80
        header[135] = 0x05
        header[134] = 0x01
        XCTAssertEqual(header.withUnsafeBytes { TarReader.number($0, 124, 12) }, 261)
        let octal = Array("0000644\0".utf8)
        XCTAssertEqual(octal.withUnsafeBytes { TarReader.number($0, 0, 8) }, 0o644)
    }
}
