import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where commands write. The real one wraps stdout/stderr; tests capture into strings.
public protocol Console: AnyObject {
    func write(_ text: String)
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
}

/// stdout/stderr of this process.
public final class StandardConsole: Console {
    public let outputIsTerminal = isatty(1) != 0
    public let errorIsTerminal = isatty(2) != 0
    public var outputWidth: Int? { outputIsTerminal ? terminalWidth(1) : nil }
    private var progressShown = false

    public init() {}

    public func write(_ text: String) {
        clearProgress()
        FileHandle.standardOutput.write(text.data(using: .utf8)!)
    }

    public func writeError(_ text: String) {
        clearProgress()
        FileHandle.standardError.write(text.data(using: .utf8)!)
    }

    public func progress(_ text: String) {
        let width = terminalWidth(2)
        let line = text.count > width - 1 ? String(text.prefix(width - 2)) + "…" : text
        FileHandle.standardError.write("\r\u{1B}[2K\(line)".data(using: .utf8)!)
        progressShown = true
    }

    public func clearProgress() {
        if progressShown {
            FileHandle.standardError.write("\r\u{1B}[2K".data(using: .utf8)!)
            progressShown = false
        }
    }

    private func terminalWidth(_ fd: Int32) -> Int {
        var size = winsize()
        if ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 10 { return Int(size.ws_col) }
        return 80
    }
}

/// Captures output in memory, for tests that run commands in-process.
public final class CapturingConsole: Console {
    public private(set) var output = ""
    public private(set) var errors = ""
    public private(set) var progressLines: [String] = []
    public var outputIsTerminal: Bool
    public var errorIsTerminal: Bool
    public var outputWidth: Int?

    public init(terminal: Bool = false) {
        outputIsTerminal = terminal
        errorIsTerminal = terminal
        outputWidth = terminal ? 80 : nil
    }

    public func write(_ text: String) { output += text }
    public func writeError(_ text: String) { errors += text }
    public func progress(_ text: String) { progressLines.append(text) }
    public func clearProgress() {}
}
