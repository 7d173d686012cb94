import Foundation
import LCTraceAnalysis
import LCTraceIngest
import LCTraceModel
import LCTraceRules
import LCTraceStore

/// One `lctrace ingest`, whole: the paths expanded, the files loaded (their sessions analysed
/// on the second core while later files load, where the backend can), then every session that
/// changed analysed, and the two summaries merged. The library does the work and the command
/// line only translates it (as sqlite-utils' `insert` does): progress goes to callbacks, the
/// outcome is returned, an interruption is thrown as `IngestInterrupted` with the files loaded.
package final class IngestRun {
    /// What the run did.
    package struct Outcome: Sendable {
        package var ingest: IngestSummary
        /// nil with `analyze` off (`--no-analyze`).
        package var analysis: AnalysisSummary?
        /// Directories given in which no trace file was found: an ingest that loads nothing must
        /// not pass.
        package var emptyDirectories: [String]
        /// Files with rejected lines and not one valid event line (a text file, a JSON
        /// document); an empty file (a recorder's fresh rotation) is not one.
        package var filesWithoutEvents: [FileReport]

        /// Files read into the database in this run (whole or up to their damage).
        package var loadedFiles: Int {
            ingest.files.filter {
                switch $0.status { case .loaded, .damaged: return true; default: return false }
            }.count
        }
    }

    private let db: Storage
    private let analyze: Bool
    private let settings: RuleSettings
    /// Raised (SIGINT, SIGTERM) to stop: the batch in flight is rolled back, what was committed
    /// stays, and the same run again finishes the work.
    package var stop: StopRequest?
    /// Hears where the loading is.
    package var loadingProgress: ((IngestProgress) -> Void)?
    /// Hears how many sessions of the last files the analysis while loading has left, while the
    /// run waits for it at the end.
    package var loadingAnalysisLeft: ((Int) -> Void)?
    /// Hears where the analysis after loading is.
    package var analysisProgress: ((AnalysisProgress) -> Void)?

    /// Loads into `db` (opened for writing); with `analyze`, builds the models and findings of
    /// the sessions that changed with `settings`.
    package init(db: Storage, analyze: Bool = true, settings: RuleSettings = RuleSettings()) {
        self.db = db
        self.analyze = analyze
        self.settings = settings
    }

    /// Loads the files and directories at `paths` (`-`: standard input) in order.
    package func run(_ paths: [String]) throws -> Outcome {
        let (inputs, missing) = InputWalker.expand(paths)
        let ingester = try Ingester(db: db)
        ingester.stop = stop
        // New tuning rebuilds every session after loading anyway: nothing to gain while loading.
        let settingsChanged = try db.storedSettingsText().map {
            !StoredModelPolicy.storedSettingsMatch($0, settings)
        } ?? false
        if analyze && !settingsChanged { try ingester.analyzeWhileLoading(settings: settings) }
        ingester.analysis?.progress = loadingAnalysisLeft
        let summary: IngestSummary
        var analysis: AnalysisSummary?
        do {
            summary = try ingester.ingest(inputs, missing: missing) { [loadingProgress] in loadingProgress?($0) }
            if analyze {
                do {
                    var after = try Analyzer(db: db, settings: settings).analyze(all: settingsChanged, stop: stop) {
                        [analysisProgress] in analysisProgress?($0)
                    }
                    if let background = ingester.analysis { try after.add(background, from: db) }
                    analysis = after
                } catch is Interrupted {
                    throw IngestInterrupted(summary: summary)
                }
            }
        } catch {
            // What was committed stays: its planner statistics are still this run's to
            // refresh (PostgreSQL: and the ingesters' lock to let go, which an open library
            // database would otherwise keep). Not after a stop request: the user asked to end.
            if !(error is IngestInterrupted || error is Interrupted) { try? db.refreshPlannerStatistics(afterAdding: 1) }
            throw error
        }
        try db.refreshPlannerStatistics(afterAdding: summary.newEvents)
        let empty = Self.emptyDirectories(paths, inputs).filter { path in !missing.contains { $0.path == path } }
        return Outcome(ingest: summary, analysis: analysis, emptyDirectories: empty,
                       filesWithoutEvents: Self.filesWithoutEvents(summary))
    }

    /// The directories among `paths` in which no trace file was found.
    static func emptyDirectories(_ paths: [String], _ inputs: [InputLocation]) -> [String] {
        paths.filter { path in
            var isDirectory: ObjCBool = false
            guard path != "-", FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
                  isDirectory.boolValue else { return false }
            let prefix = path.hasSuffix("/") ? path : path + "/"
            return !inputs.contains { $0 != .standardInput && $0.description.hasPrefix(prefix) }
        }
    }

    /// Files with rejected lines and not one valid event line.
    static func filesWithoutEvents(_ summary: IngestSummary) -> [FileReport] {
        summary.files.filter { f in
            switch f.status {
            case .loaded, .damaged: return f.events == 0 && f.rejects > 0
            default: return false
            }
        }
    }
}
