import Foundation
import XCTest
@testable import LCTraceRecorder
import LCTraceFormat
import LCTraceModel

/// Eight threads at once on one recorder (run under `swift test --sanitize=thread` too):
/// the manual API, the tracker with controllers freed on other threads than the one that
/// used them, flushes, file hand-off and statistics, a buffer small enough to drop.
final class RecorderConcurrencyTests: XCTestCase {
    /// Room for everything: nothing dropped, every controller's init and deinit there.
    func testEightThreadsWithRoomLoseNothing() throws {
        let (events, stats) = try eightThreads(capacity: 1 << 17)
        XCTAssertEqual(stats.dropped, 0)
        let inits = events.filter { $0.kind == .`init` }.compactMap(\.vc)
        let deinits = events.filter { $0.kind == .`deinit` }.compactMap(\.vc)
        XCTAssertEqual(inits.count, 2 * 400 + 2 * 400 + 2 * 2 * 400)
        XCTAssertEqual(Set(inits), Set(deinits), "a controller was not recorded freed")
        XCTAssertEqual(Set(inits).count, inits.count, "an id given twice")
    }

    /// A small buffer: events dropped while eight threads record, every hole counted. The
    /// writer is held at its first member until the buffer overflows, so drops happen
    /// however fast the machine is; then it runs with the threads.
    func testEightThreadsWithASmallBufferCountEveryDrop() throws {
        let (_, stats) = try eightThreads(capacity: 1024, holdWriterUntilDrops: true)
        XCTAssertGreaterThan(stats.dropped, 0)
    }

    private func eightThreads(capacity: Int, holdWriterUntilDrops: Bool = false) throws -> ([TraceEvent], RecorderStatistics) {
        let dir = RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var config = RecorderTests.configuration(dir)
        config.bufferCapacity = capacity
        config.flushEventCount = 100
        config.flushInterval = 0.002
        config.rotateBytes = 16 << 10
        let gate = WriterGate()
        if holdWriterUntilDrops { config.flushObserver = gate.observer }
        let recorder = try TraceRecorder(configuration: config)
        if holdWriterUntilDrops {
            recorder.flush()
            XCTAssertTrue(gate.waitUntilHeld())
            Thread {
                let deadline = Date().addingTimeInterval(30)
                while recorder.statistics.dropped == 0 && Date() < deadline { usleep(1000) }
                gate.release()
            }.start()
        }
        let tracker = ControllerTracker(recorder: recorder, storage: HeldSentinels(), naming: UIKitSimulator.naming)
        let threads = 8, rounds = 400
        /// Controllers one thread used, freed by whichever thread takes them.
        let handOff = HandOff()
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread {
                defer { group.leave() }
                for round in 0..<rounds {
                    switch thread % 4 {
                    case 0:
                        // The manual API, one call per kind, with this thread's counter in the marks.
                        let vc = recorder.initialized(cls: "Manual\(thread)", uikit: "UIViewController")
                        recorder.viewWillAppear(vc, animated: true, isMovingToParent: false, isBeingPresented: false, interactive: true)
                        recorder.viewIsAppearing(vc, animated: true, bounds: ViewSize(width: 1, height: 2), traits: Traits(style: .dark))
                        recorder.viewDidAppear(vc, animated: true, isMovingToParent: false, isBeingPresented: false)
                        recorder.mark("t\(thread) r\(round)")
                        recorder.deinitialized(vc)
                    case 1:
                        // The tracker: a controller seen here, freed by another thread.
                        let vc = round % 2 == 0 ? ProductDetailViewController() as FakeViewController : CheckoutViewController()
                        tracker.viewDidLoad(vc)
                        tracker.viewWillAppear(vc, animated: false, isMovingToParent: true, isBeingPresented: false, interactive: nil)
                        tracker.traitsChanged(vc, traits: Traits(horizontal: round % 3 == 0 ? .compact : .regular))
                        recorder.mark("t\(thread) r\(round)")
                        handOff.put(vc)
                    case 2:
                        // Containment between controllers of this thread, then freeing others' controllers.
                        let parent = CardContainerViewController(), child = BannerViewController()
                        tracker.addChild(child, parent: parent)
                        tracker.didMove(child, toParent: parent)
                        tracker.removeFromParent(child, currentParent: nil)
                        recorder.mark("t\(thread) r\(round)")
                        handOff.freeOne()
                    default:
                        // Flushes, rotation, the file list and the counters, while the others record.
                        recorder.mark("t\(thread) r\(round)")
                        if round % 50 == 0 { recorder.finishCurrentFile() }
                        if round % 10 == 0 { recorder.flush() }
                        _ = recorder.finishedFiles()
                        _ = recorder.statistics
                        recorder.scene(.didBecomeActive, scene: "S\(thread)")
                    }
                }
            }.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success)
        handOff.freeAll()
        XCTAssertTrue(recorder.stop(timeout: 30))

        let stats = recorder.statistics
        XCTAssertEqual(stats.written, stats.recorded, "buffered events not written")
        XCTAssertEqual(stats.writeErrors, 0)
        let files = try RecorderTests.files(dir)
        for f in files { XCTAssertEqual(f.rejects.count, 0) }
        let events = files.flatMap(\.events).sorted { $0.seq < $1.seq }
        XCTAssertEqual(Int64(events.count), stats.written)
        XCTAssertEqual(Set(events.map(\.seq)).count, events.count, "a seq given twice")
        // Holes are exactly the drops, each marked.
        let drops = events.filter { $0.detail == EventBuffer.droppedMarkName }
        let markedDrops = try drops.reduce(Int64(0)) { sum, mark in
            let attrs = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data((mark.attrs ?? "").utf8)) as? [String: Any])
            return sum + (try XCTUnwrap((attrs["dropped"] as? NSNumber)?.int64Value))
        }
        let holes = Int64(events.last!.seq + 1) - Int64(events.count)
        XCTAssertEqual(holes, stats.dropped)
        XCTAssertLessThanOrEqual(markedDrops, stats.dropped)
        // Each thread's marks are in its own order (seq is taken in calling order).
        for thread in 0..<threads {
            let rounds = events.compactMap { e -> Int? in
                guard e.kind == .mark, let name = e.detail, name.hasPrefix("t\(thread) r") else { return nil }
                return Int(name.dropFirst("t\(thread) r".count))
            }
            XCTAssertEqual(rounds, rounds.sorted(), "thread \(thread)")
        }
        print("eight threads, buffer \(capacity): \(events.count) events, \(stats.dropped) dropped, \(files.count) files")
        return (events, stats)
    }
}

/// Controllers handed from the thread that used them to one that frees them.
final class HandOff: @unchecked Sendable {
    private let lock = NSLock()
    private var waiting: [FakeViewController] = []
    func put(_ vc: FakeViewController) { lock.withLock { waiting.append(vc) } }
    /// Frees one controller on the calling thread (its sentinel's deinit records it here).
    func freeOne() {
        var taken: FakeViewController? = lock.withLock { waiting.popLast() }
        _ = taken
        taken = nil
    }
    func freeAll() { lock.withLock { waiting.removeAll() } }
}
