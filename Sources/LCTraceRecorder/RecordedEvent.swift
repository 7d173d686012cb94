import LCTraceFormat

/// An event's name: one of the format's `EventKind`s or (1.2) `windowRoot`, which the
/// decoder does not classify yet (`WriterName`).
enum RecordedKind: Equatable {
    case standard(EventKind)
    case windowRoot

    var name: String {
        switch self {
        case .standard(let kind): return kind.rawValue
        case .windowRoot: return WriterName.windowRoot
        }
    }
}

/// The boolean keys of an event; `interactiveKnown` says whether `interactive` is written at all.
struct RecordedFlags: OptionSet {
    let rawValue: UInt16
    static let animated = RecordedFlags(rawValue: 1 << 0)
    static let movingToParent = RecordedFlags(rawValue: 1 << 1)
    static let beingPresented = RecordedFlags(rawValue: 1 << 2)
    static let movingFromParent = RecordedFlags(rawValue: 1 << 3)
    static let beingDismissed = RecordedFlags(rawValue: 1 << 4)
    static let interactive = RecordedFlags(rawValue: 1 << 5)
    static let interactiveKnown = RecordedFlags(rawValue: 1 << 6)

    init(rawValue: UInt16) { self.rawValue = rawValue }

    init(animated: Bool) { self = animated ? .animated : [] }

    mutating func set(_ flag: RecordedFlags, _ value: Bool) { if value { insert(flag) } }

    mutating func setInteractive(_ value: Bool?) {
        guard let value else { return }
        insert(.interactiveKnown)
        set(.interactive, value)
    }
}

/// One event waiting in the buffer: ids and texts only, never an object (the writer thread
/// must not retain or touch a controller). `seq` and `t` are set when it enters the buffer.
struct RecordedEvent {
    var seq: Int64 = 0
    var t: Int64 = 0
    var kind: RecordedKind
    var flags: RecordedFlags = []
    /// `vc`; 0: none (ids start at 1).
    var vc: UInt64 = 0
    /// The other controller (parent, host, presented, child, old); 0: null.
    var other: UInt64 = 0
    /// `cls` on init, `name` on mark, `scene` on scene events, `style` on present, `reason` on sessionEnd.
    var text: String?
    /// `uikit` on init, `scene` on windowRoot.
    var secondText: String?
    var bounds: ViewSize?
    var traits: Traits?
    /// Integer keys of the recorder's own marks (`dropped`, `files`, `bytes`).
    var numbers: [(key: String, value: Int64)] = []

    init(_ kind: EventKind, vc: InstanceID? = nil) {
        self.kind = .standard(kind)
        self.vc = vc?.number ?? 0
    }

    init(kind: RecordedKind) { self.kind = kind }
}
