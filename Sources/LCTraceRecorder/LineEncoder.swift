import LCTraceFormat

/// Turns buffered events into trace-format-v1 lines. Every key is spelt by `TraceKey` (or
/// `WriterName` for the 1.2 additions), so the recorder and the decoder cannot drift; which
/// keys go on which event is decided here, once.
struct LineEncoder {
    private let sid: String
    private let session: SessionInfo
    private let wall: String

    // Key texts made once: `TraceKey.text` reflects on the case each time it is read.
    private static let v = TraceKey.v.text, sidKey = TraceKey.sid.text, seq = TraceKey.seq.text, t = TraceKey.t.text
    private static let ev = TraceKey.ev.text, wallKey = TraceKey.wall.text, vc = TraceKey.vc.text, cls = TraceKey.cls.text
    private static let animated = TraceKey.animated.text, isMovingToParent = TraceKey.isMovingToParent.text
    private static let isBeingPresented = TraceKey.isBeingPresented.text, isMovingFromParent = TraceKey.isMovingFromParent.text
    private static let isBeingDismissed = TraceKey.isBeingDismissed.text, interactive = TraceKey.interactive.text
    private static let parent = TraceKey.parent.text, host = TraceKey.host.text, presented = TraceKey.presented.text
    private static let child = TraceKey.child.text, style = TraceKey.style.text, scene = TraceKey.scene.text
    private static let name = TraceKey.name.text, reason = TraceKey.reason.text, bounds = TraceKey.bounds.text
    private static let traits = TraceKey.traits.text
    private static let app = TraceKey.app.text, appVersion = TraceKey.appVersion.text, build = TraceKey.build.text
    private static let os = TraceKey.os.text, osVersion = TraceKey.osVersion.text, sdk = TraceKey.sdk.text
    private static let device = TraceKey.device.text, recorder = TraceKey.recorder.text

    init(sid: String, session: SessionInfo, wall: String) {
        self.sid = sid
        self.session = session
        self.wall = wall
    }

    /// Appends `e` as one line (with its `\n`).
    func append(_ e: RecordedEvent, to json: inout JSONWriter) {
        typealias K = LineEncoder
        json.beginObject()
        json.key(K.v); json.int(TraceFormat.version)
        json.key(K.sidKey); json.string(sid)
        json.key(K.seq); json.int(e.seq)
        json.key(K.t); json.int(e.t)
        json.key(K.ev)
        json.string(e.kind.name)
        guard case .standard(let kind) = e.kind else {
            // windowRoot: every key optional; null roots are written as null.
            json.key(K.vc); id(e.vc, &json)
            json.key(WriterName.old); id(e.other, &json)
            if let scene = e.secondText { json.key(K.scene); json.string(scene) }
            return end(&json)
        }
        if e.vc != 0 { json.key(K.vc); id(e.vc, &json) }
        switch kind {
        case .session:
            json.key(K.wallKey); json.string(wall)
            json.key(K.app); json.string(session.app)
            json.key(K.appVersion); json.string(session.appVersion)
            json.key(K.build); json.string(session.build)
            json.key(K.os); json.string(session.os)
            json.key(K.osVersion); json.string(session.osVersion)
            if let sdk = session.sdk { json.key(K.sdk); json.string(sdk) }
            json.key(K.device); json.string(session.device)
            json.key(K.recorder); json.string(TraceRecorder.recorderName)
            if let point = session.extensionPoint { json.key(WriterName.extensionPoint); json.string(point) }
        case .sessionEnd:
            json.key(K.reason); json.string(e.text ?? SessionEndReason.stopped.rawValue)
        case .`init`:
            json.key(K.cls); json.string(e.text ?? "")
            if let uikit = e.secondText { json.key(WriterName.uikit); json.string(uikit) }
        case .viewWillAppear, .viewDidAppear:
            flag(K.animated, e.flags.contains(.animated), &json)
            flag(K.isMovingToParent, e.flags.contains(.movingToParent), &json)
            flag(K.isBeingPresented, e.flags.contains(.beingPresented), &json)
            if kind == .viewWillAppear { interactiveFlag(e.flags, &json) }
        case .viewWillDisappear, .viewDidDisappear:
            flag(K.animated, e.flags.contains(.animated), &json)
            flag(K.isMovingFromParent, e.flags.contains(.movingFromParent), &json)
            flag(K.isBeingDismissed, e.flags.contains(.beingDismissed), &json)
            if kind == .viewWillDisappear { interactiveFlag(e.flags, &json) }
        case .viewIsAppearing:
            flag(K.animated, e.flags.contains(.animated), &json)
            if let size = e.bounds {
                json.key(K.bounds); json.beginArray(); number(size.width, &json); number(size.height, &json); json.endArray()
            }
            if let traits = e.traits { json.key(K.traits); self.traits(traits, &json) }
        case .traitChange:
            json.key(K.traits); traits(e.traits ?? Traits(), &json)
        case .addChild, .willMoveToParent, .didMoveToParent, .removeFromParent:
            json.key(K.parent); id(e.other, &json)
        case .viewAttached, .viewDetached:
            json.key(K.host); id(e.other, &json)
        case .present:
            json.key(K.presented); id(e.other, &json)
            if let style = e.text { json.key(K.style); json.string(style) }
            flag(K.animated, e.flags.contains(.animated), &json)
            interactiveFlag(e.flags, &json)
        case .dismiss:
            flag(K.animated, e.flags.contains(.animated), &json)
            interactiveFlag(e.flags, &json)
        case .push, .pop:
            json.key(K.child); id(e.other, &json)
            flag(K.animated, e.flags.contains(.animated), &json)
            flag(K.interactive, e.flags.contains(.interactive), &json)
        case .sceneWillConnect, .sceneDidBecomeActive, .sceneWillResignActive,
             .sceneWillEnterForeground, .sceneDidEnterBackground, .sceneDidDisconnect:
            json.key(K.scene); json.string(e.text ?? "")
        case .mark:
            json.key(K.name); json.string(e.text ?? "")
            for (key, value) in e.numbers { json.key(key); json.int(value) }
        default:
            break  // loadView, viewDidLoad, deinit, layout, memoryWarning, app events: no more keys
        }
        end(&json)
    }

    private func end(_ json: inout JSONWriter) {
        json.endObject()
        json.raw("\n")
    }

    private func id(_ number: UInt64, _ json: inout JSONWriter) {
        if number == 0 { json.null() } else { json.string(InstanceID(number: number).description) }
    }

    private func flag(_ key: String, _ value: Bool, _ json: inout JSONWriter) {
        json.key(key); json.bool(value)
    }

    private func interactiveFlag(_ flags: RecordedFlags, _ json: inout JSONWriter) {
        if flags.contains(.interactiveKnown) { flag(LineEncoder.interactive, flags.contains(.interactive), &json) }
    }

    /// Whole points as integers (`393`, not `393.0`), others as they are.
    private func number(_ value: Double, _ json: inout JSONWriter) {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { json.int(Int64(value)) } else { json.double(value) }
    }

    private func traits(_ traits: Traits, _ json: inout JSONWriter) {
        json.beginObject()
        if let h = traits.horizontal { json.key("h"); json.string(h.rawValue) }
        if let v = traits.vertical { json.key("v"); json.string(v.rawValue) }
        if let style = traits.style { json.key("style"); json.string(style.rawValue) }
        json.endObject()
    }
}
