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

/// What a reject keeps of its line, on both backends: text where the first 200 bytes are
/// text, without a character the cut went through; the bytes otherwise.
final class RejectSampleTests: XCTestCase {
    func testTheSampleIsTextUnlessItIsNot() {
        let ascii = Array(repeating: UInt8(ascii: "a"), count: 199)
        let cutThroughE = Array((ascii + Array("é".utf8)).prefix(RejectSample.maxBytes))
        XCTAssertEqual(RejectSample.text(cutThroughE), String(repeating: "a", count: 199), "the cut é is dropped")
        let cutThroughEmoji = Array((Array(repeating: UInt8(ascii: "b"), count: 198) + Array("😀".utf8)).prefix(200))
        XCTAssertEqual(RejectSample.text(cutThroughEmoji), String(repeating: "b", count: 198))
        XCTAssertEqual(RejectSample.text(Array("plain {\"ev\":1}".utf8)), "plain {\"ev\":1}")
        XCTAssertNil(RejectSample.text([0x61, 0xFF, 0x62]), "not UTF-8 inside: bytes")
        XCTAssertNil(RejectSample.text([0xC3]), "nothing whole is left")
        // SQLite keeps a NUL in text; PostgreSQL cannot, and keeps the bytes.
        XCTAssertEqual(RejectSample.text([0x61, 0x00, 0x62]), "a\u{0}b")
        XCTAssertEqual(PGIngestSink.sample([0x61, 0x00, 0x62]).raw, "\\x610062")
        XCTAssertEqual(PGIngestSink.sample(cutThroughE).text, String(repeating: "a", count: 199))
    }
}
