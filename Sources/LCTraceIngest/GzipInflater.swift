internal import CFastInflate
internal import CZlib

/// What one call of `GzipInflater.inflate` did.
struct InflateStep: Equatable {
    package enum Status: Equatable {
        /// Needs more input, or more room for output.
        case more
        /// The gzip member is complete (its trailer's CRC and length checked).
        case memberEnd
        /// The data is corrupt; the words say how.
        case corrupt(String)
    }
    var consumed: Int
    package var produced: Int
    package var status: Status
}

/// Inflates gzip members one at a time (the seam between TraceInput and a deflate library).
/// `make()` picks Intel's ISA-L when its library can be loaded (several times faster than
/// zlib, freeing the reader's core for decoding) and zlib otherwise; both check each
/// member's trailer.
protocol GzipInflater: AnyObject {
    /// The library, for messages and the benchmark ("zlib 1.2.13", "ISA-L igzip").
    var name: String { get }
    /// Starts the next member.
    func reset() -> String?
    func inflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> InflateStep
}

enum GzipInflaters {
    /// ISA-L when available (unless `LCTRACE_NO_ISAL` is set), else zlib; nil when neither starts.
    package static func make() -> GzipInflater? {
        if let fast = ISALInflater() { return fast }
        return ZlibInflater()
    }

    /// The library `make()` would use.
    static var preferred: String { lct_isal_description().map { String(cString: $0) } ?? ZlibInflater.versionName }
}

/// zlib's inflate with a gzip wrapper (window bits 15 + 16, https://zlib.net/manual.html#Advanced).
final class ZlibInflater: GzipInflater {
    private var stream = z_stream()
    static var versionName: String { "zlib " + String(cString: zlibVersion()) }
    package var name: String { Self.versionName }

    package init?() {
        let rc = inflateInit2_(&stream, 15 + 16, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        if rc != Z_OK { return nil }
    }

    deinit { inflateEnd(&stream) }

    package func reset() -> String? {
        inflateReset(&stream) == Z_OK ? nil : "zlib could not restart"
    }

    package func inflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> InflateStep {
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        stream.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(output.count)
        let rc = CZlib.inflate(&stream, Z_NO_FLUSH)
        let step = (consumed: input.count - Int(stream.avail_in), produced: output.count - Int(stream.avail_out))
        switch rc {
        case Z_OK, Z_BUF_ERROR: return InflateStep(consumed: step.consumed, produced: step.produced, status: .more)
        case Z_STREAM_END: return InflateStep(consumed: step.consumed, produced: step.produced, status: .memberEnd)
        default:
            let message = stream.msg.map { String(cString: $0) } ?? "code \(rc)"
            return InflateStep(consumed: step.consumed, produced: step.produced, status: .corrupt(message))
        }
    }
}

/// ISA-L's igzip, loaded at run time (Sources/CFastInflate): nil where the library is absent.
final class ISALInflater: GzipInflater {
    private let handle: OpaquePointer
    package var name: String { "ISA-L igzip" }

    package init?() {
        guard let handle = lct_isal_new() else { return nil }
        self.handle = handle
    }

    deinit { lct_isal_free(handle) }

    package func reset() -> String? {
        lct_isal_reset(handle)
        return nil
    }

    package func inflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> InflateStep {
        var consumed: UInt32 = 0, produced: UInt32 = 0
        let rc = lct_isal_inflate(handle, input.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt32(input.count), &consumed,
                                  output.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt32(output.count), &produced)
        let status: InflateStep.Status
        switch rc {
        case Int32(LCT_ISAL_MORE): status = .more
        case Int32(LCT_ISAL_MEMBER_END): status = .memberEnd
        default: status = .corrupt(String(cString: lct_isal_error(handle)))
        }
        return InflateStep(consumed: Int(consumed), produced: Int(produced), status: status)
    }
}
