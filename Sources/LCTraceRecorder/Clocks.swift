#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The clock of `t`: monotonic nanoseconds from any origin (the recorder subtracts the
/// session's first reading). Injectable, so tests and simulators decide what time it is.
public struct MonotonicClock: Sendable {
    public let nanoseconds: @Sendable () -> UInt64

    public init(nanoseconds: @escaping @Sendable () -> UInt64) { self.nanoseconds = nanoseconds }

    /// A clock that keeps counting while the device sleeps, so a background period shows in
    /// `t` (Darwin: CLOCK_MONOTONIC_RAW; Linux: CLOCK_BOOTTIME). Neither is
    /// `mach_absolute_time`, which stops in sleep.
    public static let system = MonotonicClock {
        var now = timespec()
        #if canImport(Darwin)
        clock_gettime(CLOCK_MONOTONIC_RAW, &now)
        #else
        clock_gettime(CLOCK_BOOTTIME, &now)
        #endif
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

/// Seconds (a configuration's interval or age, a timeout) as nanoseconds, from 0 to 100
/// years: any value an app passes (infinity, 1e300, NaN as 0) converts without trapping.
func nanoseconds(seconds: Double) -> UInt64 {
    let limit = 100.0 * 365 * 86_400
    guard seconds > 0 else { return 0 }
    return UInt64(min(seconds, limit) * 1e9)
}

/// The clock of `wall` (the session record's start time and file names): milliseconds since
/// 1970 in UTC. Never used for durations.
public struct WallClock: Sendable {
    public let milliseconds: @Sendable () -> Int64

    public init(milliseconds: @escaping @Sendable () -> Int64) { self.milliseconds = milliseconds }

    public static let system = WallClock {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}

/// UTC calendar fields of a wall time, for RFC 3339 text and file names (gmtime_r: no
/// formatter, no locale, the same on every platform).
struct UTCTime {
    var year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, millisecond = 0

    init(milliseconds: Int64) {
        var seconds = time_t(milliseconds / 1000)
        var fields = tm()
        gmtime_r(&seconds, &fields)
        year = Int(fields.tm_year) + 1900
        month = Int(fields.tm_mon) + 1
        day = Int(fields.tm_mday)
        hour = Int(fields.tm_hour)
        minute = Int(fields.tm_min)
        second = Int(fields.tm_sec)
        millisecond = Int(milliseconds % 1000)
    }

    /// `2026-11-02T10:15:03.120Z`
    var rfc3339: String {
        "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(millisecond, 3))Z"
    }

    /// `20261102T101503Z`: sorts as time does, and is safe in a file name.
    var compact: String {
        "\(pad(year, 4))\(pad(month, 2))\(pad(day, 2))T\(pad(hour, 2))\(pad(minute, 2))\(pad(second, 2))Z"
    }

    private func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
