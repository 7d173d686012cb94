import Foundation

/// A read run on a thread of its own, on a connection of its own (`SQLReadConnection.sibling`),
/// while the command goes on with its other reads: on PostgreSQL the server then works on
/// both at once (issue 26: the HTML report's gap statistics, 800,000 rows on 10 M events,
/// beside its examples' windows). `join` gives the result, or throws what the read threw.
/// A caller that leaves early (an error of its own) still waits for it with `join`, so no
/// read outlives its command; a stop request ends the read's waits as it ends the command's.
package final class BesideRead<Result: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var outcome: Swift.Result<Result, any Error>?
    // `work` and the connection it closes over are used by the read's thread only.
    private var work: (() throws -> Result)?
    /// Caller's side only: whether `join` waited already.
    private var joined = false

    package init(_ work: @escaping () throws -> Result) {
        self.work = work
        let thread = Thread { [self] in
            let result = Swift.Result { try self.work!() }
            self.work = nil
            self.outcome = result
            self.done.signal()
        }
        thread.name = "lctrace read beside"
        thread.start()
    }

    /// Waits for the read (once; later calls give the same outcome).
    package func join() throws -> Result {
        if !joined {
            done.wait()
            joined = true
        }
        return try outcome!.get()
    }
}
