import Foundation
import XCTest
@testable import LCTraceRecorder
import LCTraceFormat
import LCTraceIngest
import LCTraceModel

/// A gate the writer thread waits at (from a flush observer), so a test can hold the writer
/// while the buffer fills.
final class WriterGate: @unchecked Sendable {
    private let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var armed = true
    private(set) var reports: [FlushReport] = []

    var observer: @Sendable (FlushReport) -> Void {
        { [self] report in
            let hold = lock.withLock { () -> Bool in
                reports.append(report)
                defer { armed = false }
                return armed
            }
            if hold { entered.signal(); released.wait() }
        }
    }

    func waitUntilHeld() -> Bool { entered.wait(timeout: .now() + 10) == .success }
    func release() { released.signal() }
    var allReports: [FlushReport] { lock.withLock { reports } }
}

final class RecorderBufferTests: XCTestCase {
    /// Any interval, age or timeout an app passes is accepted (infinity, 1e300, NaN, negative):
    /// none traps converting to nanoseconds, and the recorder still writes what it is given.
    func testExtremeIntervalsAndTimeoutsNeverTrap() throws {
        for value in [Double.infinity, 1e300, 1e12, -5, Double.nan] {
            let dir = RecorderTests.directory()
            defer { try? FileManager.default.removeItem(at: dir) }
            var config = RecorderTests.configuration(dir)
            config.flushInterval = value
            config.rotateAge = value
            let r = try TraceRecorder(configuration: config)
            r.mark("m")
            XCTAssertTrue(r.flush(timeout: value.isFinite && value > 0 ? min(value, 10) : 10), "\(value)")
            XCTAssertTrue(r.stop(timeout: value > 0 ? value : 10), "\(value)")
            XCTAssertEqual(try RecorderTests.events(dir).map(\.name), ["session", "mark", "sessionEnd"], "\(value)")
        }
    }

    /// A full buffer drops (never waits), counts, leaves the seq hole, and the next event
    /// that finds room comes after a mark that says how many were lost and from where.
    func testFullBufferDropsCountsAndMarksTheHole() throws {
        let dir = RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let gate = WriterGate()
        var config = RecorderTests.configuration(dir)
        config.bufferCapacity = 8
        config.flushInterval = 3600
        config.flushObserver = gate.observer
        let r = try TraceRecorder(configuration: config)
        r.flush()
        XCTAssertTrue(gate.waitUntilHeld(), "the writer never wrote the session record")
        // The writer is held: 8 fit, 12 are dropped, and none of these calls waits.
        for i in 0..<20 { r.mark("m\(i)") }
        XCTAssertEqual(r.statistics.dropped, 12)
        gate.release()
        XCTAssertTrue(r.flush(timeout: 10))
        r.mark("after")
        XCTAssertTrue(r.stop())

        let events = try RecorderTests.events(dir)
        XCTAssertEqual(events.map(\.seq), [0] + Array(1...8) + [21, 22, 23])
        XCTAssertEqual(events[1...8].map(\.detail), (0..<8).map { "m\($0)" })
        let mark = events[9]
        XCTAssertEqual(mark.detail, EventBuffer.droppedMarkName)
        XCTAssertEqual(mark.attrs, #"{"dropped":12,"firstSeq":9}"#)
        XCTAssertEqual(events[10].detail, "after")
        XCTAssertEqual(r.statistics.dropped, 12)
        XCTAssertEqual(r.statistics.recorded, 1 + 8 + 1 + 1 + 1)  // session, m0…m7, mark, after, sessionEnd
        // lctrace sees the hole: 12 lost events (LC901).
        let lost = try RecorderTests.findings(events).filter { $0.rule == "LC901" }
        XCTAssertEqual(lost.count, 1)
        XCTAssertTrue(lost.first?.message.contains("12") ?? false, lost.first?.message ?? "")
    }

    /// stop() gets its sessionEnd in even when the buffer is full: it waits for room (the one
    /// call that may wait), while other calls drop.
    func testStopWaitsForRoomForSessionEnd() throws {
        let dir = RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let gate = WriterGate()
        var config = RecorderTests.configuration(dir)
        config.bufferCapacity = 4
        config.flushInterval = 3600
        config.flushObserver = gate.observer
        let r = try TraceRecorder(configuration: config)
        r.flush()
        XCTAssertTrue(gate.waitUntilHeld())
        for i in 0..<10 { r.mark("m\(i)") }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { gate.release() }
        XCTAssertTrue(r.stop(timeout: 10))
        let events = try RecorderTests.events(dir)
        XCTAssertEqual(events.last?.kind, .sessionEnd)
        XCTAssertEqual(events.filter { $0.detail == EventBuffer.droppedMarkName }.count, 1)
    }
}

final class RecorderFileTests: XCTestCase {
    /// One gzip member per flush: two flushes and the stop make three members in one file.
    func testOneGzipMemberPerFlush() throws {
        let dir = RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var config = RecorderTests.configuration(dir)
        config.flushInterval = 3600
        let r = try TraceRecorder(configuration: config)
        for i in 0..<5 { r.mark("a\(i)") }
        XCTAssertTrue(r.flush(timeout: 10))
        for i in 0..<5 { r.mark("b\(i)") }
        XCTAssertTrue(r.flush(timeout: 10))
        r.mark("c")
        XCTAssertTrue(r.stop())
        let files = try RecorderTests.files(dir)
        XCTAssertEqual(files.count, 1)
        XCTAssertEqual(files[0].members, 3)
        XCTAssertEqual(files[0].events.count, 1 + 5 + 5 + 1 + 1)
        XCTAssertEqual(r.statistics.members, 3)
    }

    /// The writer flushes on its own once `flushEventCount` events wait, and once
    /// `flushInterval` has passed with any waiting.
    func testFlushesByCountAndByTime() throws {
        for byCount in [true, false] {
            let dir = RecorderTests.directory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let written = expectation(description: byCount ? "by count" : "by time")
            written.assertForOverFulfill = false
            let gate = WriterGate()
            var config = RecorderTests.configuration(dir)
            config.flushInterval = byCount ? 3600 : 0.05
            config.flushEventCount = 10
            let target: Int64 = byCount ? 10 : 1
            config.flushObserver = { report in
                gate.observer(report)
                if report.lastSeq >= target { written.fulfill() }
            }
            let r = try TraceRecorder(configuration: config)
            r.flush()
            XCTAssertTrue(gate.waitUntilHeld())
            gate.release()
            for i in 0..<(byCount ? 10 : 1) { r.mark("m\(i)") }
            wait(for: [written], timeout: 10)
            r.stop()
        }
    }

    /// Files rotate by size: every file starts with the session record (each copy with its
    /// own seq, the same content), seq runs on across files without a hole, names carry app,
    /// start, session and part, and only the last file ends the session.
    func testRotationBySizeRepeatsTheSessionRecord() throws {
        let dir = RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var config = RecorderTests.configuration(dir)
        config.rotateBytes = 4096
        config.flushInterval = 3600
        let r = try TraceRecorder(configuration: config)
        r.scene(.willConnect, scene: "s1")  // SDK 27 without a scene event would be LC502
        var generator = SystemRandomNumberGenerator()
        for batch in 0..<12 {
            // Text that does not compress, so each member is about 2 kB.
            for _ in 0..<20 { r.mark(String((0..<100).map { _ in Character(UnicodeScalar(UInt8.random(in: 97...122, using: &generator))) })) }
            XCTAssertTrue(r.flush(timeout: 10), "batch \(batch)")
        }
        XCTAssertTrue(r.stop())

        let files = try RecorderTests.files(dir)
        XCTAssertGreaterThan(files.count, 3)
        let sid = config.sessionID
        for (part, file) in files.enumerated() {
            XCTAssertEqual(file.url.lastPathComponent, "com.example.shop_20261102T101503Z_\(sid)_\(TraceFileName.partText(part)).jsonl.gz")
            XCTAssertEqual(file.events.first?.kind, .session, file.url.lastPathComponent)
            XCTAssertEqual(file.events.first?.session, files[0].events[0].session)
            XCTAssertEqual(file.events.first?.wall, "2026-11-02T10:15:03.120Z")
            XCTAssertEqual(file.events.filter { $0.kind == .session }.count, 1)
            XCTAssertEqual(file.rejects.count, 0)
            XCTAssertEqual(file.events.contains { $0.kind == .sessionEnd }, part == files.count - 1)
            if part < files.count - 1 { XCTAssertLessThan(try Data(contentsOf: file.url).count, 4096 + 3000) }
        }
        let seqs = files.flatMap(\.events).map(\.seq).sorted()
        XCTAssertEqual(seqs, Array(0..<Int64(seqs.count)))
        XCTAssertEqual(r.statistics.filesStarted, Int64(files.count))
        // lctrace agrees: one session, nothing lost, the copies agree.
        XCTAssertEqual(try RecorderTests.findings(files.flatMap(\.events)).map(\.rule), [])
    }

    /// Files rotate by age (on the monotonic clock of `t`), and on request.
    func testRotationByAge() throws {
        let dir = RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let clock = TestClock()
        var config = RecorderTests.configuration(dir, clock: clock)
        config.rotateAge = 1
        config.flushInterval = 3600
        let r = try TraceRecorder(configuration: config)
        r.mark("first")
        XCTAssertTrue(r.flush(timeout: 10))
        clock.advance(milliseconds: 600)
        r.mark("same file")
        XCTAssertTrue(r.flush(timeout: 10))
        clock.advance(milliseconds: 600)
        // The writer sees the age at its next flush: the file ends behind what is buffered then.
        XCTAssertTrue(r.flush(timeout: 10))
        r.mark("next file")
        XCTAssertTrue(r.stop())
        let files = try RecorderTests.files(dir)
        XCTAssertEqual(files.map { $0.events.compactMap(\.detail) }, [["first", "same file"], ["next file", "stopped"]])
        XCTAssertEqual(files.map { $0.events.first?.kind }, [.session, .session])
    }

    /// The byte cap deletes the oldest finished trace files first (never the file being
    /// written, never a file of another naming), counts them, and says so in the trace.
    func testByteCapDeletesOldestFinishedFilesFirst() throws {
        let dir = RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let old = ["com.example.shop_20251001T080000Z_OLD-A_0000.jsonl.gz", "com.example.shop_20251001T080000Z_OLD-A_0001.jsonl.gz",
                   "com.example.shop_20260101T000000Z_OLD-B_0000.jsonl.gz"]
        for name in old { try Data(repeating: 7, count: 3000).write(to: dir.appendingPathComponent(name)) }
        try Data(repeating: 1, count: 100_000).write(to: dir.appendingPathComponent("notes.txt"))
        var config = RecorderTests.configuration(dir)
        config.rotateBytes = 4096
        config.maxStoredBytes = 12_000  // 8,000 for finished files, 4,096 for the one being written
        let r = try TraceRecorder(configuration: config)
        r.mark("x")
        XCTAssertTrue(r.flush(timeout: 10))
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: dir.path))
        XCTAssertFalse(names.contains(old[0]))
        XCTAssertTrue(names.contains(old[1]) && names.contains(old[2]) && names.contains("notes.txt"), "\(names)")
        XCTAssertEqual(r.statistics.filesDeleted, 1)
        XCTAssertEqual(r.statistics.bytesDeleted, 3000)
        let head = try RecorderTests.files(dir).last!.events
        XCTAssertEqual(head.first?.kind, .session)
        let mark = try XCTUnwrap(head.first { $0.detail == TraceWriter.deletedMarkName })
        XCTAssertEqual(mark.attrs, #"{"files":1,"bytes":3000}"#)

        // Rotating on: the other old files go, then this session's own finished parts, never the active one.
        for _ in 0..<16 {
            for _ in 0..<20 { r.mark(String((0..<100).map { _ in Character(UnicodeScalar(UInt8.random(in: 97...122))) })) }
            XCTAssertTrue(r.flush(timeout: 10))
        }
        XCTAssertTrue(r.stop())
        let left = TraceDirectory.list(dir)
        XCTAssertFalse(left.contains { $0.name.session.hasPrefix("OLD") }, "\(left.map(\.name.text))")
        // The cap, give or take the last member (a file rotates once it reached rotateBytes).
        XCTAssertLessThanOrEqual(left.reduce(0) { $0 + $1.size }, 12_000 + 2_500)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("notes.txt").path))
        let last = try XCTUnwrap(left.last)
        XCTAssertEqual(try DecodedFile(last.url).events.last?.kind, .sessionEnd, "the last file was deleted")
        XCTAssertGreaterThan(r.statistics.filesDeleted, 3)
        // Every deletion is in the trace, in the files that remain or in those deleted after it.
        let marked = try left.flatMap { try DecodedFile($0.url).events }.filter { $0.detail == TraceWriter.deletedMarkName }
        XCTAssertFalse(marked.isEmpty)
    }

    /// What an app may get wrong is refused or bounded where lctrace would reject every line:
    /// a session id outside the format's 1 to 128 characters, a mark past lctrace's line
    /// limit. The errors say what is wrong in their `localizedDescription`, which apps log.
    func testABadSessionIDIsRefusedAndALongMarkIsCut() throws {
        let dir = RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for sid in ["", String(repeating: "s", count: 129)] {
            XCTAssertThrowsError(try TraceRecorder(configuration: RecorderTests.configuration(dir, sid: sid))) { error in
                XCTAssertEqual(error.localizedDescription,
                               "sessionID must be 1 to 128 characters long (trace format v1's sid), not \(sid.count): leave it to the default, a new UUID")
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path), "a refused recorder made its directory")
        let r = try TraceRecorder(configuration: RecorderTests.configuration(dir, sid: String(repeating: "s", count: 128)))
        r.mark(String(repeating: "é", count: 1 << 20))
        XCTAssertTrue(r.stop())
        let mark = try XCTUnwrap(try RecorderTests.files(dir).first?.events.first { $0.kind == .mark })
        XCTAssertLessThanOrEqual(mark.detail?.utf8.count ?? .max, TraceRecorder.maxMarkBytes)
        XCTAssertGreaterThan(mark.detail?.utf8.count ?? 0, TraceRecorder.maxMarkBytes - 4)
        XCTAssertTrue(mark.detail?.allSatisfy { $0 == "é" } ?? false, "a character cut in two")
        // A directory that cannot be made: the system's reason, not an error's dump.
        var config = RecorderTests.configuration(URL(fileURLWithPath: "/etc/passwd/lctrace"))
        config.flushInterval = 3600
        XCTAssertThrowsError(try TraceRecorder(configuration: config)) { error in
            XCTAssertEqual(error.localizedDescription, "cannot create /etc/passwd/lctrace: Not a directory")
        }
    }

    /// A rotation inside `stop()`'s last drain deletes nothing: the buffer takes no event
    /// after `sessionEnd`, so the deletion's mark was lost (a file deleted, no mark anywhere).
    /// The next start enforces the cap, with its mark.
    func testNoFileIsDeletedWithoutItsMarkWhenStopping() throws {
        let dir = RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var config = RecorderTests.configuration(dir)
        config.flushInterval = 3600
        config.flushEventCount = 100_000
        config.bufferCapacity = 100_000
        config.rotateBytes = 4096
        config.maxStoredBytes = 8192
        func marks(_ n: Int, _ r: TraceRecorder) {
            for i in 0..<n { r.mark("\(i) " + String((0..<40).map { _ in Character(UnicodeScalar(UInt8.random(in: 97...122))) })) }
        }
        let r = try TraceRecorder(configuration: config)
        marks(400, r)
        XCTAssertTrue(r.flush(timeout: 10))  // the file is past rotateBytes: a rotation marker waits in the buffer
        marks(10, r)
        XCTAssertTrue(r.stop())
        XCTAssertEqual(r.statistics.filesDeleted, 0)
        let files = try RecorderTests.files(dir)
        XCTAssertEqual(files.count, 2, "the rotation came inside the last drain")
        XCTAssertEqual(try RecorderTests.events(dir).map(\.seq), Array(0...Int64(400 + 1 + 10 + 1)), "a file was deleted: session record, 400 marks, the next file's record, 10 marks, sessionEnd")
        config.sessionID = "NEXT-SESSION"
        let next = try TraceRecorder(configuration: config)
        XCTAssertTrue(next.stop())
        XCTAssertEqual(next.statistics.filesDeleted, 1)
        let mark = try XCTUnwrap(try RecorderTests.files(dir).last?.events.first { $0.detail == TraceWriter.deletedMarkName })
        XCTAssertTrue(mark.attrs?.hasPrefix(#"{"files":1,"#) ?? false, mark.attrs ?? "no attrs")
    }

    /// An app and its extension sharing a directory (an App Group): neither hands out,
    /// removes or caps away the other's files, one of which is the file it is writing.
    func testAnotherAppsFilesInTheDirectoryAreLeftAlone() throws {
        let dir = RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var extensionConfig = RecorderTests.configuration(dir, sid: "EXT-SESSION")
        extensionConfig.session.app = "com.example.shop.share"
        extensionConfig.session.extensionPoint = "com.apple.share-services"
        extensionConfig.wallClock = WallClock { 1_735_689_600_000 }  // 2025-01-01: its file is the oldest
        extensionConfig.flushInterval = 3600
        let ext = try TraceRecorder(configuration: extensionConfig)
        ext.mark("extension")
        XCTAssertTrue(ext.flush(timeout: 10))
        let extensionFile = try XCTUnwrap(TraceDirectory.list(dir).first?.url)
        let old = ["com.example.shop_20250601T080000Z_OLD-A_0000.jsonl.gz", "com.example.shop_20250601T080000Z_OLD-A_0001.jsonl.gz",
                   "com.example.shop_20250701T000000Z_OLD-B_0000.jsonl.gz"]
        for name in old { try Data(repeating: 7, count: 3000).write(to: dir.appendingPathComponent(name)) }
        var config = RecorderTests.configuration(dir)
        config.flushInterval = 3600
        config.rotateBytes = 4096
        config.maxStoredBytes = 8192  // 4,096 for finished files
        // At its start the cap deletes the app's own oldest files, never the extension's
        // (older still, and being written).
        let app = try TraceRecorder(configuration: config)
        XCTAssertEqual(app.statistics.filesDeleted, 2)
        XCTAssertEqual(app.finishedFiles().map(\.lastPathComponent), [old[2]], "the extension's file being written was handed out")
        XCTAssertEqual(app.removeFinishedFiles([extensionFile]), [])
        app.mark("app")
        XCTAssertTrue(app.flush(timeout: 10))
        XCTAssertTrue(FileManager.default.fileExists(atPath: extensionFile.path), "the extension's file was deleted")
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent(old[2]).path))
        XCTAssertTrue(app.stop())
        ext.mark("still writing")
        XCTAssertTrue(ext.stop())
        XCTAssertEqual(try DecodedFile(extensionFile).events.map(\.name), ["session", "mark", "mark", "sessionEnd"])
        XCTAssertEqual(ext.finishedFiles(), [extensionFile])
    }

    /// finishedFiles lists every trace file but the one being written (earlier sessions'
    /// included); a finished file can be removed after upload, the active one never.
    func testFinishedFilesAndRemovalAfterUpload() throws {
        let dir = RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let earlier = dir.appendingPathComponent("com.example.shop_20251001T080000Z_EARLIER_0000.jsonl.gz")
        try Data([0x1f, 0x8b]).write(to: earlier)
        var config = RecorderTests.configuration(dir)
        config.flushInterval = 3600
        let r = try TraceRecorder(configuration: config)
        r.mark("one")
        XCTAssertTrue(r.flush(timeout: 10))
        let active = try XCTUnwrap(TraceDirectory.list(dir).map(\.url).first { $0 != earlier })
        XCTAssertEqual(r.finishedFiles(), [earlier])
        XCTAssertEqual(r.removeFinishedFiles([active]), [], "the file being written was removed")
        let done = DispatchSemaphore(value: 0)
        r.finishCurrentFile { done.signal() }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(r.finishedFiles(), [earlier, active])
        let outside = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(active.lastPathComponent)
        XCTAssertEqual(r.removeFinishedFiles([outside, earlier, active]), [earlier, active])
        r.mark("two")
        XCTAssertTrue(r.stop())
        let files = try RecorderTests.files(dir)
        XCTAssertEqual(files.count, 1)
        XCTAssertEqual(files[0].events.map(\.name), ["session", "mark", "sessionEnd"])
        XCTAssertEqual(r.finishedFiles().count, 1)
    }
}
