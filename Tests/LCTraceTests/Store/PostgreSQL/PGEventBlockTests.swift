import XCTest
@testable import LCTracePostgreSQL

/// The analysis's reading of `event_blocks` on the client (no server needed): the arrays'
/// text form, the values taken out of `rest`, and the merge of blocks that interleave.
final class PGEventBlockTests: XCTestCase {
    private func bytes<T>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try Array(text.utf8).withUnsafeBufferPointer(body)
    }

    func testIntegerArraysReadAsTheServerWritesThem() throws {
        XCTAssertEqual(try bytes("{1,-22,NULL,9223372036854775807,-9223372036854775808}") { try PGEventBlock.integers($0) },
                       [1, -22, 0, Int64.max, Int64.min])
        XCTAssertEqual(try bytes("[0:1]={5,6}") { try PGEventBlock.integers($0) }, [5, 6])
        XCTAssertEqual(try bytes("{}") { try PGEventBlock.integers($0) }, [])
        for bad in ["", "{", "{1,", "{1;2}", "{x}", "{1,2", "1,2}", "{12345678901234567890}", "{9223372036854775808}",
                    "{-9223372036854775809}", "{-", "{-}", "{-NULL}", "{NUL}"] {
            XCTAssertThrowsError(try bytes(bad) { try PGEventBlock.integers($0) }, bad)
        }
    }

    func testTextArraysResolveQuotesEscapesAndNulls() throws {
        let elements = try bytes(#"{"{\"ev\": 1}",NULL,plain,"NULL","a\\b\"c",""}"#) { try PGEventBlock.elements($0) }
        XCTAssertEqual(elements.map { $0.map { String(decoding: $0, as: UTF8.self) } },
                       [#"{"ev": 1}"#, nil, "plain", "NULL", #"a\b"c"#, ""])
        XCTAssertEqual(try bytes("{a;b}") { try PGEventBlock.elements($0) }.count, 1, "only ',' separates")
        for bad in ["{\"open", "{a", "{\"a\"b}"] {
            XCTAssertThrowsError(try bytes(bad) { try PGEventBlock.elements($0) }, bad)
        }
    }

    /// What `rest ->> key` gives: the ids as numbers, attrs as its string unescaped, the keys
    /// the model does not read skipped, whatever their order (jsonb writes shorter keys first).
    func testRestGivesWhatTheServersOperatorGives() throws {
        let values = try PGEventBlock.restValues(Array(#"{"ev": 40000, "wall": "x\"y", "attrs": "{\"k\": \"v\\n\u00e9\"}", "class": 12, "detail": 7, "thread": 3}"#.utf8))
        XCTAssertEqual(values.ev, 40000)
        XCTAssertEqual(values.cls, 12)
        XCTAssertEqual(values.detail, 7)
        XCTAssertEqual(values.attrs, "{\"k\": \"v\\né\"}")
        let empty = try PGEventBlock.restValues(Array("{}".utf8))
        XCTAssertEqual([empty.ev, empty.cls, empty.detail], [0, 0, 0])
        XCTAssertNil(empty.attrs)
        for bad in ["", "[]", #"{"ev": }"#, #"{"ev": 1"#, #"{ev: 1}"#] {
            XCTAssertThrowsError(try PGEventBlock.restValues(Array(bad.utf8)), bad)
        }
    }

    private func block(_ seqs: [Int64]) -> PGEventBlock {
        let zeros = [Int64](repeating: 0, count: seqs.count)
        return PGEventBlock(seq: seqs, t: seqs.map { $0 * 10 }, ev: zeros, vc: zeros, other: zeros, flags: zeros,
                            restEv: zeros, restClass: zeros, restDetail: zeros, restAttrs: seqs.map { _ in nil })
    }

    /// Blocks in first_seq order, some interleaving (a later file filled holes), fetched a
    /// page at a time: every event once, in seq order; a block joins only once the next
    /// event could be in it, and each fetch is told the blocks still being read.
    func testInterleavingBlocksGiveEveryEventInSeqOrder() throws {
        let pages: [[PGEventBlock]] = [[block([0, 2, 4, 6]), block([1, 3, 5])], [block([7, 8]), block([9, 11, 13])],
                                       [block([10, 12]), block([14])], [block([15, 16, 17])]]
        var fetched = 1, seen: [Int64] = [], readingAtFetch: [[Int64]] = []
        try PGBlockMerge.forEach(first: pages[0], last: false, fetch: { reading in
            readingAtFetch.append(reading.map { $0.seq[0] })
            fetched += 1
            return (pages[fetched - 1], fetched == pages.count)
        }) { b, i in seen.append(b.seq[i]) }
        XCTAssertEqual(seen, Array(0...17))
        XCTAssertEqual(fetched, pages.count, "no fetch after the last page")
        XCTAssertEqual(readingAtFetch.first, [0, 1], "the first page's blocks were still being read")
        // Blocks that do not overlap are read one after another: when the next page is
        // fetched only the last is being read, never the whole page at once.
        var readingThen: [[Int64]] = [], inOrder: [Int64] = []
        try PGBlockMerge.forEach(first: [block([0, 1]), block([2, 3]), block([4, 5])], last: false, fetch: { reading in
            readingThen.append(reading.map { $0.seq[0] })
            return ([block([6])], true)
        }) { b, i in inOrder.append(b.seq[i]) }
        XCTAssertEqual(inOrder, Array(0...6))
        XCTAssertEqual(readingThen, [[4]])
        var one: [Int64] = []
        try PGBlockMerge.forEach(first: [block([3, 4])], last: true, fetch: { _ in XCTFail("nothing more to fetch"); return ([], true) }) { b, i in
            one.append(b.seq[i])
        }
        XCTAssertEqual(one, [3, 4])
        try PGBlockMerge.forEach(first: [], last: true, fetch: { _ in ([], true) }) { _, _ in XCTFail("no events") }
    }
}
