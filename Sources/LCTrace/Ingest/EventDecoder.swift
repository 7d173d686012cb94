/// Why a line was rejected: a short, lowercase reason that names the key or value at fault.
public struct RejectReason: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Turns one line of format v1 into a `TraceEvent`, or a `RejectReason`.
///
/// Strict where the format is strict (types, required keys, version, UTF-8), tolerant where
/// it asks to be (unknown keys kept verbatim in `attrs`, unknown event names kept).
public struct EventDecoder {
    /// The newest format version this decoder reads.
    public static let formatVersion: Int64 = 1
    public static let maxSessionIDLength = 128

    public init() {}

    private struct Member {
        var key: String
        var value: Range<Int>
        var kind: JSONScanner.ValueKind
        var keyOffset: Int
    }

    public func decode(_ line: UnsafeRawBufferPointer) -> Result<TraceEvent, RejectReason> {
        var scanner = JSONScanner(line)
        var members: [Member] = []
        members.reserveCapacity(16)
        do {
            scanner.skipWhitespace()
            guard !scanner.atEnd, scanner.peek() == 0x7b else {
                if scanner.atEnd { return .failure(RejectReason("empty line")) }
                // Tell "valid JSON but not an object" from "not JSON at all".
                var probe = JSONScanner(line)
                if (try? probe.scanValue(depth: 0)) != nil {
                    probe.skipWhitespace()
                    if probe.atEnd { return .failure(RejectReason("not a JSON object")) }
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
                    let keyOffset = scanner.index
                    let (keyRange, escaped) = try scanner.scanString()
                    let key = scanner.string(keyRange, escaped: escaped)
                    try scanner.expect(0x3a, "':'")
                    scanner.skipWhitespace()
                    let valueStart = scanner.index
                    let kind = try scanner.scanValue(depth: 1)
                    members.append(Member(key: key, value: valueStart..<scanner.index, kind: kind, keyOffset: keyOffset))
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
            return .failure(RejectReason("not valid JSON: \(failure.message) at column \(failure.offset + 1)"))
        } catch {
            return .failure(RejectReason("not valid JSON"))
        }
        return build(members, scanner)
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

    private func build(_ members: [Member], _ scanner: JSONScanner) -> Result<TraceEvent, RejectReason> {
        // Duplicate keys make a line ambiguous: refuse rather than guess which one counts.
        if members.count > 1 {
            var seen = Set<String>(minimumCapacity: members.count)
            for m in members where !seen.insert(m.key).inserted {
                return .failure(RejectReason("duplicate key '\(m.key)'"))
            }
        }
        func member(_ key: String) -> Member? { members.first { $0.key == key } }

        func requiredInt(_ key: String) -> Result<Int64, RejectReason> {
            guard let m = member(key) else { return .failure(RejectReason("missing required key '\(key)'")) }
            guard m.kind == .number, let value = scanner.integer(m.value) else {
                let got = m.kind == .number ? "a non-integer number" : typeName(m.kind)
                return .failure(RejectReason("key '\(key)': expected an integer, got \(got)"))
            }
            return .success(value)
        }
        func optionalString(_ key: String) -> Result<String?, RejectReason> {
            guard let m = member(key), m.kind != .null else { return .success(nil) }
            guard m.kind == .string else {
                return .failure(RejectReason("key '\(key)': expected a string, got \(typeName(m.kind))"))
            }
            return .success(stringValue(m, scanner))
        }

        // Version first: a newer format is refused as such, whatever else the line holds.
        let version: Int64
        switch requiredInt("v") {
        case .failure(let r): return .failure(r)
        case .success(let v): version = v
        }
        if version > EventDecoder.formatVersion {
            return .failure(RejectReason("unsupported format version \(version) (lctrace reads version \(EventDecoder.formatVersion))"))
        }
        if version < 1 { return .failure(RejectReason("key 'v': invalid format version \(version)")) }

        guard let sidMember = member("sid") else { return .failure(RejectReason("missing required key 'sid'")) }
        guard sidMember.kind == .string else {
            return .failure(RejectReason("key 'sid': expected a string, got \(typeName(sidMember.kind))"))
        }
        let sid = stringValue(sidMember, scanner)
        let sidLength = sid.unicodeScalars.count
        if sidLength < 1 || sidLength > EventDecoder.maxSessionIDLength {
            return .failure(RejectReason("key 'sid': length \(sidLength) outside 1…\(EventDecoder.maxSessionIDLength)"))
        }

        let seq: Int64, t: Int64
        switch requiredInt("seq") {
        case .failure(let r): return .failure(r)
        case .success(let v): seq = v
        }
        if seq < 0 { return .failure(RejectReason("key 'seq': negative value \(seq)")) }
        switch requiredInt("t") {
        case .failure(let r): return .failure(r)
        case .success(let v): t = v
        }
        if t < 0 { return .failure(RejectReason("key 't': negative value \(t)")) }

        guard let evMember = member("ev") else { return .failure(RejectReason("missing required key 'ev'")) }
        guard evMember.kind == .string else {
            return .failure(RejectReason("key 'ev': expected a string, got \(typeName(evMember.kind))"))
        }
        let name = stringValue(evMember, scanner)
        if name.isEmpty { return .failure(RejectReason("key 'ev': empty event name")) }
        var event = TraceEvent(sid: sid, seq: seq, t: t, name: name)
        let kind = event.kind

        var attrs: [UInt8] = []
        func keepInAttrs(_ m: Member) {
            attrs.append(attrs.isEmpty ? 0x7b : 0x2c)
            attrs.append(0x22)
            attrs.append(contentsOf: jsonEscaped(m.key))
            attrs.append(0x22)
            attrs.append(0x3a)
            attrs.append(contentsOf: UnsafeRawBufferPointer(rebasing: scanner.bytes[m.value]))
        }

        var record: SessionRecord? = kind == .session ? SessionRecord() : nil
        let otherKey = kind.otherKey
        let detailKey = kind.detailKey

        for m in members {
            switch m.key {
            case "v", "sid", "seq", "t", "ev":
                continue
            case "wall", "thread", "vc", "cls":
                switch optionalString(m.key) {
                case .failure(let r): return .failure(r)
                case .success(let value):
                    switch m.key {
                    case "wall": event.wall = value
                    case "thread": event.thread = value
                    case "vc": event.vc = value
                    default: event.cls = value
                    }
                }
            case "animated", "isMovingToParent", "isBeingPresented", "isMovingFromParent", "isBeingDismissed", "interactive":
                if m.kind == .null { continue }
                guard m.kind == .bool else {
                    return .failure(RejectReason("key '\(m.key)': expected a boolean, got \(typeName(m.kind))"))
                }
                let flag = EventFlags.keys.first { $0.0 == m.key }!.1
                event.flags.insert(EventFlags.present(flag))
                if scanner.bytes[m.value.lowerBound] == 0x74 { event.flags.insert(flag) }
            case otherKey:
                guard m.kind == .string || m.kind == .null else {
                    return .failure(RejectReason("key '\(m.key)': expected a controller id or null, got \(typeName(m.kind))"))
                }
                event.flags.insert(.otherPresent)
                event.other = m.kind == .string ? stringValue(m, scanner) : nil
            case detailKey:
                switch optionalString(m.key) {
                case .failure(let r): return .failure(r)
                case .success(let value): event.detail = value
                }
            case "bounds":
                guard m.kind == .array, isNumberPair(m.value, scanner) else {
                    return .failure(RejectReason("key 'bounds': expected [width, height] numbers"))
                }
                keepInAttrs(m)
            case "traits":
                guard m.kind == .object || m.kind == .null else {
                    return .failure(RejectReason("key 'traits': expected an object, got \(typeName(m.kind))"))
                }
                keepInAttrs(m)
            default:
                if record != nil, SessionRecord.keys.contains(m.key) {
                    switch optionalString(m.key) {
                    case .failure(let r): return .failure(r)
                    case .success(let value): if let value { record!.set(m.key, value) }
                    }
                } else {
                    keepInAttrs(m)
                }
            }
        }

        if kind.needsVC && event.vc == nil {
            return .failure(RejectReason("event '\(name)' needs key 'vc'"))
        }
        if let vc = event.vc, vc.isEmpty { return .failure(RejectReason("key 'vc': empty controller id")) }
        if kind == .`init` && (event.cls ?? "").isEmpty {
            return .failure(RejectReason("event 'init' needs key 'cls'"))
        }
        switch kind {
        case .addChild, .present:
            if event.other == nil {
                return .failure(RejectReason("event '\(name)' needs key '\(otherKey!)' with a controller id"))
            }
        case .willMoveToParent, .didMoveToParent:
            if !event.flags.contains(.otherPresent) {
                return .failure(RejectReason("event '\(name)' needs key 'parent' (an id or null)"))
            }
        case .session:
            if event.wall == nil { return .failure(RejectReason("session record needs key 'wall'")) }
            record!.wall = event.wall
            event.session = record
        default:
            break
        }
        if !attrs.isEmpty {
            attrs.append(0x7d)
            event.attrs = String(decoding: attrs, as: UTF8.self)
        }
        return .success(event)
    }

    /// True when `text` is exactly one valid JSON object (what `attrs` must always be).
    public static func isJSONObject(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { bytes in
            var scanner = JSONScanner(bytes)
            guard (try? scanner.scanValue(depth: 0)) == .object else { return false }
            scanner.skipWhitespace()
            return scanner.atEnd
        }
    }

    private func stringValue(_ m: Member, _ scanner: JSONScanner) -> String {
        let range = (m.value.lowerBound + 1)..<(m.value.upperBound - 1)
        let escaped = scanner.bytes[range].contains(0x5c)
        return scanner.string(range, escaped: escaped)
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

/// The bytes of `s` escaped for the inside of a JSON string.
func jsonEscaped(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(s.utf8.count)
    for b in s.utf8 {
        switch b {
        case 0x22: out += [0x5c, 0x22]
        case 0x5c: out += [0x5c, 0x5c]
        case 0x0a: out += [0x5c, 0x6e]
        case 0x0d: out += [0x5c, 0x72]
        case 0x09: out += [0x5c, 0x74]
        case 0..<0x20:
            let hex = Array("0123456789abcdef".utf8)
            out += [0x5c, 0x75, 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xf)]]
        default: out.append(b)
        }
    }
    return out
}

/// `s` as a JSON string literal.
public func jsonString(_ s: String) -> String {
    "\"" + String(decoding: jsonEscaped(s), as: UTF8.self) + "\""
}
