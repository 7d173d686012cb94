import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LCTraceModel

/// Where a trace comes from: a file path or standard input (`-`).
package enum InputLocation: Equatable, Hashable, Sendable, CustomStringConvertible {
    case file(String)
    /// A path whose bytes are not UTF-8 (a name a device or an old archive wrote): opened by
    /// its bytes, shown with each byte that is not UTF-8 as `\xNN`.
    case bytes([UInt8])
    case standardInput

    /// The path for people and for `files.path`.
    package var description: String {
        switch self {
        case .file(let path): return path
        case .bytes(let bytes): return InputLocation.display(bytes)
        case .standardInput: return "-"
        }
    }

    /// A path from its bytes: `.file` when they are UTF-8, `.bytes` otherwise.
    package static func path(_ bytes: [UInt8]) -> InputLocation {
        String(validating: bytes, as: UTF8.self).map { .file($0) } ?? .bytes(bytes)
    }

    /// Calls `body` with the NUL-terminated path (nil for standard input).
    package func withPath<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R? {
        switch self {
        case .file(let path): return try path.withCString(body)
        case .bytes(let bytes):
            return try (bytes + [0]).withUnsafeBufferPointer { buffer in
                try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
            }
        case .standardInput: return nil
        }
    }

    /// `bytes` as text: valid UTF-8 as it is, every other byte as `\xNN`.
    package static func display(_ bytes: [UInt8]) -> String {
        var out = ""
        var i = 0
        while i < bytes.count {
            var end = i
            while end < bytes.count && bytes[end] < 0x80 { end += 1 }
            if end > i { out += String(decoding: bytes[i..<end], as: UTF8.self); i = end; continue }
            // A multi-byte sequence: the longest valid one from here (2 to 4 bytes), else one bad byte.
            var taken = false
            for length in [2, 3, 4] where i + length <= bytes.count {
                if let s = String(validating: bytes[i..<(i + length)], as: UTF8.self) { out += s; i += length; taken = true; break }
            }
            if !taken { out += "\\x" + String(bytes[i], radix: 16, uppercase: true).leftPadded(2); i += 1 }
        }
        return out
    }
}

package extension String {
    fileprivate func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}

/// An input problem that costs the rest of a file (the bytes before it are kept).
package struct InputDamage: Error, Equatable, CustomStringConvertible {
    package var reason: String
    /// Offset in the raw (compressed) file where the damage was found.
    package var rawOffset: Int64
    package var description: String { reason }
}

/// Reads the decompressed bytes of one trace file: gzip detected by its magic bytes (1f 8b),
/// every member of a multi-member file inflated in turn (by ISA-L where installed, else
/// zlib: `GzipInflater`), plain text passed through.
/// Memory is two fixed buffers whatever the input size. Also hashes the raw bytes
/// (SHA-256) so the file can be recognised by content.
///
/// Sendable by hand-off: the reader thread owns it while it reads; the writer looks at its
/// results (damage, hash, counts) only after the reader closed the batch queue, whose lock
/// orders those writes before the reads.
package final class TraceInput: @unchecked Sendable {
    package let location: InputLocation
    private let fd: Int32
    private let ownsFD: Bool
    /// Where the raw bytes come from when not a file descriptor: a member of a tar archive.
    private let source: RawSource?
    private var raw: UnsafeMutableRawBufferPointer
    private var rawStart = 0
    private var rawEnd = 0
    private var rawEOF = false
    /// ISA-L or zlib (`GzipInflaters.make`), made at the first member.
    private var inflater: GzipInflater?
    /// Makes the inflater (tests pass zlib's or ISA-L's to compare them).
    var makeInflater: () -> GzipInflater? = GzipInflaters.make
    private var inMember = false         // inside a gzip member (started, not ended)
    private var sniffed = false
    /// True when the input starts with the gzip magic.
    private(set) var isGzip = false
    /// Gzip members started so far.
    package private(set) var members = 0
    /// Raw bytes read from the file so far.
    package private(set) var rawBytesRead: Int64 = 0
    /// Decompressed bytes produced so far.
    package private(set) var bytesProduced: Int64 = 0
    /// Set when the stream ended badly: truncated gzip, corrupt data, trailing garbage.
    package private(set) var damage: InputDamage?
    /// The zip-bomb guard. Streaming keeps memory flat whatever a member inflates to, so the
    /// guard bounds only the time a bomb can cost: a member is cut (and the file reported as
    /// damaged) once it has produced more than `maxMemberBytes` and more than `maxInflateRatio`
    /// times its compressed size, both. A legitimate file that compresses well (a long constant
    /// key on every line: 300:1 and more) is read whole.
    package var maxInflateRatio: Int64 = 1000
    package var maxMemberBytes: Int64 = 1 << 30
    private var memberRawStart: Int64 = 0
    private var memberOutStart: Int64 = 0
    private var hasher = SHA256()
    private var finished = false
    /// Prefix lengths whose digest is wanted (`recordPrefixDigests`), ascending, and the
    /// digests found so far, by length.
    private var prefixLengths: [Int64] = []
    package private(set) var prefixDigests: [Int64: String] = [:]

    /// Asks for the SHA-256 of the first `lengths` raw bytes too (each length a file read
    /// before under the same path had): when one equals that read's hash, the earlier read
    /// was of this file while it was still being written.
    package func recordPrefixDigests(at lengths: [Int64]) {
        prefixLengths = Array(Set(lengths.filter { $0 > 0 })).sorted()
    }

    /// Hashes raw bytes as they arrive, taking the digest of every wanted prefix on the way.
    private func hash(_ bytes: UnsafeRawBufferPointer) {
        var rest = bytes
        var offset = rawBytesRead
        while let length = prefixLengths.first, length <= offset + Int64(rest.count) {
            let take = Int(length - offset)
            hasher.update(UnsafeRawBufferPointer(rebasing: rest[..<take]))
            var copy = hasher
            prefixDigests[length] = copy.finalizeHex()
            prefixLengths.removeFirst()
            rest = UnsafeRawBufferPointer(rebasing: rest[take...])
            offset = length
        }
        hasher.update(rest)
    }

    /// Opens `location`: standard input as it is, a path only when it is a regular file (a FIFO
    /// or a device would block, or never end). Throws `InputOpenError`.
    package init(location: InputLocation, bufferSize: Int = 256 * 1024) throws {
        self.location = location
        if location == .standardInput {
            fd = 0
            ownsFD = false
        } else {
            fd = try Self.openRegularFile(location)
            ownsFD = true
        }
        source = nil
        raw = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
    }

    /// Reads the raw bytes `source` gives (a tar member's content), named `location`.
    package init(location: InputLocation, source: RawSource, bufferSize: Int = 256 * 1024) {
        self.location = location
        fd = -1
        ownsFD = false
        self.source = source
        raw = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
    }

    /// Opens a path for reading without blocking (opening a FIFO waits for a writer), then
    /// refuses it unless it is a regular file, then makes its reads blocking again.
    package static func openRegularFile(_ location: InputLocation) throws -> Int32 {
        let path = location.description
        let opened = location.withPath { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC) } ?? -1
        if opened < 0 { throw InputOpenError(path: path, errno: errno) }
        var st = stat()
        guard fstat(opened, &st) == 0 else {
            let code = errno
            close(opened)
            throw InputOpenError(path: path, errno: code)
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(opened)
            throw InputOpenError(path: path, errno: 0, notRegular: FileKind.name(st.st_mode))
        }
        _ = fcntl(opened, F_SETFL, fcntl(opened, F_GETFL) & ~O_NONBLOCK)
        return opened
    }

    deinit {
        if ownsFD { close(fd) }
        raw.deallocate()
    }

    /// The SHA-256 of all raw bytes read; call after `read` returned 0.
    package func contentHash() -> String {
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
            if let source {
                switch source.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[rawEnd...])) {
                case .bytes(let n):
                    hash(UnsafeRawBufferPointer(start: raw.baseAddress! + rawEnd, count: n))
                    rawEnd += n
                    rawBytesRead += Int64(n)
                case .end:
                    rawEOF = true
                case .failed(let reason):
                    damage = InputDamage(reason: reason, rawOffset: rawBytesRead)
                    rawEOF = true
                }
                break
            }
            let n = Glibc_read(fd, raw.baseAddress! + rawEnd, raw.count - rawEnd)
            if n < 0 {
                if errno == EINTR { continue }
                damage = InputDamage(reason: "read error: \(String(cString: strerror(errno)))", rawOffset: rawBytesRead)
                rawEOF = true
                break
            }
            if n == 0 { rawEOF = true; break }
            hash(UnsafeRawBufferPointer(start: raw.baseAddress! + rawEnd, count: n))
            rawEnd += n
            rawBytesRead += Int64(n)
            break
        }
        return rawEnd > rawStart
    }

    /// Fills `buffer` with decompressed bytes; returns the count, 0 at the end (clean or damaged).
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
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
        if let inflater {
            if let problem = inflater.reset() {
                damage = InputDamage(reason: problem, rawOffset: rawOffset())
                return false
            }
        } else {
            guard let made = makeInflater() else {
                damage = InputDamage(reason: "no gzip inflater could start (zlib failed)", rawOffset: rawOffset())
                return false
            }
            inflater = made
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
                // Between members: zero bytes are padding (flash storage and some writers pad a
                // file to a block), anything else must be another member.
                while true {
                    while rawStart < rawEnd && raw[rawStart] == 0 { rawStart += 1 }
                    if rawStart < rawEnd || !refill() { break }
                }
                while rawEnd - rawStart < 2 && refill() {}
                let available = rawEnd - rawStart
                if available == 0 { return 0 }
                if available >= 2 && raw[rawStart] == 0x1f && raw[rawStart + 1] == 0x8b {
                    if !startMember() { return 0 }
                } else {
                    damage = InputDamage(
                        reason: "trailing bytes after gzip member \(members) are not gzip data",
                        rawOffset: rawOffset())
                    return 0
                }
            }
            if rawStart >= rawEnd && !refill() { return truncated() }
            let step = inflater!.inflate(UnsafeRawBufferPointer(start: raw.baseAddress! + rawStart, count: rawEnd - rawStart),
                                         into: buffer)
            rawStart += step.consumed
            let produced = step.produced
            switch step.status {
            case .more:
                break
            case .memberEnd:
                inMember = false
            case .corrupt(let message):
                damage = InputDamage(
                    reason: "corrupt gzip data in member \(members) near byte \(rawOffset()): \(message)",
                    rawOffset: rawOffset())
                inMember = false
                return produced
            }
            let memberOut = bytesProduced + Int64(produced) - memberOutStart
            let memberIn = rawOffset() - memberRawStart
            if memberOut > maxMemberBytes && memberOut / max(memberIn, 1) > maxInflateRatio {
                damage = InputDamage(
                    reason: "gzip member \(members) inflates more than \(maxInflateRatio)× its size past \(maxMemberBytes >> 20) MiB (a zip bomb?); rest of file skipped",
                    rawOffset: rawOffset())
                inMember = false
                return produced
            }
            if produced > 0 { return produced }
            if step.status == .more && step.consumed == 0 && rawStart < rawEnd {
                // No progress on the bytes buffered: the inflater wants more of them at once.
                let buffered = rawEnd - rawStart
                if !refill() || rawEnd - rawStart == buffered { return truncated() }
            }
        }
    }

    /// The input ended inside a member: records the damage (unless the source gave its own
    /// reason, an archive cut inside this file); nothing more comes out.
    private func truncated() -> Int {
        if damage == nil { damage = InputDamage(reason: "gzip stream truncated: member \(members) ends early at byte \(rawBytesRead)",
                             rawOffset: rawBytesRead) }
        inMember = false
        return 0
    }
}

/// What one read of a `RawSource` gave.
package enum RawRead: Equatable {
    /// This many bytes (more than 0).
    case bytes(Int)
    case end
    /// The bytes stop here for this reason (an archive cut inside the member).
    case failed(String)
}

/// Raw bytes that do not come from a file of their own (a member inside a tar archive).
package protocol RawSource: AnyObject {
    func read(into buffer: UnsafeMutableRawBufferPointer) -> RawRead
}

/// A path that could not be opened, or that is not a regular file.
package struct InputOpenError: Error, CustomStringConvertible {
    package var path: String
    package var errno: Int32
    /// What the path is when it is not a regular file ("a FIFO", "a directory" …).
    package var notRegular: String?
    package init(path: String, errno: Int32, notRegular: String? = nil) {
        self.path = path; self.errno = errno; self.notRegular = notRegular
    }
    package var isMissing: Bool { notRegular == nil && (errno == ENOENT || errno == ENOTDIR) }
    /// Why, in a few words.
    package var reason: String { notRegular.map { "not a regular file (\($0))" } ?? String(cString: strerror(errno)) }
    package var description: String { "\(path): \(reason)" }
}

@inline(__always)
private func Glibc_read(_ fd: Int32, _ buf: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(fd, buf, count)
}
