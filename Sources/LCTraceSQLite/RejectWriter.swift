import LCTraceStore

/// Writes the `rejects` rows of an ingest: rejected lines, conflicting duplicates, damage.
final class RejectWriter {
    private let insert: SQLiteStatement

    package init(db: SQLiteDatabase) throws {
        insert = try db.prepare("INSERT INTO rejects(file, kind, line, offset, reason, text) VALUES (?, ?, ?, ?, ?, ?)")
    }


    /// Stores one input problem with the first 200 bytes of its line: as text when they are
    /// UTF-8 (or cut inside a character at 200), else as a blob.
    package func write(file: Int64, kind: RejectKind, line: Int?, offset: Int64?, reason: String, sample: UnsafeRawBufferPointer?) throws {
        let s = insert
        s.reset()
        s.bind(file, at: 1)
        s.bind(kind.rawValue, at: 2)
        s.bind(line.map(Int64.init), at: 3)
        s.bind(offset, at: 4)
        s.bind(reason, at: 5)
        if let sample {
            let cut = Array(sample.prefix(RejectSample.maxBytes))
            if let text = RejectSample.text(cut) { s.bind(text, at: 6) } else { try s.bind(.blob(cut), at: 6) }
        }
        try s.step()
    }
}
