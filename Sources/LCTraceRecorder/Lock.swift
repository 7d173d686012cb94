#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex and its condition variable. Heap-allocated because pthread objects must never
/// move; ours, because `Synchronization.Mutex` needs iOS 18 and the recorder runs on iOS 13.
final class RecorderLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        #if canImport(Darwin)
        pthread_cond_init(condition, nil)
        #else
        // Timed waits count on the monotonic clock: a wall-clock change must not stall the writer.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
        #endif
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    @inline(__always) func lock() { pthread_mutex_lock(mutex) }
    @inline(__always) func unlock() { pthread_mutex_unlock(mutex) }

    @inline(__always) func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Wakes the threads waiting on the condition (call with the lock held or not).
    func broadcast() { pthread_cond_broadcast(condition) }

    /// Waits on the condition (the lock held) for at most `nanoseconds`; spurious wake-ups
    /// return early, so callers re-check what they wait for.
    func wait(nanoseconds: UInt64) {
        #if canImport(Darwin)
        var relative = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        pthread_cond_timedwait_relative_np(condition, mutex, &relative)
        #else
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let total = UInt64(now.tv_nsec) + nanoseconds % 1_000_000_000
        var deadline = timespec(tv_sec: now.tv_sec + Int(nanoseconds / 1_000_000_000) + Int(total / 1_000_000_000),
                                tv_nsec: Int(total % 1_000_000_000))
        pthread_cond_timedwait(condition, mutex, &deadline)
        #endif
    }
}
