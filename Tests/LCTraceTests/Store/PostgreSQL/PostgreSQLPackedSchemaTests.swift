import XCTest
@testable import LCTraceStore
@testable import LCTracePostgreSQL
@testable import LCTrace

/// Schema 4 packs PostgreSQL's events and model tables (issue 26): the documented views keep
/// their columns, types and values, their look-ups still reach the primary keys, and a
/// database of version 3 is migrated in place to the same content.
final class PostgreSQLPackedSchemaTests: PostgreSQLTestCase {
    private var samples: String { TestSupport.root.appendingPathComponent("SampleTraces").path }

    /// The views' columns and types as version 3 gave them (`information_schema.columns`),
    /// the query surface QA engineers' saved queries rely on.
    static let viewColumns = [
        "appearances_v": "sid:text,session_id:bigint,vc:text,since:bigint,class:text,will_seq:bigint,will_t:bigint,is_t:bigint,did_t:bigint,will_disappear_t:bigint,did_disappear_t:bigint,will_to_is_ms:double precision,is_to_did_ms:double precision,will_to_did_ms:double precision,visible_ms:double precision,animated:integer,interactive:integer,backgrounded:integer,outcome:text,ending:text",
        "containment_v": "sid:text,session_id:bigint,child:text,child_since:bigint,child_class:text,parent:text,parent_since:bigint,parent_class:text,add_seq:bigint,add_t:bigint,will_move_seq:bigint,did_move_seq:bigint,will_remove_seq:bigint,remove_seq:bigint,remove_t:bigint,did_remove_seq:bigint",
        "events_v": "sid:text,session_id:bigint,seq:bigint,t:bigint,ms:double precision,event:text,vc:text,class:text,parent:text,host:text,presented:text,child:text,animated:integer,is_moving_to_parent:integer,is_being_presented:integer,is_moving_from_parent:integer,is_being_dismissed:integer,interactive:integer,detail:text,thread:text,wall:text,attrs:text",
        "findings_v": "id:bigint,rule:text,name:text,severity:text,session:text,vc:text,since:bigint,class:text,t:bigint,message:text,evidence:text,confidence:text,file:text,detail:text,session_id:bigint,identity:text,identity_key:text,app:text,build:text,device:text",
        "identities_v": "identity:text,identity_key:text,rule:text,name:text,severity:text,class:text,occurrences:bigint,sessions:bigint",
        "instances_v": "sid:text,session_id:bigint,vc:text,since:bigint,class:text,init_t:bigint,end_seq:bigint,end_t:bigint,end_how:text,parent:text,presenter:text,release_seq:bigint,release_t:bigint,release_how:text,release_to_end_ms:double precision,appearances:bigint,final_state:text",
        "live_instances_v": "sid:text,session_id:bigint,vc:text,since:bigint,class:text,init_t:bigint,end_seq:bigint,end_t:bigint,end_how:text,parent:text,presenter:text,release_seq:bigint,release_t:bigint,release_how:text,release_to_end_ms:double precision,appearances:bigint,final_state:text",
    ]

    /// The views' columns: names and types as version 3's, names as docs/schema.md lists them.
    func testTheViewsKeepTheirColumnsAndTypes() throws {
        let url = try freshDatabase()
        _ = try Storage.openForWriting(url)
        let pg = try PGConnection(url: url)
        let rows = try pg.query("""
            SELECT table_name, string_agg(column_name || ':' || data_type, ',' ORDER BY ordinal_position)
            FROM information_schema.columns WHERE table_schema = current_schema() AND table_name LIKE '%\\_v' GROUP BY 1
            """)
        var found: [String: String] = [:]
        for r in 0..<rows.rowCount { found[rows.text(r, 0) ?? ""] = rows.text(r, 1) ?? "" }
        XCTAssertEqual(found, Self.viewColumns)
        let doc = try String(contentsOf: TestSupport.root.appendingPathComponent("docs/schema.md"), encoding: .utf8)
        for (view, columns) in Self.viewColumns {
            guard let start = doc.range(of: "\n### \(view)\n") else { XCTFail("docs/schema.md lacks \(view)"); continue }
            let section = doc[start.upperBound...].prefix { $0 != "#" }
            let documented = section.split(separator: "\n").filter { $0.hasPrefix("| `") }
                .map { $0.dropFirst(3).prefix { $0 != "`" } }.map(String.init)
            XCTAssertEqual(documented, columns.split(separator: ",").map { String($0.prefix { $0 != ":" }) }, view)
        }
    }

    /// The look-ups by session and seq that the views, reports and analysis make reach the
    /// primary keys (with sequential scans off: a plan that still scans cannot use an index),
    /// with bigint parameters too (the views' and the shared queries' types).
    func testLookUpsReachThePrimaryKeys() throws {
        let url = try freshDatabase()
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", url, samples]).status, 0)
        let pg = try PGConnection(url: url)
        try pg.execute("SET enable_seqscan = off")
        let session = try pg.query("SELECT min(id) FROM sessions").int(0, 0) ?? 0
        let sid = try pg.query("SELECT sid FROM sessions WHERE id = $1", [String(session)]).text(0, 0) ?? ""
        try pg.execute("PREPARE by_key(bigint, bigint) AS SELECT t FROM event_rows WHERE session = $1 AND seq = $2")
        // The look-up of one event gives what the view gives, without unnesting the session.
        let read = PGReadConnection(pg: pg, snapshot: false)
        for column in [EventColumn.t, .attrs] {
            let blocks = try pg.query("SELECT " + read.eventValue(column, session: "p.session", seq: "p.seq") + " FROM event_rows p ORDER BY p.session, p.seq")
            let view = try pg.query("SELECT p.\(column.rawValue) FROM event_rows p ORDER BY p.session, p.seq")
            XCTAssertEqual((0..<blocks.rowCount).map { blocks.text($0, 0) }, (0..<view.rowCount).map { view.text($0, 0) }, "\(column)")
            XCTAssertGreaterThan((0..<blocks.rowCount).compactMap { blocks.text($0, 0) }.count, 0, "\(column) found")
        }
        // A range of a session's events, and the first at or after a seq, read from the blocks
        // that meet it give what the view gives.
        for (from, through) in [("0", "3"), ("2", nil), (nil, "4"), ("3", "3"), ("100000", nil)] as [(String?, String?)] {
            let blocks = try pg.query("SELECT string_agg(r.seq || ':' || r.t || ':' || r.ev, ',' ORDER BY r.seq) FROM "
                                      + read.events(session: "\(session)", from: from, through: through, firstOnly: false) + " AS r")
            let view = try pg.query("SELECT string_agg(seq || ':' || t || ':' || ev, ',' ORDER BY seq) FROM event_rows WHERE session = \(session)"
                                    + (from.map { " AND seq >= \($0)" } ?? "") + (through.map { " AND seq <= \($0)" } ?? ""))
            XCTAssertEqual(blocks.text(0, 0), view.text(0, 0), "\(from ?? "-")…\(through ?? "-")")
        }
        let firsts = try pg.query("""
            SELECT count(*) FILTER (WHERE a IS DISTINCT FROM b OR c IS DISTINCT FROM c2), count(*) FILTER (WHERE a IS NOT NULL) FROM (
                SELECT (SELECT min(r.seq) FROM \(read.events(session: "e.session", from: "e.seq", through: nil, firstOnly: true)) AS r) AS a,
                       (SELECT r.seq || ':' || r.t FROM \(read.seqTimes(session: "e.session", atOrAfter: "e.seq")) AS r ORDER BY r.seq LIMIT 1) AS c,
                       (SELECT x.seq || ':' || x.t FROM event_rows x WHERE x.session = e.session AND x.seq >= e.seq ORDER BY x.seq LIMIT 1) AS c2,
                       (SELECT min(x.seq) FROM event_rows x WHERE x.session = e.session AND x.seq >= e.seq) AS b
                FROM (SELECT session, seq FROM event_rows UNION ALL SELECT session, seq + 1 FROM event_rows) e) d
            """)
        XCTAssertEqual(firsts.int(0, 0), 0, "the first event at or after each seq, and after each")
        XCTAssertGreaterThan(firsts.int(0, 1) ?? 0, 3000)
        for (sql, index) in [("EXECUTE by_key(\(session), 5)", "event_blocks_pkey"),
                             ("SELECT * FROM " + read.events(session: "\(session)", from: "5", through: nil, firstOnly: true) + " AS r", "event_blocks_pkey"),
                             ("SELECT * FROM event_rows WHERE session = \(session) ORDER BY seq", "event_blocks_pkey"),
                             ("SELECT * FROM events_v WHERE session_id = \(session) AND seq = 5", "event_blocks_pkey"),
                             ("SELECT * FROM events_v WHERE sid = '\(sid)' ORDER BY seq", "event_blocks_pkey"),
                             ("SELECT * FROM events WHERE session = \(session)", "event_blocks_pkey"),
                             // Schema 7: one event by (session, seq) through the blocks' bounds.
                             ("SELECT " + PGReadConnection(pg: pg, snapshot: false).eventValue(.t, session: "\(session)", seq: "5"), "event_blocks_pkey"),
                             ("SELECT * FROM instances_v WHERE session_id = \(session)", "instances_pkey"),
                             ("SELECT * FROM appearances_v WHERE sid = '\(sid)'", "appearances_pkey"),
                             ("SELECT * FROM containment_v WHERE session_id = \(session)", "containment_pkey"),
                             // Schema 5: a report reads findings a few hundred sessions at a time.
                             ("SELECT * FROM findings_v WHERE session_id IN (\(session), \(session + 1))", "findings_by_session_id")] {
            let plan = try pg.query("EXPLAIN " + sql)
            let text = (0..<plan.rowCount).compactMap { plan.text($0, 0) }.joined(separator: "\n")
            XCTAssertTrue(text.contains(index), "\(sql) does not use \(index):\n\(text)")
        }
    }

    /// SQLite's tricky lines (`PackedRowsTests`: every packing rule, escapes, a class beside
    /// another controller, a null other key, every boolean) come out of PostgreSQL's views as out
    /// of SQLite's, with event-name ids past a smallint (kept in `rest`). Loaded again in a
    /// file with one more line, they are all duplicates: the merge path compares the stored
    /// rows, decoded by `event_rows`, with the batch's.
    func testEveryPackingRuleComesBackAsOnSQLite() throws {
        // PostgreSQL's text holds no NUL: that line is refused there (a reject SQLite has not).
        let lines = PackedRowsTests.trickyLines().filter { !$0.contains("\\u0000") }
        XCTAssertEqual(lines.count, PackedRowsTests.trickyLines().count - 1)
        let file = dir + "/tricky.jsonl", again = dir + "/tricky-again.jsonl", reference = dir + "/tricky.db"
        TestSupport.writeLines(lines, to: file)
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", reference, file]).status, 0)
        let url = try freshDatabase()
        _ = try Storage.openForWriting(url)
        let pg = try PGConnection(url: url)
        try pg.execute("ALTER TABLE strings ALTER COLUMN id RESTART WITH 40000")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", url, file]).status, 0)
        XCTAssertEqual(try pg.query("SELECT count(*) FROM events WHERE ev <> 0").int(0, 0), 0, "every name id is in rest")
        XCTAssertEqual(try TestSupport.logicalDump(location: url), try TestSupport.logicalDump(reference))

        var b = TraceBuilder(sid: "B", record: false)
        b.seq = 1000
        b.add(99, "mark", #""name":"one more""#)
        TestSupport.writeLines(lines + b.lines, to: again)
        let r = TestSupport.run(["ingest", "-f", "json", "--db", url, again])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains(#""events":{"new":1,"duplicate":\#(lines.count),"conflicting":0}"#), r.out)
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", reference, again]).status, 0)
        XCTAssertEqual(try TestSupport.logicalDump(location: url), try TestSupport.logicalDump(reference))
    }

    /// A database of version 3 (its DDL kept in Fixtures, filled with the plain rows of a
    /// version 4 ingest of SampleTraces) is refused by a reading command, saying how to
    /// migrate, and `analyze` migrates it in place to exactly the content of an ingest into
    /// version 4: events packed, model and findings rebuilt.
    func testAnalyzeMigratesAVersion3DatabaseInPlace() throws {
        try migrates(from: 3)
    }

    /// Version 2 (no `file_sessions`) goes through version 3 to 4 in the same run: the same
    /// content (its LC904 findings keep `?` for their files' app, as version 3 documents).
    func testAnalyzeMigratesAVersion2DatabaseInPlace() throws {
        try migrates(from: 2)
    }

    /// Versions 5 and 6 only add indexes (`findings_by_session_id`; the file ledger's
    /// `files_by_path` and `files_by_size`): a version 4 or 5 database is read as it is (the
    /// same report), and the next writing command adds what it lacks under the schema lock,
    /// leaving the objects of a new database.
    func testAVersion4DatabaseIsReadAsItIsAndGainsTheIndexAtTheNextWrite() throws {
        try readAsItIsThenMigrated(version: 4, lacking: ["findings_by_session_id", "files_by_path", "files_by_size", "sessions_dirty"])
    }

    func testAVersion5DatabaseIsReadAsItIsAndGainsTheLedgersIndexesAtTheNextWrite() throws {
        try readAsItIsThenMigrated(version: 5, lacking: ["files_by_path", "files_by_size", "sessions_dirty"])
    }

    /// Version 7 stores the events in blocks (`event_blocks`, `events` a view): a version 6
    /// database, a row an event, is read as it is and its events are put in blocks by the next
    /// writing command, their content unchanged.
    func testAVersion6DatabaseIsReadAsItIsAndItsEventsGoInBlocksAtTheNextWrite() throws {
        try readAsItIsThenMigrated(version: 6, lacking: ["sessions_dirty"])
    }

    /// Version 8 indexes the sessions to analyze (`sessions_dirty`): a version 7 database, its
    /// events already in blocks, is read as it is and gains the index at the next write.
    func testAVersion7DatabaseIsReadAsItIsAndGainsTheDirtySessionsIndexAtTheNextWrite() throws {
        try readAsItIsThenMigrated(version: 7, lacking: ["sessions_dirty"])
    }

    /// Turns the events of a database of this version back into the table of versions 4 to 6,
    /// a row an event, with the views over it as those versions made them.
    static func storeEventsAsRows(_ pg: PGConnection) throws {
        try pg.execute("""
            CREATE TEMP TABLE event_copy AS SELECT * FROM events;
            DROP VIEW events_v, event_rows, event_block_rows, events;
            DROP TABLE event_blocks;
            \(PGSchema.eventsTable4)
            INSERT INTO events SELECT * FROM event_copy ORDER BY session, seq;
            DROP TABLE event_copy;
            \(PGSchema.eventRows4)
            """)
        try pg.execute(PGSchema.ddlPart("CREATE VIEW events_v AS", "CREATE VIEW instances_v AS"))
    }

    private func readAsItIsThenMigrated(version stored: Int, lacking indexes: [String]) throws {
        let reference = try freshDatabase("reference")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", reference, samples]).status, 0)
        let old = try freshDatabase("version\(stored)")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", old, samples]).status, 0)
        let pg = try PGConnection(url: old)
        for index in indexes { try pg.execute("DROP INDEX \(index)") }
        if stored < 7 { try Self.storeEventsAsRows(pg) }
        try pg.query("UPDATE meta SET value = $1 WHERE key = 'schema_version'", [String(stored)])
        try pg.query("UPDATE meta SET value = $1 WHERE key = 'schema_objects'", [try PGSchema.objects(pg).joined(separator: "\n")])
        let rowsBefore = try TestSupport.logicalDump(location: old)
        let version = { try pg.query("SELECT value FROM meta WHERE key = 'schema_version'").text(0, 0) }
        let present = {
            try pg.query("SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = ANY($1::text[])",
                         [PGSchema.arrayLiteral(indexes)]).int(0, 0) ?? -1
        }

        let read = TestSupport.run(["report", "--db", old, "--format", "json", "--fail-on", "never"])
        XCTAssertEqual(read.status, 0, read.err)
        XCTAssertEqual(read.out, TestSupport.run(["report", "--db", reference, "--format", "json", "--fail-on", "never"]).out)
        XCTAssertEqual(try version(), String(stored), "a reading command changes nothing")
        XCTAssertEqual(try present(), 0)

        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", old, samples]).status, 0)
        XCTAssertEqual(try version(), String(PGSchema.version))
        XCTAssertEqual(try present(), Int64(indexes.count))
        XCTAssertEqual(try objects(old), try objects(reference))
        XCTAssertEqual(try pg.query("SELECT count(*) FROM pg_class WHERE relname = 'event_blocks' AND relnamespace = current_schema()::regnamespace").int(0, 0), 1)
        XCTAssertEqual(try TestSupport.logicalDump(location: old), rowsBefore, "the events in blocks are the rows they were")
        XCTAssertEqual(TestSupport.run(["report", "--db", old, "--fail-on", "never"]).status, 0, "the migrated schema is accepted")
    }

    /// Every new file is looked up in the ledger by path and size, and by size: the planner
    /// serves those look-ups from the indexes (a team's ledger holds a file per device and night).
    func testTheFileLedgerIsLookedUpByIndex() throws {
        let url = try freshDatabase("ledger")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", url, samples]).status, 0)
        let pg = try PGConnection(url: url)
        try pg.execute("""
            INSERT INTO files(path, size, sha256, status, ingested_at)
            SELECT '/campaign/device-' || i || '.jsonl.gz', 100000 + i, lpad(i::text, 64, '0'), 'complete', 'x'
            FROM generate_series(1, 20000) i;
            ANALYZE files
            """)
        func plan(_ sql: String) throws -> String {
            let rows = try pg.query("EXPLAIN " + sql)
            return (0..<rows.rowCount).compactMap { rows.text($0, 0) }.joined(separator: "\n")
        }
        // The look-ups of `PGIngestSink.planFile`, `dropAbandonedLoads`, `earlierReads` and `hasFile(ofSize:)`.
        for (sql, index) in [("SELECT count(*) FROM files WHERE size = 100005", "files_by_size"),
                             ("SELECT id FROM files WHERE status = 'loading' AND sha256 IS NULL AND path = '/campaign/device-5.jsonl.gz' AND size = 100005 ORDER BY id", ""),
                             ("SELECT id, size, sha256 FROM files WHERE path = '/campaign/device-5.jsonl.gz' AND size < 200000 AND sha256 IS NOT NULL AND status IN ('complete', 'damaged') ORDER BY id", "files_by_path")] {
            let shown = try plan(sql)
            XCTAssertFalse(shown.contains("Seq Scan"), "\(sql) scans the ledger:\n\(shown)")
            XCTAssertTrue(shown.contains("Index") && (index.isEmpty || shown.contains(index)), shown)
        }
    }

    /// An analysis finds the dirty sessions through their index, under the generic plan the
    /// ingest's connection uses (`plan_cache_mode = force_generic_plan`), not by a pass over
    /// every session of every campaign.
    func testTheSessionsToAnalyseAreFoundByIndex() throws {
        let url = try freshDatabase("dirty")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", url, samples]).status, 0)
        let pg = try PGConnection(url: url)
        try pg.execute("""
            INSERT INTO sessions(sid, dirty) SELECT 'campaign-' || i, 0 FROM generate_series(1, 20000) i;
            ANALYZE sessions;
            SET plan_cache_mode = force_generic_plan
            """)
        for (name, sql, types) in [("c", SessionsToAnalyse.countSQL(all: false), ""), ("p", SessionsToAnalyse.pageSQL(all: false), "(bigint, bigint)")] {
            try pg.execute("PREPARE \(name)\(types) AS \(sql)")
            let rows = try pg.query("EXPLAIN EXECUTE \(name)\(types.isEmpty ? "" : "(0, 100)")")
            let shown = (0..<rows.rowCount).compactMap { rows.text($0, 0) }.joined(separator: "\n")
            XCTAssertFalse(shown.contains("Seq Scan"), "\(sql) scans the sessions:\n\(shown)")
            XCTAssertTrue(shown.contains("sessions_dirty"), shown)
        }
    }

    /// The schema's objects as `PGSchema.objects` lists them, without the schema's own name
    /// (each test database is a schema of its own).
    private func objects(_ url: String) throws -> [String] {
        let pg = try PGConnection(url: url)
        let schema = try PGSchema.currentSchema(pg)
        return try PGSchema.objects(pg).map { $0.replacingOccurrences(of: schema + ".", with: "") }.sorted()
    }

    private func migrates(from version: Int) throws {
        let reference = try freshDatabase("reference")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", reference, samples]).status, 0)
        let from = schemas.last!
        let old = try freshDatabase("version\(version)")
        let pg = try PGConnection(url: old)
        var ddl = try String(contentsOf: TestSupport.root.appendingPathComponent("Tests/LCTraceTests/Fixtures/schema-v3.postgresql.sql"), encoding: .utf8)
        if version == 2 {
            ddl.removeSubrange(ddl.range(of: "CREATE TABLE file_sessions")!.lowerBound..<ddl.range(of: "CREATE TABLE rejects")!.lowerBound)
        }
        try pg.execute(ddl)
        try pg.execute("""
            INSERT INTO strings SELECT * FROM \(from).strings;
            INSERT INTO files SELECT * FROM \(from).files;
            INSERT INTO sessions SELECT * FROM \(from).sessions;
            \(version == 2 ? "" : "INSERT INTO file_sessions SELECT * FROM \(from).file_sessions;")
            INSERT INTO rejects SELECT * FROM \(from).rejects;
            INSERT INTO events SELECT session, seq, t, ev, vc, cls, other, flags, detail, thread, wall, attrs FROM \(from).event_rows;
            INSERT INTO instances SELECT * FROM \(from).instance_rows;
            INSERT INTO appearances SELECT * FROM \(from).appearance_rows;
            INSERT INTO containment SELECT * FROM \(from).containment_rows;
            INSERT INTO findings SELECT * FROM \(from).findings;
            INSERT INTO meta SELECT * FROM \(from).meta WHERE key NOT LIKE 'schema%';
            """)
        try pg.query("INSERT INTO meta(key, value) VALUES ('schema_version', $1), ('schema_objects', $2)",
                     [String(version), try PGSchema.objects(pg).joined(separator: "\n")])
        XCTAssertEqual(try pg.query("SELECT count(*) FROM events").int(0, 0), 3579, "the copy is whole")

        let refused = TestSupport.run(["report", "--db", old])
        XCTAssertEqual(refused.status, 74, refused.err)
        XCTAssertTrue(refused.err.contains("schema version \(version)") && refused.err.contains("lctrace analyze --db"), refused.err)

        let migrated = TestSupport.run(["analyze", "--db", old])
        XCTAssertEqual(migrated.status, 0, migrated.err)
        XCTAssertEqual(try pg.query("SELECT value FROM meta WHERE key = 'schema_version'").text(0, 0), String(PGSchema.version))
        XCTAssertEqual(try pg.query("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'events'::regclass AND attname = 'rest'").text(0, 0), "jsonb")
        XCTAssertEqual(try objects(old), try objects(reference), "the objects of a new database")
        XCTAssertEqual(try TestSupport.logicalDump(location: old), try TestSupport.logicalDump(location: reference))
        if version == 3 {
            for format in ["json", "csv"] {
                let x = TestSupport.run(["report", "--db", reference, "--format", format, "--fail-on", "never"])
                let y = TestSupport.run(["report", "--db", old, "--format", format, "--fail-on", "never"])
                XCTAssertEqual(x.out, y.out, "report --format \(format)")
            }
        }
        // The migrated schema is the one a new database gets: the next commands accept it.
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", old, samples]).status, 0)
    }
}
