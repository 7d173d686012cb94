import Foundation
import XCTest
@testable import LCTraceRecorder
import LCTraceFormat
import LCTraceIngest
import LCTraceModel

/// The recorder writes exactly trace format v1: every event it can emit, decoded by
/// lctrace's own decoder, gives back the values recorded.
final class RecorderFormatTests: XCTestCase {
    func testEveryEventKindDecodesToTheValuesRecorded() throws {
        let dir = RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let clock = TestClock()
        var config = RecorderTests.configuration(dir, clock: clock)
        config.session.extensionPoint = "com.apple.share-services"
        let sid = config.sessionID
        let r = try TraceRecorder(configuration: config)

        let wall = "2026-11-02T10:15:03.120Z"
        var expected = [TraceEvent(sid: sid, seq: 0, t: 0, name: "session", wall: wall,
                                   attrs: #"{"extension":"com.apple.share-services"}"#,
                                   session: SessionRecord(app: "com.example.shop", appVersion: "5.2.1", build: "812", os: "iOS",
                                                          osVersion: "27.1", sdk: "27.0", device: "iPhone16,2",
                                                          recorder: "lctrace-recorder/1.0", wall: wall))]
        /// Moves the clock 1 ms, makes the call, and expects this event at the next seq.
        func expect(_ name: String, vc: String? = nil, cls: String? = nil, other: String? = nil, flags: EventFlags = [],
                    detail: String? = nil, attrs: String? = nil, _ call: () -> Void) {
            clock.advance(milliseconds: 1)
            call()
            let seq = Int64(expected.count)
            expected.append(TraceEvent(sid: sid, seq: seq, t: seq * 1_000_000, name: name, vc: vc, cls: cls, other: other,
                                       flags: flags, detail: detail, attrs: attrs))
        }
        var list = InstanceID(number: 0), detail = InstanceID(number: 0)
        expect("init", vc: "vc1", cls: "ProductListViewController", attrs: #"{"uikit":"UIViewController"}"#) {
            list = r.initialized(cls: "ProductListViewController", uikit: "UIViewController")
        }
        expect("init", vc: "vc2", cls: "Detail\"View\\Controller<T>") { detail = r.initialized(cls: "Detail\"View\\Controller<T>") }
        XCTAssertEqual(list.description, "vc1")
        expect("loadView", vc: "vc1") { r.loadView(list) }
        expect("viewDidLoad", vc: "vc1") { r.viewDidLoad(list) }
        expect("viewWillAppear", vc: "vc1", flags: .written([(.animated, false), (.isMovingToParent, true), (.isBeingPresented, false)])) {
            r.viewWillAppear(list, animated: false, isMovingToParent: true, isBeingPresented: false)
        }
        expect("viewWillAppear", vc: "vc2",
               flags: .written([(.animated, true), (.isMovingToParent, false), (.isBeingPresented, true), (.interactive, true)])) {
            r.viewWillAppear(detail, animated: true, isMovingToParent: false, isBeingPresented: true, interactive: true)
        }
        expect("viewIsAppearing", vc: "vc1", flags: .written([(.animated, false)]),
               attrs: #"{"bounds":[393,852],"traits":{"h":"compact","v":"regular","style":"dark"}}"#) {
            r.viewIsAppearing(list, animated: false, bounds: ViewSize(width: 393, height: 852),
                              traits: Traits(horizontal: .compact, vertical: .regular, style: .dark))
        }
        expect("viewIsAppearing", vc: "vc2", flags: .written([(.animated, true)]), attrs: #"{"bounds":[320.5,0]}"#) {
            r.viewIsAppearing(detail, animated: true, bounds: ViewSize(width: 320.5, height: 0))
        }
        expect("viewIsAppearing", vc: "vc2", flags: .written([(.animated, true)])) { r.viewIsAppearing(detail, animated: true) }
        expect("viewDidAppear", vc: "vc1", flags: .written([(.animated, false), (.isMovingToParent, true), (.isBeingPresented, false)])) {
            r.viewDidAppear(list, animated: false, isMovingToParent: true, isBeingPresented: false)
        }
        expect("viewWillDisappear", vc: "vc1",
               flags: .written([(.animated, true), (.isMovingFromParent, true), (.isBeingDismissed, false), (.interactive, false)])) {
            r.viewWillDisappear(list, animated: true, isMovingFromParent: true, isBeingDismissed: false, interactive: false)
        }
        expect("viewDidDisappear", vc: "vc2", flags: .written([(.animated, true), (.isMovingFromParent, false), (.isBeingDismissed, true)])) {
            r.viewDidDisappear(detail, animated: true, isMovingFromParent: false, isBeingDismissed: true)
        }
        expect("viewWillLayoutSubviews", vc: "vc1") { r.viewWillLayoutSubviews(list) }
        expect("viewDidLayoutSubviews", vc: "vc1") { r.viewDidLayoutSubviews(list) }
        expect("traitChange", vc: "vc1", attrs: #"{"traits":{"h":"regular"}}"#) { r.traitChange(list, traits: Traits(horizontal: .regular)) }
        expect("memoryWarning", vc: "vc1") { r.memoryWarning(list) }
        expect("memoryWarning") { r.memoryWarning() }
        let withParent = EventFlags.otherPresent
        expect("addChild", vc: "vc2", other: "vc1", flags: withParent) { r.addChild(detail, parent: list) }
        expect("willMoveToParent", vc: "vc2", other: "vc1", flags: withParent) { r.willMoveToParent(detail, parent: list) }
        expect("didMoveToParent", vc: "vc2", other: "vc1", flags: withParent) { r.didMoveToParent(detail, parent: list) }
        expect("willMoveToParent", vc: "vc2", flags: withParent) { r.willMoveToParent(detail, parent: nil) }
        expect("removeFromParent", vc: "vc2", other: "vc1", flags: withParent) { r.removeFromParent(detail, parent: list) }
        expect("removeFromParent", vc: "vc2", flags: withParent) { r.removeFromParent(detail, parent: nil) }
        expect("didMoveToParent", vc: "vc2", flags: withParent) { r.didMoveToParent(detail, parent: nil) }
        expect("viewAttached", vc: "vc2", other: "vc1", flags: withParent) { r.viewAttached(detail, host: list) }
        expect("viewDetached", vc: "vc2", flags: withParent) { r.viewDetached(detail, host: nil) }
        expect("present", vc: "vc1", other: "vc2", flags: withParent.union(.written([(.animated, true)])), detail: "pageSheet") {
            r.present(detail, by: list, style: .pageSheet, animated: true)
        }
        expect("present", vc: "vc1", other: "vc2", flags: withParent.union(.written([(.animated, false), (.interactive, true)])),
               detail: "overCurrentContext") {
            r.present(detail, by: list, style: .overCurrentContext, animated: false, interactive: true)
        }
        expect("dismiss", vc: "vc2", flags: .written([(.animated, true), (.interactive, true)])) {
            r.dismiss(detail, animated: true, interactive: true)
        }
        expect("dismiss", vc: "vc2", flags: .written([(.animated, false)])) { r.dismiss(detail, animated: false) }
        expect("push", vc: "vc1", other: "vc2", flags: withParent.union(.written([(.animated, true), (.interactive, false)]))) {
            r.push(detail, on: list, animated: true)
        }
        expect("pop", vc: "vc1", other: "vc2", flags: withParent.union(.written([(.animated, true), (.interactive, true)]))) {
            r.pop(detail, from: list, animated: true, interactive: true)
        }
        // (1.2) windowRoot: an event name the decoder keeps as unknown, its keys in attrs.
        expect("windowRoot", vc: "vc1", attrs: #"{"old":null,"scene":"s1"}"#) { r.windowRoot(list, old: nil, scene: "s1") }
        expect("windowRoot", attrs: #"{"old":"vc1"}"#) { r.windowRoot(nil, old: list) }
        let scenes: [(SceneEvent, String)] = [(.willConnect, "sceneWillConnect"), (.didBecomeActive, "sceneDidBecomeActive"),
                                              (.willResignActive, "sceneWillResignActive"), (.willEnterForeground, "sceneWillEnterForeground"),
                                              (.didEnterBackground, "sceneDidEnterBackground"), (.didDisconnect, "sceneDidDisconnect")]
        XCTAssertEqual(scenes.count, SceneEvent.allCases.count)
        for (event, name) in scenes { expect(name, detail: "s1") { r.scene(event, scene: "s1") } }
        let apps: [(AppEvent, String)] = [(.didFinishLaunching, "appDidFinishLaunching"), (.didBecomeActive, "appDidBecomeActive"),
                                          (.willResignActive, "appWillResignActive"), (.didEnterBackground, "appDidEnterBackground"),
                                          (.willEnterForeground, "appWillEnterForeground"), (.willTerminate, "appWillTerminate")]
        XCTAssertEqual(apps.count, AppEvent.allCases.count)
        for (event, name) in apps { expect(name) { r.app(event) } }
        expect("mark", detail: "QA step 3: \"checkout\"\n\u{1}é") { r.mark("QA step 3: \"checkout\"\n\u{1}é") }
        expect("deinit", vc: "vc2") { r.deinitialized(detail) }
        expect("sessionEnd", detail: "stopped") { XCTAssertTrue(r.stop()) }

        let files = try RecorderTests.files(dir)
        XCTAssertEqual(files.count, 1)
        let file = try XCTUnwrap(files.first)
        XCTAssertEqual(file.rejects.count, 0, "\(file.rejects)")
        XCTAssertNil(file.damage)
        XCTAssertEqual(file.events.count, expected.count)
        for (got, want) in zip(file.events, expected) { XCTAssertEqual(got, want) }
        // Every kind of the format but `unknown` was written.
        let written = Set(file.events.map(\.kind))
        XCTAssertEqual(written.union([.unknown]), Set(EventKind.allCases))
        XCTAssertEqual(r.statistics.written, Int64(expected.count))
        XCTAssertEqual(r.statistics.dropped, 0)
    }

    /// Each `present` style and `sessionEnd` reason is spelt as the format spells it.
    func testStylesAndEndReasonsAreTheFormatsValues() throws {
        XCTAssertEqual(PresentationStyle.allCases.map(\.name.rawValue),
                       ["fullScreen", "pageSheet", "formSheet", "overFullScreen", "overCurrentContext", "popover", "automatic", "custom"])
        for (reason, text) in [(EndReason.stopped, "stopped"), (.terminate, "terminate"), (.backgroundKill, "background-kill")] {
            let dir = RecorderTests.directory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let r = try TraceRecorder(configuration: RecorderTests.configuration(dir))
            let a = r.initialized(cls: "A"), b = r.initialized(cls: "B")
            for style in PresentationStyle.allCases { r.present(b, by: a, style: style, animated: true) }
            r.stop(reason: reason)
            let events = try RecorderTests.events(dir)
            XCTAssertEqual(events.filter { $0.kind == .present }.map(\.detail), PresentationStyle.allCases.map(\.name.rawValue))
            XCTAssertEqual(events.last?.kind, .sessionEnd)
            XCTAssertEqual(events.last?.detail, text)
        }
    }

    /// seq from 0 strictly up, t from the monotonic clock's first reading, the session record first.
    func testSeqAndTFollowTheClock() throws {
        let dir = RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let clock = TestClock()
        let r = try TraceRecorder(configuration: RecorderTests.configuration(dir, clock: clock))
        var ts: [Int64] = [0]
        for i in 1...50 {
            clock.advance(nanoseconds: UInt64(i * 1237))
            ts.append(ts.last! + Int64(i * 1237))
            r.mark("step \(i)")
        }
        r.stop()
        let events = try RecorderTests.files(dir)[0].events
        XCTAssertEqual(events.map(\.seq), Array(0...51).map(Int64.init))
        XCTAssertEqual(Array(events.map(\.t).prefix(51)), ts)
        XCTAssertEqual(events.first?.kind, .session)
        XCTAssertEqual(events.last?.kind, .sessionEnd)
    }

    /// Calls after stop record nothing; a second stop is harmless.
    func testNothingIsRecordedAfterStop() throws {
        let dir = RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try TraceRecorder(configuration: RecorderTests.configuration(dir))
        r.mark("before")
        XCTAssertTrue(r.stop())
        r.mark("after")
        XCTAssertTrue(r.stop())
        let events = try RecorderTests.events(dir)
        XCTAssertEqual(events.map(\.name), ["session", "mark", "sessionEnd"])
        XCTAssertEqual(events.first?.t, 0, "the session's origin is its first event, on the real clock too")
    }

    /// Every kind of line also validates against the repository's JSON Schema of a trace line
    /// (with the validator `.ci/run` installs; skipped without it).
    func testEveryLineValidatesAgainstTheTraceLineSchema() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let candidates: [String?] = [ProcessInfo.processInfo.environment["LCTRACE_VALIDATOR_PYTHON"], root.appendingPathComponent(".ci/venv/bin/python").path]
        guard let python = candidates.compactMap({ $0 }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("no validator: run .ci/run (it makes .ci/venv with jsonschema) or set LCTRACE_VALIDATOR_PYTHON")
        }
        let dir = RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var config = RecorderTests.configuration(dir)
        config.session.extensionPoint = "com.apple.share-services"
        let r = try TraceRecorder(configuration: config)
        let a = r.initialized(cls: "ProductListViewController", uikit: "UIViewController"), b = r.initialized(cls: "Detail")
        r.loadView(a); r.viewDidLoad(a)
        r.viewWillAppear(a, animated: true, isMovingToParent: false, isBeingPresented: true, interactive: true)
        r.viewIsAppearing(a, animated: true, bounds: ViewSize(width: 393, height: 852.5), traits: Traits(horizontal: .compact, style: .dark))
        r.viewDidAppear(a, animated: true, isMovingToParent: false, isBeingPresented: true)
        r.viewWillDisappear(a, animated: true, isMovingFromParent: true, isBeingDismissed: false, interactive: false)
        r.viewDidDisappear(a, animated: true, isMovingFromParent: true, isBeingDismissed: false)
        r.viewWillLayoutSubviews(a); r.viewDidLayoutSubviews(a); r.traitChange(a, traits: Traits(style: .light))
        r.memoryWarning(a); r.memoryWarning()
        r.addChild(b, parent: a); r.willMoveToParent(b, parent: a); r.didMoveToParent(b, parent: a)
        r.willMoveToParent(b, parent: nil); r.removeFromParent(b, parent: a); r.removeFromParent(b, parent: nil)
        r.didMoveToParent(b, parent: nil); r.viewAttached(b, host: a); r.viewDetached(b, host: nil)
        r.present(b, by: a, style: .pageSheet, animated: true); r.dismiss(b, animated: true, interactive: true)
        r.push(b, on: a, animated: true); r.pop(b, from: a, animated: true, interactive: true)
        r.windowRoot(a, old: nil, scene: "S1"); r.windowRoot(nil, old: a)
        for e in SceneEvent.allCases { r.scene(e, scene: "S1") }
        for e in AppEvent.allCases { r.app(e) }
        r.mark("QA \"step\"\n3"); r.deinitialized(b)
        r.stop()
        let file = try XCTUnwrap(TraceDirectory.list(dir).first?.url)
        let script = """
            import gzip, json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            validator = jsonschema.validators.validator_for(schema)(schema)
            bad = [(line, [e.message for e in validator.iter_errors(json.loads(line))]) for line in gzip.open(sys.argv[2], "rt")]
            bad = [b for b in bad if b[1]]
            print("\\n".join(f"{line.strip()}: {errors}" for line, errors in bad))
            sys.exit(1 if bad else 0)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script, root.appendingPathComponent("Schemas/trace-line.schema.json").path, file.path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, text)
        XCTAssertEqual(try DecodedFile(file).events.count, 45)
    }
}
