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
        XCTAssertEqual(try userVersion(db), SQLiteSchema.version)
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
        // (1.2) A database of version 3 or older did not record which sessions each file held
        // (`file_sessions`): its LC904 findings keep `?` for the app the fresh load names.
        func withoutFileApp(_ rows: [String]) -> [String] {
            rows.map { row in
                guard row.hasPrefix("LC904|") else { return row }
                var cells = row.components(separatedBy: "|")
                // columns: rule … detail, identity_key (3 cells: LC904, app, kind), identity, app, build, device, message
                if let at = cells.indices.dropFirst().first(where: { cells[$0] == "LC904" }) {
                    cells[at + 1] = "?"
                    cells[at + 3] = ""          // the identity hash follows from the key
                    cells[at + 4] = ""          // the app column
                }
                return cells.joined(separator: "|")
            }
        }
        XCTAssertEqual(withoutFileApp(migratedFindings), withoutFileApp(try findings(fresh)))
        XCTAssertTrue(migratedFindings.filter { $0.hasPrefix("LC904|") }.allSatisfy { $0.contains("|LC904|?|") })
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
        XCTAssertEqual(try userVersion(db), SQLiteSchema.version)
        let dirty = try SQLiteDatabase(path: db, mode: .readOnly).scalarInt("SELECT count(*) FROM sessions WHERE dirty = 1")
        XCTAssertEqual(dirty, 0, "the ingest's analysis rebuilt every session after the migration")
        let missing = try SQLiteDatabase(path: db, mode: .readOnly).scalarInt("SELECT count(*) FROM findings WHERE length(identity) != 16")
        XCTAssertEqual(missing, 0)
    }
}

/// A schema-2 database, made by the last commit that wrote one (Fixtures/make-schema-v2-db:
/// every sample and lines that exercise every packing rule), is packed in place by a writing
/// command: its views read the same before and after, and its model and findings come out as
/// a fresh ingest of the same files makes them.
final class MigrationFromVersion2Tests: TemporaryDirectoryTestCase {
    var fixture: String { TestSupport.root.appendingPathComponent("Tests/LCTraceTests/Fixtures/schema-v2.db").path }

    /// The logical dump in sections, by the first words of their query.
    func sections(_ path: String) throws -> [String: String] {
        var out: [String: String] = [:]
        for part in try TestSupport.logicalDump(path).components(separatedBy: "## ").dropFirst() {
            let title = String(part.prefix(while: { $0 != "\n" }))
            out[title] = String(part.dropFirst(title.count))
        }
        return out
    }

    func testReadOnlyCommandsRefuseItAndSayHowToMigrate() throws {
        try FileManager.default.copyItem(atPath: fixture, toPath: db)
        let r = TestSupport.run(["report", "--db", db])
        XCTAssertEqual(r.status, 74, r.err)
        XCTAssertTrue(r.err.contains("schema version 2") && r.err.contains("lctrace analyze --db \(db)"), r.err)
    }

    func testAnalyzePacksItInPlaceWithTheSameContent() throws {
        try FileManager.default.copyItem(atPath: fixture, toPath: db)
        XCTAssertEqual(try SQLiteDatabase(path: db, mode: .readOnly).scalarInt("PRAGMA user_version"), 2)
        let before = try sections(db)
        let r = TestSupport.run(["analyze", "--db", db])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(try SQLiteDatabase(path: db, mode: .readOnly).scalarInt("PRAGMA user_version"), SQLiteSchema.version)
        let after = try sections(db)
        XCTAssertEqual(after.count, before.count)
        for (title, rows) in before {
            // (1.2) The rules' messages state foreground time as such where it differs from
            // the time that passed: the one leak of the fixture whose session went to the background.
            let rows = rows.replacingOccurrences(of: "SettingsViewController not deallocated 62.0 s after its pop",
                                                 with: "SettingsViewController not deallocated 62.0 s of foreground time (81.6 s in all) after its pop")
            XCTAssertEqual(after[title], rows, "\(title): the same after the migration and its analysis")
        }
        XCTAssertTrue(after.values.contains { $0.contains("2026-11-02\u{0}T10") }, "the wall time with a NUL")

        // The same files loaded by this version (paths aside: the fixture named them relative).
        let files = try String(contentsOfFile: TestSupport.root.appendingPathComponent("Tests/LCTraceTests/Fixtures/schema-v2.files").path, encoding: .utf8)
            .split(separator: "\n").map { TestSupport.root.appendingPathComponent(String($0)).path }
        let fresh = dir + "/fresh.db"
        XCTAssertNotEqual(TestSupport.run(["ingest", "-q", "--db", fresh] + files).status, 74)
        let freshSections = try sections(fresh)
        for (title, rows) in freshSections where !title.hasPrefix("SELECT path") && !title.hasPrefix("SELECT f.path") {
            let relative = rows.replacingOccurrences(of: TestSupport.root.path + "/", with: "")   // LC904 names its file
            XCTAssertEqual(after[title], relative, "\(title): as a fresh ingest stores it")
        }
        // Every line read again (another file: one blank line more) is a duplicate of its
        // migrated row, which needs every packed value, the invisible ones too (an other key
        // present with a null value), to be what a fresh ingest would have stored.
        let again = dir + "/again.jsonl"
        let lines = try String(contentsOfFile: TestSupport.root.appendingPathComponent("Tests/LCTraceTests/Fixtures/packing.jsonl").path,
                               encoding: .utf8)
        try (lines + "\n").write(toFile: again, atomically: true, encoding: .utf8)
        let reread = TestSupport.run(["ingest", "--db", db, "--format", "json", again])
        let counts = (try JSONSerialization.jsonObject(with: Data(reread.out.utf8)) as? [String: Any])?["events"] as? [String: Int]
        XCTAssertEqual(counts, ["new": 0, "duplicate": 20, "conflicting": 0], reread.out + reread.err)
        // Packed, and readable by every command.
        let packed = try SQLiteDatabase(path: db, mode: .readOnly)
        XCTAssertGreaterThan(try packed.scalarInt("SELECT count(*) FROM events WHERE flags & 1 AND other IS NOT NULL") ?? 0, 0)
        XCTAssertEqual(try packed.scalarText("PRAGMA integrity_check"), "ok")
        XCTAssertEqual(TestSupport.run(["report", "--db", db, "--fail-on", "never"]).status, 0)
    }
}

/// Versions 5 and 6 only add indexes (the file ledger's `files_by_path` and `files_by_size`,
/// then `sessions_dirty`): a version 4 or 5 database is read as it is, and the next writing
/// command adds what it lacks, leaving the objects of a new database. The look-ups use them.
final class MigrationFromVersion4Tests: TemporaryDirectoryTestCase {
    var samples: String { TestSupport.root.appendingPathComponent("SampleTraces").path }

    func testAVersion4DatabaseIsReadAsItIsAndGainsTheLedgersIndexesAtTheNextWrite() throws {
        try readAsItIsThenMigrated(version: 4, lacking: ["files_by_path", "files_by_size", "sessions_dirty"])
    }

    func testAVersion5DatabaseIsReadAsItIsAndGainsTheDirtySessionsIndexAtTheNextWrite() throws {
        try readAsItIsThenMigrated(version: 5, lacking: ["sessions_dirty"])
    }

    private func readAsItIsThenMigrated(version stored: Int64, lacking names: [String]) throws {
        let reference = dir + "/reference.db"
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", reference, samples]).status, 0)
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, samples]).status, 0)
        do {
            let old = try SQLiteDatabase(path: db, mode: .readWrite)
            try old.execute(names.map { "DROP INDEX \($0);" }.joined() + " PRAGMA user_version = \(stored)")
        }
        func version() throws -> Int64? { try SQLiteDatabase(path: db, mode: .readOnly).scalarInt("PRAGMA user_version") }
        func indexes(_ path: String) throws -> Int64? {
            try SQLiteDatabase(path: path, mode: .readOnly).scalarInt(
                "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN (\(names.map { "'\($0)'" }.joined(separator: ",")))")
        }
        let read = TestSupport.run(["report", "--db", db, "--format", "json", "--fail-on", "never"])
        XCTAssertEqual(read.status, 0, read.err)
        XCTAssertEqual(read.out, TestSupport.run(["report", "--db", reference, "--format", "json", "--fail-on", "never"]).out)
        XCTAssertEqual(try version(), stored, "a reading command changes nothing")
        XCTAssertEqual(try indexes(db), 0)
        // An older database with something else changed is still refused.
        let tampered = dir + "/tampered.db"
        try FileManager.default.copyItem(atPath: db, toPath: tampered)
        try SQLiteDatabase(path: tampered, mode: .readWrite).execute("CREATE INDEX mine ON files (status)")
        let refused = TestSupport.run(["report", "--db", tampered])
        XCTAssertEqual(refused.status, 74, refused.err)
        XCTAssertTrue(refused.err.contains("index mine is not lctrace's"), refused.err)

        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, samples]).status, 0)
        XCTAssertEqual(try version(), SQLiteSchema.version)
        XCTAssertEqual(try indexes(db), Int64(names.count))
        XCTAssertEqual(TestSupport.run(["report", "--db", db, "--fail-on", "never"]).status, 0, "the migrated schema is accepted")
    }

    /// An analysis finds the dirty sessions through their index, not by a pass over every
    /// session (a team's database holds every session of every campaign).
    func testTheSessionsToAnalyseAreFoundByIndex() throws {
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, samples]).status, 0)
        let sqlite = try SQLiteDatabase(path: db, mode: .readOnly)
        for sql in [SessionsToAnalyse.countSQL(all: false), SessionsToAnalyse.pageSQL(all: false)] {
            let q = try sqlite.prepare("EXPLAIN QUERY PLAN " + sql)
            var plan: [String] = []
            while try q.step() { plan.append(q.text(3) ?? "") }
            XCTAssertFalse(plan.contains { $0.hasPrefix("SCAN sessions") && !$0.contains("INDEX") }, "\(sql) scans the sessions: \(plan)")
            XCTAssertTrue(plan.contains { $0.contains("INDEX sessions_dirty") }, "\(sql): \(plan)")
        }
    }

    /// The ledger's look-ups (`FileLedger`) are searches of an index, not scans of the table.
    func testTheFileLedgerIsLookedUpByIndex() throws {
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, samples]).status, 0)
        let sqlite = try SQLiteDatabase(path: db, mode: .readOnly)
        // `hasFile(ofSize:)`, the abandoned loads of `planFile` (sha256 IS NULL: its unique
        // index serves it) and `earlierReads`, each with the index that must serve it.
        for (sql, index) in [("SELECT count(*) FROM files WHERE size = 5", "files_by_size"),
                             ("SELECT id FROM files WHERE status = 'loading' AND sha256 IS NULL AND path = 'a' AND size = 5", ""),
                             ("SELECT id, size, sha256 FROM files WHERE path = 'a' AND size < 5 AND sha256 IS NOT NULL AND status IN ('complete', 'damaged')", "files_by_path")] {
            let q = try sqlite.prepare("EXPLAIN QUERY PLAN " + sql)
            var plan: [String] = []
            while try q.step() { plan.append(q.text(3) ?? "") }
            XCTAssertFalse(plan.contains { $0.hasPrefix("SCAN files") }, "\(sql) scans the ledger: \(plan)")
            XCTAssertTrue(plan.contains { $0.contains("USING") && $0.contains("INDEX \(index)") }, "\(sql): \(plan)")
        }
    }
}
