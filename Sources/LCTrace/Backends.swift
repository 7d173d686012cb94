import LCTracePostgreSQL
import LCTraceSQLite
import LCTraceStore

/// The storage backends lctrace knows, in the order they are asked to claim a `--db` value:
/// the one place that names them (docs/architecture.md, "Add a storage backend"). The
/// embedded default claims every location the others do not, so it comes last.
package enum Backends {
    package static let all: [any StorageBackendKind] = [PostgreSQLBackendKind(), SQLiteBackendKind()]

    /// The default backend's kind (`lctrace schema` without a database).
    static var embedded: any StorageBackendKind { all[all.count - 1] }
}

package extension Storage {
    /// Opens `location` (a file path or a `postgresql://` URL) read-only, refusing anything
    /// that is not an lctrace database of this version. `timeout`: seconds for everything
    /// done from now on, opening included (`lctrace query --timeout`).
    static func openForReading(_ location: String, timeout: Double? = nil) throws -> Storage {
        try openForReading(location, among: Backends.all, timeout: timeout)
    }

    /// Opens `location` for writing: creates the database and its schema when `create` is
    /// set and nothing is there (`ingest`); otherwise a missing database is refused
    /// (`analyze`). An older schema is migrated in place.
    /// `stop` ends a wait on a server (connecting, a lock) at once.
    static func openForWriting(_ location: String, create: Bool = true, stop: StopRequest? = nil) throws -> Storage {
        try openForWriting(location, among: Backends.all, create: create, stop: stop)
    }

    /// The schema of the embedded backend (`lctrace schema` without a database).
    static var defaultDDL: String { Backends.embedded.ddl }

    /// `location` as outputs show it, without opening it: a server's URL without its password.
    static func shown(_ location: String) -> String {
        ((try? kind(of: location))?.shown(location)) ?? location
    }

    /// True when `location` names a database on a server (a `postgresql://` URL), not a file.
    static func isServer(_ location: String) -> Bool {
        (try? kind(of: location)).map { $0.name != Backends.embedded.name } ?? false
    }

    /// The kind of database `location` names, without opening it.
    static func kind(of location: String) throws -> any StorageBackendKind {
        try kind(of: location, among: Backends.all)
    }
}
