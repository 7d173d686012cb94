import LCTraceModel

/// A hash map from byte strings to ids, so the ingest hot path finds the `strings.id` (or
/// session id) of a controller id, class or event name without building a Swift String.
/// Open addressing over a power-of-two table; keys are copied into one arena. A cache, not a
/// copy of the table: it empties itself at `limit` entries, so memory stays flat however many
/// distinct ids a run meets (they are mostly local to one session).
package final class ByteInterner {
    private struct Entry {
        package var hash: UInt64 = 0
        package var start: Int32 = 0
        package var count: Int32 = 0
        package var id: Int64 = 0      // 0: empty slot (ids from SQLite start at 1; callers may use negative ones)
    }

    private var table = [Entry](repeating: Entry(), count: 1024)
    private var keys: [UInt8] = []
    package private(set) var count = 0
    package let limit: Int

    package init(limit: Int = 50_000) { self.limit = limit }

    /// FNV-1a, 64 bits: short keys, no need for more.
    @inline(__always) package static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        return h
    }

    package func lookup(_ bytes: UnsafeRawBufferPointer, hash: UInt64) -> Int64? {
        slot(of: bytes, hash: hash).map { table[$0].id }
    }

    /// Gives a key already held another id (the caller looked it up first).
    package func update(_ bytes: UnsafeRawBufferPointer, hash: UInt64, id: Int64) {
        if let i = slot(of: bytes, hash: hash) { table[i].id = id }
    }

    /// The slot holding `bytes`, nil when none does.
    @inline(__always)
    private func slot(of bytes: UnsafeRawBufferPointer, hash: UInt64) -> Int? {
        let mask = table.count - 1
        var i = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entry = table[i]
            if entry.id == 0 { return nil }
            if entry.hash == hash && Int(entry.count) == bytes.count {
                let same = keys.withUnsafeBytes { k in
                    bytes.count == 0 || memcmp(k.baseAddress! + Int(entry.start), bytes.baseAddress!, bytes.count) == 0
                }
                if same { return i }
            }
            i = (i + 1) & mask
        }
    }

    package func insert(_ bytes: UnsafeRawBufferPointer, hash: UInt64, id: Int64) {
        if count >= limit { removeAll() }
        if (count + 1) * 2 > table.count { grow() }
        let start = keys.count
        keys.append(contentsOf: bytes)
        place(Entry(hash: hash, start: Int32(start), count: Int32(bytes.count), id: id))
        count += 1
    }

    private func place(_ entry: Entry) {
        let mask = table.count - 1
        var i = Int(truncatingIfNeeded: entry.hash) & mask
        while table[i].id != 0 { i = (i + 1) & mask }
        table[i] = entry
    }

    private func grow() {
        let old = table
        table = [Entry](repeating: Entry(), count: old.count * 2)
        for entry in old where entry.id != 0 { place(entry) }
    }

    package func removeAll() {
        table = [Entry](repeating: Entry(), count: 1024)
        keys.removeAll()
        count = 0
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
