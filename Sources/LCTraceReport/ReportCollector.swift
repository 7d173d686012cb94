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
    /// Whether the gaps are also kept by their sessions' builds (`ReportData.gapTable`), for
    /// statistics per build (the HTML report).
    package var gapsBySession = false
    /// Whether `collect` may return while the gap statistics are still read beside it (on a
    /// backend with `SQLReadConnection.sibling`): the caller settles them with
    /// `ReportView.settleGaps()` before rendering (the HTML report draws its examples meanwhile).
    package var gapsSettledLater = false
    /// Whether the gap statistics may be read beside at all (tests turn it off to compare
    /// with a read in line).
    package var gapsBeside = true
    /// When findings are rebuilt: facts per batch, tombstones kept (tests make them tiny).
    package var factsPerBatch = SessionAnalysis.defaultFactsPerBatch
    package var tombstonesInMemory = SessionAnalysis.defaultTombstones
    package init() {}
}

/// Everything a report prints, gathered from the database.
package struct ReportData: Sendable {
    /// Compact (`ReportSessions`): a report may list hundreds of thousands.
    package var sessions = ReportSessions()
    package var findings: [Finding] = []
    package var events = 0
    /// Completed, non-interactive, foreground appearance gaps (viewIsAppearing → viewDidAppear),
    /// ns, per class and animation, and by build when the request asked for it. Read only
    /// once settled (`pendingGaps` nil): a table still being read is never shown as empty.
    var gapTable: GapTable {
        get {
            precondition(pendingGaps == nil, "the gap statistics are read while their read beside is pending: settleGaps() first")
            return settledGaps
        }
        set { settledGaps = newValue }
    }
    private var settledGaps = GapTable()
    /// The gap statistics' read still running beside (`ReportRequest.gapsSettledLater`).
    var pendingGaps: BesideRead<GapTable>?
    /// The same per class and animation.
    var gapSeries: [GapSeries: [Int64]] {
        get { gapTable.bySeries }
        set { gapTable = GapTable(series: newValue) }
    }
    /// The same per class, animated or not (tests).
    package var gaps: [String: [Int64]] {
        var out: [String: [Int64]] = [:]
        for (series, values) in gapSeries { out[series.cls, default: []] += values }
        return out
    }
    /// True when the findings were computed for this report (tuning differs from the stored ones).
    package var recomputed = false
    /// The tuning the findings were built (or recomputed) with.
    package var settings = RuleSettings()
    /// The selection's finding filters (`--min-severity`, `--class`).
    package var minSeverity: Severity = .info
    package var className: String?

    /// Waits for the gap statistics' read beside, if one runs, dropping its result: no read
    /// outlives a report that ends early.
    package func awaitGapsRead() {
        _ = try? pendingGaps?.join()
    }

    /// Waits for the gap statistics read beside, if they are, and takes them (only the class
    /// `className` names, as `collect` keeps them).
    mutating func settleGaps() throws {
        guard let pending = pendingGaps else { return }
        pendingGaps = nil
        settledGaps = try pending.join()
        if let className { settledGaps.keep(className: className) }
    }
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
    package static func collect(_ request: ReportRequest, db: Storage, begin: (ReportSessions) throws -> Void = { _ in },
                                each: (Finding, _ session: Int?) throws -> Void) throws -> ReportData {
        let reader = db.model
        var data = ReportData()
        data.minSeverity = request.minSeverity
        data.settings = request.settings
        data.className = request.className
        try reader.forEachSession(request.sessions) { data.sessions.append($0) }
        data.sessions.trim()
        try begin(data.sessions)
        let stored = try reader.storedSettingsText()
        let useStored = StoredModelPolicy.storedSettingsMatch(stored, request.settings)
        let wantGaps = request.families.contains(.gaps) && request.gapStatistics
        data.recomputed = !useStored || data.sessions.indices.contains { data.sessions.isDirty($0) }
        let source = try db.backend.readSessionSource()
        var analysis = SessionAnalysis(settings: request.settings)
        analysis.factsPerBatch = request.factsPerBatch
        analysis.tombstones = request.tombstonesInMemory
        // Analysed sessions' gaps, one query for all of them: on a connection of its own
        // beside the findings' reads where the backend has one, no dirty session adds gaps of
        // its own below, and more than one session may be read (one session's gaps, as a
        // timeline asks for, are not worth a connection); else here first.
        if useStored && wantGaps {
            if request.gapsBeside, !data.recomputed, request.sessions.session == nil,
               let sibling = try db.backend.reader.sibling() {
                let sessions = data.sessions
                func gaps(_ reader: DatabaseReader) throws -> GapTable {
                    var table = GapTable()
                    try readGaps(request, reader: reader, sessions: sessions, into: &table)
                    return table
                }
                data.pendingGaps = BesideRead({ try gaps(DatabaseReader(db: sibling)) }, otherwise: { try gaps(reader) })
            } else {
                try readGaps(request, reader: reader, sessions: data.sessions, into: &data.gapTable)
            }
        }
        // Whatever ends the collection early, the read beside it ends first.
        var handedOver = false
        defer { if !handedOver { data.awaitGapsRead() } }
        func emit(_ findings: [Finding], session: Int?) throws {
            for f in inReportOrder(findings, request) { try each(f, session) }
        }
        // Stored findings are read for a few hundred sessions at a time, ahead of the loop.
        // `StoredModelPolicy.storedFindingsAreCurrent`, from the compact list.
        func current(_ index: Int) -> Bool { useStored && !data.sessions.isDirty(index) }
        var storedAhead: [Int64: [Finding]] = [:]
        var readUpTo = 0
        for index in data.sessions.indices {
            if current(index) {
                if index >= readUpTo {
                    var ids: [Int64] = []
                    readUpTo = index
                    while readUpTo < data.sessions.count && ids.count < Self.sessionsPerRead {
                        if current(readUpTo) { ids.append(data.sessions.id(readUpTo)) }
                        readUpTo += 1
                    }
                    storedAhead = try reader.findings(ofSessions: ids)
                }
                data.events += data.sessions.events[index]
                try emit(storedAhead.removeValue(forKey: data.sessions.id(index)) ?? [], session: index)
                continue
            }
            let s = data.sessions[index]
            let build = request.gapsBySession ? data.gapTable.buildNumber(data.sessions.buildName(index)) : -1
            func addGaps(_ model: SessionModel) {
                guard wantGaps else { return }
                for c in model.cycles where c.outcome == .completed && !c.interactive && !c.backgrounded {
                    guard let isT = c.isT, let didT = c.didT else { continue }
                    let cls = data.gapTable.classNumber(model.cls(of: c.instance) ?? "?")
                    data.gapTable.append(cls: cls, animated: c.animated ?? false, build: build, gap: didT - isT)
                }
            }
            // A long session's cycles come in batches and are let go once counted.
            let model = try analysis.buildInMemory(s, source: source, batches: addGaps)
            addGaps(model)
            // A dirty session's stored counts are stale too (0 events before its first analysis).
            if s.dirty { data.sessions.update(index, from: model.stats) }
            data.events += data.sessions.events[index]
            try emit(model.findings, session: index)
        }
        if request.sessions.session == nil && request.sessions.app == nil && request.sessions.build == nil {
            // From the files and rejects as they are now: stored LC904 findings are those of the
            // last analysis, and `ingest --no-analyze` or a killed analyze leaves them behind.
            try emit(RejectedLinesRule.check(try reader.fileProblems()).map(\.finding), session: nil)
        }
        if data.pendingGaps == nil {
            if let cls = request.className { data.gapTable.keep(className: cls) }
        } else if request.gapsSettledLater {
            handedOver = true
        } else {
            try data.settleGaps()
        }
        return data
    }

    /// The findings of one session that `request` selects, in report order: by time, rule,
    /// controller and since, ties as they came (stored ones by t, rule and row id).
    static func inReportOrder(_ findings: [Finding], _ request: ReportRequest) -> [Finding] {
        let kept = findings.filter { f in
            guard let rule = RuleCatalog.info(f.rule), request.families.contains(rule.family),
                  f.severity >= request.minSeverity else { return false }
            if let cls = request.className { return f.cls == cls }
            return true
        }
        let order = kept.indices.sorted { i, j in
            let a = kept[i], b = kept[j]
            return (a.t ?? -1, a.rule, a.vc ?? "", a.since ?? -1, i) < (b.t ?? -1, b.rule, b.vc ?? "", b.since ?? -1, j)
        }
        return order.map { kept[$0] }
    }

    /// What `collect` gives of each of `sessions` alone (its findings `request` selects, in
    /// report order), by sid: the stored findings of every current session in one read per
    /// `sessionsPerRead`, a collection of its own for the others (the HTML report's examples:
    /// a query for all of them, not a collection per session).
    package static func findings(_ request: ReportRequest, of sessions: [SessionInfo], db: Storage) throws -> [String: [Finding]] {
        var out: [String: [Finding]] = [:]
        let useStored = StoredModelPolicy.storedSettingsMatch(try db.model.storedSettingsText(), request.settings)
        let current = useStored ? sessions.filter { !$0.dirty } : []
        for start in stride(from: 0, to: current.count, by: sessionsPerRead) {
            let chunk = current[start..<min(current.count, start + sessionsPerRead)]
            let read = try db.model.findings(ofSessions: chunk.map(\.id))
            for s in chunk { out[s.sid] = inReportOrder(read[s.id] ?? [], request) }
        }
        for s in sessions where out[s.sid] == nil {
            var alone = request
            alone.sessions = SessionFilter(session: s.sid)
            out[s.sid] = try collect(alone, db: db).findings.filter { $0.session == s.sid }
        }
        return out
    }

    /// The stored gaps of the selected analysed sessions (`DatabaseReader.forEachCountedGap`),
    /// with their sessions' builds when the request keeps them by build.
    static func readGaps(_ request: ReportRequest, reader: DatabaseReader, sessions: ReportSessions,
                         into table: inout GapTable) throws {
        let name = try reader.classNames()
        // Per class id and animation, the series (by build when kept by build).
        var seriesOf: [SeriesKey: Int] = [:]
        let byID = request.gapsBySession ? sessions.byID() : []
        // Per profile, its build's number in the table (-2: not yet asked).
        var buildOf = Array(repeating: Int32(-2), count: request.gapsBySession ? sessions.profiles.count : 0)
        var lastSession: Int64 = .min, build: Int32 = -1
        try reader.forEachCountedGap(request.sessions) { cls, animated, session, gap in
            if request.gapsBySession && session != lastSession {
                // A session not listed counts among all the gaps but in no build.
                lastSession = session
                build = -1
                if let i = sessions.index(ofID: session, in: byID) {
                    let p = Int(sessions.profile[i])
                    if buildOf[p] == -2 { buildOf[p] = table.buildNumber(sessions.buildName(i)) }
                    build = buildOf[p]
                }
            }
            let key = SeriesKey(cls: cls, animated: animated, build: build)
            let series: Int
            if let known = seriesOf[key] {
                series = known
            } else {
                series = table.series(cls: table.classNumber(try name(cls)), animated: animated, build: build)
                seriesOf[key] = series
            }
            table.append(series: series, gap: gap)
        }
    }

    private struct SeriesKey: Hashable {
        var cls: Int64
        var animated: Bool
        var build: Int32
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
