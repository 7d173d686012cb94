import XCTest
@testable import LCTrace

/// A schema-1 database, made by the last release that wrote one (Fixtures/make-schema-v1-db
/// builds commit ccb235a and ingests a few samples), is migrated in place by a writing command
/// and refused, with the way to migrate, by the read-only ones.
final class MigrationTests: TemporaryDirectoryTestCase {
    var fixture: String { TestSupport.root.appendingPathComponent("Tests/LCTraceTests/Fixtures/schema-v1.db").path }

    func copyFixture() throws {
        try FileManager.default.copyItem(atPath: fixture, toPath: db)
    }

    func userVersion(_ path: String) throws -> Int64? {
        try SQLiteDatabase(path: path, mode: .readOnly).scalarInt("PRAGMA user_version")
    }

    func testReadOnlyCommandsRefuseAVersion1DatabaseAndSayHowToMigrate() throws {
        try copyFixture()
        XCTAssertEqual(try userVersion(db), 1)
        for command in [["report"], ["sessions"], ["query", "SELECT 1"], ["baseline", "-o", "-"],
                        ["compare", "--base-build", "812", "--head-build", "814"]] {
            let r = TestSupport.run(command + ["--db", db])
            XCTAssertEqual(r.status, 74, "\(command[0]): \(r.err)")
            XCTAssertTrue(r.err.contains("schema version 1") && r.err.contains("lctrace analyze --db \(db)"), r.err)
        }
        XCTAssertEqual(try userVersion(db), 1, "a read-only command changes nothing")
    }

    func testAnalyzeMigratesInPlaceAndRebuildsTheFindings() throws {
        try copyFixture()
        let before = try TestSupport.logicalDump(db).components(separatedBy: "## SELECT sid, vc, since")[0]
        let r = TestSupport.run(["analyze", "--db", db])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(try userVersion(db), 2)
        let migrated = try TestSupport.logicalDump(db)
        XCTAssertEqual(migrated.components(separatedBy: "## SELECT sid, vc, since")[0], before,
                       "events, sessions, files and rejects are kept as they were")

        // The same files loaded by this version: the same findings, with their identities.
        let files = try String(contentsOfFile: TestSupport.root.appendingPathComponent("Tests/LCTraceTests/Fixtures/schema-v1.files").path, encoding: .utf8)
            .split(separator: "\n").map { TestSupport.root.appendingPathComponent(String($0)).path }
        let fresh = dir + "/fresh.db"
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", fresh] + files).status, 0)
        let columns = "rule, session, vc, since, class, t, evidence, confidence, detail, identity_key, identity, app, build, device"
        func findings(_ path: String) throws -> [String] {
            let q = try SQLiteDatabase(path: path, mode: .readOnly).prepare("SELECT \(columns), CASE WHEN file IS NULL THEN message END FROM findings_v ORDER BY rule, session, vc, since, identity_key")
            var rows: [String] = []
            while try q.step() { rows.append((0..<q.columnCount).map { RowFormatter.plain(q.value($0)) }.joined(separator: "|")) }
            return rows
        }
        let migratedFindings = try findings(db)
        XCTAssertEqual(migratedFindings, try findings(fresh))
        XCTAssertTrue(migratedFindings.contains { $0.hasPrefix("LC301|") && $0.contains("|com.example.") })
        XCTAssertFalse(migratedFindings.contains { $0.contains("||||") && $0.hasPrefix("LC3") }, "every finding has its identity")
        XCTAssertEqual(TestSupport.run(["report", "--db", db, "--fail-on", "never"]).status, 0, "readable once migrated")
    }

    func testIngestMigratesToo() throws {
        try copyFixture()
        var b = TraceBuilder(sid: "new-session")
        b.vc(2, "init", "0xa", #""cls":"A""#)
        TestSupport.writeLines(b.lines, to: dir + "/new.jsonl")
        let r = TestSupport.run(["ingest", "-q", "--db", db, dir + "/new.jsonl"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(try userVersion(db), 2)
        let dirty = try SQLiteDatabase(path: db, mode: .readOnly).scalarInt("SELECT count(*) FROM sessions WHERE dirty = 1")
        XCTAssertEqual(dirty, 0, "the ingest's analysis rebuilt every session after the migration")
        let missing = try SQLiteDatabase(path: db, mode: .readOnly).scalarInt("SELECT count(*) FROM findings WHERE length(identity) != 16")
        XCTAssertEqual(missing, 0)
    }
}
