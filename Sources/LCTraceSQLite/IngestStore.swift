internal import CSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LCTraceModel
import LCTraceStore
import LCTraceFormat

/// SQLite's ingest sink: the batches (interning, sessions and their records, events and the
/// captures handed to the analysis), with the file rows kept by `FileLedger` and the rejects
/// written by `RejectWriter`. All writes happen inside `begin()`/`commit()` batches taken with
/// BEGIN IMMEDIATE, so a kill at any moment leaves whole batches only, and a second
/// process can interleave its own batches.
final class IngestStore: IngestSink {
    package let db: SQLiteDatabase
    /// Also the model writer's during ingest (`BackgroundAnalyzer`): the texts of a model are
    /// those just interned for its events, so its lookups hit this cache instead of the table.
    package let strings: StringPool
    private let stringBytes = ByteInterner()
    private let sessionBytes = ByteInterner()
    /// The `rest` objects of event rows met lately (`events.rest`): an id once a text came a
    /// second time (it is then interned), `seenOnce` after its first (stored inline).
    private let restTexts = ByteInterner()
    private static let seenOnce: Int64 = -1
    /// `sessions.vc_base` of the sessions met lately (fixed when a session's row is made).
    private var sessionBases: [Int64: Int64] = [:]
    /// The kept session record of the sessions met lately (a cache: emptied at
    /// `maxCachedSessions`, and whenever another connection commits).
    private var sessionRecords: [Int64: (seq: Int64?, record: SessionRecord?)] = [:]
    /// Session records of this run that disagree with the one kept, per session id.
    private var recordConflicts: [Int64: (count: Int, fields: Set<String>)] = [:]
    private var dirtyInBatch = Set<Int64>()

    /// The highest seq stored (or pending) per session, as far as this connection knows:
    /// a row above it cannot be a duplicate, so it skips the one-row conflict check and goes
    /// in with many others in one statement. Forgotten whenever another connection commits,
    /// and at `maxCachedSessions` (a cache: memory stays flat however many sessions a run meets).
    private var highestSeq: [Int64: Int64] = [:]
    /// Sessions the per-session caches hold before they are emptied (about 100 bytes each).
    static let maxCachedSessions = 16_384
    private var dataVersion: Int64 = -1

    /// When a watched session last got a row, as a transaction number: lets a model built from
    /// an earlier snapshot be checked for staleness (`unchangedSince`). Only sessions whose
    /// model is asked for (`watch`) are tracked, and only until it is stored or dropped
    /// (`unwatch`), so memory stays flat however many sessions a run loads.
    private var lastChanged: [Int64: Int64] = [:]
    private var watched = SessionSet()
    /// Requests beyond the first of a watched session asked for again before its earlier
    /// request ended (rare: a session spread over files the analysis has not caught up with).
    private var moreRequests: [Int64: Int] = [:]
    /// Transactions begun by this store; the current one while a batch is open.
    package private(set) var transaction: Int64 = 0
    /// Sessions that got rows since `takeTouchedSessions` was last called.
    private var touched = Set<Int64>()
    /// The file rows: what to load, who loads it, how it ended (`FileLedger`).
    package let files: FileLedger
    /// Rejected lines, conflicts and damage (`RejectWriter`).
    private let rejects: RejectWriter

    /// The last event's session: lines mostly follow one of the same session, so its id, its
    /// highest seq and whether it was marked dirty in this batch need no hashing. While set,
    /// `recentHighest` is the truth for it (`highestSeq` gets it back on a switch).
    private var recentSession: Int64 = 0
    /// The recent session's `vc_base`: its controller ids are stored minus this.
    private var recentBase: Int64 = 0
    private var recentSid: [UInt8] = []
    private var recentHighest = Int64.min
    private var recentMarked = false

    /// Forgets the recent session without saving what it knew (that knowledge is stale).
    private func forgetRecentSession() {
        recentSession = 0
        recentSid.removeAll(keepingCapacity: true)
        recentMarked = false
        recentCapture = nil
    }

    /// Keep `CapturedRows` of new sessions for `takeCapturedRows` (set when an analysis
    /// takes them after each file; off, nothing is kept).
    package var capturesRows = false
    /// Most rows held in captures at once; a session past it is read back instead.
    var captureLimit = 65_536
    /// Rows of the sessions that had none when this store met them, under the current
    /// data_version: all the rows such a session has. Dropped whenever another connection
    /// commits (it may have added rows), on rollback, and past `captureLimit`.
    private var captured: [Int64: CapturedRows] = [:]
    private var capturedRowCount = 0
    /// The recent session's capture, if it has one.
    private var recentCapture: CapturedRows?

    private func dropCaptures() {
        captured.removeAll()
        capturedRowCount = 0
        recentCapture = nil
    }

    /// Hands over the captures of the sessions that got rows (call after `commit`, with
    /// `takeTouchedSessions`), and forgets them: their sessions have rows now, so later
    /// rows of theirs are never captured.
    package func takeCapturedRows() -> [Int64: any CapturedSessionRows] {
        defer { dropCaptures() }
        return captured.filter { $0.value.count > 0 }
    }

    /// Rows known to be new, waiting for `flush`; the text of their inline `rest` objects.
    private var pending: [PendingRow] = []
    private var pendingRest: [UInt8] = []
    /// The `rest` object of the event being inserted.
    private var restScratch: [UInt8] = []

    private let insertSession: SQLiteStatement
    private let selectSession: SQLiteStatement
    private let selectBase: SQLiteStatement
    private let insertEvents: RowInsert
    private let selectHighestSeq: SQLiteStatement
    private let selectDataVersion: SQLiteStatement
    private let selectEvent: SQLiteStatement
    private let markDirty: SQLiteStatement

    package init(db: SQLiteDatabase) throws {
        self.db = db
        statements = StatementCache(db: db)
        files = try FileLedger(db: db, statements: statements)
        strings = try StringPool(db: db)
        // A new session's controller ids are stored relative to the strings interned before it:
        // the ids it interns are above, so they are stored as small numbers.
        insertSession = try db.prepare("""
            INSERT INTO sessions(sid, vc_base) VALUES (?, (SELECT coalesce(max(id), 0) FROM strings)) ON CONFLICT(sid) DO NOTHING
            """)
        selectSession = try db.prepare("SELECT id, vc_base FROM sessions WHERE sid = ?")
        selectBase = try db.prepare("SELECT vc_base FROM sessions WHERE id = ?")
        insertEvents = try RowInsert(db, "events", ["session", "seq", "t", "ev", "vc", "other", "flags", "rest"],
                                     rowsPerStatement: 64, oneRowSuffix: "ON CONFLICT(session, seq) DO NOTHING")
        selectHighestSeq = try db.prepare("SELECT max(seq) FROM events WHERE session = ?")
        selectDataVersion = try db.prepare("PRAGMA data_version")
        // The stored row unpacked, to compare with a line of the same (sid, seq).
        selectEvent = try db.prepare("""
            SELECT t, ev, vc, cls, other, flags, detail, thread, wall, attrs FROM event_rows WHERE session = ? AND seq = ?
            """)
        rejects = try RejectWriter(db: db)
        markDirty = try db.prepare("UPDATE sessions SET dirty = 1 WHERE id = ? AND dirty = 0")
    }

    // MARK: The run

    /// Copies the write-ahead log back on a thread of its own during the run.
    private var checkpointer: Checkpointer?

    package func startRun(capturesRows: Bool, backgroundWork: Bool) throws {
        self.capturesRows = capturesRows
        if backgroundWork { checkpointer = try Checkpointer(writer: db) }
    }

    package func endRun() {
        checkpointer?.stop()
        checkpointer = nil
    }

    /// Stores a batch: each event in order (so duplicates inside the batch resolve as in the
    /// file), then the rows known to be new in many-row statements, then the rejected lines.
    package func store(_ batch: EventBatch, file: Int64) throws -> BatchCounts {
        var counts = BatchCounts()
        try batch.arena.withUnsafeBytes { arena in
            for e in batch.events {
                counts.events += 1
                switch try insert(e, batch, arena) {
                case .inserted: counts.new += 1
                case .duplicate: counts.duplicates += 1
                case .conflict:
                    counts.conflicts += 1
                    let sid = UnsafeRawBufferPointer(rebasing: arena[Int(e.sid.start)..<Int(e.sid.start + e.sid.count)])
                    try reject(file: file, kind: .conflict, line: e.line, offset: e.offset,
                               reason: "conflicting duplicate: session \(String(decoding: sid, as: UTF8.self)) seq \(e.seq) is stored with other content (first copy kept)",
                               sample: nil)
                }
            }
            try flush(arena)
            for r in batch.rejects {
                let sample = UnsafeRawBufferPointer(rebasing: arena[Int(r.sample.start)..<Int(r.sample.start + r.sample.count)])
                try reject(file: file, kind: .line, line: r.line, offset: r.offset, reason: r.reason, sample: sample)
                counts.rejects += 1
                counts.rejected.append((r.line, r.reason))
            }
        }
        return counts
    }

    // MARK: Statements

    /// The statements of the per-session bookkeeping, each prepared once.
    private let statements: StatementCache

    private func cached(_ sql: String) throws -> SQLiteStatement { try statements.statement(sql) }

    // MARK: Batches

    package func begin() throws {
        try db.beginImmediate()
        transaction += 1
        // Another connection's commit may have added rows: what we knew of seqs is stale.
        selectDataVersion.reset()
        let version = try selectDataVersion.step() ? selectDataVersion.int(0) : -1
        if version != dataVersion {
            highestSeq.removeAll(keepingCapacity: true)
            sessionRecords.removeAll(keepingCapacity: true)
            forgetRecentSession()
            dropCaptures()
            dataVersion = version
        }
        // No rows are pending between batches, so what the caches forget is read back.
        if highestSeq.count >= Self.maxCachedSessions { highestSeq.removeAll(keepingCapacity: true) }
        if sessionBases.count >= Self.maxCachedSessions { sessionBases.removeAll(keepingCapacity: true) }
        if sessionRecords.count >= Self.maxCachedSessions { sessionRecords.removeAll(keepingCapacity: true) }
    }

    /// Starts tracking changes to `sessions`, whose models are asked for (one request each).
    package func watch(_ sessions: [Int64]) {
        for session in sessions where !watched.insert(session) { moreRequests[session, default: 0] += 1 }
    }

    /// Ends one request of `session` (its model was stored or dropped); once none is left,
    /// its changes are no longer tracked. Requests end in any order: while one is left, a
    /// model from an older snapshot must still be found stale.
    package func unwatch(_ session: Int64) {
        if let more = moreRequests[session] {
            moreRequests[session] = more > 1 ? more - 1 : nil
            return
        }
        watched.remove(session)
        lastChanged[session] = nil
    }

    package func commit() throws {
        precondition(pending.isEmpty, "IngestStore.flush must run before commit")
        dirtyInBatch.removeAll(keepingCapacity: true)
        recentMarked = false
        try db.commit()
    }

    /// Call after `commit`: every row this store wrote so far is in, nothing of later batches.
    package var stamp: SnapshotStamp { SnapshotStamp(transaction: transaction, dataVersion: dataVersion) }

    /// True when `session` got no rows after `stamp` was taken, from this store or any other
    /// connection (another connection's commit counts as a change to every session). Call
    /// inside a batch.
    package func unchangedSince(_ stamp: SnapshotStamp, session: Int64) -> Bool {
        dataVersion == stamp.dataVersion && (lastChanged[session] ?? 0) <= stamp.transaction
    }

    /// The sessions that got rows since the last call, in id order.
    package func takeTouchedSessions() -> [Int64] {
        defer { touched.removeAll(keepingCapacity: true) }
        return touched.sorted()
    }

    /// (1.2) The sessions the file being loaded holds events of (`file_sessions`), and the
    /// last one seen (consecutive events of one session are the usual case: one set insert each).
    private var sessionsOfFile = Set<Int64>()
    private var lastFileSession: Int64 = -1

    /// Abandons the open batch; forgets cached ids that may have been rolled back.
    package func rollback() {
        if !db.isAutocommit { try? db.execute("ROLLBACK") }
        strings.reset()
        stringBytes.removeAll()
        sessionBytes.removeAll()
        restTexts.removeAll()
        sessionBases.removeAll()
        sessionRecords.removeAll()
        dirtyInBatch.removeAll()
        highestSeq.removeAll()
        forgetRecentSession()
        dropCaptures()
        pending.removeAll()
        pendingRest.removeAll()
        touched.removeAll()
        sessionsOfFile.removeAll()
        lastFileSession = -1
        watched.removeAll()
        moreRequests.removeAll()
        lastChanged.removeAll()
    }

    // MARK: Interning

    /// The `sessions.id` of `sid`, inserting the row when new (callers cache by bytes); its
    /// `vc_base` goes to the cache of bases.
    func sessionID(_ sid: String) throws -> Int64 {
        insertSession.reset()
        insertSession.bind(sid, at: 1)
        try insertSession.step()
        selectSession.reset()
        selectSession.bind(sid, at: 1)
        guard try selectSession.step() else { throw SQLiteError(code: 1, message: "session vanished", sql: nil) }
        let id = selectSession.int(0)
        sessionBases[id] = selectSession.int(1)
        return id
    }

    /// The `vc_base` of session `id`, from the cache or the table.
    private func base(of id: Int64) throws -> Int64 {
        if let known = sessionBases[id] { return known }
        selectBase.reset()
        selectBase.bind(id, at: 1)
        let base = try selectBase.step() ? selectBase.int(0) : 0
        sessionBases[id] = base
        return base
    }

    // MARK: Events

    /// The id of the text in `span`, from bytes when seen before (no String is built).
    @inline(__always)
    private func intern(_ span: Span, _ arena: UnsafeRawBufferPointer) throws -> Int64? {
        guard !span.isNone else { return nil }
        let bytes = UnsafeRawBufferPointer(rebasing: arena[Int(span.start)..<Int(span.start + span.count)])
        let hash = ByteInterner.hash(bytes)
        if let id = stringBytes.lookup(bytes, hash: hash) { return id }
        let id = try strings.id(String(decoding: bytes, as: UTF8.self))
        stringBytes.insert(bytes, hash: hash, id: id)
        return id
    }

    /// The session id of `span`, made the recent session.
    private func session(_ span: Span, _ arena: UnsafeRawBufferPointer) throws -> Int64 {
        let bytes = UnsafeRawBufferPointer(rebasing: arena[Int(span.start)..<Int(span.start + span.count)])
        if recentSession != 0 && bytes.count == recentSid.count
            && recentSid.withUnsafeBytes({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }) {
            return recentSession
        }
        let hash = ByteInterner.hash(bytes)
        let id: Int64
        if let known = sessionBytes.lookup(bytes, hash: hash) {
            id = known
        } else {
            id = try sessionID(String(decoding: bytes, as: UTF8.self))
            sessionBytes.insert(bytes, hash: hash, id: id)
        }
        if recentSession != 0 { highestSeq[recentSession] = recentHighest }
        recentHighest = try highestStoredSeq(id)
        if capturesRows && recentHighest == Int64.min && captured[id] == nil && capturedRowCount < captureLimit {
            captured[id] = CapturedRows()   // no rows stored or pending: all of its rows will pass here
        }
        recentCapture = captured[id]
        recentSession = id
        recentBase = try base(of: id)
        recentSid.removeAll(keepingCapacity: true)
        recentSid.append(contentsOf: bytes)
        recentMarked = dirtyInBatch.contains(id)
        return id
    }

    @inline(__always)
    private func slice(_ span: Span, _ arena: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        span.isNone ? nil : UnsafeRawBufferPointer(rebasing: arena[Int(span.start)..<Int(span.start + span.count)])
    }

    /// One packed events row (schema 3: `PackedEvent`); an inline `rest` object lives in `text`.
    private struct PendingRow {
        package var session: Int64, seq: Int64, t: Int64, ev: Int64
        package var vc: Int64?, other: Int64?
        package var flags: Int64
        /// The interned `rest` object, or none (`restText` then says whether there is one inline).
        var restID: Int64?
        var restText: Span
    }

    /// Binds a row's 8 values from parameter `first` on (integers and NULLs only when they
    /// differ from what the parameter holds: the session and the empty columns rarely do).
    @inline(__always)
    private func bind(_ r: PendingRow, to s: SQLiteStatement, from first: Int32, _ text: UnsafeRawBufferPointer) {
        s.bindKeeping(r.session, at: first)
        s.bind(r.seq, at: first + 1)
        s.bind(r.t, at: first + 2)
        s.bindKeeping(r.ev, at: first + 3)
        s.bindKeeping(r.vc, at: first + 4)
        s.bindKeeping(r.other, at: first + 5)
        s.bindKeeping(r.flags, at: first + 6)
        if r.restText.isNone { s.bindKeeping(r.restID, at: first + 7) } else { s.bindText(slice(r.restText, text), at: first + 7) }
    }

    /// The highest seq stored for `session` (Int64.min for none), from the cache or the table.
    private func highestStoredSeq(_ session: Int64) throws -> Int64 {
        if let known = highestSeq[session] { return known }
        selectHighestSeq.reset()
        selectHighestSeq.bind(session, at: 1)
        let value = try selectHighestSeq.step() ? (selectHighestSeq.optionalInt(0) ?? Int64.min) : Int64.min
        highestSeq[session] = value
        return value
    }

    /// Writes the pending rows: 64 to a statement, the rest one by one. Must run before the
    /// batch arena they point into is reused, and before `commit`.
    package func flush(_ arena: UnsafeRawBufferPointer) throws {
        guard !pending.isEmpty else { return }
        try pendingRest.withUnsafeBytes { text in
            try insertEvents.insert(pending) { row, s, at in self.bind(row, to: s, from: at, text) }
        }
        pending.removeAll(keepingCapacity: true)
        pendingRest.removeAll(keepingCapacity: true)
    }

    /// The `rest` column of a row whose object is in `restScratch`: its id when the same object
    /// came before (interned now if this is its second time), else its text, appended to
    /// `pendingRest` (a unique object, such as a session record's wall time, is not interned).
    private func restColumn() throws -> (id: Int64?, text: Span) {
        try restScratch.withUnsafeBytes { bytes in
            let hash = ByteInterner.hash(bytes)
            if let known = restTexts.lookup(bytes, hash: hash) {
                if known != Self.seenOnce { return (known, .none) }
                let id = try strings.id(String(decoding: bytes, as: UTF8.self))
                restTexts.update(bytes, hash: hash, id: id)
                return (id, .none)
            }
            restTexts.insert(bytes, hash: hash, id: Self.seenOnce)
            let start = pendingRest.count
            pendingRest.append(contentsOf: bytes)
            return (nil, Span(start: Int32(start), count: Int32(bytes.count)))
        }
    }

    /// Inserts one decoded event; on a known (sid, seq) compares content to tell a duplicate
    /// from a conflict. `arena` is the batch's arena (`batch.arena.withUnsafeBytes`); call
    /// `flush` with it before the batch is reused. Rows above the session's highest stored
    /// seq (the usual case: new data in order) are queued for multi-row inserts; the others
    /// take the exact one-row path.
    package func insert(_ e: RawEvent, _ batch: EventBatch, _ arena: UnsafeRawBufferPointer) throws -> InsertOutcome {
        let session = try self.session(e.sid, arena)
        if session != lastFileSession {
            sessionsOfFile.insert(session)
            lastFileSession = session
        }
        let ev = try intern(e.name, arena)!, vc = try intern(e.vc, arena), cls = try intern(e.cls, arena)
        let other = try intern(e.other, arena), detail = try intern(e.detail, arena), thread = try intern(e.thread, arena)
        // Packed (schema 3): controller ids relative to the session's base; the class in
        // `other` when the event names no other controller, else in `rest` with the rarer values.
        let classInOther = cls != nil && other == nil && e.kind.otherKey == nil
        var row = PendingRow(session: session, seq: e.seq, t: e.t, ev: ev, vc: vc.map { $0 &- recentBase },
                             other: classInOther ? cls : other.map { $0 &- recentBase },
                             flags: PackedEvent.flags(EventFlags(rawValue: e.flags), classInOther: classInOther, otherIsNull: other == nil),
                             restID: nil, restText: .none)
        var wall = slice(e.wall, arena)
        var wallID: Int64?
        if let text = wall, PackedEvent.holdsNUL(text) { (wallID, wall) = (try intern(e.wall, arena), nil) }
        restScratch.removeAll(keepingCapacity: true)
        if PackedEvent.appendRest(to: &restScratch, cls: classInOther ? nil : cls, detail: detail, thread: thread,
                                  wallID: wallID, wall: wall, attrs: slice(e.attrs, arena)) {
            (row.restID, row.restText) = try restColumn()
        }
        let inserted: Bool
        if e.seq > recentHighest {
            pending.append(row)
            recentHighest = e.seq
            inserted = true
        } else {
            // Maybe a duplicate of a stored or pending row: the pending rows go first.
            try flush(arena)
            // No row is pending now: the inline text is this row's alone.
            pendingRest.removeAll(keepingCapacity: true)
            if !row.restText.isNone {
                row.restText = Span(start: 0, count: Int32(restScratch.count))
                pendingRest.append(contentsOf: restScratch)
            }
            inserted = try pendingRest.withUnsafeBytes { text in
                try insertEvents.insertOne(row) { row, s, at in self.bind(row, to: s, from: at, text) }
            }
            pendingRest.removeAll(keepingCapacity: true)
        }
        if inserted {
            if let capture = recentCapture {
                let attrs = e.kind.modelReadsAttrs ? slice(e.attrs, arena).map { String(decoding: $0, as: UTF8.self) } : nil
                if capturedRowCount < captureLimit && capture.append(seq: e.seq, t: e.t, ev: ev, vc: vc, cls: cls,
                                                                     other: other, detail: detail, flags: e.flags, attrs: attrs) {
                    capturedRowCount += 1
                } else {
                    // Too many rows held (or an id past 32 bits): this session is read back.
                    capturedRowCount -= capture.count
                    captured[session] = nil
                    recentCapture = nil
                }
            }
            if !recentMarked {
                recentMarked = true
                dirtyInBatch.insert(session)
                if watched.contains(session) { lastChanged[session] = transaction }
                touched.insert(session)
                markDirty.reset()
                markDirty.bind(session, at: 1)
                try markDirty.step()
            }
            if e.record >= 0 { try mergeSessionRecord(batch.sessionRecords[Int(e.record)], seq: e.seq, session: session) }
            return .inserted
        }
        let q = selectEvent
        q.reset()
        q.bind(session, at: 1)
        q.bind(e.seq, at: 2)
        guard try q.step() else { return .conflict }
        let same = q.int(0) == e.t && q.int(1) == ev && q.optionalInt(2) == vc && q.optionalInt(3) == cls
            && q.optionalInt(4) == other && q.int(5) == e.flags && q.optionalInt(6) == detail
            && q.optionalInt(7) == thread && q.columnEquals(8, slice(e.wall, arena))
            // (1.2) The other keys compare as JSON values: another writer's spacing, key order
            // or spelling of a number is the same event.
            && (q.columnEquals(9, slice(e.attrs, arena)) || JSONCanonical.equal(q.columnBytes(9), slice(e.attrs, arena)))
        return same ? .duplicate : .conflict
    }

    /// Merges a newly stored session record: the earliest record (lowest seq) wins; a copy
    /// that disagrees is counted in `record_conflicts`.
    private func mergeSessionRecord(_ record: SessionRecord, seq: Int64, session: Int64) throws {
        let current: (seq: Int64?, record: SessionRecord?)
        if let cached = sessionRecords[session] {
            current = cached
        } else {
            let q = try cached("""
                SELECT record_seq, app, app_version, build, os, os_version, sdk, device, recorder, wall
                FROM sessions WHERE id = ?
                """)
            try q.bind([.int(session)])
            if try q.step(), let recordSeq = q.optionalInt(0) {
                current = (recordSeq, SessionRecord(app: q.text(1), appVersion: q.text(2), build: q.text(3), os: q.text(4),
                                                    osVersion: q.text(5), sdk: q.text(6), device: q.text(7),
                                                    recorder: q.text(8), wall: q.text(9)))
            } else {
                current = (nil, nil)
            }
        }
        guard let existing = current.record, let existingSeq = current.seq else {
            try writeSessionRecord(record, seq: seq, session: session, addConflict: false)
            sessionRecords[session] = (seq, record)
            return
        }
        let differences = existing.differences(from: record)
        if differences.isEmpty {
            // The same values from an earlier record: it becomes the one kept.
            if seq < existingSeq {
                try cached("UPDATE sessions SET record_seq = ? WHERE id = ?").run([.int(seq), .int(session)])
                sessionRecords[session] = (seq, existing)
            }
            return
        }
        if seq < existingSeq {
            try writeSessionRecord(record, seq: seq, session: session, addConflict: true)
            sessionRecords[session] = (seq, record)
        } else {
            try cached("UPDATE sessions SET record_conflicts = record_conflicts + 1 WHERE id = ?").run([.int(session)])
        }
        recordConflicts[session, default: (0, [])].count += 1
        recordConflicts[session, default: (0, [])].fields.formUnion(differences)
    }

    /// The sessions whose records disagreed in this run (by sid), for the ingest summary.
    package func recordConflictSummary() throws -> [RecordConflict] {
        let q = try cached("SELECT sid FROM sessions WHERE id = ?")
        return try recordConflicts.map { id, c in
            q.reset()
            q.bind(id, at: 1)
            let sid = try q.step() ? (q.text(0) ?? "?") : "?"
            return RecordConflict(sid: sid, count: c.count, fields: c.fields.sorted())
        }.sorted { $0.sid < $1.sid }
    }

    private func writeSessionRecord(_ r: SessionRecord, seq: Int64, session: Int64, addConflict: Bool) throws {
        let stmt = try cached("""
            UPDATE sessions SET app = ?, app_version = ?, build = ?, os = ?, os_version = ?, sdk = ?, device = ?,
              recorder = ?, wall = ?, record_seq = ?, record_conflicts = record_conflicts + ? WHERE id = ?
            """)
        func v(_ s: String?) -> SQLValue { s.map { .text($0) } ?? .null }
        try stmt.run([v(r.app), v(r.appVersion), v(r.build), v(r.os), v(r.osVersion), v(r.sdk), v(r.device),
                      v(r.recorder), v(r.wall), .int(seq), .int(addConflict ? 1 : 0), .int(session)])
    }

    // MARK: Files and rejects (IngestSink), kept by their own types

    package func reject(file: Int64, kind: RejectKind, line: Int?, offset: Int64?, reason: String, sample: UnsafeRawBufferPointer?) throws {
        try rejects.write(file: file, kind: kind, line: line, offset: offset, reason: reason, sample: sample)
    }
    package func isLoading(size: Int64) -> Bool { files.isLoading(size: size) }
    package func hasFile(ofSize size: Int64) throws -> Bool { try files.hasFile(ofSize: size) }
    package func planFile(path: String, size: Int64?, hash: String?, deferring: Bool) throws -> FilePlan {
        try files.plan(path: path, size: size, hash: hash)
    }
    package func earlierReads(of path: String, smallerThan size: Int64) throws -> [EarlierRead] {
        try files.earlierReads(of: path, smallerThan: size)
    }
    package func replaceEarlierReads(_ ids: [Int64]) throws { try files.replaceEarlierReads(ids) }
    package func finishFile(id: Int64, hash: String, stats: FileStats) throws -> String? {
        defer { sessionsOfFile.removeAll(keepingCapacity: true); lastFileSession = -1 }
        if let same = try files.finish(id: id, hash: hash, stats: stats) { return same }
        let insert = try statements.statement("INSERT OR IGNORE INTO file_sessions(file, session) VALUES (?, ?)")
        for session in sessionsOfFile.sorted() { try insert.run([.int(id), .int(session)]) }
        return nil
    }
    package func releaseLoads() { files.releaseLoads() }

    package static func now() -> String { utcNow() }
}
