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

/// A short fuzz run in every test pass (the long one is scripts/fuzz), and every input that
/// was ever hard for the reader, replayed.
final class FuzzTests: XCTestCase {
    func testShortFuzzRunKeepsEveryInvariant() throws {
        let dir = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fuzzer = try Fuzzer(seed: 20261129, scratchDirectory: dir)
        let stats = try fuzzer.run(iterations: 30_000, fileEvery: 100)
        XCTAssertEqual(stats.violations.map { "\($0.0): \($0.1)" }, [])
        XCTAssertGreaterThan(stats.accepted, 500, "mutations still produce valid lines")
        XCTAssertGreaterThan(stats.rejected, 10_000)
        XCTAssertEqual(stats.files, 300)
    }

    /// Option values through the whole command line: refused or accepted, never a trap, and
    /// what the parsers accept is in range and reads back the same.
    func testShortOptionFuzzRunKeepsEveryInvariant() throws {
        let dir = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let stats = OptionFuzzer(seed: 20261201, scratchDirectory: dir).run(iterations: 20_000)
        XCTAssertEqual(stats.violations.map { "\($0.0): \($0.1)" }, [])
        XCTAssertGreaterThan(stats.accepted, 1_000, "mutations still produce valid values")
        XCTAssertGreaterThan(stats.refused, 5_000)
    }

    func testRegressionInputs() throws {
        let folder = TestSupport.root.appendingPathComponent("Tests/LCTraceTests/Fuzz/regressions")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0 != "README.md" }.sorted()
        XCTAssertGreaterThanOrEqual(names.count, 7)
        var outcomes: [String: (lines: Int, accepted: Int, damage: String?)] = [:]
        for name in names {
            let input = try TraceInput(location: .file(folder.appendingPathComponent(name).path))
            var lines = 0, accepted = 0
            LineReader(input: input).forEachLine { line in
                lines += 1
                if line.overlongLength == nil, case .success(let e) = EventDecoder().decode(line.bytes) {
                    accepted += 1
                    if let attrs = e.attrs { XCTAssertTrue(EventDecoder.isJSONObject(attrs), "\(name): \(attrs.prefix(60))") }
                }
                return true
            }
            outcomes[name] = (lines, accepted, input.damage?.reason)
        }
        XCTAssertEqual(outcomes["deep-nesting.jsonl"]?.accepted, 0, "nesting beyond 64 levels is refused")
        XCTAssertEqual(outcomes["surrogates-and-escapes.jsonl"]?.accepted, 1, "only the valid surrogate pair line")
        XCTAssertEqual(outcomes["numbers.jsonl"]?.accepted, 2, "int64 max, and odd but valid numbers in an unknown key")
        XCTAssertEqual(outcomes["invalid-utf8.jsonl"]?.accepted, 0)
        XCTAssertTrue(outcomes["truncated-header.gz"]?.damage?.hasPrefix("gzip stream truncated") ?? false)
        XCTAssertEqual(outcomes["garbage-after-member.gz"]?.accepted, 200)
        XCTAssertNotNil(outcomes["garbage-after-member.gz"]?.damage)
        // 40 MB of spaces from 40 KB: harmless to stream, so read whole (the guard waits for 1 GiB).
        XCTAssertNil(outcomes["zip-bomb.gz"]?.damage)
        XCTAssertEqual(outcomes["zip-bomb.gz"]?.accepted, 1)
    }
}
