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
        for v in values { add(v, to: &counts) }
        return counts
    }

    static func bins(_ samples: GapSamples) -> [Int] {
        var counts = Array(repeating: 0, count: bounds.count + 1)
        samples.forEach { add($0, to: &counts) }
        return counts
    }

    private static func add(_ v: Int64, to counts: inout [Int]) {
        // Binary search: the first bound above v.
        var lo = 0, hi = bounds.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if v < bounds[mid] { hi = mid } else { lo = mid + 1 }
        }
        counts[lo] += 1
    }
}

package extension ReportView {
    /// Per build (in build order) its sessions, devices, events and findings by severity
    /// (`findings`: per build rank, counted as they went by).
    internal static func buildSummaries(_ sessions: ReportSessions, builds: BuildRanks, findings: [[Severity: Int]]) -> [BuildSummary] {
        var out = builds.names.indices.map { BuildSummary(name: builds.names[$0], build: builds.values[$0]) }
        var devices = Array(repeating: Set<Int32>(), count: builds.names.count)
        for i in sessions.indices {
            let b = builds.rank(ofSession: i)
            out[b].sessions += 1
            out[b].events += sessions.events[i]
            if sessions.devices[sessions.device[i]] != nil { devices[b].insert(sessions.device[i]) }
        }
        for (b, set) in devices.enumerated() { out[b].devices = set.count }
        for (b, counts) in findings.enumerated() {
            out[b].errors = counts[.error] ?? 0
            out[b].warnings = counts[.warning] ?? 0
            out[b].infos = counts[.info] ?? 0
        }
        return out
    }

    /// The gaps kept by build (when the report gathered them) by class and build, classes as
    /// `gapStats`; one class and build's values copied at a time.
    internal static func gapsByBuild(_ table: GapTable, gapStats: [GapStats], builds: BuildRanks) -> [ClassGapsByBuild] {
        guard builds.names.count > 0, table.keys.contains(where: { $0.build >= 0 }) else { return [] }
        let rankOf = Dictionary(builds.names.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        // Per class, per rank: the series.
        var series: [Int32: [Int: [Int]]] = [:]
        for (i, k) in table.keys.enumerated() where k.build >= 0 && table.samples[i].count > 0 {
            guard let rank = rankOf[table.builds[k.build]] else { continue }
            series[k.cls, default: [:]][rank, default: []].append(i)
        }
        let classIndex = Dictionary(table.classes.values.enumerated().map { ($1, Int32($0)) }, uniquingKeysWith: { a, _ in a })
        return gapStats.compactMap { all in
            guard let c = classIndex[all.cls], let ranks = series[c] else { return nil }
            let perBuild = ranks.keys.sorted().map { b in
                let v = table.merged(ranks[b]!)
                return BuildGaps(build: b, stats: GapStats(cls: all.cls, samples: v), distribution: GapDistribution.bins(v))
            }
            return ClassGapsByBuild(cls: all.cls, all: all, builds: perBuild)
        }
    }
}
