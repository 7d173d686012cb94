/// Writes the `rejects` rows of an ingest: rejected lines, conflicting duplicates, damage.
final class RejectWriter {
    private let insert: SQLiteStatement

    init(db: SQLiteDatabase) throws {
        insert = try db.prepare("INSERT INTO rejects(file, kind, line, offset, reason, text) VALUES (?, ?, ?, ?, ?, ?)")
    }


    /// Stores one input problem with the first 200 bytes of its line: as text when they are
    /// UTF-8 (or cut inside a character at 200), else as a blob.
    func write(file: Int64, kind: RejectKind, line: Int?, offset: Int64?, reason: String, sample: UnsafeRawBufferPointer?) throws {
        let s = insert
        s.reset()
        s.bind(file, at: 1)
        s.bind(kind.rawValue, at: 2)
        s.bind(line.map(Int64.init), at: 3)
        s.bind(offset, at: 4)
        s.bind(reason, at: 5)
        if let sample {
            let cut = UnsafeRawBufferPointer(rebasing: sample.prefix(200))
            if let text = String(validating: cut, as: UTF8.self) {
                s.bind(text, at: 6)
            } else if let text = String(validating: UnsafeRawBufferPointer(rebasing: cut.prefix(utf8Boundary(cut))), as: UTF8.self),
                      utf8Boundary(cut) >= cut.count - 3, !text.isEmpty {
                // Cut through a multi-byte character at 200 bytes: keep the whole ones.
                s.bind(text, at: 6)
            } else {
                try s.bind(.blob(Array(cut)), at: 6)
            }
        }
        try s.step()
    }

    /// Largest prefix length of `bytes` that does not end inside a UTF-8 sequence.
    private func utf8Boundary(_ bytes: UnsafeRawBufferPointer) -> Int {
        var end = bytes.count
        var back = 0
        while end > 0 && back < 3 && (bytes[end - 1] & 0xC0) == 0x80 { end -= 1; back += 1 }
        if end > 0 && bytes[end - 1] >= 0xC0 { end -= 1 }
        return end
    }
}
