import LCTraceModel
import LCTraceStore

/// The events of one session as the writer stored them: interned ids and numbers, no text.
///
/// The writer keeps them for a session that had no rows when it first met it in the current
/// file, so they are every row the session has; the analysis while loading builds the model
/// from them instead of reading the rows back from the table (which cost about as much as
/// building the model). `IngestStore` decides when a capture is complete and drops it
/// otherwise; the reader turns it into the same events, in the same order, as the table.
final class CapturedRows: CapturedSessionRows, @unchecked Sendable {
    /// One events row. Ids are `strings.id` values, 0 for NULL (ids start at 1).
    package struct Row: Equatable {
        package var seq: Int64
        package var t: Int64
        package var ev: Int32
        package var vc: Int32
        package var cls: Int32
        package var other: Int32
        package var detail: Int32
        package var flags: Int32
    }

    package private(set) var rows: [Row] = []
    /// The attrs of the rows whose kind the model reads them of (`EventKind.modelReadsAttrs`),
    /// by seq: few (an init with `uikit`, a `windowRoot`), so kept beside the fixed-size rows.
    package private(set) var attrs: [Int64: String] = [:]
    /// False once a row came in at or below the seq before it (then `inSeqOrder` sorts).
    private var ascending = true

    package init() {}

    package var count: Int { rows.count }

    /// Appends a stored row; false when a value does not fit its 32-bit field (the capture
    /// must then be dropped: ids that large do not occur before two billion distinct texts).
    package func append(seq: Int64, t: Int64, ev: Int64, vc: Int64?, cls: Int64?, other: Int64?, detail: Int64?, flags: Int64,
                        attrs: String? = nil) -> Bool {
        func narrow(_ id: Int64?) -> Int32? {
            guard let id else { return 0 }
            return id > 0 && id <= Int64(Int32.max) ? Int32(id) : nil
        }
        guard let ev32 = narrow(ev), let vc32 = narrow(vc), let cls32 = narrow(cls), let other32 = narrow(other),
              let detail32 = narrow(detail), flags >= 0, flags <= Int64(Int32.max) else { return false }
        if let last = rows.last, seq <= last.seq { ascending = false }
        rows.append(Row(seq: seq, t: t, ev: ev32, vc: vc32, cls: cls32, other: other32, detail: detail32, flags: Int32(flags)))
        if let attrs { self.attrs[seq] = attrs }
        return true
    }

    /// The rows in seq order, as `SELECT … ORDER BY seq` returns them (seqs are unique: only
    /// rows that went in are captured).
    func inSeqOrder() -> [Row] {
        ascending ? rows : rows.sorted { $0.seq < $1.seq }
    }
}
