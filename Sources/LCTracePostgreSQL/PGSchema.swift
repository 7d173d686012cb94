import Foundation
import LCTraceModel
import LCTraceStore

/// The schema on PostgreSQL: created by the first writing command, under a lock, so several
/// ingesters starting on an empty database never race; versioned by the `meta` row
/// 'schema_version'; and checked, every time it is opened, to be exactly what lctrace made
/// (tables, columns, views, indexes, no triggers), as the SQLite backend checks its own.
enum PGSchema {
    package static let version: Int64 = 8
    /// Advisory lock keys (two int4): the schema's creation, the file ledger, a file row
    /// being loaded, a session being analyzed. 0x6c637472 is "lctr".
    static let lockClass: Int32 = 0x6c63_7472
    static let schemaLock = "pg_advisory_xact_lock(\(lockClass), 0)"
    static let ledgerLock = "pg_advisory_xact_lock(\(lockClass), 1)"
    /// The first key of the lock every ingest of a schema holds while it adds files
    /// (`PGIngestersLock`), the second being the schema's (a hash of its name). 0x6c637469 is "lcti".
    static let ingestersLockClass: Int32 = 0x6c63_7469
    /// The key (bigint) of the lock an ingest holds on a session it is loading
    /// (`PGIngestSink.loadLockStatement`), of `session` (SQL): negative, so it never meets an
    /// analysis lock (`PGAnalysisStore.sessionLock`), and of this schema only.
    static func loadLockKey(_ session: String) -> String {
        "(-(((hashtext(current_schema())::bigint & 2147483647) << 32) | (\(session))::bigint) - 1)"
    }
    /// Objects the schema makes, for refusing a database that holds some of them but not lctrace's.
    package static let tables = ["strings", "files", "file_sessions", "sessions", "events", "event_blocks", "rejects", "instances",
                                 "appearances", "containment", "findings", "meta"]

    /// The role `lctrace query` runs as (`SET LOCAL ROLE`): no login, SELECT on the tables and
    /// views of every lctrace schema and nothing else, so the server's own privilege checks,
    /// not a list of names, keep a user's query from the files, the other sessions and the
    /// data. One per server (roles are cluster-wide).
    package static let readerRole = "lctrace_reader"

    /// Why a database cannot be used (exit 74, one line).
    struct Refused: StorageFailure, CustomStringConvertible {
        package var description: String
        package var kind: StorageFailureKind { .unavailable }
        package var line: String { description }
        package var hint: String? { nil }
    }

    /// Makes sure `pg` holds lctrace's schema of this version in its current schema: creates it
    /// when it is missing and `create` is set (a writing command), refuses it otherwise.
    package static func prepare(_ pg: PGConnection, name: String, writing: Bool, create: Bool) throws {
        // The schema the server works in, the URL's search path, and whether lctrace's schema
        // is there, in one round trip.
        let place = try pg.query("SELECT current_schema(), current_setting('search_path'), " + metaExists)
        let current = place.text(0, 0)
        if let problem = searchPathProblem(place.text(0, 1) ?? "", current: current, name: name) {
            throw Refused(description: problem)
        }
        if place.text(0, 2) != "t" {
            guard writing && create else {
                throw Refused(description: "no lctrace database in \(name) (schema \(current ?? "?")): run `lctrace ingest --db \(Shell.word(name)) PATH...` first")
            }
            try pg.transaction {
                try pg.execute("SELECT " + schemaLock)
                // Another ingest may have made it while this one waited for the lock.
                guard try !hasMeta(pg) else { return }
                let present = try pg.query("""
                    SELECT string_agg(c.relname, ', ' ORDER BY c.relname) FROM pg_class c
                    JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = current_schema() AND c.relname = ANY($1::text[])
                    """, [arrayLiteral(tables)]).text(0, 0)
                if let present {
                    throw Refused(description: "\(name) (schema \(try currentSchema(pg))) has tables named like lctrace's (\(present)) but no lctrace schema: use an empty schema or database")
                }
                try pg.execute(ddl)
                try pg.query("INSERT INTO meta(key, value) VALUES ('schema_version', $1), ('schema_objects', $2)",
                             [String(version), try objects(pg).joined(separator: "\n")])
            }
        }
        // The version and the objects, read in one snapshot by a reading command: an ingest
        // that migrates meanwhile (version 4 to 5) is seen whole or not at all.
        func check() throws {
            let stored = try pg.query("SELECT value FROM meta WHERE key = 'schema_version'")
            let current = stored.rowCount > 0 ? Int64(stored.text(0, 0) ?? "") ?? 0 : 0
            if current > version {
                throw Refused(description: "\(name) has schema version \(current), newer than this lctrace (\(version)): upgrade lctrace")
            }
            if current == 2 || current == 3 {
                guard writing else {
                    throw Refused(description: "\(name) has schema version \(current), older than this lctrace (\(version)): migrate it with `lctrace analyze --db …` (its findings are rebuilt), then run this again")
                }
                if current == 2 { try migrateFrom2(pg, name: name) }
                try migrateFrom3(pg, name: name)
                try migrateFrom4(pg, name: name)
                try migrateFrom5(pg, name: name)
                try migrateFrom6(pg, name: name)
                try migrateFrom7(pg, name: name)
            } else if (4...7).contains(current) {
                // Versions 5, 6 and 8 add indexes, 7 stores the events in blocks behind a view of
                // the same columns: read as it is, migrated by a writing command.
                if writing {
                    if current == 4 { try migrateFrom4(pg, name: name) }
                    if current <= 5 { try migrateFrom5(pg, name: name) }
                    if current <= 6 { try migrateFrom6(pg, name: name) }
                    try migrateFrom7(pg, name: name)
                }
            } else if current < version {
                throw Refused(description: "\(name) has schema version \(current), which this lctrace cannot read (it writes version \(version))")
            }
            try verify(pg, name: name)
        }
        if writing {
            try check()
        } else {
            try pg.transaction(begin: PGConnection.beginSnapshot, check)
        }
        if writing { try grantReader(pg) }
    }

    /// What stands between the login and reading this schema as `readerRole`.
    struct ReaderState {
        var exists: Bool, member: Bool, reads: Bool

        /// Why the login cannot enter the role here, and the remedy; nil when it can.
        var problem: (why: String, remedy: String)? {
            let role = PGSchema.readerRole
            if !exists { return ("the server has no role \(role)", "a DBA runs CREATE ROLE \(role) NOLOGIN; the next ingest or analyze grants it this schema") }
            if !member { return ("the login is not a member of \(role)", "GRANT \(role) TO the login") }
            if !reads { return ("\(role) may not read every table of this schema", "lctrace analyze by the tables' owner grants it") }
            return nil
        }
    }

    static func readerState(_ pg: PGConnection) throws -> ReaderState {
        let r = try pg.query("""
            SELECT r.oid IS NOT NULL, coalesce(pg_has_role(current_user, r.oid, 'MEMBER'), false),
                   coalesce(has_schema_privilege(r.oid, current_schema(), 'USAGE') AND NOT EXISTS (
                       SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                       WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'v')
                         AND NOT has_table_privilege(r.oid, c.oid, 'SELECT')), false)
            FROM (SELECT 1) one LEFT JOIN pg_roles r ON r.rolname = $1
            """, [readerRole])
        return ReaderState(exists: r.text(0, 0) == "t", member: r.text(0, 1) == "t", reads: r.text(0, 2) == "t")
    }

    /// Makes `readerRole` able to read this schema, step by step, each only when missing:
    /// creates the role (a login with CREATEROLE may), grants it USAGE on the schema and
    /// SELECT on its tables and views (the owner may), and makes the login a member so its
    /// own queries enter it. A step the login may not take is left to the DBA
    /// (docs/postgresql.md); `query` says when it cannot enter the role.
    static func grantReader(_ pg: PGConnection) throws {
        // Refused (no privilege) or raced by another ingest doing the same: either way not ours to fail on.
        func attempt(_ sql: String) throws {
            do { try pg.execute(sql) } catch is PGError {}
        }
        var now = try readerState(pg)
        guard now.problem != nil else { return }
        if !now.exists {
            try attempt("CREATE ROLE \(readerRole) NOLOGIN")
            now = try readerState(pg)
            guard now.exists else { return }
        }
        if !now.reads {
            let schema = try pg.query("SELECT quote_ident(current_schema())").text(0, 0) ?? "public"
            try attempt("GRANT USAGE ON SCHEMA \(schema) TO \(readerRole); GRANT SELECT ON ALL TABLES IN SCHEMA \(schema) TO \(readerRole)")
        }
        if !now.member { try attempt("GRANT \(readerRole) TO CURRENT_USER") }
    }

    /// One step of a migration, under the schema lock and once: `body` runs when the stored
    /// version is still `from` (another ingest may have migrated meanwhile), on a schema that
    /// is lctrace's; the version and the list of objects are then stored.
    private static func migrationStep(_ pg: PGConnection, name: String, from: Int64, to: Int64, _ body: () throws -> Void) throws {
        try pg.transaction {
            try pg.execute("SELECT " + schemaLock)
            guard try pg.query("SELECT value FROM meta WHERE key = 'schema_version'").text(0, 0) == String(from) else { return }
            try verify(pg, name: name)
            try body()
            try pg.query("UPDATE meta SET value = $1 WHERE key = 'schema_version'", [String(to)])
            try pg.query("UPDATE meta SET value = $1 WHERE key = 'schema_objects'", [try objects(pg).joined(separator: "\n")])
        }
    }

    /// The DDL from the first `from` up to the first `to` after it.
    static func ddlPart(_ from: String, _ to: String) -> String {
        let start = ddl.range(of: from)!.lowerBound
        return String(ddl[start..<ddl[start...].range(of: to)!.lowerBound])
    }

    /// Version 3 (rules 1.2) records the sessions of each file (`file_sessions`; empty for the
    /// files loaded before, whose LC904 findings keep `?` for their app), and marks every
    /// session for analysis, whose rules changed.
    private static func migrateFrom2(_ pg: PGConnection, name: String) throws {
        try migrationStep(pg, name: name, from: 2, to: 3) {
            try pg.execute(ddlPart("CREATE TABLE file_sessions", "CREATE TABLE rejects"))
            try pg.execute("UPDATE sessions SET dirty = 1")
        }
    }

    /// Version 4 (issue 26) packs `events` and the model tables (`PGEventRow`, `ModelCodes`):
    /// the events are packed in place by one statement; the model tables are made anew,
    /// empty, and every session marked for analysis, which rebuilds them and the findings.
    /// Ids past 2^31 - 1, which the packed tables cannot hold, refuse the migration before
    /// anything changes.
    private static func migrateFrom3(_ pg: PGConnection, name: String) throws {
        try migrationStep(pg, name: name, from: 3, to: 4) {
            let largest = try pg.query("SELECT greatest((SELECT max(id) FROM strings), (SELECT max(id) FROM sessions))").int(0, 0) ?? 0
            guard largest <= Int64(Int32.max) else {
                throw Refused(description: "\(name) holds ids up to \(largest), past the 2^31 - 1 that schema version \(version) stores: this lctrace cannot migrate it")
            }
            try pg.execute("""
                DROP VIEW live_instances_v, instances_v, appearances_v, containment_v, events_v;
                DROP TABLE instances, appearances, containment;
                ALTER TABLE events RENAME TO events_v3;
                ALTER INDEX events_pkey RENAME TO events_v3_pkey;
                ALTER TABLE strings ALTER COLUMN id SET MAXVALUE \(Int32.max);
                ALTER TABLE sessions ALTER COLUMN id SET MAXVALUE \(Int32.max);
                """)
            try pg.execute(eventsTable4)
            try pg.execute("""
                INSERT INTO events (t, seq, session, vc, other, ev, flags, rest)
                SELECT \(PGEventRow.packedFromPlain) FROM events_v3 b ORDER BY b.session, b.seq;
                DROP TABLE events_v3;
                """)
            try pg.execute(ddlPart("CREATE TABLE instances (", "CREATE TABLE findings ("))
            try pg.execute(eventRows4)
            try pg.execute(ddlPart("CREATE VIEW instance_rows AS", "CREATE VIEW findings_v AS"))
            try pg.execute("UPDATE sessions SET dirty = 1")
        }
    }

    /// Version 5 (issue 26) indexes `findings_v.session_id`'s expression, which the reading
    /// commands select findings by: 47 → 9 ms for a few hundred sessions' findings on 10 M
    /// events. Nothing else changes.
    private static func migrateFrom4(_ pg: PGConnection, name: String) throws {
        try migrationStep(pg, name: name, from: 4, to: 5) {
            try pg.execute(ddlPart("CREATE INDEX findings_by_session_id", "\n"))
        }
    }

    /// Version 6 indexes the file ledger by path and size and by size, which every new file
    /// is looked up by: with 200,000 files stored, 120 new ones took 9.82 s to load instead of
    /// 3.64 (3.90 with them). Nothing else changes.
    private static func migrateFrom5(_ pg: PGConnection, name: String) throws {
        try migrationStep(pg, name: name, from: 5, to: 6) {
            try pg.execute(ddlPart("CREATE INDEX files_by_path", "\n"))
            try pg.execute(ddlPart("CREATE INDEX files_by_size", "\n"))
        }
    }

    /// Version 7 stores the events in blocks of up to `PGEventRow.blockSize` of one session
    /// (`event_blocks`; `events` becomes a view of the same columns, so `event_rows`, `events_v`
    /// and every saved query read on): 93 bytes an event became about 14 (42 the whole
    /// database, on the ingest benchmark's corpus; 14.4 on 10 M events), and the ingest's
    /// server CPU per event fell with the rows (docs/postgresql.md). The events are moved by one
    /// statement, under the schema lock; nothing else changes, the model and findings stay.
    private static func migrateFrom6(_ pg: PGConnection, name: String) throws {
        try migrationStep(pg, name: name, from: 6, to: 7) {
            try pg.execute("""
                DROP VIEW events_v, event_rows;
                ALTER TABLE events RENAME TO events_v6;
                ALTER INDEX events_pkey RENAME TO events_v6_pkey;
                """)
            try pg.execute(ddlPart("CREATE TABLE event_blocks (", "CREATE TABLE file_sessions"))
            try pg.execute(PGEventRow.insertBlocks(from: "events_v6 p") + ";\nDROP TABLE events_v6;")
            try pg.execute(ddlPart("CREATE VIEW event_block_rows AS", "CREATE VIEW instance_rows AS"))
            try pg.execute(ddlPart("CREATE VIEW events_v AS", "CREATE VIEW instances_v AS"))
        }
    }

    /// Version 8 indexes the sessions to analyze (`dirty = 1`), which every analysis looks
    /// for: in a schema of 400,100 sessions an ingest of one file took 0.22 s, 118 ms of it
    /// reading every session's row. Nothing else changes.
    private static func migrateFrom7(_ pg: PGConnection, name: String) throws {
        try migrationStep(pg, name: name, from: 7, to: 8) {
            try pg.execute(ddlPart("CREATE INDEX sessions_dirty", "\n"))
        }
    }

    /// `events` as versions 4 to 6 made it, a row an event: what the migration from version 3
    /// makes before the one to 7 puts the rows in blocks.
    static let eventsTable4 = """
        CREATE TABLE events (
            t       bigint NOT NULL,
            seq     bigint NOT NULL,
            session integer NOT NULL,
            vc      integer,
            other   integer,
            ev      smallint NOT NULL,
            flags   smallint NOT NULL DEFAULT 0,
            rest    jsonb,
            PRIMARY KEY (session, seq) WITH (fillfactor = 100)
        );
        """

    /// `event_rows` as versions 4 to 6 made it, over the table `events`.
    static let eventRows4 = """
        CREATE VIEW event_rows AS
        SELECT e.session, e.seq, e.t, coalesce(nullif(e.ev, 0), (e.rest ->> 'ev')::bigint) AS ev, e.vc,
               CASE WHEN e.flags & 128 <> 0 THEN e.other ELSE (e.rest ->> 'class')::bigint END AS cls,
               CASE WHEN e.flags & 128 = 0 THEN e.other END AS other,
               (e.flags & 16191) | ((e.flags & 64) << 10) AS flags,
               (e.rest ->> 'detail')::bigint AS detail, (e.rest ->> 'thread')::bigint AS thread,
               e.rest ->> 'wall' AS wall, e.rest ->> 'attrs' AS attrs
        FROM events e;
        """

    /// Whether lctrace's `meta` table is in the current schema, from the catalog as it is now
    /// (a cached name look-up may predate another ingest's commit).
    private static let metaExists = """
        EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = current_schema() AND c.relname = 'meta')
        """

    private static func hasMeta(_ pg: PGConnection) throws -> Bool {
        try pg.query("SELECT " + metaExists).text(0, 0) == "t"
    }

    /// Why the URL's schema is not the one PostgreSQL works in, or nil when it is. The server
    /// takes the first schema of the search path that exists and the login may use: a schema
    /// named first and missing (a typo, or not created yet) would put an ingest's rows in the
    /// next one (`public`), or leave none to create them in, and a report would read another
    /// schema's findings without a word. The default path (`"$user", public`) and one naming
    /// `pg_temp` first are left to the server.
    static func searchPathProblem(_ searchPath: String, current: String?, name: String) -> String? {
        guard let first = searchPathEntries(searchPath).first, first != "$user", !first.hasPrefix("pg_temp"),
              first != current else { return nil }
        let instead = current.map { "; PostgreSQL would use schema \($0) instead" } ?? ""
        let schema = identifier(first)
        return "schema \(first) (first in the search path of \(name)) does not exist, or this login may not use it\(instead): "
            + "create it (CREATE SCHEMA \(schema)) or let the login use it (GRANT USAGE, CREATE ON SCHEMA \(schema) TO …), "
            + "or name another with ?options=-csearch_path%3DNAME"
    }

    /// The schema names of a `search_path` setting as the server reads them
    /// (`SplitIdentifierString`): white space (space, tab, new line, carriage return, form
    /// feed, vertical tab) around names, unquoted ones folded to lower case (A–Z only, as in a
    /// UTF-8 database), `""` a quote inside quotes, each cut to 63 bytes (NAMEDATALEN − 1).
    static func searchPathEntries(_ setting: String) -> [String] {
        let space: Set<Unicode.Scalar> = [" ", "\t", "\n", "\r", "\u{0C}", "\u{0B}"]
        var scalars = Array(setting.unicodeScalars)[...]
        func skipSpace() { while let c = scalars.first, space.contains(c) { scalars.removeFirst() } }
        var entries: [String] = []
        skipSpace()
        guard !scalars.isEmpty else { return [] }
        while true {
            var name = String.UnicodeScalarView()
            if scalars.first == "\"" {
                scalars.removeFirst()
                while let c = scalars.popFirst() {
                    if c == "\"" {
                        guard scalars.first == "\"" else { break }
                        scalars.removeFirst()
                    }
                    name.append(c)
                }
            } else {
                while let c = scalars.first, c != ",", !space.contains(c) {
                    name.append(("A"..."Z").contains(c) ? Unicode.Scalar(c.value + 32)! : c)
                    scalars.removeFirst()
                }
            }
            entries.append(truncated(String(name)))
            skipSpace()
            guard scalars.first == "," else { return entries }
            scalars.removeFirst()
            skipSpace()
        }
    }

    /// A name as the server keeps it: at most 63 bytes, cut at a character's boundary.
    static func truncated(_ name: String) -> String {
        var bytes = 0
        var out = String.UnicodeScalarView()
        for c in name.unicodeScalars {
            bytes += String(c).utf8.count
            guard bytes <= 63 else { break }
            out.append(c)
        }
        return String(out)
    }

    /// `name` as an SQL identifier, always quoted: a reserved word (`user`) or a name with
    /// capitals is then the name, and a plain one is quoted harmlessly.
    static func identifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    static func currentSchema(_ pg: PGConnection) throws -> String {
        try pg.query("SELECT current_schema()").text(0, 0) ?? "?"
    }

    /// Every object of the current schema, one line each: tables and views with their columns
    /// and types, indexes with their definitions, triggers. What the schema was made with is
    /// stored beside it ('schema_objects'), so a change is named, not just detected.
    package static func objects(_ pg: PGConnection) throws -> [String] {
        // From pg_class itself rather than the pg_indexes view and a join of pg_namespace per
        // part: the same lines, planned in a fresh backend for 4.9 ms of the server's CPU
        // instead of 7.3 (every command opening the database pays it).
        let rows = try pg.query("""
            SELECT CASE WHEN c.relkind IN ('i', 'I') THEN 'index ' || c.relname || ' ' || pg_get_indexdef(c.oid)
                        ELSE 'relation ' || c.relname || ' ' || c.relkind::text || ' ' ||
                             coalesce((SELECT string_agg(a.attname || ':' || format_type(a.atttypid, a.atttypmod), ',' ORDER BY a.attnum)
                                       FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') END
            FROM pg_class c
            WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
              AND c.relkind IN ('r', 'v', 'm', 'p', 'f', 'i', 'I')
            UNION ALL
            SELECT 'trigger ' || t.tgname || ' on ' || c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
            WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND NOT t.tgisinternal
            ORDER BY 1
            """)
        return (0..<rows.rowCount).map { rows.text($0, 0) ?? "" }
    }

    /// Refuses a schema that is not the one lctrace made (a view in place of a table, a
    /// trigger, a column or index of someone else's), naming what differs.
    static func verify(_ pg: PGConnection, name: String) throws {
        let stored = try pg.query("SELECT value FROM meta WHERE key = 'schema_objects'")
        let expected = Set((stored.rowCount > 0 ? stored.text(0, 0) ?? "" : "").split(separator: "\n").map(String.init))
        let found = Set(try objects(pg))
        guard expected != found else { return }
        var differences = expected.subtracting(found).sorted().map { "missing or changed: \(summary($0))" }
        differences += found.subtracting(expected).sorted().map { "not lctrace's: \(summary($0))" }
        let shown = differences.prefix(5).joined(separator: "; ") + (differences.count > 5 ? "; …" : "")
        throw Refused(description: "\(name): the schema is not lctrace's (\(shown)); lctrace uses only databases it made, unchanged")
    }

    private static func summary(_ line: String) -> String {
        let words = line.split(separator: " ", maxSplits: 2)
        return words.prefix(2).joined(separator: " ")
    }

    /// A bigint[] (or integer[]) literal for a parameter: `{1,2}`.
    static func arrayLiteral(_ values: some Sequence<Int64>) -> String {
        "{" + values.map(String.init).joined(separator: ",") + "}"
    }

    /// A bigint[] or text[] literal with NULL elements (`nil`); the others as `arrayLiteral`'s.
    static func arrayLiteral(_ values: [String?]) -> String {
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (i, value) in values.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            if let value { appendQuoted(value, to: &out) } else { out += "NULL".utf8 }
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// A text[] literal for a parameter: `{"a","b"}`, each element quoted and escaped. Written
    /// byte by byte: an ingest sends every new text in one (controller ids by the ten thousand),
    /// and Foundation's `replacingOccurrences` cost 1.5 % of its CPU.
    static func arrayLiteral(_ values: [String]) -> String {
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(values.reduce(2) { $0 + $1.utf8.count + 3 })
        for (i, value) in values.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            appendQuoted(value, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// An array element quoted, its `\` and `"` escaped.
    private static func appendQuoted(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { out.append(UInt8(ascii: "\\")) }
            out.append(byte)
        }
        out.append(UInt8(ascii: "\""))
    }
}
