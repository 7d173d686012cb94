#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What an input is, from its name and its first bytes: a trace file, a tar archive of them
/// (plain or gzip), or a zip archive, which lctrace does not read.
package enum ArchiveKind: Equatable, Sendable {
    case tar
    case zip

    /// The kind of `location`, nil for a trace file (and for standard input, which cannot be
    /// read twice). By name: `.tar`, `.tar.gz`, `.tgz`, `.zip` (and `.jsonl`, `.jsonl.gz` for
    /// trace files); any other name by content: a zip's local header, or the ustar magic at
    /// byte 257 of the (inflated) first block.
    package static func of(_ location: InputLocation) -> ArchiveKind? {
        guard location != .standardInput else { return nil }
        let name = location.description.lowercased()
        if name.hasSuffix(".zip") { return .zip }
        if name.hasSuffix(".tar") || name.hasSuffix(".tar.gz") || name.hasSuffix(".tgz") { return .tar }
        // A trace file's own names are taken at their word: no second open for each of them.
        if name.hasSuffix(".jsonl") || name.hasSuffix(".jsonl.gz") { return nil }
        guard let input = try? TraceInput(location: location, bufferSize: 4096) else { return nil }
        let first = UnsafeMutableRawBufferPointer.allocate(byteCount: TarReader.block, alignment: 16)
        defer { first.deallocate() }
        var filled = 0
        while filled < first.count {
            let n = input.read(into: UnsafeMutableRawBufferPointer(rebasing: first[filled...]))
            if n == 0 { break }
            filled += n
        }
        if !input.isGzip && filled >= 4 && first[0] == 0x50 && first[1] == 0x4b && (first[2] == 3 || first[2] == 5) {
            return .zip
        }
        return filled == TarReader.block && TarReader.hasMagic(UnsafeRawBufferPointer(first)) ? .tar : nil
    }
}

/// One entry of a tar archive.
package struct TarMember: Sendable {
    /// The member's path inside the archive (pax `path`, a GNU long name, or ustar prefix/name).
    package var name: String
    package var size: Int64
    /// A regular file ('0', NUL or '7'); directories, links, devices and FIFOs are not.
    package var isRegular: Bool
}

/// Reads a tar archive (POSIX ustar and pax, GNU long names; old v7 headers too) member by
/// member from the archive's inflated bytes, streaming: one block buffer, whatever the size of
/// the archive or its members. The current member's content is read through `RawSource`, so a
/// `TraceInput` can inflate a `.gz` member and split it into lines.
package final class TarReader: RawSource {
    static let block = 512
    private let input: TraceInput
    private var buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0
    private var eof = false
    /// Inflated archive bytes consumed so far.
    private(set) var offset: Int64 = 0
    /// Bytes of the current member not read yet, then the padding to its block's end.
    private var remaining: Int64 = 0
    private var padding: Int64 = 0
    private var current: TarMember?
    /// Why the archive stopped before its end-of-archive block; nil while it reads well.
    package private(set) var damage: String?
    /// True when `damage` arose while the current member's content was read (its reader
    /// reported it as that member's damage).
    package private(set) var damageInMember = false

    package init(_ input: TraceInput) {
        self.input = input
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// The archive's own raw (compressed) bytes read so far.
    package var rawBytesRead: Int64 { input.rawBytesRead }

    /// At least `count` bytes buffered, unless the archive ends first.
    private func fill(_ count: Int) -> Bool {
        if end - start >= count { return true }
        if start > 0 {
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
            end -= start
            start = 0
        }
        while end < count && !eof {
            let n = input.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[end...]))
            if n == 0 { eof = true } else { end += n }
        }
        return end - start >= count
    }

    /// Why the archive's bytes ended: the archive's own damage (a cut gzip stream) or its end.
    private func endReason(_ what: String) -> String {
        let cause = input.damage.map { "archive damaged: \($0.reason)" } ?? "the archive ends"
        return "\(cause) \(what) (byte \(offset) of the tar stream): truncated?"
    }

    /// Skips `count` bytes; false when the archive ended first.
    private func skip(_ count: Int64) -> Bool {
        var left = count
        while left > 0 {
            if end == start && !fill(1) { return false }
            let n = Int(min(left, Int64(end - start)))
            start += n
            offset += Int64(n)
            left -= Int64(n)
        }
        return true
    }

    /// Reads `count` bytes (a pax header or a GNU long name) whole; nil when the archive ended.
    private func readAll(_ count: Int64) -> [UInt8]? {
        guard count <= 1 << 20 else { damage = "tar extended header of \(count) bytes at byte \(offset) (more than 1 MiB)"; return nil }
        var out: [UInt8] = []
        out.reserveCapacity(Int(count))
        while out.count < count {
            if end == start && !fill(1) { return nil }
            let n = min(Int(count) - out.count, end - start)
            out += UnsafeRawBufferPointer(rebasing: buffer[start..<(start + n)])
            start += n
            offset += Int64(n)
        }
        return out
    }

    /// The next member (whatever its type), after the rest of the current one; nil at the end
    /// of the archive or at damage (`damage` says which).
    package func next() -> TarMember? {
        if damage != nil { return nil }
        if current != nil {
            guard skip(remaining + padding) else {
                damage = endReason("inside member \(current!.name)")
                return nil
            }
            current = nil
            remaining = 0
            padding = 0
        }
        var longName: String?
        var pax: [String: String] = [:]
        while true {
            let headerOffset = offset
            guard fill(Self.block) else {
                damage = end == start && input.damage == nil && headerOffset > 0
                    ? "the archive ends without its end-of-archive block (byte \(headerOffset)): truncated?"
                    : endReason("inside a header")
                return nil
            }
            let header = UnsafeRawBufferPointer(rebasing: buffer[start..<(start + Self.block)])
            if header.allSatisfy({ $0 == 0 }) { return nil }   // end of archive
            guard Self.checksumMatches(header) else {
                damage = headerOffset == 0 ? "not a tar archive (no valid header at byte 0)"
                    : "bad tar header at byte \(headerOffset) (checksum mismatch): the archive is damaged"
                return nil
            }
            guard let size = Self.number(header, 124, 12), size >= 0 else {
                damage = "bad tar header at byte \(headerOffset) (size field)"
                return nil
            }
            let type = header[156]
            let name = Self.name(header)
            start += Self.block
            offset += Int64(Self.block)
            let pad = (Int64(Self.block) - size % Int64(Self.block)) % Int64(Self.block)
            switch type {
            case UInt8(ascii: "x"), UInt8(ascii: "L"):
                guard let bytes = readAll(size), skip(pad) else {
                    if damage == nil { damage = endReason("inside an extended header") }
                    return nil
                }
                if type == UInt8(ascii: "L") {
                    longName = InputLocation.display(Array(bytes.prefix { $0 != 0 }))
                } else {
                    pax.merge(Self.paxRecords(bytes)) { _, new in new }
                }
                continue
            default:
                break
            }
            var member = TarMember(name: pax["path"] ?? longName ?? name, size: size,
                                   isRegular: type == 0 || type == UInt8(ascii: "0") || type == UInt8(ascii: "7"))
            if let text = pax["size"], let paxSize = Int64(text), paxSize >= 0 { member.size = paxSize }
            // Only a regular file's size is content (a hard link's or directory's is not stored);
            // a global pax header ('g'), a GNU long link name ('K') and the like are skipped.
            let stored = member.isRegular || type == UInt8(ascii: "g") || type == UInt8(ascii: "K") || type == UInt8(ascii: "S") ? member.size : 0
            remaining = stored
            padding = (Int64(Self.block) - stored % Int64(Self.block)) % Int64(Self.block)
            current = member
            if type == UInt8(ascii: "g") || type == UInt8(ascii: "K") {
                guard skip(remaining + padding) else { damage = endReason("inside an extended header"); return nil }
                current = nil; remaining = 0; padding = 0
                continue
            }
            return member
        }
    }

    /// The current member's content (for `TraceInput`): `.end` at its end, `.failed` when the
    /// archive ends inside it.
    package func read(into out: UnsafeMutableRawBufferPointer) -> RawRead {
        guard current != nil, remaining > 0 else { return .end }
        if end == start && !fill(1) {
            damage = endReason("inside member \(current!.name) (\(remaining) of its \(current!.size) bytes missing)")
            damageInMember = true
            return .failed(damage!)
        }
        let n = Int(min(Int64(out.count), remaining, Int64(end - start)))
        out.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: n)
        start += n
        offset += Int64(n)
        remaining -= Int64(n)
        return .bytes(n)
    }

    /// "ustar" at byte 257 (POSIX "ustar\0", GNU "ustar  ") and a valid checksum.
    package static func hasMagic(_ header: UnsafeRawBufferPointer) -> Bool {
        header.count >= block && Array(header[257..<262]) == Array("ustar".utf8) && checksumMatches(header)
    }

    /// The header's checksum: the sum of its bytes with the checksum field as spaces (unsigned,
    /// or signed as some old writers made it).
    static func checksumMatches(_ header: UnsafeRawBufferPointer) -> Bool {
        guard let stored = number(header, 148, 8) else { return false }
        var unsigned: Int64 = 0, signed: Int64 = 0
        for i in 0..<block {
            let b = (148..<156).contains(i) ? 0x20 : header[i]
            unsigned += Int64(b)
            signed += Int64(Int8(bitPattern: b))
        }
        return stored == unsigned || stored == signed
    }

    /// A numeric field: octal digits (spaces and NULs around them), or GNU's base-256 (high bit set).
    static func number(_ header: UnsafeRawBufferPointer, _ at: Int, _ length: Int) -> Int64? {
        let field = header[at..<(at + length)]
        if let first = field.first, first & 0x80 != 0 {
            var value: Int64 = Int64(first & 0x3f)
            for b in field.dropFirst() {
                guard value < Int64.max >> 8 else { return nil }
                value = value << 8 | Int64(b)
            }
            return value
        }
        var value: Int64 = 0
        var digits = 0
        for b in field {
            if b == 0 || b == 0x20 { if digits > 0 { break } else { continue } }
            guard (0x30...0x37).contains(b) else { return nil }
            value = value * 8 + Int64(b - 0x30)
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// ustar's prefix and name joined (the prefix only under POSIX "ustar\0": GNU keeps times there).
    static func name(_ header: UnsafeRawBufferPointer) -> String {
        func text(_ at: Int, _ length: Int) -> [UInt8] { Array(header[at..<(at + length)].prefix { $0 != 0 }) }
        let name = text(0, 100)
        let posix = Array(header[257..<263]) == Array("ustar\u{0}".utf8)
        let prefix = posix ? text(345, 155) : []
        return InputLocation.display(prefix.isEmpty ? name : prefix + [0x2f] + name)
    }

    /// pax records: "LENGTH key=value\n" each.
    static func paxRecords(_ bytes: [UInt8]) -> [String: String] {
        var out: [String: String] = [:]
        var i = 0
        while i < bytes.count {
            var j = i
            var length = 0
            while j < bytes.count, (0x30...0x39).contains(bytes[j]) { length = length * 10 + Int(bytes[j] - 0x30); j += 1 }
            guard j < bytes.count, bytes[j] == 0x20, length > j - i, i + length <= bytes.count else { break }
            let record = bytes[(j + 1)..<(i + length - 1)]   // without the length, space and newline
            if let eq = record.firstIndex(of: 0x3d) {
                out[String(decoding: record[record.startIndex..<eq], as: UTF8.self)] =
                    InputLocation.display(Array(record[(eq + 1)...]))
            }
            i += length
        }
        return out
    }
}
