import Foundation

/// The embedded backend: one SQLite file (WAL mode), the default.
final class SQLiteBackend: StorageBackend {
    let db: SQLiteDatabase
    private let writing: Bool

    init(readingPath path: String) throws {
        db = try SQLiteSchema.openForReading(path: path)
        writing = false
    }

    init(writingPath path: String, create: Bool) throws {
        db = try SQLiteSchema.openForWriting(path: path, create: create)
        writing = true
    }

    /// For tests and tools that hold a connection already.
    init(db: SQLiteDatabase) {
        self.db = db
        writing = true
    }

    var ddl: String { SQLiteSchema.ddl }
    var reader: any SQLReadConnection { db }

    func readSessionSource() throws -> any SessionSource { try SQLiteSessionSource(db: db) }

    func analysisStore() throws -> any AnalysisStore { try SQLiteAnalysisStore(db: db) }

    func ingestSink() throws -> any IngestSink {
        guard writing else { throw StoreMisuse("\(db.path) was opened read-only") }
        return try IngestStore(db: db)
    }

    /// Not taken: `lctrace query` reads SQLite's rows in place on the connection itself
    /// (`ReadOnlyQuery`, `QueryRow`), 30 times faster than a value array per row.
    func readOnlyQuery(_ sql: String) throws -> any QueryRows {
        throw StoreMisuse("lctrace query reads a SQLite database through ReadOnlyQuery")
    }

    /// Copies the write-ahead log back (https://sqlite.org/pragma.html#pragma_wal_checkpoint).
    func tidyAfterInterruption() {
        if writing { try? db.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    func close() { db.close() }
}

/// A session's facts on one connection: its events read from the primary key with interned
/// ids resolved (`SessionEventReader`), its metadata, and its stored instances.
class SQLiteSessionSource: SessionSource {
    let db: SQLiteDatabase
    let events: SessionEventReader
    let model: ModelReader

    init(db: SQLiteDatabase) throws {
        self.db = db
        events = try SessionEventReader(db: db)
        model = ModelReader(db: db)
    }

    func sessionMetadata(_ session: Int64) throws -> SessionMetadata { try model.sessionMetadata(session) }

    func forEachEvent(session: Int64, sid: String, _ body: (TraceEvent) throws -> Void) throws {
        try events.forEachEvent(session: session, sid: sid, body)
    }

    func forEachEvent(session: Int64, captured: CapturedRows?, sid: String, _ body: (TraceEvent) throws -> Void) throws {
        try events.forEachEvent(session: session, captured: captured, sid: sid, body)
    }

    private var retired: RetiredInstanceReader?
    func retiredInstances(session: Int64) throws -> RetiredInstanceReader {
        if retired == nil { retired = try RetiredInstanceReader(db: db) }
        retired!.session = session
        return retired!
    }
}

/// The analysis's connection: reads sessions and replaces their models, in the same
/// transaction (the writer's, during an ingest: `strings` is then the ingest's cache).
final class SQLiteAnalysisStore: SQLiteSessionSource, AnalysisStore {
    private let writer: ModelWriter
    private var selectTargets: SQLiteStatement?

    init(db: SQLiteDatabase, strings: StringPool? = nil) throws {
        writer = try ModelWriter(db: db, strings: strings)
        try super.init(db: db)
    }

    func countSessionsToAnalyse(all: Bool) throws -> Int {
        Int(try db.scalarInt("SELECT count(*) FROM sessions WHERE dirty = 1 OR ?", [.int(all ? 1 : 0)]) ?? 0)
    }

    func sessionsToAnalyse(all: Bool, after: Int64, limit: Int) throws -> [(id: Int64, sid: String)] {
        if selectTargets == nil {
            selectTargets = try db.prepare("SELECT id, sid FROM sessions WHERE (dirty = 1 OR ?1) AND id > ?2 ORDER BY id LIMIT ?3")
        }
        let select = selectTargets!
        select.reset()
        defer { select.reset() }
        try select.bind([.int(all ? 1 : 0), .int(after), .int(Int64(limit))])
        var targets: [(Int64, String)] = []
        while try select.step() { targets.append((select.int(0), select.text(1) ?? "")) }
        return targets
    }

    func writeTransaction<T>(_ body: () throws -> T) throws -> T { try db.writeTransaction(body) }

    func clear(session: Int64) throws { try writer.clear(session: session) }
    func writeRows(session: Int64, _ model: SessionModel) throws { try writer.writeRows(session: session, model) }
    func finish(session: Int64, _ model: SessionModel) throws { try writer.finish(session: session, model) }
    func saveSettings(_ settings: RuleSettings) throws { try writer.saveSettings(settings) }
    func writeFileFindings() throws -> Int { try writer.writeFileFindings() }
}

/// Snapshots on a read-only connection of its own (the analysis thread's during an ingest).
final class SQLiteSnapshotReader: SQLiteSessionSource, SnapshotReader {
    private var spanQuery: SQLiteStatement?

    init(path: String) throws {
        let reading = try SQLiteDatabase(path: path, mode: .readOnly)
        // It reads each session once, in key order: a small page cache does (memory stays flat).
        try reading.execute("PRAGMA cache_size = -4096")
        try super.init(db: reading)
    }

    /// A snapshot is a read transaction begun now: never inside one left open, and its result
    /// only counts when it ends cleanly.
    func inSnapshot<T>(_ body: () throws -> T) -> T? {
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
    func seqSpan(of session: Int64) throws -> Int64 {
        if spanQuery == nil {
            spanQuery = try db.prepare("SELECT (SELECT max(seq) FROM events WHERE session = ?1) - (SELECT min(seq) FROM events WHERE session = ?1) + 1")
        }
        let q = spanQuery!
        q.bind(session, at: 1)
        defer { q.resetKeepingBindings() }
        return try q.step() ? q.optionalInt(0) ?? 0 : 0
    }

    func close() {
        spanQuery = nil
        db.close()
    }
}

extension IngestStore: LoadingAnalysisHost {
    func modelStore() throws -> any AnalysisStore { try SQLiteAnalysisStore(db: db, strings: strings) }
    func openSnapshotReader() throws -> any SnapshotReader { try SQLiteSnapshotReader(path: db.path) }
}

extension Storage {
    /// An open SQLite connection as storage (tests and tools that hold one already).
    convenience init(_ db: SQLiteDatabase) {
        self.init(location: .sqlite(path: db.path), backend: SQLiteBackend(db: db))
    }
}

extension SQLiteError: StorageFailure {
    public var kind: StorageFailureKind { .unavailable }
    public var line: String { "database: " + message }
    /// About the kind of failure it is, never another (a read-only file got a disk hint).
    public var hint: String? {
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
    public var kind: StorageFailureKind { .unavailable }
    public var line: String { description }
    public var hint: String? { nil }
}

extension QueryRefused: StorageFailure {
    public var kind: StorageFailureKind { .refused }
    public var line: String { message }
    public var hint: String? { nil }
}
