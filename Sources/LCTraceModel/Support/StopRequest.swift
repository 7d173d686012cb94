import Foundation

/// A request to stop a long operation early (the command line raises it on SIGINT or SIGTERM).
/// The operation checks it between batches, rolls back the batch in flight and throws
/// `Interrupted`; what was committed stays, and running the same command again finishes the
/// work. A waiting operation is woken through `onRequest`.
package final class StopRequest: @unchecked Sendable {
    private let lock = NSLock()
    private var requested = false
    private var wake: (() -> Void)?
    /// The signal that asked, when one did.
    package private(set) var signal: Int32 = 0

    package init() {}

    /// True once a stop was requested.
    var isRequested: Bool {
        lock.lock()
        defer { lock.unlock() }
        return requested
    }

    /// Asks the operation to stop (from any thread), and wakes it if it waits.
    package func request(signal: Int32 = 0) {
        lock.lock()
        requested = true
        self.signal = signal
        let wake = self.wake
        lock.unlock()
        wake?()
    }

    /// What wakes the operation where it waits now (replacing the one before); run at once
    /// when a stop was already requested.
    package func onRequest(_ body: (() -> Void)?) {
        lock.lock()
        wake = body
        let now = requested
        lock.unlock()
        if now { body?() }
    }

    /// Throws `Interrupted` when a stop was requested.
    package func check() throws {
        if isRequested { throw Interrupted() }
    }
}

/// An operation ended early by a `StopRequest`: everything committed before it stays.
package struct Interrupted: Error, Sendable {
    package init() {}
}
