import LCTraceModel

/// viewIsAppearing → viewDidAppear gaps (ns) of one series, 4 bytes each when they fit in a
/// UInt32 (0 to 4.29 s: nearly all) instead of 8 (issue 25 item 13): the statistics need every
/// value (exact percentiles), and a campaign has millions of them.
struct GapSamples: Sendable {
    /// Values 0...UInt32.max.
    private(set) var small: [UInt32] = []
    /// Every other value (negative, or above 4.29 s).
    private(set) var other: [Int64] = []

    var count: Int { small.count + other.count }

    mutating func append(_ v: Int64) {
        if v >= 0 && v <= Int64(UInt32.max) { small.append(UInt32(truncatingIfNeeded: v)) } else { other.append(v) }
    }

    mutating func append(contentsOf s: GapSamples) {
        small += s.small
        other += s.other
    }

    /// The values as Int64 (a build comparison, tests).
    var values: [Int64] { small.map(Int64.init) + other }

    /// The largest value (0 when none).
    var max: Int64 {
        guard count > 0 else { return 0 }
        return Swift.max(small.max().map(Int64.init) ?? .min, other.max() ?? .min)
    }

    func forEach(_ body: (Int64) -> Void) {
        for v in small { body(Int64(v)) }
        for v in other { body(v) }
    }

    /// The nearest-rank percentiles `ps` (ascending), in that order; reorders the values.
    mutating func percentiles(_ ps: [Double]) -> [Int64] {
        let others = other.sorted()
        let negatives = others.firstIndex { $0 >= 0 } ?? others.count
        var from = 0
        return ps.map { p in
            let k = Percentile.rank(count, p)
            defer { from = k }
            guard count > 0 else { return 0 }
            if k < negatives { return others[k] }
            if k < negatives + small.count {
                return Int64(Percentile.select(&small, at: k - negatives, from: Swift.max(from - negatives, 0)))
            }
            return others[k - small.count]
        }
    }
}

/// The gaps a report's statistics count, by class and animation and (for the statistics per
/// build of the HTML report) their sessions' build.
package struct GapTable: Sendable {
    struct Key: Hashable, Sendable {
        var cls: Int32
        var animated: Bool
        /// Index into `builds`; -1 when not kept by build.
        var build: Int32
    }

    private(set) var classes = Interned<String>()
    /// Build names ("5.2.1 (812)", `BuildOrder.name`).
    private(set) var builds = Interned<String>()
    private(set) var keys: [Key] = []
    private(set) var samples: [GapSamples] = []
    private var index: [Key: Int] = [:]

    package init() {}

    /// Gaps per series, as `DatabaseReader.gaps(_:)` reads them.
    package init(series: [GapSeries: [Int64]]) {
        for (s, values) in series {
            let c = classNumber(s.cls)
            for v in values { append(cls: c, animated: s.animated, build: -1, gap: v) }
        }
    }

    mutating func classNumber(_ name: String) -> Int32 { classes.number(name) }
    mutating func buildNumber(_ name: String) -> Int32 { builds.number(name) }

    /// The series of a key, added when new: what `append(series:gap:)` takes.
    mutating func series(cls: Int32, animated: Bool, build: Int32) -> Int {
        let key = Key(cls: cls, animated: animated, build: build)
        if let i = index[key] { return i }
        keys.append(key)
        samples.append(GapSamples())
        index[key] = keys.count - 1
        return keys.count - 1
    }

    mutating func append(series i: Int, gap: Int64) { samples[i].append(gap) }

    mutating func append(cls: Int32, animated: Bool, build: Int32, gap: Int64) {
        append(series: series(cls: cls, animated: animated, build: build), gap: gap)
    }

    var isEmpty: Bool { samples.allSatisfy { $0.count == 0 } }

    /// Per class and animation, every profile together (`ReportData.gapSeries`).
    var bySeries: [GapSeries: [Int64]] {
        var out: [GapSeries: [Int64]] = [:]
        for (k, s) in zip(keys, samples) { out[GapSeries(cls: classes[k.cls], animated: k.animated), default: []] += s.values }
        return out
    }

    /// The samples of the series `where` picks, together (a copy: the statistics reorder it).
    func merged(_ picked: (Key) -> Bool) -> GapSamples {
        merged(keys.indices.filter { picked(keys[$0]) })
    }

    /// The samples of these series together.
    func merged(_ series: [Int]) -> GapSamples {
        var out = GapSamples()
        for i in series { out.append(contentsOf: samples[i]) }
        return out
    }

    /// Per class (animated or not, every build), one class's values copied at a time.
    func statistics() -> [GapStats] {
        var used = Set<Int32>()
        for (k, s) in zip(keys, samples) where s.count > 0 { used.insert(k.cls) }
        return used.map { c in GapStats(cls: classes[c], samples: merged { $0.cls == c }) }
    }

    /// Only the gaps of class `name` (`--class`).
    mutating func keep(className name: String) {
        var kept = GapTable()
        for (k, s) in zip(keys, samples) where classes[k.cls] == name {
            let i = kept.series(cls: kept.classNumber(name), animated: k.animated,
                                build: k.build < 0 ? -1 : kept.buildNumber(builds[k.build]))
            kept.samples[i].append(contentsOf: s)
        }
        self = kept
    }

    /// The class and build names escaped for a terminal (two that become one are merged);
    /// `changed` set when one needed it.
    func escapedForTerminal(noting changed: inout Bool) -> GapTable {
        var any = false
        let names = classes.values.map { TerminalText.escaped($0, noting: &any) }
        let buildNames = builds.values.map { TerminalText.escaped($0, noting: &any) }
        guard any else { return self }
        changed = true
        var out = GapTable()
        for (k, s) in zip(keys, samples) {
            let i = out.series(cls: out.classNumber(names[Int(k.cls)]), animated: k.animated,
                               build: k.build < 0 ? -1 : out.buildNumber(buildNames[Int(k.build)]))
            out.samples[i].append(contentsOf: s)
        }
        return out
    }
}
