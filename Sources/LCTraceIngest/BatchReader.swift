import LCTraceModel

/// The reader thread's loop: the lines of one input, decoded into `EventBatch`es.
///
/// It lives here, beside `LineReader` and `EventDecoder`, so that the compiler specializes
/// the per-line closure and inlines the decoder into it: called from the pipeline's target,
/// each line cost a closure call and an unspecialized `forEachLine` (about 1 % of the
/// loading's instructions, callgrind). The pipeline sees one call per batch instead.
package enum BatchReader {
    /// Text a batch holds before it is handed over, whatever its number of lines: with the
    /// batches in flight of two files, at most 40 MiB of text however long the lines.
    package static let maxBatchBytes = 4 << 20

    /// Decodes the lines of `input` into `first` and the batches `handOver` returns for each
    /// full one (128 lines first, so the writer starts on a file almost at once; then up to
    /// 4,096, or `maxBatchBytes` of text). Returns the last, partly filled batch, or nil when
    /// `handOver` returned nil (the consumer stopped).
    package static func decodeLines(of input: TraceInput, startingWith first: EventBatch, maxLineLength: Int,
                                    decoder: EventDecoder, handOver: (EventBatch) -> EventBatch?) -> EventBatch? {
        var batch = first
        let reader = LineReader(input: input, maxLineLength: maxLineLength)
        var stopped = false
        var limit = 128
        reader.forEachLine { rawLine in
            var line = rawLine
            // A byte-order mark before the first line is an editor's habit, not data.
            if line.number == 1, line.bytes.count >= 3, line.bytes[0] == 0xEF, line.bytes[1] == 0xBB, line.bytes[2] == 0xBF {
                line.bytes = UnsafeRawBufferPointer(rebasing: line.bytes[3...])
            }
            if let length = line.overlongLength {
                batch.rejects.append(RawReject(line: line.number, offset: line.offset,
                                               reason: "line longer than \(maxLineLength) bytes (\(length) bytes)",
                                               sample: batch.append(line.bytes)))
            } else if !isBlank(line.bytes) {
                if let reason = decoder.decode(line.bytes, into: batch, line: line.number, offset: line.offset) {
                    let message = line.resumedAfter ? "line cut by damaged gzip data: \(reason.message)"
                        : line.unterminated && (input.damage != nil || reason.message.hasPrefix("not valid JSON"))
                        ? "cut last line: \(reason.message)" : reason.message
                    batch.rejects.append(RawReject(line: line.number, offset: line.offset, reason: message,
                                                   sample: batch.append(UnsafeRawBufferPointer(rebasing: line.bytes.prefix(200)))))
                }
            }
            batch.linesRead = line.number
            // Also handed over at `maxBatchBytes` of text: 4,096 lines near the 1 MiB limit
            // would hold 4 GiB (and overflow the arena's 32-bit spans).
            if batch.events.count + batch.rejects.count >= limit || batch.arena.count >= maxBatchBytes {
                batch.rawBytesRead = input.rawBytesRead
                guard let next = handOver(batch) else { stopped = true; return false }
                batch = next
                limit = min(limit * 4, 4096)
            }
            return true
        }
        if stopped { return nil }
        batch.rawBytesRead = input.rawBytesRead
        return batch
    }

    private static func isBlank(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for b in bytes where !(b == 0x20 || b == 0x09 || b == 0x0d) { return false }
        return true
    }
}
