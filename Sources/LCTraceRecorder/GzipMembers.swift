import CZlib

/// Compresses each flush into one complete gzip member (RFC 1952 §2.2: a file may hold many,
/// one after another). A member ends with its trailer, so everything flushed before a kill
/// is readable; only a member cut in the middle of its write is lost, and the reader keeps
/// the lines before the cut. One z_stream, reset between members (no allocation per flush).
final class GzipMembers {
    private var stream = z_stream()
    private var ready = false
    /// The last member (valid until the next `compress`).
    private(set) var output: [UInt8] = []

    init(level: Int) {
        // windowBits 15 + 16: a gzip wrapper (zlib manual, deflateInit2); memLevel 8: 256 KiB of state.
        ready = deflateInit2_(&stream, Int32(max(1, min(9, level))), Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                              ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
    }

    deinit { if ready { deflateEnd(&stream) } }

    /// `input` as one gzip member in `output`; false when zlib failed.
    func compress(_ input: UnsafeRawBufferPointer) -> Bool {
        guard ready else { return false }
        output.removeAll(keepingCapacity: true)
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        var rc: Int32
        repeat {
            let start = output.count
            let room = max(Int(deflateBound(&stream, uLong(stream.avail_in))), 1 << 12)
            output.append(contentsOf: repeatElement(0, count: room))
            rc = output.withUnsafeMutableBufferPointer { out in
                stream.next_out = out.baseAddress! + start
                stream.avail_out = uInt(room)
                return deflate(&stream, Z_FINISH)
            }
            output.removeLast(Int(stream.avail_out))
        } while rc == Z_OK
        stream.next_in = nil
        stream.next_out = nil
        deflateReset(&stream)
        return rc == Z_STREAM_END
    }
}
