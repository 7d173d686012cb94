import Foundation
import LCTraceFormat

/// Records one session of view-controller life-cycle events as trace format v1 files.
///
/// Every call is safe from any thread and never waits for I/O: it stamps the event
/// (`seq`, `t`) and puts it in a bounded buffer that a background thread writes out, one
/// gzip member per flush. A full buffer drops the event and counts it (the `seq` hole is
/// what lctrace reports as lost events). This is the manual API, one call per event of the
/// format, for apps that do not want swizzling, custom containers, tests and simulators;
/// on iOS, `UIKitRecording` calls it from UIKit's callbacks.
///
///     let recorder = try TraceRecorder(configuration: RecorderConfiguration())
///     let list = recorder.initialized(cls: "ProductListViewController", uikit: "UIViewController")
///     recorder.viewDidLoad(list)
///     recorder.viewWillAppear(list, animated: false, isMovingToParent: false, isBeingPresented: false)
///     …
///     recorder.stop()
public final class TraceRecorder: Sendable {
    /// A mark's name is cut to this many bytes (of UTF-8; a character cut in two is replaced).
    public static let maxMarkBytes = 4096

    /// The `recorder` key of the session record.
    public static let recorderName = "lctrace-recorder/1.0"

    public let sessionID: String
    /// Where the files go.
    public let directory: URL
    public let configuration: RecorderConfiguration
    let buffer: EventBuffer
    let writer: TraceWriter
    private let instanceCounter = InstanceCounter()

    /// Starts a session: writes its record (seq 0) and starts the writer thread.
    public init(configuration: RecorderConfiguration) throws {
        guard (1...128).contains(configuration.sessionID.count) else {
            throw RecorderError.badSessionID(configuration.sessionID.count)
        }
        self.configuration = configuration
        sessionID = configuration.sessionID
        directory = configuration.directory ?? RecorderConfiguration.defaultDirectory
        try TraceDirectory.prepare(directory)
        buffer = EventBuffer(capacity: configuration.bufferCapacity, wakeCount: configuration.flushEventCount,
                             clock: configuration.clock)
        let wall = configuration.wallClock.milliseconds()
        let encoder = LineEncoder(sid: configuration.sessionID, session: configuration.session,
                                  wall: UTCTime(milliseconds: wall).rfc3339)
        writer = TraceWriter(buffer: buffer, directory: directory, encoder: encoder, configuration: configuration, wall: wall)
        buffer.record(RecordedEvent(.session))
        writer.enforceCapAtStart()
        writer.start()
    }

    deinit {
        // Dropped without stop(): end the session and let the thread finish on its own.
        _ = buffer.recordLast(sessionEnd(.stopped), timeoutNanoseconds: 0)
        writer.requestStop()
    }

    // MARK: Life of the recording

    /// Ends the session: records `sessionEnd`, writes everything buffered, finishes the file
    /// and ends the writer thread. Waits up to `timeout` seconds for that (it is the one call
    /// that waits); true when all was written. Calls after it record nothing.
    @discardableResult
    public func stop(reason: EndReason = .stopped, timeout: Double = 5) -> Bool {
        _ = buffer.recordLast(sessionEnd(reason), timeoutNanoseconds: nanoseconds(seconds: timeout))
        writer.requestStop()
        return writer.waitUntilFinished(timeout: timeout)
    }

    // MARK: For simulators (package only: an app never needs these)

    /// Drops the next `count` events' seqs as a full buffer would (counted, marked): a hole
    /// planted where the simulator wants it, through the recorder's own drop path.
    package func dropAsIfBufferFull(_ count: Int) { buffer.dropAsIfFull(count) }

    /// Writes everything recorded so far and ends the writer without a `sessionEnd`, as a
    /// process killed right after a flush leaves its files. True when all was written.
    @discardableResult
    package func endAsIfKilled(timeout: Double = 5) -> Bool {
        let flushed = flush(timeout: timeout)
        buffer.close()
        writer.requestStop()
        return writer.waitUntilFinished(timeout: timeout) && flushed
    }

    /// `finishCurrentFile`, waiting until the file is finished (so that the next events go to
    /// the next part whatever the writer thread's timing).
    package func finishCurrentFile(timeout: Double) -> Bool {
        let done = FlushWait()
        writer.flush(rotate: true) { done.signal() }
        return done.wait(timeout: timeout)
    }

    /// Writes what is buffered as soon as possible (a gzip member of its own); `completion`
    /// runs on the writer thread once it is written. For backgrounding: call it inside a
    /// background task and end the task in `completion`.
    public func flush(completion: (@Sendable () -> Void)? = nil) {
        writer.flush(rotate: false, completion: completion)
    }

    /// `flush`, waiting up to `timeout` seconds; true when it was written in time.
    @discardableResult
    public func flush(timeout: Double) -> Bool {
        let done = FlushWait()
        writer.flush(rotate: false) { done.signal() }
        return done.wait(timeout: timeout)
    }

    /// Flushes and finishes the current file, so it can be uploaded now (the next event
    /// starts a new part with the session record again); `completion` runs once it is.
    public func finishCurrentFile(completion: (@Sendable () -> Void)? = nil) {
        writer.flush(rotate: true, completion: completion)
    }

    /// Trace files ready for upload, oldest first: every file in `directory` of this
    /// recorder's naming and app except the one being written (earlier sessions' too). An
    /// extension sharing the directory hands out and deletes its own (its bundle id differs):
    /// two processes of one app id need two directories.
    public func finishedFiles() -> [URL] { writer.finishedFiles() }

    /// Deletes files handed out by `finishedFiles()` once uploaded; never the file being
    /// written, nor anything outside `directory`. Returns those deleted.
    @discardableResult
    public func removeFinishedFiles(_ files: [URL]) -> [URL] { writer.remove(files) }

    public var statistics: RecorderStatistics { writer.statistics }

    /// Events in the buffer now (the benchmark paces itself by it).
    package var waitingEvents: Int { buffer.waiting }

    /// The bytes the buffer's slots take (the benchmark's memory budget).
    package var bufferBytes: Int { buffer.capacity * MemoryLayout<RecordedEvent>.stride }

    // MARK: View-controller events

    /// A new instance: records its `init` (with its class and, when known, the nearest
    /// UIKit superclass) and returns its fresh id, which every later call names.
    public func initialized(cls: String, uikit: String? = nil) -> InstanceID {
        let id = InstanceID(number: instanceCounter.next())
        var e = RecordedEvent(.`init`, vc: id)
        e.text = cls
        e.secondText = uikit
        buffer.record(e)
        return id
    }

    public func loadView(_ vc: InstanceID) { buffer.record(RecordedEvent(.loadView, vc: vc)) }

    public func viewDidLoad(_ vc: InstanceID) { buffer.record(RecordedEvent(.viewDidLoad, vc: vc)) }

    /// `interactive`: the transition coordinator's `isInteractive` (nil: not known, not written).
    public func viewWillAppear(_ vc: InstanceID, animated: Bool, isMovingToParent: Bool, isBeingPresented: Bool,
                               interactive: Bool? = nil) {
        var e = RecordedEvent(.viewWillAppear, vc: vc)
        e.flags = RecordedFlags(animated: animated)
        e.flags.set(.movingToParent, isMovingToParent)
        e.flags.set(.beingPresented, isBeingPresented)
        e.flags.setInteractive(interactive)
        buffer.record(e)
    }

    public func viewIsAppearing(_ vc: InstanceID, animated: Bool, bounds: ViewSize? = nil, traits: Traits? = nil) {
        var e = RecordedEvent(.viewIsAppearing, vc: vc)
        e.flags = RecordedFlags(animated: animated)
        e.bounds = bounds
        e.traits = traits
        buffer.record(e)
    }

    public func viewDidAppear(_ vc: InstanceID, animated: Bool, isMovingToParent: Bool, isBeingPresented: Bool) {
        var e = RecordedEvent(.viewDidAppear, vc: vc)
        e.flags = RecordedFlags(animated: animated)
        e.flags.set(.movingToParent, isMovingToParent)
        e.flags.set(.beingPresented, isBeingPresented)
        buffer.record(e)
    }

    public func viewWillDisappear(_ vc: InstanceID, animated: Bool, isMovingFromParent: Bool, isBeingDismissed: Bool,
                                  interactive: Bool? = nil) {
        var e = RecordedEvent(.viewWillDisappear, vc: vc)
        e.flags = RecordedFlags(animated: animated)
        e.flags.set(.movingFromParent, isMovingFromParent)
        e.flags.set(.beingDismissed, isBeingDismissed)
        e.flags.setInteractive(interactive)
        buffer.record(e)
    }

    public func viewDidDisappear(_ vc: InstanceID, animated: Bool, isMovingFromParent: Bool, isBeingDismissed: Bool) {
        var e = RecordedEvent(.viewDidDisappear, vc: vc)
        e.flags = RecordedFlags(animated: animated)
        e.flags.set(.movingFromParent, isMovingFromParent)
        e.flags.set(.beingDismissed, isBeingDismissed)
        buffer.record(e)
    }

    /// The instance is gone (`deinit`); from any thread.
    public func deinitialized(_ vc: InstanceID) { buffer.record(RecordedEvent(.`deinit`, vc: vc)) }

    public func viewWillLayoutSubviews(_ vc: InstanceID) { buffer.record(RecordedEvent(.viewWillLayoutSubviews, vc: vc)) }

    public func viewDidLayoutSubviews(_ vc: InstanceID) { buffer.record(RecordedEvent(.viewDidLayoutSubviews, vc: vc)) }

    public func traitChange(_ vc: InstanceID, traits: Traits) {
        var e = RecordedEvent(.traitChange, vc: vc)
        e.traits = traits
        buffer.record(e)
    }

    /// A memory warning, for one controller or (nil) the app.
    public func memoryWarning(_ vc: InstanceID? = nil) { buffer.record(RecordedEvent(.memoryWarning, vc: vc)) }

    // MARK: Containment

    /// `parent.addChild(child)`.
    public func addChild(_ child: InstanceID, parent: InstanceID) { containment(.addChild, child, parent) }

    /// `child.willMove(toParent: parent)` (nil: removal).
    public func willMoveToParent(_ child: InstanceID, parent: InstanceID?) { containment(.willMoveToParent, child, parent) }

    /// `child.didMove(toParent: parent)` (nil: removal).
    public func didMoveToParent(_ child: InstanceID, parent: InstanceID?) { containment(.didMoveToParent, child, parent) }

    /// `child.removeFromParent()`; `parent`: the former parent, when known.
    public func removeFromParent(_ child: InstanceID, parent: InstanceID?) { containment(.removeFromParent, child, parent) }

    /// `vc`'s root view entered a view hierarchy; `host`: the nearest controller whose view
    /// now contains it (nil for a window or a transition container).
    public func viewAttached(_ vc: InstanceID, host: InstanceID?) { containment(.viewAttached, vc, host) }

    /// `vc`'s root view left its superview; `host`: the one it was attached under.
    public func viewDetached(_ vc: InstanceID, host: InstanceID?) { containment(.viewDetached, vc, host) }

    private func containment(_ kind: EventKind, _ vc: InstanceID, _ other: InstanceID?) {
        var e = RecordedEvent(kind, vc: vc)
        e.other = other?.number ?? 0
        buffer.record(e)
    }

    // MARK: Presentation and navigation

    /// `presenter.present(presented, …)`, with the presenter UIKit really used.
    public func present(_ presented: InstanceID, by presenter: InstanceID, style: PresentationStyle, animated: Bool,
                        interactive: Bool? = nil) {
        var e = RecordedEvent(.present, vc: presenter)
        e.other = presented.number
        e.text = style.name.rawValue
        e.flags = RecordedFlags(animated: animated)
        e.flags.setInteractive(interactive)
        buffer.record(e)
    }

    /// The dismissal of `vc` (the presented controller, not the receiver of `dismiss`).
    public func dismiss(_ vc: InstanceID, animated: Bool, interactive: Bool? = nil) {
        var e = RecordedEvent(.dismiss, vc: vc)
        e.flags = RecordedFlags(animated: animated)
        e.flags.setInteractive(interactive)
        buffer.record(e)
    }

    /// `navigationController.pushViewController(child, animated:)`.
    public func push(_ child: InstanceID, on navigationController: InstanceID, animated: Bool, interactive: Bool = false) {
        navigation(.push, navigationController, child, animated, interactive)
    }

    /// `child` popped off `navigationController` (one event per controller popped).
    public func pop(_ child: InstanceID, from navigationController: InstanceID, animated: Bool, interactive: Bool = false) {
        navigation(.pop, navigationController, child, animated, interactive)
    }

    private func navigation(_ kind: EventKind, _ nav: InstanceID, _ child: InstanceID, _ animated: Bool, _ interactive: Bool) {
        var e = RecordedEvent(kind, vc: nav)
        e.other = child.number
        e.flags = RecordedFlags(animated: animated)
        e.flags.set(.interactive, interactive)
        buffer.record(e)
    }

    /// (1.2) `window.rootViewController = root`; `old`: the root it replaces.
    public func windowRoot(_ root: InstanceID?, old: InstanceID?, scene: String? = nil) {
        var e = RecordedEvent(kind: .windowRoot)
        e.vc = root?.number ?? 0
        e.other = old?.number ?? 0
        e.secondText = scene
        buffer.record(e)
    }

    // MARK: App, scenes, marks

    /// A scene life-cycle event; `scene`: the scene session's persistent identifier.
    public func scene(_ event: SceneEvent, scene: String) {
        var e = RecordedEvent(event.kind)
        e.text = scene
        buffer.record(e)
    }

    public func app(_ event: AppEvent) { buffer.record(RecordedEvent(event.kind)) }

    /// A free annotation, e.g. a QA test step (`mark` with `name`, cut to `maxMarkBytes`).
    public func mark(_ name: String) {
        var e = RecordedEvent(.mark)
        // A line stays far below lctrace's 1 MiB limit whatever the app passes.
        e.text = name.utf8.count > Self.maxMarkBytes ? String(decoding: name.utf8.prefix(Self.maxMarkBytes), as: UTF8.self) : name
        buffer.record(e)
    }

    private func sessionEnd(_ reason: EndReason) -> RecordedEvent {
        var e = RecordedEvent(.sessionEnd)
        e.text = reason.name.rawValue
        return e
    }
}

/// The session's instance numbers, from 1.
private final class InstanceCounter: @unchecked Sendable {
    private let lock = RecorderLock()
    private var last: UInt64 = 0
    func next() -> UInt64 { lock.withLock { last += 1; return last } }
}

/// A one-shot signal for `flush(timeout:)`.
private final class FlushWait: @unchecked Sendable {
    private let lock = RecorderLock()
    private var done = false

    func signal() { lock.withLock { done = true; lock.broadcast() } }

    func wait(timeout: Double) -> Bool {
        let deadline = MonotonicClock.system.nanoseconds() &+ nanoseconds(seconds: timeout)
        return lock.withLock {
            while !done {
                let now = MonotonicClock.system.nanoseconds()
                if now >= deadline { return false }
                lock.wait(nanoseconds: deadline - now)
            }
            return true
        }
    }
}
