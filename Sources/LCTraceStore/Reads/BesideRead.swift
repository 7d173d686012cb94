import Foundation
import LCTraceModel

/// A read run on a thread of its own, on a connection of its own (`SQLReadConnection.sibling`),
/// while the command goes on with its other reads: on PostgreSQL the server then works on
/// both at once (issue 26: the HTML report's gap statistics, 800,000 rows on 10 M events,
/// beside its examples' windows). `join` gives the result; when the read failed for any
/// reason but a stop (the second connection waited too long for a lock, lost its server),
/// `join` runs `fallback` instead, on the joining thread and its own connection, which sees
/// the same snapshot: the same result, later. A caller that leaves early still joins, so no
/// read outlives its command; a stop request ends the read's waits as it ends the command's.
///
/// `@unchecked Sendable`: `work` is used by the read's thread only, `fallback` by joiners
/// only (the thread that made it: it closes over that thread's connection), and `outcome` is
/// written before `done` is signalled and read after it is waited for.
package final class BesideRead<Result: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var outcome: Swift.Result<Result, any Error>?
    private var work: (() throws -> Result)?
    private let fallback: (() throws -> Result)?
    /// What `join` gives, once decided (guarded by `lock`).
    private let lock = NSLock()
    private var settled: Swift.Result<Result, any Error>?

    package init(_ work: @escaping () throws -> Result, otherwise fallback: (() throws -> Result)? = nil) {
        self.work = work
        self.fallback = fallback
        let thread = Thread { [self] in
            let result = Swift.Result { try self.work!() }
            self.work = nil
            self.outcome = result
            self.done.signal()
        }
        thread.name = "lctrace read beside"
        thread.start()
    }

    /// Waits for the read and gives its result (or the fallback's); every call gives the same.
    package func join() throws -> Result {
        done.wait()
        done.signal()
        lock.lock()
        defer { lock.unlock() }
        if settled == nil {
            switch outcome! {
            case .failure(let error) where !(error is Interrupted) && fallback != nil:
                settled = Swift.Result { try fallback!() }
            default:
                settled = outcome
            }
        }
        return try settled!.get()
    }
}
