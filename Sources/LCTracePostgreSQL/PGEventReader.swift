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
        // The session's blocks as stored, a page of them at a time, in first_seq order; the
        // cursor declared and first fetched in one round trip, closed with the next statement.
        // Blocks a page: `pageRows` / 64 (64 by default). A session loaded in many small
        // batches has blocks of a few events, so a page counts more blocks than 4,096 events
        // fill; 64 full blocks are about 1.3 MB decoded.
        let blocksPerPage = max(1, pageRows / 64)
        let opened = try pg.openCursor("SELECT seq, t, ev, vc, other, flags, rest FROM event_blocks WHERE session = $1 ORDER BY first_seq",
                                       [String(session)], fetching: blocksPerPage)
        let cursor = opened.name
        defer { pg.closeLater(cursor) }
        /// A page's blocks, their texts known, and those of the blocks still being read kept.
        func blocks(_ page: PGResult, reading: [PGEventBlock]) throws -> (blocks: [PGEventBlock], last: Bool) {
            let blocks = try (0..<page.rowCount).map { try PGEventBlock(page, row: $0) }
            try resolve(blocks + reading)
            return (blocks, page.rowCount < blocksPerPage)
        }
        let first = try blocks(opened.firstPage, reading: [])
        var names = PGEventNames()
        var event = TraceEvent(sid: sid, seq: 0, t: 0, name: "", kind: .unknown)
        func text(_ id: Int64) -> String? { id == 0 ? nil : texts[id] }
        try PGBlockMerge.forEach(first: first.blocks, last: first.last, fetch: { reading in
            try blocks(try pg.query("FETCH \(blocksPerPage) FROM \(cursor)"), reading: reading)
        }) { b, i in
            event.seq = b.seq[i]
            event.t = b.t[i]
            (event.name, event.kind) = names.of(b.ev[i] != 0 ? b.ev[i] : b.restEv[i], text)
            let packed = b.flags[i]
            let classInOther = packed & PGEventRow.classInOtherBit != 0
            event.vc = text(b.vc[i])
            event.cls = classInOther ? text(b.other[i]) : text(b.restClass[i])
            event.other = classInOther ? nil : text(b.other[i])
            event.flags = PGEventRow.decodedFlags(packed)
            event.detail = text(b.restDetail[i])
            event.attrs = event.kind.modelReadsAttrs ? b.restAttrs[i] : nil
            try body(event)
        }
    }

    /// Reads the texts of the blocks' ids that the cache lacks, in one query (when they would
    /// not fit, the cache is emptied and every one of them read).
    private func resolve(_ blocks: [PGEventBlock]) throws {
        var ids = Set<Int64>()
        for b in blocks {
            for column in [b.ev, b.vc, b.other, b.restEv, b.restClass, b.restDetail] {
                var last: Int64 = 0
                for id in column where id != last {
                    ids.insert(id)
                    last = id
                }
            }
        }
        ids.remove(0)
        try texts.load(ids, on: pg)
        if let learn {
            var known: [Int64: String] = [:]
            for id in ids { known[id] = texts[id] }
            learn(known)
        }
    }

}

/// Event names and their kinds by `strings` id, each text looked up and classified once: a
/// session's events reuse a few dozen names (both readers of events: `PGEventReader` and
/// `PGCapturedRows`).
struct PGEventNames {
    private var known: [Int64: (name: String, kind: EventKind)] = [:]

    /// The name of id `ev` (its text from `text`; "" when it has none) and its kind.
    mutating func of(_ ev: Int64, _ text: (Int64) -> String?) -> (name: String, kind: EventKind) {
        if let found = known[ev] { return found }
        let name = text(ev) ?? ""
        let found = (name: name, kind: EventKind(name: name))
        known[ev] = found
        return found
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
