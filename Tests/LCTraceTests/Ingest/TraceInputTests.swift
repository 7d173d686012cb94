import XCTest
@testable import LCTraceFormat
@testable import LCTraceModel
@testable import LCTraceRules
@testable import LCTraceIngest
@testable import LCTraceStore
@testable import LCTraceSQLite
@testable import LCTracePostgreSQL
@testable import LCTraceAnalysis
@testable import LCTraceReport
@testable import LCTrace
import LCTraceGen

/// The gzip reader and the line splitter: multi-member, truncated, corrupt, plain, empty,
/// CRLF, overlong and unterminated lines.
final class TraceInputTests: TemporaryDirectoryTestCase {

    /// Writes `members` as consecutive gzip members of one file.
    func gzipFile(_ name: String, members: [String]) -> String {
        let path = dir + "/" + name
        let w = try! TraceFileWriter(path: path, gzip: true)
        for m in members { w.write(m); w.endMember() }
        w.close()
        return path
    }

    /// All lines of a file: (number, offset, text, overlong length, unterminated).
    func lines(_ path: String, max: Int = LineReader.defaultMaxLineLength) throws -> (lines: [(Int, Int64, String, Int?, Bool)], input: TraceInput) {
        let input = try TraceInput(location: .file(path), bufferSize: 64)  // tiny buffer: exercises refills
        var out: [(Int, Int64, String, Int?, Bool)] = []
        LineReader(input: input, maxLineLength: max).forEachLine { line in
            out.append((line.number, line.offset, String(decoding: line.bytes, as: UTF8.self), line.overlongLength, line.unterminated))
            return true
        }
        return (out, input)
    }

    func testPlainTextWithCRLFAndBlankLines() throws {
        let path = dir + "/plain.jsonl"
        try "a\r\n\r\nbb\nccc".write(toFile: path, atomically: true, encoding: .utf8)
        let (l, input) = try lines(path)
        XCTAssertFalse(input.isGzip)
        XCTAssertEqual(l.map { $0.2 }, ["a", "", "bb", "ccc"])
        XCTAssertEqual(l.map { $0.0 }, [1, 2, 3, 4])
        XCTAssertEqual(l.map { $0.1 }, [0, 3, 5, 8])
        XCTAssertEqual(l.map { $0.4 }, [false, false, false, true])
        XCTAssertNil(input.damage)
    }

    func testEveryGzipMemberIsRead() throws {
        let path = gzipFile("multi.gz", members: ["one\ntw", "o\nthree\n", "", "four\n"])
        let (l, input) = try lines(path)
        XCTAssertTrue(input.isGzip)
        XCTAssertEqual(input.members, 4)
        XCTAssertEqual(l.map { $0.2 }, ["one", "two", "three", "four"])
        XCTAssertNil(input.damage)
    }

    func testTruncatedGzipKeepsWhatCameBefore() throws {
        var text = ""
        for i in 0..<2000 { text += "{\"line\":\(i),\"pad\":\"\(String(repeating: "x", count: i % 50))\"}\n" }
        let full = gzipFile("full.gz", members: [text])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
        let cut = dir + "/cut.gz"
        try bytes.prefix(bytes.count * 2 / 3).write(to: URL(fileURLWithPath: cut))
        let (l, input) = try lines(cut)
        XCTAssertNotNil(input.damage)
        XCTAssertTrue(input.damage!.reason.hasPrefix("gzip stream truncated"), input.damage!.reason)
        XCTAssertGreaterThan(l.count, 100)
        // Every complete line before the damage is intact and in order.
        for (i, line) in l.dropLast().enumerated() { XCTAssertTrue(line.2.hasPrefix("{\"line\":\(i),")) }
        XCTAssertTrue(l.last!.4, "the cut line is marked unterminated")
    }

    func testCorruptDeflateDataIsReported() throws {
        let full = gzipFile("ok.gz", members: [String(repeating: "{\"a\":1}\n", count: 500)])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: full)))
        for i in 20..<40 { bytes[i] ^= 0x5a }
        let bad = dir + "/bad.gz"
        try Data(bytes).write(to: URL(fileURLWithPath: bad))
        let (_, input) = try lines(bad)
        XCTAssertTrue(input.damage?.reason.hasPrefix("corrupt gzip data") ?? false, input.damage?.reason ?? "no damage")
    }

    /// Bytes of one gzip member of `text` (`TraceFileWriter`, as a recorder writes it).
    func member(_ text: String) throws -> [UInt8] {
        let path = gzipFile("m.gz", members: [text])
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    func numbered(_ prefix: String, _ count: Int) -> String {
        (0..<count).map { "{\"\(prefix)\":\($0),\"pad\":\"\(String(repeating: "y", count: $0 % 40))\"}\n" }.joined()
    }

    /// A member cut in its middle (a file joined by `cat` after a cut one, a power cut that
    /// kept later blocks but not an earlier one) costs that member's tail only: the members
    /// after it are read whole, and the cut line is not the file's last.
    func testGoodMembersAfterACutOneAreRead() throws {
        let first = try member(numbered("a", 3000)), second = try member(numbered("b", 700)), third = try member(numbered("c", 300))
        let cut = first.count / 2
        let path = dir + "/joined.gz"
        try Data(first.prefix(cut) + second + third).write(to: URL(fileURLWithPath: path))
        for size in [4096, 256 * 1024] {
            let input = try TraceInput(location: .file(path), bufferSize: size)
            var got: [InputLine] = [], texts: [String] = []
            LineReader(input: input).forEachLine { line in
                var copy = line
                copy.bytes = UnsafeRawBufferPointer(start: nil, count: 0)
                got.append(copy)
                texts.append(String(decoding: line.bytes, as: UTF8.self))
                return true
            }
            XCTAssertEqual(texts.filter { $0.hasPrefix("{\"b\":") }, numbered("b", 700).split(separator: "\n").map(String.init), "buffer \(size)")
            XCTAssertEqual(texts.suffix(300), numbered("c", 300).split(separator: "\n").map(String.init)[...], "buffer \(size)")
            // The first member's lines before the cut, in order, intact (what the inflater made
            // of the next member's bytes before it found them wrong follows them, rejected).
            let expected = numbered("a", 3000).split(separator: "\n").map(String.init)
            let intact = zip(texts, expected).prefix { $0 == $1 }.count
            XCTAssertGreaterThan(intact, 1000, "buffer \(size)")
            XCTAssertEqual(input.damages.count, 1, input.damages.map(\.description).joined(separator: " | "))
            XCTAssertEqual(input.damage?.resumedAt, Int64(cut), "read on from the second member's first byte")
            XCTAssertEqual(input.members, 3)
            // One cut line, marked so; numbers and offsets run on through the damage.
            let cutLines = got.filter(\.resumedAfter)
            XCTAssertEqual(cutLines.count, 1)
            XCTAssertTrue(cutLines.first?.unterminated ?? false)
            XCTAssertEqual(input.damage?.line, cutLines.first?.number)
            XCTAssertEqual(got.map(\.number), Array(1...got.count))
            XCTAssertFalse(got.last!.unterminated)
            XCTAssertEqual(input.bytesProduced, got.last!.offset + Int64(texts.last!.utf8.count) + 1)
            XCTAssertEqual(input.contentHash(), Ingester.hashFile(.file(path)))
        }
    }

    /// Corrupt data inside a member, and bytes that are not gzip between two members: reading
    /// goes on at the next member. Bytes that only start like a member (a reserved flag set,
    /// or a header followed by data an inflater refuses) are passed over.
    func testReadingGoesOnAfterCorruptDataAndBytesThatAreNotGzip() throws {
        let first = try member(numbered("a", 2000)), second = try member(numbered("b", 500))
        var corrupt = first
        for i in (first.count / 3)..<(first.count / 3 + 40) { corrupt[i] ^= 0x5a }
        let notMembers: [UInt8] = Array("garbage\n".utf8) + [0x1f, 0x8b, 0x08, 0xe0, 0, 0, 0, 0, 0, 3] + Array("more".utf8)
        let lookAlike: [UInt8] = [0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        let junk = Array("junk\n".utf8)
        let cases: [(name: String, bytes: [UInt8], resumedAt: Int)] = [
            ("corrupt", corrupt + second, first.count),
            ("not gzip", second + notMembers + second, second.count + notMembers.count),
            // Read as a member (it follows one), refused at its first block: one damage.
            ("look-alike member", second + lookAlike + second, second.count + lookAlike.count),
            // Found by the search, refused by the trial inflation: passed over.
            ("look-alike in junk", second + junk + lookAlike + second, second.count + junk.count + lookAlike.count),
        ]
        for c in cases {
            let path = dir + "/\(c.name).gz"
            try Data(c.bytes).write(to: URL(fileURLWithPath: path))
            let (l, input) = try lines(path)
            let texts = l.map(\.2)
            XCTAssertEqual(Array(texts.suffix(500)), numbered("b", 500).split(separator: "\n").map(String.init), c.name)
            XCTAssertEqual(input.damages.count, 1, "\(c.name): \(input.damages.map(\.description))")
            XCTAssertEqual(input.damage?.resumedAt, Int64(c.resumedAt), c.name)
            XCTAssertTrue(input.damage?.description.hasSuffix("; reading went on at the next gzip member, byte \(c.resumedAt)") ?? false,
                          input.damage?.description ?? "no damage")
            if c.name != "corrupt" {
                XCTAssertEqual(texts, numbered("b", 500).split(separator: "\n").map(String.init) + numbered("b", 500).split(separator: "\n").map(String.init), c.name)
            }
        }
    }

    /// The same damaged bytes read the same, however they come in: from a file, or a few
    /// bytes at a time (a pipe, a tar member). The inflater is never given another member's
    /// look-alike, so nothing depends on how far it had read.
    func testDamagedBytesReadTheSameInAnyPieces() throws {
        final class Pieces: RawSource {
            let bytes: [UInt8]
            var at = 0
            let size: Int
            init(_ bytes: [UInt8], size: Int) { self.bytes = bytes; self.size = size }
            func read(into buffer: UnsafeMutableRawBufferPointer) -> RawRead {
                guard at < bytes.count else { return .end }
                let n = min(size, buffer.count, bytes.count - at)
                bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + at, byteCount: n) }
                at += n
                return .bytes(n)
            }
        }
        let first = try member(numbered("a", 3000)), second = try member(numbered("b", 700)), third = try member(numbered("c", 300))
        var corrupt = second
        for i in (second.count / 2)..<(second.count / 2 + 30) { corrupt[i] ^= 0x33 }
        let bytes = Array(first.prefix(first.count / 3)) + corrupt + Array("junk".utf8) + third + Array(first.prefix(100)) + second
        let path = dir + "/pieces.gz"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        /// The lines but those a damage cut (the inflater may or may not have given the last
        /// byte or two before the cut, depending on the pieces), and the damages.
        func read(_ input: TraceInput) -> (lines: [String], damages: [String]) {
            var lines: [String] = []
            LineReader(input: input).forEachLine { line in
                if !line.resumedAfter { lines.append(String(decoding: line.bytes, as: UTF8.self)) }
                return true
            }
            return (lines, input.damages.map(\.description))
        }
        let whole = read(try TraceInput(location: .file(path)))
        XCTAssertEqual(Array(whole.lines.suffix(700)), numbered("b", 700).split(separator: "\n").map(String.init))
        XCTAssertTrue(whole.lines.contains(numbered("c", 300).split(separator: "\n").map(String.init).last!))
        // The cut first member, the corrupt second (the junk after it is passed over in the
        // search), the copy of the first's start cut where the last member starts.
        XCTAssertEqual(whole.damages.count, 3, "\(whole.damages)")
        for size in [1, 7, 4096] {
            let piecewise = read(TraceInput(location: .file("pieces"), source: Pieces(bytes, size: size)))
            XCTAssertEqual(piecewise.lines, whole.lines, "pieces of \(size)")
            XCTAssertEqual(piecewise.damages, whole.damages, "pieces of \(size)")
        }
    }

    /// Valid files stored without compression (gzip level 0) keep their bytes as they are: a
    /// tar archive of .gz files (`tar | pigz -0`) holds real members, and a line may hold ten
    /// bytes shaped as a member's header. Neither cuts the member that holds them.
    func testStoredBytesThatLookLikeAMemberCutNothing() throws {
        let inner = try member(numbered("i", 200))
        // An archive's stream (no line reader): every byte out as it went in.
        let stored = dir + "/stored.gz"
        let w = try TraceFileWriter(path: stored, gzip: true, level: 0)
        w.write(String(decoding: Array(repeating: UInt8(ascii: "x"), count: 1000), as: UTF8.self))
        w.close()
        var payload = Array("head\n".utf8) + inner + Array("\ntail\n".utf8)
        let archive = dir + "/archive.gz"
        try Data(Self.storedMember(payload)).write(to: URL(fileURLWithPath: archive))
        let input = try TraceInput(location: .file(archive))
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { input.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[...])) }
            if n == 0 { break }
            out += buffer[0..<n]
        }
        XCTAssertEqual(out, payload)
        XCTAssertNil(input.damage)
        // A line reader's input: a header look-alike followed by text (a long "file name").
        payload = Array(numbered("a", 100).utf8) + [0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 3] + Array(numbered("b", 2000).utf8)
        let lineFile = dir + "/lines.gz"
        try Data(Self.storedMember(payload)).write(to: URL(fileURLWithPath: lineFile))
        let (l, read) = try lines(lineFile)
        XCTAssertNil(read.damage, read.damage?.description ?? "")
        XCTAssertEqual(l.count, 2100)
        XCTAssertEqual(l.last?.2, numbered("b", 2000).split(separator: "\n").last.map(String.init))
    }

    /// One gzip member of `payload` in stored deflate blocks (RFC 1951 §3.2.4), its CRC-32
    /// computed here.
    static func storedMember(_ payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]
        var at = 0
        repeat {
            let n = min(65_535, payload.count - at)
            out.append(at + n == payload.count ? 1 : 0)
            out += [UInt8(n & 0xff), UInt8(n >> 8), UInt8(~n & 0xff), UInt8((~n >> 8) & 0xff)]
            out += payload[at..<(at + n)]
            at += n
        } while at < payload.count
        var crc: UInt32 = 0xffff_ffff
        for byte in payload {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xedb8_8320 : crc >> 1 }
        }
        crc = ~crc
        let size = UInt32(truncatingIfNeeded: payload.count)
        for v in [crc, size] { out += [UInt8(v & 0xff), UInt8((v >> 8) & 0xff), UInt8((v >> 16) & 0xff), UInt8(v >> 24)] }
        return out
    }

    /// A power cut that kept a file's length but zeroed its first block: no text starts with
    /// NUL, so the file is read from its first whole member on, the damage named.
    func testAFileWhoseStartIsZeroedIsReadFromItsFirstWholeMember() throws {
        let first = try member(numbered("a", 300)), second = try member(numbered("b", 700))
        var bytes = first + second
        for i in 0..<(first.count / 2) { bytes[i] = 0 }
        let path = dir + "/zeroed.gz"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let (l, input) = try lines(path)
        XCTAssertEqual(l.map(\.2), numbered("b", 700).split(separator: "\n").map(String.init))
        XCTAssertEqual(input.damage?.description,
                       "bytes 0 to \(first.count) are not gzip data (the file's start is damaged); reading went on at the next gzip member, byte \(first.count)")
        XCTAssertEqual(input.damage?.line, 0)
        let zeros = dir + "/zeros.gz"
        try Data(count: 5000).write(to: URL(fileURLWithPath: zeros))
        let (none, nothing) = try lines(zeros)
        XCTAssertEqual(none.count, 0)
        XCTAssertEqual(nothing.damage?.reason, "the file starts with a zero byte and holds no gzip member after it: not a trace")
        XCTAssertEqual(nothing.contentHash(), Ingester.hashFile(.file(zeros)))
    }

    /// A file of thousands of damaged places is not a trace: reading stops at the 1,000th,
    /// which says so, and it costs no more than linear time.
    func testReadingStopsAfterAThousandDamagedPlaces() throws {
        let one = try member("{\"a\":1}\n") + Array("x".utf8)
        let path = dir + "/many.gz"
        try Data(Array([[UInt8]](repeating: one, count: 3000).joined())).write(to: URL(fileURLWithPath: path))
        let (l, input) = try lines(path)
        XCTAssertEqual(l.count, TraceInput.maxDamages)
        XCTAssertEqual(input.damages.count, TraceInput.maxDamages)
        XCTAssertEqual(input.damages.last?.reason.hasSuffix("(1000 damaged places in this file: the rest of it skipped)"), true)
        XCTAssertEqual(input.damages.map(\.line), (1...TraceInput.maxDamages).map { $0 })
        XCTAssertEqual(input.contentHash(), Ingester.hashFile(.file(path)))
    }

    /// A tar archive's reader does not read on past damage: its blocks would be out of step.
    func testOnlyALineReaderReadsOnAfterDamage() throws {
        let second = try member(numbered("b", 50))
        let path = dir + "/g.gz"
        try Data(second + Array("junk".utf8) + second).write(to: URL(fileURLWithPath: path))
        let input = try TraceInput(location: .file(path), bufferSize: 4096)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var produced = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { input.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[...])) }
            if n == 0 { break }
            produced += n
        }
        XCTAssertEqual(produced, numbered("b", 50).utf8.count)
        XCTAssertFalse(input.resume(linesRead: 50))
        XCTAssertNil(input.damage?.resumedAt)
        XCTAssertEqual(input.contentHash(), Ingester.hashFile(.file(path)))
    }

    func testTrailingGarbageAfterAMemberIsDamage() throws {
        let path = gzipFile("g.gz", members: ["a\n"])
        let handle = FileHandle(forWritingAtPath: path)!
        handle.seekToEndOfFile()
        handle.write(Data("garbage".utf8))
        handle.closeFile()
        let (l, input) = try lines(path)
        XCTAssertEqual(l.map { $0.2 }, ["a"])
        XCTAssertTrue(input.damage?.reason.contains("not gzip data") ?? false)
    }

    func testEmptyFiles() throws {
        let plain = dir + "/empty.jsonl"
        XCTAssertTrue(FileManager.default.createFile(atPath: plain, contents: Data()))
        XCTAssertEqual(try lines(plain).lines.count, 0)
        let gz = gzipFile("empty.gz", members: [""])
        let (l, input) = try lines(gz)
        XCTAssertEqual(l.count, 0)
        XCTAssertNil(input.damage)
    }

    func testOverlongLinesAreSkippedWithoutBuffering() throws {
        let path = dir + "/long.jsonl"
        let long = String(repeating: "z", count: 5000)
        try "ok\n\(long)\nafter\n\(long)".write(toFile: path, atomically: true, encoding: .utf8)
        let (l, _) = try lines(path, max: 1000)
        XCTAssertEqual(l.map { $0.2.count }, [2, 200, 5, 200])
        XCTAssertEqual(l.map { $0.3 }, [nil, 5000, nil, 5000])
        XCTAssertEqual(l[2].1, Int64(3 + 5001), "offsets keep counting through a skipped line")
        XCTAssertEqual(l[2].0, 3)
    }

    func testContentHashCoversTheRawBytes() throws {
        let path = gzipFile("h.gz", members: ["x\n", "y\n"])
        let (_, input) = try lines(path)
        XCTAssertEqual(input.contentHash(), Ingester.hashFile(.file(path)))
        var sha = SHA256()
        sha.update(Array("abc".utf8))
        XCTAssertEqual(sha.finalizeHex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        var long = SHA256()
        long.update(Array(String(repeating: "a", count: 1_000_000).utf8))
        XCTAssertEqual(long.finalizeHex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        // Fed in pieces of every awkward size, the digest is the same as in one piece.
        let data = (0..<1_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
        var whole = SHA256()
        whole.update(data)
        let expected = whole.finalizeHex()
        for piece in [1, 7, 63, 64, 65, 128, 200] {
            var pieces = SHA256()
            for start in stride(from: 0, to: data.count, by: piece) { pieces.update(Array(data[start..<min(start + piece, data.count)])) }
            XCTAssertEqual(pieces.finalizeHex(), expected, "pieces of \(piece)")
        }
    }

    /// The CPU's SHA extensions (where present) and the portable rounds give the same digests:
    /// the FIPS 180-4 examples, and every length around the block and padding boundaries.
    func testHardwareAndPortableSHA256Agree() throws {
        func digest(_ bytes: [UInt8], hardware: Bool) -> String {
            var sha = SHA256(hardware: hardware)
            sha.update(bytes)
            return sha.finalizeHex()
        }
        let vectors = [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
            ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
             "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
        ]
        for (text, expected) in vectors {
            XCTAssertEqual(digest(Array(text.utf8), hardware: true), expected, text)
            XCTAssertEqual(digest(Array(text.utf8), hardware: false), expected, text)
        }
        var generator = SplitMix64(seed: 256)
        let data = (0..<5_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        for length in Array(0...200) + [511, 512, 513, 4_095, 4_096, 5_000] {
            let bytes = Array(data[..<length])
            XCTAssertEqual(digest(bytes, hardware: true), digest(bytes, hardware: false), "\(length) bytes")
        }
        if !SHA256.hardwareAvailable { print("note: this CPU has no SHA extensions; only the portable rounds were checked") }
    }

    func testMissingFileIsAnOpenError() {
        XCTAssertThrowsError(try TraceInput(location: .file(dir + "/nope.gz"))) { error in
            XCTAssertTrue((error as? InputOpenError)?.isMissing ?? false)
        }
    }

    func testZeroPaddingAfterOrBetweenMembersIsNotDamage() throws {
        let path = gzipFile("p.gz", members: ["a\n"])
        let member = try Data(contentsOf: URL(fileURLWithPath: path))
        for (name, bytes) in [("p16.gz", member + Data(count: 16)), ("p1m.gz", member + Data(count: 1 << 20)),
                              ("between.gz", member + Data(count: 5000) + member)] {
            try bytes.write(to: URL(fileURLWithPath: dir + "/" + name))
            let (l, input) = try lines(dir + "/" + name)
            XCTAssertNil(input.damage, name)
            XCTAssertEqual(l.map { $0.2 }, name == "between.gz" ? ["a", "a"] : ["a"], name)
        }
        try (member + Data(count: 300) + Data([0x01])).write(to: URL(fileURLWithPath: dir + "/z.gz"))
        XCTAssertTrue(try lines(dir + "/z.gz").input.damage?.reason.contains("not gzip data") ?? false, "a non-zero byte after the padding")
    }

    /// The zip-bomb guard trips only past both limits: the size a member inflated to, and its ratio.
    func testTheZipBombGuardNeedsBothSizeAndRatio() throws {
        func read(_ path: String) throws -> (lines: Int, damage: String?) {
            let input = try TraceInput(location: .file(path), bufferSize: 4096)
            input.maxMemberBytes = 1 << 20
            var n = 0
            LineReader(input: input).forEachLine { _ in n += 1; return true }
            return (n, input.damage?.reason)
        }
        let spaces = String(repeating: " ", count: 1 << 16)
        let bomb = gzipFile("bomb.gz", members: ["{\"a\":1}\n" + String(repeating: spaces, count: 40) + "\n"])
        XCTAssertEqual(try read(bomb).damage, "gzip member 1 inflates more than 1000× its size past 1 MiB (a zip bomb?); rest of file skipped")
        let small = gzipFile("small.gz", members: ["{\"a\":1}\n" + String(repeating: spaces, count: 8) + "\n"])
        XCTAssertNil(try read(small).damage, "above the ratio, below the size")
        var varied = ""
        var x: UInt64 = 7
        for i in 0..<60_000 { x = x &* 6364136223846793005 &+ 1442695040888963407; varied += "{\"n\":\(i),\"r\":\(x >> 20)}\n" }
        let big = gzipFile("big.gz", members: [varied])
        XCTAssertNil(try read(big).damage, "above the size, below the ratio")
        XCTAssertEqual(try read(big).lines, 60_000)
    }

    func testAFIFOIsRefusedWithoutWaitingForAWriter() throws {
        let fifo = dir + "/pipe.jsonl"
        XCTAssertEqual(mkfifo(fifo, 0o644), 0)
        XCTAssertThrowsError(try TraceInput(location: .file(fifo))) { error in
            XCTAssertEqual((error as? InputOpenError)?.reason, "not a regular file (a FIFO)")
        }
    }
}

/// TraceInput reads the same lines and finds the same damage whichever inflater is behind the
/// seam (ISA-L where libisal is installed, zlib otherwise).
final class TraceInputInflaterTests: TemporaryDirectoryTestCase {
    struct Reading: Equatable {
        var lines: [String]
        var members: Int
        var damage: String?
        var produced: Int64
    }

    func read(_ path: String, _ make: @escaping () -> GzipInflater?, bufferSize: Int) throws -> Reading {
        let input = try TraceInput(location: .file(path), bufferSize: bufferSize)
        input.makeInflater = make
        input.maxMemberBytes = 1 << 20
        var lines: [String] = []
        LineReader(input: input).forEachLine { line in
            lines.append(String(decoding: line.bytes, as: UTF8.self))
            return true
        }
        // The damage's kind, without the offset and the library's own words.
        let damage = input.damage.map { reason -> String in
            if reason.reason.hasPrefix("corrupt gzip data") { return "corrupt" }
            return reason.reason
        }
        return Reading(lines: lines, members: input.members, damage: damage, produced: input.bytesProduced)
    }

    func testZlibAndISALReadTheSame() throws {
        guard ISALInflater() != nil else { throw XCTSkip("ISA-L (libisal) is not installed here: only zlib runs") }
        var text = ""
        for i in 0..<3000 { text += "{\"line\":\(i),\"pad\":\"\(String(repeating: "x", count: i % 70))\"}\n" }
        func gzip(_ name: String, _ members: [String]) throws -> Data {
            let path = dir + "/" + name
            let w = try TraceFileWriter(path: path, gzip: true)
            for m in members { w.write(m); w.endMember() }
            w.close()
            return try Data(contentsOf: URL(fileURLWithPath: path))
        }
        let multi = try gzip("multi.gz", [text, "", "one\ntw", "o\n", text])
        var corrupt = [UInt8](multi)
        for i in 40..<60 { corrupt[i] ^= 0x5a }
        var badCRC = [UInt8](try gzip("one.gz", [text]))
        badCRC[badCRC.count - 6] ^= 0xff
        let spaces = String(repeating: " ", count: 1 << 16)
        let cases: [(String, Data)] = [
            ("multi", multi),
            ("cut", multi.prefix(multi.count * 2 / 3)),
            ("cut in a header", multi + Data(multi.prefix(5))),
            ("corrupt", Data(corrupt)),
            ("bad crc", Data(badCRC)),
            ("garbage", multi + Data("garbage".utf8)),
            ("garbage between", multi + Data("garbage".utf8) + multi),
            ("cut, then whole", multi.prefix(multi.count / 3) + multi),
            ("padding", multi + Data(count: 5000) + multi),
            ("bomb", try gzip("bomb.gz", ["{\"a\":1}\n" + String(repeating: spaces, count: 40) + "\n"])),
        ]
        for (name, bytes) in cases {
            let path = dir + "/case.gz"
            try bytes.write(to: URL(fileURLWithPath: path))
            for size in [64, 4096, 256 * 1024] {
                var zlib = try read(path, { ZlibInflater() }, bufferSize: size)
                var fast = try read(path, { ISALInflater() }, bufferSize: size)
                if name == "bomb" {
                    // Cut by both, a little later or sooner: ISA-L takes more input per call.
                    XCTAssertGreaterThan(min(zlib.produced, fast.produced), 1 << 20)
                    (zlib.produced, fast.produced) = (0, 0)
                }
                XCTAssertEqual(fast, zlib, "\(name), buffer \(size)")
                if name == "garbage between" || name == "cut, then whole" {
                    // Reading went on at the whole copy: all of it is read.
                    let whole = try read(dir + "/multi.gz", { ZlibInflater() }, bufferSize: size).lines
                    XCTAssertEqual(Array(zlib.lines.suffix(whole.count)), whole, "\(name), buffer \(size)")
                }
            }
        }
    }

    /// An inflater that takes nothing and gives nothing (none should, but a library could):
    /// the reader reports the member as cut instead of spinning.
    func testAnInflaterThatMakesNoProgressEndsTheFile() throws {
        final class Stuck: GzipInflater {
            var name: String { "stuck" }
            func reset() -> String? { nil }
            func inflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> InflateStep {
                InflateStep(consumed: 0, produced: 0, status: .more)
            }
        }
        let path = dir + "/s.gz"
        let w = try TraceFileWriter(path: path, gzip: true)
        w.write("{\"a\":1}\n")
        w.close()
        let reading = try read(path, { Stuck() }, bufferSize: 64)
        XCTAssertEqual(reading.lines, [])
        XCTAssertEqual(reading.damage?.hasPrefix("gzip stream truncated"), true, reading.damage ?? "no damage")
    }
}
