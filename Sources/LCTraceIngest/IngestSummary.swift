import LCTraceModel

/// Where an ingest is, for a progress line: the file being read, and the whole run.
package struct IngestProgress: Sendable {
    package var fileIndex: Int
    package var fileCount: Int
    package var path: String
    package var lines: Int
    package var events: Int
    package var rawBytes: Int64
    package var rawSize: Int64?

    /// The run so far: inputs finished (loaded or skipped), event lines read, raw (compressed)
    /// bytes read, bytes of inputs skipped unread (already loaded), and the raw size of all
    /// inputs (nil when one has no size known up front: standard input, a pipe).
    package var run = Run()

    package init(fileIndex: Int, fileCount: Int, path: String, lines: Int, events: Int, rawBytes: Int64,
                 rawSize: Int64? = nil, run: Run = Run()) {
        self.fileIndex = fileIndex; self.fileCount = fileCount; self.path = path; self.lines = lines
        self.events = events; self.rawBytes = rawBytes; self.rawSize = rawSize; self.run = run
    }

    package struct Run: Sendable {
        package var filesDone = 0
        package var events = 0
        package var bytesRead: Int64 = 0
        package var bytesSkipped: Int64 = 0
        package var totalBytes: Int64?

        package init(filesDone: Int = 0, events: Int = 0, bytesRead: Int64 = 0, bytesSkipped: Int64 = 0,
                     totalBytes: Int64? = nil) {
            self.filesDone = filesDone; self.events = events; self.bytesRead = bytesRead
            self.bytesSkipped = bytesSkipped; self.totalBytes = totalBytes
        }
    }
}

/// What happened to one input.
package struct FileReport: Sendable {
    package enum Status: Sendable, Equatable {
        case loaded
        case damaged(String)
        /// The same content was loaded before under `path`: nothing read.
        case alreadyLoaded(path: String)
        /// Read, but found to be the same content as `path` (standard input, concurrent load).
        case sameContent(path: String)
        case missing(String)
        case unreadable(String)
        /// Not read: a kind of input lctrace does not read (a zip archive).
        case refused(String)
    }
    package var path: String
    package var status: Status
    package var lines = 0
    package var events = 0
    package var newEvents = 0
    package var duplicates = 0
    package var conflicts = 0
    package var rejects = 0
    /// (line, reason) of the first rejects.
    package var rejectExamples: [(line: Int, reason: String)] = []
    /// Earlier reads of this path that were this file while it was still being written: their
    /// rows (and warnings) were replaced by this one.
    package var replacedEarlierReads = 0

    package init(path: String, status: Status, lines: Int = 0, events: Int = 0, newEvents: Int = 0, duplicates: Int = 0,
                 conflicts: Int = 0, rejects: Int = 0, rejectExamples: [(line: Int, reason: String)] = [],
                 replacedEarlierReads: Int = 0) {
        self.path = path; self.status = status; self.lines = lines; self.events = events; self.newEvents = newEvents
        self.duplicates = duplicates; self.conflicts = conflicts; self.rejects = rejects
        self.rejectExamples = rejectExamples; self.replacedEarlierReads = replacedEarlierReads
    }
}

/// Totals of one ingest run.
package struct IngestSummary: Sendable {
    package var files: [FileReport] = []
    package var seconds: Double = 0
    /// Sessions whose session records disagreed (the earliest record is kept).
    package var recordConflicts: [RecordConflict] = []

    package init() {}

    package var newEvents: Int { files.reduce(0) { $0 + $1.newEvents } }
    package var duplicates: Int { files.reduce(0) { $0 + $1.duplicates } }
    package var conflicts: Int { files.reduce(0) { $0 + $1.conflicts } }
    package var rejects: Int { files.reduce(0) { $0 + $1.rejects } }
    package var eventLines: Int { files.reduce(0) { $0 + $1.events } }
    package var damagedFiles: [FileReport] { files.filter { if case .damaged = $0.status { return true } else { return false } } }
    package var refusedFiles: [FileReport] { files.filter { if case .refused = $0.status { return true } else { return false } } }
    package var missingFiles: [FileReport] {
        files.filter {
            switch $0.status {
            case .missing, .unreadable: return true
            default: return false
            }
        }
    }
}
