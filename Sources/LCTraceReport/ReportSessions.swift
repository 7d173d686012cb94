import LCTraceModel
import LCTraceStore

/// The sessions of a report, held as columns of small numbers rather than one `SessionInfo` of
/// ten Strings each (issue 25 item 13: 400,000 tiny sessions took about 170 MB as structs).
/// What many sessions share (app, version, build, OS, SDK; the device; the end reason) is
/// interned and each session keeps its number; the session and wall ids are packed UTF-8. A
/// session is rebuilt as a `SessionInfo` only when one is asked for (the few an example shows).
package struct ReportSessions: RandomAccessCollection, Sendable {
    /// What a session's build and platform are: shared by many sessions.
    struct Profile: Hashable, Sendable {
        var app, appVersion, build, os, osVersion, sdk: String?
    }

    private(set) var profiles = Interned<Profile>()
    private(set) var devices = Interned<String?>()
    private var endReasons = Interned<String?>()
    private var ids: [Int64] = []
    private var sids = PackedTexts()
    private var walls = PackedTexts()
    /// Per session: index into `profiles`, `devices`, `endReasons`.
    private(set) var profile: [Int32] = []
    private(set) var device: [Int32] = []
    private var endReason: [Int32] = []
    private(set) var events: [Int] = []
    private var lostEvents: [Int] = []
    private var recordConflicts: [Int] = []
    /// Present only when `flags` says so (`Flag`).
    private var firstT: [Int64] = [], lastT: [Int64] = []
    private var flags: [UInt8] = []

    private enum Flag {
        static let firstT: UInt8 = 1, lastT: UInt8 = 2, dirty: UInt8 = 4, noWall: UInt8 = 8
    }

    package init() {}

    package init(_ sessions: some Sequence<SessionInfo>) {
        for s in sessions { append(s) }
    }

    package mutating func append(_ s: SessionInfo) {
        ids.append(s.id)
        sids.append(s.sid)
        walls.append(s.wall ?? "")
        profile.append(profiles.number(Profile(app: s.app, appVersion: s.appVersion, build: s.build, os: s.os,
                                               osVersion: s.osVersion, sdk: s.sdk)))
        device.append(devices.number(s.device))
        endReason.append(endReasons.number(s.endReason))
        events.append(s.events)
        lostEvents.append(s.lostEvents)
        recordConflicts.append(s.recordConflicts)
        firstT.append(s.firstT ?? 0)
        lastT.append(s.lastT ?? 0)
        flags.append((s.firstT != nil ? Flag.firstT : 0) | (s.lastT != nil ? Flag.lastT : 0)
                     | (s.dirty ? Flag.dirty : 0) | (s.wall == nil ? Flag.noWall : 0))
    }

    /// Gives back the spare capacity the columns grew by while appending.
    package mutating func trim() {
        func fit<T>(_ a: inout [T]) { if a.capacity > a.count + a.count / 16 { a = Array(a) } }
        fit(&ids); fit(&profile); fit(&device); fit(&endReason); fit(&events); fit(&lostEvents)
        fit(&recordConflicts); fit(&firstT); fit(&lastT); fit(&flags)
        sids.trim(); walls.trim()
    }

    package var startIndex: Int { 0 }
    package var endIndex: Int { ids.count }

    /// Session `i` as the database listed it (with any `update(_:from:)` applied).
    package subscript(i: Int) -> SessionInfo {
        let p = profiles[profile[i]], f = flags[i]
        return SessionInfo(
            id: ids[i], sid: sids[i], app: p.app, appVersion: p.appVersion, build: p.build, device: devices[device[i]],
            os: p.os, osVersion: p.osVersion, sdk: p.sdk, wall: f & Flag.noWall != 0 ? nil : walls[i],
            events: events[i], lostEvents: lostEvents[i], firstT: f & Flag.firstT != 0 ? firstT[i] : nil,
            lastT: f & Flag.lastT != 0 ? lastT[i] : nil, endReason: endReasons[endReason[i]],
            dirty: f & Flag.dirty != 0, recordConflicts: recordConflicts[i])
    }

    /// The row id of session `i`.
    package func id(_ i: Int) -> Int64 { ids[i] }
    /// Whether session `i`'s events changed since its model was built.
    package func isDirty(_ i: Int) -> Bool { flags[i] & Flag.dirty != 0 }
    /// "5.2.1 (812)": session `i`'s build as `BuildOrder.name` names it.
    func buildName(_ i: Int) -> String {
        let p = profiles[profile[i]]
        return BuildOrder.name(appVersion: p.appVersion, build: p.build)
    }
    /// The distinct apps of the sessions.
    var apps: Set<String> { Set(profiles.values.compactMap(\.app)) }

    /// Session `i`'s counts, times and end as computed from its events (a dirty session).
    package mutating func update(_ i: Int, from stats: SessionStats) {
        var s = self[i]
        s.update(from: stats)
        events[i] = s.events
        lostEvents[i] = s.lostEvents
        firstT[i] = s.firstT ?? 0
        lastT[i] = s.lastT ?? 0
        flags[i] = flags[i] & ~(Flag.firstT | Flag.lastT) | (s.firstT != nil ? Flag.firstT : 0) | (s.lastT != nil ? Flag.lastT : 0)
        endReason[i] = endReasons.number(s.endReason)
    }

    /// Index of each session by its row id, ascending ids (to find a session by id).
    func byID() -> [Int32] {
        ids.indices.map(Int32.init).sorted { ids[Int($0)] < ids[Int($1)] }
    }

    /// The index of the session whose row id is `id`, in `order` (`byID()`).
    func index(ofID id: Int64, in order: [Int32]) -> Int? {
        var lo = 0, hi = order.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ids[Int(order[mid])] < id { lo = mid + 1 } else { hi = mid }
        }
        return lo < order.count && ids[Int(order[lo])] == id ? Int(order[lo]) : nil
    }

    /// The session id of session `i`, compared as bytes (`SessionLookup`).
    func sidBytes(_ i: Int) -> ArraySlice<UInt8> { sids.bytes(i) }

    /// The same sessions with every text escaped for a terminal (`TerminalText`); `changed` set
    /// when one needed it. Mostly none does, and then the columns are shared, not copied.
    package func escapedForTerminal(noting changed: inout Bool) -> ReportSessions {
        func x(_ s: String?) -> String? { s.map { TerminalText.escaped($0) } }
        var copy = self
        var any = false
        let profiles = self.profiles.values.map { p in
            Profile(app: x(p.app), appVersion: x(p.appVersion), build: x(p.build), os: x(p.os), osVersion: x(p.osVersion), sdk: x(p.sdk))
        }
        if profiles != self.profiles.values { any = true; copy.profile = Self.renumber(profile, profiles, into: &copy.profiles) }
        let devices = self.devices.values.map(x)
        if devices != self.devices.values { any = true; copy.device = Self.renumber(device, devices, into: &copy.devices) }
        let reasons = endReasons.values.map(x)
        if reasons != endReasons.values { any = true; copy.endReason = Self.renumber(endReason, reasons, into: &copy.endReasons) }
        if let escaped = sids.escaped() { any = true; copy.sids = escaped }
        if let escaped = walls.escaped() { any = true; copy.walls = escaped }
        if any { changed = true }
        return any ? copy : self
    }

    /// `numbers` into `values` renamed (two old values may become one).
    private static func renumber<T: Hashable & Sendable>(_ numbers: [Int32], _ values: [T], into table: inout Interned<T>) -> [Int32] {
        table = Interned<T>()
        let map = values.map { table.number($0) }
        return numbers.map { map[Int($0)] }
    }
}

/// Distinct values, each with a small number (its index), in order of first use.
struct Interned<T: Hashable & Sendable>: Sendable {
    private(set) var values: [T] = []
    private var numbers: [T: Int32] = [:]

    mutating func number(_ value: T) -> Int32 {
        if let n = numbers[value] { return n }
        let n = Int32(values.count)
        values.append(value)
        numbers[value] = n
        return n
    }

    subscript(n: Int32) -> T { values[Int(n)] }
    var count: Int { values.count }
}

/// Texts packed end to end as UTF-8: one allocation for all of them instead of one each.
struct PackedTexts: Sendable {
    private var bytes: [UInt8] = []
    /// Where each text ends in `bytes`.
    private var ends: [UInt32] = []

    mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
        ends.append(UInt32(bytes.count))
    }

    func bytes(_ i: Int) -> ArraySlice<UInt8> { bytes[(i == 0 ? 0 : Int(ends[i - 1]))..<Int(ends[i])] }
    subscript(i: Int) -> String { String(decoding: bytes(i), as: UTF8.self) }
    var count: Int { ends.count }

    mutating func trim() {
        if bytes.capacity > bytes.count + bytes.count / 16 { bytes = Array(bytes) }
        if ends.capacity > ends.count + ends.count / 16 { ends = Array(ends) }
    }

    /// The texts escaped for a terminal, or nil when none needs it.
    func escaped() -> PackedTexts? {
        // Only bytes ≥ 0x7F or < 0x20 can start what `TerminalText` escapes.
        guard bytes.contains(where: { $0 < 0x20 || $0 >= 0x7F }) else { return nil }
        var out = PackedTexts()
        var changed = false
        for i in 0..<count { out.append(TerminalText.escaped(self[i], noting: &changed)) }
        return changed ? out : nil
    }
}

/// Finds a session by its id (`ReportView.session(_:)`) among many without a String each: an
/// open-addressed table of session indices, hashed by the id's bytes.
struct SessionLookup: Sendable {
    private var slots: [Int32] = []

    init(_ sessions: ReportSessions) {
        guard !sessions.isEmpty else { return }
        var size = 1
        while size < sessions.count * 2 { size <<= 1 }
        slots = Array(repeating: -1, count: size)
        for i in sessions.indices {
            let bytes = sessions.sidBytes(i)
            var slot = Self.hash(bytes) & (size - 1)
            while slots[slot] >= 0 {
                // The first of equal ids wins, as a dictionary built in order would keep it.
                if sessions.sidBytes(Int(slots[slot])).elementsEqual(bytes) { break }
                slot = (slot + 1) & (size - 1)
            }
            if slots[slot] < 0 { slots[slot] = Int32(i) }
        }
    }

    func index(of sid: String, in sessions: ReportSessions) -> Int? {
        guard !slots.isEmpty else { return nil }
        var sid = sid
        return sid.withUTF8 { bytes in
            var slot = Self.hash(bytes) & (slots.count - 1)
            while slots[slot] >= 0 {
                if sessions.sidBytes(Int(slots[slot])).elementsEqual(bytes) { return Int(slots[slot]) }
                slot = (slot + 1) & (slots.count - 1)
            }
            return nil
        }
    }

    /// FNV-1a.
    static func hash(_ bytes: some Sequence<UInt8>) -> Int {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return Int(truncatingIfNeeded: h ^ (h >> 29))
    }
}
