import Foundation
import LCTraceFormat
import LCTraceModel

/// One session's events in seq order, as `PortableEventReader` gives them, with their packed
/// rows (`PGEventRow`) decoded and their texts resolved on the client (issue 26): the server
/// reads the session's rows by its primary key and sends ids, and the texts come from a cache
/// filled a page of rows at a time, instead of five joins with `strings` for every row (a
/// quarter of the server's time in an ingest).
/// Streams through a cursor of the caller's transaction, a page at a time.
final class PGEventReader {
    private let pg: PGConnection
    private var texts: PGTextCache
    let pageRows: Int
    /// Told each page's texts by id: the analysis's `PGStrings` keeps them, so the model's
    /// rows, whose texts are the events', find their ids without a round trip.
    var learn: (([Int64: String]) -> Void)?

    init(pg: PGConnection, maxCached: Int = 200_000, pageRows: Int = 4096) {
        self.pg = pg
        texts = PGTextCache(maxCached: maxCached)
        self.pageRows = pageRows
    }

    /// Calls `body` with every event of `session` (wall and thread are not read, nor the attrs
    /// of the events whose attrs the model does not read: `EventKind.modelReadsAttrs`).
    func forEachEvent(session: Int64, sid: String, _ body: (TraceEvent) throws -> Void) throws {
        // Declared and first fetched in one round trip, closed with the next statement sent
        // (a session's analysis on PostgreSQL took 13 round trips, two of them these).
        let opened = try pg.openCursor("""
            SELECT seq, t, ev, vc, other, flags, rest ->> 'ev', rest ->> 'class', rest ->> 'detail', rest ->> 'attrs'
            FROM events WHERE session = $1 ORDER BY seq
            """, [String(session)], fetching: pageRows)
        let cursor = opened.name
        defer { pg.closeLater(cursor) }
        var page = opened.firstPage
        var kinds: [String: EventKind] = [:]
        var event = TraceEvent(sid: sid, seq: 0, t: 0, name: "", kind: .unknown)
        while true {
            try resolve(page)
            func text(_ row: Int, _ column: Int) -> String? { page.int(row, column).flatMap { texts[$0] } }
            for r in 0..<page.rowCount {
                event.seq = page.int(r, 0) ?? 0
                event.t = page.int(r, 1) ?? 0
                event.name = (page.int(r, 2) == 0 ? text(r, 6) : text(r, 2)) ?? ""
                if let kind = kinds[event.name] { event.kind = kind } else {
                    event.kind = EventKind(name: event.name)
                    kinds[event.name] = event.kind
                }
                let packed = page.int(r, 5) ?? 0
                let classInOther = packed & PGEventRow.classInOtherBit != 0
                event.vc = text(r, 3)
                event.cls = classInOther ? text(r, 4) : text(r, 7)
                event.other = classInOther ? nil : text(r, 4)
                event.flags = PGEventRow.decodedFlags(packed)
                event.detail = text(r, 8)
                event.attrs = event.kind.modelReadsAttrs ? page.text(r, 9) : nil
                try body(event)
            }
            if page.rowCount < pageRows { return }
            page = try pg.query("FETCH \(pageRows) FROM \(cursor)")
        }
    }

    /// Reads the texts of the page's ids that the cache lacks, in one query.
    private func resolve(_ page: PGResult) throws {
        var ids = Set<Int64>()
        for r in 0..<page.rowCount {
            for c in [2, 3, 4, 6, 7, 8] { if let id = page.int(r, c), id != 0 { ids.insert(id) } }
        }
        try texts.load(ids, on: pg)
        if let learn {
            var known: [Int64: String] = [:]
            for id in ids { known[id] = texts[id] }
            learn(known)
        }
    }
}

/// Texts of `strings` ids read from the server, cached within a bound (controller ids are many
/// and mostly of one session: flat memory). The analysis's readers share it: the events read
/// back (`PGEventReader`) and the rows captured while loading (`PGAnalysisStore`).
struct PGTextCache {
    private var texts: [Int64: String] = [:]
    let maxCached: Int

    init(maxCached: Int) { self.maxCached = maxCached }

    subscript(id: Int64) -> String? { texts[id] }

    /// Reads the texts of `ids` the cache lacks, in one query (those `known` holds are taken
    /// from it instead); when they would not fit, the cache is emptied first and every one of
    /// `ids` is read.
    mutating func load(_ ids: Set<Int64>, on pg: PGConnection, known: PGLearnedTexts? = nil) throws {
        var missing = ids.filter { texts[$0] == nil }
        guard !missing.isEmpty else { return }
        if texts.count + missing.count > maxCached {
            texts.removeAll(keepingCapacity: true)
            missing = ids
        }
        if let known { missing = known.take(missing, into: &texts) }
        guard !missing.isEmpty else { return }
        let rows = try pg.queryPrepared("SELECT id, text FROM strings WHERE id = ANY($1::bigint[])",
                                [PGSchema.arrayLiteral(missing)])
        for r in 0..<rows.rowCount {
            if let id = rows.int(r, 0), let text = rows.text(r, 1) { texts[id] = text }
        }
    }
}

/// The texts an ingest's `PGStrings` learned (inserted, or found stored), by id, for its
/// analysis thread (`PGModelWorker`): the captured rows' texts are the ingest's own, so the
/// worker takes them from here instead of reading them back from `strings` (a statement a
/// file, 0.13 s of the server's 1.7 s on the 718,000-event benchmark). Ids are committed
/// before they are learned (`PGStrings` inserts in autocommit) and never change their text.
/// Bounded as the caches are; what it lacks is read from the server.
final class PGLearnedTexts: @unchecked Sendable {
    private let lock = NSLock()
    private var texts: [Int64: String] = [:]
    let maxCached: Int

    init(maxCached: Int = PGStrings.maxCached) { self.maxCached = maxCached }

    func learn(_ ids: [String: Int64]) {
        lock.lock()
        defer { lock.unlock() }
        if texts.count + ids.count > maxCached { texts.removeAll(keepingCapacity: true) }
        for (text, id) in ids where texts.count < maxCached { texts[id] = text }
    }

    /// Puts the texts it holds of `ids` into `cache`, and returns the ids it lacks.
    func take(_ ids: Set<Int64>, into cache: inout [Int64: String]) -> Set<Int64> {
        lock.lock()
        defer { lock.unlock() }
        var lacking = Set<Int64>()
        for id in ids {
            if let text = texts[id] { cache[id] = text } else { lacking.insert(id) }
        }
        return lacking
    }
}
