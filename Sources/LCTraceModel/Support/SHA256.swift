internal import CFastHash
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SHA-256 (FIPS 180-4), streaming. Foundation on Linux has no digest API and outside
/// packages are not allowed, so lctrace carries this small one to identify input files
/// by content: a copy of a file under another name is recognised and adds nothing. Where the
/// CPU has SHA extensions the blocks go through them (`CFastHash`, eight times faster: the
/// Swift rounds were 4 % of the ingest's instructions); `LCTRACE_NO_SHA_HW=1` turns them off.
package struct SHA256 {
    /// The CPU's SHA extensions can be used (checked once).
    static let hardwareAvailable = lct_sha256_hw_available() != 0 && getenv("LCTRACE_NO_SHA_HW") == nil
    private let hardware: Bool

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
    private var pending = [UInt8](repeating: 0, count: 64)
    private var pendingCount = 0
    private var totalBytes: UInt64 = 0

    /// The round constants, shared with the hardware rounds (`CFastHash`).
    private static let k = Array(UnsafeBufferPointer(start: lct_sha256_round_constants(), count: 64))

    /// `hardware: false` forces the portable rounds (the tests compare the two).
    package init(hardware: Bool = SHA256.hardwareAvailable) {
        self.hardware = hardware && SHA256.hardwareAvailable
    }

    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        totalBytes &+= UInt64(bytes.count)
        var index = 0
        if pendingCount > 0 {
            let take = min(64 - pendingCount, bytes.count)
            for i in 0..<take { pending[pendingCount + i] = bytes[i] }
            pendingCount += take
            index = take
            if pendingCount == 64 {
                pending.withUnsafeBytes { compress($0.baseAddress!) }
                pendingCount = 0
            }
        }
        let blocks = (bytes.count - index) / 64
        if blocks > 0 {
            compress(bytes.baseAddress! + index, count: blocks)
            index += blocks * 64
        }
        for i in index..<bytes.count {
            pending[pendingCount] = bytes[i]
            pendingCount += 1
        }
    }

    package mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest as 64 lowercase hex digits.
    package mutating func finalizeHex() -> String {
        let bitLength = totalBytes &* 8
        var tail: [UInt8] = [0x80]
        while (pendingCount + tail.count) % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        let saved = totalBytes
        tail.withUnsafeBytes { update($0) }
        totalBytes = saved
        let words = [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7]
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for w in words {
            for shift in stride(from: 28, through: 0, by: -4) { out.append(digits[Int((w >> UInt32(shift)) & 0xf)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    @inline(__always) private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }

    /// Runs `count` 64-byte blocks through the compression function, the message schedule on
    /// the stack (it was a heap array per block).
    private mutating func compress(_ blocks: UnsafeRawPointer, count: Int = 1) {
        if hardware {
            withUnsafeMutableBytes(of: &state) {
                lct_sha256_hw_blocks($0.baseAddress!.assumingMemoryBound(to: UInt32.self), blocks.assumingMemoryBound(to: UInt8.self), count)
            }
            return
        }
        var (h0, h1, h2, h3, h4, h5, h6, h7) = state
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            SHA256.k.withUnsafeBufferPointer { k in
                for n in 0..<count {
                    let block = blocks + n * 64
                    for i in 0..<16 {
                        w[i] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))
                    }
                    for i in 16..<64 {
                        let x = w[i - 15], y = w[i - 2]
                        let s0 = Self.rotr(x, 7) ^ Self.rotr(x, 18) ^ (x >> 3)
                        let s1 = Self.rotr(y, 17) ^ Self.rotr(y, 19) ^ (y >> 10)
                        w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
                    }
                    var (a, b, c, d, e, f, g, h) = (h0, h1, h2, h3, h4, h5, h6, h7)
                    for i in 0..<64 {
                        let s1 = Self.rotr(e, 6) ^ Self.rotr(e, 11) ^ Self.rotr(e, 25)
                        let ch = (e & f) ^ (~e & g)
                        let t1 = h &+ s1 &+ ch &+ k[i] &+ w[i]
                        let s0 = Self.rotr(a, 2) ^ Self.rotr(a, 13) ^ Self.rotr(a, 22)
                        let maj = (a & b) ^ (a & c) ^ (b & c)
                        let t2 = s0 &+ maj
                        h = g; g = f; f = e; e = d &+ t1
                        d = c; c = b; b = a; a = t1 &+ t2
                    }
                    h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d; h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= h
                }
            }
        }
        state = (h0, h1, h2, h3, h4, h5, h6, h7)
    }
}
