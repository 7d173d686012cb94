import LCTraceFormat

/// Boolean keys of format v1, stored as bits of the `flags` column: bit n holds the value,
/// bit n+8 records that the key was present (so false and absent stay distinct).
public struct EventFlags: OptionSet, Hashable, Sendable {
    public let rawValue: Int64
    @inlinable @inline(__always) public init(rawValue: Int64) { self.rawValue = rawValue }
    /// Spelt out and inlinable: the OptionSet default reached the ingest's hot loops (in other
    /// targets) as an out-of-line protocol witness, 1 % of the loading's instructions.
    @inlinable @inline(__always) public func contains(_ member: EventFlags) -> Bool { rawValue & member.rawValue == member.rawValue }

    package static let animated = EventFlags(rawValue: 1 << 0)
    package static let isMovingToParent = EventFlags(rawValue: 1 << 1)
    package static let isBeingPresented = EventFlags(rawValue: 1 << 2)
    package static let isMovingFromParent = EventFlags(rawValue: 1 << 3)
    package static let isBeingDismissed = EventFlags(rawValue: 1 << 4)
    package static let interactive = EventFlags(rawValue: 1 << 5)
    /// The event's `other` key (parent, host, presented, child) was present, possibly null.
    package static let otherPresent = EventFlags(rawValue: 1 << 16)

    /// The "key present" bit for a value bit.
    @inlinable package static func present(_ flag: EventFlags) -> EventFlags { EventFlags(rawValue: flag.rawValue << 8) }
}

/// A session record held by reference (see `TraceEvent.session`), compared by value.
private final class RecordBox: Equatable, @unchecked Sendable {
    package let value: SessionRecord
    package init(_ value: SessionRecord) { self.value = value }
    package static func == (a: RecordBox, b: RecordBox) -> Bool { a.value == b.value }
}

/// The metadata of a `session` record.
package struct SessionRecord: Equatable, Sendable {
    package var app: String?
    package var appVersion: String?
    package var build: String?
    package var os: String?
    package var osVersion: String?
    package var sdk: String?
    package var device: String?
    package var recorder: String?
    package var wall: String?

    package init(app: String? = nil, appVersion: String? = nil, build: String? = nil, os: String? = nil,
                osVersion: String? = nil, sdk: String? = nil, device: String? = nil, recorder: String? = nil,
                wall: String? = nil) {
        self.app = app; self.appVersion = appVersion; self.build = build; self.os = os
        self.osVersion = osVersion; self.sdk = sdk; self.device = device; self.recorder = recorder; self.wall = wall
    }

    package static let keys = ["app", "appVersion", "build", "os", "osVersion", "sdk", "device", "recorder"]

    package mutating func set(_ key: String, _ value: String) {
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
    package func differences(from other: SessionRecord) -> [String] {
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
package struct StoredIDs: Equatable, Sendable {
    package var vc: Int64 = 0
    package var cls: Int64 = 0
    package var other: Int64 = 0
    package init() {}
    package static func == (_: StoredIDs, _: StoredIDs) -> Bool { true }
}

/// One decoded trace line, in the shape the store keeps it.
package struct TraceEvent: Equatable, Sendable {
    package var sid: String
    package var seq: Int64
    package var t: Int64
    package var name: String
    package var kind: EventKind
    package var wall: String?
    package var thread: String?
    package var vc: String?
    package var cls: String?
    /// The other controller the event names (see `EventKind.otherKey`); nil when null or absent.
    package var other: String?
    package var flags: EventFlags
    /// Style, scene, mark name or end reason (see `EventKind.detailKey`).
    package var detail: String?
    /// A JSON object with every key not stored in a column (bounds, traits, unknown keys), or nil.
    package var attrs: String?
    /// The interned ids of `vc`, `cls` and `other` where the event was read from the store.
    package var ids = StoredIDs()
    /// Present on `session` records.
    package var session: SessionRecord? {
        get { record?.value }
        set { record = newValue.map(RecordBox.init) }
    }
    /// Boxed: a record is nine strings, and on every other event it would make each copy of
    /// an event (the model builder takes millions) 150 bytes longer.
    private var record: RecordBox?

    package init(sid: String, seq: Int64, t: Int64, name: String, kind: EventKind? = nil, wall: String? = nil, thread: String? = nil,
                vc: String? = nil, cls: String? = nil, other: String? = nil, flags: EventFlags = [],
                detail: String? = nil, attrs: String? = nil, session: SessionRecord? = nil) {
        self.sid = sid; self.seq = seq; self.t = t; self.name = name; self.kind = kind ?? EventKind(name: name)
        self.wall = wall; self.thread = thread; self.vc = vc; self.cls = cls; self.other = other
        self.flags = flags; self.detail = detail; self.attrs = attrs; self.record = session.map(RecordBox.init)
    }

    package func has(_ flag: EventFlags) -> Bool { flags.contains(flag) }
}
