import LCTraceAnalysis
import LCTraceModel
import LCTraceRules
import LCTraceStore

/// What a report asks for.
package struct ReportRequest: Sendable {
    package var families: Set<RuleFamily> = Set(RuleFamily.allCases)
    package var sessions = SessionFilter()
    package var className: String?
    package var minSeverity: Severity = .info
    package var settings = RuleSettings()
    /// Whether the per-class gap statistics are gathered (text `--gaps`); a baseline needs none.
    package var gapStatistics = true
    /// Whether the gaps are also kept one by one with their sessions (`ReportData.gapRows`),
    /// for statistics per build (the HTML report).
    package var gapsBySession = false
    /// When findings are rebuilt: facts per batch, tombstones kept (tests make them tiny).
    package var factsPerBatch = SessionAnalysis.defaultFactsPerBatch
    package var tombstonesInMemory = SessionAnalysis.defaultTombstones
    package init() {}
}

/// Everything a report prints, gathered from the database.
package struct ReportData: Sendable {
    package var sessions: [SessionInfo] = []
    package var findings: [Finding] = []
    package var events = 0
    /// Completed, non-interactive, foreground appearance gaps (viewIsAppearing → viewDidAppear),
    /// ns, per class and animation.
    var gapSeries: [GapSeries: [Int64]] = [:]
    /// The same per class, animated or not.
    package var gaps: [String: [Int64]] {
        var out: [String: [Int64]] = [:]
        for (series, values) in gapSeries { out[series.cls, default: []] += values }
        return out
    }
    /// True when the findings were computed for this report (tuning differs from the stored ones).
    package var recomputed = false
    /// The same gaps one by one with their sessions, when the request asked for them.
    var gapRows: GapRows?
    /// The tuning the findings were built (or recomputed) with.
    package var settings = RuleSettings()
    /// The selection's finding filters (`--min-severity`, `--class`).
    package var minSeverity: Severity = .info
    package var className: String?

}

/// Gathers a report: stored findings when they were built with the requested settings,
/// otherwise the model is rebuilt in memory for the selected sessions (nothing is written,
/// so a report also works on a read-only database).
package enum ReportCollector {
    /// Sessions whose stored findings one query reads.
    static let sessionsPerRead = 256

    /// Everything at once: the findings in `ReportData.findings` (the library, `compare`,
    /// `baseline`, tests). `report` streams them instead (`collect(_:db:begin:each:)`).
    package static func collect(_ request: ReportRequest, db: Storage) throws -> ReportData {
        var findings: [Finding] = []
        var data = try collect(request, db: db) { f, _ in findings.append(f) }
        data.findings = findings
        return data
    }

    /// The report's data without its findings, which go to `each` one at a time in report
    /// order (sessions in listing order, by time within each, files last) with their
    /// session's index in `ReportData.sessions`: at most one session's findings are held at a
    /// time, whatever their number (issue 25). `ReportData.findings` stays empty.
    /// `begin` hears the selected sessions before the first finding comes.
    package static func collect(_ request: ReportRequest, db: Storage, begin: ([SessionInfo]) throws -> Void = { _ in },
                                each: (Finding, _ session: Int?) throws -> Void) throws -> ReportData {
        let reader = db.model
        var data = ReportData()
        data.minSeverity = request.minSeverity
        data.settings = request.settings
        data.className = request.className
        data.sessions = try reader.sessions(request.sessions)
        try begin(data.sessions)
        let stored = try reader.storedSettingsText()
        let useStored = StoredModelPolicy.storedSettingsMatch(stored, request.settings)
        let wantGaps = request.families.contains(.gaps) && request.gapStatistics
        data.recomputed = !useStored || data.sessions.contains { $0.dirty }
        let source = try db.backend.readSessionSource()
        var analysis = SessionAnalysis(settings: request.settings)
        analysis.factsPerBatch = request.factsPerBatch
        analysis.tombstones = request.tombstonesInMemory
        if useStored {
            // Analysed sessions' gaps, one query for all of them.
            if wantGaps && request.gapsBySession {
                (data.gapSeries, data.gapRows) = try GapRowsQuery(db: db.backend.reader).gapsWithSessions(request.sessions, sessions: data.sessions)
            } else if wantGaps {
                data.gapSeries = try reader.gaps(request.sessions)
            }
        }
        if wantGaps && request.gapsBySession && data.gapRows == nil { data.gapRows = GapRows() }
        func selected(_ f: Finding) -> Bool {
            guard let rule = RuleCatalog.info(f.rule), request.families.contains(rule.family),
                  f.severity >= request.minSeverity else { return false }
            if let cls = request.className { return f.cls == cls }
            return true
        }
        /// One session's findings in report order: by time, rule, controller and since, ties
        /// as they came (stored ones by t, rule and row id).
        func emit(_ findings: [Finding], session: Int?) throws {
            let kept = findings.filter(selected)
            let order = kept.indices.sorted { i, j in
                let a = kept[i], b = kept[j]
                return (a.t ?? -1, a.rule, a.vc ?? "", a.since ?? -1, i) < (b.t ?? -1, b.rule, b.vc ?? "", b.since ?? -1, j)
            }
            for i in order { try each(kept[i], session) }
        }
        // Stored findings are read for a few hundred sessions at a time, ahead of the loop.
        func current(_ s: SessionInfo) -> Bool {
            StoredModelPolicy.storedFindingsAreCurrent(s, storedSettings: stored, settings: request.settings)
        }
        var storedAhead: [Int64: [Finding]] = [:]
        var readUpTo = 0
        for (index, s) in data.sessions.enumerated() {
            if current(s) {
                if index >= readUpTo {
                    var ids: [Int64] = []
                    readUpTo = index
                    while readUpTo < data.sessions.count && ids.count < Self.sessionsPerRead {
                        if current(data.sessions[readUpTo]) { ids.append(data.sessions[readUpTo].id) }
                        readUpTo += 1
                    }
                    storedAhead = try reader.findings(ofSessions: ids)
                }
                data.events += s.events
                try emit(storedAhead.removeValue(forKey: s.id) ?? [], session: index)
                continue
            }
            func addGaps(_ model: SessionModel) {
                guard wantGaps else { return }
                for c in model.cycles where c.outcome == .completed && !c.interactive && !c.backgrounded {
                    guard let isT = c.isT, let didT = c.didT else { continue }
                    let cls = model.cls(of: c.instance) ?? "?"
                    data.gapSeries[GapSeries(cls: cls, animated: c.animated ?? false), default: []].append(didT - isT)
                    if let number = data.gapRows?.classNumber(cls) { data.gapRows!.append(cls: number, session: index, gap: didT - isT) }
                }
            }
            // A long session's cycles come in batches and are let go once counted.
            let model = try analysis.buildInMemory(s, source: source, batches: addGaps)
            addGaps(model)
            // A dirty session's stored counts are stale too (0 events before its first analysis).
            if s.dirty { data.sessions[index].update(from: model.stats) }
            data.events += data.sessions[index].events
            try emit(model.findings, session: index)
        }
        if request.sessions.session == nil && request.sessions.app == nil && request.sessions.build == nil {
            // From the files and rejects as they are now: stored LC904 findings are those of the
            // last analysis, and `ingest --no-analyze` or a killed analyze leaves them behind.
            try emit(RejectedLinesRule.check(try reader.fileProblems()).map(\.finding), session: nil)
        }
        if let cls = request.className {
            data.gapSeries = data.gapSeries.filter { $0.key.cls == cls }
            data.gapRows?.keep(className: cls)
        }
        return data
    }
}

package extension ReportCollector {
    /// Calls `body` with each session the filter selects, in listing order, as it is now: a
    /// dirty session (events changed since its model was built: `ingest --no-analyze`, a killed
    /// ingest or analyze) has its counts, times and end computed from its events, so no stale
    /// number is shown. One session is held at a time.
    static func forEachCurrentSession(_ filter: SessionFilter, db: Storage, _ body: (SessionInfo) throws -> Void) throws {
        let events = try db.backend.readSessionSource()
        try db.model.forEachSession(filter) { info in
            var info = info
            if info.dirty {
                var stats = SessionStats()
                try events.forEachEvent(session: info.id, sid: info.sid) { stats.add($0) }
                info.update(from: stats)
            }
            try body(info)
        }
    }
}

package extension SessionInfo {
    /// The counts, times and end of `stats` (computed from the session's events).
    mutating func update(from stats: SessionStats) {
        events = stats.events
        lostEvents = Int(stats.lostEvents)
        firstT = stats.firstT
        lastT = stats.lastT
        endReason = stats.endReason
    }
}
