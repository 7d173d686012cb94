import Foundation
import LCTrace
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LCTraceModel

/// Where a command's document goes: `-o/--output FILE`, or standard output. A file is written
/// beside its final name and renamed into place when complete, so a failed or interrupted
/// run never leaves a truncated document under the name asked for.
final class OutputFile {
    /// The option that names the file.
    static let option = OptionSpec("output", short: "o", value: "FILE", help: "Write to FILE instead of standard output.")

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

    /// `path` nil or "-": standard output.
    init(path: String?, console: Console) throws {
        self.console = console
        guard let path, path != "-" else {
            self.path = nil
            temporary = nil
            return
        }
        self.path = path
        let temporary = "\(path).lctrace-\(getpid()).tmp"
        self.temporary = temporary
        guard let f = fopen(temporary, "w") else { throw WriteError(path: path, reason: OutputFile.reason(errno)) }
        file = f
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
            return count == 0 || fwrite(buffer.baseAddress!, 1, count, file) == count
        }
        if !ok { throw WriteError(path: path!, reason: OutputFile.reason(errno)) }
    }

    /// Writes UTF-8 as it is: a document streamed in pieces (`JSONWriter`'s) is not made a String.
    func write(bytes: [UInt8]) throws {
        let ok = bytes.withUnsafeBytes { buffer -> Bool in
            guard let file else { console.write(bytes: buffer); return true }
            return buffer.isEmpty || fwrite(buffer.baseAddress!, 1, buffer.count, file) == buffer.count
        }
        if !ok { throw WriteError(path: path!, reason: OutputFile.reason(errno)) }
    }

    /// Completes the document: flushes and renames the file into place.
    func finish() throws {
        guard let f = file, let path, let temporary else { return }
        file = nil
        let flushed = fflush(f) == 0
        let code = errno
        fclose(f)
        guard flushed else { unlink(temporary); throw WriteError(path: path, reason: OutputFile.reason(code)) }
        guard rename(temporary, path) == 0 else {
            let reason = OutputFile.reason(errno)
            unlink(temporary)
            throw WriteError(path: path, reason: reason)
        }
    }
}
