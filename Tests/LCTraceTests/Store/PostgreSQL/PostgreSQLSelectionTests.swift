import XCTest
@testable import LCTraceStore
@testable import LCTracePostgreSQL

/// The filters that name nothing (`SelectionTests`), on a PostgreSQL database.
final class PostgreSQLSelectionTests: PostgreSQLTestCase {
    func testEveryFilterNamingNothingExits66WithTheClosestKnownValue() throws {
        let pg = try freshDatabase()
        SelectionTests.load(into: pg, dir: dir)
        SelectionTests.assertFiltersNamingNothingExit66WithTheClosest(db: pg)
    }
}
