import Foundation
import LCTraceModel
import LCTraceStore

/// One build of the selection (oldest first in `ReportView.builds`): its sessions, devices,
/// events and findings, so that builds with different session counts can be compared per
/// 100 sessions.
struct BuildSummary: Sendable {
    /// "5.2.1 (812)".
    package var name: String
    /// The sessions' `build` value.
    package var build: String?
    package var sessions = 0
    package var devices = 0
    package var events = 0
    /// Findings of its sessions at each severity.
    package var errors = 0, warnings = 0, infos = 0

    package var findings: Int { errors + warnings + infos }

    package func findings(_ severity: Severity) -> Int {
        switch severity {
        case .error: return errors
        case .warning: return warnings
        case .info: return infos
        }
    }

    /// The builds worth a column when there are too many to chart: the `limit` with the most
    /// sessions (the newer of equals), as indices into `builds`, oldest first.
    static func busiest(_ builds: [BuildSummary], limit: Int) -> [Int] {
        guard builds.count > limit else { return Array(builds.indices) }
        return builds.indices.sorted { (builds[$0].sessions, $0) > (builds[$1].sessions, $1) }.prefix(limit).sorted()
    }

    /// Findings at `severity` (all, when nil) per 100 sessions.
    func perHundredSessions(_ severity: Severity? = nil) -> Double {
        guard sessions > 0 else { return 0 }
        return Double(severity.map(findings) ?? findings) * 100 / Double(sessions)
    }
}

/// viewIsAppearing → viewDidAppear of one class, build by build (`ReportView.gapsByBuild`).
struct ClassGapsByBuild: Sendable {
    package var cls: String
    /// Every build together.
    package var all: GapStats
    /// The builds with appearances of the class, oldest first.
    package var builds: [BuildGaps]
}

/// One class's gaps in one build: percentiles and a distribution.
struct BuildGaps: Sendable {
    /// Index into `ReportView.builds`.
    package var build: Int
    package var stats: GapStats
    /// Appearances per `GapDistribution` bin.
    package var distribution: [Int]
}

/// Log-spaced bins for drawing a distribution of gaps: four per decade from 1 ms to 10 s,
/// then one for everything slower (the text histogram's seven buckets are too coarse to see
/// a shift between builds).
enum GapDistribution {
    /// Upper bounds (ns) of every bin but the last.
    package static let bounds: [Int64] = (0...16).map { Int64((pow(10, Double($0) / 4) * 1_000_000).rounded()) }

    static func bins(_ values: [Int64]) -> [Int] {
        var counts = Array(repeating: 0, count: bounds.count + 1)
        for v in values {
            // Binary search: the first bound above v.
            var lo = 0, hi = bounds.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if v < bounds[mid] { hi = mid } else { lo = mid + 1 }
            }
            counts[lo] += 1
        }
        return counts
    }
}

package extension ReportView {
    /// Per build (in build order) its sessions, devices, events and findings by severity
    /// (`findings`: per build rank, counted as they went by).
    internal static func buildSummaries(_ data: ReportData, rank: [Int], names: [String], values: [String?],
                                        findings: [[Severity: Int]]) -> [BuildSummary] {
        var out = names.indices.map { BuildSummary(name: names[$0], build: values[$0]) }
        var devices = Array(repeating: Set<String>(), count: names.count)
        for (i, s) in data.sessions.enumerated() {
            out[rank[i]].sessions += 1
            out[rank[i]].events += s.events
            if let d = s.device { devices[rank[i]].insert(d) }
        }
        for (b, set) in devices.enumerated() { out[b].devices = set.count }
        for (b, counts) in findings.enumerated() {
            out[b].errors = counts[.error] ?? 0
            out[b].warnings = counts[.warning] ?? 0
            out[b].infos = counts[.info] ?? 0
        }
        return out
    }

    /// The gap rows (when the report gathered them) by class and build, classes as `gapStats`.
    internal static func gapsByBuild(_ rows: GapRows?, gapStats: [GapStats], rank: [Int], builds: Int) -> [ClassGapsByBuild] {
        guard let rows, !rows.gap.isEmpty, builds > 0 else { return [] }
        var values: [Int: [Int64]] = [:]
        for i in rows.gap.indices {
            values[Int(rows.cls[i]) * builds + rank[Int(rows.session[i])], default: []].append(rows.gap[i])
        }
        let classIndex = Dictionary(rows.classes.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        return gapStats.compactMap { all in
            guard let c = classIndex[all.cls] else { return nil }
            let perBuild = (0..<builds).compactMap { b -> BuildGaps? in
                guard let v = values[c * builds + b], !v.isEmpty else { return nil }
                return BuildGaps(build: b, stats: GapStats(cls: all.cls, values: v), distribution: GapDistribution.bins(v))
            }
            return ClassGapsByBuild(cls: all.cls, all: all, builds: perBuild)
        }
    }
}
