#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The Mann–Whitney U test (Wilcoxon rank-sum) of two samples, two-sided, with the normal
/// approximation: ties get average ranks and the variance is corrected for them, with a
/// continuity correction of ½. The approximation is sound for the sample sizes compared
/// here (`BuildComparison.minimumSamples` and more per side); no distribution is assumed,
/// which matters for appearance times (long right tails, many equal values).
enum RankTest {
    /// (U of `b` over `a`, two-sided p-value).
    static func mannWhitney(_ a: [Int64], _ b: [Int64]) -> (u: Double, p: Double) {
        let n1 = Double(a.count), n2 = Double(b.count)
        guard n1 > 0, n2 > 0 else { return (0, 1) }
        // Rank everything together: (value, from b).
        var all = a.map { ($0, false) } + b.map { ($0, true) }
        all.sort { $0.0 < $1.0 }
        var rankSumB = 0.0
        var tieTerm = 0.0
        var i = 0
        while i < all.count {
            var j = i
            while j + 1 < all.count && all[j + 1].0 == all[i].0 { j += 1 }
            let rank = Double(i + j + 2) / 2  // average of ranks i+1 … j+1
            let t = Double(j - i + 1)
            if t > 1 { tieTerm += t * t * t - t }
            for k in i...j where all[k].1 { rankSumB += rank }
            i = j + 1
        }
        let u = rankSumB - n2 * (n2 + 1) / 2
        let n = n1 + n2
        let mean = n1 * n2 / 2
        let variance = n1 * n2 / 12 * ((n + 1) - tieTerm / (n * (n - 1)))
        guard variance > 0 else { return (u, 1) }
        let z = max(abs(u - mean) - 0.5, 0) / variance.squareRoot()
        return (u, erfc(z / 2.0.squareRoot()))
    }
}
