import Foundation
import LCTrace
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LCTraceModel
import LCTraceReport

/// Where a command's document goes: `-o/--output FILE`, or standard output. A regular file (or
/// a new path) is written beside its final name and renamed into place when complete, so a
/// failed or interrupted run never leaves a truncated document under the name asked for.
/// Anything else is written through, never replaced: a device (`/dev/null`, run as root, must
/// stay a device), a FIFO, `/dev/stdout`, `/proc/self/fd/N`. A symlink is followed to its
/// target, as `cp` and shell redirection do, so the link survives.
final class OutputFile {
    /// The option that names the file.
    static let option = OptionSpec("output", short: "o", value: "FILE", help: "Write to FILE instead of standard output (a device, FIFO or symlink's target is written through, never replaced).")

    /// A file that could not be written: exit status 74, naming the file and why.
    struct WriteError: OneLineError, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "cannot write '\(path)': \(reason)" }
        var line: String { description }
        var status: Int32 { ExitStatus.ioError }
    }

    private let console: Console
    private let path: String?
    private let temporary: String?
    private var file: UnsafeMutablePointer<FILE>?
    private var written = 0
    /// False when the command prints its own `Wrote …` line (baseline).
    private let announces: Bool

    /// `path` nil or "-": standard output.
    init(path: String?, console: Console, announces: Bool = true) throws {
        self.console = console
        self.announces = announces
        guard let path, path != "-" else {
            self.path = nil
            temporary = nil
            return
        }
        self.path = path
        let target = OutputFile.renameTarget(path)
        if let target {
            let temporary = "\(target).lctrace-\(getpid()).tmp"
            self.temporary = temporary
            guard let f = fopen(temporary, "w") else { throw WriteError(path: path, reason: OutputFile.reason(errno)) }
            file = f
        } else {
            temporary = nil
            guard let f = fopen(path, "w") else { throw WriteError(path: path, reason: OutputFile.reason(errno)) }
            file = f
        }
    }

    /// The regular file to replace by rename (a symlink's final target), or nil to write
    /// through `path` (a device, FIFO, socket, anything under /dev or /proc).
    static func renameTarget(_ path: String) -> String? {
        if path.hasPrefix("/dev/") || path.hasPrefix("/proc/") { return nil }
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFREG else { return nil }
            guard let resolved = realpath(path, nil) else { return nil }
            defer { free(resolved) }
            return String(cString: resolved)
        }
        // Missing: a new path, or a dangling symlink whose target is created (as `cp` does).
        var current = path
        for _ in 0..<40 {
            var link = stat()
            guard lstat(current, &link) == 0, (link.st_mode & S_IFMT) == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(current, &buffer, buffer.count - 1)
            guard n > 0 else { return current }
            let target = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if target.hasPrefix("/") {
                current = target
            } else {
                let folder = (current as NSString).deletingLastPathComponent
                current = folder.isEmpty ? target : folder + "/" + target
            }
        }
        return current
    }

    deinit {
        if let file {
            fclose(file)
            if let temporary { unlink(temporary) }
        }
    }

    /// The C library's words for an error, lowercased as our messages are.
    static func reason(_ code: Int32) -> String { systemErrorReason(code) }

    /// True when the document goes to a terminal (colour, width).
    var isTerminal: Bool { path == nil && console.outputIsTerminal }

    func write(_ text: String) throws {
        guard let file else { console.write(text); return }
        let ok = text.utf8CString.withUnsafeBufferPointer { buffer -> Bool in
            let count = buffer.count - 1
            written += count
            return count == 0 || fwrite(buffer.baseAddress!, 1, count, file) == count
        }
        if !ok { throw WriteError(path: path!, reason: OutputFile.reason(errno)) }
    }

    /// Writes UTF-8 as it is: a document streamed in pieces (`JSONWriter`'s) is not made a String.
    func write(bytes: [UInt8]) throws {
        let ok = bytes.withUnsafeBytes { buffer -> Bool in
            guard let file else { console.write(bytes: buffer); return true }
            written += buffer.count
            return buffer.isEmpty || fwrite(buffer.baseAddress!, 1, buffer.count, file) == buffer.count
        }
        if !ok { throw WriteError(path: path!, reason: OutputFile.reason(errno)) }
    }

    /// Completes the document: flushes and renames a regular file into place, then says on
    /// stderr what was written (`Wrote FILE (N bytes)`), so `-o` is never silent.
    func finish() throws {
        guard let f = file, let path else { return }
        file = nil
        let flushed = fflush(f) == 0
        let code = errno
        let closed = fclose(f) == 0
        let closeCode = errno
        guard flushed else {
            if let temporary { unlink(temporary) }
            throw WriteError(path: path, reason: OutputFile.reason(code))
        }
        if let temporary {
            guard closed else { unlink(temporary); throw WriteError(path: path, reason: OutputFile.reason(closeCode)) }
            guard rename(temporary, OutputFile.renameTarget(path) ?? path) == 0 else {
                let reason = OutputFile.reason(errno)
                unlink(temporary)
                throw WriteError(path: path, reason: reason)
            }
        } else if !closed {
            throw WriteError(path: path, reason: OutputFile.reason(closeCode))
        }
        if announces {
            console.writeError("Wrote \(path) (\(NumberFormat.thousands(written)) byte\(written == 1 ? "" : "s"))\n")
        }
    }
}
