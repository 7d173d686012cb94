import Foundation
import XCTest
@testable import LCTraceRecorder
import LCTraceFormat
import LCTraceIngest
import LCTraceModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process recording at a high rate, killed with SIGKILL at random moments, leaves files
/// lctrace reads: every event flushed before the kill is there, seq contiguous up to the
/// cut (or a hole the recorder marked as dropped), and the only damage a cut tail.
final class CrashSafetyTests: XCTestCase {
    /// lctrace-recorder-stress, built by `swift test` next to the test bundle.
    static var stressTool: URL? {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let candidates = [beside, beside.deletingLastPathComponent(), root.appendingPathComponent(".build/debug")]
            .map { $0.appendingPathComponent("lctrace-recorder-stress") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    func testKilledTwentyTimesLeavesFilesReadUpToTheCut() throws {
        let tool = try XCTUnwrap(CrashSafetyTests.stressTool, "lctrace-recorder-stress was not built")
        let dir = RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var seed = UInt64(Date().timeIntervalSince1970 * 1000) & 0xffff_ffff
        print("kill test seed \(seed)")
        func random(_ range: ClosedRange<UInt64>) -> UInt64 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return range.lowerBound + (seed >> 33) % (range.upperBound - range.lowerBound + 1)
        }

        /// Per session: the highest seq a flush report said was written.
        var flushed: [String: Int64] = [:]
        var sessions: [String] = []
        let kills = 20
        for _ in 0..<kills {
            let process = Process()
            process.executableURL = tool
            process.arguments = ["record", dir.path, "--threads", "2", "--rate", "60000", "--flush-ms", "20"]
            let out = Pipe()
            process.standardOutput = out
            try process.run()
            // The random moment counts from the first member written (a sanitized build starts slowly).
            var text = ""
            let deadline = Date().addingTimeInterval(20)
            while !text.contains("flushed"), Date() < deadline {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            usleep(UInt32(random(20...400)) * 1000)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            XCTAssertEqual(process.terminationReason, .uncaughtSignal)
            text += String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            var sid: String?
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ")
                if words.first == "started", words.count == 2 { sid = String(words[1]); sessions.append(String(words[1])) }
                if words.first == "flushed", words.count == 4, let sid, let seq = Int64(words[1]) {
                    flushed[sid] = max(flushed[sid] ?? -1, seq)
                }
            }
        }

        var files = 0, kept = 0, lostAtTail = 0, dropped = 0, cutTails = 0
        for sid in sessions {
            let paths = TraceDirectory.list(dir).filter { $0.name.session == sid }
            files += paths.count
            var events: [TraceEvent] = []
            for (index, path) in paths.enumerated() {
                let file = try DecodedFile(path.url)
                if file.events.isEmpty && file.rejects.isEmpty && file.damage == nil {
                    // Killed between opening a part and its first write.
                    XCTAssertEqual(index, paths.count - 1, "\(path.name.text) is empty but not the last part")
                    cutTails += 1
                    continue
                }
                // The only damage: a cut tail (a truncated member, or a last line without its end).
                for reject in file.rejects {
                    XCTAssertTrue(reject.unterminated, "\(path.name.text) line \(reject.line): \(reject.reason)")
                }
                if file.damage != nil || !file.rejects.isEmpty { cutTails += 1 }
                XCTAssertEqual(file.events.first?.kind, .session, "\(path.name.text) does not start with the session record")
                events += file.events
            }
            let seqs = Set(events.map(\.seq))
            XCTAssertEqual(seqs.count, events.count, "a seq written twice in \(sid)")
            let highest = seqs.max() ?? -1
            // Every flushed event is there.
            if let reported = flushed[sid] { XCTAssertGreaterThanOrEqual(highest, reported, "flushed events of \(sid) are missing") }
            // Up to the cut, seq is contiguous but for holes the recorder marked as dropped.
            var explained = Set<Int64>()
            for mark in events where mark.detail == EventBuffer.droppedMarkName {
                let attrs = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data((mark.attrs ?? "").utf8)) as? [String: Any])
                let first = try XCTUnwrap((attrs["firstSeq"] as? NSNumber)?.int64Value)
                let count = try XCTUnwrap((attrs["dropped"] as? NSNumber)?.int64Value)
                dropped += Int(count)
                for s in first..<mark.seq where !seqs.contains(s) { explained.insert(s) }
            }
            if highest >= 0 {
                let holes = Set(0...highest).subtracting(seqs)
                XCTAssertEqual(holes.subtracting(explained), [], "unexplained holes in \(sid)")
            }
            kept += events.count
            // The calls each thread made (counted in shared memory, which outlives the kill):
            // the events made after the last flush are the tail the kill cost.
            if let counts = FileManager.default.contents(atPath: dir.appendingPathComponent("\(sid).calls").path) {
                let calls = counts.withUnsafeBytes { raw in (0..<2).reduce(0) { $0 + Int(raw.load(fromByteOffset: $1 * 64, as: UInt64.self)) } }
                let made = events.filter { $0.kind != .session && $0.detail != EventBuffer.droppedMarkName }.count
                lostAtTail += max(0, calls - made - Int(explained.count))
            }
        }
        XCTAssertEqual(sessions.count, kills, "a process died before it started recording")
        XCTAssertEqual(flushed.count, kills, "a process was killed before its first member")
        print("kill test: \(kills) kills, \(files) files, \(kept) events kept, \(lostAtTail) events lost at the tail "
              + "(made after the last flush), \(dropped) dropped (buffer full, marked), \(cutTails) files with a cut tail")
    }

    /// A file cut in the middle of its last member (a kill during a write, or a power loss):
    /// lctrace keeps every earlier member and the lines of the cut one up to the cut, and
    /// reports the damage; a cut line is the only reject.
    func testFileCutInsideAMemberIsReadUpToTheCut() throws {
        let dir = RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var config = RecorderTests.configuration(dir)
        config.flushInterval = 3600
        let r = try TraceRecorder(configuration: config)
        var before = 0
        for member in 0..<3 {
            for i in 0..<300 { r.mark("member \(member) event \(i) " + String(repeating: "x", count: i % 50)) }
            XCTAssertTrue(r.flush(timeout: 10))
            if member < 2 { before = Int(r.statistics.written) }
        }
        r.stop()
        let url = try XCTUnwrap(TraceDirectory.list(dir).first?.url)
        let whole = try Data(contentsOf: url)
        let members = try XCTUnwrap(r.statistics.members)
        XCTAssertEqual(members, 4)  // three flushes and the stop
        for cut in [whole.count - 200, whole.count - 600, whole.count - 1200] {
            try whole.prefix(cut).write(to: url)
            let file = try DecodedFile(url)
            XCTAssertNotNil(file.damage, "a cut at \(cut) of \(whole.count) was not reported")
            XCTAssertGreaterThanOrEqual(file.events.count, before, "events of whole members lost at a cut at \(cut)")
            XCTAssertEqual(file.events.map(\.seq), Array(0..<Int64(file.events.count)), "not contiguous up to the cut")
            for reject in file.rejects { XCTAssertTrue(reject.unterminated, reject.reason) }
        }
    }
}
