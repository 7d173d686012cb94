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
@testable import LCTraceCLI

/// Tables say when a value was cut and how to see it whole, are aligned over every row (a wide
/// value after row 1,000 included, also once the rows spill to a temporary file), and CSV and
/// JSON written from a query's rows in place are byte for byte what the values say.
final class TableOutputTests: TemporaryDirectoryTestCase {

    override func setUp() {
        super.setUp()
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"AVeryLongClassNameThatGoesOnAndOnForMoreThanSixtyCharactersController""#)
        TestSupport.writeLines(b.lines, to: dir + "/s.jsonl")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, dir + "/s.jsonl"]).status, 0)
    }

    static let longClass = "AVeryLongClassNameThatGoesOnAndOnForMoreThanSixtyCharactersController"

    func testACutValueEndsInAnEllipsisAndTheNoteSaysHowToSeeItWhole() {
        let sql = "SELECT class, event FROM events_v WHERE event = 'init'"
        let cut = TestSupport.run(["query", "--db", db, sql])
        XCTAssertEqual(cut.status, 0, cut.err)
        let lines = cut.out.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines[2], String(Self.longClass.prefix(59)) + "…  init")
        XCTAssertEqual(lines[3], "(1 row)")
        XCTAssertEqual(lines[4], "cut at 60 characters (…): class; see them whole with --no-truncate, --max-width N or -f csv")
        let whole = TestSupport.run(["query", "--db", db, "--no-truncate", sql])
        XCTAssertEqual(whole.out.split(separator: "\n")[2], Self.longClass + "  init")
        XCTAssertFalse(whole.out.contains("cut at"), whole.out)
        let narrow = TestSupport.run(["query", "--db", db, "--max-width", "8", sql]).out.split(separator: "\n")
        XCTAssertEqual(narrow[2], "AVeryLo…  init")
        XCTAssertEqual(narrow[4], "cut at 8 characters (…): class; see them whole with --no-truncate, --max-width N or -f csv")
        XCTAssertEqual(TestSupport.run(["query", "--db", db, "--max-width", "80", sql]).out.split(separator: "\n")[2],
                       Self.longClass + "  init")
        // Nothing cut, no note; CSV is never cut.
        XCTAssertFalse(TestSupport.run(["query", "--db", db, "SELECT event FROM events_v"]).out.contains("cut at"))
        XCTAssertTrue(TestSupport.run(["query", "--db", db, "-f", "csv", sql]).out.contains(Self.longClass + ",init"))
        for bad in [["--max-width", "0"], ["--max-width", "x"], ["--max-width", "9", "--no-truncate"]] {
            XCTAssertEqual(TestSupport.run(["query", "--db", db] + bad + [sql]).status, 64, "\(bad)")
        }
        // sessions: the same options; its short session ids are whole with --no-truncate.
        let sessions = TestSupport.run(["sessions", "--db", db, "--max-width", "5"])
        XCTAssertTrue(sessions.out.contains("com.…"), sessions.out)
        XCTAssertTrue(sessions.out.contains("cut at 5 characters (…): app, device, os, start, end;"), sessions.out)
        XCTAssertEqual(TestSupport.run(["sessions", "--db", db, "--no-truncate"]).status, 0)
    }

    /// A value first seen after row 1,000 is as wide as it is: the column is measured on every row.
    func testAWideValueAfterTheThousandthRowIsShownWholeAndAligned() {
        let sql = """
            WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 1500)
            SELECT CASE WHEN x = 1200 THEN 'abcdefghijklmnopqrstuvwxyz' ELSE 'a' END AS v, x FROM r
            """
        let r = TestSupport.run(["query", "--db", db, sql])
        XCTAssertEqual(r.status, 0, r.err)
        let lines = r.out.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2 + 1500 + 1)
        XCTAssertTrue(lines.contains("abcdefghijklmnopqrstuvwxyz  1200"), "the wide value is cut or misaligned")
        XCTAssertFalse(r.out.contains("a…"))
        let widths = Set(lines[1..<1502].map(\.count))
        XCTAssertEqual(widths, [26 + 2 + 4], "every row as wide as the widest (the numbers right-aligned)")
    }

    /// Past its memory budget a table keeps its rows in a temporary file: the same text.
    func testATableSpilledToATemporaryFileIsTheSameTable() throws {
        func render(budget: Int) throws -> String {
            var out = ""
            let table = RowFormatter(style: .table, columns: ["n", "text", "blob"], write: { out += $0 })
            table.memoryBudget = budget
            for i in 0..<3000 {
                try table.add([.int(Int64(i)), .text(i == 2500 ? String(repeating: "é", count: 40) : "r\(i)\n\u{1B}x"),
                               i % 7 == 0 ? .null : .blob([UInt8(i & 0xff)])])
            }
            try table.finish()
            return out
        }
        let inMemory = try render(budget: 1 << 30)
        XCTAssertEqual(try render(budget: 2_000), inMemory)
        XCTAssertTrue(inMemory.contains(String(repeating: "é", count: 40)))
        XCTAssertTrue(inMemory.contains("r17⏎\\u001bx"), "one line, escaped")
        XCTAssertTrue(inMemory.hasSuffix("(3000 rows)\n"))
    }

    /// The values `sql` gives, read the plain way (a copy of each as an SQLValue).
    func values(_ sql: String, _ connection: SQLiteDatabase) throws -> (columns: [String], rows: [[SQLValue]]) {
        let stmt = try connection.prepare(sql)
        var rows: [[SQLValue]] = []
        while try stmt.step() { rows.append((0..<stmt.columnCount).map { stmt.value($0) }) }
        return (stmt.columnNames, rows)
    }

    /// CSV and JSON from a query's rows in place equal the same rows written from copies of
    /// their values, and a reference made cell by cell with `csvField` and `json`.
    func testCSVAndJSONFromRowsInPlaceAreTheValues() throws {
        let connection = try SQLiteDatabase(path: db, mode: .readOnly)
        let sql = """
            SELECT 1 AS i, -9223372036854775808 AS lowest, 2.5 AS d, 1e300 * 1e300 AS inf, NULL AS absent,
                   'a,b' AS comma, 'say "hi"' AS quote, 'line' || char(10) || 'two' AS lf, 'cr' || char(13) AS cr,
                   'é ☃ 🎉' AS unicode, CAST(x'61ff62' AS TEXT) AS not_utf8, '=SUM(A1)' AS formula, '+SUM(A1,"B1")' AS quoted_formula, '-3' AS minus,
                   char(27) || '[2J' || char(9) || '\\' AS controls, x'00ff10' AS blob, '' AS empty, printf('%.*c', 70000, 'é') AS large
            UNION ALL SELECT 0, 0, 0.1, -0.0, NULL, '', '', '', '', '', '', '', '', '', '', x'', NULL, ''
            """
        let (columns, rows) = try values(sql, connection)
        XCTAssertEqual(rows.count, 2)
        for style in [RowFormatter.Style.csv, .json] {
            for safe in [false, true] {
                var copied = ""
                let plain = RowFormatter(style: style, columns: columns, neutralizesFormulas: safe, write: { copied += $0 })
                for row in rows { try plain.add(row) }
                try plain.finish()
                var inPlace = ""
                let fast = RowFormatter(style: style, columns: columns, neutralizesFormulas: safe, write: { inPlace += $0 })
                let stmt = try connection.prepare(sql)
                try stmt.forEachRow { try fast.add($0) }
                try fast.finish()
                XCTAssertEqual(inPlace, copied, "\(style) safe \(safe)")
                // The reference, one cell at a time.
                var reference = ""
                if style == .csv {
                    reference = columns.joined(separator: ",") + "\n"
                    for row in rows {
                        reference += row.map { v -> String in
                            if case .text(let s) = v { return RowFormatter.csvField(s, neutralize: safe) }
                            return RowFormatter.csvField(RowFormatter.plain(v))
                        }.joined(separator: ",") + "\n"
                    }
                } else {
                    reference = "["
                    for (n, row) in rows.enumerated() {
                        let fields: [String] = zip(columns, row).map { name, value in JSONText.quoted(name) + ": " + RowFormatter.json(value) }
                        reference += (n == 0 ? "\n  {" : ",\n  {") + fields.joined(separator: ", ") + "}"
                    }
                    reference += "\n]\n"
                }
                XCTAssertEqual(inPlace, reference, "\(style) safe \(safe)")
            }
        }
        var csv = ""
        let out = RowFormatter(style: .csv, columns: columns, write: { csv += $0 })
        try connection.prepare(sql).forEachRow { try out.add($0) }
        try out.finish()
        XCTAssertTrue(csv.contains(",\"a,b\",\"say \"\"hi\"\"\",\"line\ntwo\",\"cr\r\",é ☃ 🎉,a\u{FFFD}b,=SUM(A1),\"+SUM(A1,\"\"B1\"\")\",-3,"), csv)
        XCTAssertTrue(csv.contains("1,-9223372036854775808,2.5,,,"), "infinity is empty, as before")
        XCTAssertFalse(csv.contains("\u{FFFD}\u{FFFD}"), "a piece boundary split no character")
        XCTAssertTrue(csv.contains(String(repeating: "é", count: 70_000)))
    }

    /// Output is handed on in pieces that end between UTF-8 sequences, whatever the values.
    func testPiecesEndBetweenCharacters() throws {
        var pieces: [[UInt8]] = []
        let out = RowFormatter(style: .csv, columns: ["t"], bytes: { pieces.append(Array($0)) })
        for i in 0..<2_000 { try out.add([.text(String(repeating: i % 2 == 0 ? "é" : "🎉x", count: 37))]) }
        try out.finish()
        XCTAssertGreaterThan(pieces.count, 2)
        for piece in pieces {
            XCTAssertNotNil(String(validatingCString: piece.map { CChar(bitPattern: $0) } + [0]), "a piece ends inside a character")
        }
    }
}
