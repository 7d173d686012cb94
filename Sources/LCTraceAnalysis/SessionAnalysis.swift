import LCTraceModel
import LCTraceRules
import LCTraceStore

/// How one session's model and findings are made: the one place that runs the model builder
/// and the rules over a session's events, with the tuning that bounds its memory. The analysis
/// (`Analyzer`, `BackgroundAnalyzer`) stores what it builds; reading commands (reports,
/// timelines) build in memory when the stored model will not do (`StoredModelPolicy`).
///
/// A long session's model is built in batches: once it holds `factsPerBatch` facts, its final
/// ones are judged and handed to `batches` (stored, or counted and let go), so memory stays
/// bounded however long the session; the model returned holds what was left at the end, with
/// every finding of the session.
package struct SessionAnalysis: Sendable {
    package var settings: RuleSettings
    /// Facts a session's model may hold before its final ones leave memory in a batch
    /// (`ModelBuilder.compact`).
    package var factsPerBatch = SessionAnalysis.defaultFactsPerBatch
    /// Tombstones of ended instances held in memory when they can be read back from stored
    /// rows (otherwise every one is kept).
    package var tombstones = SessionAnalysis.defaultTombstones
    /// Events between two progress reports inside one session.
    var progressEvery = SessionAnalysis.defaultProgressEvery

    /// About 4 MB of facts.
    package static let defaultFactsPerBatch = 16_384
    /// About 2 MB of tombstones.
    package static let defaultTombstones = 16_384
    static let defaultProgressEvery = 65_536

    package init(settings: RuleSettings = RuleSettings()) { self.settings = settings }

    /// Builds a model from any source of events: `feed` calls `consume` with each event in
    /// seq order. `retired`: where instances of earlier batches are read back (the rows
    /// `batches` stored), so that at most `tombstones` ended instances are remembered; without
    /// it, all are. `progress` hears the number of events read every `progressEvery` events.
    package func build(sid: String, metadata: SessionMetadata, retired: RetiredInstances? = nil,
                       batches: ((SessionModel) throws -> Void)? = nil, progress: ((Int) -> Void)? = nil,
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

    /// Builds the model of stored session `id` from `source`: from `captured` when given (the
    /// rows its backend's ingest kept, read only by that backend's `CapturedRowsReader`), else
    /// from its stored events.
    package func build(session id: Int64, sid: String, metadata: SessionMetadata, source: any SessionSource,
                       captured: (any CapturedSessionRows)? = nil, retired: RetiredInstances? = nil,
                       batches: ((SessionModel) throws -> Void)? = nil,
                       progress: ((Int) -> Void)? = nil) throws -> SessionModel {
        try build(sid: sid, metadata: metadata, retired: retired, batches: batches, progress: progress) { consume in
            guard let captured else { return try source.forEachEvent(session: id, sid: sid, consume) }
            guard let reader = source as? any CapturedRowsReader else {
                preconditionFailure("captured rows handed to a session source that cannot read them")
            }
            try reader.forEachEvent(captured: captured, sid: sid, consume)
        }
    }

    /// Builds session `id`'s model and replaces the stored one in `sink`, inside the caller's
    /// write transaction: batches are written as they are made, and ended instances read back
    /// from their rows, so memory stays flat however long the session.
    func replaceStoredModel(session id: Int64, sid: String, metadata: SessionMetadata,
                                    source: any SessionSource, captured: (any CapturedSessionRows)? = nil,
                                    sink: any ModelSink, progress: ((Int) -> Void)? = nil) throws -> SessionModel {
        try sink.clear(session: id)
        let retired = try source.retiredInstances(session: id)
        let model = try build(session: id, sid: sid, metadata: metadata, source: source, captured: captured,
                              retired: retired, batches: { try sink.writeRows(session: id, $0) }, progress: progress)
        if let error = retired.error { throw error }
        try sink.finish(session: id, model)
        return model
    }

    /// Builds a listed session's model in memory for a reading command (nothing is written):
    /// an analysed session's ended instances are read back from its stored rows, a dirty one's
    /// (its rows are stale or partial) are all kept.
    package func buildInMemory(_ session: SessionInfo, source: any SessionSource,
                               batches: ((SessionModel) throws -> Void)? = nil,
                               progress: ((Int) -> Void)? = nil) throws -> SessionModel {
        let retired = session.dirty ? nil : try source.retiredInstances(session: session.id)
        let model = try build(session: session.id, sid: session.sid, metadata: try source.sessionMetadata(session.id),
                              source: source, retired: retired, batches: batches, progress: progress)
        if let error = retired?.error { throw error }
        return model
    }
}

/// When a reading command may use what the analysis stored instead of building in memory.
package enum StoredModelPolicy {
    /// A session's stored facts (instances, appearances, containment) are current when its
    /// events did not change since it was analysed; they do not depend on the rule settings.
    package static func storedFactsAreCurrent(_ session: SessionInfo) -> Bool { !session.dirty }

    /// A session's stored findings are current when its facts are and they were built with
    /// `settings` (`storedSettings`: their canonical text as the database holds it).
    package static func storedFindingsAreCurrent(_ session: SessionInfo, storedSettings: String?,
                                                 settings: RuleSettings) -> Bool {
        storedSettingsMatch(storedSettings, settings) && storedFactsAreCurrent(session)
    }

    /// True when the stored findings were built by these rules, whatever their tuning: then a
    /// session's stored facts that need no tuning (LC903's, say) are current with them.
    package static func storedRulesMatch(_ storedSettings: String?) -> Bool {
        storedSettings?.hasPrefix(RuleSettings.rulesText + ";") ?? false
    }

    /// True when the stored findings were built with `settings`.
    package static func storedSettingsMatch(_ storedSettings: String?, _ settings: RuleSettings) -> Bool {
        storedSettings == settings.canonicalText
    }
}
