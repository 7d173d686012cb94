import Foundation
import LCTraceModel

/// Settings of a generated corpus.
package struct CorpusOptions: Sendable {
    package var seed: UInt64 = 1
    package var sessions = 8
    /// Sessions per device file.
    package var sessionsPerFile = 2
    package var scenarios = 40
    /// Chance that a session gets each bug, and each look-alike.
    package var bugRate = 0.25
    package var lookAlikeRate = 0.4
    /// Repeat the session record (new rotated file) about every this many events; 0: never.
    package var rotateEvery = 0
    /// Lines per gzip member; 0: one member per file.
    package var linesPerMember = 0
    package var gzip = true
    /// Write every session through LCTraceRecorder (`RecorderReplay`): the recorder's files,
    /// names and ids, one session per file set (`sessionsPerFile` and `gzip` do not apply).
    package var viaRecorder = false
    /// Every session's app, version and build (else drawn per session). With a build, the
    /// session ids are the build's own: two builds of one seed never share a session.
    package var app: String?
    package var appVersion: String?
    package var build: String?
    /// A regression planted once in every session (`SessionPlan.regressions`).
    package var regressions: [Plant] = []
    package init() {}
}

/// Writes corpora: the fixed `SampleTraces/` set, or random ones of any size for tests and
/// benchmarks, each with its answer key (written beside the folder, `DIR.expected.json`).
package enum CorpusWriter {
    static let apps = ["com.example.shop", "com.example.news", "com.example.mail"]
    static let devices = ["iPhone16,2", "iPhone15,3", "iPhone17,1", "iPad14,5"]
    static let bugs: [Plant] = [.orphanView, .missingDidMove, .missingWillMove, .viewLeftBehind, .attachBeforeAdd,
                                .deinitWhileVisible, .doubleAppear, .stuckAppearing, .disappearWithoutAppear,
                                .lifecycleOrder, .leakPop, .leakDismiss, .leakWithChildren, .leakUnconfirmed,
                                .slowAppearance, .missingIsAppearing, .unknownInstance]
    static let lookAlikes: [Plant] = [.cancelledInteractivePop, .completedInteractivePop, .cancelledSheetSwipe,
                                      .sheetPresenter, .backgrounding, .visibleAtEnd, .cachedReshow,
                                      .lateDeinitInGrace, .reusedAddress, .quickEndAfterAdd]

    /// The id of session `sid` in build `build`: another session of the same draws.
    static func sid(_ sid: String, ofBuild build: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325   // FNV-1a
        for byte in (sid + "|" + build).utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        var rng = SplitMix64(seed: hash)
        return Self.sid(&rng)
    }

    /// A deterministic session id (UUID-shaped) from the seed and index.
    package static func sid(_ rng: inout SplitMix64) -> String {
        let a = rng.next(), b = rng.next()
        let hex = String(format: "%016llx%016llx", a, b)
        let c = Array(hex)
        return "\(String(c[0..<8]))-\(String(c[8..<12]))-\(String(c[12..<16]))-\(String(c[16..<20]))-\(String(c[20..<32]))"
    }

    /// The scenarios rules 1.1 added, drawn from a stream of their own so that the original
    /// draws (and the corpora of a given seed before them) stay as they were.
    static let bugs11: [Plant] = [.leakInChain]
    static let lookAlikes11: [Plant] = [.chainDismissal, .containerMove, .overCurrentContext, .interactiveDismiss]

    /// The scenarios rules 1.2 added, from a third stream (the corpora of a given seed keep
    /// every earlier draw): multi-window iPads, search controllers, window root changes,
    /// chains presented by children, files lost mid-push, interactive swipes known from the
    /// appearance events, pushes under a dragged sheet.
    static let bugs12: [Plant] = [.leakBesideBackgroundWindow, .leakRootSwapWithSheet, .leakInChildChain,
                                  .slowPushUnderDraggedSheet]
    static let lookAlikes12: [Plant] = [.deinitInGraceBesideBackgroundWindow, .cancelledSearch, .rootSwapFreed,
                                        .pushAcrossLostEvents, .interactiveSwipeWithoutPop]
    /// Plants that need a second scene: an iPad's, in a session with a scene life cycle.
    package static let multiWindow: Set<Plant> = [.leakBesideBackgroundWindow, .deinitInGraceBesideBackgroundWindow]
    static let iPads = ["iPad14,5", "iPad13,16", "iPad16,3"]

    /// Random plans: every session draws bugs and look-alikes at the given rates.
    package static func randomPlans(_ options: CorpusOptions) -> [SessionPlan] {
        var rng = SplitMix64(seed: options.seed)
        var rng11 = SplitMix64(seed: options.seed ^ 0x5275_6c65_7331_2e31)
        var rng12 = SplitMix64(seed: options.seed ^ 0x5275_6c65_7331_2e32)
        return (0..<options.sessions).map { i in
            var plants: [Plant] = bugs.filter { _ in rng.chance(options.bugRate) }
            plants += lookAlikes.filter { _ in rng.chance(options.lookAlikeRate) }
            if rng.chance(options.bugRate / 3) { plants.append(.lostEvents) }
            if rng.chance(options.bugRate / 3) { plants.append(.clockBackwards) }
            var plan = SessionPlan(sid: sid(&rng), plants: plants, scenarios: options.scenarios)
            plan.app = rng.pick(apps)
            plan.appVersion = "5.\(rng.int(0...3)).\(rng.int(0...9))"
            plan.build = String(800 + rng.int(0...40))
            plan.device = rng.pick(devices)
            plan.osVersion = rng.pick(["26.4", "27.0", "27.1"])
            let legacy = rng.chance(options.bugRate / 2)
            plan.sdk = legacy ? "26.2" : "27.0"
            if legacy { plan.plants.append(.appDelegate) } else if rng.chance(options.bugRate / 4) { plan.plants.append(.noScene) }
            plan.wall = String(format: "2026-11-%02dT%02d:%02d:%02d.%03dZ", rng.int(1...28), rng.int(0...23), rng.int(0...59), rng.int(0...59), rng.int(0...999))
            plan.rotateEvery = options.rotateEvery
            if let app = options.app { plan.app = app }
            if let version = options.appVersion { plan.appVersion = version }
            if let build = options.build {
                plan.build = build
                plan.sid = Self.sid(plan.sid, ofBuild: build)
            }
            plan.regressions = options.regressions
            plan.cleanEnd = rng.chance(0.7)
            plan.plants += bugs11.filter { _ in rng11.chance(options.bugRate) }
            plan.plants += lookAlikes11.filter { _ in rng11.chance(options.lookAlikeRate) }
            plan.omitsNil = rng11.chance(0.2)
            if !legacy && !plan.plants.contains(.noScene) && rng11.chance(options.bugRate / 4) {
                plan.plants.append(.appExtension)
            }
            var plants12 = bugs12.filter { _ in rng12.chance(options.bugRate) }
            plants12 += lookAlikes12.filter { _ in rng12.chance(options.lookAlikeRate) }
            let noScene = plan.plants.contains(.noScene) || plan.plants.contains(.appExtension)
            // A second window needs scenes; an extension has no window root to replace.
            plants12.removeAll { (noScene && multiWindow.contains($0))
                || (plan.plants.contains(.appExtension) && SessionSimulator.atLaunch.contains($0)) }
            if plants12.contains(where: multiWindow.contains) { plan.device = rng12.pick(iPads) }
            plan.plants += plants12
            _ = i
            return plan
        }
    }

    /// The fixed plans behind `SampleTraces/`: every bug and every look-alike at least once.
    package static func samplePlans() -> [SessionPlan] {
        var rng = SplitMix64(seed: 2026)
        func plan(_ plants: [Plant], app: String, version: String, build: String, device: String,
                  os: String = "27.1", sdk: String = "27.0", day: Int, rotate: Int = 0, clean: Bool = true) -> SessionPlan {
            var p = SessionPlan(sid: sid(&rng), plants: plants, scenarios: 30)
            p.app = app; p.appVersion = version; p.build = build; p.device = device; p.osVersion = os; p.sdk = sdk
            p.wall = String(format: "2026-11-%02dT09:%02d:11.250Z", day, day * 2)
            p.rotateEvery = rotate
            p.cleanEnd = clean
            return p
        }
        return [
            plan([.orphanView, .missingDidMove, .leakPop, .cancelledInteractivePop, .lateDeinitInGrace, .backgrounding, .visibleAtEnd],
                 app: "com.example.shop", version: "5.2.0", build: "806", device: "iPhone16,2", day: 2, rotate: 160),
            plan([.missingWillMove, .viewLeftBehind, .attachBeforeAdd, .leakDismiss, .cancelledSheetSwipe, .sheetPresenter, .reusedAddress],
                 app: "com.example.news", version: "5.2.1", build: "812", device: "iPhone15,3", day: 3),
            plan([.deinitWhileVisible, .doubleAppear, .disappearWithoutAppear, .lifecycleOrder, .completedInteractivePop, .cachedReshow],
                 app: "com.example.mail", version: "5.2.1", build: "812", device: "iPhone17,1", day: 4),
            plan([.leakWithChildren, .slowAppearance, .missingIsAppearing, .instanceGrowth, .stuckAppearing],
                 app: "com.example.shop", version: "5.2.1", build: "814", device: "iPad14,5", day: 5),
            plan([.appDelegate, .backgrounding, .leakPop, .leakUnconfirmed],
                 app: "com.example.news", version: "5.1.9", build: "798", device: "iPhone15,3", os: "26.4", sdk: "26.2", day: 6, clean: false),
            plan([.noScene, .quickEndAfterAdd],
                 app: "com.example.mail", version: "5.2.2", build: "815", device: "iPhone16,2", day: 7),
            plan([.lostEvents, .unknownInstance, .clockBackwards, .leakPop, .lateDeinitInGrace],
                 app: "com.example.shop", version: "5.2.2", build: "816", device: "iPhone17,1", day: 8, rotate: 200),
            plan([.backgrounding, .visibleAtEnd, .sheetPresenter],
                 app: "com.example.news", version: "5.2.2", build: "816", device: "iPad14,5", day: 9),
        ]
    }

    /// Simulates `plans` and writes them under `directory`, `sessionsPerFile` sessions a
    /// device file; rotated segments go to `-partN` files. Returns the answer key.
    @discardableResult
    package static func write(plans: [SessionPlan], to directory: String, options: CorpusOptions,
                             names: [String]? = nil) throws -> (labels: Labels, events: Int, files: [String]) {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var labels = Labels()
        var events = 0
        var files: [String] = []
        var rng = SplitMix64(seed: options.seed &+ 77)
        let groups = stride(from: 0, to: plans.count, by: max(1, options.sessionsPerFile)).map {
            Array(plans[$0..<min($0 + max(1, options.sessionsPerFile), plans.count)])
        }
        if options.viaRecorder {
            for plan in plans {
                let sim = SessionSimulator(plan: plan, seed: rng.next())
                let lines = sim.run()
                let recorded = try RecorderReplay.record(plan: plan, lines: lines, segmentStarts: sim.segmentStarts, labels: sim.labels,
                                                         eventsPerMember: options.linesPerMember, into: directory)
                labels.merge(recorded.labels)
                events += recorded.events
                files += recorded.files
            }
            return (labels, events, files)
        }
        for (g, group) in groups.enumerated() {
            // segments[k] holds segment k of every session in the group.
            var segments: [[String]] = []
            for plan in group {
                let sim = SessionSimulator(plan: plan, seed: rng.next())
                let lines = sim.run()
                labels.merge(sim.labels)
                events += lines.count
                let starts = sim.segmentStarts + [lines.count]
                for k in 0..<(starts.count - 1) {
                    if segments.count <= k { segments.append([]) }
                    segments[k] += lines[starts[k]..<starts[k + 1]]
                }
            }
            let base = names.map { $0[g] } ?? String(format: "device-%03d", g)
            for (k, lines) in segments.enumerated() {
                let name = base + (segments.count > 1 ? "-part\(k + 1)" : "") + (options.gzip ? ".jsonl.gz" : ".jsonl")
                let path = (directory as NSString).appendingPathComponent(name)
                let writer = try TraceFileWriter(path: path, gzip: options.gzip)
                for (i, line) in lines.enumerated() {
                    writer.write(line + "\n")
                    if options.linesPerMember > 0 && (i + 1) % options.linesPerMember == 0 { writer.endMember() }
                }
                writer.close()
                files.append(name)
            }
        }
        return (labels, events, files)
    }

    /// Writes the `SampleTraces/` set (fixed plans, one device file each, gzip members of
    /// 120 lines, plus the bad-lines file) and returns its answer key.
    @discardableResult
    package static func writeSample(to directory: String, viaRecorder: Bool = false) throws -> (labels: Labels, events: Int, files: [String]) {
        var options = CorpusOptions()
        options.viaRecorder = viaRecorder
        options.seed = 2026
        options.sessionsPerFile = 1
        options.linesPerMember = 120
        let plans = samplePlans()
        let names = plans.enumerated().map { String(format: "device-%03d-%@", $0.offset + 1, String($0.element.sid.prefix(8))) }
        var (labels, events, files) = try write(plans: plans, to: directory, options: options, names: names)
        let bad = try writeBadLinesFile(to: (directory as NSString).appendingPathComponent("with-bad-lines.jsonl"), seed: 99)
        labels.merge(bad.labels)
        files.append("with-bad-lines.jsonl")
        return (labels, events, files)
    }

    /// A plain JSON-lines file of one small session interleaved with bad lines of every kind
    /// (the good ones load, each bad one becomes a reject naming its line and reason).
    package static func writeBadLinesFile(to path: String, seed: UInt64) throws -> (labels: Labels, badLines: Int) {
        var rng = SplitMix64(seed: seed)
        var plan = SessionPlan(sid: sid(&rng), plants: [.leakPop], scenarios: 6)
        plan.wall = "2026-11-10T12:00:00.000Z"
        let sim = SessionSimulator(plan: plan, seed: rng.next())
        let lines = sim.run()
        let bad = [
            "{not json}",
            "{\"v\":1,\"sid\":\"x\",\"seq\":\"seven\",\"t\":1,\"ev\":\"init\",\"vc\":\"0x1\",\"cls\":\"A\"}",
            "{\"v\":1,\"seq\":1,\"t\":1,\"ev\":\"init\"}",
            "{\"v\":2,\"sid\":\"x\",\"seq\":1,\"t\":1,\"ev\":\"init\",\"vc\":\"0x1\",\"cls\":\"A\"}",
            "[1,2,3]",
            "{\"v\":1,\"sid\":\"x\",\"seq\":6,\"t\":-5,\"ev\":\"init\",\"vc\":\"0x1\",\"cls\":\"A\"}",
            "{\"v\":1,\"sid\":\"x\",\"seq\":7,\"t\":1,\"ev\":\"viewWillAppear\"}",
            "{\"v\":1,\"sid\":\"x\",\"seq\":8,\"t\":1,\"ev\":\"init\",\"vc\":\"0x1\",\"cls\":\"A\",\"animated\":\"yes\"}",
        ]
        var out: [String] = []
        var b = 0
        for (i, line) in lines.enumerated() {
            out.append(line)
            if i % 9 == 4 && b < bad.count { out.append(bad[b]); b += 1 }
        }
        while b < bad.count { out.append(bad[b]); b += 1 }
        var data = Data(out.joined(separator: "\n").utf8)
        data.append(contentsOf: [0x0a])
        // One line that is not UTF-8.
        data.append(contentsOf: Array("{\"v\":1,\"sid\":\"x\",\"seq\":9,\"t\":1,\"ev\":\"init\",\"vc\":\"0x1\",\"cls\":\"".utf8) + [0xff, 0xfe] + Array("\"}\n".utf8))
        try data.write(to: URL(fileURLWithPath: path))
        return (sim.labels, bad.count + 1)
    }

    /// The answer key as JSON: expected findings, acceptable extras, look-alikes (scripts/score-findings.py reads it).
    package static func expectedJSON(_ labels: Labels) -> String {
        func item(_ i: Labels.Item) -> String {
            "{\"rule\":\"\(i.rule)\",\"session\":\"\(i.session)\",\"vc\":\(i.vc.map { "\"\($0)\"" } ?? "null"),\"since\":\(i.since.map(String.init) ?? "null")}"
        }
        var out = "{\n \"about\": \"Answer key written by lctrace-gen while it generated these traces. Findings match on (rule, session, vc, since).\",\n"
        out += " \"scored_rules\": [" + labels.scoredRules.sorted().map { "\"\($0)\"" }.joined(separator: ",") + "],\n"
        out += " \"expected\": [\n  " + labels.expected.map(item).joined(separator: ",\n  ") + "\n ],\n"
        out += " \"also_acceptable_leaks\": [" + labels.alsoAcceptable.map(item).joined(separator: ", ") + "],\n"
        out += " \"expected_with_max_live\": [" + labels.expectedWithMaxLive.map(item).joined(separator: ", ") + "],\n"
        out += " \"must_not_flag\": [\n  " + labels.mustNotFlag.map {
            "{\"session\":\"\($0.session)\",\"vc\":\"\($0.vc)\",\"since\":\($0.since),\"why\":\"\($0.why)\"}"
        }.joined(separator: ",\n  ") + "\n ]\n}\n"
        return out
    }
}
