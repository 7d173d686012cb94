import XCTest
import Foundation
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

final class EventDecoderTests: XCTestCase {
    private func decode(_ text: String) -> Result<TraceEvent, RejectReason> {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { EventDecoder().decode(UnsafeRawBufferPointer($0)) }
    }

    private func decodeBytes(_ bytes: [UInt8]) -> Result<TraceEvent, RejectReason> {
        var bytes = bytes
        return bytes.withUnsafeMutableBytes { EventDecoder().decode(UnsafeRawBufferPointer($0)) }
    }

    private func event(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> TraceEvent? {
        switch decode(text) {
        case .success(let e): return e
        case .failure(let r): XCTFail("rejected: \(r.message)", file: file, line: line); return nil
        }
    }

    private func reason(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        switch decode(text) {
        case .success: XCTFail("accepted: \(text)", file: file, line: line); return ""
        case .failure(let r): return r.message
        }
    }

    /// The scanner skips eight plain bytes at a time; every byte value at every position of
    /// the word must be classified exactly as the byte-by-byte path would.
    func testEightByteSkipClassifiesEveryByteValueAtEveryPosition() {
        for position in 0..<8 {
            for value in 0...255 {
                var bytes = [UInt8](repeating: 0x61, count: 8)
                bytes[position] = UInt8(value)
                let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                let plain = value >= 0x20 && value < 0x80 && value != 0x22 && value != 0x5c
                XCTAssertEqual(JSONScanner.plainASCII(word), plain, "byte \(value) at \(position)")
                if !plain {
                    XCTAssertEqual(JSONScanner.specialMask(word).trailingZeroBitCount >> 3, position, "byte \(value)")
                }
            }
        }
        // The first special byte is found whatever follows it (a borrow may mark bytes after it).
        for first in 0..<8 {
            for value in [0x00, 0x1f, 0x22, 0x5c, 0x80, 0xff] {
                for after in [0x00, 0x01, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xff] {
                    var bytes = [UInt8](repeating: 0x61, count: 8)
                    bytes[first] = UInt8(value)
                    for k in (first + 1)..<8 { bytes[k] = UInt8(after) }
                    let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                    XCTAssertEqual(JSONScanner.specialMask(word).trailingZeroBitCount >> 3, first, "\(value) at \(first), then \(after)")
                }
            }
        }
        // Two special bytes in one word, and the borders of the ranges next to each other.
        for pair in [(0x22, 0x5c), (0x1f, 0x20), (0x7f, 0x80), (0x00, 0xff)] {
            let word = [UInt8(pair.0), UInt8(pair.1), 0x61, 0x61, 0x61, 0x61, 0x61, 0x61].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            XCTAssertFalse(JSONScanner.plainASCII(word))
        }
    }

    /// A usual line's keys fit the decoder's stack room; a line with more is decoded again with
    /// room for `maxKeys`, to the same event, and past `maxKeys` it is refused. In a batch the
    /// retried line leaves nothing twice.
    func testLinesWithMoreKeysThanTheStackRoomDecodeWhole() throws {
        func line(extra: Int) -> String {
            #"{"v":1,"sid":"S","seq":3,"t":9,"ev":"viewDidLoad","vc":"0xa""# + (0..<extra).map { #","k\#($0)":\#($0)"# }.joined() + "}"
        }
        let small = EventDecoder.keysOnStack
        XCTAssertGreaterThanOrEqual(small, 20, "the usual line's keys fit")
        for keys in [small - 1, small, small + 1, EventDecoder.maxKeys] {
            let e = try XCTUnwrap(event(line(extra: keys - 6)), "\(keys) keys")
            XCTAssertEqual(e.vc, "0xa")
            let attrs = try XCTUnwrap(e.attrs.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Int] })
            XCTAssertEqual(attrs.count, keys - 6, "\(keys) keys")
            XCTAssertEqual(attrs["k\(keys - 7)"], keys - 7)
        }
        XCTAssertEqual(reason(line(extra: EventDecoder.maxKeys - 5)), "more than \(EventDecoder.maxKeys) keys in one line")

        let batch = EventBatch()
        let decoder = EventDecoder()
        for (i, text) in [line(extra: 1), line(extra: small + 3), line(extra: 2)].enumerated() {
            var bytes = Array(text.utf8)
            XCTAssertNil(bytes.withUnsafeMutableBytes { decoder.decode(UnsafeRawBufferPointer($0), into: batch, line: i + 1, offset: 0) })
        }
        XCTAssertEqual(batch.events.count, 3)
        XCTAssertEqual(batch.events.map { batch.traceEvent($0).attrs.map { $0.filter { $0 == ":" }.count } }, [1, small + 3, 2])
    }

    /// A key written with escapes is the key it spells: required keys are found, a known
    /// optional one goes to its column, and an unknown one to attrs as written.
    func testEscapedKeysAreTheKeysTheySpell() throws {
        let e = try XCTUnwrap(event(#"{"\u0076":1,"s\u0069d":"S","seq":4,"\u0074":9,"ev":"init","vc":"0xa","\u0063ls":"A","k\u00e9y":2}"#))
        XCTAssertEqual(e.sid, "S")
        XCTAssertEqual(e.t, 9)
        XCTAssertEqual(e.cls, "A")
        XCTAssertEqual(e.attrs, #"{"k\u00e9y":2}"#, "kept as written")
        XCTAssertTrue(reason(#"{"v":1,"s\u0069d":"S","s\u0069d":"T","seq":4,"t":9,"ev":"m"}"#).contains("sid"))
    }

    func testSessionRecordDecodesEveryField() throws {
        let e = try XCTUnwrap(event(#"{"v":1,"sid":"5E0C","seq":0,"t":0,"ev":"session","wall":"2026-11-02T10:15:03.120Z","app":"com.example.shop","appVersion":"5.2.1","build":"812","os":"iOS","osVersion":"27.1","sdk":"27.0","device":"iPhone16,2","recorder":"lctrace-recorder/1.0","thread":"main"}"#))
        XCTAssertEqual(e.kind, .session)
        XCTAssertEqual(e.session, SessionRecord(app: "com.example.shop", appVersion: "5.2.1", build: "812", os: "iOS",
                                               osVersion: "27.1", sdk: "27.0", device: "iPhone16,2",
                                               recorder: "lctrace-recorder/1.0", wall: "2026-11-02T10:15:03.120Z"))
        XCTAssertEqual(e.thread, "main")
        XCTAssertNil(e.attrs)
    }

    func testAppearanceFieldsAndFlags() throws {
        let e = try XCTUnwrap(event(#"{"v":1,"sid":"S","seq":4,"t":2900000,"ev":"viewWillAppear","vc":"0x6","animated":true,"isMovingToParent":false,"isBeingPresented":true}"#))
        XCTAssertEqual(e.seq, 4)
        XCTAssertEqual(e.t, 2_900_000)
        XCTAssertEqual(e.vc, "0x6")
        XCTAssertTrue(e.has(.animated))
        XCTAssertFalse(e.has(.isMovingToParent))
        XCTAssertTrue(e.flags.contains(EventFlags.present(.isMovingToParent)), "false is kept apart from absent")
        XCTAssertTrue(e.has(.isBeingPresented))
        XCTAssertFalse(e.flags.contains(EventFlags.present(.isMovingFromParent)))
    }

    func testBoundsAndTraitsAndUnknownKeysGoToAttrs() throws {
        let e = try XCTUnwrap(event(#"{"v":1,"sid":"S","seq":5,"t":1,"ev":"viewIsAppearing","vc":"0x6","animated":false,"bounds":[393,852.5],"traits":{"h":"compact"},"build_flavor":"beta","nested":{"a":[1,{"b":null}]}}"#))
        XCTAssertEqual(e.attrs, #"{"bounds":[393,852.5],"traits":{"h":"compact"},"build_flavor":"beta","nested":{"a":[1,{"b":null}]}}"#)
        let object = try JSONSerialization.jsonObject(with: Data(e.attrs!.utf8)) as? [String: Any]
        XCTAssertEqual(object?["build_flavor"] as? String, "beta")
    }

    func testOtherKeyDependsOnTheEvent() throws {
        XCTAssertEqual(event(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"addChild","vc":"0xc","parent":"0xp"}"#)?.other, "0xp")
        XCTAssertEqual(event(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"viewAttached","vc":"0xc","host":"0xh"}"#)?.other, "0xh")
        XCTAssertEqual(event(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"present","vc":"0xa","presented":"0xb","style":"pageSheet","animated":true}"#)?.other, "0xb")
        XCTAssertEqual(event(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"present","vc":"0xa","presented":"0xb","style":"pageSheet"}"#)?.detail, "pageSheet")
        XCTAssertEqual(event(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"pop","vc":"0xn","child":"0xb","animated":true,"interactive":true}"#)?.other, "0xb")
        let willMove = try XCTUnwrap(event(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"willMoveToParent","vc":"0xc","parent":null}"#))
        XCTAssertNil(willMove.other)
        XCTAssertTrue(willMove.flags.contains(.otherPresent))
        // A `parent` key on an event that does not define it is kept, not lost.
        XCTAssertEqual(event(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"mark","name":"step 3","parent":"x"}"#)?.attrs, #"{"parent":"x"}"#)
        XCTAssertEqual(event(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"sessionEnd","reason":"terminate"}"#)?.detail, "terminate")
        XCTAssertEqual(event(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"sceneDidEnterBackground","scene":"s1"}"#)?.detail, "s1")
    }

    func testUnknownEventNamesAreKept() throws {
        let e = try XCTUnwrap(event(#"{"v":1,"sid":"S","seq":9,"t":1,"ev":"viewDidBecomeFocused","vc":"0x1","extra":1}"#))
        XCTAssertEqual(e.kind, .unknown)
        XCTAssertEqual(e.name, "viewDidBecomeFocused")
        XCTAssertEqual(e.attrs, #"{"extra":1}"#)
    }

    func testEscapesAndUnicodeInStrings() throws {
        let e = try XCTUnwrap(event(#"{"v":1,"sid":"S\u00e9\ud83d\ude00","seq":1,"t":1,"ev":"init","vc":"0x1","cls":"Caf\u00e9VC \"x\""}"#))
        XCTAssertEqual(e.sid, "Sé😀")
        XCTAssertEqual(e.cls, "CaféVC \"x\"")
        XCTAssertEqual(event("{\"v\":1,\"sid\":\"S\",\"seq\":1,\"t\":1,\"ev\":\"init\",\"vc\":\"0x1\",\"cls\":\"Ünïcødé\"}")?.cls, "Ünïcødé")
    }

    func testWhitespaceAroundTokensIsAccepted() {
        XCTAssertNotNil(event(" { \"v\" : 1 , \"sid\" : \"S\" , \"seq\" : 1 , \"t\" : 2 , \"ev\" : \"mark\" } "))
    }

    /// An integer is a value, whatever its spelling (JSON's, and the published schema's
    /// `integer`): another JSON writer's `5.0` or `5e0` is the 5 of ours, read exactly.
    func testAnIntegerSpelledAsADecimalOrWithAnExponentIsThatInteger() throws {
        for (spelled, value) in [("5.0", Int64(5)), ("109e0", 109), ("0.5e1", 5), ("500e-2", 5), ("1E3", 1000), ("1e+3", 1000),
                                 ("-0", 0), ("0.000", 0), ("0e99999999", 0), ("9223372036854775807.000", Int64.max),
                                 ("922337203685477580.7e1", Int64.max), ("9007199254740993.0", 9_007_199_254_740_993)] {
            let e = try XCTUnwrap(event("{\"v\":1.0,\"sid\":\"S\",\"seq\":\(spelled),\"t\":\(spelled),\"ev\":\"mark\"}"), spelled)
            XCTAssertEqual(e.seq, value, spelled)
            XCTAssertEqual(e.t, value, spelled)
        }
        let scanner = { (text: String) -> JSONScanner.Integral in
            let bytes = Array(text.utf8)
            return bytes.withUnsafeBufferPointer { JSONScanner(UnsafeRawBufferPointer($0)).integral(0..<bytes.count) }
        }
        XCTAssertEqual(scanner("-9223372036854775808"), .value(.min))
        XCTAssertEqual(scanner("-9223372036854775809"), .outOfRange)
        XCTAssertEqual(scanner("-92233720368547758.08e2"), .value(.min))
        XCTAssertEqual(scanner("1.05"), .fraction)
        XCTAssertEqual(scanner("10e-2"), .fraction)
        XCTAssertEqual(scanner("1e19"), .outOfRange)
        // As many digits as a line holds: 0.000…1e150000 is exactly 1.
        XCTAssertEqual(scanner("0." + String(repeating: "0", count: 149_999) + "1e150000"), .value(1))
        XCTAssertEqual(scanner("-0." + String(repeating: "0", count: 199_999) + "5e200000"), .value(-5))
    }

    func testRequiredKeysAndTypes() {
        XCTAssertEqual(reason(#"{"sid":"S","seq":1,"t":1,"ev":"mark"}"#), "missing required key 'v'")
        XCTAssertEqual(reason(#"{"v":1,"seq":1,"t":1,"ev":"init"}"#), "missing required key 'sid'")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","t":1,"ev":"mark"}"#), "missing required key 'seq'")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":1,"ev":"mark"}"#), "missing required key 't'")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":1,"t":1}"#), "missing required key 'ev'")
        XCTAssertEqual(reason(#"{"v":1,"sid":"x","seq":"seven","t":1,"ev":"init","vc":"0x1","cls":"A"}"#), "key 'seq': expected an integer, got string")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":1.5,"t":1,"ev":"mark"}"#), "key 'seq': expected an integer, got a non-integer number")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":1,"t":15e-1,"ev":"mark"}"#), "key 't': expected an integer, got a non-integer number")
        XCTAssertEqual(reason(#"{"v":1,"sid":"x","seq":6,"t":-5,"ev":"init","vc":"0x1","cls":"A"}"#), "key 't': negative value -5")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":-1,"t":1,"ev":"mark"}"#), "key 'seq': negative value -1")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":99999999999999999999,"t":1,"ev":"mark"}"#), "key 'seq': integer out of range (a 64-bit integer at most)")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":9223372036854775808,"t":1,"ev":"mark"}"#), "key 'seq': integer out of range (a 64-bit integer at most)")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":1,"t":1e400,"ev":"mark"}"#), "key 't': integer out of range (a 64-bit integer at most)")
        XCTAssertEqual(reason(#"{"v":1,"sid":7,"seq":1,"t":1,"ev":"mark"}"#), "key 'sid': expected a string, got number")
        XCTAssertEqual(reason(#"{"v":1,"sid":"","seq":1,"t":1,"ev":"mark"}"#), "key 'sid': length 0 outside 1…128")
        XCTAssertEqual(reason("{\"v\":1,\"sid\":\"\(String(repeating: "y", count: 129))\",\"seq\":1,\"t\":1,\"ev\":\"mark\"}"), "key 'sid': length 129 outside 1…128")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"viewWillAppear","vc":"0x1","animated":"yes"}"#), "key 'animated': expected a boolean, got string")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"viewWillAppear"}"#), "event 'viewWillAppear' needs key 'vc'")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"init","vc":"0x1"}"#), "event 'init' needs key 'cls'")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"addChild","vc":"0x1"}"#), "event 'addChild' needs key 'parent' with a controller id")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"present","vc":"0x1","style":"pageSheet"}"#), "event 'present' needs key 'presented' with a controller id")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"dismiss"}"#), "event 'dismiss' needs key 'vc'")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"viewAttached","vc":"0x1","host":5}"#), "key 'host': expected a controller id or null, got number")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":0,"t":0,"ev":"session","app":"a"}"#), "session record needs key 'wall'")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"viewIsAppearing","vc":"0x1","bounds":[1]}"#), "key 'bounds': expected [width, height] numbers")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"traitChange","vc":"0x1","traits":"dark"}"#), "key 'traits': expected an object, got string")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":1,"seq":2,"t":1,"ev":"mark"}"#), "duplicate key 'seq'")
        XCTAssertEqual(reason(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":""}"#), "key 'ev': empty event name")
    }

    /// Format 1.1, "Keys that are absent": Codable recorders omit nil values, so only the keys
    /// listed as required make a line bad; every other absent key reads as null (false for a flag).
    func testAbsentOptionalKeysReadAsNull() throws {
        let willMove = try XCTUnwrap(event(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"willMoveToParent","vc":"0x2"}"#))
        XCTAssertNil(willMove.other, "willMove(toParent: nil)")
        XCTAssertEqual(willMove, try XCTUnwrap(event(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"willMoveToParent","vc":"0x2","parent":null}"#)).withoutOtherPresent,
                       "absent and null are the same event")
        XCTAssertNil(try XCTUnwrap(event(#"{"v":1,"sid":"S","seq":2,"t":1,"ev":"didMoveToParent","vc":"0x2"}"#)).other)
        XCTAssertNil(try XCTUnwrap(event(#"{"v":1,"sid":"S","seq":3,"t":1,"ev":"removeFromParent","vc":"0x2"}"#)).other)
        XCTAssertNil(try XCTUnwrap(event(#"{"v":1,"sid":"S","seq":4,"t":1,"ev":"viewAttached","vc":"0x2"}"#)).other, "a window")
        let appear = try XCTUnwrap(event(#"{"v":1,"sid":"S","seq":5,"t":1,"ev":"viewWillAppear","vc":"0x2"}"#))
        XCTAssertFalse(appear.has(.animated))
        XCTAssertFalse(appear.has(.isMovingToParent))
        let dismiss = try XCTUnwrap(event(#"{"v":1,"sid":"S","seq":6,"t":1,"ev":"dismiss","vc":"0x2"}"#))
        XCTAssertFalse(dismiss.has(.interactive))
        XCTAssertNotNil(event(#"{"v":1,"sid":"S","seq":7,"t":1,"ev":"push","vc":"0x2"}"#), "child is optional")
        XCTAssertNotNil(event(#"{"v":1,"sid":"S","seq":8,"t":1,"ev":"memoryWarning"}"#), "vc is optional on memoryWarning")
        let record = try XCTUnwrap(event(#"{"v":1,"sid":"S","seq":0,"t":0,"ev":"session","wall":"2026-11-02T10:15:03.120Z"}"#))
        XCTAssertNil(record.session?.build)
        XCTAssertNil(record.session?.sdk)
    }

    func testNewerVersionIsRefusedAsSuch() {
        XCTAssertEqual(reason(#"{"v":2,"sid":"x","seq":1,"t":1,"ev":"init","vc":"0x1","cls":"A"}"#),
                       "unsupported format version 2 (lctrace reads version 1)")
        XCTAssertEqual(reason(#"{"v":0,"sid":"x","seq":1,"t":1,"ev":"mark"}"#), "key 'v': invalid format version 0")
    }

    func testMalformedJSON() {
        XCTAssertEqual(reason("{not json}"), "not valid JSON: expected a key string, found 'n' at column 2")
        XCTAssertEqual(reason("[1,2,3]"), "not a JSON object")
        XCTAssertEqual(reason("\"text\""), "not a JSON object")
        XCTAssertTrue(reason(#"{"v":1,"sid":"S""#).hasPrefix("not valid JSON"))
        XCTAssertTrue(reason(#"{"v":1,} "#).hasPrefix("not valid JSON: expected a key string"))
        XCTAssertTrue(reason(#"{"v":01,"sid":"S","seq":1,"t":1,"ev":"m"}"#).hasPrefix("not valid JSON"))
        XCTAssertTrue(reason(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"m"} x"#).hasPrefix("not valid JSON: unexpected 'x' after the object"))
        XCTAssertTrue(reason("{\"v\":1,\"sid\":\"a\tb\",\"seq\":1,\"t\":1,\"ev\":\"m\"}").contains("control character"))
        XCTAssertTrue(reason(#"{"v":1,"sid":"\ud800","seq":1,"t":1,"ev":"m"}"#).contains("lone surrogate"))
        XCTAssertTrue(reason(#"{"v":1,"sid":"\x","seq":1,"t":1,"ev":"m"}"#).contains("invalid escape"))
        XCTAssertTrue(reason(#"{"v":tru,"sid":"S","seq":1,"t":1,"ev":"m"}"#).contains("invalid literal"))
        XCTAssertEqual(reason(""), "empty line")
    }

    func testNonUTF8IsRejectedWithItsColumn() {
        let prefix = Array(#"{"v":1,"sid":"x","seq":5,"t":1,"ev":"init","vc":"0x1","cls":""#.utf8)
        for bad: [UInt8] in [[0xff, 0xfe], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]] {
            guard case .failure(let r) = decodeBytes(prefix + bad + Array("\"}".utf8)) else { return XCTFail("accepted \(bad)") }
            XCTAssertEqual(r.message, "not valid JSON: not valid UTF-8 at column \(prefix.count + 1)")
        }
    }

    func testNestingDepthIsBounded() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        XCTAssertTrue(reason(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"m","x":"# + deep + "}").contains("nested deeper than 64 levels"))
        let ok = String(repeating: "[", count: 60) + String(repeating: "]", count: 60)
        XCTAssertNotNil(event(#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"m","x":"# + ok + "}"))
    }
}

private extension TraceEvent {
    /// The same event without the "`other` key was present" bit (absent and null differ only there).
    var withoutOtherPresent: TraceEvent {
        var e = self
        e.flags.remove(.otherPresent)
        return e
    }
}
