import Foundation

/// Where lctrace keeps its data: an SQLite file (the embedded default) or a PostgreSQL
/// database that a team shares. `--db` and `$LCTRACE_DB` name one.
public enum StorageLocation: Equatable, Sendable, CustomStringConvertible {
    case sqlite(path: String)
    /// A libpq URL (`postgresql://user@host:port/db?options=…`).
    case postgres(url: String)

    /// A `postgresql://` or `postgres://` URL is a server; anything else is a file path.
    public init(_ text: String) {
        let lower = text.lowercased()
        if lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://") {
            self = .postgres(url: text)
        } else {
            self = .sqlite(path: text)
        }
    }

    /// The path, or the URL with its password hidden: what messages and hints show.
    public var description: String {
        switch self {
        case .sqlite(let path): return path
        case .postgres(let url): return PGConnection.redacted(url)
        }
    }
}

/// A failure of the storage layer, whatever the backend: the command line prints
/// `Error: <line>` (and `Hint: <hint>`) and exits with the status of `kind`. Every backend's
/// error conforms.
public protocol StorageFailure: Error {
    var kind: StorageFailureKind { get }
    /// One line saying what failed, naming the database.
    var line: String { get }
    var hint: String? { get }
}

public enum StorageFailureKind: Sendable {
    /// The database cannot be opened, read or written, or is not an lctrace database of this
    /// version (exit 74).
    case unavailable
    /// A statement `lctrace query` refuses to run (exit 64).
    case refused
    /// A query stopped by its `--timeout` (exit 74).
    case stopped
}

/// A misuse of the storage layer that is lctrace's own fault, told plainly.
struct StoreMisuse: StorageFailure, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var kind: StorageFailureKind { .unavailable }
    var line: String { message }
    var hint: String? { nil }
    var description: String { message }
}

/// An open lctrace database, whichever backend holds it. The command line, the reports and
/// the analysis work through it; only Store/ knows the backend and its SQL.
public final class Storage {
    public let location: StorageLocation
    let backend: any StorageBackend

    init(location: StorageLocation, backend: any StorageBackend) {
        self.location = location
        self.backend = backend
    }

    /// The shared reads (sessions, findings, gaps, files) on the backend's read connection.
    private(set) lazy var model = ModelReader(db: backend.reader)

    /// Opens `location` read-only, refusing anything that is not an lctrace database of this
    /// version (`report`, `sessions`, `query`, …). `timeout`: seconds for everything done on
    /// a server from now on, opening included (`lctrace query --timeout`).
    public static func openForReading(_ location: String, timeout: Double? = nil) throws -> Storage {
        let where_ = StorageLocation(location)
        switch where_ {
        case .sqlite(let path): return Storage(location: where_, backend: try SQLiteBackend(readingPath: path))
        case .postgres(let url): return Storage(location: where_, backend: try PGBackend(url: url, writing: false, timeout: timeout))
        }
    }

    /// Opens `location` for writing: creates the database and its schema when `create` is set
    /// and nothing is there (`ingest`); otherwise a missing database is refused (`analyze`). An
    /// older schema is migrated in place.
    public static func openForWriting(_ location: String, create: Bool = true) throws -> Storage {
        let where_ = StorageLocation(location)
        switch where_ {
        case .sqlite(let path): return Storage(location: where_, backend: try SQLiteBackend(writingPath: path, create: create))
        case .postgres(let url): return Storage(location: where_, backend: try PGBackend(url: url, writing: true, create: create))
        }
    }

    /// The schema of this backend, commented table by table (`lctrace schema`).
    public var ddl: String { backend.ddl }

    /// The schema of the embedded backend (`lctrace schema` without a database).
    public static var defaultDDL: String { SQLiteSchema.ddl }

    /// Leaves the database tidy after an interrupted run (SQLite: the write-ahead log copied
    /// back into the database file). Never throws: it is the last thing a stopped command does.
    public func tidyAfterInterruption() { backend.tidyAfterInterruption() }

    /// Closes the connections now (they close when the storage is released otherwise).
    public func close() { backend.close() }
}

// MARK: What the command line asks of a database directly

extension Storage {
    /// The number of sessions in the database.
    public func sessionCount() throws -> Int { try model.sessionCount() }

    /// Session ids that start with `prefix`, ignoring case, in order; at most `limit`.
    public func sessionIDs(matching prefix: String, limit: Int) throws -> [String] {
        try model.sessions(matching: prefix, limit: limit)
    }

    /// The sessions the filter selects, in listing order, as stored (see `forEachCurrentSession`).
    public func sessions(_ filter: SessionFilter = SessionFilter()) throws -> [SessionInfo] {
        try model.sessions(filter)
    }

    /// The fingerprint of the rule settings the stored findings were built with, if any.
    public func storedSettingsFingerprint() throws -> String? { try model.storedSettingsFingerprint() }
}

// MARK: A user's query on a server

/// The rows of a user's read-only query (`lctrace query` on a PostgreSQL database), read a
/// page at a time. SQLite's rows are read in place by the command itself (`QueryRow`).
public final class UserQueryRows {
    private let rows: any QueryRows
    /// The result's column names, in order.
    public let columnNames: [String]
    /// What the user should hear before the rows (a superuser connection).
    public var warnings: [String] { rows.warnings }

    init(_ rows: any QueryRows) {
        self.rows = rows
        columnNames = (0..<rows.columnCount).map(rows.columnName)
    }

    /// Hands each row to `body`, in order; stops at the first error.
    public func forEachRow(_ body: ([SQLValue]) throws -> Void) throws {
        var values = [SQLValue](repeating: .null, count: columnNames.count)
        while try rows.step() {
            for i in values.indices { values[i] = rows.value(i) }
            try body(values)
        }
    }
}

extension Storage {
    /// Runs one read-only statement of a user's (see `PGUserQuery` for what is refused), within
    /// the `timeout` the storage was opened with (`openForReading(_:timeout:)`), which counts
    /// from the opening.
    public func userQuery(_ sql: String) throws -> UserQueryRows {
        UserQueryRows(try backend.readOnlyQuery(sql))
    }
}
