import LCTraceFormat
import LCTraceModel

/// Migrations of older databases, run by the writing commands (`Schema.openForWriting`)
/// inside their first write transaction; read-only commands refuse an older database and
/// say how to migrate it.
extension SQLiteSchema {
    /// Brings a database of schema version `from` to `version` in place, one version at a time.
    static func migrate(_ db: SQLiteDatabase, from: Int64, path: String) throws {
        guard (1...5).contains(from) else {
            throw VersionError(description: "\(path) has schema version \(from) and no migration to \(version) exists: re-ingest into a new database")
        }
        if from == 1 { try migrateFrom1(db) }
        if from <= 2 { try migrateFrom2(db) }
        if from <= 3 { try migrateFrom3(db) }
        if from <= 4 { try migrateFrom4(db) }
        try migrateFrom5(db)
        try db.execute("PRAGMA user_version = \(version)")
    }

    /// Version 2 gives every finding its identity, which only the rules can compute from the
    /// model: the findings table is made anew and every session marked for analysis, so the
    /// command's analysis (or the next one) rebuilds model and findings.
    private static func migrateFrom1(_ db: SQLiteDatabase) throws {
        try db.execute("DROP VIEW IF EXISTS findings_v")
        try db.execute("DROP VIEW IF EXISTS identities_v")
        try db.execute("DROP TABLE findings")
        for statement in statements(creating: ["findings", "findings_by_session", "findings_by_identity"]) {
            try db.execute(statement)
        }
        try db.execute("UPDATE sessions SET dirty = 1")
    }

    /// The events of every other-controller event (`EventKind.otherKey`): on the others,
    /// version 3 keeps the class in `events.other`.
    private static let otherEvents = EventKind.allCases.filter { $0.otherKey != nil }.map { "'\($0.rawValue)'" }.joined(separator: ", ")

    /// Version 3 packs the events and the model tables (`PackedEvent`, `ModelCodes`). The
    /// events are copied into the packed layout (their rarer values inline: a later ingest
    /// interns the objects that repeat); the model tables are made anew, empty, and every
    /// session is marked for analysis, which rebuilds them (and the findings).
    private static func migrateFrom2(_ db: SQLiteDatabase) throws {
        for view in ["events_v", "instances_v", "live_instances_v", "appearances_v", "containment_v", "findings_v", "identities_v"] {
            try db.execute("DROP VIEW IF EXISTS \(view)")
        }
        try db.execute("ALTER TABLE sessions RENAME TO old_sessions")
        try db.execute("ALTER TABLE events RENAME TO old_events")
        for table in ["instances", "appearances", "containment"] { try db.execute("DROP TABLE \(table)") }
        for statement in statements(creating: ["sessions", "events", "instances", "appearances", "containment"]) {
            try db.execute(statement)
        }
        // A session's controller ids are stored relative to the lowest of them.
        try db.execute("""
            INSERT INTO sessions(id, sid, app, app_version, build, os, os_version, sdk, device, recorder, wall, record_seq,
                                 record_conflicts, end_reason, events, first_seq, last_seq, first_t, last_t, lost_events,
                                 dirty, vc_base)
            SELECT id, sid, app, app_version, build, os, os_version, sdk, device, recorder, wall, record_seq,
                   record_conflicts, end_reason, events, first_seq, last_seq, first_t, last_t, lost_events, 1,
                   coalesce((SELECT min(vc) FROM old_events e WHERE e.session = s.id), 1) - 1
            FROM old_sessions s ORDER BY id
            """)
        // A wall time holding a NUL is kept in `strings` (JSON text would cut it there).
        try db.execute("""
            INSERT INTO strings(text) SELECT DISTINCT wall FROM old_events WHERE instr(CAST(wall AS BLOB), x'00') > 0
            ON CONFLICT(text) DO NOTHING
            """)
        var bits: [String] = []
        for k in 0..<6 {
            bits.append("(((e.flags >> \(8 + k)) & 1) << \(2 * k + 1))")
            bits.append("(((e.flags >> \(k)) & 1) << \(2 * k + 2))")
        }
        try db.execute("""
            INSERT INTO events(session, seq, t, ev, vc, other, flags, rest)
            SELECT e.session, e.seq, e.t, e.ev, e.vc - s.vc_base,
                   CASE WHEN e.class_in_other THEN e.cls ELSE e.other - s.vc_base END,
                   CASE WHEN e.class_in_other OR (e.other IS NULL AND e.flags & 65536) THEN 1 ELSE 0 END
                     | \(bits.joined(separator: " | ")),
                   CASE WHEN (e.cls IS NOT NULL AND NOT e.class_in_other) OR e.detail IS NOT NULL OR e.thread IS NOT NULL
                             OR e.wall IS NOT NULL OR e.attrs IS NOT NULL
                        THEN '{' || substr(CASE WHEN e.cls IS NOT NULL AND NOT e.class_in_other THEN ',"class":' || e.cls ELSE '' END
                                           || coalesce(',"detail":' || e.detail, '') || coalesce(',"thread":' || e.thread, '')
                                           || CASE WHEN instr(CAST(e.wall AS BLOB), x'00') > 0
                                                   THEN ',"wall_id":' || (SELECT id FROM strings WHERE text = e.wall)
                                                   ELSE coalesce(',"wall":' || json_quote(e.wall), '') END
                                           || coalesce(',"attrs":' || json_quote(e.attrs), ''), 2) || '}' END
            FROM (SELECT o.*, (o.cls IS NOT NULL AND o.other IS NULL AND n.text NOT IN (\(otherEvents))) AS class_in_other
                  FROM old_events o JOIN strings n ON n.id = o.ev) e
            JOIN sessions s ON s.id = e.session
            ORDER BY e.session, e.seq
            """)
        try db.execute("DROP TABLE old_events")
        try db.execute("DROP TABLE old_sessions")
        // Made by the migration to version 4, which follows.
    }

    /// The views in DDL order: those that read packed rows, then the documented ones.
    static let views = ["event_rows", "instance_rows", "appearance_rows", "containment_rows", "events_v", "instances_v",
                        "live_instances_v", "appearances_v", "containment_v", "findings_v", "identities_v"]

    /// Version 4 (rules 1.2) records the sessions of each file (`file_sessions`: empty for
    /// the files loaded before, whose LC904 findings keep `?` for their app) and decodes two
    /// new codes, a release by a window root's replacement (`root`) and an appearance closed
    /// after lost events (`lost`): the views are made anew, and every session is marked for
    /// analysis, whose rules changed.
    private static func migrateFrom3(_ db: SQLiteDatabase) throws {
        for statement in statements(creating: ["file_sessions"]) { try db.execute(statement) }
        for view in views.reversed() { try db.execute("DROP VIEW IF EXISTS \(view)") }
        for statement in statements(creating: Set(views)) { try db.execute(statement) }
        try db.execute("UPDATE sessions SET dirty = 1")
    }

    /// Version 5 indexes the file ledger by path and size and by size, which every new file
    /// is looked up by: with 200,000 files stored, 120 new ones took 5.51 s to load instead of
    /// 0.97 (1.31 with them). Nothing else changes (a version 4 database is read as it is).
    private static func migrateFrom4(_ db: SQLiteDatabase) throws {
        for statement in statements(creating: ["files_by_path", "files_by_size"]) { try db.execute(statement) }
    }

    /// Version 6 indexes the sessions to analyze (`dirty = 1`), which every analysis looks
    /// for: in a database of 400,300 sessions an ingest of one file read them all, 0.13 s
    /// instead of 0.05. Nothing else changes (a version 5 database is read as it is).
    private static func migrateFrom5(_ db: SQLiteDatabase) throws {
        for statement in statements(creating: ["sessions_dirty"]) { try db.execute(statement) }
    }

    /// The statements of `ddl` that create the named tables, indexes and views, in DDL order.
    static func statements(creating names: Set<String>) -> [String] {
        var out: [String] = []
        var current: [Substring] = []
        for line in ddl.split(separator: "\n", omittingEmptySubsequences: false) {
            if current.isEmpty && !line.hasPrefix("CREATE ") { continue }
            current.append(line)
            // A statement ends with a line ending in `;` outside a comment.
            let code = line.components(separatedBy: "--")[0].trimmingCharacters(in: .whitespaces)
            guard code.hasSuffix(";") else { continue }
            let words = current[0].split(separator: " ")
            let name = words.count > 2 ? String(words[2]) : ""
            if names.contains(name) { out.append(current.joined(separator: "\n")) }
            current = []
        }
        return out
    }
}

import Foundation
