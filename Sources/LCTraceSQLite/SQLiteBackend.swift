import Dispatch
import Foundation
import LCTraceModel
import LCTraceRules
import LCTraceStore

/// The embedded backend: one SQLite file (WAL mode), the default.
final class SQLiteBackend: StorageBackend {
    package let db: SQLiteDatabase
    private let writing: Bool

    /// When a user's query must end (`lctrace query --timeout`), counted from the opening.
    private var queryDeadline: UInt64?

    package init(readingPath path: String, timeout: Double? = nil) throws {
        db = try SQLiteSchema.openForReading(path: path)
        writing = false
        queryDeadline = timeout.map { DispatchTime.now().uptimeNanoseconds &+ UInt64(max(0, min($0, 86_400)) * 1e9) }
    }

    package init(writingPath path: String, create: Bool) throws {
        db = try SQLiteSchema.openForWriting(path: path, create: create)
        writing = true
    }

    /// For tests and tools that hold a connection already.
    package init(db: SQLiteDatabase) {
        self.db = db
        writing = true
    }

    package var ddl: String { SQLiteSchema.ddl }
    package var reader: any SQLReadConnection { db }

    package func readSessionSource() throws -> any SessionSource { try SQLiteSessionSource(db: db) }

    package func analysisStore() throws -> any AnalysisStore { try SQLiteAnalysisStore(db: db) }

    package func ingestSink() throws -> any IngestSink {
        precondition(writing, "an ingest asked of a database opened read-only")
        return try IngestStore(db: db)
    }

    /// The connection is restricted for users' SQL from here on (`ReadOnlyQuery`): the
    /// command that asks runs nothing else on it.
    package func readOnlyQuery(_ sql: String) throws -> any QueryRows {
        precondition(!writing, "a user's query asked of a database opened for writing")
        return try SQLiteUserQuery(db: db, sql: sql, deadline: queryDeadline)
    }

    /// Copies the write-ahead log back (https://sqlite.org/pragma.html#pragma_wal_checkpoint).
    /// Nothing to do: lctrace's SQLite queries are planned from the indexes alone (no
    /// `sqlite_stat1`), so they are planned the same before and after a load.
    package func refreshPlannerStatistics(afterAdding events: Int) throws {}

    package func tidyAfterInterruption() {
        if writing { try? db.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// A reading connection also removes the `-wal` and `-shm` files it leaves (or that an
    /// ingest which ended while it read left): see `SQLiteSchema.releaseWALFiles`.
    package func close() {
        db.close()
        if !writing { SQLiteSchema.releaseWALFiles(path: db.path) }
    }
}

/// A session's facts on one connection: its events read from the primary key with interned
/// ids resolved (`SessionEventReader`), its metadata, and its stored instances.
class SQLiteSessionSource: CapturedRowsReader {
    package let db: SQLiteDatabase
    package let events: SessionEventReader
    package let model: DatabaseReader

    package init(db: SQLiteDatabase) throws {
        self.db = db
        events = try SessionEventReader(db: db)
        model = DatabaseReader(db: db)
    }

    package func sessionMetadata(_ session: Int64) throws -> SessionMetadata { try model.sessionMetadata(session) }

    package func forEachEvent(session: Int64, sid: String, _ body: (TraceEvent) throws -> Void) throws {
        try events.forEachEvent(session: session, sid: sid, body)
    }

    package func forEachEvent(captured: any CapturedSessionRows, sid: String, _ body: (TraceEvent) throws -> Void) throws {
        // Captured rows reach the analysis and come back only through this backend's own
        // ingest (`IngestStore.takeCapturedRows`): any other kind is a bug.
        guard let rows = captured as? CapturedRows else { preconditionFailure("rows captured by another backend") }
        try events.forEachEvent(in: rows, sid: sid, body)
    }

    private var retired: RetiredInstanceReader?
    package func retiredInstances(session: Int64) throws -> RetiredInstanceReader {
        if retired == nil { retired = try RetiredInstanceReader(db: db) }
        retired!.session = session
        return retired!
    }
}

/// The analysis's connection: reads sessions and replaces their models, in the same
/// transaction (the writer's, during an ingest: `strings` is then the ingest's cache).
final class SQLiteAnalysisStore: SQLiteSessionSource, AnalysisStore {
    private let writer: ModelWriter
    /// The prepared page statement, and whether it takes every session or the dirty ones.
    private var selectTargets: (all: Bool, statement: SQLiteStatement)?

    package init(db: SQLiteDatabase, strings: StringPool? = nil) throws {
        writer = try ModelWriter(db: db, strings: strings)
        try super.init(db: db)
    }

    package func countSessionsToAnalyse(all: Bool) throws -> Int {
        Int(try db.scalarInt(SessionsToAnalyse.countSQL(all: all)) ?? 0)
    }

    package func sessionsToAnalyse(all: Bool, after: Int64, limit: Int) throws -> [(id: Int64, sid: String)] {
        if selectTargets?.all != all {
            selectTargets = (all, try db.prepare(SessionsToAnalyse.pageSQL(all: all)))
        }
        let select = selectTargets!.statement
        select.reset()
        defer { select.reset() }
        try select.bind([.int(after), .int(Int64(limit))])
        var targets: [(Int64, String)] = []
        while try select.step() { targets.append((select.int(0), select.text(1) ?? "")) }
        return targets
    }

    package func writeTransaction<T>(_ body: () throws -> T) throws -> T { try db.writeTransaction(body) }

    package func clear(session: Int64) throws { try writer.clear(session: session) }
    package func writeRows(session: Int64, _ model: SessionModel) throws { try writer.writeRows(session: session, model) }
    package func finish(session: Int64, _ model: SessionModel) throws {
        try writer.writeRows(session: session, model)
        try writer.finish(session: session, model)
    }
    package func saveSettings(_ settings: RuleSettings) throws { try writer.saveSettings(settings) }
    package func replaceFileFindings(_ findings: [(file: Int64, finding: Finding)]) throws { try writer.replaceFileFindings(findings) }
    package func fileProblems() throws -> [(Int64, RejectedLinesRule.FileProblems)] { try model.fileProblems() }
}

/// Snapshots on a read-only connection of its own (the analysis thread's during an ingest).
final class SQLiteSnapshotReader: SQLiteSessionSource, SnapshotReader {
    private var spanQuery: SQLiteStatement?

    package init(path: String) throws {
        let reading = try SQLiteDatabase(path: path, mode: .readOnly)
        // It reads each session once, in key order: a small page cache does (memory stays flat).
        try reading.execute("PRAGMA cache_size = -4096")
        try super.init(db: reading)
    }

    /// A snapshot is a read transaction begun now: never inside one left open, and its result
    /// only counts when it ends cleanly.
    package func inSnapshot<T>(_ body: () throws -> T) -> T? {
        guard db.isAutocommit && !db.hasActiveStatements else { return nil }
        do {
            try db.execute("BEGIN")
            let value = try body()
            try db.commit()
            return value
        } catch {
            if !db.isAutocommit { try? db.execute("ROLLBACK") }
            return nil
        }
    }

    /// Two seeks in the primary key.
    package func seqSpan(of session: Int64) throws -> Int64 {
        if spanQuery == nil {
            spanQuery = try db.prepare("SELECT (SELECT max(seq) FROM events WHERE session = ?1) - (SELECT min(seq) FROM events WHERE session = ?1) + 1")
        }
        let q = spanQuery!
        q.bind(session, at: 1)
        defer { q.resetKeepingBindings() }
        return try q.step() ? q.optionalInt(0) ?? 0 : 0
    }

    package func close() {
        spanQuery = nil
        db.close()
    }
}

extension IngestStore: LoadingAnalysisHost {
    package func modelStore() throws -> any AnalysisStore & CapturedRowsReader { try SQLiteAnalysisStore(db: db, strings: strings) }
    package func openSnapshotReader() throws -> any SnapshotReader { try SQLiteSnapshotReader(path: db.path) }
}

package extension Storage {
    /// An open SQLite connection as storage (tests and tools that hold one already).
    convenience init(_ db: SQLiteDatabase) {
        self.init(location: db.path, kind: SQLiteBackendKind(), backend: SQLiteBackend(db: db))
    }
}

extension SQLiteError: StorageFailure {
    package var kind: StorageFailureKind { .unavailable }
    package var line: String { "database: " + message }
    /// About the kind of failure it is, never another (a read-only file got a disk hint).
    package var hint: String? {
        switch reason {
        case .corrupt, .notADatabase:
            return "the database file is damaged: 'sqlite3 DB .recover' may save what is left, or ingest again into a new database"
        case .readOnly: return "the database, its -wal or -shm file, or its folder is read-only for this user"
        case .diskFull: return "the disk holding the database (or the temporary folder) is full"
        case .ioFailure: return "the system could not read or write the database file: check the disk and that the database is on a local file system"
        case .cannotOpen, .permission: return "check that the database and its folder exist and this user may read them (and write them to ingest)"
        case .busy, .other: return nil
        }
    }
}

extension SQLiteSchema.VersionError: StorageFailure {
    package var kind: StorageFailureKind { .unavailable }
    package var line: String { description }
    package var hint: String? { nil }
}

extension QueryRefused: StorageFailure {
    package var kind: StorageFailureKind { .refused }
    package var line: String { message }
    package var hint: String? { nil }
}
