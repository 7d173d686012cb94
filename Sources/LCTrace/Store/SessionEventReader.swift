/// Reads back the events of one session in `seq` order, with interned ids resolved, for the
/// model builder. Streams: one row at a time from the primary key, whatever the session size.
public final class SessionEventReader {
    private let db: Database
    private let select: Statement
    /// Texts by interned id: the low ids (event names, classes, threads: interned first) in
    /// an array, no hashing per field; the rest (controller ids, mostly of one session) in a
    /// dictionary emptied when it grows large, so memory stays flat.
    private var names: [String?] = []
    private var otherNames: [Int64: String] = [:]
    private static let arrayLimit = 1 << 16
    /// Event kind by interned name id: classified once, not per event.
    private var kinds: [EventKind?] = []
    private var otherKinds: [Int64: EventKind] = [:]
    private let selectString: Statement

    public init(db: Database) throws {
        self.db = db
        select = try db.prepare("""
            SELECT seq, t, ev, vc, cls, other, flags, detail FROM events WHERE session = ? ORDER BY seq
            """)
        selectString = try db.prepare("SELECT text FROM strings WHERE id = ?")
    }

    /// The text of an interned id (cached).
    public func text(_ id: Int64) throws -> String {
        let index = Int(id)
        if index >= 0 && index < names.count, let s = names[index] { return s }
        if index >= Self.arrayLimit, let s = otherNames[id] { return s }
        selectString.reset()
        defer { selectString.reset() }
        selectString.bind(id, at: 1)
        let s = try selectString.step() ? (selectString.text(0) ?? "") : ""
        if index >= 0 && index < Self.arrayLimit {
            if index >= names.count { names.append(contentsOf: repeatElement(nil, count: index + 1 - names.count)) }
            names[index] = s
        } else {
            if otherNames.count >= StringPool.defaultMaxCached { otherNames.removeAll(keepingCapacity: true) }
            otherNames[id] = s
        }
        return s
    }

    /// Calls `body` with every event of `session` in seq order. Attribute keys that the rules
    /// do not need (wall, thread, attrs) are not read.
    public func forEachEvent(session: Int64, sid: String, _ body: (TraceEvent) throws -> Void) throws {
        select.reset()
        // Reset when done (or thrown out): a statement left on a row keeps its snapshot.
        defer { select.reset() }
        select.bind(session, at: 1)
        while try select.step() {
            let nameID = select.int(2)
            let name = try text(nameID)
            let kind: EventKind
            let slot = Int(nameID)
            if slot >= 0 && slot < kinds.count, let known = kinds[slot] {
                kind = known
            } else if let known = otherKinds[nameID] {
                kind = known
            } else {
                kind = EventKind(name: name)
                if slot >= 0 && slot < Self.arrayLimit {
                    if slot >= kinds.count { kinds.append(contentsOf: repeatElement(nil, count: slot + 1 - kinds.count)) }
                    kinds[slot] = kind
                } else if otherKinds.count < 1024 {
                    otherKinds[nameID] = kind
                }
            }
            var event = TraceEvent(sid: sid, seq: select.int(0), t: select.int(1), name: name, kind: kind)
            if let id = select.optionalInt(3) { event.vc = try text(id) }
            if let id = select.optionalInt(4) { event.cls = try text(id) }
            if let id = select.optionalInt(5) { event.other = try text(id) }
            event.flags = EventFlags(rawValue: select.int(6))
            if let id = select.optionalInt(7) { event.detail = try text(id) }
            try body(event)
        }
    }
}
