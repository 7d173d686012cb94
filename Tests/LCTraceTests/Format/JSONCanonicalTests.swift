import XCTest
@testable import LCTraceFormat

/// JSON compared as values (trace format 1.2): what makes no difference, and what does.
final class JSONCanonicalTests: XCTestCase {
    func same(_ a: String, _ b: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(JSONCanonical.equal(a, b), "\(a) and \(b) are one value", file: file, line: line)
    }

    func different(_ a: String, _ b: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(JSONCanonical.equal(a, b), "\(a) and \(b) differ", file: file, line: line)
    }

    func testWhatMakesNoDifference() {
        same(#"{"bounds":[402,874]}"#, #"{ "bounds" : [ 402 , 874 ] }"#)
        same(#"{"a":1,"b":{"c":2,"d":3}}"#, #"{"b":{"d":3,"c":2},"a":1}"#)
        same(#"[1, 1.0, 10, 0.5, -0, 1200]"#, #"[1e0, 10e-1, 1E1, 5e-1, 0, 1.2e3]"#)
        same(#"["A", "é", "\n", "/"]"#, #"["\u0041", "\u00e9", "\u000a", "\/"]"#)
        same(#"{"\u0041":true}"#, #"{"A":true}"#)
        same("null", " null ")
        same(#"{"x":0.000123}"#, #"{"x":1.23e-4}"#)
    }

    func testWhatDoes() {
        different(#"[402,874]"#, #"[402,875]"#)
        different(#"[1,2]"#, #"[2,1]"#)              // arrays keep their order
        different(#"{"a":1}"#, #"{"a":"1"}"#)        // a number is not a string
        different(#"{"a":1}"#, #"{"a":1,"b":null}"#) // a key more
        different(#"1"#, #"-1"#)
        different(#"0.1"#, #"0.01"#)
        different("true", "false")
        different(#"{"a":1}"#, "not json")
        XCTAssertTrue(JSONCanonical.equal("not json", "not json"), "the same text is the same, JSON or not")
        XCTAssertTrue(JSONCanonical.equal(nil as String?, nil))
        XCTAssertFalse(JSONCanonical.equal("{}", nil))
    }

    func testCanonicalText() {
        let text = Array(#"{ "b": [1.50, "\u0041"], "a": {} }"#.utf8).withUnsafeBytes { JSONCanonical.text(of: $0) }
        XCTAssertEqual(text.map { String(decoding: $0, as: UTF8.self) }, #"{"a":{},"b":[15e-1,"A"]}"#)
    }
}
