import Foundation
import LCTraceModel

/// Where an ingest puts what it reads (Ingest → Store), whole batches at a time: the events
/// and rejects of a batch, the file ledger (which files are loaded, being loaded, or damaged),
/// and the sessions that changed. A batch is one transaction (`begin` … `commit`), so a
/// killed ingest leaves whole batches only, and the next one resumes the files left loading.
package protocol IngestSink: AnyObject {
    // MARK: The run

    /// Called once before the first file. `capturesRows`: keep the stored rows of sessions new
    /// in their file for the analysis while loading; `backgroundWork`: do housekeeping (SQLite:
    /// copying the write-ahead log back) on a thread of its own. Backends that cannot, ignore them.
    func startRun(capturesRows: Bool, backgroundWork: Bool) throws
    /// Called once at the end, also after a failure.
    func endRun()

    // MARK: Batches

    func begin() throws
    func commit() throws
    /// Abandons the open batch; what was committed stays.
    func rollback()
    /// Stores a batch of decoded lines read from `file`: its events (new, duplicates, and
    /// conflicting duplicates, which are also rejects) and its rejected lines.
    func store(_ batch: EventBatch, file: Int64) throws -> BatchCounts
    /// Records a problem that is not a line (a damaged stream).
    func reject(file: Int64, kind: RejectKind, line: Int?, offset: Int64?, reason: String, sample: UnsafeRawBufferPointer?) throws

    // MARK: Files

    /// True when a file of `size` raw bytes is being loaded by this run (a copy of it must wait).
    func isLoading(size: Int64) -> Bool
    /// True when a stored file has `size` raw bytes: only then is hashing before reading worth it.
    func hasFile(ofSize size: Int64) throws -> Bool
    /// Decides from a file's content hash (when known) whether to load it, and into which row.
    /// `deferring`: the run may come back to the file later, so a file another live ingest
    /// is loading right now may be answered `.loadingElsewhere` (backends that cannot tell,
    /// never do).
    func planFile(path: String, size: Int64?, hash: String?, deferring: Bool) throws -> FilePlan
    /// Files loaded before under `path` with fewer bytes (maybe an earlier read of a growing file).
    func earlierReads(of path: String, smallerThan size: Int64) throws -> [EarlierRead]
    /// Drops earlier reads that turned out to be a prefix of a file now loaded whole.
    func replaceEarlierReads(_ ids: [Int64]) throws
    /// Records a load's outcome; the path of another row with the same content, if one exists
    /// (this row is then dropped).
    func finishFile(id: Int64, hash: String, stats: FileStats) throws -> String?
    /// Lets go of the rows this run was loading (after a failure: the next ingest resumes them).
    func releaseLoads()

    // MARK: Sessions

    /// The sessions that got rows since the last call, in id order.
    func takeTouchedSessions() -> [Int64]
    /// Session records of this run that disagreed with the kept one.
    func recordConflictSummary() throws -> [RecordConflict]
}

/// What became of a batch's lines.
package struct BatchCounts {
    package var events = 0
    package var new = 0
    package var duplicates = 0
    package var conflicts = 0
    package var rejects = 0
    /// (line, reason) of the rejected lines, in order.
    package var rejected: [(line: Int, reason: String)] = []

    package init(events: Int = 0, new: Int = 0, duplicates: Int = 0, conflicts: Int = 0, rejects: Int = 0,
                 rejected: [(line: Int, reason: String)] = []) {
        self.events = events; self.new = new; self.duplicates = duplicates; self.conflicts = conflicts
        self.rejects = rejects; self.rejected = rejected
    }
}

/// What kind of input problem a `rejects` row records.
package enum RejectKind: String, Sendable { case line, conflict, damage }

/// What a reject keeps of its line: the first 200 bytes, as text where they are text.
package enum RejectSample {
    package static let maxBytes = 200

    /// `cut` (a line's first `maxBytes`) as text: whole when it is UTF-8, or without the
    /// character the cut went through (at most 3 bytes short); nil when it is not text, and
    /// the backend keeps the bytes.
    package static func text(_ cut: [UInt8]) -> String? {
        if let text = String(validating: cut, as: UTF8.self) { return text }
        var end = cut.count, back = 0
        while end > 0 && back < 3 && (cut[end - 1] & 0xC0) == 0x80 { end -= 1; back += 1 }
        if end > 0 && cut[end - 1] >= 0xC0 { end -= 1 }
        guard end >= cut.count - 3, end > 0 else { return nil }
        return String(validating: cut[0..<end], as: UTF8.self)
    }
}

/// A file read before: its row, raw size and content hash.
package struct EarlierRead: Sendable {
    package var id: Int64
    package var size: Int64
    package var hash: String

    package init(id: Int64, size: Int64, hash: String) {
        self.id = id; self.size = size; self.hash = hash
    }
}

/// What a finished load recorded of a file.
package struct FileStats: Sendable {
    package var size: Int64 = 0
    package var members = 0
    package var lines = 0
    package var events = 0
    package var rejects = 0
    package var conflicts = 0
    package var damage: String?
    package init() {}
}

/// What became of one event line at insert time.
package enum InsertOutcome: Equatable {
    case inserted
    /// Same (sid, seq) with the same content: dropped silently (re-ingest is idempotent).
    case duplicate
    /// Same (sid, seq) with other content: the first stored copy wins.
    case conflict
}

/// What to do with a file, decided from its content hash before reading it.
package enum FilePlan: Equatable {
    /// Load it into the row with this id (new, or resuming a load that was killed).
    case load(fileID: Int64)
    /// The same content was loaded before, under this path.
    case alreadyLoaded(path: String)
    /// Another live ingest is loading this file now: come back to it after the other files
    /// (by then it is loaded, and skipped by its hash).
    case loadingElsewhere
}


/// The current UTC time as RFC 3339 (`2026-11-29T16:53:36Z`). Formatted by hand: a
/// Foundation date formatter costs more to create than a small file takes to load.
package func utcNow() -> String {
    var seconds = time(nil)
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
        + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
}

