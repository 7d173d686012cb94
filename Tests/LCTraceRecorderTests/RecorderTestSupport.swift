import Foundation
import XCTest
@testable import LCTraceRecorder
import LCTraceAnalysis
import LCTraceFormat
import LCTraceIngest
import LCTraceModel
import LCTraceRules

/// A clock the test moves: `t` is exactly what the test says.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var nanoseconds: UInt64 = 1_000_000_000
    var clock: MonotonicClock { MonotonicClock { [self] in lock.withLock { nanoseconds } } }
    func advance(milliseconds: UInt64) { lock.withLock { nanoseconds += milliseconds * 1_000_000 } }
    func advance(nanoseconds delta: UInt64) { lock.withLock { nanoseconds += delta } }
}

/// One trace file as lctrace reads it: the ingest's gzip reader and line splitter, and
/// `EventDecoder` for each line.
struct DecodedFile {
    var url: URL
    var events: [TraceEvent] = []
    /// (line number, reason, the line had no `\n`: a cut tail).
    var rejects: [(line: Int, reason: String, unterminated: Bool)] = []
    var damage: InputDamage?
    var members = 0

    init(_ url: URL) throws {
        self.url = url
        let input = try TraceInput(location: .file(url.path))
        let reader = LineReader(input: input)
        let decoder = EventDecoder()
        var events: [TraceEvent] = []
        var rejects: [(line: Int, reason: String, unterminated: Bool)] = []
        reader.forEachLine { line in
            if line.bytes.isEmpty { return true }
            switch decoder.decode(line.bytes) {
            case .success(let e): events.append(e)
            case .failure(let r): rejects.append((line.number, r.message, line.unterminated))
            }
            return true
        }
        self.events = events
        self.rejects = rejects
        damage = input.damage
        members = input.members
    }
}

enum RecorderTests {
    static let session = SessionInfo(app: "com.example.shop", appVersion: "5.2.1", build: "812", os: "iOS", osVersion: "27.1",
                                     sdk: "27.0", device: "iPhone16,2")

    /// A fresh directory under the temporary folder.
    static func directory(_ name: String = #function) -> URL {
        let url = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("lctrace-recorder-tests-\(getpid())-\(name.filter { $0.isLetter || $0.isNumber })-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.removeItem(at: url)
        return url
    }

    static func configuration(_ directory: URL, clock: TestClock? = nil, sid: String = "5E0C7B9A-1D2F-4C1B-9E53-0A7C2E1F9B10") -> RecorderConfiguration {
        var c = RecorderConfiguration(session: session, directory: directory, sessionID: sid)
        if let clock { c.clock = clock.clock }
        c.wallClock = WallClock { 1_793_614_503_120 }  // 2026-11-02T10:15:03.120Z
        return c
    }

    /// Every file of `directory` (the recorder's naming), oldest first, decoded.
    static func files(_ directory: URL) throws -> [DecodedFile] {
        try TraceDirectory.list(directory).map { try DecodedFile($0.url) }
    }

    /// All events of all files, by seq (a session record repeated in a rotated file has its own seq).
    static func events(_ directory: URL) throws -> [TraceEvent] {
        try files(directory).flatMap(\.events).sorted { $0.seq < $1.seq }
    }

    /// The session's model and findings as lctrace builds them (no database).
    /// `extensionPoint`: what ingest reads from the session record's `extension` key.
    static func findings(_ events: [TraceEvent], settings: RuleSettings = RuleSettings(), extensionPoint: String? = nil) throws -> [Finding] {
        guard let first = events.first else { return [] }
        var meta = SessionMetadata(sid: first.sid)
        meta.extensionPoint = extensionPoint
        if let record = events.first(where: { $0.kind == .session }), let r = record.session {
            meta.app = r.app; meta.appVersion = r.appVersion; meta.build = r.build; meta.osName = r.os
            meta.osVersion = r.osVersion; meta.sdk = r.sdk; meta.device = r.device; meta.recordSeq = record.seq
        }
        let ordered = events.sorted { $0.seq < $1.seq }
        let model = try SessionAnalysis(settings: settings).build(sid: first.sid, metadata: meta) { consume in
            for e in ordered { try consume(e) }
        }
        return model.findings
    }
}

extension EventFlags {
    /// The flags the decoder sets for these keys written with these values.
    static func written(_ keys: [(EventFlags, Bool)]) -> EventFlags {
        var flags: EventFlags = []
        for (flag, value) in keys {
            flags.insert(.present(flag))
            if value { flags.insert(flag) }
        }
        return flags
    }
}
