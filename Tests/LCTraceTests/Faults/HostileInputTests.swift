import XCTest
@testable import LCTrace
import LCTraceGen
#if canImport(Glibc)
import Glibc
#endif

/// The second round of hostile input (issue 12), run as real processes: whatever a user
/// types or a device writes, lctrace ends with a clear message and the documented exit
/// status, never a trap, a hang or a silent skip.
final class HostileInputTests: TemporaryDirectoryTestCase {

    func lctrace(_ args: [String]) throws -> (status: Int32, out: String, err: String) {
        try TestSupport.process(TestSupport.binary, args)
    }

    /// A small analysed database to point the commands at.
    func sampleDatabase() throws -> String {
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"A""#)
        TestSupport.writeLines(b.lines, to: dir + "/s.jsonl")
        XCTAssertEqual(try lctrace(["ingest", "-q", "--db", db, dir + "/s.jsonl"]).status, 0)
        return db
    }

    // MARK: 1. Option values that do not fit

    func testOptionValuesThatDoNotFitAreUsageErrorsNamingTheRange() throws {
        let db = try sampleDatabase()
        let cases: [([String], String)] = [
            (["--grace", "10000000000s"], "invalid --grace '10000000000s': out of range (expected a duration from 0s to 24h)"),
            (["--grace", "9223372036854775807ns"], "invalid --grace '9223372036854775807ns': out of range"),
            (["--grace", "99999999999999999999999h"], "invalid --grace '99999999999999999999999h': out of range"),
            (["--gap-threshold", "animated=1e20ms"], "invalid --gap-threshold animated '1e20ms'"),
            (["--gap-threshold", "plain=25h"], "invalid --gap-threshold plain '25h': out of range"),
            (["--grace", "-5s"], "invalid --grace '-5s': out of range"),
            (["--grace", "5000"], "invalid --grace '5000': a duration needs a unit"),
            (["--gap-threshold", "animated=1000"], "invalid --gap-threshold animated '1000': a duration needs a unit"),
            (["--max-live", "A=99999999999999999999"], "invalid --max-live A '99999999999999999999' (expected a whole number from 0 to 1000000000)"),
            (["--max-live", "A=-1"], "invalid --max-live A '-1'"),
            (["--examples", "18446744073709551616"], "invalid --examples '18446744073709551616' (expected a whole number from 0 to 1000000)"),
        ]
        for (options, message) in cases {
            for command in ["report", "analyze"] where command == "report" || options[0] != "--examples" {
                let r = try lctrace([command, "--db", db] + options)
                XCTAssertEqual(r.status, 64, "\(command) \(options): \(r.err)")
                XCTAssertTrue(r.err.hasPrefix("Error: " + message), "\(options): \(r.err)")
            }
        }
        let hint = try lctrace(["report", "--db", db, "--grace", "5000"])
        XCTAssertTrue(hint.err.contains("Hint: write 5000ms or 5000s"), hint.err)
        // The edges of the range are accepted.
        XCTAssertEqual(try lctrace(["report", "--db", db, "--grace", "24h", "--fail-on", "never"]).status, 0)
        XCTAssertEqual(try lctrace(["report", "--db", db, "--grace", "0s", "--gap-threshold", "animated=0ns,plain=86400s",
                                    "--fail-on", "never"]).status, 0)
    }

    // MARK: 4. NUL inside strings

    func testANulInsideAStringIsStoredWhole() throws {
        var a = TraceBuilder(sid: "a\\u0000b")
        a.vc(2, "init", "0x1\\u0000x", #""cls":"Cell\u0000Controller""#)
        var b = TraceBuilder(sid: "a")
        b.vc(2, "init", "0x1", #""cls":"Cell""#)
        TestSupport.writeLines(a.lines + b.lines, to: dir + "/nul.jsonl")
        let r = try lctrace(["ingest", "--db", db, dir + "/nul.jsonl"])
        XCTAssertEqual(r.status, 0, r.err)
        let d = try Database(path: db, mode: .readOnly)
        XCTAssertEqual(try d.scalarInt("SELECT count(*) FROM sessions"), 2, "a\\u0000b and a are two sessions")
        XCTAssertEqual(try d.scalarText("SELECT group_concat(length(CAST(sid AS BLOB)), ',') FROM (SELECT sid FROM sessions ORDER BY sid)"), "1,3")
        XCTAssertEqual(try d.scalarInt("SELECT count(*) FROM events WHERE session = (SELECT id FROM sessions WHERE sid = 'a')"), 3)
        XCTAssertEqual(try d.scalarText("SELECT hex(vc) FROM events_v WHERE event = 'init' AND class != 'Cell'"), "3078310078")
        XCTAssertEqual(try d.scalarInt("SELECT length(CAST(class AS BLOB)) FROM events_v WHERE event = 'init' AND class != 'Cell'"), 15)
    }
}
