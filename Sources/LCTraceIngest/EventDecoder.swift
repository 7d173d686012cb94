#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LCTraceFormat
import LCTraceModel

extension TraceKey {
    /// The flag of `EventFlags` a boolean key sets.
    package var flag: EventFlags? {
        switch self {
        case .animated: return .animated
        case .isMovingToParent: return .isMovingToParent
        case .isBeingPresented: return .isBeingPresented
        case .isMovingFromParent: return .isMovingFromParent
        case .isBeingDismissed: return .isBeingDismissed
        case .interactive: return .interactive
        default: return nil
        }
    }
}

/// Why a line was rejected: a short, lowercase reason that names the key or value at fault.
package struct RejectReason: Error, Equatable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// Turns one line of format v1 into a `RawEvent` in an `EventBatch`, or a `RejectReason`.
///
/// Strict where the format is strict (types, required keys, version, UTF-8), tolerant where
/// it asks to be (unknown keys kept verbatim in `attrs`, unknown event names kept). The hot
/// path works on bytes: keys are classified without building strings, string values are
/// copied (escapes decoded) into the batch arena, and nothing is allocated per line.
package struct EventDecoder: Sendable {
    /// The newest format version this decoder reads.
    static let formatVersion = TraceFormat.version
    package static let maxSessionIDLength = TraceFormat.maxSessionIDLength
    /// More top-level keys than this in one line is refused (a flood, not a trace line).
    static let maxKeys = 256

    package init() {}

    /// The format's keys by length, and their count, held here: read through their globals
    /// (an addressor call and a once-check for every key of every line) they cost 0.6 % of
    /// the loading's instructions.
    private let keyTable = TraceKey.byLength
    private let keyCount = TraceKey.allCases.count

    /// The keys of the format (`TraceKey`), as the decoder calls them.
    typealias Key = TraceKey

    /// A top-level member: its key (known or not) and where its value is.
    struct Member {
        package var key: Key?
        var keyStart: Int32    // raw key text, inside the quotes
        var keyEnd: Int32
        var valueStart: Int32
        var valueEnd: Int32
        package var kind: JSONScanner.ValueKind
    }

    // MARK: Convenience (tests, fuzzer, rare paths)

    /// Decodes one line into a `TraceEvent`.
    package func decode(_ line: UnsafeRawBufferPointer) -> Result<TraceEvent, RejectReason> {
        let batch = EventBatch()
        if let reason = decode(line, into: batch, line: 0, offset: 0) { return .failure(reason) }
        return .success(batch.traceEvent(batch.events[0]))
    }

    /// True when `text` is exactly one valid JSON object (what `attrs` must always be).
    package static func isJSONObject(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { bytes in
            var scanner = JSONScanner(bytes)
            guard (try? scanner.scanValue(depth: 0)) == .object else { return false }
            scanner.skipWhitespace()
            return scanner.atEnd
        }
    }

    // MARK: The hot path

    /// Decodes `line`, appending a `RawEvent` to `batch`; returns why it was rejected instead.
    package func decode(_ bytes: UnsafeRawBufferPointer, into batch: EventBatch, line: Int, offset: Int64) -> RejectReason? {
        // Room for the keys of a usual line stays on the stack: withUnsafeTemporaryAllocation
        // takes the heap above 1 KiB where it cannot check the stack's room (Linux), a malloc
        // and a free for every line (2.5 % of the ingest's CPU). A line with more keys is
        // decoded again with room for `maxKeys`.
        var needsRoom = false
        let reason = withUnsafeTemporaryAllocation(of: Member.self, capacity: EventDecoder.keysOnStack) {
            decode(bytes, into: batch, line: line, offset: offset, members: $0, needsRoom: &needsRoom)
        }
        guard needsRoom else { return reason }
        return withUnsafeTemporaryAllocation(of: Member.self, capacity: EventDecoder.maxKeys) {
            decode(bytes, into: batch, line: line, offset: offset, members: $0, needsRoom: &needsRoom)
        }
    }

    /// Keys a line can have before its members leave the stack (1 KiB of them).
    static let keysOnStack = 1024 / MemoryLayout<Member>.stride

    /// `decode` with room for `members.count` keys; sets `needsRoom` (and adds nothing to
    /// `batch`) when the line has more and there could be more room.
    private func decode(_ bytes: UnsafeRawBufferPointer, into batch: EventBatch, line: Int, offset: Int64,
                        members: UnsafeMutableBufferPointer<Member>, needsRoom: inout Bool) -> RejectReason? {
        var count = 0
        var scanner = JSONScanner(bytes)
        do {
            scanner.skipWhitespace()
            guard !scanner.atEnd, scanner.peek() == 0x7b else {
                if scanner.atEnd { return RejectReason("empty line") }
                var probe = JSONScanner(bytes)
                if (try? probe.scanValue(depth: 0)) != nil {
                    probe.skipWhitespace()
                    if probe.atEnd { return RejectReason("not a JSON object") }
                }
                throw scanner.fail("expected '{', found \(scanner.describeByte(at: scanner.index))")
            }
            scanner.index += 1
            scanner.skipWhitespace()
            if !scanner.atEnd && scanner.peek() == 0x7d {
                scanner.index += 1
            } else {
                while true {
                    scanner.skipWhitespace()
                    guard !scanner.atEnd, scanner.peek() == 0x22 else {
                        throw scanner.fail("expected a key string, found \(scanner.describeByte(at: scanner.index))")
                    }
                    let (keyRange, escaped) = try scanner.scanString()
                    try scanner.expect(0x3a, "':'")
                    scanner.skipWhitespace()
                    let valueStart = scanner.index
                    let kind = try scanner.scanValue(depth: 1)
                    guard count < members.count else {
                        if members.count < EventDecoder.maxKeys { needsRoom = true; return nil }
                        return RejectReason("more than \(EventDecoder.maxKeys) keys in one line")
                    }
                    let key = escaped ? Array(scanner.string(keyRange, escaped: true).utf8).withUnsafeBytes { Key.classify($0, in: keyTable) }
                                      : Key.classify(UnsafeRawBufferPointer(rebasing: bytes[keyRange]), in: keyTable)
                    members[count] = Member(key: key, keyStart: Int32(keyRange.lowerBound), keyEnd: Int32(keyRange.upperBound),
                                            valueStart: Int32(valueStart), valueEnd: Int32(scanner.index), kind: kind)
                    count += 1
                    scanner.skipWhitespace()
                    guard !scanner.atEnd else { throw scanner.fail("unterminated object") }
                    if scanner.peek() == 0x2c { scanner.index += 1; continue }
                    if scanner.peek() == 0x7d { scanner.index += 1; break }
                    throw scanner.fail("expected ',' or '}', found \(scanner.describeByte(at: scanner.index))")
                }
            }
            scanner.skipWhitespace()
            if !scanner.atEnd {
                throw scanner.fail("unexpected \(scanner.describeByte(at: scanner.index)) after the object")
            }
        } catch let failure as JSONScanner.Failure {
            return RejectReason("not valid JSON: \(failure.message) at column \(failure.offset + 1)")
        } catch {
            return RejectReason("not valid JSON")
        }
        let mark = (arena: batch.arena.count, records: batch.sessionRecords.count)
        let reason = build(UnsafeBufferPointer(rebasing: members[0..<count]), scanner, batch, line: line, offset: offset)
        if reason != nil {
            // Undo what a rejected line left in the arena.
            batch.arena.removeSubrange(mark.arena...)
            if batch.sessionRecords.count > mark.records { batch.sessionRecords.removeLast() }
        }
        return reason
    }

    private func typeName(_ kind: JSONScanner.ValueKind) -> String {
        switch kind {
        case .string: return "string"
        case .number: return "number"
        case .object: return "object"
        case .array: return "array"
        case .bool: return "boolean"
        case .null: return "null"
        }
    }

    private func build(_ members: UnsafeBufferPointer<Member>, _ scanner: JSONScanner, _ batch: EventBatch,
                       line: Int, offset: Int64) -> RejectReason? {

        // Which member holds each known key; duplicates make a line ambiguous: refuse them.
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: keyCount) { slot in
            slot.initialize(repeating: -1)
            return build(members, scanner, batch, line: line, offset: offset, slot: slot)
        }
    }

    private func build(_ members: UnsafeBufferPointer<Member>, _ scanner: JSONScanner, _ batch: EventBatch,
                       line: Int, offset: Int64, slot: UnsafeMutableBufferPointer<Int>) -> RejectReason? {
        let bytes = scanner.bytes
        for (i, m) in members.enumerated() {
            if let key = m.key {
                if slot[key.rawValue] >= 0 { return RejectReason("duplicate key '\(key.text)'") }
                slot[key.rawValue] = i
            } else {
                let a = UnsafeRawBufferPointer(rebasing: bytes[Int(m.keyStart)..<Int(m.keyEnd)])
                for j in 0..<i where members[j].key == nil && members[j].keyEnd - members[j].keyStart == m.keyEnd - m.keyStart {
                    let b = UnsafeRawBufferPointer(rebasing: bytes[Int(members[j].keyStart)..<Int(members[j].keyEnd)])
                    if memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 {
                        return RejectReason("duplicate key '\(String(decoding: a, as: UTF8.self))'")
                    }
                }
            }
        }
        func member(_ key: Key) -> Member? {
            let i = slot[key.rawValue]
            return i >= 0 ? members[i] : nil
        }
        func valueRange(_ m: Member) -> Range<Int> { Int(m.valueStart)..<Int(m.valueEnd) }

        func requiredInt(_ key: Key) -> Result<Int64, RejectReason> {
            guard let m = member(key) else { return .failure(RejectReason("missing required key '\(key.text)'")) }
            guard m.kind == .number else {
                return .failure(RejectReason("key '\(key.text)': expected an integer, got \(typeName(m.kind))"))
            }
            switch scanner.integral(valueRange(m)) {
            case .value(let value): return .success(value)
            case .fraction: return .failure(RejectReason("key '\(key.text)': expected an integer, got a non-integer number"))
            case .outOfRange: return .failure(RejectReason("key '\(key.text)': integer out of range (a 64-bit integer at most)"))
            }
        }
        /// Copies a string value (escapes decoded) into the arena.
        func span(_ m: Member) -> Span {
            let range = (Int(m.valueStart) + 1)..<(Int(m.valueEnd) - 1)
            let raw = UnsafeRawBufferPointer(rebasing: bytes[range])
            if raw.isEmpty || memchr(raw.baseAddress!, 0x5c, raw.count) == nil { return batch.append(raw) }
            return batch.append(Array(scanner.string(range, escaped: true).utf8))
        }
        func optionalString(_ key: Key) -> Result<Span, RejectReason> {
            guard let m = member(key), m.kind != .null else { return .success(.none) }
            guard m.kind == .string else {
                return .failure(RejectReason("key '\(key.text)': expected a string, got \(typeName(m.kind))"))
            }
            return .success(span(m))
        }

        // Version first: a newer format is refused as such, whatever else the line holds.
        let version: Int64
        switch requiredInt(.v) {
        case .failure(let r): return r
        case .success(let v): version = v
        }
        if version > EventDecoder.formatVersion {
            return RejectReason("unsupported format version \(version) (lctrace reads version \(EventDecoder.formatVersion))")
        }
        if version < 1 { return RejectReason("key 'v': invalid format version \(version)") }

        var e = RawEvent()
        e.line = line
        e.offset = offset
        guard let sidMember = member(.sid) else { return RejectReason("missing required key 'sid'") }
        guard sidMember.kind == .string else { return RejectReason("key 'sid': expected a string, got \(typeName(sidMember.kind))") }
        e.sid = span(sidMember)
        let sidLength = batch.arena.withUnsafeBytes { arena -> Int in
            // Unicode scalars = bytes that are not UTF-8 continuation bytes (the value is valid UTF-8).
            var n = 0
            for i in Int(e.sid.start)..<Int(e.sid.start + e.sid.count) where arena[i] & 0xC0 != 0x80 { n += 1 }
            return n
        }
        if sidLength < 1 || sidLength > EventDecoder.maxSessionIDLength {
            return RejectReason("key 'sid': length \(sidLength) outside 1…\(EventDecoder.maxSessionIDLength)")
        }
        switch requiredInt(.seq) {
        case .failure(let r): return r
        case .success(let v): e.seq = v
        }
        if e.seq < 0 { return RejectReason("key 'seq': negative value \(e.seq)") }
        switch requiredInt(.t) {
        case .failure(let r): return r
        case .success(let v): e.t = v
        }
        if e.t < 0 { return RejectReason("key 't': negative value \(e.t)") }
        guard let evMember = member(.ev) else { return RejectReason("missing required key 'ev'") }
        guard evMember.kind == .string else { return RejectReason("key 'ev': expected a string, got \(typeName(evMember.kind))") }
        e.name = span(evMember)
        if e.name.count == 0 { return RejectReason("key 'ev': empty event name") }
        let nameText = batch.arena.withUnsafeBytes {
            UnsafeRawBufferPointer(rebasing: $0[Int(e.name.start)..<Int(e.name.start + e.name.count)])
        }
        e.kind = EventKind.classify(nameText)
        let kind = e.kind
        let otherKey = Key.other(for: kind)
        let detailKey = Key.detail(for: kind)
        /// Reads an optional string key into `span`; returns why it could not.
        func read(_ key: Key, _ span: inout Span) -> RejectReason? {
            switch optionalString(key) {
            case .failure(let r): return r
            case .success(let s): span = s; return nil
            }
        }
        if let r = read(.wall, &e.wall) { return r }
        if let r = read(.thread, &e.thread) { return r }
        if let r = read(.vc, &e.vc) { return r }
        if let r = read(.cls, &e.cls) { return r }
        var flags = EventFlags()
        var record: SessionRecord? = kind == .session ? SessionRecord() : nil
        var attrs: [Member] = []
        for m in members {
            guard let key = m.key else { attrs.append(m); continue }
            switch key {
            case .v, .sid, .seq, .t, .ev, .wall, .thread, .vc, .cls:
                continue
            case .animated, .isMovingToParent, .isBeingPresented, .isMovingFromParent, .isBeingDismissed, .interactive:
                if m.kind == .null { continue }
                guard m.kind == .bool else { return RejectReason("key '\(key.text)': expected a boolean, got \(typeName(m.kind))") }
                flags.insert(EventFlags.present(key.flag!))
                if bytes[Int(m.valueStart)] == 0x74 { flags.insert(key.flag!) }
            case .bounds:
                guard m.kind == .array, isNumberPair(valueRange(m), scanner) else {
                    return RejectReason("key 'bounds': expected [width, height] numbers")
                }
                attrs.append(m)
            case .traits:
                guard m.kind == .object || m.kind == .null else {
                    return RejectReason("key 'traits': expected an object, got \(typeName(m.kind))")
                }
                attrs.append(m)
            default:
                if key == otherKey {
                    guard m.kind == .string || m.kind == .null else {
                        return RejectReason("key '\(key.text)': expected a controller id or null, got \(typeName(m.kind))")
                    }
                    flags.insert(.otherPresent)
                    if m.kind == .string { e.other = span(m) }
                } else if key == detailKey {
                    if let r = read(key, &e.detail) { return r }
                } else if record != nil && key.isSessionField {
                    guard m.kind == .string || m.kind == .null else {
                        return RejectReason("key '\(key.text)': expected a string, got \(typeName(m.kind))")
                    }
                    if m.kind == .string { record!.set(key.text, scanner.string((Int(m.valueStart) + 1)..<(Int(m.valueEnd) - 1), escaped: true)) }
                } else {
                    attrs.append(m)
                }
            }
        }
        e.flags = flags.rawValue

        if kind.needsVC && e.vc.isNone { return RejectReason("event '\(batch.string(e.name)!)' needs key 'vc'") }
        if !e.vc.isNone && e.vc.count == 0 { return RejectReason("key 'vc': empty controller id") }
        if kind == .`init` && e.cls.count == 0 { return RejectReason("event 'init' needs key 'cls'") }
        switch kind {
        case .addChild, .present:
            if e.other.isNone { return RejectReason("event '\(batch.string(e.name)!)' needs key '\(otherKey!.text)' with a controller id") }
        // Every other key may be absent (1.1): Codable recorders omit nil values, so an absent
        // `parent` on willMoveToParent/didMoveToParent is `willMove(toParent: nil)`.
        case .session:
            if e.wall.isNone { return RejectReason("session record needs key 'wall'") }
            record!.wall = batch.string(e.wall)
            batch.sessionRecords.append(record!)
            e.record = Int32(batch.sessionRecords.count - 1)
        default:
            break
        }
        if !attrs.isEmpty {
            // Keys without a column, in their original order, values verbatim.
            let start = batch.arena.count
            for (i, m) in attrs.enumerated() {
                batch.arena.append(i == 0 ? 0x7b : 0x2c)
                batch.arena.append(0x22)
                batch.arena.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[Int(m.keyStart)..<Int(m.keyEnd)]))
                batch.arena.append(0x22)
                batch.arena.append(0x3a)
                batch.arena.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[Int(m.valueStart)..<Int(m.valueEnd)]))
            }
            batch.arena.append(0x7d)
            e.attrs = Span(start: Int32(start), count: Int32(batch.arena.count - start))
        }
        batch.events.append(e)
        return nil
    }

    private func isNumberPair(_ range: Range<Int>, _ scanner: JSONScanner) -> Bool {
        var inner = JSONScanner(UnsafeRawBufferPointer(rebasing: scanner.bytes[range]))
        inner.index = 1
        guard (try? inner.scanValue(depth: 1)) == .number else { return false }
        inner.skipWhitespace()
        guard !inner.atEnd, inner.peek() == 0x2c else { return false }
        inner.index += 1
        guard (try? inner.scanValue(depth: 1)) == .number else { return false }
        inner.skipWhitespace()
        return !inner.atEnd && inner.peek() == 0x5d
    }
}
