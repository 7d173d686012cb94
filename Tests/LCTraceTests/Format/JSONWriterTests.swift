import XCTest
import Foundation
@testable import LCTraceFormat
@testable import LCTraceModel

/// `JSONWriter`, the one writer every JSON output goes through, and `JSONText`, its escaper:
/// the commas, the caller's layout, the escapes and numbers, and that streaming changes nothing.
final class JSONWriterTests: XCTestCase {
    func written(_ body: (inout JSONWriter) -> Void) -> String {
        var json = JSONWriter()
        body(&json)
        return json.text
    }

    func testCommasGoBetweenElementsAndMembersAtEveryDepthAndNeverAfterAKey() {
        let text = written { json in
            json.beginObject()
            json.key("a"); json.int(1)
            json.key("list")
            json.beginArray()
            json.int(1); json.string("two"); json.null(); json.bool(true)
            json.beginArray(); json.endArray()
            json.beginObject(); json.endObject()
            json.beginObject(); json.key("x"); json.beginArray(); json.int(3); json.endArray(); json.endObject()
            json.endArray()
            json.key("empty"); json.beginObject(); json.endObject()
            json.key("last"); json.string(nil as String?)
            json.endObject()
        }
        XCTAssertEqual(text, #"{"a":1,"list":[1,"two",null,true,[],{},{"x":[3]}],"empty":{},"last":null}"#)
        XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(text.utf8)))
    }

    func testLayoutGoesAfterTheCommaAndBeforeAClosingBracketOnlyWhenTheListHoldsElements() {
        func list(_ n: Int) -> String {
            written { json in
                json.beginObject()
                json.key("version"); json.int(1)
                json.layout("\n "); json.key("items")
                json.beginArray()
                for i in 0..<n { json.layout("\n  "); json.int(i) }
                json.endArray(layout: "\n ")
                json.layout("\n "); json.key("end"); json.bool(false)
                json.endObject()
            }
        }
        XCTAssertEqual(list(0), "{\"version\":1,\n \"items\":[],\n \"end\":false}")
        XCTAssertEqual(list(2), "{\"version\":1,\n \"items\":[\n  0,\n  1\n ],\n \"end\":false}")
        // A layout is for the next element only, and one left when its container closes is dropped.
        XCTAssertEqual(written { json in
            json.beginArray(); json.layout(" "); json.int(1); json.int(2); json.layout("\n"); json.endArray()
            json.raw("\n")
        }, "[ 1,2]\n")
        XCTAssertEqual(written { json in
            json.beginObject(); json.layout("\n"); json.key("k"); json.int(0); json.endObject(layout: "\n")
        }, "{\n\"k\":0\n}")
    }

    func testEveryControlCharacterQuoteAndBackslashIsEscapedAndNothingElse() throws {
        let short: [UInt8: String] = [0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t"]
        for b in UInt8(0)..<0x20 {
            let expected = short[b] ?? "\\u00" + (b < 0x10 ? "0" : "") + String(b, radix: 16)
            XCTAssertEqual(written { $0.string(String(UnicodeScalar(b))) }, "\"\(expected)\"", "byte \(b)")
        }
        XCTAssertEqual(written { $0.string("\"\\") }, #""\"\\""#)
        // What JSON allows unescaped stays as it is: `/`, DEL, C1 controls, U+2028, any UTF-8.
        let plain = "/\u{7F}\u{85}\u{2028}é日本🚀 "
        XCTAssertEqual(written { $0.string(plain) }, "\"\(plain)\"")
        XCTAssertEqual(written { json in json.beginObject(); json.key("\u{1}\"k"); json.int(1); json.endObject() }, #"{"\u0001\"k":1}"#)
        // Every ASCII character reads back as itself.
        let all = String((0..<0x80).map { Character(UnicodeScalar(UInt8($0))) })
        let text = written { json in json.beginArray(); json.string(all); json.endArray() }
        XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String], [all])
        XCTAssertEqual(JSONText.quoted(all), String(text.dropFirst().dropLast()))
        XCTAssertEqual(Array(UInt8(0x20)..<0x7f).withUnsafeBytes { raw in written { $0.string(bytes: raw) } },
                       JSONText.quoted(String(decoding: Array(UInt8(0x20)..<0x7f), as: UTF8.self)))
    }

    func testNumbersAndNumbersThatAreNotFinite() {
        XCTAssertEqual(written { json in
            json.beginArray()
            json.int(Int64.min); json.int(Int64.max); json.int(0); json.int(-7); json.int(42 as Int); json.int(nil as Int64?)
            json.endArray()
        }, "[-9223372036854775808,9223372036854775807,0,-7,42,null]")
        XCTAssertEqual(written { json in
            json.beginArray()
            for d in [0.5, -2.0, 1e-7, 1e300, .nan, .infinity, -.infinity, 0.1 + 0.2] { json.double(d) }
            json.endArray()
        }, "[0.5,-2.0,1e-07,1e+300,null,null,null,0.30000000000000004]")
        // The detail values of a finding take the same path: not finite is null there too.
        XCTAssertEqual(DetailValue.encode(["b": .double(.nan), "a": .ints([1, 2]), "c": .text("x\"")]),
                       #"{"a":[1,2],"b":null,"c":"x\""}"#)
        XCTAssertEqual(DetailValue.double(-.infinity).json, "null")
    }

    func testDecimalsAreFixedPointWithExactlyThePlacesAsked() {
        let cases: [(Int64, Int, String)] = [
            (0, 3, "0.000"), (1, 3, "0.001"), (-1, 3, "-0.001"), (999, 3, "0.999"), (1000, 3, "1.000"),
            (-1500, 3, "-1.500"), (1_234_567, 3, "1234.567"), (Int64.max, 3, "9223372036854775.807"),
            (Int64.min, 3, "-9223372036854775.808"), (42, 0, "42"), (-42, 0, "-42"), (5, 18, "0.000000000000000005"),
        ]
        for (value, places, expected) in cases {
            XCTAssertEqual(written { $0.decimal(value, places: places) }, expected, "\(value) with \(places)")
        }
        XCTAssertEqual(written { json in json.beginArray(); json.decimal(1, places: 1); json.decimal(2, places: 1); json.endArray() },
                       "[0.1,0.2]")
    }

    func testRawValuesTakeAnElementsPlaceAndRawTextDoesNot() {
        var record = JSONWriter()
        record.beginObject(); record.key("ph"); record.string("i"); record.endObject()
        XCTAssertEqual(written { json in
            json.beginArray()
            json.rawValue(bytes: record.bytes)
            json.rawValue("12.500")
            json.raw(" ")
            json.rawValue(bytes: record.bytes[0..<0] + Array("true".utf8))
            json.endArray()
        }, #"[{"ph":"i"},12.500 ,true]"#, "raw text is written where it is called, before the next comma")
    }

    /// A document streamed through a sink in small pieces is the document written whole; each
    /// piece is whole UTF-8 (flushes fall between calls) and the writer holds about `flushAt`.
    func testStreamingInPiecesEqualsWritingWhole() throws {
        func document(_ json: inout JSONWriter, flushing: Bool) throws {
            json.beginObject()
            json.key("traceEvents")
            json.beginArray()
            for i in 0..<500 {
                json.layout("\n")
                json.beginObject()
                json.key("name"); json.string("é日本🚀 \(i) \u{1}\"")
                json.key("ts"); json.decimal(Int64(i) * 1_234 - 10_000, places: 3)
                json.key("args"); json.beginObject(); json.key("seq"); json.int(i); json.endObject()
                json.endObject()
                if flushing {
                    XCTAssertLessThan(json.bytes.count, 64 + 100, "never much more than flushAt held")
                    try json.flushIfFull()
                }
            }
            json.endArray(layout: "\n")
            json.endObject()
            json.raw("\n")
            if flushing { try json.flush() }
        }
        var whole = JSONWriter()
        try document(&whole, flushing: false)
        var pieces: [[UInt8]] = []
        var streamed = JSONWriter(flushAt: 64) { pieces.append($0) }
        try document(&streamed, flushing: true)
        XCTAssertTrue(streamed.bytes.isEmpty, "all handed on")
        XCTAssertGreaterThan(pieces.count, 100)
        XCTAssertEqual(pieces.joined().map { $0 }, whole.bytes)
        for piece in pieces { XCTAssertNotNil(String(validating: piece, as: UTF8.self), "a piece cut inside a character") }
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(whole.bytes)))
    }

    func testAWriterWithoutASinkKeepsEverythingUntilTaken() throws {
        var json = JSONWriter(capacity: 4)
        json.beginArray()
        json.int(1)
        try json.flush()
        XCTAssertEqual(json.takeBytes(), Array("[1".utf8))
        json.int(2)
        json.endArray()
        XCTAssertEqual(json.text, ",2]", "the open array and its comma state survive the take")
    }
}
