import Foundation
import LCTraceModel

/// Numbers for people: the one formatter of counts and durations in text output.
package enum NumberFormat {
    /// `n` with thousands separators (1,759,249).
    package static func thousands(_ n: Int) -> String {
        let digits = String(abs(n))
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return n < 0 ? "-" + out : out
    }

    /// Seconds with two decimals below 10 s, one above (`0.42 s`, `12.3 s`).
    package static func seconds(_ s: Double) -> String {
        s < 10 ? String(format: "%.2f s", s) : String(format: "%.1f s", s)
    }
}
