internal import CZlib

/// Compresses each flush into one complete gzip member (RFC 1952 §2.2: a file may hold many,
/// one after another). A member ends with its trailer, so everything flushed before a kill
/// is readable; only a member cut in the middle of its write is lost, and the reader keeps
/// the lines before the cut. One z_stream, reset between members, and one output buffer,
/// grown to the largest member's bound: nothing is allocated per flush.
final class GzipMembers {
    private var stream = z_stream()
    private var ready = false
    private var buffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var produced = 0

    init(level: Int) {
        // windowBits 15 + 16: a gzip wrapper (zlib manual, deflateInit2); memLevel 8: 256 KiB of state.
        ready = deflateInit2_(&stream, Int32(max(1, min(9, level))), Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                              ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
    }

    deinit {
        if ready { deflateEnd(&stream) }
        buffer.deallocate()
    }

    /// The last member (valid until the next `compress`).
    var output: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: buffer[0..<produced]) }

    /// `input` as one gzip member in `output`; false when zlib failed.
    func compress(_ input: UnsafeRawBufferPointer) -> Bool {
        produced = 0
        guard ready else { return false }
        // deflateBound: room for the whole member, so one Z_FINISH call ends it.
        let bound = Int(deflateBound(&stream, uLong(input.count)))
        if buffer.count < bound {
            buffer.deallocate()
            buffer = .allocate(byteCount: bound, alignment: 16)
        }
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        stream.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(buffer.count)
        let rc = deflate(&stream, Z_FINISH)
        produced = buffer.count - Int(stream.avail_out)
        stream.next_in = nil
        stream.next_out = nil
        deflateReset(&stream)
        return rc == Z_STREAM_END
    }
}
