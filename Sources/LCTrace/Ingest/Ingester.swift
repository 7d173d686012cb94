import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Settings of one ingest run.
public struct IngestOptions: Sendable {
    /// Events per transaction: large enough for speed, small enough that a concurrent
    /// ingest waits at most a moment for the write lock.
    public var batchSize = 20_000
    public var maxLineLength = LineReader.defaultMaxLineLength
    /// Keep at most this many reject examples per file in the report (all go to the database).
    public var rejectExamples = 5
    public init() {}
}

/// Where an ingest is, for a progress line.
public struct IngestProgress: Sendable {
    public var fileIndex: Int
    public var fileCount: Int
    public var path: String
    public var lines: Int
    public var events: Int
    public var rawBytes: Int64
    public var rawSize: Int64?
}

/// What happened to one input.
public struct FileReport: Sendable {
    public enum Status: Sendable, Equatable {
        case loaded
        case damaged(String)
        /// The same content was loaded before under `path`: nothing read.
        case alreadyLoaded(path: String)
        /// Read, but found to be the same content as `path` (standard input, concurrent load).
        case sameContent(path: String)
        case missing(String)
        case unreadable(String)
    }
    public var path: String
    public var status: Status
    public var lines = 0
    public var events = 0
    public var newEvents = 0
    public var duplicates = 0
    public var conflicts = 0
    public var rejects = 0
    /// (line, reason) of the first rejects.
    public var rejectExamples: [(line: Int, reason: String)] = []
}

/// Totals of one ingest run.
public struct IngestSummary: Sendable {
    public var files: [FileReport] = []
    public var sessionsTouched = 0
    public var sessionConflicts: [String] = []
    public var seconds: Double = 0
    public var analysisSeconds: Double = 0

    public var newEvents: Int { files.reduce(0) { $0 + $1.newEvents } }
    public var duplicates: Int { files.reduce(0) { $0 + $1.duplicates } }
    public var conflicts: Int { files.reduce(0) { $0 + $1.conflicts } }
    public var rejects: Int { files.reduce(0) { $0 + $1.rejects } }
    public var eventLines: Int { files.reduce(0) { $0 + $1.events } }
    public var damagedFiles: [FileReport] { files.filter { if case .damaged = $0.status { return true } else { return false } } }
    public var missingFiles: [FileReport] {
        files.filter {
            switch $0.status {
            case .missing, .unreadable: return true
            default: return false
            }
        }
    }
}

/// Streams trace files into the database: Source → LineReader → EventDecoder → IngestStore.
/// Never prints: progress goes to a callback, results to the returned summary.
public final class Ingester {
    public let store: IngestStore
    public let options: IngestOptions
    private let decoder = EventDecoder()

    public init(store: IngestStore, options: IngestOptions = IngestOptions()) {
        self.store = store
        self.options = options
    }

    /// Expands command-line paths: files as given, directories recursively (`*.gz`, `*.jsonl`,
    /// `*.jsonl.gz`, sorted), `-` for standard input. Paths that do not exist come back as missing.
    public static func expand(_ paths: [String]) -> (inputs: [InputLocation], missing: [String]) {
        var inputs: [InputLocation] = []
        var missing: [String] = []
        let fm = FileManager.default
        for path in paths {
            if path == "-" { inputs.append(.standardInput); continue }
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else { missing.append(path); continue }
            if !isDirectory.boolValue { inputs.append(.file(path)); continue }
            var found: [String] = []
            if let walker = fm.enumerator(atPath: path) {
                for case let relative as String in walker
                where relative.hasSuffix(".gz") || relative.hasSuffix(".jsonl") {
                    let full = (path as NSString).appendingPathComponent(relative)
                    var dir: ObjCBool = false
                    if fm.fileExists(atPath: full, isDirectory: &dir), !dir.boolValue { found.append(full) }
                }
            }
            inputs.append(contentsOf: found.sorted().map { .file($0) })
        }
        return (inputs, missing)
    }

    /// Loads every input in order. Database failures throw (the batch in flight is rolled
    /// back; everything committed before stays); input problems are reported, never thrown.
    public func ingest(_ inputs: [InputLocation], missing: [String] = [],
                       progress: ((IngestProgress) -> Void)? = nil) throws -> IngestSummary {
        let started = Date()
        var summary = IngestSummary()
        for path in missing {
            summary.files.append(FileReport(path: path, status: .missing("no such file or directory")))
        }
        for (index, input) in inputs.enumerated() {
            do {
                let report = try ingestOne(input, index: index, count: inputs.count, progress: progress)
                summary.files.append(report)
            } catch {
                store.rollback()
                throw error
            }
        }
        summary.seconds = Date().timeIntervalSince(started)
        return summary
    }

    private func rawSize(_ path: String) -> Int64? {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(st.st_size)
    }

    /// SHA-256 of a file's raw bytes, read in fixed chunks.
    static func hashFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var hasher = SHA256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer.baseAddress!, buffer.count)
            if n < 0 { if errno == EINTR { continue }; return nil }
            if n == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
        return hasher.finalizeHex()
    }

    private func ingestOne(_ location: InputLocation, index: Int, count: Int,
                           progress: ((IngestProgress) -> Void)?) throws -> FileReport {
        let path = location.description
        var report = FileReport(path: path, status: .loaded)
        let input: TraceInput
        do {
            input = try TraceInput(location: location)
        } catch let error as InputOpenError {
            report.status = error.isMissing ? .missing(String(cString: strerror(error.errno))) : .unreadable(String(cString: strerror(error.errno)))
            return report
        }
        var size: Int64?
        var preHash: String?
        if case .file(let p) = location {
            size = rawSize(p)
            // Hash before reading only when a stored file has the same size: a copy is then
            // recognised without reading it through, and a killed load is resumed in place.
            try store.begin()
            let candidate = try size.map { try store.hasFile(ofSize: $0) } ?? false
            try store.commit()
            if candidate { preHash = Self.hashFile(p) }
        }
        try store.begin()
        let plan = try store.planFile(path: path, size: size, hash: preHash)
        guard case .load(let fileID) = plan else {
            try store.commit()
            if case .alreadyLoaded(let other) = plan { report.status = .alreadyLoaded(path: other) }
            return report
        }

        var stats = IngestStore.FileStats()
        var inBatch = 0
        let reader = LineReader(input: input, maxLineLength: options.maxLineLength)
        var lastProgress = 0
        try reader.forEachLine { rawLine in
            var line = rawLine
            // A byte-order mark before the first line is an editor's habit, not data.
            if line.number == 1, line.bytes.count >= 3, line.bytes[0] == 0xEF, line.bytes[1] == 0xBB, line.bytes[2] == 0xBF {
                line.bytes = UnsafeRawBufferPointer(rebasing: line.bytes[3...])
            }
            stats.lines = line.number
            if let length = line.overlongLength {
                let reason = "line longer than \(options.maxLineLength) bytes (\(length) bytes)"
                try recordReject(fileID, line, reason, &report, &stats)
                inBatch += 1
            } else if !isBlank(line.bytes) {
                switch decoder.decode(line.bytes) {
                case .success(let event):
                    stats.events += 1
                    report.events += 1
                    switch try store.insert(event) {
                    case .inserted: report.newEvents += 1
                    case .duplicate: report.duplicates += 1
                    case .conflict:
                        report.conflicts += 1
                        stats.conflicts += 1
                        try store.reject(file: fileID, kind: .conflict, line: line.number, offset: line.offset,
                                         reason: "conflicting duplicate: session \(event.sid) seq \(event.seq) is stored with other content (first copy kept)",
                                         sample: line.bytes)
                    }
                    inBatch += 1
                case .failure(let reason):
                    let message = line.unterminated && (input.damage != nil || reason.message.hasPrefix("not valid JSON"))
                        ? "cut last line: \(reason.message)" : reason.message
                    try recordReject(fileID, line, message, &report, &stats)
                    inBatch += 1
                }
            }
            if inBatch >= options.batchSize {
                try store.commit()
                try store.begin()
                inBatch = 0
            }
            if let progress, line.number - lastProgress >= 16_384 {
                lastProgress = line.number
                progress(IngestProgress(fileIndex: index, fileCount: count, path: path, lines: line.number,
                                        events: report.events, rawBytes: input.rawBytesRead, rawSize: size))
            }
            return true
        }
        if let damage = input.damage {
            stats.damage = damage.reason
            report.status = .damaged(damage.reason)
            try store.reject(file: fileID, kind: .damage, line: stats.lines, offset: damage.rawOffset,
                             reason: damage.reason, sample: nil)
        }
        stats.size = input.rawBytesRead
        stats.members = input.members
        report.lines = stats.lines
        if let same = try store.finishFile(id: fileID, hash: input.contentHash(), stats: stats) {
            report.status = .sameContent(path: same)
            report.rejects = 0
            report.rejectExamples = []
        }
        try store.commit()
        progress?(IngestProgress(fileIndex: index + 1, fileCount: count, path: path, lines: stats.lines,
                                 events: report.events, rawBytes: input.rawBytesRead, rawSize: size))
        return report
    }

    private func recordReject(_ fileID: Int64, _ line: InputLine, _ reason: String,
                              _ report: inout FileReport, _ stats: inout IngestStore.FileStats) throws {
        try store.reject(file: fileID, kind: .line, line: line.number, offset: line.offset, reason: reason, sample: line.bytes)
        report.rejects += 1
        stats.rejects += 1
        if report.rejectExamples.count < options.rejectExamples {
            report.rejectExamples.append((line.number, reason))
        }
    }

    private func isBlank(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for b in bytes where !(b == 0x20 || b == 0x09 || b == 0x0d) { return false }
        return true
    }
}
