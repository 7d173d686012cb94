import LCTraceModel

/// viewIsAppearing → viewDidAppear gaps one by one with the session each comes from, so that a
/// report can chart them per build (the HTML report). Columns of small numbers rather than a
/// value per gap: a campaign has close to a million of them.
package struct GapRows: Sendable {
    /// Class names; `cls` holds indices into it.
    package private(set) var classes: [String] = []
    package private(set) var cls: [Int32] = []
    /// Index into `ReportData.sessions`.
    package private(set) var session: [Int32] = []
    /// ns.
    package private(set) var gap: [Int64] = []
    private var classIndex: [String: Int32] = [:]

    package init() {}

    package mutating func classNumber(_ name: String) -> Int32 {
        if let i = classIndex[name] { return i }
        let i = Int32(classes.count)
        classes.append(name)
        classIndex[name] = i
        return i
    }

    package mutating func append(cls: Int32, session: Int, gap: Int64) {
        self.cls.append(cls)
        self.session.append(Int32(session))
        self.gap.append(gap)
    }

    /// Only the rows of class `name` (`--class`).
    package mutating func keep(className name: String) {
        var kept = GapRows()
        if let c = classIndex[name] {
            let k = kept.classNumber(name)
            for i in gap.indices where cls[i] == c { kept.append(cls: k, session: Int(session[i]), gap: gap[i]) }
        }
        self = kept
    }
}

/// Reads the gaps of a report with their sessions.
package struct GapRowsQuery {
    package let db: any SQLReadConnection

    package init(db: any SQLReadConnection) {
        self.db = db
    }

    /// The gaps `DatabaseReader.gaps(_:)` reads (completed, non-interactive, foreground appearances of the
    /// analysed sessions the filter selects), per class and animation and, in the same pass,
    /// as rows with their session's index in `sessions`.
    package func gapsWithSessions(_ filter: SessionFilter, sessions: [SessionInfo]) throws -> ([GapSeries: [Int64]], GapRows) {
        let reader = DatabaseReader(db: db)
        let sessionIndex = Dictionary(sessions.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a })
        // By class id while reading (no String per appearance), names after.
        var byKey: [Int64: [Int64]] = [:]
        var rowKey: [Int64] = [], rowSession: [Int] = [], rowGap: [Int64] = []
        try reader.forEachCountedGap(filter) { cls, animated, session, gap in
            let key = cls * 2 + (animated ? 1 : 0)
            byKey[key, default: []].append(gap)
            guard let s = sessionIndex[session] else { return }
            rowKey.append(cls); rowSession.append(s); rowGap.append(gap)
        }
        let text = try reader.classNames()
        var series: [GapSeries: [Int64]] = [:]
        for (key, values) in byKey { series[GapSeries(cls: try text(key >> 1), animated: key & 1 == 1), default: []] += values }
        var rows = GapRows()
        var number: [Int64: Int32] = [:]
        for i in rowGap.indices {
            let c = rowKey[i]
            if number[c] == nil { number[c] = rows.classNumber(try text(c)) }
            rows.append(cls: number[c]!, session: rowSession[i], gap: rowGap[i])
        }
        return (series, rows)
    }
}
