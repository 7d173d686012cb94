import LCTraceFormat

/// Turns buffered events into trace-format-v1 lines. Every key is spelt by `TraceKey` (or
/// `WriterName` for the 1.2 additions) and every event name by `EventKind`, so the recorder
/// and the decoder cannot drift; which keys go on which event is decided here, once.
///
/// It writes bytes, not through `JSONWriter`: the writer thread must sustain 500,000 events
/// a second with gzip, and `JSONWriter`'s per-call escaping and bookkeeping was 60 % of its
/// time (2.3 µs an event). The fixed texts (`{"v":1,"sid":"…","seq":`, each `,"key":`, each
/// `,"ev":"name"`) are made once from those names; free text (class names, marks, scene ids)
/// goes through `JSONText`, the one escaper. A line holds only objects, strings, integers,
/// booleans and null, in a fixed order, so there is no structure to get wrong.
struct LineEncoder {
    private let sessionLine: [UInt8]
    /// `{"v":1,"sid":"<sid>","seq":`
    private let prefix: [UInt8]
    private let names: [EventKind: [UInt8]]
    private let windowRootName: [UInt8]

    // `,"key":` of each key the recorder writes.
    private static func key(_ name: String) -> [UInt8] { Array(",".utf8) + quoted(name) + [0x3a] }
    private static func quoted(_ text: String) -> [UInt8] { [0x22] + JSONText.escaped(text) + [0x22] }
    private static let t = key(TraceKey.t.text), vc = key(TraceKey.vc.text), cls = key(TraceKey.cls.text)
    private static let animated = key(TraceKey.animated.text), isMovingToParent = key(TraceKey.isMovingToParent.text)
    private static let isBeingPresented = key(TraceKey.isBeingPresented.text)
    private static let isMovingFromParent = key(TraceKey.isMovingFromParent.text)
    private static let isBeingDismissed = key(TraceKey.isBeingDismissed.text), interactive = key(TraceKey.interactive.text)
    private static let parent = key(TraceKey.parent.text), host = key(TraceKey.host.text), presented = key(TraceKey.presented.text)
    private static let child = key(TraceKey.child.text), style = key(TraceKey.style.text), scene = key(TraceKey.scene.text)
    private static let name = key(TraceKey.name.text), reason = key(TraceKey.reason.text), bounds = key(TraceKey.bounds.text)
    private static let traits = key(TraceKey.traits.text)
    private static let uikit = key(WriterName.uikit), old = key(WriterName.old)
    private static let idStart = Array("\"vc".utf8)
    private static let trueText = Array("true".utf8), falseText = Array("false".utf8), nullText = Array("null".utf8)

    init(sid: String, session: SessionInfo, wall: String) {
        prefix = Array("{".utf8) + LineEncoder.quoted(TraceKey.v.text) + Array(":\(TraceFormat.version)".utf8)
            + LineEncoder.key(TraceKey.sid.text) + LineEncoder.quoted(sid) + LineEncoder.key(TraceKey.seq.text)
        let ev = LineEncoder.key(TraceKey.ev.text)
        names = Dictionary(uniqueKeysWithValues: EventKind.allCases.map { ($0, ev + LineEncoder.quoted($0.rawValue)) })
        windowRootName = ev + LineEncoder.quoted(WriterName.windowRoot)
        // The session record's own keys, the same in every copy.
        var record: [(String, String)] = [(TraceKey.wall.text, wall), (TraceKey.app.text, session.app),
                                          (TraceKey.appVersion.text, session.appVersion), (TraceKey.build.text, session.build),
                                          (TraceKey.os.text, session.os), (TraceKey.osVersion.text, session.osVersion)]
        if let sdk = session.sdk { record.append((TraceKey.sdk.text, sdk)) }
        record.append((TraceKey.device.text, session.device))
        record.append((TraceKey.recorder.text, TraceRecorder.recorderName))
        if let point = session.extensionPoint { record.append((WriterName.extensionPoint, point)) }
        sessionLine = record.flatMap { LineEncoder.key($0.0) + LineEncoder.quoted($0.1) }
    }

    /// Appends `e` as one line (with its `\n`).
    func append(_ e: RecordedEvent, to out: inout [UInt8]) {
        typealias K = LineEncoder
        out.append(contentsOf: prefix)
        integer(e.seq, &out)
        out.append(contentsOf: K.t)
        integer(e.t, &out)
        guard case .standard(let kind) = e.kind else {
            // windowRoot: every key optional; null roots written as null.
            out.append(contentsOf: windowRootName)
            out.append(contentsOf: K.vc); id(e.vc, &out)
            out.append(contentsOf: K.old); id(e.other, &out)
            if let scene = e.secondText { out.append(contentsOf: K.scene); string(scene, &out) }
            return end(&out)
        }
        out.append(contentsOf: names[kind]!)
        if e.vc != 0 { out.append(contentsOf: K.vc); id(e.vc, &out) }
        switch kind {
        case .session:
            out.append(contentsOf: sessionLine)
        case .sessionEnd:
            out.append(contentsOf: K.reason); string(e.text ?? SessionEndReason.stopped.rawValue, &out)
        case .`init`:
            out.append(contentsOf: K.cls); string(e.text ?? "", &out)
            if let uikit = e.secondText { out.append(contentsOf: K.uikit); string(uikit, &out) }
        case .viewWillAppear, .viewDidAppear:
            flag(K.animated, e.flags.contains(.animated), &out)
            flag(K.isMovingToParent, e.flags.contains(.movingToParent), &out)
            flag(K.isBeingPresented, e.flags.contains(.beingPresented), &out)
            if kind == .viewWillAppear { interactiveFlag(e.flags, &out) }
        case .viewWillDisappear, .viewDidDisappear:
            flag(K.animated, e.flags.contains(.animated), &out)
            flag(K.isMovingFromParent, e.flags.contains(.movingFromParent), &out)
            flag(K.isBeingDismissed, e.flags.contains(.beingDismissed), &out)
            if kind == .viewWillDisappear { interactiveFlag(e.flags, &out) }
        case .viewIsAppearing:
            flag(K.animated, e.flags.contains(.animated), &out)
            if let size = e.bounds {
                out.append(contentsOf: K.bounds)
                out.append(0x5b); number(size.width, &out); out.append(0x2c); number(size.height, &out); out.append(0x5d)
            }
            if let traits = e.traits { out.append(contentsOf: K.traits); self.traits(traits, &out) }
        case .traitChange:
            out.append(contentsOf: K.traits); traits(e.traits ?? Traits(), &out)
        case .addChild, .willMoveToParent, .didMoveToParent, .removeFromParent:
            out.append(contentsOf: K.parent); id(e.other, &out)
        case .viewAttached, .viewDetached:
            out.append(contentsOf: K.host); id(e.other, &out)
        case .present:
            out.append(contentsOf: K.presented); id(e.other, &out)
            if let style = e.text { out.append(contentsOf: K.style); string(style, &out) }
            flag(K.animated, e.flags.contains(.animated), &out)
            interactiveFlag(e.flags, &out)
        case .dismiss:
            flag(K.animated, e.flags.contains(.animated), &out)
            interactiveFlag(e.flags, &out)
        case .push, .pop:
            out.append(contentsOf: K.child); id(e.other, &out)
            flag(K.animated, e.flags.contains(.animated), &out)
            flag(K.interactive, e.flags.contains(.interactive), &out)
        case .sceneWillConnect, .sceneDidBecomeActive, .sceneWillResignActive,
             .sceneWillEnterForeground, .sceneDidEnterBackground, .sceneDidDisconnect:
            out.append(contentsOf: K.scene); string(e.text ?? "", &out)
        case .mark:
            out.append(contentsOf: K.name); string(e.text ?? "", &out)
            for (key, value) in e.numbers { out.append(contentsOf: K.key(key)); integer(value, &out) }
        default:
            break  // loadView, viewDidLoad, deinit, layout, memoryWarning, app events: no more keys
        }
        end(&out)
    }

    private func end(_ out: inout [UInt8]) {
        out.append(0x7d)
        out.append(0x0a)
    }

    private func string(_ text: String, _ out: inout [UInt8]) {
        out.append(0x22)
        var text = text
        text.withUTF8 { JSONText.appendEscaped(UnsafeRawBufferPointer($0), to: &out) }
        out.append(0x22)
    }

    /// `"vc12"`, or null for 0.
    private func id(_ number: UInt64, _ out: inout [UInt8]) {
        guard number != 0 else { return out.append(contentsOf: LineEncoder.nullText) }
        out.append(contentsOf: LineEncoder.idStart)
        integer(Int64(number), &out)
        out.append(0x22)
    }

    private func flag(_ key: [UInt8], _ value: Bool, _ out: inout [UInt8]) {
        out.append(contentsOf: key)
        out.append(contentsOf: value ? LineEncoder.trueText : LineEncoder.falseText)
    }

    private func interactiveFlag(_ flags: RecordedFlags, _ out: inout [UInt8]) {
        if flags.contains(.interactiveKnown) { flag(LineEncoder.interactive, flags.contains(.interactive), &out) }
    }

    /// Decimal digits, without a String in between.
    private func integer(_ value: Int64, _ out: inout [UInt8]) {
        if value >= 0 && value < 10 { return out.append(UInt8(truncatingIfNeeded: 0x30 + value)) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var i = 20
            repeat {
                i -= 1
                digits[i] = UInt8(truncatingIfNeeded: 0x30 + magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { out.append(0x2d) }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[i..<20]))
        }
    }

    /// Whole points as integers (`393`, not `393.0`), others as Swift prints them (shortest
    /// round trip); not finite: 0 (JSON has no NaN).
    private func number(_ value: Double, _ out: inout [UInt8]) {
        guard value.isFinite else { return out.append(0x30) }
        if value == value.rounded(), abs(value) < 1e15 { return integer(Int64(value), &out) }
        out.append(contentsOf: String(value).utf8)
    }

    private func traits(_ traits: Traits, _ out: inout [UInt8]) {
        out.append(0x7b)
        var first = true
        func member(_ key: String, _ value: String) {
            if !first { out.append(0x2c) }
            first = false
            string(key, &out); out.append(0x3a); string(value, &out)
        }
        if let h = traits.horizontal { member("h", h.rawValue) }
        if let v = traits.vertical { member("v", v.rawValue) }
        if let style = traits.style { member("style", style.rawValue) }
        out.append(0x7d)
    }
}
