import XCTest
@testable import LCTraceStore
@testable import LCTracePostgreSQL

/// Schema 7 stores PostgreSQL's events in blocks of up to `PGEventRow.blockSize` of one
/// session (`event_blocks`), unnested by the view `events`. What is stored must be exactly what
/// a row an event held: each (session, seq) once, every block's arrays the same length and in
/// seq order, its bounds its first and last seq, whether the lines went straight in or were
/// merged into a session whose blocks they interleave.
final class PostgreSQLEventBlocksTests: PostgreSQLTestCase {
    /// Blocks that break the layout `events` and the ingest rely on (none expected), and
    /// (session, seq) pairs stored twice.
    private func brokenBlocks(_ pg: PGConnection) throws -> (blocks: Int64, twice: Int64) {
        let bad = try pg.query("""
            SELECT count(*) FROM event_blocks b WHERE NOT (
                cardinality(b.seq) BETWEEN 1 AND \(PGEventRow.blockSize)
                AND cardinality(b.t) = cardinality(b.seq) AND cardinality(b.vc) = cardinality(b.seq)
                AND cardinality(b.other) = cardinality(b.seq) AND cardinality(b.ev) = cardinality(b.seq)
                AND cardinality(b.flags) = cardinality(b.seq) AND (b.rest IS NULL OR cardinality(b.rest) = cardinality(b.seq))
                AND b.seq[1] = b.first_seq AND b.seq[cardinality(b.seq)] = b.last_seq
                AND b.seq = (SELECT array_agg(DISTINCT x ORDER BY x) FROM unnest(b.seq) x))
            """).int(0, 0) ?? -1
        let twice = try pg.query("SELECT count(*) FROM (SELECT session, seq FROM events GROUP BY 1, 2 HAVING count(*) > 1) d").int(0, 0) ?? -1
        return (bad, twice)
    }

    /// Lines loaded again are compared with the stored events as packed: one that differs in
    /// any column (t, the controller, the class, a flag, the thread, the wall time, the name)
    /// is a conflicting duplicate, one that differs only in its attrs' spacing and key order is
    /// a duplicate, on PostgreSQL as on SQLite.
    func testAConflictInAnyColumnIsToldFromADuplicate() throws {
        var b = TraceBuilder(sid: "S-conflicts")
        b.vc(10, "init", "0xA", #""cls":"HomeVC","thread":"main""#)
        b.vc(11, "viewWillAppear", "0xA", #""animated":true,"wall":"2026-11-02T10:15:04.000Z""#)
        b.vc(12, "addChild", "0xB", #""parent":"0xA","attrs":{"k":1,"j":[1,2]}"#)
        b.vc(13, "viewDidAppear", "0xA", #""animated":false"#)
        b.vc(14, "init", "0xC", #""cls":"CellVC""#)
        TestSupport.writeLines(b.lines, to: dir + "/first.jsonl")
        let changed = [
            ("\"t\":10000000,", "\"t\":10000001,"),                                 // t
            ("\"animated\":true", "\"animated\":false"),                             // a flag
            ("\"parent\":\"0xA\"", "\"parent\":\"0xC\""),                           // the other controller
            ("\"ev\":\"viewDidAppear\"", "\"ev\":\"viewDidDisappear\""),             // the name
            ("\"cls\":\"CellVC\"", "\"cls\":\"OtherVC\""),                          // the class (in `other`)
            ("\"thread\":\"main\"", "\"thread\":\"bg\""),                           // the thread (in `rest`)
            ("\"wall\":\"2026-11-02T10:15:04.000Z\"", "\"wall\":\"2026-11-02T10:15:05.000Z\""), // the wall time
        ]
        let url = try freshDatabase(), reference = dir + "/reference.db"
        for db in [url, reference] { XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, dir + "/first.jsonl"]).status, 0) }
        for (k, (from, to)) in changed.enumerated() {
            let lines = b.lines.map { $0.contains(from) ? $0.replacingOccurrences(of: from, with: to) : $0 }
            XCTAssertEqual(zip(lines, b.lines).filter { $0 != $1 }.count, 1, "\(to) changes one line")
            TestSupport.writeLines(lines + [""], to: dir + "/again-\(k).jsonl")
            for db in [url, reference] {
                let r = TestSupport.run(["ingest", "-f", "json", "--db", db, dir + "/again-\(k).jsonl"])
                XCTAssertTrue(r.out.contains(#""events":{"new":0,"duplicate":\#(b.lines.count - 1),"conflicting":1}"#), "\(to) on \(db): \(r.out)")
            }
        }
        // The attrs written another way: the same JSON value, a duplicate.
        let respaced = b.lines.map { $0.replacingOccurrences(of: #""attrs":{"k":1,"j":[1,2]}"#, with: #""attrs":{ "j": [1, 2], "k": 1 }"#) }
        TestSupport.writeLines(respaced + ["", ""], to: dir + "/respaced.jsonl")
        for db in [url, reference] {
            let r = TestSupport.run(["ingest", "-f", "json", "--db", db, dir + "/respaced.jsonl"])
            XCTAssertTrue(r.out.contains(#""events":{"new":0,"duplicate":\#(b.lines.count),"conflicting":0}"#), "\(db): \(r.out)")
        }
    }

    /// A long session loaded straight in is cut into full blocks; a file that fills its holes
    /// later is merged into blocks that interleave the stored ones, with its duplicates counted;
    /// and every view reads the same as SQLite's after each file.
    func testStraightCopiesAndMergesKeepEachEventOnceInSeqOrder() throws {
        var b = TraceBuilder(sid: "S-blocks")
        for i in 0..<700 {
            // Every seventh line carries attrs with the bytes an array and COPY must escape.
            b.vc(Double(10 + i), "init", "0x\(i % 50)", i % 7 == 0 ? #""cls":"Cell\"VC","attrs":{"k":"a\\b\tc\n\"d\" é"}"# : #""cls":"CellVC""#)
        }
        let odd = b.lines.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        TestSupport.writeLines(odd, to: dir + "/1-odd.jsonl")
        TestSupport.writeLines(b.lines, to: dir + "/2-all.jsonl")
        let url = try freshDatabase(), reference = dir + "/reference.db"
        let pg = try PGConnection(url: url)
        for (file, new, duplicates) in [("1-odd", odd.count, 0), ("2-all", b.lines.count - odd.count, odd.count)] {
            for db in [url, reference] {
                let r = TestSupport.run(["ingest", "-f", "json", "--db", db, dir + "/\(file).jsonl"])
                XCTAssertEqual(r.status, 0, r.err)
                XCTAssertTrue(r.out.contains(#""events":{"new":\#(new),"duplicate":\#(duplicates),"conflicting":0}"#), r.out)
            }
            let broken = try brokenBlocks(pg)
            XCTAssertEqual(broken.blocks, 0, "every block is whole and in seq order after \(file)")
            XCTAssertEqual(broken.twice, 0, "each (session, seq) once after \(file)")
            XCTAssertEqual(try TestSupport.logicalDump(location: url), try TestSupport.logicalDump(reference), "after \(file)")
        }
        XCTAssertEqual(try pg.query("SELECT count(*) FROM events").int(0, 0), Int64(b.lines.count))
        // A batch's lines of a session go in as blocks of up to 256 (a file's first batches are
        // small, so each file takes a few), not a block a line; the even seqs merged into blocks
        // of their own, whose seq ranges overlap the first ones'.
        let sizes = try pg.query("SELECT count(*), max(cardinality(seq)) FROM event_blocks")
        XCTAssertLessThanOrEqual(sizes.int(0, 0) ?? 99, 6, "blocks")
        XCTAssertEqual(sizes.int(0, 1), Int64(PGEventRow.blockSize), "a full block")
        XCTAssertEqual(try pg.query("""
            SELECT count(*) FROM event_blocks a JOIN event_blocks c ON a.session = c.session AND a.first_seq < c.first_seq AND c.first_seq < a.last_seq
            """).int(0, 0).map { $0 > 0 }, true, "merged blocks interleave the stored ones")
    }

    /// A few events read by seq (a finding's evidence, `SQLReadConnection.events(session:seqs:)`)
    /// are the view's, and only the blocks that hold them are unnested: the report's HTML
    /// spent a second on 10 M events unnesting every block of a session per example.
    func testEventsReadBySeqUnnestOnlyTheBlocksThatHoldThem() throws {
        var b = TraceBuilder(sid: "S-seqs")
        for i in 0..<900 { b.vc(Double(10 + i), "init", "0x\(i % 50)", #""cls":"CellVC""#) }
        TestSupport.writeLines(b.lines, to: dir + "/seqs.jsonl")
        let url = try freshDatabase()
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", url, dir + "/seqs.jsonl"]).status, 0)
        let pg = try PGConnection(url: url)
        let read = PGReadConnection(pg: pg, snapshot: false)
        let session = try pg.query("SELECT id FROM sessions").int(0, 0) ?? -1
        let blocks = try pg.query("SELECT first_seq, last_seq FROM event_blocks WHERE session = \(session)")
        let bounds = (0..<blocks.rowCount).map { (blocks.int($0, 0) ?? 0, blocks.int($0, 1) ?? 0) }
        XCTAssertGreaterThan(bounds.count, 3, "a session of several blocks")
        let many = (0..<Int64(PGReadConnection.blockBoundTerms + 6)).map { $0 * 3 }
        for seqs in [[], [5], [5, 820], [820, 5, 5, 450, 100_000], many] as [[Int64]] {
            let from = read.events(session: "\(session)", seqs: seqs)
            let got = try pg.query("SELECT string_agg(r.seq || ':' || r.t || ':' || r.ev || ':' || r.vc, ',' ORDER BY r.seq) FROM \(from) AS r")
            let want = try pg.query("SELECT string_agg(seq || ':' || t || ':' || ev || ':' || vc, ',' ORDER BY seq) FROM event_rows"
                                    + " WHERE session = \(session) AND seq = ANY('{\(seqs.map(String.init).joined(separator: ","))}'::bigint[])")
            XCTAssertEqual(got.text(0, 0), want.text(0, 0), "\(seqs.prefix(5))")
            guard seqs.count <= PGReadConnection.blockBoundTerms else { continue }
            let holding = bounds.filter { bound in seqs.contains { bound.0 <= $0 && $0 <= bound.1 } }.count
            let plan = try pg.query("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM \(from) AS r")
            let scans = (0..<plan.rowCount).compactMap { plan.text($0, 0) }.filter { $0.contains("Function Scan") }
            XCTAssertEqual(scans.count, seqs.isEmpty ? 0 : 1, "\(scans)")
            let unnested = scans.first.map { line in Int(line[line.range(of: "loops=")!.upperBound...].prefix { $0.isNumber }) ?? -1 } ?? 0
            XCTAssertEqual(unnested, holding, "blocks unnested for \(seqs): \(scans)")
        }
    }
}
