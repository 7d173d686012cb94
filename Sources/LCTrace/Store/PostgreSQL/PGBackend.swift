/// The team backend: a PostgreSQL database through libpq.
final class PGBackend: StorageBackend {
    init(url: String, writing: Bool, create: Bool = true) throws {
        throw StoreMisuse("PostgreSQL: under construction")
    }
    var ddl: String { "" }
    var reader: any SQLReadConnection { fatalError() }
    func readSessionSource() throws -> any SessionSource { fatalError() }
    func analysisStore() throws -> any AnalysisStore { fatalError() }
    func ingestSink() throws -> any IngestSink { fatalError() }
    func readOnlyQuery(_ sql: String, timeout: Double?) throws -> any QueryRows { fatalError() }
    func tidyAfterInterruption() {}
    func close() {}
}
