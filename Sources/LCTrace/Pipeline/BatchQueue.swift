import Foundation
import LCTraceModel

/// A bounded hand-off between the reading thread and the writing thread. Bounded, so memory
/// stays flat: the reader waits when the writer (SQLite) is behind.
final class BatchQueue<Element>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = []
    private let capacity: Int
    private var closed = false

    package init(capacity: Int) { self.capacity = capacity }

    /// Adds an item, waiting for room; returns false when the queue was closed.
    @discardableResult
    package func put(_ item: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while items.count >= capacity && !closed { condition.wait() }
        if closed { return false }
        items.append(item)
        condition.broadcast()
        return true
    }

    /// Takes the oldest item, waiting for one; nil once closed and empty.
    package func take() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty && !closed { condition.wait() }
        if items.isEmpty { return nil }
        let item = items.removeFirst()
        condition.broadcast()
        return item
    }

    /// Wakes everyone; `put` refuses from now on, `take` drains what is left.
    package func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}
