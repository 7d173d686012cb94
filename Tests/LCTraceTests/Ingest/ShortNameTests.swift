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

/// Keys and event names are classified from the line's raw bytes (`ShortName`): exactly the
/// known names match, and nothing that only shares a prefix, a length or padding with one.
final class ShortNameTests: XCTestCase {
    func kind(_ text: String) -> EventKind { Array(text.utf8).withUnsafeBytes { EventKind.classify($0) } }
    func key(_ text: String) -> TraceKey? { Array(text.utf8).withUnsafeBytes { TraceKey.classify($0) } }

    func testEveryKnownNameAndNothingElse() {
        for k in EventKind.allCases where k != .unknown {
            XCTAssertEqual(kind(k.rawValue), k)
            let name = k.rawValue
            for other in [String(name.dropLast()), name + "s", name + "\0", "\0" + name, name.uppercased(),
                          String(name.dropLast()) + "\u{7f}", String(name.reversed())] where other != name {
                XCTAssertNotEqual(kind(other), k, "\(other.debugDescription) is not \(k)")
            }
        }
        for k in TraceKey.allCases {
            XCTAssertEqual(key(k.text), k)
            XCTAssertNil(key(k.text + "\0"), k.text)
            XCTAssertNil(key(String(k.text.dropFirst())).flatMap { $0 == k ? $0 : nil }, k.text)
        }
        XCTAssertEqual(kind(""), .unknown)
        XCTAssertNil(key(""))
        XCTAssertEqual(kind(String(repeating: "a", count: 33)), .unknown)
        XCTAssertEqual(kind("sceneWillEnterForeground" + String(repeating: "x", count: 40)), .unknown)
        // Names of every length up to the limit and past it, against a byte-wise compare.
        let all = EventKind.allCases.map(\.rawValue)
        for length in 0...40 {
            for seed in 0..<20 {
                var bytes = (0..<length).map { UInt8(truncatingIfNeeded: ($0 &* 31) &+ seed &* 7 &+ 97) }
                if seed == 0, let name = all.first(where: { $0.utf8.count == length }) { bytes = Array(name.utf8) }
                let text = String(decoding: bytes, as: UTF8.self)
                let expected = all.contains(text) ? EventKind(rawValue: text)! : .unknown
                XCTAssertEqual(bytes.withUnsafeBytes { EventKind.classify($0) }, expected, text.debugDescription)
            }
        }
    }
}
