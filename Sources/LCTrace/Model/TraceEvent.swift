/// The event names of trace format v1. Unknown names decode as `.unknown` and are kept.
public enum EventKind: String, CaseIterable, Sendable {
    case session, sessionEnd
    case `init`, loadView, viewDidLoad
    case viewWillAppear, viewIsAppearing, viewDidAppear, viewWillDisappear, viewDidDisappear
    case `deinit`
    case viewWillLayoutSubviews, viewDidLayoutSubviews, traitChange, memoryWarning
    case addChild, willMoveToParent, didMoveToParent, removeFromParent
    case viewAttached, viewDetached
    case present, dismiss, push, pop
    case sceneWillConnect, sceneDidBecomeActive, sceneWillResignActive
    case sceneWillEnterForeground, sceneDidEnterBackground, sceneDidDisconnect
    case appDidFinishLaunching, appDidBecomeActive, appWillResignActive
    case appDidEnterBackground, appWillEnterForeground, appWillTerminate
    case mark
    case unknown

    public init(name: String) { self = EventKind(rawValue: name) ?? .unknown }

    /// Known names by length: classifies a raw name without building a String.
    private static let byLength = ShortName.table(EventKind.allCases.filter { $0 != .unknown }) { $0.rawValue }

    public static func classify(_ name: UnsafeRawBufferPointer) -> EventKind {
        ShortName.lookup(name, in: byLength) ?? .unknown
    }

    /// The key whose value (another controller id) goes to the `other` column.
    public var otherKey: String? {
        switch self {
        case .addChild, .willMoveToParent, .didMoveToParent, .removeFromParent: return "parent"
        case .viewAttached, .viewDetached: return "host"
        case .present: return "presented"
        case .push, .pop: return "child"
        default: return nil
        }
    }

    /// The key whose string value goes to the `detail` column.
    public var detailKey: String? {
        switch self {
        case .present: return "style"
        case .sceneWillConnect, .sceneDidBecomeActive, .sceneWillResignActive,
             .sceneWillEnterForeground, .sceneDidEnterBackground, .sceneDidDisconnect: return "scene"
        case .mark: return "name"
        case .sessionEnd: return "reason"
        default: return nil
        }
    }

    /// Events that describe one controller and so need `vc`.
    public var needsVC: Bool {
        switch self {
        case .`init`, .loadView, .viewDidLoad, .viewWillAppear, .viewIsAppearing, .viewDidAppear,
             .viewWillDisappear, .viewDidDisappear, .`deinit`, .viewWillLayoutSubviews, .viewDidLayoutSubviews,
             .traitChange, .addChild, .willMoveToParent, .didMoveToParent, .removeFromParent,
             .viewAttached, .viewDetached, .present, .dismiss, .push, .pop:
            return true
        default:
            return false
        }
    }

    public var isSceneEvent: Bool {
        switch self {
        case .sceneWillConnect, .sceneDidBecomeActive, .sceneWillResignActive,
             .sceneWillEnterForeground, .sceneDidEnterBackground, .sceneDidDisconnect: return true
        default: return false
        }
    }

    public var isAppDelegateEvent: Bool {
        switch self {
        case .appDidFinishLaunching, .appWillTerminate: return true
        default: return isDeprecatedAppDelegateEvent
        }
    }

    /// (1.1) The four app-delegate state transitions the iOS 26 SDK deprecates in favour of the
    /// scene ones (LC501). `appDidFinishLaunching` and `appWillTerminate` are not deprecated.
    public var isDeprecatedAppDelegateEvent: Bool {
        switch self {
        case .appDidBecomeActive, .appWillResignActive, .appDidEnterBackground, .appWillEnterForeground: return true
        default: return false
        }
    }
}

/// Boolean keys of format v1, stored as bits of the `flags` column: bit n holds the value,
/// bit n+8 records that the key was present (so false and absent stay distinct).
public struct EventFlags: OptionSet, Hashable, Sendable {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }

    public static let animated = EventFlags(rawValue: 1 << 0)
    public static let isMovingToParent = EventFlags(rawValue: 1 << 1)
    public static let isBeingPresented = EventFlags(rawValue: 1 << 2)
    public static let isMovingFromParent = EventFlags(rawValue: 1 << 3)
    public static let isBeingDismissed = EventFlags(rawValue: 1 << 4)
    public static let interactive = EventFlags(rawValue: 1 << 5)
    /// The event's `other` key (parent, host, presented, child) was present, possibly null.
    public static let otherPresent = EventFlags(rawValue: 1 << 16)

    /// The "key present" bit for a value bit.
    public static func present(_ flag: EventFlags) -> EventFlags { EventFlags(rawValue: flag.rawValue << 8) }
}

/// A session record held by reference (see `TraceEvent.session`), compared by value.
private final class RecordBox: Equatable, @unchecked Sendable {
    let value: SessionRecord
    init(_ value: SessionRecord) { self.value = value }
    static func == (a: RecordBox, b: RecordBox) -> Bool { a.value == b.value }
}

/// The metadata of a `session` record.
public struct SessionRecord: Equatable, Sendable {
    public var app: String?
    public var appVersion: String?
    public var build: String?
    public var os: String?
    public var osVersion: String?
    public var sdk: String?
    public var device: String?
    public var recorder: String?
    public var wall: String?

    public init(app: String? = nil, appVersion: String? = nil, build: String? = nil, os: String? = nil,
                osVersion: String? = nil, sdk: String? = nil, device: String? = nil, recorder: String? = nil,
                wall: String? = nil) {
        self.app = app; self.appVersion = appVersion; self.build = build; self.os = os
        self.osVersion = osVersion; self.sdk = sdk; self.device = device; self.recorder = recorder; self.wall = wall
    }

    static let keys = ["app", "appVersion", "build", "os", "osVersion", "sdk", "device", "recorder"]

    mutating func set(_ key: String, _ value: String) {
        switch key {
        case "app": app = value
        case "appVersion": appVersion = value
        case "build": build = value
        case "os": os = value
        case "osVersion": osVersion = value
        case "sdk": sdk = value
        case "device": device = value
        case "recorder": recorder = value
        default: break
        }
    }

    /// Names of the fields on which two records disagree.
    public func differences(from other: SessionRecord) -> [String] {
        var out: [String] = []
        if app != other.app { out.append("app") }
        if appVersion != other.appVersion { out.append("appVersion") }
        if build != other.build { out.append("build") }
        if os != other.os { out.append("os") }
        if osVersion != other.osVersion { out.append("osVersion") }
        if sdk != other.sdk { out.append("sdk") }
        if device != other.device { out.append("device") }
        if recorder != other.recorder { out.append("recorder") }
        return out
    }
}

/// The interned ids (`strings.id`) of an event's texts in the SQLite database it was read
/// from, 0 where not known. A hint that the model carries to the model writer, which would
/// otherwise hash each text again to find its id (a twentieth of the writer thread's time);
/// not part of the event's value: equal events may come with or without them.
public struct StoredIDs: Equatable, Sendable {
    public var vc: Int64 = 0
    public var cls: Int64 = 0
    public var other: Int64 = 0
    public init() {}
    public static func == (_: StoredIDs, _: StoredIDs) -> Bool { true }
}

/// One decoded trace line, in the shape the store keeps it.
public struct TraceEvent: Equatable, Sendable {
    public var sid: String
    public var seq: Int64
    public var t: Int64
    public var name: String
    public var kind: EventKind
    public var wall: String?
    public var thread: String?
    public var vc: String?
    public var cls: String?
    /// The other controller the event names (see `EventKind.otherKey`); nil when null or absent.
    public var other: String?
    public var flags: EventFlags
    /// Style, scene, mark name or end reason (see `EventKind.detailKey`).
    public var detail: String?
    /// A JSON object with every key not stored in a column (bounds, traits, unknown keys), or nil.
    public var attrs: String?
    /// The interned ids of `vc`, `cls` and `other` where the event was read from the store.
    public var ids = StoredIDs()
    /// Present on `session` records.
    public var session: SessionRecord? {
        get { record?.value }
        set { record = newValue.map(RecordBox.init) }
    }
    /// Boxed: a record is nine strings, and on every other event it would make each copy of
    /// an event (the model builder takes millions) 150 bytes longer.
    private var record: RecordBox?

    public init(sid: String, seq: Int64, t: Int64, name: String, kind: EventKind? = nil, wall: String? = nil, thread: String? = nil,
                vc: String? = nil, cls: String? = nil, other: String? = nil, flags: EventFlags = [],
                detail: String? = nil, attrs: String? = nil, session: SessionRecord? = nil) {
        self.sid = sid; self.seq = seq; self.t = t; self.name = name; self.kind = kind ?? EventKind(name: name)
        self.wall = wall; self.thread = thread; self.vc = vc; self.cls = cls; self.other = other
        self.flags = flags; self.detail = detail; self.attrs = attrs; self.record = session.map(RecordBox.init)
    }

    public func has(_ flag: EventFlags) -> Bool { flags.contains(flag) }
}
