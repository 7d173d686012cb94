import LCTraceFormat

/// Turns buffered events into trace-format-v1 lines. Every key is spelt by `TraceKey` (or
/// `WriterName` for the 1.2 additions) and every event name by `EventKind`, so the recorder
/// and the decoder cannot drift; which keys go on which event is decided here, once.
///
/// It writes bytes, not through `JSONWriter`: the writer thread must sustain 500,000 events
/// a second with gzip, and `JSONWriter`'s per-call escaping and bookkeeping was 60 % of its
/// time (2.3 µs an event). The fixed texts (`{"v":1,"sid":"…","seq":`, each `,"key":`, each
/// `,"ev":"name"`) are made once from those names, into one buffer; free text (class names,
/// marks, scene ids) goes through `JSONText`, the one escaper. A line holds only objects,
/// strings, integers, booleans and null, in a fixed order: no structure to get wrong.
final class LineEncoder {
    /// Every fixed text, one after another; the fragments below point into it.
    private let storage: UnsafeMutableRawBufferPointer
    private typealias Text = UnsafeRawBufferPointer
    /// `{"v":1,"sid":"<sid>","seq":`
    private let prefix: Text
    /// The session record's own keys and values, the same in every copy.
    private let sessionKeys: Text
    /// `,"ev":"name"` by the event kind's case tag (`tag(of:)`), and for windowRoot.
    private let names: [Text]
    private let windowRootName: Text
    // `,"key":` of each key the recorder writes.
    private let t, vc, cls, animated, isMovingToParent, isBeingPresented, isMovingFromParent, isBeingDismissed: Text
    private let interactive, parent, host, presented, child, style, scene, name, reason, bounds, traits, uikit, old: Text
    private let idStart, trueText, falseText, nullText: Text

    init(sid: String, session: SessionInfo, wall: String) {
        func key(_ name: String) -> [UInt8] { Array(",".utf8) + quoted(name) + [0x3a] }
        func quoted(_ text: String) -> [UInt8] { [0x22] + JSONText.escaped(text) + [0x22] }
        var record: [(String, String)] = [(TraceKey.wall.text, wall), (TraceKey.app.text, session.app),
                                          (TraceKey.appVersion.text, session.appVersion), (TraceKey.build.text, session.build),
                                          (TraceKey.os.text, session.os), (TraceKey.osVersion.text, session.osVersion)]
        if let sdk = session.sdk { record.append((TraceKey.sdk.text, sdk)) }
        record.append((TraceKey.device.text, session.device))
        record.append((TraceKey.recorder.text, TraceRecorder.recorderName))
        if let point = session.extensionPoint { record.append((WriterName.extensionPoint, point)) }
        let ev = key(TraceKey.ev.text)
        var texts: [[UInt8]] = [
            Array("{".utf8) + quoted(TraceKey.v.text) + Array(":\(TraceFormat.version)".utf8) + key(TraceKey.sid.text) + quoted(sid)
                + key(TraceKey.seq.text),
            record.flatMap { key($0.0) + quoted($0.1) },
            ev + quoted(WriterName.windowRoot),
        ]
        let keys = [TraceKey.t, .vc, .cls, .animated, .isMovingToParent, .isBeingPresented, .isMovingFromParent, .isBeingDismissed,
                    .interactive, .parent, .host, .presented, .child, .style, .scene, .name, .reason, .bounds, .traits].map(\.text)
            + [WriterName.uikit, WriterName.old]
        texts += keys.map(key)
        texts += ["\"vc", "true", "false", "null"].map { Array($0.utf8) }
        texts += EventKind.allCases.map { ev + quoted($0.rawValue) }
        storage = .allocate(byteCount: texts.reduce(0) { $0 + $1.count }, alignment: 1)
        var fragments: [Text] = []
        var offset = 0
        for text in texts {
            let slice = UnsafeMutableRawBufferPointer(rebasing: storage[offset..<(offset + text.count)])
            slice.copyBytes(from: text)
            fragments.append(UnsafeRawBufferPointer(slice))
            offset += text.count
        }
        var next = fragments.makeIterator()
        prefix = next.next()!; sessionKeys = next.next()!; windowRootName = next.next()!
        t = next.next()!; vc = next.next()!; cls = next.next()!; animated = next.next()!; isMovingToParent = next.next()!
        isBeingPresented = next.next()!; isMovingFromParent = next.next()!; isBeingDismissed = next.next()!
        interactive = next.next()!; parent = next.next()!; host = next.next()!; presented = next.next()!; child = next.next()!
        style = next.next()!; scene = next.next()!; name = next.next()!; reason = next.next()!; bounds = next.next()!
        traits = next.next()!; uikit = next.next()!; old = next.next()!
        idStart = next.next()!; trueText = next.next()!; falseText = next.next()!; nullText = next.next()!
        assert(MemoryLayout<EventKind>.size == 1 && Set(EventKind.allCases.map(LineEncoder.tag)).count == EventKind.allCases.count,
               "EventKind's case tags are not one distinct byte each")
        var byTag = [Text](repeating: Text(start: nil, count: 0), count: 256)
        for kind in EventKind.allCases { byTag[LineEncoder.tag(of: kind)] = next.next()! }
        names = byTag
    }

    deinit { storage.deallocate() }

    /// An `EventKind`'s case tag: a one-byte enum without payloads is stored as its case's
    /// index, so this indexes `names` without hashing (asserted in `init`, so the tests would
    /// see a layout that broke it).
    @inline(__always)
    private static func tag(of kind: EventKind) -> Int { withUnsafeBytes(of: kind) { Int($0[0]) } }

    /// Appends `e` as one line (with its `\n`).
    func append(_ e: RecordedEvent, to out: inout LineBuffer) {
        out.append(prefix)
        integer(e.seq, &out)
        out.append(t)
        integer(e.t, &out)
        guard case .standard(let kind) = e.kind else {
            // windowRoot: every key optional. No new root: `vc` left out (absent reads as null,
            // and Schemas/trace-line.schema.json wants `vc` a string where present).
            out.append(windowRootName)
            if e.vc != 0 { out.append(vc); id(e.vc, &out) }
            out.append(old); id(e.other, &out)
            if let scene = e.secondText { out.append(self.scene); string(scene, &out) }
            return end(&out)
        }
        out.append(names[LineEncoder.tag(of: kind)])
        if e.vc != 0 { out.append(vc); id(e.vc, &out) }
        switch kind {
        case .session:
            out.append(sessionKeys)
        case .sessionEnd:
            out.append(reason); string(e.text ?? SessionEndReason.stopped.rawValue, &out)
        case .`init`:
            out.append(cls); string(e.text ?? "", &out)
            if let uikit = e.secondText { out.append(self.uikit); string(uikit, &out) }
        case .viewWillAppear, .viewDidAppear:
            flag(animated, e.flags.contains(.animated), &out)
            flag(isMovingToParent, e.flags.contains(.movingToParent), &out)
            flag(isBeingPresented, e.flags.contains(.beingPresented), &out)
            if kind == .viewWillAppear { interactiveFlag(e.flags, &out) }
        case .viewWillDisappear, .viewDidDisappear:
            flag(animated, e.flags.contains(.animated), &out)
            flag(isMovingFromParent, e.flags.contains(.movingFromParent), &out)
            flag(isBeingDismissed, e.flags.contains(.beingDismissed), &out)
            if kind == .viewWillDisappear { interactiveFlag(e.flags, &out) }
        case .viewIsAppearing:
            flag(animated, e.flags.contains(.animated), &out)
            if let size = e.bounds {
                out.append(bounds)
                out.append(0x5b); number(size.width, &out); out.append(0x2c); number(size.height, &out); out.append(0x5d)
            }
            if let traits = e.traits { out.append(self.traits); self.traits(traits, &out) }
        case .traitChange:
            out.append(self.traits); traits(e.traits ?? Traits(), &out)
        case .addChild, .willMoveToParent, .didMoveToParent, .removeFromParent:
            out.append(parent); id(e.other, &out)
        case .viewAttached, .viewDetached:
            out.append(host); id(e.other, &out)
        case .present:
            out.append(presented); id(e.other, &out)
            if let style = e.text { out.append(self.style); string(style, &out) }
            flag(animated, e.flags.contains(.animated), &out)
            interactiveFlag(e.flags, &out)
        case .dismiss:
            flag(animated, e.flags.contains(.animated), &out)
            interactiveFlag(e.flags, &out)
        case .push, .pop:
            out.append(child); id(e.other, &out)
            flag(animated, e.flags.contains(.animated), &out)
            flag(interactive, e.flags.contains(.interactive), &out)
        case .sceneWillConnect, .sceneDidBecomeActive, .sceneWillResignActive,
             .sceneWillEnterForeground, .sceneDidEnterBackground, .sceneDidDisconnect:
            out.append(scene); string(e.text ?? "", &out)
        case .mark:
            out.append(name); string(e.text ?? "", &out)
            for (key, value) in e.numbers {
                out.append(0x2c); string(key, &out); out.append(0x3a); integer(value, &out)
            }
        default:
            break  // loadView, viewDidLoad, deinit, layout, memoryWarning, app events: no more keys
        }
        end(&out)
    }

    private func end(_ out: inout LineBuffer) {
        out.append(0x7d)
        out.append(0x0a)
    }

    private func string(_ text: String, _ out: inout LineBuffer) {
        out.append(0x22)
        var text = text
        text.withUTF8 { utf8 in
            JSONText.forEachEscapedPiece(UnsafeRawBufferPointer(utf8), run: { out.append($0) },
                                         escape: { escape in escape.withUTF8Buffer { out.append(UnsafeRawBufferPointer($0)) } },
                                         control: { byte in JSONText.controlEscape(byte).withUnsafeBytes { out.append($0) } })
        }
        out.append(0x22)
    }

    /// `"vc12"`, or null for 0.
    private func id(_ number: UInt64, _ out: inout LineBuffer) {
        guard number != 0 else { return out.append(nullText) }
        out.append(idStart)
        integer(Int64(number), &out)
        out.append(0x22)
    }

    private func flag(_ key: Text, _ value: Bool, _ out: inout LineBuffer) {
        out.append(key)
        out.append(value ? trueText : falseText)
    }

    private func interactiveFlag(_ flags: RecordedFlags, _ out: inout LineBuffer) {
        if flags.contains(.interactiveKnown) { flag(interactive, flags.contains(.interactive), &out) }
    }

    /// Decimal digits, written in place.
    private func integer(_ value: Int64, _ out: inout LineBuffer) {
        out.write(upTo: 20) { at in
            var magnitude = value.magnitude
            var digits = 0
            var probe = magnitude
            repeat { digits += 1; probe /= 10 } while probe > 0
            let sign = value < 0 ? 1 : 0
            if sign == 1 { at.storeBytes(of: 0x2d, as: UInt8.self) }
            var i = sign + digits
            repeat {
                i -= 1
                at.storeBytes(of: UInt8(truncatingIfNeeded: 0x30 + magnitude % 10), toByteOffset: i, as: UInt8.self)
                magnitude /= 10
            } while magnitude > 0
            return sign + digits
        }
    }

    /// Whole points as integers (`393`, not `393.0`), others as Swift prints them (shortest
    /// round trip); not finite: 0 (JSON has no NaN).
    private func number(_ value: Double, _ out: inout LineBuffer) {
        guard value.isFinite else { return out.append(0x30) }
        if value == value.rounded(), abs(value) < 1e15 { return integer(Int64(value), &out) }
        var text = String(value)
        text.withUTF8 { out.append(UnsafeRawBufferPointer($0)) }
    }

    private func traits(_ traits: Traits, _ out: inout LineBuffer) {
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
