import Foundation
import XCTest
@testable import LCTraceModel
@testable import LCTraceStore

/// `BesideRead`, the read on a thread of its own (no database needed).
final class BesideReadTests: XCTestCase {
    struct Lost: Error {}
    struct WaitedForEver: Error {}

    final class Box: @unchecked Sendable { var value: Result<Int, any Error>? }

    /// `joiners` joins of `read` at once, each on a thread of its own, so a joiner left
    /// waiting fails the test instead of hanging it.
    func join(_ read: BesideRead<Int>, by joiners: Int = 1) -> [Result<Int, any Error>] {
        let boxes = (0..<joiners).map { _ in Box() }
        let finished = DispatchSemaphore(value: 0)
        for box in boxes {
            Thread.detachNewThread {
                box.value = Result { try read.join() }
                finished.signal()
            }
        }
        for _ in boxes where finished.wait(timeout: .now() + 5) == .timedOut { return [.failure(WaitedForEver())] }
        return boxes.map { $0.value! }
    }

    /// The read's result comes back, the same to every joiner, joiners on two threads at once
    /// and a later one included (none waits for ever).
    func testEveryJoinerGetsTheResult() throws {
        let read = BesideRead { () -> Int in
            Thread.sleep(forTimeInterval: 0.05)
            return 42
        }
        XCTAssertEqual(try join(read, by: 2).map { try $0.get() }, [42, 42])
        XCTAssertEqual(try join(read).map { try $0.get() }, [42])
    }

    /// A read that fails is done again by the fallback, once; a stop is not a failure to
    /// retry: it is thrown as it came; without a fallback the failure is thrown.
    func testAFailedReadFallsBackAndAStopDoesNot() throws {
        let runs = Box()
        let failed = BesideRead({ () -> Int in throw Lost() }, otherwise: {
            runs.value = .success(((try? runs.value?.get()) ?? 0) + 1)
            return 7
        })
        XCTAssertEqual(try join(failed, by: 2).map { try $0.get() }, [7, 7])
        XCTAssertEqual(try join(failed).map { try $0.get() }, [7])
        XCTAssertEqual(try runs.value?.get(), 1, "the fallback ran more than once")

        let stopped = BesideRead({ () -> Int in throw Interrupted() }, otherwise: { 7 })
        XCTAssertThrowsError(try join(stopped)[0].get()) { XCTAssertTrue($0 is Interrupted, "\($0)") }

        let alone = BesideRead { () -> Int in throw Lost() }
        XCTAssertThrowsError(try join(alone)[0].get()) { XCTAssertTrue($0 is Lost, "\($0)") }
    }
}
