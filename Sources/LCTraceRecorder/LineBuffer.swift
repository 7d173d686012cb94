/// The bytes of the member being made: a buffer the writer thread alone owns, kept from member
/// to member. Appends are plain copies (no Array uniqueness checks, no retains): the writer
/// encodes half a million events a second through it.
struct LineBuffer: ~Copyable {
    private var base: UnsafeMutableRawPointer
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 256)
        base = .allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit { base.deallocate() }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    mutating func removeAll() { count = 0 }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(to: count + 1) }
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    @inline(__always)
    mutating func append(_ source: UnsafeRawBufferPointer) {
        guard let from = source.baseAddress, source.count > 0 else { return }
        if count + source.count > capacity { grow(to: count + source.count) }
        (base + count).copyMemory(from: from, byteCount: source.count)
        count += source.count
    }

    /// Room for `n` more bytes, written by `body` (which returns how many it wrote).
    @inline(__always)
    mutating func write(upTo n: Int, _ body: (UnsafeMutableRawPointer) -> Int) {
        if count + n > capacity { grow(to: count + n) }
        count += body(base + count)
    }

    private mutating func grow(to needed: Int) {
        var bigger = capacity * 2
        while bigger < needed { bigger *= 2 }
        let moved = UnsafeMutableRawPointer.allocate(byteCount: bigger, alignment: 16)
        moved.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = moved
        capacity = bigger
    }
}
