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

/// An input problem that costs the rest of a file, or the bytes up to the next gzip member
/// found after it (the bytes before it are kept).
package struct InputDamage: Error, Equatable, CustomStringConvertible {
    package var reason: String
    /// Offset in the raw (compressed) file where the damage was found.
    package var rawOffset: Int64
    /// Where reading went on: the raw offset of the next gzip member found after the damage
    /// (nil: nothing was read after it).
    package var resumedAt: Int64?
    /// Lines read when the damage was met (set by `LineReader`).
    package var line: Int?
    package init(reason: String, rawOffset: Int64) {
        self.reason = reason
        self.rawOffset = rawOffset
    }
    /// The reason, and where reading went on.
    package var description: String {
        guard let resumedAt else { return reason }
        return "\(reason); reading went on at the next gzip member, byte \(resumedAt)"
    }
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
    /// Every place the stream was damaged, in order: truncated gzip, corrupt data, bytes that
    /// are not gzip, a read error. Only corrupt data and bytes that are not gzip can have more
    /// after them (`resumesAfterDamage`).
    package private(set) var damages: [InputDamage] = []
    /// The first damage: with it the file is damaged, whatever was read after it.
    package var damage: InputDamage? { damages.first }
    /// The damages in one line: the first, and how many came after it.
    package var damageSummary: String? {
        guard let first = damages.first else { return nil }
        let more = damages.count - 1
        return more == 0 ? first.description : "\(first.description) (and \(more) more damaged place\(more == 1 ? "" : "s") after it)"
    }
    /// After corrupt data or bytes that are not gzip, looks for a later gzip member and reads
    /// on from it (`resume`), as a device's file can hold good members after a damaged one (a
    /// power cut that kept later blocks but not an earlier one, files joined by `cat`). Set
    /// by `LineReader`, which starts a new line there; a tar archive's reader does not (its
    /// blocks would be out of step).
    package var resumesAfterDamage = false
    /// The current stretch of the stream (since the start or the last resume) is damaged:
    /// nothing more comes out of it.
    private var segmentDamaged = false
    /// The damage allows a search for a later member, from this raw offset.
    private var resumeSearchFrom: Int64?
    /// Damages whose `line` is set (`resume`).
    private var damagesWithLine = 0
    /// Damaged places after which a file is not read on: a device's file has a few; a file of
    /// thousands is not a trace, and each costs a `rejects` row.
    package static let maxDamages = 1000
    /// The file's offset of the byte after the buffered ones (`rawBytesRead`, until a search
    /// for the next member reads an earlier part again).
    private var rawPosition: Int64 = 0
    /// Reading again, with `pread`, a part of a file already hashed whole: a search for the
    /// next member started from the damaged member's first byte, as the inflater may have
    /// read on into later members' bytes before it found them wrong (or met the file's end).
    private var rereading = false
    /// Output of a candidate member's trial inflation (`isMember`), made when first needed.
    private var probeOutput = UnsafeMutableRawBufferPointer(start: nil, count: 0)
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
        probeOutput.deallocate()
    }

    /// The SHA-256 of all the raw bytes: the rest of the file is read first when reading
    /// stopped early.
    package func contentHash() -> String {
        finishReading()
        var copy = hasher
        return copy.finalizeHex()
    }

    /// Records a damage; nothing more comes out of the current stretch of the stream.
    private func record(_ damage: InputDamage, searchingFrom: Int64? = nil) {
        damages.append(damage)
        segmentDamaged = true
        resumeSearchFrom = resumesAfterDamage ? searchingFrom : nil
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
            if rereading {
                // No further than the bytes hashed: a file still growing is read as it was.
                let n = pread(fd, raw.baseAddress! + rawEnd, Int(min(Int64(raw.count - rawEnd), rawBytesRead - rawPosition)),
                              off_t(rawPosition))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { rawEOF = true; break }
                rawEnd += n
                rawPosition += Int64(n)
                break
            }
            if let source {
                switch source.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[rawEnd...])) {
                case .bytes(let n):
                    hash(UnsafeRawBufferPointer(start: raw.baseAddress! + rawEnd, count: n))
                    rawEnd += n
                    rawBytesRead += Int64(n)
                    rawPosition += Int64(n)
                case .end:
                    rawEOF = true
                case .failed(let reason):
                    record(InputDamage(reason: reason, rawOffset: rawPosition))
                    rawEOF = true
                }
                break
            }
            let n = Glibc_read(fd, raw.baseAddress! + rawEnd, raw.count - rawEnd)
            if n < 0 {
                if errno == EINTR { continue }
                record(InputDamage(reason: "read error: \(String(cString: strerror(errno)))", rawOffset: rawPosition))
                rawEOF = true
                break
            }
            if n == 0 { rawEOF = true; break }
            hash(UnsafeRawBufferPointer(start: raw.baseAddress! + rawEnd, count: n))
            rawEnd += n
            rawBytesRead += Int64(n)
            rawPosition += Int64(n)
            break
        }
        return rawEnd > rawStart
    }

    /// Fills `buffer` with decompressed bytes; returns the count, 0 at the end (clean or
    /// damaged), or at damage that `resume` may read on after.
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
        if n == 0 && resumeSearchFrom == nil { finishReading() }
        bytesProduced += Int64(n)
        return n
    }

    /// After `read` returned 0: when the damage it stopped at may have good gzip members after
    /// it, looks for the next one and returns true when reading goes on there (the caller
    /// starts a new line). `lines`: the lines read so far, recorded with the damages met since
    /// the last call.
    package func resume(linesRead lines: Int) -> Bool {
        for i in damagesWithLine..<damages.count { damages[i].line = lines }
        damagesWithLine = damages.count
        guard let from = resumeSearchFrom, !finished else { finishReading(); return false }
        guard damages.count < Self.maxDamages else {
            damages[damages.count - 1].reason += " (\(Self.maxDamages) damaged places in this file: the rest of it skipped)"
            finishReading()
            return false
        }
        resumeSearchFrom = nil
        inMember = false
        if ownsFD && !rereading {
            // A file: hashed whole first, then read again from where the search starts.
            hashRest()
            rereading = true
            rawStart = 0
            rawEnd = 0
            rawPosition = from
            rawEOF = false
        }
        let damagedMember = members
        guard findMember(from: from) else { finishReading(); return false }
        let last = damages.count - 1
        damages[last].resumedAt = memberRawStart
        if damages[last].reason.hasPrefix("gzip stream truncated") {
            // Where the stream ended is not where the member was cut: the next one starts there.
            damages[last].reason = "gzip stream truncated: member \(damagedMember) is cut short"
        }
        segmentDamaged = false
        return true
    }

    /// Reads and hashes the raw bytes not read yet (the buffer's content is lost).
    private func hashRest() {
        while !rawEOF && !rereading {
            rawStart = rawEnd
            _ = refill()
        }
    }

    /// Ends the reading: the hash then covers the whole file even when reading stopped early.
    private func finishReading() {
        if finished { return }
        finished = true
        inMember = false
        hashRest()
    }

    /// Looks for the start of a gzip member at raw offset `from` or after it (as far back as
    /// the buffer holds, for an input that cannot be read again) and starts inflating it.
    private func findMember(from: Int64) -> Bool {
        var position = max(0, Int(from - (rawPosition - Int64(rawEnd))))
        while true {
            while position + 10 <= rawEnd {
                guard let hit = memchr(raw.baseAddress! + position, 0x1f, rawEnd - 9 - position) else {
                    position = rawEnd - 9
                    break
                }
                let i = raw.baseAddress!.distance(to: UnsafeMutableRawPointer(mutating: hit))
                guard Self.looksLikeMemberHeader(UnsafeRawBufferPointer(rebasing: raw[i..<(i + 10)])) else {
                    position = i + 1
                    continue
                }
                // Trial-inflated from the buffer's start, with as many bytes after it as it holds.
                if i > 0 && rawEnd - i < raw.count / 2 && !rawEOF {
                    rawStart = i
                    _ = refill()
                    position = rawStart
                    continue
                }
                if isMember(at: i) {
                    rawStart = i
                    return startMember()
                }
                position = i + 1
            }
            // The last nine bytes may begin a member: kept while more are read.
            rawStart = min(position, rawEnd)
            let left = rawEnd - rawStart
            if rawEOF || !refill() || rawEnd - rawStart == left { rawStart = rawEnd; return false }
            position = rawStart
        }
    }

    /// A member's first ten bytes as RFC 1952 §2.3 says they must be: the magic, deflate, no
    /// reserved flag set, an extra flag deflate writes. About one chance in ten billion that
    /// compressed bytes look like that.
    static func looksLikeMemberHeader(_ b: UnsafeRawBufferPointer) -> Bool {
        b.count >= 10 && b[0] == 0x1f && b[1] == 0x8b && b[2] == 8 && b[3] & 0xe0 == 0 && (b[8] == 0 || b[8] == 2 || b[8] == 4)
    }

    /// Whether the buffered bytes from `i` inflate without an error, to their member's end or
    /// as far as they go: a header found by chance in compressed bytes is followed by data a
    /// fresh inflater refuses within a few bytes.
    private func isMember(at i: Int) -> Bool {
        guard let probe = makeInflater() else { return true }
        if probeOutput.count == 0 { probeOutput = .allocate(byteCount: 64 * 1024, alignment: 16) }
        var offset = i
        while offset < rawEnd {
            let step = probe.inflate(UnsafeRawBufferPointer(rebasing: raw[offset..<rawEnd]), into: probeOutput)
            offset += step.consumed
            switch step.status {
            case .corrupt: return false
            case .memberEnd: return true
            case .more: if step.consumed == 0 && step.produced == 0 { return true }
            }
        }
        return true
    }

    private func readPlain(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if rawStart >= rawEnd && !refill() { return 0 }
        let n = min(buffer.count, rawEnd - rawStart)
        buffer.baseAddress!.copyMemory(from: raw.baseAddress! + rawStart, byteCount: n)
        rawStart += n
        return n
    }

    private func rawOffset() -> Int64 { rawPosition - Int64(rawEnd - rawStart) }

    private func startMember() -> Bool {
        if let inflater {
            if let problem = inflater.reset() {
                record(InputDamage(reason: problem, rawOffset: rawOffset()))
                return false
            }
        } else {
            guard let made = makeInflater() else {
                record(InputDamage(reason: "no gzip inflater could start (zlib failed)", rawOffset: rawOffset()))
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
        if segmentDamaged { return 0 }
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
                    record(InputDamage(reason: "trailing bytes after gzip member \(members) are not gzip data",
                                       rawOffset: rawOffset()),
                           searchingFrom: rawOffset() + 1)
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
                record(InputDamage(reason: "corrupt gzip data in member \(members) near byte \(rawOffset()): \(message)",
                                   rawOffset: rawOffset()),
                       searchingFrom: memberRawStart + 1)
                inMember = false
                return produced
            }
            let memberOut = bytesProduced + Int64(produced) - memberOutStart
            let memberIn = rawOffset() - memberRawStart
            if memberOut > maxMemberBytes && memberOut / max(memberIn, 1) > maxInflateRatio {
                record(InputDamage(
                    reason: "gzip member \(members) inflates more than \(maxInflateRatio)× its size past \(maxMemberBytes >> 20) MiB (a zip bomb?); rest of file skipped",
                    rawOffset: rawOffset()))
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
        if !segmentDamaged {
            // A file is searched from the member's start: the inflater may have read a later
            // member's bytes as its own to the end without finding them wrong.
            record(InputDamage(reason: "gzip stream truncated: member \(members) ends early at byte \(rawPosition)",
                               rawOffset: rawPosition),
                   searchingFrom: inMember && ownsFD ? memberRawStart + 1 : nil)
        }
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
