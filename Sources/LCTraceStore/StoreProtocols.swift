import LCTraceModel
import LCTraceRules

/// The seam between lctrace and a storage backend. Targets above LCTraceStore see `Storage` and
/// these protocols, never SQL or a backend's types; a backend is one target (LCTraceSQLite,
/// LCTracePostgreSQL) implementing them. Reads for reports, listings and timelines are shared
/// (LCTraceStore/Reads: portable SQL over `SQLReadConnection`); what is hot (loading events,
/// reading a session's events for its model, writing models) each backend does its own way.
package protocol StorageBackend: AnyObject {
    /// The schema, commented table by table (`lctrace schema`).
    var ddl: String { get }
    /// The connection the shared read queries (LCTraceStore/Reads) run on.
    var reader: any SQLReadConnection { get }
    /// Sessions' events, metadata and retired instances on the read connection: a report
    /// rebuilds a dirty session's model from them without writing anything.
    func readSessionSource() throws -> any SessionSource
    /// The analysis's connection: reads sessions and replaces their stored models.
    func analysisStore() throws -> any AnalysisStore
    /// Loads files (`lctrace ingest`).
    func ingestSink() throws -> any IngestSink
    /// Runs one read-only statement of a user's (`lctrace query`), within the timeout the
    /// storage was opened with.
    func readOnlyQuery(_ sql: String) throws -> any QueryRows
    /// See `Storage.refreshPlannerStatistics`.
    func refreshPlannerStatistics(afterAdding events: Int) throws
    /// See `Storage.tidyAfterInterruption`.
    func tidyAfterInterruption()
    func close()
}

/// One session's facts for building its model: what its record said, its events in seq
/// order, and the instances earlier batches stored (read back rather than held in memory).
package protocol SessionSource: AnyObject {
    func sessionMetadata(_ session: Int64) throws -> SessionMetadata
    func forEachEvent(session: Int64, sid: String, _ body: (TraceEvent) throws -> Void) throws
    /// Retired instances of `session`, read from its stored `instances` rows.
    func retiredInstances(session: Int64) throws -> RetiredInstanceReader
}

/// Where an analysis stores what it built for a session (Analysis → Store).
package protocol ModelSink: AnyObject {
    /// Deletes the session's stored model and findings (before the new ones go in).
    func clear(session: Int64) throws
    /// Stores the rows of a batch of final facts, or of what was left at the end.
    func writeRows(session: Int64, _ model: SessionModel) throws
    /// Stores what was left of the model at the end (its last rows, as `writeRows` does), then
    /// the session's counts and findings, and marks it analyzed: one step with nothing read in
    /// it, so a backend may send it together (PostgreSQL: one query of COPYs for every kind).
    func finish(session: Int64, _ model: SessionModel) throws
    /// Records the rule settings the stored findings were built with.
    func saveSettings(_ settings: RuleSettings) throws
    /// Replaces the file-level findings (LC904, built by the analysis from `fileProblems`).
    func replaceFileFindings(_ findings: [(file: Int64, finding: Finding)]) throws
}

/// The statements that find the sessions an analysis takes, shared by the backends: every
/// one, or the dirty ones through the index `sessions_dirty` (the index's own condition spelled
/// out, never behind a parameter, so the planner takes it: an ingest into a database of
/// 400,000 sessions no longer reads them all). A page: `$1` the id it starts after, `$2` its length.
package enum SessionsToAnalyse {
    package static func countSQL(all: Bool) -> String {
        all ? "SELECT count(*) FROM sessions" : "SELECT count(*) FROM sessions WHERE dirty = 1"
    }

    package static func pageSQL(all: Bool) -> String {
        "SELECT id, sid FROM sessions WHERE \(all ? "" : "dirty = 1 AND ")id > $1 ORDER BY id LIMIT $2"
    }
}

/// The analysis's connection: it reads sessions and replaces their models in one transaction.
package protocol AnalysisStore: SessionSource, ModelSink {
    /// Sessions to analyze: the dirty ones (or all), with ids above `after`, at most `limit`, in id order.
    func sessionsToAnalyse(all: Bool, after: Int64, limit: Int) throws -> [(id: Int64, sid: String)]
    func countSessionsToAnalyse(all: Bool) throws -> Int
    /// The input problems of every file that has some (rejected lines, conflicting duplicates,
    /// damage), by file row id: what LC904 judges.
    func fileProblems() throws -> [(Int64, RejectedLinesRule.FileProblems)]
    /// Runs `body` in a write transaction (committed when it returns, rolled back when it throws).
    func writeTransaction<T>(_ body: () throws -> T) throws -> T
    /// Takes the session for the rest of this write transaction. Not `waiting`: unless another
    /// writer is analyzing it now (false: `Analyzer.analyze` comes back to it). `waiting`:
    /// once the other is done, and true only if the session is still dirty. False in both for
    /// a session another live writer is still loading: it analyzes it when its loading ends.
    func claim(session: Int64, waiting: Bool) throws -> Bool
}

package extension AnalysisStore {
    /// One writer at a time (SQLite): nobody else analyzes a session meanwhile.
    func claim(session: Int64, waiting: Bool) throws -> Bool { true }
}

/// The rows of a user's query, streamed (`lctrace query`): each backend reads them its own
/// way (SQLite in place, PostgreSQL a page at a time) and hands them to a `RowSink`.
package protocol QueryRows: AnyObject {
    /// Said before the rows (a connection with more rights than a query should have).
    var warnings: [String] { get }
    var columnNames: [String] { get }
    /// Hands every row to `sink`, in order, valid only during the call. A statement the
    /// database refuses throws `QueryRefused`; one stopped by the storage's timeout, a
    /// `StorageFailure` of kind `.stopped`.
    func forEachRow(into sink: any RowSink) throws
}

/// Where a user's query's rows go (the CSV, JSON or table writer).
package protocol RowSink: AnyObject {
    func add<Row: RowValues>(_ row: Row) throws
}

/// A user's query stopped by the timeout the storage was opened with.
package struct QueryTimedOut: StorageFailure {
    package var kind: StorageFailureKind { .stopped }
    package var line: String { "query stopped by its timeout" }
    package var hint: String? { nil }
    package init() {}
}

// MARK: Analysis while loading

/// What a database state looked like when an ingest committed: a model built from a snapshot
/// taken after that commit is current as long as its session got no rows since.
package struct SnapshotStamp: Sendable {
    package let transaction: Int64
    package let dataVersion: Int64

    package init(transaction: Int64, dataVersion: Int64) {
        self.transaction = transaction; self.dataVersion = dataVersion
    }
}

/// The ingest's side of an analysis while loading (`BackgroundAnalyzer`), offered by backends
/// whose ingest can tell whether a session changed since a snapshot (SQLite). The analysis
/// builds models from snapshots on a connection of its own and hands them to the ingest,
/// which stores them inside its own batches when they are still current.
package protocol LoadingAnalysisHost: AnyObject {
    /// The state the last commit left (call after `commit`).
    var stamp: SnapshotStamp { get }
    /// Tracks changes to `sessions` until each is `unwatch`ed (asked for a model).
    func watch(_ sessions: [Int64])
    func unwatch(_ session: Int64)
    /// True when `session` got no rows after `stamp` (call inside a batch).
    func unchangedSince(_ stamp: SnapshotStamp, session: Int64) -> Bool
    func begin() throws
    func commit() throws
    /// The captured rows of the sessions that got rows in the last file (see `CapturedSessionRows`).
    func takeCapturedRows() -> [Int64: any CapturedSessionRows]
    /// Where models are written, on the ingest's connection, inside its batches.
    func modelStore() throws -> any AnalysisStore & CapturedRowsReader
    /// A reader of snapshots on a connection of its own, for the analysis thread.
    func openSnapshotReader() throws -> any SnapshotReader
    /// Where that connection costs the server a process (PostgreSQL): what opens the reader,
    /// called on the analysis thread when it first has a session to read, so an ingest that
    /// gives it none (files loaded already, sessions left to the analysis after loading)
    /// opens none. nil (the default, SQLite): `openSnapshotReader` is called at once.
    func snapshotReaderWhenNeeded() -> (@Sendable () throws -> any SnapshotReader)?
    /// False when a session without captured rows is left dirty, for the analysis after
    /// loading, rather than read back while loading (PostgreSQL: `ModelStoringReader`).
    var readsBackWhileLoading: Bool { get }
    /// Most captured rows the analysis holds for the sessions it has not built yet
    /// (`BackgroundAnalyzer.maxHeldRows`): past it a session goes without, and is read back.
    var capturedRowsHeldAtMost: Int { get }
}

package extension LoadingAnalysisHost {
    func snapshotReaderWhenNeeded() -> (@Sendable () throws -> any SnapshotReader)? { nil }
    var readsBackWhileLoading: Bool { true }
    var capturedRowsHeldAtMost: Int { 65_536 }
}

/// A snapshot reader that stores the models it builds itself, each session in a write
/// transaction of its own on its connection, instead of handing them to the ingest's batches
/// (PostgreSQL: writers do not exclude each other there, and the server, not the ingest,
/// tells whether a session changed since its rows were captured).
package protocol ModelStoringReader: SnapshotReader, AnalysisStore {}

/// The events of one session as the ingest stored them moments ago (all of its rows, kept
/// because the session was new in its file): the analysis while loading builds the model from
/// them instead of reading the rows back, which cost about as much as building the model.
/// Opaque: only the backend that captured them reads them (`CapturedRowsReader`).
package protocol CapturedSessionRows: AnyObject, Sendable {
    /// The rows held (the analysis bounds the rows it keeps waiting).
    var count: Int { get }
}

/// A session source of the backend that captured rows, which can also read them.
package protocol CapturedRowsReader: SessionSource {
    /// The events of `captured` (made by this backend's ingest), in seq order, as
    /// `forEachEvent(session:sid:_:)` would read them from the table.
    func forEachEvent(captured: any CapturedSessionRows, sid: String, _ body: (TraceEvent) throws -> Void) throws
}

/// Reads sessions in snapshots (read transactions) on a connection of its own.
package protocol SnapshotReader: CapturedRowsReader {
    /// Runs `body` inside a snapshot; nil when none can start now or `body` throws (the
    /// session then stays dirty, for the analysis after loading).
    func inSnapshot<T>(_ body: () throws -> T) -> T?
    /// max(seq) − min(seq) + 1 of a session's stored events: its length, judged cheaply.
    func seqSpan(of session: Int64) throws -> Int64
    func close()
}
