/// A small seeded PRNG (SplitMix64): the same seed gives the same corpus on every machine,
/// which `SystemRandomNumberGenerator` cannot.
package struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform integer in `range`.
    package mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    package mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }
    package mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }
    /// Milliseconds in `range`, as nanoseconds.
    package mutating func ms(_ range: ClosedRange<Int>) -> Int64 { Int64(int(range)) * 1_000_000 + Int64(int(0...999_999)) }
}
