import Foundation
#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#endif
import LCTraceModel

/// Where commands write. The real one wraps stdout/stderr; tests capture into strings.
package protocol Console: AnyObject {
    func write(_ text: String)
    /// Writes bytes to standard output as they are (a table or CSV, in pieces of whole UTF-8 sequences).
    func write(bytes: UnsafeRawBufferPointer)
    func writeError(_ text: String)
    /// True when standard output is a terminal (colour, alignment for people).
    var outputIsTerminal: Bool { get }
    /// True when standard error is a terminal: only then are progress lines drawn.
    var errorIsTerminal: Bool { get }
    /// Columns of the terminal standard output is, nil when it is not one.
    var outputWidth: Int? { get }
    /// Overwrites the current progress line on stderr (only called when `errorIsTerminal`).
    func progress(_ text: String)
    func clearProgress()
    /// True once a write to standard output failed: what the command says after its document
    /// (the gate's verdict) would be about a document nobody got.
    var outputFailed: Bool { get }
}

extension Console {
    package var outputFailed: Bool { false }
}

/// stdout/stderr of this process.
final class StandardConsole: Console {
    let outputIsTerminal = isatty(1) != 0
    let errorIsTerminal = isatty(2) != 0
    var outputWidth: Int? { outputIsTerminal ? terminalWidth(1) : nil }
    private var progressShown = 0
    /// `TERM=dumb`: no escape sequence, not even to clear the progress line (spaces do).
    private let dumbTerminal: Bool

    package init(environment: [String: String]) {
        dumbTerminal = environment["TERM"] == "dumb"
    }

    package convenience init() { self.init(environment: ProcessInfo.processInfo.environment) }

    package func write(_ text: String) {
        var text = text
        text.withUTF8 { write(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// The first failed write to standard output (a full disk, an I/O error): the run then
    /// exits 74 naming it (`CLI.run`), so a CI job never uploads an empty document as a pass.
    /// Later writes are skipped. A closed pipe is not one: SIGPIPE ends the process quietly.
    private(set) var outputFailure: Int32?

    package func write(bytes: UnsafeRawBufferPointer) {
        clearProgress()
        guard outputFailure == nil else { return }
        outputFailure = Self.writeAll(1, bytes)
    }

    package var outputFailed: Bool { outputFailure != nil }

    /// The first failed write to standard error: its warnings (each rejected line, a damaged
    /// file) did not reach the log, so a run that would pass exits 74 instead (`CLI.run`).
    private(set) var errorFailure: Int32?

    /// Every byte to file descriptor `fd` (a write may take only part; EINTR is retried, and a
    /// descriptor left non-blocking by the caller, EAGAIN, is waited for until it takes more);
    /// the errno of a failed write, nil when all went. A closed pipe ends the process with
    /// SIGPIPE, as it ends `sqlite3` and `cat`.
    @discardableResult
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
        guard var base = bytes.baseAddress else { return nil }
        var left = bytes.count
        while left > 0 {
            let n = systemWrite(fd, base, left)
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK {
                    var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&ready, 1, -1)
                    continue
                }
                return code
            }
            if n == 0 { return EIO }
            base += n
            left -= n
        }
        return nil
    }

    @discardableResult
    static func writeAll(_ fd: Int32, _ text: String) -> Int32? {
        var text = text
        return text.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
    }

    func writeError(_ text: String) {
        clearProgress()
        if let failed = Self.writeAll(2, text), errorFailure == nil { errorFailure = failed }
    }

    package func progress(_ text: String) {
        let line = Self.fitted(text, width: terminalWidth(2))
        if dumbTerminal {
            Self.writeAll(2, "\r" + line + String(repeating: " ", count: max(0, progressShown - line.count)))
        } else {
            Self.writeAll(2, "\r\u{1B}[2K\(line)")
        }
        progressShown = max(line.count, 1)
    }

    /// A progress line (parts joined by " · ") in `width - 1` columns: the last part (the file
    /// being read) is cut from its start, keeping its name's end, or dropped; then the parts
    /// before the time left give way, the latest first, so the ETA is the last thing lost.
    static func fitted(_ text: String, width: Int) -> String {
        let limit = max(width - 1, 10)
        guard text.count > limit else { return text }
        var parts = text.components(separatedBy: " · ")
        func joined() -> String { parts.joined(separator: " · ") }
        if parts.count > 2, !parts[parts.count - 1].hasPrefix("ETA") {
            let room = limit - parts.dropLast().joined(separator: " · ").count - 3
            if room >= 12 {
                parts[parts.count - 1] = "…" + String(parts[parts.count - 1].suffix(room - 1))
                return joined()
            }
            parts.removeLast()
        }
        while joined().count > limit, parts.count > 1,
              let i = parts.indices.dropFirst().last(where: { !parts[$0].hasPrefix("ETA") }) {
            parts.remove(at: i)
        }
        let line = joined()
        return line.count > limit ? String(line.prefix(limit - 1)) + "…" : line
    }

    func clearProgress() {
        guard progressShown > 0 else { return }
        Self.writeAll(2, dumbTerminal ? "\r" + String(repeating: " ", count: progressShown) + "\r" : "\r\u{1B}[2K")
        progressShown = 0
    }

    private func terminalWidth(_ fd: Int32) -> Int {
        var size = winsize()
        if ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 10 { return Int(size.ws_col) }
        return 80
    }
}

/// Captures output in memory, for tests that run commands in-process.
package final class CapturingConsole: Console {
    /// Standard output as bytes: pieces of it need not end between UTF-8 sequences.
    private(set) var outputBytes: [UInt8] = []
    package var output: String { String(decoding: outputBytes, as: UTF8.self) }
    package private(set) var errors = ""
    private(set) var progressLines: [String] = []
    package var outputIsTerminal: Bool
    package var errorIsTerminal: Bool
    package var outputWidth: Int?

    package init(terminal: Bool = false) {
        outputIsTerminal = terminal
        errorIsTerminal = terminal
        outputWidth = terminal ? 80 : nil
    }

    package func write(_ text: String) { outputBytes += text.utf8 }
    package func write(bytes: UnsafeRawBufferPointer) { outputBytes += bytes }
    package func writeError(_ text: String) { errors += text }
    package func progress(_ text: String) { progressLines.append(text) }
    package func clearProgress() {}
}
