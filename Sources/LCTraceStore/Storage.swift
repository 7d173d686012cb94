import Foundation
import LCTraceModel

/// A kind of database lctrace keeps its data in: one per backend target, each claiming the
/// `--db` values it understands. The one list of them is `Backends.all` (the LCTrace target);
/// nothing else names a backend.
package protocol StorageBackendKind: Sendable {
    /// A short name for messages and tests: "sqlite", "postgresql".
    var name: String { get }
    /// True when `location` (a `--db` value) names a database of this kind.
    func claims(_ location: String) -> Bool
    /// `location` as messages, hints and reports show it: never a password.
    func shown(_ location: String) -> String
    /// Opens an existing database read-only, refusing anything that is not an lctrace
    /// database of this version. `timeout`: seconds for everything done from now on, opening
    /// included (`lctrace query --timeout`; backends without a server may ignore it).
    func openForReading(_ location: String, timeout: Double?) throws -> any StorageBackend
    /// Opens a database for writing, creating it and its schema when `create` is set and
    /// nothing is there; migrates an older schema in place. `stop`: a request that ends any
    /// wait on a server, connecting included (backends without one may ignore it).
    func openForWriting(_ location: String, create: Bool, stop: StopRequest?) throws -> any StorageBackend
    /// The schema of this kind, commented table by table (`lctrace schema`).
    var ddl: String { get }
}

/// A failure of the storage layer, whatever the backend: the command line prints
/// `Error: <line>` (and `Hint: <hint>`) and exits with the status of `kind`. Every backend's
/// error conforms.
package protocol StorageFailure: Error {
    var kind: StorageFailureKind { get }
    /// One line saying what failed, naming the database.
    var line: String { get }
    var hint: String? { get }
}

package enum StorageFailureKind: Sendable {
    /// The database cannot be opened, read or written, or is not an lctrace database of this
    /// version (exit 74).
    case unavailable
    /// A statement `lctrace query` refuses to run (exit 64).
    case refused
    /// A query stopped by its `--timeout` (exit 74).
    case stopped
}

/// An open lctrace database, whichever backend holds it. The command line, the reports and
/// the analysis work through it; only the backend targets know their SQL.
package final class Storage {
    /// The `--db` value it was opened from: for opening only, never shown (it may hold a
    /// password); outputs use `shownLocation`.
    private let location: String
    /// Its kind (which backend).
    package let kind: any StorageBackendKind
    package let backend: any StorageBackend

    package init(location: String, kind: any StorageBackendKind, backend: any StorageBackend) {
        self.location = location
        self.kind = kind
        self.backend = backend
    }

    /// The location as messages show it (a server's URL without its password).
    package var shownLocation: String { kind.shown(location) }

    /// The shared reads (sessions, findings, gaps, files) on the backend's read connection.
    package private(set) lazy var model = DatabaseReader(db: backend.reader)

    /// The kind among `kinds` that claims `location` (the first that does).
    package static func kind(of location: String, among kinds: [any StorageBackendKind]) throws -> any StorageBackendKind {
        // The embedded backend claims every location the others do not.
        guard let kind = kinds.first(where: { $0.claims(location) }) else {
            preconditionFailure("no storage backend claims \(location): the last of Backends.all must claim all")
        }
        return kind
    }

    /// Opens `location` read-only with the kind among `kinds` that claims it.
    package static func openForReading(_ location: String, among kinds: [any StorageBackendKind],
                                       timeout: Double? = nil) throws -> Storage {
        let kind = try kind(of: location, among: kinds)
        return Storage(location: location, kind: kind, backend: try kind.openForReading(location, timeout: timeout))
    }

    /// Opens `location` for writing with the kind among `kinds` that claims it.
    package static func openForWriting(_ location: String, among kinds: [any StorageBackendKind],
                                       create: Bool = true, stop: StopRequest? = nil) throws -> Storage {
        let kind = try kind(of: location, among: kinds)
        return Storage(location: location, kind: kind, backend: try kind.openForWriting(location, create: create, stop: stop))
    }

    /// The schema of this backend, commented table by table (`lctrace schema`).
    package var ddl: String { backend.ddl }

    /// Tells the query planner what an ingest of `events` new events changed (PostgreSQL:
    /// `ANALYZE` when they are a tenth of the table or more, or it never had statistics). Without
    /// it the first report after a bulk load plans for empty tables: 80 s instead of 1.4 s on
    /// 10 M events, until autovacuum gets there.
    package func refreshPlannerStatistics(afterAdding events: Int) throws {
        try backend.refreshPlannerStatistics(afterAdding: events)
    }

    /// Leaves the database tidy after an interrupted run (SQLite: the write-ahead log copied
    /// back into the database file). Never throws: it is the last thing a stopped command does.
    package func tidyAfterInterruption() { backend.tidyAfterInterruption() }

    /// Closes the connections now (they close when the storage is released otherwise).
    package func close() { backend.close() }
}

// MARK: What the command line asks of a database directly

package extension Storage {
    /// The number of sessions in the database.
    func sessionCount() throws -> Int { try model.sessionCount() }

    /// Whether any session holds a controller of class `name`.
    func knowsClass(_ name: String) throws -> Bool { try model.knowsClass(name) }

    /// Class names of the database, at most `limit`.
    func classNames(limit: Int) throws -> [String] { try model.classNames(limit: limit) }

    /// Whether any session has `value` as its app or build.
    func knows(_ field: DatabaseReader.SessionField, _ value: String) throws -> Bool { try model.knows(field, value) }

    /// The apps or builds of the database, at most `limit`.
    func values(of field: DatabaseReader.SessionField, limit: Int) throws -> [String] { try model.values(of: field, limit: limit) }

    /// The controllers of session `sid`, at most `limit`.
    func controllers(sid: String, limit: Int) throws -> [String] { try model.controllers(sid: sid, limit: limit) }

    /// Session ids that start with `prefix`, ignoring case, in order; at most `limit`.
    func sessionIDs(matching prefix: String, limit: Int) throws -> [String] {
        try model.sessions(matching: prefix, limit: limit)
    }

    /// The sessions the filter selects, in listing order, as stored (see `forEachCurrentSession`).
    func sessions(_ filter: SessionFilter = SessionFilter()) throws -> [SessionInfo] {
        try model.sessions(filter)
    }

    /// The canonical text of the rule settings the stored findings were built with, if any.
    func storedSettingsText() throws -> String? { try model.storedSettingsText() }
}

// MARK: A user's query

package extension Storage {
    /// Runs one read-only statement of a user's (`lctrace query`), within the `timeout` the
    /// storage was opened with (`openForReading(_:among:timeout:)`), which counts from the
    /// opening. What each backend refuses, and how, is its own (`ReadOnlyQuery`, `PGUserQuery`).
    func userQuery(_ sql: String) throws -> any QueryRows {
        try backend.readOnlyQuery(sql)
    }
}
