package extension Int64 {
    /// `self + other`, clamped to the range of Int64 instead of trapping: times and seqs come
    /// from traces and may be anywhere in it (t = 2^63 - 1 is a valid line).
    @inline(__always) func plusClamped(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    /// `self - other`, clamped to the range of Int64 instead of trapping.
    @inline(__always) func minusClamped(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }
}
