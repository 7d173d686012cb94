import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LCTraceAnalysis
import LCTraceIngest
import LCTraceModel
import LCTraceRules
import LCTraceStore

/// Settings of one ingest run.
struct IngestOptions: Sendable {
    /// Events per transaction: large enough for speed, small enough that a concurrent
    /// ingest waits at most a moment for the write lock.
    var batchSize = 20_000
    /// Checkpoints run on a thread of their own (`Checkpointer`) rather than in the writer's commits.
    var backgroundCheckpoints = true
    package var maxLineLength = LineReader.defaultMaxLineLength
    /// Keep at most this many reject examples per file in the report (all go to the database).
    package var rejectExamples = 5
    package init() {}
}

/// Streams trace files into the database: Source → LineReader → EventDecoder → IngestSink.
/// Never prints: progress goes to a callback, results to the returned summary.
final class Ingester {
    package let store: any IngestSink
    package let options: IngestOptions
    private let decoder = EventDecoder()
    /// When set, the sessions of each loaded file are analyzed on the second core while the
    /// next files load (see `BackgroundAnalyzer`).
    package var analysis: BackgroundAnalyzer?
    /// The run so far, for the progress reports.
    private var run = IngestProgress.Run()
    /// When raised (SIGINT, SIGTERM), the ingest rolls back the batch in flight, lets go of
    /// its locks and throws `IngestInterrupted` with the files loaded so far: a file cut short stays
    /// `loading`, and the same command run again completes it.
    package var stop: StopRequest?

    /// Loads into `db` (opened for writing).
    package convenience init(db: Storage, options: IngestOptions = IngestOptions()) throws {
        self.init(store: try db.backend.ingestSink(), options: options)
    }

    package init(store: any IngestSink, options: IngestOptions = IngestOptions()) {
        self.store = store
        self.options = options
    }

    /// Analyses each loaded file's sessions on the second core while the next files load,
    /// where the backend is a `LoadingAnalysisHost` (SQLite; PostgreSQL for the sessions a
    /// run writes alone). True when it will.
    @discardableResult
    func analyzeWhileLoading(settings: RuleSettings) throws -> Bool {
        guard let host = store as? any LoadingAnalysisHost else { return false }
        analysis = try BackgroundAnalyzer(host: host, settings: settings)
        return true
    }

    /// Expands command-line paths (see `InputWalker`): the inputs, and the paths that cannot be
    /// loaded (missing, unreadable, not regular files).
    package static func expand(_ paths: [String]) -> (inputs: [InputLocation], missing: [InputProblem]) {
        InputWalker.expand(paths)
    }

    /// Loads every input in order. Database failures throw (the batch in flight is rolled
    /// back; everything committed before stays); input problems are reported, never thrown.
    package func ingest(_ inputs: [InputLocation], missing: [InputProblem] = [],
                       progress: ((IngestProgress) -> Void)? = nil) throws -> IngestSummary {
        let started = Date()
        var summary = IngestSummary()
        // Housekeeping (SQLite: copying the write-ahead log back) runs on another thread, off
        // the writer's path.
        try store.startRun(capturesRows: analysis != nil, backgroundWork: options.backgroundCheckpoints)
        defer { store.endRun() }
        for problem in missing {
            summary.files.append(FileReport(path: problem.path, status: problem.missing ? .missing(problem.reason) : .unreadable(problem.reason)))
        }
        // One file ahead: while this thread stores file i, file i+1 is already planned and its
        // reader thread is decoding, so the writer never waits at a file boundary.
        var next: PreparedFile?
        defer { next?.stop() }
        let sizes = inputs.map { $0 == .standardInput ? nil : rawSize($0) }
        run = IngestProgress.Run()
        run.totalBytes = sizes.contains(where: { $0 == nil }) ? nil : sizes.reduce(0) { $0 + $1! }
        // Files another live ingest was loading when planned: loaded (or found loaded) after
        // the others, their reports put back where they belong.
        var deferred: [(index: Int, position: Int)] = []
        for index in inputs.indices {
            do {
                try stop?.check()
                // An archive is never read ahead (`prepare`): its members load one after the other.
                if next == nil, let kind = ArchiveKind.of(inputs[index]) {
                    try loadArchive(inputs[index], kind, index: index, count: inputs.count, into: &summary, progress: progress)
                    run.filesDone += 1
                    if index + 1 < inputs.count { next = try prepare(inputs[index + 1], ahead: true) }
                    continue
                }
                // Not read ahead (first file, a pipe, or the size of the one before): now.
                let current = try next ?? prepare(inputs[index], ahead: false)!  // nil only when ahead
                next = nil
                defer { current.stop() }
                if index + 1 < inputs.count { next = try prepare(inputs[index + 1], ahead: true) }
                if current.loadingElsewhere {
                    deferred.append((index, summary.files.count))
                    continue
                }
                summary.files.append(try loadCounted(current, index: index, count: inputs.count, rawSize: sizes[index], progress: progress))
            } catch {
                throw abandon(error, summary, started)
            }
        }
        // Each put in its place as soon as it is done (an interrupted run reports what it loaded):
        // the positions rise with the indexes, so each goes after those put in before it.
        for (done, (index, position)) in deferred.enumerated() {
            do {
                try stop?.check()
                let current = try prepare(inputs[index], ahead: false, deferring: false)!
                defer { current.stop() }
                summary.files.insert(try loadCounted(current, index: index, count: inputs.count, rawSize: sizes[index], progress: progress),
                                     at: position + done)
            } catch {
                throw abandon(error, summary, started)
            }
        }
        summary.seconds = Date().timeIntervalSince(started)
        do {
            if let analysis, let host = store as? any LoadingAnalysisHost { try analysis.finish(host, stop: stop) }
        } catch {
            throw abandon(error, summary, started)
        }
        summary.recordConflicts = try store.recordConflictSummary()
        return summary
    }

    /// Undoes the batch in flight after a failure or an interruption: rolled back, the analysis
    /// ended (its connection closed), the locks of the files being loaded let go. Returns the
    /// error to throw: an interruption carries the summary so far.
    private func abandon(_ error: Error, _ summary: IngestSummary, _ started: Date) -> Error {
        store.rollback()
        analysis?.cancel()
        analysis?.waitForWorker()
        store.releaseLoads()
        guard error is Interrupted else { return error }
        var partial = summary
        partial.seconds = Date().timeIntervalSince(started)
        return IngestInterrupted(summary: partial)
    }

    private func rawSize(_ location: InputLocation) -> Int64? {
        var st = stat()
        guard location.withPath({ stat($0, &st) }) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(st.st_size)
    }

    /// SHA-256 of a file's raw bytes, read in fixed chunks.
    static func hashFile(_ location: InputLocation) -> String? {
        guard let fd = try? TraceInput.openRegularFile(location) else { return nil }
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

    /// A file whose fate is decided: a report already (missing, already loaded), or a row to
    /// load into and a reader thread decoding it into batches.
    final class PreparedFile {
        package let path: String
        package var report: FileReport
        package let input: TraceInput?
        package let size: Int64?
        package let fileID: Int64
        /// Files read before under this path with fewer bytes (see `IngestStore.earlierReads`).
        package var earlier: [EarlierRead] = []
        /// Planned `.loadingElsewhere`: not read now, planned again after the other files.
        var loadingElsewhere = false
        /// Decoded batches waiting for the writer: with the batch being filled and the one being
        /// stored, a file of 6,000 lines (128 + 512 + 2,048 + 4,096 …) is decoded whole while the
        /// file before it is stored, so the writer finds it ready (with 2, the writer waited
        /// for the reader a fifth of the run).
        static let readAhead = 4
        let filled = BatchQueue<EventBatch>(capacity: PreparedFile.readAhead)
        package let empty = BatchQueue<EventBatch>(capacity: PreparedFile.readAhead + 2)

        package init(report: FileReport) {
            path = report.path
            self.report = report
            input = nil
            size = nil
            fileID = 0
        }

        package init(path: String, input: TraceInput, size: Int64?, fileID: Int64) {
            self.path = path
            report = FileReport(path: path, status: .loaded)
            self.input = input
            self.size = size
            self.fileID = fileID
        }

        /// Stops the reader thread (if still running) and lets it run out.
        package func stop() {
            guard input != nil else { return }
            empty.close()
            while filled.take() != nil {}
        }
    }

    /// Opens an input, decides from its size and content hash whether to load it (its own
    /// small transaction), and if so starts its reader thread. `ahead`: while another file is
    /// loading; nil when this one must wait for it (same size: maybe a copy of it).
    /// `deferring`: a file another live ingest is loading may be left for later (`FilePlan`).
    private func prepare(_ location: InputLocation, ahead: Bool, deferring: Bool = true) throws -> PreparedFile? {
        let path = location.description
        if ahead {
            // Only regular files are read ahead: standard input or a pipe may be named twice,
            // and two readers of one stream would split it between them.
            guard location != .standardInput, let size = rawSize(location) else { return nil }
            if store.isLoading(size: size) || ArchiveKind.of(location) != nil { return nil }
        }
        let input: TraceInput
        do {
            input = try TraceInput(location: location)
        } catch let error as InputOpenError {
            return PreparedFile(report: Self.openFailure(path, error))
        }
        var size: Int64?
        var preHash: String?
        try store.begin()
        if location != .standardInput {
            size = rawSize(location)
            // Hash before reading only when a stored file has the same size: a copy is then
            // recognised without reading it through, and a killed load is resumed in place.
            // The write lock is not held while hashing.
            if try size.map({ try store.hasFile(ofSize: $0) }) ?? false {
                try store.commit()
                preHash = Self.hashFile(location)
                try store.begin()
            }
        }
        return try start(path, input, size: size, hash: preHash, deferring: deferring)
    }

    /// What an input that cannot be opened becomes in the summary.
    private static func openFailure(_ path: String, _ error: InputOpenError) -> FileReport {
        FileReport(path: path, status: error.isMissing ? .missing(error.reason)
                   : .unreadable(error.notRegular == nil ? "cannot read: \(error.reason)" : error.reason))
    }

    /// Plans the file `path` inside the open transaction, which it commits, and when it is to
    /// be loaded starts the reader thread decoding `input` into batches.
    private func start(_ path: String, _ input: TraceInput, size: Int64?, hash: String?, deferring: Bool = false) throws -> PreparedFile {
        let plan = try store.planFile(path: path, size: size, hash: hash, deferring: deferring)
        let earlier = try size.map { try store.earlierReads(of: path, smallerThan: $0) } ?? []
        try store.commit()
        guard case .load(let fileID) = plan else {
            let file = PreparedFile(report: FileReport(path: path, status: .loaded))
            if case .alreadyLoaded(let other) = plan { file.report.status = .alreadyLoaded(path: other) }
            file.loadingElsewhere = plan == .loadingElsewhere
            return file
        }
        let file = PreparedFile(path: path, input: input, size: size, fileID: fileID)
        file.earlier = earlier
        input.recordPrefixDigests(at: earlier.map(\.size))
        // This thread writes to SQLite while a reader thread inflates, splits and decodes the
        // lines into batches (bounded queue, recycled batches).
        for _ in 0...PreparedFile.readAhead { file.empty.put(EventBatch()) }
        let reader = Thread { [options, decoder, filled = file.filled, empty = file.empty] in
            Ingester.readLines(input, into: filled, recycling: empty, options: options, decoder: decoder)
        }
        reader.stackSize = 1 << 20
        reader.start()
        return file
    }

    /// Loads every regular member of a tar archive as a trace file of its own, named
    /// `ARCHIVE:MEMBER` (so loading the archive again finds each member's content loaded), in
    /// one streaming pass: the member being loaded is the only one read. Other members
    /// (directories, links) are skipped; a zip archive is refused.
    private func loadArchive(_ location: InputLocation, _ kind: ArchiveKind, index: Int, count: Int,
                             into summary: inout IngestSummary, progress: ((IngestProgress) -> Void)?) throws {
        let path = location.description
        guard kind == .tar else {
            summary.files.append(FileReport(path: path, status: .refused(
                "a zip archive: lctrace reads trace files and tar archives (.tar, .tar.gz, .tgz); extract it first")))
            return
        }
        let archive: TraceInput
        do {
            archive = try TraceInput(location: location)
        } catch let error as InputOpenError {
            summary.files.append(Self.openFailure(path, error))
            return
        }
        let tar = TarReader(archive)
        let bytesBefore = run.bytesRead
        while let member = tar.next() {
            try stop?.check()
            guard member.isRegular else { continue }
            let memberPath = "\(path):\(member.name)"
            try store.begin()
            let file = try start(memberPath, TraceInput(location: .file(memberPath), source: tar), size: member.size, hash: nil)
            defer { file.stop() }
            summary.files.append(try load(file, index: index, count: count, progress: progress))
        }
        // Damage between members (a cut header, no end-of-archive block) belongs to no member.
        if let damage = tar.damage, !tar.damageInMember {
            summary.files.append(FileReport(path: path, status: .damaged(damage)))
        }
        // The run's bytes are the archive's, not its inflated members'.
        run.bytesRead = bytesBefore + tar.rawBytesRead
    }

    /// `load`, then counts the file done in the run's progress: one skipped unread (already
    /// loaded) or not found is told at once, its bytes counted as skipped.
    private func loadCounted(_ current: PreparedFile, index: Int, count: Int, rawSize: Int64?,
                             progress: ((IngestProgress) -> Void)?) throws -> FileReport {
        let report = try load(current, index: index, count: count, progress: progress)
        run.filesDone += 1
        if current.input == nil {
            run.bytesSkipped += rawSize ?? 0
            progress?(IngestProgress(fileIndex: index + 1, fileCount: count, path: current.path, lines: 0,
                                     events: 0, rawBytes: 0, rawSize: rawSize, run: run))
        }
        return report
    }

    /// Stores a prepared file's batches, then records the file's outcome.
    private func load(_ file: PreparedFile, index: Int, count: Int,
                      progress: ((IngestProgress) -> Void)?) throws -> FileReport {
        guard let input = file.input else { return file.report }
        let path = file.path, size = file.size, fileID = file.fileID
        let filled = file.filled, empty = file.empty
        var report = file.report
        try store.begin()
        var inBatch = 0
        var lastProgress = 0
        // A stop wakes the writer where it waits for the reader (a pipe may send nothing for long).
        stop?.onRequest { filled.close() }
        defer { stop?.onRequest(nil) }
        while let batch = filled.take() {
            try stop?.check()
            let counts = try store.store(batch, file: fileID)
            report.events += counts.events
            report.newEvents += counts.new
            report.duplicates += counts.duplicates
            report.conflicts += counts.conflicts
            report.rejects += counts.rejects
            for example in counts.rejected.prefix(max(0, options.rejectExamples - report.rejectExamples.count)) {
                report.rejectExamples.append(example)
            }
            inBatch += batch.events.count + batch.rejects.count
            report.lines = batch.linesRead
            if inBatch >= options.batchSize {
                try store.commit()
                try store.begin()
                try storeFinishedModels()
                inBatch = 0
            }
            if let progress, batch.linesRead - lastProgress >= 16_384 {
                lastProgress = batch.linesRead
                var now = run
                now.events += report.events
                now.bytesRead += batch.rawBytesRead
                progress(IngestProgress(fileIndex: index, fileCount: count, path: path, lines: batch.linesRead,
                                        events: report.events, rawBytes: batch.rawBytesRead, rawSize: size, run: now))
            }
            batch.reset()
            empty.put(batch)
        }
        // Stopped midway: the file is not finished (its row stays `loading`, to be resumed).
        try stop?.check()
        if let summary = input.damageSummary {
            report.status = .damaged(summary)
        }
        for damage in input.damages {
            try store.reject(file: fileID, kind: .damage, line: damage.line ?? report.lines, offset: damage.rawOffset,
                             reason: damage.description, sample: nil)
        }
        // The file row's counts are the report's (the damage reject is not a line reject).
        var stats = FileStats()
        stats.size = input.rawBytesRead
        stats.members = input.members
        stats.lines = report.lines
        stats.events = report.events
        stats.rejects = report.rejects
        stats.conflicts = report.conflicts
        stats.damage = input.damageSummary
        if let same = try store.finishFile(id: fileID, hash: input.contentHash(), stats: stats) {
            report.status = .sameContent(path: same)
            report.rejects = 0
            report.rejectExamples = []
        }
        // Earlier reads of this path whose bytes are the start of this file's.
        let grown = file.earlier.filter { input.prefixDigests[$0.size] == $0.hash }.map(\.id)
        try store.replaceEarlierReads(grown)
        report.replacedEarlierReads = grown.count
        // Models finished meanwhile go in with the file's last batch (files are often
        // smaller than one batch).
        try storeFinishedModels()
        try store.commit()
        // Taken whether or not an analysis wants them: left to pile up, they grew with every session.
        let touched = store.takeTouchedSessions()
        if let analysis, let host = store as? any LoadingAnalysisHost {
            analysis.enqueue(touched, captured: host.takeCapturedRows(), from: host)
        }
        run.events += report.events
        run.bytesRead += input.rawBytesRead
        var done = run
        done.filesDone += 1
        progress?(IngestProgress(fileIndex: index + 1, fileCount: count, path: path, lines: report.lines,
                                 events: report.events, rawBytes: input.rawBytesRead, rawSize: size, run: done))
        return report
    }

    /// Stores the models the analysis finished meanwhile, inside the open batch.
    private func storeFinishedModels() throws {
        if let analysis, let host = store as? any LoadingAnalysisHost { try analysis.storeFinished(host) }
    }

    /// The reader thread: lines of `input`, decoded into batches (`BatchReader`). Closes
    /// `filled` at the end of the input (the input's damage, if any, is set by then).
    private static func readLines(_ input: TraceInput, into filled: BatchQueue<EventBatch>, recycling empty: BatchQueue<EventBatch>,
                             options: IngestOptions, decoder: EventDecoder) {
        guard let first = empty.take() else { filled.close(); return }
        let last = BatchReader.decodeLines(of: input, startingWith: first, maxLineLength: options.maxLineLength,
                                           decoder: decoder) { full in filled.put(full) ? empty.take() : nil }
        if let last { filled.put(last) }
        filled.close()
    }
}

/// An ingest ended early by its `StopRequest`: the summary of the files loaded up to then
/// (whole files only; the batch in flight was rolled back).
package struct IngestInterrupted: Error, Sendable {
    package var summary: IngestSummary
}
