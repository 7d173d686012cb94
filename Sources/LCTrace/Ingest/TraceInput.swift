import CZlib
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a trace comes from: a file path or standard input (`-`).
public enum InputLocation: Equatable, Sendable, CustomStringConvertible {
    case file(String)
    case standardInput

    public var description: String {
        switch self {
        case .file(let path): return path
        case .standardInput: return "-"
        }
    }
}

/// An input problem that costs the rest of a file (the bytes before it are kept).
public struct InputDamage: Error, Equatable, CustomStringConvertible {
    public var reason: String
    /// Offset in the raw (compressed) file where the damage was found.
    public var rawOffset: Int64
    public var description: String { reason }
}

/// Reads the decompressed bytes of one trace file: gzip detected by its magic bytes (1f 8b),
/// every member of a multi-member file inflated in turn, plain text passed through.
/// Memory is two fixed buffers whatever the input size. Also hashes the raw bytes
/// (SHA-256) so the file can be recognised by content.
public final class TraceInput {
    public let location: InputLocation
    private let fd: Int32
    private let ownsFD: Bool
    private var raw: UnsafeMutableRawBufferPointer
    private var rawStart = 0
    private var rawEnd = 0
    private var rawEOF = false
    private var stream = z_stream()
    private var inflating = false        // zlib stream initialised
    private var inMember = false         // inside a gzip member (started, not ended)
    private var sniffed = false
    /// True when the input starts with the gzip magic.
    public private(set) var isGzip = false
    /// Gzip members started so far.
    public private(set) var members = 0
    /// Raw bytes read from the file so far.
    public private(set) var rawBytesRead: Int64 = 0
    /// Decompressed bytes produced so far.
    public private(set) var bytesProduced: Int64 = 0
    /// Set when the stream ended badly: truncated gzip, corrupt data, trailing garbage.
    public private(set) var damage: InputDamage?
    /// Caps decompression: a member that inflates beyond `maxInflateRatio` × its compressed
    /// size (plus 1 MiB of slack) is cut and reported, so a zip bomb cannot fill the disk.
    public var maxInflateRatio: Int64 = 200
    private var memberRawStart: Int64 = 0
    private var memberOutStart: Int64 = 0
    private var hasher = SHA256()
    private var finished = false

    /// Opens `location`. Throws `CocoaError`-free POSIX errors as `InputOpenError`.
    public init(location: InputLocation, bufferSize: Int = 256 * 1024) throws {
        self.location = location
        switch location {
        case .standardInput:
            fd = 0
            ownsFD = false
        case .file(let path):
            let opened = open(path, O_RDONLY)
            if opened < 0 { throw InputOpenError(path: path, errno: errno) }
            fd = opened
            ownsFD = true
        }
        raw = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
    }

    deinit {
        if inflating { inflateEnd(&stream) }
        if ownsFD { close(fd) }
        raw.deallocate()
    }

    /// The SHA-256 of all raw bytes read; call after `read` returned 0.
    public func contentHash() -> String {
        var copy = hasher
        return copy.finalizeHex()
    }

    private func refill() -> Bool {
        if rawEOF { return false }
        if rawStart < rawEnd, rawStart > 0 {
            raw.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[rawStart..<rawEnd]))
            rawEnd -= rawStart
            rawStart = 0
        } else if rawStart >= rawEnd {
            rawStart = 0
            rawEnd = 0
        }
        while rawEnd < raw.count {
            let n = Glibc_read(fd, raw.baseAddress! + rawEnd, raw.count - rawEnd)
            if n < 0 {
                if errno == EINTR { continue }
                damage = InputDamage(reason: "read error: \(String(cString: strerror(errno)))", rawOffset: rawBytesRead)
                rawEOF = true
                break
            }
            if n == 0 { rawEOF = true; break }
            hasher.update(UnsafeRawBufferPointer(start: raw.baseAddress! + rawEnd, count: n))
            rawEnd += n
            rawBytesRead += Int64(n)
            break
        }
        return rawEnd > rawStart
    }

    /// Fills `buffer` with decompressed bytes; returns the count, 0 at the end (clean or damaged).
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if finished { return 0 }
        if !sniffed {
            sniffed = true
            while rawEnd - rawStart < 2 && refill() {}
            if rawEnd - rawStart >= 2 && raw[rawStart] == 0x1f && raw[rawStart + 1] == 0x8b {
                isGzip = true
            }
        }
        let n = isGzip ? readGzip(into: buffer) : readPlain(into: buffer)
        if n == 0 {
            finished = true
            // Drain the rest so the hash covers the whole file even when we stopped early.
            while !rawEOF {
                rawStart = rawEnd
                _ = refill()
            }
        }
        bytesProduced += Int64(n)
        return n
    }

    private func readPlain(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if rawStart >= rawEnd && !refill() { return 0 }
        let n = min(buffer.count, rawEnd - rawStart)
        buffer.baseAddress!.copyMemory(from: raw.baseAddress! + rawStart, byteCount: n)
        rawStart += n
        return n
    }

    private func rawOffset() -> Int64 { rawBytesRead - Int64(rawEnd - rawStart) }

    private func startMember() -> Bool {
        if !inflating {
            // 15 + 16: a gzip wrapper, not zlib or raw deflate (https://zlib.net/manual.html#Advanced).
            let rc = inflateInit2_(&stream, 15 + 16, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
            if rc != Z_OK {
                damage = InputDamage(reason: "zlib could not start (code \(rc))", rawOffset: rawOffset())
                return false
            }
            inflating = true
        } else {
            inflateReset(&stream)
        }
        inMember = true
        members += 1
        memberRawStart = rawOffset()
        memberOutStart = bytesProduced
        return true
    }

    private func readGzip(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if damage != nil { return 0 }
        while true {
            if !inMember {
                // Between members: more data must be another gzip member.
                while rawEnd - rawStart < 2 && refill() {}
                let available = rawEnd - rawStart
                if available == 0 { return 0 }
                if available >= 2 && raw[rawStart] == 0x1f && raw[rawStart + 1] == 0x8b {
                    if !startMember() { return 0 }
                } else if raw[rawStart..<rawEnd].allSatisfy({ $0 == 0 }) && rawEOF {
                    // Zero padding after the last member (some writers pad to a block): harmless.
                    rawStart = rawEnd
                    return 0
                } else {
                    damage = InputDamage(
                        reason: "trailing bytes after gzip member \(members) are not gzip data",
                        rawOffset: rawOffset())
                    return 0
                }
            }
            if rawStart >= rawEnd && !refill() {
                damage = InputDamage(
                    reason: "gzip stream truncated: member \(members) ends early at byte \(rawBytesRead)",
                    rawOffset: rawBytesRead)
                inMember = false
                return 0
            }
            let inCount = rawEnd - rawStart
            stream.next_in = (raw.baseAddress! + rawStart).assumingMemoryBound(to: Bytef.self)
            stream.avail_in = uInt(inCount)
            stream.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(buffer.count)
            let rc = inflate(&stream, Z_NO_FLUSH)
            let consumed = inCount - Int(stream.avail_in)
            rawStart += consumed
            let produced = buffer.count - Int(stream.avail_out)
            switch rc {
            case Z_OK, Z_BUF_ERROR:
                break
            case Z_STREAM_END:
                inMember = false
            default:
                let message = stream.msg.map { String(cString: $0) } ?? "code \(rc)"
                damage = InputDamage(
                    reason: "corrupt gzip data in member \(members) near byte \(rawOffset()): \(message)",
                    rawOffset: rawOffset())
                inMember = false
                return produced
            }
            let memberOut = bytesProduced + Int64(produced) - memberOutStart
            let memberIn = rawOffset() - memberRawStart
            if memberOut > maxInflateRatio * max(memberIn, 1) + (1 << 20) {
                damage = InputDamage(
                    reason: "gzip member \(members) inflates more than \(maxInflateRatio)× its size; rest of file skipped",
                    rawOffset: rawOffset())
                inMember = false
                return produced
            }
            if produced > 0 { return produced }
            if rc == Z_BUF_ERROR && consumed == 0 && rawEOF && rawStart >= rawEnd {
                continue  // loops to the truncation report above
            }
        }
    }
}

/// A path that could not be opened.
public struct InputOpenError: Error, CustomStringConvertible {
    public var path: String
    public var errno: Int32
    public var isMissing: Bool { errno == ENOENT || errno == ENOTDIR }
    public var description: String { "\(path): \(String(cString: strerror(errno)))" }
}

@inline(__always)
private func Glibc_read(_ fd: Int32, _ buf: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(fd, buf, count)
}
