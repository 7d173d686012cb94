import Foundation

/// Totals of one analysis run.
public struct AnalysisSummary: Sendable {
    public var sessions = 0
    public var events = 0
    public var findings = 0
    /// Time of the analysis after loading.
    public var seconds: Double = 0
    /// Of `sessions`, those analysed while later files were loading (`BackgroundAnalyzer`).
    public var whileLoading = 0
    /// The sessions analysed.
    public var sessionIDs: [Int64] = []

    /// Adds the sessions a background analysis stored and that were not analysed again after.
    public mutating func add(_ background: BackgroundAnalyzer) {
        let after = Set(sessionIDs)
        for (id, counts) in background.stored where !after.contains(id) {
            whileLoading += 1
            sessions += 1
            events += counts.events
            findings += counts.findings
            sessionIDs.append(id)
        }
    }
}

/// Rebuilds the per-session model (session stats, instances, appearances, containment) and
/// the findings of every session whose events changed. Sessions may span files ingested in
/// any order, so this runs after loading (`BackgroundAnalyzer` gets most sessions done while
/// loading, and leaves the ones that changed since to this).
public final class Analyzer {
    public let db: Database
    public var settings: RuleSettings

    public init(db: Database, settings: RuleSettings = RuleSettings()) {
        self.db = db
        self.settings = settings
    }

    /// Analyses every session marked dirty (or all of them with `all`).
    public func analyze(all: Bool = false, progress: ((Int, Int) -> Void)? = nil) throws -> AnalysisSummary {
        let started = Date()
        var summary = AnalysisSummary()
        let select = try db.prepare("SELECT id, sid FROM sessions WHERE dirty = 1 OR ? ORDER BY id")
        try select.bind([.int(all ? 1 : 0)])
        var targets: [(Int64, String)] = []
        while try select.step() { targets.append((select.int(0), select.text(1) ?? "")) }
        let writer = try ModelWriter(db: db)
        let reader = try SessionEventReader(db: db)
        let sessions = ModelReader(db: db)
        // Group small sessions into one transaction; a big one gets its own.
        var index = 0
        while index < targets.count {
            try db.writeTransaction {
                var eventsInTransaction = 0
                while index < targets.count && eventsInTransaction < 200_000 {
                    let (id, sid) = targets[index]
                    let result = try analyzeSession(id: id, sid: sid, metadata: try sessions.sessionMetadata(id),
                                                    reader: reader, writer: writer)
                    eventsInTransaction += result.events
                    summary.events += result.events
                    summary.findings += result.findings
                    summary.sessions += 1
                    summary.sessionIDs.append(id)
                    index += 1
                }
            }
            progress?(index, targets.count)
        }
        summary.findings += try db.writeTransaction {
            try writer.saveSettings(settings)
            return try writer.writeFileFindings()
        }
        summary.seconds = Date().timeIntervalSince(started)
        return summary
    }

    private func analyzeSession(id: Int64, sid: String, metadata: SessionMetadata, reader: SessionEventReader,
                                writer: ModelWriter) throws -> (events: Int, findings: Int) {
        let model = try Analyzer.buildModel(session: id, sid: sid, metadata: metadata, reader: reader, settings: settings)
        try writer.replace(session: id, with: model)
        return (model.stats.events, model.findings.count)
    }

    /// Builds one session's model and runs the rules on it, writing nothing (reports with
    /// other tuning use this on a read-only connection). `captured`, when given, must be all
    /// the session's rows (`IngestStore.takeCapturedRows`): they are used instead of the table.
    public static func buildModel(session id: Int64, sid: String, metadata: SessionMetadata, reader: SessionEventReader,
                                  captured: CapturedRows? = nil, settings: RuleSettings) throws -> SessionModel {
        let builder = ModelBuilder(sid: sid, metadata: metadata)
        if let captured {
            try reader.forEachEvent(in: captured, sid: sid) { builder.consume($0) }
        } else {
            try reader.forEachEvent(session: id, sid: sid) { builder.consume($0) }
        }
        let model = builder.finish()
        model.findings = RuleCatalog.check(model, settings)
        return model
    }
}
