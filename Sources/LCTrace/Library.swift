@_exported import LCTraceModel
import LCTraceAnalysis
import LCTraceIngest
import LCTraceReport
import LCTraceRules
import LCTraceStore
import LCTraceModel

/// An lctrace database, for apps and tools that use lctrace as a library rather than run the
/// command (docs/library.md): load trace files, read the findings, render a report. The same
/// code as `lctrace ingest` and `lctrace report`, without the command line.
///
///     let db = try TraceDatabase(location: "campaign.db")
///     let loaded = try db.ingest(["logs/"])
///     for finding in try db.findings() where finding.severity == .error { print(finding.message) }
///     print(try db.report(.text).text)
public final class TraceDatabase {
    private let storage: Storage

    /// Opens (creating it when missing) the database at `location`: a file path (SQLite), or
    /// a `postgresql://` URL of a team database.
    public init(location: String) throws {
        do {
            storage = try Storage.openForWriting(location)
        } catch {
            throw TraceDatabaseError(error)
        }
    }

    /// Where it is, as messages show it (a server's URL without its password).
    public var location: String { storage.shownLocation }

    /// Loads the trace files and directories at `paths` (gzip or plain JSON lines) and builds
    /// the model and findings of every session that changed. Bad lines never stop a file:
    /// they are counted, and kept in the database's `rejects` table.
    public func ingest(_ paths: [String]) throws -> IngestResult {
        do {
            let outcome = try IngestRun(db: storage).run(paths)
            return IngestResult(outcome)
        } catch {
            throw TraceDatabaseError(error)
        }
    }

    /// Every finding of every session, in report order (sessions by start, findings by time).
    public func findings() throws -> [Finding] {
        do {
            return try ReportCollector.collect(ReportRequest(), db: storage).findings
        } catch {
            throw TraceDatabaseError(error)
        }
    }

    /// A report of every finding in `format`, and whether a gate at `failOn` (nil: never)
    /// fails on it, as `lctrace report --fail-on` decides. `sourceRoot`: the app's sources,
    /// where SARIF places its results (without it every finding is a notification).
    public func report(_ format: ReportFormat, failOn: Severity? = .error, sourceRoot: String? = nil) throws -> RenderedReport {
        do {
            guard let reporter = OutputFormats.report.named(format.rawValue)?.value else {
                preconditionFailure("ReportFormat.\(format) has no reporter")
            }
            var request = ReportRequest()
            request.gapsBySession = reporter.inputs.contains(.gapsBySession)
            var options = ReportOptions()
            options.failOn = failOn
            options.sourceRoot = sourceRoot
            options.followUp = FollowUp(database: storage.shownLocation)
            var view = ReportView(data: try ReportCollector.collect(request, db: storage), options: options)
            if reporter.inputs.contains(.exhibits) { view.exhibits = try ReportExhibits.gather(view, db: storage) }
            if reporter.inputs.contains(.sourcePlacements) { view.placements = try SourcePlacements.gather(view, db: storage) }
            return RenderedReport(text: reporter.render(view), failing: view.failing)
        } catch {
            throw TraceDatabaseError(error)
        }
    }

    /// Closes the connections now (they close when the database is released otherwise).
    public func close() { storage.close() }
}

/// What `TraceDatabase.ingest` did.
public struct IngestResult: Sendable {
    /// Files read into the database (whole, or up to their damage).
    public var filesLoaded: Int
    /// Files skipped because the same content was loaded before.
    public var filesAlreadyLoaded: Int
    /// Files that ended early or were corrupt (what came before the damage was kept), and
    /// paths that could not be read.
    public var damagedFiles: [String]
    public var missingFiles: [String]
    /// Event lines new to the database, and copies of stored ones (dropped).
    public var newEvents: Int
    public var duplicateEvents: Int
    /// Lines rejected (kept in `rejects` with the reason).
    public var rejectedLines: Int
    /// Sessions whose model was built, and the findings they have.
    public var sessionsAnalyzed: Int
    public var findings: Int

    init(_ outcome: IngestRun.Outcome) {
        let s = outcome.ingest
        filesLoaded = outcome.loadedFiles
        filesAlreadyLoaded = s.files.filter {
            switch $0.status { case .alreadyLoaded, .sameContent: return true; default: return false }
        }.count
        damagedFiles = s.damagedFiles.map(\.path)
        missingFiles = s.missingFiles.map(\.path)
        newEvents = s.newEvents
        duplicateEvents = s.duplicates
        rejectedLines = s.rejects
        sessionsAnalyzed = outcome.analysis?.sessions ?? 0
        findings = outcome.analysis?.findings ?? 0
    }
}

/// The formats `TraceDatabase.report` renders, as `lctrace report --format` names them.
public enum ReportFormat: String, CaseIterable, Sendable {
    /// Grouped for people.
    case text
    /// One JSON document, every finding with its identity.
    case json
    /// One row per finding.
    case csv
    /// SARIF 2.1.0, for code scanning.
    case sarif
    /// JUnit XML, for CI test reports.
    case junit
    /// One self-contained page with timelines and charts.
    case html
}

/// A rendered report.
public struct RenderedReport: Sendable {
    public var text: String
    /// True when a finding is at or above the gate's severity.
    public var failing: Bool
}

/// Why a `TraceDatabase` call failed: one line naming the database or file, and a hint where
/// one helps, as the command line prints them.
public struct TraceDatabaseError: Error, CustomStringConvertible {
    public var message: String
    public var hint: String?
    public var description: String { hint.map { "\(message) (\($0))" } ?? message }

    init(_ error: Error) {
        if let failure = error as? StorageFailure {
            message = failure.line
            hint = failure.hint
        } else if error is IngestInterrupted || error is Interrupted {
            message = "interrupted: what was committed stays; run the same call again to finish"
        } else {
            message = String(describing: error)
        }
    }
}
