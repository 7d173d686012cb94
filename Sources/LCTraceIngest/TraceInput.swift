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
    /// The reason, and where reading went on (a member cut where the next starts says so).
    package var description: String {
        guard let resumedAt, !reason.hasSuffix("reading went on with it") else { return reason }
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
    /// Every place the stream was damaged, in order: truncated gzip, a member cut where another
    /// starts, corrupt data, bytes that are not gzip, a read error. Reading goes on after all
    /// but a truncation at the end and a read error (`resumesAfterDamage`).
    package private(set) var damages: [InputDamage] = []
    /// The first damage: with it the file is damaged, whatever was read after it.
    package var damage: InputDamage? { damages.first }
    /// The damages in one line: the first, and how many came after it.
    package var damageSummary: String? {
        guard let first = damages.first else { return nil }
        let more = damages.count - 1
        var text = more == 0 ? first.description : "\(first.description) (and \(more) more damaged place\(more == 1 ? "" : "s") after it)"
        if damages.count >= Self.maxDamages { text += "; the rest of the file skipped after \(Self.maxDamages) damaged places" }
        return text
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
    /// Raw offset up to which the bytes were looked at for the start of another member
    /// (`feedEnd`): the inflater is never given one, so a member cut short ends where the next
    /// one starts, and the next one's bytes are not inflated as the cut one's.
    private var checkedUpTo: Int64 = 0
    /// The inflater that tries a look-alike member (`isMember`), and its output, made when
    /// first needed.
    private var probe: GzipInflater?
    private var probeOutput = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    /// Raw bytes the trials of look-alikes may still inflate in this file: a crafted file of
    /// thousands of them costs at most this, and is read as if they were none after it.
    private var trialBudget: Int64 = 64 << 20
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
            if let source {
                switch source.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[rawEnd...])) {
                case .bytes(let n):
                    hash(UnsafeRawBufferPointer(start: raw.baseAddress! + rawEnd, count: n))
                    rawEnd += n
                    rawBytesRead += Int64(n)
                case .end:
                    rawEOF = true
                case .failed(let reason):
                    record(InputDamage(reason: reason, rawOffset: rawBytesRead))
                    rawEOF = true
                }
                break
            }
            let n = Glibc_read(fd, raw.baseAddress! + rawEnd, raw.count - rawEnd)
            if n < 0 {
                if errno == EINTR { continue }
                record(InputDamage(reason: "read error: \(String(cString: strerror(errno)))", rawOffset: rawBytesRead))
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

    /// Fills `buffer` with decompressed bytes; returns the count, 0 at the end (clean or
    /// damaged), or at damage that `resume` may read on after.
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if finished { return 0 }
        if !sniffed {
            sniffed = true
            while rawEnd - rawStart < 2 && refill() {}
            if rawEnd - rawStart >= 2 && raw[rawStart] == 0x1f && raw[rawStart + 1] == 0x8b {
                isGzip = true
            } else if resumesAfterDamage && rawEnd > rawStart && raw[rawStart] == 0 {
                // No text starts with NUL: a gzip file whose first block a power cut left zeroed
                // (its length was kept, its data not). Read on from its first whole member.
                isGzip = true
                let found = findMember(from: 0)
                var damage = InputDamage(reason: found ? "bytes 0 to \(memberRawStart) are not gzip data (the file's start is damaged)"
                                                       : "the file starts with a zero byte and holds no gzip member after it: not a trace",
                                         rawOffset: 0)
                damage.resumedAt = found ? memberRawStart : nil
                damage.line = 0
                damages.append(damage)
                damagesWithLine = damages.count
                guard found else { finishReading(); return 0 }
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
        resumeSearchFrom = nil
        guard damages.count < Self.maxDamages else {
            damages[damages.count - 1].reason += " (\(Self.maxDamages) damaged places in this file: the rest of it skipped)"
            finishReading()
            return false
        }
        inMember = false
        guard findMember(from: from) else { finishReading(); return false }
        damages[damages.count - 1].resumedAt = memberRawStart
        segmentDamaged = false
        return true
    }

    /// Ends the reading: the rest of the raw bytes is read, so the hash covers the whole file
    /// even when reading stopped early.
    private func finishReading() {
        if finished { return }
        finished = true
        inMember = false
        while !rawEOF {
            rawStart = rawEnd
            _ = refill()
        }
    }

    /// Looks for the start of a gzip member at raw offset `from` or after it (never before
    /// the bytes not inflated yet: those were looked at, `feedEnd`) and starts inflating it.
    private func findMember(from: Int64) -> Bool {
        var position = bufferIndex(of: from)
        while true {
            if let i = firstLookAlike(from: position, below: rawEnd) {
                rawStart = i  // the bytes before it are the damage's
                if isMember() {
                    checkedUpTo = rawOffset()
                    return startMember()
                }
                position = rawStart + 1
                continue
            }
            // The last nine bytes may begin a member: kept while more are read.
            position = max(position, rawEnd - 9)
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

    /// The first member look-alike that starts in the buffer at `from` or after, before
    /// `below` (none starts in the last nine buffered bytes: a header has ten).
    private func firstLookAlike(from: Int, below: Int) -> Int? {
        let last = min(below, rawEnd - 9)
        var position = from
        while position < last {
            guard let hit = memchr(raw.baseAddress! + position, 0x1f, last - position) else { return nil }
            let i = raw.baseAddress!.distance(to: UnsafeMutableRawPointer(mutating: hit))
            if Self.looksLikeMemberHeader(UnsafeRawBufferPointer(rebasing: raw[i..<(i + 10)])) { return i }
            position = i + 1
        }
        return nil
    }

    /// Where raw offset `offset` is in the buffer, no earlier than the bytes not inflated yet
    /// (`rawStart`) and no later than its end.
    private func bufferIndex(of offset: Int64) -> Int {
        max(rawStart, Int(min(Int64(rawEnd), max(0, offset - (rawBytesRead - Int64(rawEnd))))))
    }

    /// Bytes a look-alike's trial inflates at most, and the output that makes a member of one
    /// that then fails (a real member damaged further on).
    static let trialInput = 32 * 1024
    static let trialOutput = 4 * 1024

    /// Whether the look-alike at `rawStart` starts a member: a fresh inflater given the bytes
    /// from it (`trialInput` of them at most, fewer only at the input's end) reaches its
    /// member's end (CRC and length checked), or makes `trialOutput` bytes (then it stops: a
    /// look-alike followed by a bomb costs no more) before any error. Compressed bytes
    /// that only look like a header are refused within a few bytes. Moves the buffered bytes
    /// so that the look-alike is first (`rawStart`) with the window after it.
    private func isMember() -> Bool {
        if raw.count < 2 * Self.trialInput {
            // Room for the window whatever the buffer was made with (tests make tiny ones).
            let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: 2 * Self.trialInput, alignment: 16)
            grown.baseAddress!.copyMemory(from: raw.baseAddress! + rawStart, byteCount: rawEnd - rawStart)
            raw.deallocate()
            raw = grown
            rawEnd -= rawStart
            rawStart = 0
        }
        let window = Self.trialInput
        if rawEnd - rawStart < window && !rawEOF {
            // The window in the buffer, however the input comes in (a pipe gives it in pieces).
            var before = -1
            while rawEnd - rawStart < window && rawEnd - rawStart != before && !rawEOF {
                before = rawEnd - rawStart
                _ = refill()
            }
        }
        guard trialBudget > 0 else { return false }
        if probe == nil { probe = makeInflater() } else if probe!.reset() != nil { probe = makeInflater() }
        guard let probe else { return false }  // no inflater to try it with: read as data
        if probeOutput.count == 0 { probeOutput = .allocate(byteCount: 64 * 1024, alignment: 16) }
        var offset = rawStart, produced = 0
        let end = min(rawEnd, rawStart + window)
        defer { trialBudget -= Int64(offset - rawStart) }
        while offset < end {
            let step = probe.inflate(UnsafeRawBufferPointer(rebasing: raw[offset..<end]), into: probeOutput)
            offset += step.consumed
            produced += step.produced
            switch step.status {
            case .corrupt: return produced >= Self.trialOutput
            case .memberEnd: return true  // its CRC and length checked
            case .more:
                if produced >= Self.trialOutput { return true }
                if step.consumed == 0 && step.produced == 0 { return false }
            }
        }
        // No error, but neither a member's end nor 4 KiB of output: ten bytes and a long name
        // or extra field are no member.
        return false
    }

    /// The end of the buffered bytes the inflater may take now: up to the first look-alike of
    /// another member after the current one's own header (`rawStart` when one is there), and
    /// all but the last nine bytes (a header has ten) until the input ends.
    private func feedEnd() -> Int {
        let bufferStart = rawBytesRead - Int64(rawEnd)
        let limit = rawEOF ? rawEnd : rawEnd - 9
        if let i = firstLookAlike(from: bufferIndex(of: max(checkedUpTo, memberRawStart + 1)), below: limit) {
            checkedUpTo = bufferStart + Int64(i)
            return i
        }
        checkedUpTo = max(checkedUpTo, bufferStart + Int64(max(limit, rawStart)))
        return max(limit, rawStart)
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
            // Only a line reader's input is cut at another member's start: a tar archive's
            // stream stored without compression holds its files' members as they are.
            let end = resumesAfterDamage ? feedEnd() : rawEnd
            if end == rawStart {
                if rawEnd - rawStart < 10 && !rawEOF {
                    // Too few bytes to tell a header: more of them, or the input's end (then
                    // they are all given to the inflater).
                    _ = refill()
                    continue
                }
                // Every byte before a look-alike is inflated and the member has not ended: if
                // it starts a member, this one was cut there (a torn write, files joined).
                if isMember() {
                    record(InputDamage(reason: "gzip member \(members) is truncated at byte \(rawOffset()): another member starts there, and reading went on with it",
                                       rawOffset: rawOffset()),
                           searchingFrom: rawOffset())
                    inMember = false
                    return 0
                }
                checkedUpTo = rawOffset() + 1
                continue
            }
            let step = inflater!.inflate(UnsafeRawBufferPointer(start: raw.baseAddress! + rawStart, count: end - rawStart),
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
                       searchingFrom: rawOffset())
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
            if step.status == .more && step.consumed == 0 && rawStart < end {
                // No progress on the bytes given: the inflater wants more of them at once.
                let buffered = rawEnd - rawStart
                if !refill() || rawEnd - rawStart == buffered { return truncated() }
            }
        }
    }

    /// The input ended inside a member: records the damage (unless the source gave its own
    /// reason, an archive cut inside this file); nothing more comes out.
    private func truncated() -> Int {
        if !segmentDamaged {
            record(InputDamage(reason: "gzip stream truncated: member \(members) ends early at byte \(rawBytesRead)",
                               rawOffset: rawBytesRead))
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
