import Foundation
import LCTraceModel
import LCTraceRules
import LCTraceStore

/// Totals of one analysis run.
package struct AnalysisSummary: Sendable {
    package var sessions = 0
    package var events = 0
    /// Findings of the sessions analyzed in this run.
    package var findings = 0
    /// Findings on files (LC904) the database holds after this run, whichever run loaded them.
    package var fileFindings = 0
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
        let counts = try DatabaseReader(db: db.backend.reader).storedCounts(of: only)
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
    /// The rules' settings and the tuning that bounds a session's memory.
    package var analysis: SessionAnalysis
    package var settings: RuleSettings {
        get { analysis.settings }
        set { analysis.settings = newValue }
    }
    /// Facts a session's model may hold before its final ones are judged and stored in a batch.
    package var factsPerBatch: Int {
        get { analysis.factsPerBatch }
        set { analysis.factsPerBatch = newValue }
    }
    /// Tombstones of retired instances held in memory before those not needed are dropped
    /// (they are read back from the stored rows when an event names their id again).
    package var tombstonesInMemory: Int {
        get { analysis.tombstones }
        set { analysis.tombstones = newValue }
    }
    /// Events between two progress reports inside one session.
    var progressEvery: Int {
        get { analysis.progressEvery }
        set { analysis.progressEvery = newValue }
    }

    /// Analyses the sessions of `db` (opened for writing).
    package convenience init(db: Storage, settings: RuleSettings = RuleSettings()) throws {
        self.init(store: try db.backend.analysisStore(), settings: settings)
    }

    package init(store: any AnalysisStore, settings: RuleSettings = RuleSettings()) {
        self.store = store
        analysis = SessionAnalysis(settings: settings)
    }

    /// Analyzes every session marked dirty (or all of them with `all`).
    /// With `stop`, a raised request rolls back the transaction in flight and throws
    /// `Interrupted`: the sessions not analyzed stay dirty for the next run.
    ///
    /// A session another writer is analyzing at that moment (`AnalysisStore.claim`: several
    /// ingesters on one server) is passed over, and taken up at the end only if still dirty:
    /// waiting for it held this run's transaction, and the other's, for nothing, since the
    /// other stores it (four ingesters spent 2.6 s waiting so on 718,000 events).
    package func analyze(all: Bool = false, stop: StopRequest? = nil,
                        progress: ((AnalysisProgress) -> Void)? = nil) throws -> AnalysisSummary {
        let started = Date()
        var summary = AnalysisSummary()
        // The sessions to analyze are read a page at a time, so memory stays flat however many.
        let total = try store.countSessionsToAnalyse(all: all)
        var done = 0
        var passedOver: [(id: Int64, sid: String)] = []
        /// `claiming`: passes over the sessions another writer holds; else waits for them and
        /// analyses those still dirty.
        func run(_ targets: [(id: Int64, sid: String)], claiming: Bool) throws {
            // Group small sessions into one transaction; a big one gets its own.
            var index = 0
            while index < targets.count {
                try store.writeTransaction {
                    var eventsInTransaction = 0
                    while index < targets.count && eventsInTransaction < 200_000 {
                        try stop?.check()
                        let (id, sid) = targets[index]
                        index += 1
                        if !all, try !store.claim(session: id, waiting: !claiming) {
                            if claiming { passedOver.append((id, sid)) }
                            continue
                        }
                        let current = done
                        let model = try analysis.replaceStoredModel(
                            session: id, sid: sid, metadata: try store.sessionMetadata(id), source: store, sink: store) { events in
                            progress?(AnalysisProgress(sessionsDone: current, sessions: max(total, current + 1), eventsIntoNext: events))
                        }
                        eventsInTransaction += model.stats.events
                        summary.events += model.stats.events
                        summary.findings += model.findings.count
                        summary.sessions += 1
                        summary.analyzed.insert(id)
                        done += 1
                    }
                }
                progress?(AnalysisProgress(sessionsDone: done, sessions: max(total, done), eventsIntoNext: 0))
            }
        }
        var after: Int64 = 0
        while true {
            let targets = try store.sessionsToAnalyse(all: all, after: after, limit: 4096)
            guard let last = targets.last else { break }
            after = last.id
            try run(targets, claiming: true)
        }
        // What the others left dirty (a batch came after their analysis), waiting for them now.
        try run(passedOver, claiming: false)
        summary.fileFindings = try store.writeTransaction {
            try store.saveSettings(settings)
            let fileFindings = RejectedLinesRule.check(try store.fileProblems())
            try store.replaceFileFindings(fileFindings)
            return fileFindings.count
        }
        summary.seconds = Date().timeIntervalSince(started)
        return summary
    }

    /// A session the background analysis leaves to the analysis after loading
    /// (`BackgroundAnalyzer.maxEventsPerSession`).
    struct SessionTooLong: Error {}
}
