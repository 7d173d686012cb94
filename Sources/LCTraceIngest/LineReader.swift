#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One line of decompressed input, valid only for the duration of the callback.
package struct InputLine {
    /// The bytes, without the `\n` (and without a `\r` before it).
    package var bytes: UnsafeRawBufferPointer
    /// 1-based line number in the decompressed stream.
    package var number: Int
    /// Byte offset of the line's first byte in the decompressed stream.
    package var offset: Int64
    /// Set when the line was longer than the limit: its full length. `bytes` then holds
    /// only the first bytes (for the reject sample), never the whole line.
    package var overlongLength: Int?
    /// True for a last line with no `\n` after it (a cut line when the file was damaged).
    package var unterminated: Bool
    /// True for a line cut by damage when reading went on after it, at the next gzip member
    /// (`TraceInput.resume`): the cut line is then not the file's last.
    package var resumedAfter = false
}

/// Splits a `TraceInput` into lines with bounded memory: a line longer than `maxLineLength`
/// is skipped to its end without being buffered, and reported with its length.
package final class LineReader {
    package static let defaultMaxLineLength = 1 << 20

    private let input: TraceInput
    private let maxLineLength: Int
    private var buffer: UnsafeMutableRawBufferPointer
    private static let sampleLength = 200

    package init(input: TraceInput, maxLineLength: Int = LineReader.defaultMaxLineLength) {
        self.input = input
        input.resumesAfterDamage = true
        self.maxLineLength = maxLineLength
        // Room for one maximal line plus a read chunk.
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: maxLineLength + 256 * 1024, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// Calls `body` for every line in order. Stops early when `body` returns false.
    package func forEachLine(_ body: (InputLine) throws -> Bool) rethrows {
        var start = 0          // first byte of the current line in `buffer`
        var end = 0            // end of valid data in `buffer`
        var scanned = 0        // bytes of the current line already searched for '\n'
        var lineNumber = 1
        var lineOffset: Int64 = 0
        var skipping = false   // inside an overlong line
        var skippedLength = 0
        var sample = [UInt8]()
        var eof = false

        func emit(_ lineStart: Int, _ lineEnd: Int, unterminated: Bool, resumedAfter: Bool = false) throws -> Bool {
            var stop = lineEnd
            if stop > lineStart && buffer[stop - 1] == 0x0d { stop -= 1 }
            let line = InputLine(
                bytes: UnsafeRawBufferPointer(rebasing: buffer[lineStart..<stop]),
                number: lineNumber, offset: lineOffset, overlongLength: nil, unterminated: unterminated,
                resumedAfter: resumedAfter)
            return try body(line)
        }

        while true {
            // Search the unscanned part for a newline.
            let searchFrom = start + scanned
            if searchFrom < end,
               let hit = memchr(buffer.baseAddress! + searchFrom, 0x0a, end - searchFrom) {
                let nl = buffer.baseAddress!.distance(to: UnsafeMutableRawPointer(hit))
                let lineLength = (skipping ? skippedLength : 0) + (nl - start)
                let keepGoing: Bool
                if skipping {
                    keepGoing = try sample.withUnsafeBytes { sampleBytes in
                        try body(InputLine(bytes: sampleBytes, number: lineNumber, offset: lineOffset,
                                           overlongLength: lineLength, unterminated: false))
                    }
                    skipping = false
                    skippedLength = 0
                } else if lineLength > maxLineLength {
                    keepGoing = try body(InputLine(
                        bytes: UnsafeRawBufferPointer(rebasing: buffer[start..<(start + LineReader.sampleLength)]),
                        number: lineNumber, offset: lineOffset, overlongLength: lineLength, unterminated: false))
                } else {
                    keepGoing = try emit(start, nl, unterminated: false)
                }
                if !keepGoing { return }
                lineOffset += Int64(lineLength + 1)
                lineNumber += 1
                start = nl + 1
                scanned = 0
                continue
            }
            scanned = end - start
            if eof {
                // The stream ended, or stopped at damage it may go on after: a line cut there
                // ends there, and the next member found (if any) starts a new line.
                let cut = skipping || end > start
                let resumed = input.resume(linesRead: cut ? lineNumber : lineNumber - 1)
                var keepGoing = true
                if skipping {
                    skippedLength += end - start
                    keepGoing = try sample.withUnsafeBytes { sampleBytes in
                        try body(InputLine(bytes: sampleBytes, number: lineNumber, offset: lineOffset,
                                           overlongLength: skippedLength, unterminated: true, resumedAfter: resumed))
                    }
                    lineOffset += Int64(skippedLength)
                } else if end > start {
                    if end - start > maxLineLength {
                        keepGoing = try body(InputLine(
                            bytes: UnsafeRawBufferPointer(rebasing: buffer[start..<(start + LineReader.sampleLength)]),
                            number: lineNumber, offset: lineOffset, overlongLength: end - start, unterminated: true,
                            resumedAfter: resumed))
                    } else {
                        keepGoing = try emit(start, end, unterminated: true, resumedAfter: resumed)
                    }
                    lineOffset += Int64(end - start)
                }
                guard resumed, keepGoing else { return }
                if cut { lineNumber += 1 }
                start = 0; end = 0; scanned = 0
                skipping = false; skippedLength = 0
                eof = false
                continue
            }
            // Current line exceeds the limit: keep a sample, drop the bytes, keep scanning.
            if !skipping && end - start > maxLineLength {
                skipping = true
                sample = Array(UnsafeRawBufferPointer(rebasing: buffer[start..<(start + LineReader.sampleLength)]))
                skippedLength = 0
            }
            if skipping {
                skippedLength += end - start
                start = end
                scanned = 0
            }
            // Make room: move the partial line to the front.
            if start > 0 {
                let partial = end - start
                if partial > 0 {
                    buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: partial)
                }
                end = partial
                start = 0
            }
            let n = input.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[end..<buffer.count]))
            if n == 0 { eof = true } else { end += n }
        }
    }
}
