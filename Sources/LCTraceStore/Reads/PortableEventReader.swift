import LCTraceFormat
import LCTraceModel

/// One session's events in seq order with their texts resolved in SQL: the portable reader
/// (any backend; the SQLite one has a faster `SessionEventReader` that caches ids). Streams one
/// row at a time where the backend does.
package final class PortableEventReader {
    private let query: any SQLQuery

    package init(db: any SQLReadConnection) throws {
        query = try db.query("""
            SELECT e.seq, e.t, n.text, v.text, c.text, o.text, e.flags, d.text, e.attrs
            FROM \(db.relation(.events)) e
            JOIN strings n ON n.id = e.ev
            LEFT JOIN strings v ON v.id = e.vc
            LEFT JOIN strings c ON c.id = e.cls
            LEFT JOIN strings o ON o.id = e.other
            LEFT JOIN strings d ON d.id = e.detail
            WHERE e.session = ?1 ORDER BY e.seq
            """)
    }

    /// Calls `body` with every event of `session` (wall and thread are not read, nor the attrs
    /// of the events whose attrs the model does not read: `EventKind.modelReadsAttrs`).
    package func forEachEvent(session: Int64, sid: String, _ body: (TraceEvent) throws -> Void) throws {
        query.reset()
        defer { query.reset() }
        query.bind(session, at: 1)
        var kinds: [String: EventKind] = [:]
        var event = TraceEvent(sid: sid, seq: 0, t: 0, name: "", kind: .unknown)
        while try query.step() {
            event.seq = query.int(0)
            event.t = query.int(1)
            event.name = query.text(2) ?? ""
            if let kind = kinds[event.name] { event.kind = kind } else {
                event.kind = EventKind(name: event.name)
                kinds[event.name] = event.kind
            }
            event.vc = query.text(3)
            event.cls = query.text(4)
            event.other = query.text(5)
            event.flags = EventFlags(rawValue: query.int(6))
            event.detail = query.text(7)
            event.attrs = event.kind.modelReadsAttrs ? query.text(8) : nil
            try body(event)
        }
    }
}
