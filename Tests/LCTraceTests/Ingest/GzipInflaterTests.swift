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

/// Both inflaters behind the seam give the same bytes and the same verdicts: multi-member
/// streams, a member split at every awkward place, a cut stream, corrupt data, a bad trailer.
final class GzipInflaterTests: TemporaryDirectoryTestCase {

    /// Inflates `bytes` member by member, feeding `chunk` bytes at a time into `outSize` of
    /// output; returns the output and the first corruption message.
    func inflateAll(_ inflater: GzipInflater, _ bytes: [UInt8], chunk: Int, outSize: Int) -> (out: [UInt8], members: Int, error: String?, endedClean: Bool) {
        var out: [UInt8] = []
        var members = 0
        var at = 0
        var inMember = false
        var buffer = [UInt8](repeating: 0, count: outSize)
        while at < bytes.count || inMember {
            if !inMember {
                guard at + 1 < bytes.count, bytes[at] == 0x1f, bytes[at + 1] == 0x8b else { break }
                _ = inflater.reset()
                inMember = true
                members += 1
            }
            let end = min(bytes.count, at + chunk)
            let step = bytes[at..<end].withUnsafeBytes { input in
                buffer.withUnsafeMutableBytes { inflater.inflate(input, into: $0) }
            }
            at += step.consumed
            out += buffer[0..<step.produced]
            switch step.status {
            case .memberEnd: inMember = false
            case .corrupt(let message): return (out, members, message, false)
            case .more: if step.consumed == 0 && step.produced == 0 && end == bytes.count { return (out, members, nil, false) }
            }
        }
        return (out, members, nil, !inMember)
    }

    func gzip(_ parts: [String]) throws -> [UInt8] {
        let path = dir + "/m.gz"
        let w = try TraceFileWriter(path: path, gzip: true)
        for (i, p) in parts.enumerated() {
            w.write(p)
            if i < parts.count - 1 { w.endMember() }
        }
        w.close()
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    func inflaters() throws -> [GzipInflater] {
        guard let zlib = ZlibInflater() else { XCTFail("zlib"); return [] }
        guard let fast = ISALInflater() else {
            throw XCTSkip("ISA-L (libisal) is not installed here: only zlib runs, which the other ingest tests cover")
        }
        return [zlib, fast]
    }

    func testSameBytesForEveryMemberAndChunking() throws {
        var rng = SystemRandomNumberGenerator()
        let parts = (0..<5).map { m in (0..<(m * 700 + 3)).map { "{\"v\":1,\"sid\":\"S\",\"seq\":\($0),\"t\":\(UInt32.random(in: 0...9_999_999, using: &rng)),\"ev\":\"mark\"}\n" }.joined() }
        let bytes = try gzip(parts)
        let expected = Array(parts.joined().utf8)
        for inflater in try inflaters() {
            for (chunk, out) in [(1, 7), (13, 100), (4096, 65_536), (bytes.count, 1 << 20)] {
                let r = inflateAll(inflater, bytes, chunk: chunk, outSize: out)
                XCTAssertEqual(r.out, expected, "\(inflater.name) chunk \(chunk) out \(out)")
                XCTAssertEqual(r.members, 5, inflater.name)
                XCTAssertNil(r.error, inflater.name)
                XCTAssertTrue(r.endedClean, inflater.name)
            }
        }
    }

    func testCutAndCorruptStreamsAreCaughtByBoth() throws {
        let bytes = try gzip([String(repeating: "{\"v\":1,\"sid\":\"S\",\"seq\":1,\"t\":1,\"ev\":\"mark\"}\n", count: 400)])
        let whole = Array(String(repeating: "{\"v\":1,\"sid\":\"S\",\"seq\":1,\"t\":1,\"ev\":\"mark\"}\n", count: 400).utf8)
        for inflater in try inflaters() {
            let cut = inflateAll(inflater, Array(bytes.prefix(bytes.count * 2 / 3)), chunk: 512, outSize: 4096)
            XCTAssertFalse(cut.endedClean, "\(inflater.name): a cut stream never ends clean")
            XCTAssertTrue(whole.starts(with: cut.out), "\(inflater.name): what came out before the cut is right")
            var badTrailer = bytes
            badTrailer[badTrailer.count - 6] ^= 0xff  // the CRC-32
            let crc = inflateAll(inflater, badTrailer, chunk: 512, outSize: 4096)
            XCTAssertNotNil(crc.error, "\(inflater.name): a wrong CRC is corrupt data")
            var badData = bytes
            badData[12] ^= 0x55
            badData[13] ^= 0xaa
            let data = inflateAll(inflater, badData, chunk: 512, outSize: 4096)
            XCTAssertTrue(data.error != nil || data.out != whole, "\(inflater.name): flipped deflate bits never pass as the original")
        }
    }

    func testPreferredIsISALWhereInstalledAndZlibWhenDisabled() throws {
        _ = try inflaters()
        XCTAssertEqual(GzipInflaters.make()?.name, "ISA-L igzip")
    }
}
