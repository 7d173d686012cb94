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

/// The bitset of session ids the ingest keeps instead of per-session dictionaries.
final class SessionSetTests: XCTestCase {
    func testInsertRemoveAndSubtractAgreeWithASet() {
        var set = SessionSet()
        var model = Set<Int64>()
        var x: UInt64 = 12345
        for _ in 0..<5000 {
            x = x &* 6364136223846793005 &+ 1442695040888963407
            let id = Int64(x >> 52)   // 0…4095: many repeats
            if x & 1 == 0 {
                XCTAssertEqual(set.insert(id), model.insert(id).inserted)
            } else {
                XCTAssertEqual(set.remove(id), model.remove(id) != nil)
            }
        }
        XCTAssertEqual(set.count, model.count)
        XCTAssertEqual(set.ids, model.sorted())
        let other = SessionSet(model.filter { $0 % 3 == 0 })
        XCTAssertEqual(set.subtracting(other).ids, model.filter { $0 % 3 != 0 }.sorted())
    }

    /// An id far past any a database hands out (a row given its id by hand) costs no huge bitmap.
    func testHugeAndNegativeIds() {
        var set = SessionSet([1, Int64.max, 1 << 40])
        XCTAssertFalse(set.insert(-5), "no row has a negative id")
        XCTAssertEqual(set.count, 3)
        XCTAssertTrue(set.contains(Int64.max))
        XCTAssertEqual(set.ids, [1, 1 << 40, Int64.max])
        XCTAssertEqual(set.subtracting(SessionSet([Int64.max])).ids, [1, 1 << 40])
        XCTAssertTrue(set.remove(1 << 40))
        XCTAssertEqual(set.count, 2)
    }
}
