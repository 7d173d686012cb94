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

/// Real processes: an ingest killed with SIGKILL at several moments and run again ends with
/// exactly the content of an uninterrupted run; two ingests writing one database at once
/// both succeed and lose nothing. Bounded in time: a few seconds each.
final class FaultTests: TemporaryDirectoryTestCase {

    func corpus(_ name: String, seed: UInt64, sessions: Int) throws -> String {
        let o = CorpusOptions.make(seed: seed, sessions: sessions, scenarios: 60, rotateEvery: 400, linesPerMember: 300)
        let path = dir + "/" + name
        try CorpusWriter.write(plans: CorpusWriter.randomPlans(o), to: path, options: o)
        _ = try CorpusWriter.writeBadLinesFile(to: path + "/bad.jsonl", seed: seed)
        return path
    }

    func integrity(_ db: String) throws -> String? {
        try SQLiteDatabase(path: db, mode: .readOnly).scalarText("PRAGMA integrity_check")
    }

    func testKillDuringIngestThenRerunGivesTheSameDatabase() throws {
        let input = try corpus("c", seed: 21, sessions: 24)
        let binary = TestSupport.binary
        let reference = dir + "/ref.db"
        let started = Date()
        let ref = try TestSupport.process(binary, ["ingest", "-q", "--db", reference, input])
        let duration = Date().timeIntervalSince(started)
        XCTAssertEqual(ref.status, 0, ref.err)
        let expected = try TestSupport.logicalDump(reference)
        var killedMidway = 0
        for (i, fraction) in [0.1, 0.3, 0.5, 0.7, 0.9].enumerated() {
            let db = dir + "/k\(i).db"
            let p = Process()
            p.executableURL = URL(fileURLWithPath: binary)
            p.arguments = ["ingest", "-q", "--db", db, input]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            usleep(useconds_t(duration * fraction * 1_000_000))
            if p.isRunning {
                kill(p.processIdentifier, SIGKILL)
                killedMidway += 1
            }
            p.waitUntilExit()
            if FileManager.default.fileExists(atPath: db) {
                XCTAssertEqual(try integrity(db), "ok", "after a kill at \(fraction)")
            }
            let rerun = try TestSupport.process(binary, ["ingest", "-q", "--db", db, input])
            XCTAssertEqual(rerun.status, 0, rerun.err)
            XCTAssertEqual(try integrity(db), "ok")
            XCTAssertEqual(try TestSupport.logicalDump(db), expected, "kill at \(fraction) of the run, then rerun")
        }
        XCTAssertGreaterThan(killedMidway, 2, "the kills landed while the ingest ran")
    }

    /// Four ingests on overlapping file sets at once, one killed twice and run again: the
    /// same content as one clean ingest (the PostgreSQL backend passes the same test).
    func testConcurrentIngestersWithKillsEndWithTheContentOfOneCleanIngest() throws {
        let input = try corpus("c", seed: 47, sessions: 24)
        let files = try FileManager.default.contentsOfDirectory(atPath: input).filter { $0.hasSuffix(".gz") }.sorted().map { input + "/" + $0 }
        try TestSupport.concurrentIngestsWithKills(files, reference: dir + "/ref.db", shared: dir + "/shared.db", logs: dir)
        let loading = try SQLiteDatabase(path: dir + "/shared.db", mode: .readOnly).scalarInt("SELECT count(*) FROM files WHERE status = 'loading'")
        XCTAssertEqual(loading, 0, "every file row was finished")
    }

    func testTwoConcurrentIngestsBothSucceedAndLoseNothing() throws {
        let a = try corpus("a", seed: 31, sessions: 12)
        let b = try corpus("b", seed: 32, sessions: 12)
        let binary = TestSupport.binary
        let reference = dir + "/ref.db"
        XCTAssertEqual(try TestSupport.process(binary, ["ingest", "-q", "--db", reference, a, b]).status, 0)
        let expected = try TestSupport.logicalDump(reference)
        // Different inputs at once, then the same inputs at once.
        for (name, left, right) in [("different", a, b), ("same", a, a)] {
            let db = dir + "/\(name).db"
            if name == "same" { XCTAssertEqual(try TestSupport.process(binary, ["ingest", "-q", "--db", db, b]).status, 0) }
            let processes = [left, right].map { input -> Process in
                let p = Process()
                p.executableURL = URL(fileURLWithPath: binary)
                p.arguments = ["ingest", "-q", "--db", db, input]
                p.standardOutput = FileHandle.nullDevice
                p.standardError = FileHandle.nullDevice
                return p
            }
            for p in processes { try p.run() }
            for p in processes { p.waitUntilExit() }
            XCTAssertEqual(processes.map(\.terminationStatus), [0, 0], name)
            XCTAssertEqual(try integrity(db), "ok")
            XCTAssertEqual(try TestSupport.logicalDump(db), expected, "\(name) inputs ingested concurrently")
        }
    }
}
