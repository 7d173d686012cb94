/// A set of session ids (`sessions.id`, dense from 1) as one bit each: what a run must remember
/// about every session it met costs 50 KB at 400,000 sessions, where a Set took 10 MB. Ids
/// past `denseLimit` (a database whose rows were given ids by hand) go to a plain set, so no
/// id can ask for a huge bitmap.
package struct SessionSet: Sendable, Equatable {
    private var words: [UInt64] = []
    private var sparse = Set<Int64>()
    package private(set) var count = 0
    static let denseLimit: Int64 = 1 << 32

    package init() {}

    package init<S: Sequence>(_ ids: S) where S.Element == Int64 {
        for id in ids { insert(id) }
    }

    package func contains(_ id: Int64) -> Bool {
        guard id >= 0 else { return false }
        if id >= Self.denseLimit { return sparse.contains(id) }
        let word = Int(id >> 6)
        return word < words.count && words[word] & (1 << UInt64(id & 63)) != 0
    }

    /// Adds `id` (ids below 0 are ignored: they name no row); true when it was not there.
    @discardableResult
    package mutating func insert(_ id: Int64) -> Bool {
        guard id >= 0 else { return false }
        if id >= Self.denseLimit {
            guard sparse.insert(id).inserted else { return false }
            count += 1
            return true
        }
        let word = Int(id >> 6)
        if word >= words.count { words.append(contentsOf: repeatElement(0, count: word + 1 - words.count)) }
        let bit: UInt64 = 1 << UInt64(id & 63)
        guard words[word] & bit == 0 else { return false }
        words[word] |= bit
        count += 1
        return true
    }

    @discardableResult
    package mutating func remove(_ id: Int64) -> Bool {
        guard contains(id) else { return false }
        if id >= Self.denseLimit { sparse.remove(id) } else { words[Int(id >> 6)] &= ~(1 << UInt64(id & 63)) }
        count -= 1
        return true
    }

    package mutating func removeAll() {
        words.removeAll()
        sparse.removeAll()
        count = 0
    }

    /// The ids of `self` that are not in `other`.
    package func subtracting(_ other: SessionSet) -> SessionSet {
        var out = SessionSet()
        out.words = words.enumerated().map { i, w in i < other.words.count ? w & ~other.words[i] : w }
        out.sparse = sparse.subtracting(other.sparse)
        out.count = out.words.reduce(0) { $0 + $1.nonzeroBitCount } + out.sparse.count
        return out
    }

    /// The ids in increasing order.
    package var ids: [Int64] {
        var out: [Int64] = []
        out.reserveCapacity(count)
        for (i, w) in words.enumerated() where w != 0 {
            var bits = w
            while bits != 0 {
                out.append(Int64(i) << 6 | Int64(bits.trailingZeroBitCount))
                bits &= bits - 1
            }
        }
        return out + sparse.sorted()
    }

    package static func == (a: SessionSet, b: SessionSet) -> Bool { a.ids == b.ids }
}
