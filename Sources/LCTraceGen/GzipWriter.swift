internal import CZlib
import Foundation

/// Writes a file as one or more gzip members (recorders append a member per flush), or as
/// plain JSON lines. Deterministic: zlib writes mtime 0, so equal input gives equal bytes.
package final class TraceFileWriter {
    private let handle: FileHandle
    private let gzip: Bool
    private var stream = z_stream()
    private var memberOpen = false
    private var out = [UInt8](repeating: 0, count: 1 << 16)
    /// zlib compression level, 1 (fast) to 9 (small).
    private let level: Int32

    package init(path: String, gzip: Bool, level: Int32 = 6) throws {
        self.level = level
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let handle = FileHandle(forWritingAtPath: path) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        self.handle = handle
        self.gzip = gzip
    }

    package func write(_ text: String) {
        write(bytes: Array(text.utf8))
    }

    package func write(bytes: [UInt8]) {
        var bytes = bytes
        guard gzip else { handle.write(Data(bytes)); return }
        if !memberOpen {
            // windowBits 15 + 16: a gzip wrapper (https://zlib.net/manual.html#Advanced).
            deflateInit2_(&stream, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
            memberOpen = true
        }
        bytes.withUnsafeMutableBufferPointer { input in
            stream.next_in = input.baseAddress
            stream.avail_in = uInt(input.count)
            pump(Z_NO_FLUSH)
        }
    }

    /// Ends the current gzip member; the next write starts a new one.
    package func endMember() {
        guard gzip, memberOpen else { return }
        stream.next_in = nil
        stream.avail_in = 0
        pump(Z_FINISH)
        deflateEnd(&stream)
        memberOpen = false
    }

    package func close() {
        endMember()
        handle.closeFile()
    }

    private func pump(_ flush: Int32) {
        out.withUnsafeMutableBufferPointer { buffer in
            repeat {
                stream.next_out = buffer.baseAddress
                stream.avail_out = uInt(buffer.count)
                let rc = deflate(&stream, flush)
                let produced = buffer.count - Int(stream.avail_out)
                if produced > 0 { handle.write(Data(buffer: UnsafeBufferPointer(rebasing: buffer[0..<produced]))) }
                if rc == Z_STREAM_END { break }
            } while stream.avail_out == 0 || (flush == Z_FINISH)
        }
    }
}
