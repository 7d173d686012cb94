import Foundation
import LCTraceFormat
import LCTraceIngest
import LCTraceModel
import LCTraceRecorder

/// `lctrace-gen --via-recorder`: a simulated session written by the real writer. Each event
/// the simulator made becomes the `TraceRecorder` call an app (or the UIKit adapter) makes for
/// it, in order, with the simulator's time on the recorder's injected clock; the files are
/// the recorder's own (its names, session records, gzip members, `seq` and ids). Where the
/// simulator planted what only a broken device gives, the recorder's own paths give it: a
/// `seq` hole is dropped as a full buffer drops (counted, marked), a crash ends the files
/// without `sessionEnd` as a kill after the last flush does, a controller created before the
/// recorder started has an id this session never initialized.
///
/// The answer key is the simulator's, moved onto the recorder's ids and seqs: the files are
/// read back, their events matched one to one with the simulator's (any difference is an
/// error, not a corpus), and every label follows its instance.
enum RecorderReplay {
    /// What one session left: its files (moved into the corpus folder) and its answer key.
    struct Recorded {
        var files: [String]
        var labels: Labels
        var events: Int
    }

    struct ReplayError: Error, CustomStringConvertible {
        var description: String
    }

    /// Events between two synchronous flushes: each flush waits until its member is written, so
    /// members, rotations and seqs are the same at every run (the writer is never left to
    /// choose a moment).
    static let eventsPerFlush = 1000

    /// Replays `lines` (one session, as `SessionSimulator.run` made them; `segmentStarts`: the
    /// line indexes where the simulator rotated) through a recorder writing into `directory`.
    static func record(plan: SessionPlan, lines: [String], segmentStarts: [Int], labels: Labels,
                       eventsPerMember: Int, into directory: String) throws -> Recorded {
        let simulated = try decode(lines)
        guard let record = simulated.first, record.kind == .session else {
            throw ReplayError(description: "session \(plan.sid): the simulation does not start with its session record")
        }
        let scratch = URL(fileURLWithPath: directory).appendingPathComponent(".recording-\(plan.sid)", isDirectory: true)
        try? FileManager.default.removeItem(at: scratch)
        defer { try? FileManager.default.removeItem(at: scratch) }

        let clock = DrivenClock(nanoseconds: origin + UInt64(record.t))
        var configuration = RecorderConfiguration(session: sessionInfo(plan), directory: scratch, sessionID: plan.sid)
        configuration.clock = MonotonicClock { clock.now }
        let wall = try wallMilliseconds(plan.wall)
        configuration.wallClock = WallClock { wall }
        configuration.recordsLayout = true
        configuration.flushInterval = 86_400          // flushes only when asked (see eventsPerFlush)
        configuration.flushEventCount = 1 << 30
        configuration.bufferCapacity = 4 * eventsPerFlush
        configuration.rotateBytes = Int.max / 2       // rotations where the simulator put them
        configuration.rotateAge = 1e12
        configuration.maxStoredBytes = Int.max / 2
        let recorder = try TraceRecorder(configuration: configuration)

        var replay = Replay(recorder: recorder)
        let rotations = Set(segmentStarts.dropFirst())
        let perFlush = eventsPerMember > 0 ? min(eventsPerMember, eventsPerFlush) : eventsPerFlush
        var sinceFlush = 0
        var ended = false
        for (index, e) in simulated.enumerated().dropFirst() {
            if rotations.contains(index) {
                // The simulator's rotated segment: the recorder's next part, its record repeated.
                guard recorder.finishCurrentFile(timeout: 30) else { throw ReplayError(description: "session \(plan.sid): the writer did not rotate") }
                sinceFlush = 0
                if e.kind == .session { continue }
            }
            if e.kind == .session { continue }
            let previous = simulated[index - 1].seq
            if e.seq > previous + 1 { recorder.dropAsIfBufferFull(Int(e.seq - previous - 1)) }
            clock.now = origin + UInt64(max(0, e.t))
            if e.kind == .sessionEnd {
                let reason = SessionEndReason(rawValue: e.detail ?? "").map(endReason) ?? .stopped
                guard recorder.stop(reason: reason, timeout: 30) else { throw ReplayError(description: "session \(plan.sid): the writer did not finish") }
                ended = true
                break
            }
            try replay.call(e)
            sinceFlush += 1
            if sinceFlush >= perFlush {
                guard recorder.flush(timeout: 30) else { throw ReplayError(description: "session \(plan.sid): the writer did not flush") }
                sinceFlush = 0
            }
        }
        if !ended, !recorder.endAsIfKilled(timeout: 30) {
            throw ReplayError(description: "session \(plan.sid): the writer did not finish")
        }

        // Read the files back and follow every simulated event to the one the recorder wrote.
        let names = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasSuffix(".jsonl.gz") }.sorted()
        var written: [TraceEvent] = []
        for name in names { written += try readBack(scratch.appendingPathComponent(name)) }
        written.sort { $0.seq < $1.seq }
        let seqs = try match(simulated: simulated, written: written, ids: replay, sid: plan.sid)
        var moved: [String] = []
        for name in names {
            let target = (directory as NSString).appendingPathComponent(name)
            try? FileManager.default.removeItem(atPath: target)
            try FileManager.default.moveItem(atPath: scratch.appendingPathComponent(name).path, toPath: target)
            moved.append(name)
        }
        return Recorded(files: moved, labels: remap(labels, seqs: seqs, ids: replay), events: written.count)
    }

    /// The recorder's clock reading at the simulator's t 0 (any origin will do: it subtracts
    /// the session's first reading).
    static let origin: UInt64 = 1_000_000_000_000

    // MARK: Calls

    /// The recorder and the simulator's controllers as the recorder knows them.
    struct Replay {
        let recorder: TraceRecorder
        /// The recorder's id of each simulated instance, by (address, seq of its init): an
        /// address the simulator reuses is a fresh instance, as in UIKit.
        var byInstance: [InstanceAt: InstanceID] = [:]
        /// The instance each address names now.
        var current: [String: InstanceAt] = [:]
        /// Controllers the session never saw initialized, numbered far from the recorder's own.
        var nextUninitialized: UInt64 = 1 << 40

        struct InstanceAt: Hashable { var address: String; var since: Int64 }

        /// The id of `address` as the recorder knows it, or one it never initialized (the
        /// simulator's controller created before the recording started).
        mutating func id(_ address: String, at seq: Int64) -> InstanceID {
            if let at = current[address], let id = byInstance[at] { return id }
            let at = InstanceAt(address: address, since: seq)
            let id = InstanceID(number: nextUninitialized)
            nextUninitialized += 1
            current[address] = at
            byInstance[at] = id
            return id
        }

        mutating func call(_ e: TraceEvent) throws {
            let r = recorder
            func vc() throws -> InstanceID {
                guard let address = e.vc else { throw ReplayError(description: "seq \(e.seq): \(e.name) without vc") }
                return id(address, at: e.seq)
            }
            func other() -> InstanceID? { e.other.map { id($0, at: e.seq) } }
            func flag(_ f: EventFlags) -> Bool { e.has(f) }
            func optionalFlag(_ f: EventFlags) -> Bool? { e.flags.contains(.present(f)) ? e.has(f) : nil }
            let attrs = Attributes(e.attrs)
            switch e.kind {
            case .`init`:
                guard let address = e.vc else { throw ReplayError(description: "seq \(e.seq): init without vc") }
                let id = r.initialized(cls: e.cls ?? "", uikit: attrs.string("uikit"))
                let at = InstanceAt(address: address, since: e.seq)
                current[address] = at
                byInstance[at] = id
            case .loadView: r.loadView(try vc())
            case .viewDidLoad: r.viewDidLoad(try vc())
            case .viewWillAppear:
                r.viewWillAppear(try vc(), animated: flag(.animated), isMovingToParent: flag(.isMovingToParent),
                                 isBeingPresented: flag(.isBeingPresented), interactive: optionalFlag(.interactive))
            case .viewIsAppearing:
                r.viewIsAppearing(try vc(), animated: flag(.animated), bounds: attrs.size("bounds"), traits: attrs.traits("traits"))
            case .viewDidAppear:
                r.viewDidAppear(try vc(), animated: flag(.animated), isMovingToParent: flag(.isMovingToParent),
                                isBeingPresented: flag(.isBeingPresented))
            case .viewWillDisappear:
                r.viewWillDisappear(try vc(), animated: flag(.animated), isMovingFromParent: flag(.isMovingFromParent),
                                    isBeingDismissed: flag(.isBeingDismissed), interactive: optionalFlag(.interactive))
            case .viewDidDisappear:
                r.viewDidDisappear(try vc(), animated: flag(.animated), isMovingFromParent: flag(.isMovingFromParent),
                                   isBeingDismissed: flag(.isBeingDismissed))
            case .`deinit`: r.deinitialized(try vc())
            case .viewWillLayoutSubviews: r.viewWillLayoutSubviews(try vc())
            case .viewDidLayoutSubviews: r.viewDidLayoutSubviews(try vc())
            case .traitChange:
                r.traitChange(try vc(), traits: attrs.traits("traits") ?? Traits())
            case .memoryWarning: r.memoryWarning(e.vc.map { id($0, at: e.seq) })
            case .addChild:
                guard let parent = other() else { throw ReplayError(description: "seq \(e.seq): addChild without parent") }
                r.addChild(try vc(), parent: parent)
            case .willMoveToParent: r.willMoveToParent(try vc(), parent: other())
            case .didMoveToParent: r.didMoveToParent(try vc(), parent: other())
            case .removeFromParent: r.removeFromParent(try vc(), parent: other())
            case .viewAttached: r.viewAttached(try vc(), host: other())
            case .viewDetached: r.viewDetached(try vc(), host: other())
            case .present:
                guard let presented = other() else { throw ReplayError(description: "seq \(e.seq): present without presented") }
                r.present(presented, by: try vc(), style: style(e.detail), animated: flag(.animated),
                          interactive: optionalFlag(.interactive))
            case .dismiss: r.dismiss(try vc(), animated: flag(.animated), interactive: optionalFlag(.interactive))
            case .push, .pop:
                guard let child = other() else { throw ReplayError(description: "seq \(e.seq): \(e.name) without child") }
                if e.kind == .push {
                    r.push(child, on: try vc(), animated: flag(.animated), interactive: flag(.interactive))
                } else {
                    r.pop(child, from: try vc(), animated: flag(.animated), interactive: flag(.interactive))
                }
            case .windowRoot:
                r.windowRoot(e.vc.map { id($0, at: e.seq) }, old: attrs.string("old").map { id($0, at: e.seq) },
                             scene: attrs.string("scene"))
            case .sceneWillConnect, .sceneDidBecomeActive, .sceneWillResignActive, .sceneWillEnterForeground,
                 .sceneDidEnterBackground, .sceneDidDisconnect:
                r.scene(sceneEvent(e.kind), scene: e.detail ?? "")
            case .appDidFinishLaunching, .appDidBecomeActive, .appWillResignActive, .appDidEnterBackground,
                 .appWillEnterForeground, .appWillTerminate:
                r.app(appEvent(e.kind))
            case .mark: r.mark(e.detail ?? "")
            default:
                throw ReplayError(description: "seq \(e.seq): the recorder has no call for '\(e.name)'")
            }
        }
    }

    // MARK: Matching the files with the simulation

    /// Recorder seq of each simulated seq. The recorder's own events (the session records of
    /// its parts, its `recorder.*` marks) have no simulated counterpart; every other event must
    /// be the simulated one, in order, with the same name, controllers, class, detail, flags
    /// and time.
    static func match(simulated: [TraceEvent], written: [TraceEvent], ids: Replay, sid: String) throws -> [Int64: Int64] {
        var seqs: [Int64: Int64] = [simulated[0].seq: written.first?.seq ?? 0]
        let expected = simulated.dropFirst().filter { $0.kind != .session }
        let own = written.dropFirst().filter { !($0.kind == .session || ($0.kind == .mark && ($0.detail ?? "").hasPrefix("recorder."))) }
        guard expected.count == own.count else {
            throw ReplayError(description: "session \(sid): the recorder wrote \(own.count) events for \(expected.count) simulated")
        }
        let t0 = simulated[0].t
        var inverse: [UInt64: String] = [:]
        for (at, id) in ids.byInstance { inverse[id.number] = at.address }
        func address(_ written: String?) -> String? {
            guard let written, written.hasPrefix("vc"), let n = UInt64(written.dropFirst(2)) else { return written }
            return inverse[n] ?? written
        }
        let values: [EventFlags] = [.animated, .isMovingToParent, .isBeingPresented, .isMovingFromParent, .isBeingDismissed, .interactive]
        for (s, w) in zip(expected, own) {
            let same = s.name == w.name && s.vc == address(w.vc) && s.other == address(w.other)
                && (s.kind != .`init` || s.cls == w.cls) && s.detail == w.detail && s.t - t0 == w.t
                && values.allSatisfy { s.has($0) == w.has($0) }
            guard same else {
                throw ReplayError(description: "session \(sid): simulated seq \(s.seq) (\(s.name) \(s.vc ?? "")) was written as seq \(w.seq) (\(w.name) \(w.vc ?? ""))")
            }
            seqs[s.seq] = w.seq
        }
        return seqs
    }

    /// The answer key on the recorder's ids and seqs.
    static func remap(_ labels: Labels, seqs: [Int64: Int64], ids: Replay) -> Labels {
        func instance(_ vc: String?, _ since: Int64?) -> (String?, Int64?) {
            guard let vc, let since else { return (vc, since.flatMap { seqs[$0] }) }
            let id = ids.byInstance[Replay.InstanceAt(address: vc, since: since)]
            return (id.map(String.init(describing:)) ?? vc, seqs[since] ?? since)
        }
        func item(_ i: Labels.Item) -> Labels.Item {
            var i = i
            (i.vc, i.since) = instance(i.vc, i.since)
            return i
        }
        var out = labels
        out.expected = labels.expected.map(item)
        out.alsoAcceptable = labels.alsoAcceptable.map(item)
        out.expectedWithMaxLive = labels.expectedWithMaxLive.map(item)
        out.mustNotFlag = labels.mustNotFlag.map { m in
            var m = m
            let (vc, since) = instance(m.vc, m.since)
            m.vc = vc ?? m.vc
            m.since = since ?? m.since
            return m
        }
        return out
    }

    // MARK: Reading

    static func decode(_ lines: [String]) throws -> [TraceEvent] {
        let decoder = EventDecoder()
        return try lines.enumerated().map { index, line in
            var bytes = Array(line.utf8)
            switch bytes.withUnsafeMutableBytes({ decoder.decode(UnsafeRawBufferPointer($0)) }) {
            case .success(let e): return e
            case .failure(let reason): throw ReplayError(description: "simulated line \(index + 1): \(reason)")
            }
        }
    }

    /// A file the recorder wrote, read as `lctrace ingest` reads it (its gzip reader, line
    /// splitter and decoder): any reject or damage is a recorder bug.
    static func readBack(_ url: URL) throws -> [TraceEvent] {
        let input = try TraceInput(location: .file(url.path))
        let decoder = EventDecoder()
        var events: [TraceEvent] = []
        var problem: String?
        LineReader(input: input).forEachLine { line in
            if line.bytes.isEmpty { return true }
            switch decoder.decode(line.bytes) {
            case .success(let e): events.append(e)
            case .failure(let reason): problem = "line \(line.number): \(reason)"
            }
            return problem == nil
        }
        if let damage = input.damage { problem = problem ?? "\(damage)" }
        if let problem { throw ReplayError(description: "\(url.lastPathComponent): the recorder's file does not read back: \(problem)") }
        return events
    }

    // MARK: Values

    static func sessionInfo(_ plan: SessionPlan) -> SessionInfo {
        SessionInfo(app: plan.app, appVersion: plan.appVersion, build: plan.build, os: "iOS", osVersion: plan.osVersion,
                    sdk: plan.sdk, device: plan.device,
                    extensionPoint: plan.plants.contains(.appExtension) ? SessionSimulator.extensionPoint : nil)
    }

    /// `2026-11-02T10:15:03.120Z` as milliseconds since 1970.
    static func wallMilliseconds(_ text: String) throws -> Int64 {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = formatter.date(from: text) else { throw ReplayError(description: "wall '\(text)' is not an RFC 3339 time") }
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    static func style(_ name: String?) -> PresentationStyle {
        name.flatMap(PresentationStyleName.init(rawValue:)).flatMap(PresentationStyle.init(name:)) ?? .automatic
    }

    static func endReason(_ reason: SessionEndReason) -> EndReason {
        switch reason {
        case .stopped: return .stopped
        case .terminate: return .terminate
        case .backgroundKill: return .backgroundKill
        }
    }

    static func sceneEvent(_ kind: EventKind) -> SceneEvent {
        switch kind {
        case .sceneWillConnect: return .willConnect
        case .sceneDidBecomeActive: return .didBecomeActive
        case .sceneWillResignActive: return .willResignActive
        case .sceneWillEnterForeground: return .willEnterForeground
        case .sceneDidEnterBackground: return .didEnterBackground
        default: return .didDisconnect
        }
    }

    static func appEvent(_ kind: EventKind) -> AppEvent {
        switch kind {
        case .appDidFinishLaunching: return .didFinishLaunching
        case .appDidBecomeActive: return .didBecomeActive
        case .appWillResignActive: return .willResignActive
        case .appDidEnterBackground: return .didEnterBackground
        case .appWillEnterForeground: return .willEnterForeground
        default: return .willTerminate
        }
    }

    /// The rare keys of a decoded event (`attrs`: bounds, traits, uikit, old, scene).
    struct Attributes {
        let object: [String: Any]
        init(_ text: String?) {
            object = text.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] } ?? [:]
        }
        func string(_ key: String) -> String? { object[key] as? String }
        func size(_ key: String) -> ViewSize? {
            guard let pair = object[key] as? [NSNumber], pair.count == 2 else { return nil }
            return ViewSize(width: pair[0].doubleValue, height: pair[1].doubleValue)
        }
        func traits(_ key: String) -> Traits? {
            guard let t = object[key] as? [String: Any] else { return nil }
            return Traits(horizontal: (t["h"] as? String).flatMap(Traits.SizeClass.init(rawValue:)),
                          vertical: (t["v"] as? String).flatMap(Traits.SizeClass.init(rawValue:)),
                          style: (t["style"] as? String).flatMap(Traits.Style.init(rawValue:)))
        }
    }
}

/// The simulator's time, read by the recorder on any of its threads.
final class DrivenClock: @unchecked Sendable {
    private let lock = NSLock()
    private var value: UInt64
    init(nanoseconds: UInt64) { value = nanoseconds }
    var now: UInt64 {
        get { lock.lock(); defer { lock.unlock() }; return value }
        set { lock.lock(); value = newValue; lock.unlock() }
    }
}
