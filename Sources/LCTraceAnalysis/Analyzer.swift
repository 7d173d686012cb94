import Foundation
import LCTraceModel
import LCTraceRules
import LCTraceStore

/// Totals of one analysis run.
package struct AnalysisSummary: Sendable {
    package var sessions = 0
    package var events = 0
    package var findings = 0
    /// Time of the analysis after loading.
    package var seconds: Double = 0
    /// Of `sessions`, those analyzed while later files were loading (`BackgroundAnalyzer`).
    package var whileLoading = 0
    /// The sessions analyzed.
    package var analyzed = SessionSet()

    /// Adds the sessions a background analysis stored and that were not analyzed again after,
    /// with their events and findings as stored (read back: nothing per session is kept).
    package mutating func add(_ background: BackgroundAnalyzer, from db: Storage) throws {
        let only = background.storedSessions.subtracting(analyzed)
        let counts = try ModelReader(db: db.backend.reader).storedCounts(of: only)
        whileLoading += only.count
        sessions += only.count
        events += counts.events
        findings += counts.findings
        for id in only.ids { analyzed.insert(id) }
    }
}

/// How far an analysis is: sessions done of all, and events read so far of the one being built
/// (a long session takes a while on its own).
package struct AnalysisProgress: Sendable {
    package var sessionsDone: Int
    package var sessions: Int
    package var eventsIntoNext: Int

    package init(sessionsDone: Int, sessions: Int, eventsIntoNext: Int) {
        self.sessionsDone = sessionsDone; self.sessions = sessions; self.eventsIntoNext = eventsIntoNext
    }
}

/// Rebuilds the per-session model (session stats, instances, appearances, containment) and
/// the findings of every session whose events changed. Sessions may span files ingested in
/// any order, so this runs after loading (`BackgroundAnalyzer` gets most sessions done while
/// loading, and leaves the ones that changed since to this).
package final class Analyzer {
    /// Where sessions are read and their models stored (the backend's analysis connection).
    package let store: any AnalysisStore
    package var settings: RuleSettings
    /// Facts a session's model may hold before its final ones are judged and stored in a batch.
    package var factsPerBatch = Analyzer.factsPerBatch
    /// Tombstones of retired instances held in memory before those not needed are dropped
    /// (they are read back from the stored rows when an event names their id again).
    package var tombstonesInMemory = Analyzer.tombstonesInMemory
    /// Events between two progress reports inside one session.
    package var progressEvery = Analyzer.eventsPerProgress

    /// Analyses the sessions of `db` (opened for writing).
    package convenience init(db: Storage, settings: RuleSettings = RuleSettings()) throws {
        self.init(store: try db.backend.analysisStore(), settings: settings)
    }

    package init(store: any AnalysisStore, settings: RuleSettings = RuleSettings()) {
        self.store = store
        self.settings = settings
    }

    /// Analyzes every session marked dirty (or all of them with `all`).
    /// With `stop`, a raised request rolls back the transaction in flight and throws
    /// `Interrupted`: the sessions not analyzed stay dirty for the next run.
    package func analyze(all: Bool = false, stop: StopRequest? = nil,
                        progress: ((AnalysisProgress) -> Void)? = nil) throws -> AnalysisSummary {
        let started = Date()
        var summary = AnalysisSummary()
        // The sessions to analyze are read a page at a time, so memory stays flat however many.
        let total = try store.countSessionsToAnalyse(all: all)
        var done = 0
        var after: Int64 = 0
        while true {
            let targets = try store.sessionsToAnalyse(all: all, after: after, limit: 4096)
            guard let last = targets.last else { break }
            after = last.id
            // Group small sessions into one transaction; a big one gets its own.
            var index = 0
            while index < targets.count {
                try store.writeTransaction {
                    var eventsInTransaction = 0
                    while index < targets.count && eventsInTransaction < 200_000 {
                        try stop?.check()
                        let (id, sid) = targets[index]
                        let current = done
                        let model = try Analyzer.store(session: id, sid: sid, metadata: try store.sessionMetadata(id),
                                                       source: store, sink: store, settings: settings,
                                                       factsPerBatch: factsPerBatch, tombstones: tombstonesInMemory,
                                                       progressEvery: progressEvery) { events in
                            progress?(AnalysisProgress(sessionsDone: current, sessions: max(total, current + 1), eventsIntoNext: events))
                        }
                        eventsInTransaction += model.stats.events
                        summary.events += model.stats.events
                        summary.findings += model.findings.count
                        summary.sessions += 1
                        summary.analyzed.insert(id)
                        index += 1
                        done += 1
                    }
                }
                progress?(AnalysisProgress(sessionsDone: done, sessions: max(total, done), eventsIntoNext: 0))
            }
        }
        summary.findings += try store.writeTransaction {
            try store.saveSettings(settings)
            return try store.writeFileFindings()
        }
        summary.seconds = Date().timeIntervalSince(started)
        return summary
    }

    /// Builds one session's model from `source` and replaces the stored one in `sink`, inside
    /// the caller's write transaction: batches are written as they are made, and ended
    /// instances read back from their rows, so memory stays flat however long the session.
    package static func store(session id: Int64, sid: String, metadata: SessionMetadata, captured: (any CapturedSessionRows)? = nil,
                      source: any SessionSource, sink: any ModelSink,
                      settings: RuleSettings, factsPerBatch: Int = Analyzer.factsPerBatch,
                      tombstones: Int = Analyzer.tombstonesInMemory, progressEvery: Int = Analyzer.eventsPerProgress,
                      progress: ((Int) -> Void)? = nil) throws -> SessionModel {
        try sink.clear(session: id)
        let retired = try source.retiredInstances(session: id)
        let model = try Analyzer.build(sid: sid, metadata: metadata, settings: settings, factsPerBatch: factsPerBatch,
                                       batches: { try sink.writeRows(session: id, $0) },
                                       retired: retired, tombstones: tombstones,
                                       progressEvery: progressEvery, progress: progress) { consume in
            try events(of: id, sid: sid, from: source, captured: captured, consume)
        }
        if let error = retired.error { throw error }
        try sink.writeRows(session: id, model)
        try sink.finish(session: id, model)
        return model
    }

    /// Facts a session's model may hold before its final ones leave memory in a batch
    /// (`ModelBuilder.compact`): about 4 MB of them.
    package static let factsPerBatch = 16_384
    /// Tombstones of ended instances held while a session is built from stored rows (about 2 MB).
    package static let tombstonesInMemory = 16_384
    /// Events between two progress reports inside one session.
    package static let eventsPerProgress = 65_536

    /// A session the background analysis leaves to the analysis after loading
    /// (`BackgroundAnalyzer.maxEventsPerSession`).
    package struct SessionTooLong: Error {}

    /// Builds one session's model and runs the rules on it. `captured`, when given, must be
    /// all the session's rows (`LoadingAnalysisHost.takeCapturedRows`): they are used instead of the
    /// table. With `batches`, a long session's final facts are judged and handed to it in
    /// batches as the model grows past `factsPerBatch` facts (the caller stores their rows), and
    /// the model returned holds only what was left at the end, with every finding of the
    /// session. Without it the whole model is kept (reports with other tuning, tests).
    package static func buildModel(session id: Int64, sid: String, metadata: SessionMetadata, source: any SessionSource,
                           captured: (any CapturedSessionRows)? = nil, settings: RuleSettings,
                           factsPerBatch: Int = Analyzer.factsPerBatch,
                           batches: ((SessionModel) throws -> Void)? = nil) throws -> SessionModel {
        try buildModel(sid: sid, metadata: metadata, settings: settings, factsPerBatch: factsPerBatch, batches: batches) { consume in
            try events(of: id, sid: sid, from: source, captured: captured, consume)
        }
    }

    /// A session's events from the rows its backend captured (when given: only a backend's
    /// own `CapturedRowsReader` reads them), else from its stored rows.
    private static func events(of id: Int64, sid: String, from source: any SessionSource,
                               captured: (any CapturedSessionRows)?, _ consume: (TraceEvent) throws -> Void) throws {
        guard let captured else { return try source.forEachEvent(session: id, sid: sid, consume) }
        guard let reader = source as? any CapturedRowsReader else {
            preconditionFailure("captured rows handed to a session source that cannot read them")
        }
        try reader.forEachEvent(captured: captured, sid: sid, consume)
    }

    /// The same from any source of events: `feed` calls `consume` with each event in seq order.
    package static func buildModel(sid: String, metadata: SessionMetadata, settings: RuleSettings,
                                  factsPerBatch: Int = Analyzer.factsPerBatch,
                                  batches: ((SessionModel) throws -> Void)? = nil,
                                  feed: (_ consume: (TraceEvent) throws -> Void) throws -> Void) throws -> SessionModel {
        try build(sid: sid, metadata: metadata, settings: settings, factsPerBatch: factsPerBatch, batches: batches,
                  retired: nil, tombstones: 0, feed: feed)
    }

    /// `retired`: where instances of earlier batches are read back (the rows `batches` stored),
    /// so that at most `tombstones` ended instances are remembered; without it, all are.
    /// `progress` hears the number of events read every `progressEvery` events.
    package static func build(sid: String, metadata: SessionMetadata, settings: RuleSettings, factsPerBatch: Int,
                      batches: ((SessionModel) throws -> Void)?, retired: RetiredInstances?, tombstones: Int,
                      progressEvery: Int = Analyzer.eventsPerProgress, progress: ((Int) -> Void)? = nil,
                      feed: (_ consume: (TraceEvent) throws -> Void) throws -> Void) throws -> SessionModel {
        let builder = ModelBuilder(sid: sid, metadata: metadata, growthClasses: Set(settings.maxLive.keys),
                                   retired: retired, maxTombstones: tombstones)
        var findings: [Finding] = []
        var nextBatch = factsPerBatch
        var events = 0
        let consume: (TraceEvent) throws -> Void = { e in
            builder.consume(e)
            events += 1
            if let progress, events % progressEvery == 0 { progress(events) }
            guard let batches, builder.factCount >= nextBatch else { return }
            let batch = builder.compact()
            findings += RuleCatalog.findings(batch, settings, factsOnly: true)
            try batches(batch)
            // The next batch waits for `factsPerBatch` new facts. A batch costs a look at every
            // fact held, so live facts are looked at again once per batch: with the default,
            // 100,000 live facts (controllers that never end) cost some 6 looks per new fact.
            nextBatch = builder.factCount + factsPerBatch
        }
        try feed(consume)
        let model = builder.finish()
        findings += RuleCatalog.findings(model, settings, factsOnly: false)
        model.findings = RuleCatalog.sorted(RuleCatalog.settle(findings, lossy: model.isLossy))
        return model
    }
}
