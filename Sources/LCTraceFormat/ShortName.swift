/// A name of up to 32 bytes as four zero-padded words, for classifying the raw keys and event
/// names of a line: one copy, then integer compares against the few candidates of its
/// length. A memcmp call per candidate was 3.5 % of the ingest's CPU.
public struct ShortName: Equatable, Sendable {
    @usableFromInline var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    @usableFromInline package static let maxCount = 32

    /// nil when `bytes` is longer than `maxCount`.
    @inlinable @inline(__always)
    package init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count <= Self.maxCount else { return nil }
        if let base = bytes.baseAddress {
            withUnsafeMutableBytes(of: &words) { $0.baseAddress!.copyMemory(from: base, byteCount: bytes.count) }
        }
    }

    package init?(_ text: String) {
        guard let name = Array(text.utf8).withUnsafeBytes({ ShortName($0) }) else { return nil }
        self = name
    }

    @inlinable @inline(__always)
    public static func == (a: ShortName, b: ShortName) -> Bool {
        a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2 && a.words.3 == b.words.3
    }

    /// The value of the candidate equal to `bytes`, among those of its length (`byLength[count]`).
    @inlinable @inline(__always)
    package static func lookup<Value>(_ bytes: UnsafeRawBufferPointer, in byLength: [[(name: ShortName, value: Value)]]) -> Value? {
        guard bytes.count < byLength.count, let name = ShortName(bytes) else { return nil }
        for candidate in byLength[bytes.count] where candidate.name == name { return candidate.value }
        return nil
    }

    /// `values` by the length of their names, for `lookup`.
    package static func table<Value>(_ values: [Value], name: (Value) -> String) -> [[(name: ShortName, value: Value)]] {
        var table = Array(repeating: [(name: ShortName, value: Value)](), count: maxCount + 1)
        for value in values {
            let text = name(value)
            guard let short = ShortName(text) else { preconditionFailure("\(text) is longer than \(maxCount) bytes") }
            table[text.utf8.count].append((short, value))
        }
        return table
    }
}
