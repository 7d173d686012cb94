/// Option values read strictly: a duration needs a unit, a count is a plain whole number, and
/// a value outside the accepted range is a usage error naming the option and the range. Values
/// are computed with overflow-checked integer arithmetic, so no input can trap.
package enum OptionValues {
    /// Duration units, longest first, so that "ms" is not read as "m" followed by "s".
    static let units: [(suffix: String, nanoseconds: Int64)] = [
        ("ns", 1), ("us", 1_000), ("µs", 1_000), ("ms", 1_000_000),
        ("s", 1_000_000_000), ("m", 60_000_000_000), ("h", 3_600_000_000_000),
    ]
    static let unitNames = "ns, us, ms, s, m, h"

    /// The range of the rule durations (`--grace`, `--gap-threshold`): up to a day.
    package static let ruleDurations: ClosedRange<Int64> = 0...86_400_000_000_000

    /// A duration such as `5s`, `2500ms` or `1.5m`, in nanoseconds. `option` names the value in
    /// messages ("--grace", or "--gap-threshold animated").
    package static func duration(_ text: String, option: String, range: ClosedRange<Int64>) throws -> Int64 {
        let accepted = "a duration from \(describe(range.lowerBound)) to \(describe(range.upperBound))"
        guard let unit = units.first(where: { text.hasSuffix($0.suffix) }) else {
            if decimal(text) != nil {
                throw UsageError("invalid \(option) '\(text)': a duration needs a unit (\(unitNames))",
                                 hint: "write \(text)ms or \(text)s")
            }
            throw UsageError("invalid \(option) '\(text)' (expected \(accepted), such as 5s or 2500ms)")
        }
        let number = String(text.dropLast(unit.suffix.count))
        guard let (whole, fraction) = decimal(number) else {
            if number.hasPrefix("-"), decimal(String(number.dropFirst())) != nil {
                throw UsageError("invalid \(option) '\(text)': out of range (expected \(accepted))")
            }
            throw UsageError("invalid \(option) '\(text)' (expected \(accepted), such as 5s or 2500ms)")
        }
        guard let ns = nanoseconds(whole: whole, fraction: fraction, scale: unit.nanoseconds), range.contains(ns) else {
            throw UsageError("invalid \(option) '\(text)': out of range (expected \(accepted))")
        }
        return ns
    }

    /// A whole number in `range` (digits only: no sign, no spaces, no exponent).
    package static func count(_ text: String, option: String, range: ClosedRange<Int>) throws -> Int {
        guard let value = wholeNumber(text), range.contains(value) else {
            throw UsageError("invalid \(option) '\(text)' (expected a whole number from \(range.lowerBound) to \(range.upperBound))")
        }
        return value
    }

    /// The value of a string of ASCII digits, nil when empty, not digits, or above Int.max.
    static func wholeNumber<S: StringProtocol>(_ text: S) -> Int? {
        guard !text.isEmpty else { return nil }
        var value = 0
        for byte in text.utf8 {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(Int(byte - 0x30))
            if o1 || o2 { return nil }
            value = sum
        }
        return value
    }

    /// `digits[.digits]` split into its whole and fraction digits; nil for anything else.
    private static func decimal(_ text: String) -> (whole: Substring, fraction: Substring)? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let fraction = parts.count > 1 ? parts[1] : ""
        if parts.count > 1 && fraction.isEmpty { return nil }
        guard fraction.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return (whole, fraction)
    }

    /// whole.fraction × scale, rounded to the nanosecond; nil when it does not fit an Int64.
    private static func nanoseconds(whole: Substring, fraction: Substring, scale: Int64) -> Int64? {
        guard let wholeValue = wholeNumber(whole) else { return nil }
        let (scaled, overflow) = Int64(wholeValue).multipliedReportingOverflow(by: scale)
        if overflow { return nil }
        // The fraction adds less than one unit: 15 digits of it are exact to well under a nanosecond.
        var digits = 0.0, place = 1.0
        for byte in fraction.utf8.prefix(15) {
            digits = digits * 10 + Double(byte - 0x30)
            place *= 10
        }
        let part = Int64((digits / place * Double(scale)).rounded())
        let (total, overflow2) = scaled.addingReportingOverflow(part)
        return overflow2 ? nil : total
    }

    /// Nanoseconds in the largest unit that shows them exactly: 86400000000000 → "24h".
    package static func describe(_ ns: Int64) -> String {
        if ns == 0 { return "0s" }
        for unit in units.reversed() where unit.suffix != "µs" && ns % unit.nanoseconds == 0 {
            return "\(ns / unit.nanoseconds)\(unit.suffix)"
        }
        return "\(ns)ns"
    }
}
