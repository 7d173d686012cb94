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

/// The libpq wrapper against a real server: `LCTRACE_TEST_POSTGRES_URL` names one (`.ci/run`
/// starts a throwaway cluster and sets it); without it these tests skip.
final class PGConnectionTests: XCTestCase {
    static var url: String? { ProcessInfo.processInfo.environment["LCTRACE_TEST_POSTGRES_URL"] }

    func connect() throws -> PGConnection {
        guard let url = Self.url else { throw XCTSkip("no PostgreSQL server: set LCTRACE_TEST_POSTGRES_URL (.ci/run starts one)") }
        return try PGConnection(url: url)
    }

    func testCopyRoundTripsEveryCharacterTheTextFormatEscapes() throws {
        let db = try connect()
        try db.execute("CREATE TEMP TABLE copy_check (n bigint, s text)")
        let values: [String?] = ["plain", "tab\there", "line\nbreak", "back\\slash", "cr\rlf", nil, "", "\\N", "é😀"]
        let stored = try db.copyIn("COPY copy_check (n, s) FROM STDIN") { w in
            for (i, v) in values.enumerated() {
                w.add(Int64(i))
                w.add(v)
                try w.endRow()
            }
        }
        XCTAssertEqual(stored, values.count)
        var back: [String?] = []
        try db.forEachRow("SELECT s FROM copy_check WHERE n >= $1 ORDER BY n", ["0"]) { row in back.append(row.text(0, 0)) }
        XCTAssertEqual(back, values)
    }

    /// Numbers are written digit by digit into the copy's buffer: every width and both signs,
    /// the extremes included, come back as they went.
    func testCopyRoundTripsEveryWidthOfNumber() throws {
        let db = try connect()
        try db.execute("CREATE TEMP TABLE numbers (i integer, n bigint)")
        var values: [Int64?] = [0, -1, 9, 10, -10, 99, 100, Int64.max, Int64.min, Int64.max - 1, Int64.min + 1, nil]
        var p: Int64 = 1
        for _ in 0..<18 { p *= 10; values += [p - 1, p, p + 1, -p, -(p - 1)] }
        XCTAssertEqual(try db.copyIn("COPY numbers FROM STDIN") { w in
            for (i, v) in values.enumerated() { w.add(Int64(i)); w.add(v); try w.endRow() }
        }, values.count)
        var back: [Int64?] = []
        try db.forEachRow("SELECT n FROM numbers WHERE i >= $1 ORDER BY i", ["0"]) { row in back.append(row.int(0, 0)) }
        XCTAssertEqual(back, values)
    }

    func testCopyStreamsManyRowsInChunks() throws {
        let db = try connect()
        try db.execute("CREATE TEMP TABLE many (n bigint, s text)")
        let n = 200_000
        let stored = try db.copyIn("COPY many FROM STDIN") { w in
            for i in 0..<n { w.add(Int64(i)); w.add("row \(i) with some text to fill the buffer"); try w.endRow() }
        }
        XCTAssertEqual(stored, n)
        XCTAssertEqual(try db.query("SELECT count(*), sum(n) FROM many").int(0, 1), Int64(n * (n - 1) / 2))
    }

    /// The binary COPY of `events` (schema 4's column types): every width at its extremes and
    /// around byte boundaries, NULL in each, and a jsonb whose text holds escapes and non-ASCII,
    /// come back as they went; a wrong length, byte order or jsonb version fails here.
    func testBinaryCopyRoundTripsEveryWidthNullAndJSONB() throws {
        let db = try connect()
        try db.execute("CREATE TEMP TABLE bin (n int8, i int4, s int2, j jsonb)")
        var rows: [(Int64?, Int64?, Int64?, String?)] = [(nil, nil, nil, nil)]
        let eights: [Int64] = [0, 1, -1, 255, 256, 65_536, 1 << 32, Int64.max, Int64.min, 0x0102_0304_0506_0708]
        let fours: [Int64] = [0, 1, -1, 255, 256, 65_535, 16_777_216, Int64(Int32.max), Int64(Int32.min), 0x0102_0304]
        let twos: [Int64] = [0, 1, -1, 255, 256, 0x0102, -300, Int64(Int16.max), Int64(Int16.min), 7]
        let jsons: [String?] = [#"{"a": 1}"#, #"{"wall": "tab\tq\"uote\\back\nline \u0001 é😀"}"#, nil, "null", #""\\N""#, "{}",
                                #"{"x": -0.5}"#, #"{"ev": 40000, "class": 2147483647}"#, "[]", #"{"attrs": "\r\n"}"#]
        for k in 0..<eights.count { rows.append((eights[k], fours[k], twos[k], jsons[k])) }
        rows += [(1, nil, 2, "{}"), (nil, 3, nil, nil)]
        let stored = try db.copyInBinary("COPY bin FROM STDIN (FORMAT binary)") { w in
            for r in rows {
                w.beginRow(fields: 4)
                w.add(int8: r.0); try w.add(int4: r.1); try w.add(int2: r.2)
                if let j = r.3 { Array(j.utf8).withUnsafeBytes { w.add(jsonb: $0) } } else { w.add(jsonb: nil) }
                try w.endRow()
            }
        }
        XCTAssertEqual(stored, rows.count)
        // Compared with what the text format stores for the same values.
        try db.execute("CREATE TEMP TABLE txt (LIKE bin)")
        try db.copyIn("COPY txt FROM STDIN") { w in
            for r in rows { w.add(r.0); w.add(r.1); w.add(r.2); w.add(r.3); try w.endRow() }
        }
        func read(_ table: String) throws -> [[String?]] {
            var out: [[String?]] = []
            try db.forEachRow("SELECT n::text, i::text, s::text, j::text FROM \(table) ORDER BY ctid") { row in
                out.append((0..<4).map { row.text(0, $0) })
            }
            return out
        }
        let binary = try read("bin")
        XCTAssertEqual(binary, try read("txt"))
        XCTAssertEqual(binary.count, rows.count)
        XCTAssertEqual(binary[0], [nil, nil, nil, nil])
        XCTAssertEqual(binary[8], ["9223372036854775807", "2147483647", "32767", #"{"ev": 40000, "class": 2147483647}"#])
        XCTAssertEqual(binary[9], ["-9223372036854775808", "-2147483648", "-32768", "[]"])
        XCTAssertEqual(try db.query(#"SELECT j->>'wall' FROM bin WHERE n = 1 ORDER BY ctid"#).text(0, 0), "tab\tq\"uote\\back\nline \u{01} é😀")
    }

    /// Binary COPY converts nothing: a value too wide for its column is refused as the server
    /// refuses it in text (22003), never written truncated, and the connection stays usable.
    func testBinaryCopyRefusesAValueTooWideForItsColumn() throws {
        let db = try connect()
        try db.execute("CREATE TEMP TABLE narrow (i int4, s int2)")
        for (i, s) in [(Int64(Int32.max) + 1, Int64(0)), (Int64(Int32.min) - 1, 0), (0, Int64(Int16.max) + 1), (0, Int64(Int16.min) - 1)] {
            XCTAssertThrowsError(try db.copyInBinary("COPY narrow FROM STDIN (FORMAT binary)") { w in
                w.beginRow(fields: 2); try w.add(int4: i); try w.add(int2: s); try w.endRow()
            }) { XCTAssertEqual(($0 as? PGError)?.sqlState, "22003", "\($0)") }
            XCTAssertThrowsError(try db.copyIn("COPY narrow FROM STDIN") { w in w.add(i); w.add(s); try w.endRow() }) {
                XCTAssertEqual(($0 as? PGError)?.sqlState, "22003", "\($0)")
            }
        }
        XCTAssertEqual(try db.query("SELECT count(*) FROM narrow").int(0, 0), 0)
    }

    func testErrorsCarryTheSQLStateAndNeverTheParameters() throws {
        let db = try connect()
        XCTAssertThrowsError(try db.query("SELECT * FROM no_such_table WHERE x = $1", ["secret-value"])) { error in
            let e = error as! PGError
            XCTAssertEqual(e.sqlState, "42P01")
            XCTAssertFalse(e.description.contains("secret-value"))
        }
        // The connection is usable after a failure, inside and outside a transaction.
        XCTAssertThrowsError(try db.transaction { try db.execute("SELECT 1/0") })
        XCTAssertEqual(try db.query("SELECT 41 + 1").int(0, 0), 42)
        XCTAssertThrowsError(try db.copyIn("COPY no_such_table FROM STDIN") { _ in })
        XCTAssertEqual(try db.query("SELECT 1").int(0, 0), 1)
    }

    func testAFailingRowCallbackStopsTheStreamAndLeavesTheConnectionUsable() throws {
        let db = try connect()
        struct Stop: Error {}
        var seen = 0
        XCTAssertThrowsError(try db.forEachRow("SELECT generate_series(1, 100000)") { _ in
            seen += 1
            if seen == 10 { throw Stop() }
        }) { XCTAssertTrue($0 is Stop) }
        XCTAssertEqual(try db.query("SELECT 7").int(0, 0), 7)
    }

    /// libpq's messages span lines with tab indents; `Error:` shows them as one line (no server needed).
    func testLibpqMessagesAreToldOnOneLine() {
        XCTAssertEqual(PGConnection.oneLine("server closed the connection unexpectedly\n\tThis probably means the server terminated\n"),
                       "server closed the connection unexpectedly This probably means the server terminated")
        XCTAssertEqual(PGConnection.oneLine("  \r\n"), "")
    }

    func testAnUnreachableServerIsAClearErrorWithoutThePassword() {
        XCTAssertThrowsError(try PGConnection(url: "postgresql://qa:hunter2@127.0.0.1:1/none?connect_timeout=2")) { error in
            let e = error as! PGError
            XCTAssertTrue(e.isConnectionFailure)
            XCTAssertTrue(e.message.contains("postgresql://qa@127.0.0.1:1/none"), e.message)
            XCTAssertFalse(e.message.contains("hunter2"))
        }
        // libpq quotes a parameter it cannot decode: the password is taken out of its words too.
        XCTAssertThrowsError(try PGConnection(url: "postgresql://qa@127.0.0.1:1/none?password=hunter2%zz")) { error in
            XCTAssertFalse("\(error)".contains("hunter2"), "\(error)")
        }
    }
}
