import LCTraceFormat

/// One row of `event_blocks` as the analysis reads it: the arrays as sent (text format),
/// decoded on the client, so the server neither unnests nor sorts them (the view `events`
/// did both, and took a third of the server's time in `analyze`).
final class PGEventBlock {
    let seq, t, ev, vc, other, flags: [Int64]
    /// Of `rest`, the values the model reads (the others, thread and wall, are skipped).
    let restEv, restClass, restDetail: [Int64]
    let restAttrs: [String?]

    /// A block that the server's arrays did not describe.
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    init(seq: [Int64], t: [Int64], ev: [Int64], vc: [Int64], other: [Int64], flags: [Int64],
         restEv: [Int64], restClass: [Int64], restDetail: [Int64], restAttrs: [String?]) {
        self.seq = seq; self.t = t; self.ev = ev; self.vc = vc; self.other = other; self.flags = flags
        self.restEv = restEv; self.restClass = restClass; self.restDetail = restDetail; self.restAttrs = restAttrs
    }

    /// Decodes row `row` of a result whose columns are seq, t, ev, vc, other, flags, rest.
    convenience init(_ page: PGResult, row: Int) throws {
        func ints(_ column: Int) throws -> [Int64] {
            guard let values = try page.withBytes(row, column, { try Self.integers($0) }) else {
                throw Malformed(description: "a block of event_blocks with a NULL array")
            }
            return values
        }
        let seq = try ints(0), t = try ints(1), ev = try ints(2), vc = try ints(3), other = try ints(4), flags = try ints(5)
        let n = seq.count
        guard n > 0, [t, ev, vc, other, flags].allSatisfy({ $0.count == n }) else {
            throw Malformed(description: "a block of event_blocks whose arrays differ in length (\(n) seqs)")
        }
        var restEv = [Int64](repeating: 0, count: n), restClass = restEv, restDetail = restEv
        var restAttrs = [String?](repeating: nil, count: n)
        if let rests = try page.withBytes(row, 6, { try Self.elements($0) }) {
            guard rests.count == n else {
                throw Malformed(description: "a block of event_blocks with \(rests.count) rest values for \(n) seqs")
            }
            for (i, rest) in rests.enumerated() {
                guard let rest else { continue }
                let values = try Self.restValues(rest)
                restEv[i] = values.ev
                restClass[i] = values.cls
                restDetail[i] = values.detail
                restAttrs[i] = values.attrs
            }
        }
        self.init(seq: seq, t: t, ev: ev, vc: vc, other: other, flags: flags,
                  restEv: restEv, restClass: restClass, restDetail: restDetail, restAttrs: restAttrs)
    }

    /// The elements of an integer array's text (`{1,-2,NULL}`; NULL read as 0, which no
    /// `strings` id is).
    static func integers(_ text: UnsafeBufferPointer<UInt8>) throws -> [Int64] {
        var i = try openingBrace(text)
        var out: [Int64] = []
        guard text[i] != UInt8(ascii: "}") else { return out }
        let null = Array("NULL".utf8)
        while true {
            let start = i
            while i < text.count, text[i] != UInt8(ascii: ","), text[i] != UInt8(ascii: "}") { i += 1 }
            guard i < text.count else { throw Malformed(description: "an array of event_blocks cut short") }
            let element = UnsafeBufferPointer(rebasing: text[start..<i])
            if element.elementsEqual(null) {
                out.append(0)
            } else if let value = PGResult.integer(element) {
                out.append(value)
            } else {
                throw Malformed(description: "an array of event_blocks with an element that is no integer")
            }
            if text[i] == UInt8(ascii: "}") { return out }
            i += 1  // past the ','
            guard i < text.count else { throw Malformed(description: "an array of event_blocks cut short") }
        }
    }

    /// The elements of a text-like array's text (`{"a\"b",NULL,c}`), quotes and escapes
    /// resolved; nil for NULL.
    static func elements(_ text: UnsafeBufferPointer<UInt8>) throws -> [[UInt8]?] {
        var i = try openingBrace(text)
        var out: [[UInt8]?] = []
        guard text[i] != UInt8(ascii: "}") else { return out }
        while true {
            var element: [UInt8] = []
            if text[i] == UInt8(ascii: "\"") {
                i += 1
                while i < text.count, text[i] != UInt8(ascii: "\"") {
                    if text[i] == UInt8(ascii: "\\") { i += 1 }
                    guard i < text.count else { break }
                    element.append(text[i])
                    i += 1
                }
                guard i < text.count else { throw Malformed(description: "an array of event_blocks cut short") }
                i += 1
                out.append(element)
            } else {
                while i < text.count, text[i] != UInt8(ascii: ","), text[i] != UInt8(ascii: "}") {
                    element.append(text[i])
                    i += 1
                }
                out.append(element == Array("NULL".utf8) ? nil : element)
            }
            guard i < text.count else { throw Malformed(description: "an array of event_blocks cut short") }
            if text[i] == UInt8(ascii: "}") { return out }
            guard text[i] == UInt8(ascii: ",") else { throw Malformed(description: "an array of event_blocks not in the server's text form") }
            i += 1
            guard i < text.count else { throw Malformed(description: "an array of event_blocks cut short") }
        }
    }

    /// Past `{` (and a `[l:u]=` bounds decoration, which arrays starting at 1 never have).
    private static func openingBrace(_ text: UnsafeBufferPointer<UInt8>) throws -> Int {
        var i = 0
        if text.first == UInt8(ascii: "[") {
            while i < text.count, text[i] != UInt8(ascii: "=") { i += 1 }
            i += 1
        }
        guard i + 1 < text.count, text[i] == UInt8(ascii: "{") else {
            throw Malformed(description: "an array of event_blocks not in the server's text form")
        }
        return i + 1
    }

    /// The values `rest ->> 'ev'`, `'class'`, `'detail'` (ids, 0 when absent) and `'attrs'`
    /// (its string, unescaped) give, from a rest object's JSON text.
    static func restValues(_ json: [UInt8]) throws -> (ev: Int64, cls: Int64, detail: Int64, attrs: String?) {
        try json.withUnsafeBytes { bytes in
            var scanner = JSONScanner(bytes)
            var out: (ev: Int64, cls: Int64, detail: Int64, attrs: String?) = (0, 0, 0, nil)
            do {
                try scanner.expect(UInt8(ascii: "{"), "'{'")
                scanner.skipWhitespace()
                if !scanner.atEnd, scanner.peek() == UInt8(ascii: "}") { return out }
                while true {
                    scanner.skipWhitespace()
                    guard !scanner.atEnd, scanner.peek() == UInt8(ascii: "\"") else { break }
                    let (keyRange, keyEscaped) = try scanner.scanString()
                    let key = scanner.string(keyRange, escaped: keyEscaped)
                    try scanner.expect(UInt8(ascii: ":"), "':'")
                    scanner.skipWhitespace()
                    let start = scanner.index
                    let kind = try scanner.scanValue(depth: 1)
                    let range = start..<scanner.index
                    switch (key, kind) {
                    case ("ev", .number): out.ev = scanner.integer(range) ?? 0
                    case ("class", .number): out.cls = scanner.integer(range) ?? 0
                    case ("detail", .number): out.detail = scanner.integer(range) ?? 0
                    case ("attrs", .string): out.attrs = scanner.string(range.lowerBound + 1..<range.upperBound - 1, escaped: true)
                    default: break
                    }
                    scanner.skipWhitespace()
                    guard !scanner.atEnd else { break }
                    if scanner.peek() == UInt8(ascii: ",") { scanner.index += 1; continue }
                    if scanner.peek() == UInt8(ascii: "}") { return out }
                    break
                }
            } catch let failure as JSONScanner.Failure {
                throw Malformed(description: "a rest value of event_blocks that is no JSON object: \(failure.message)")
            }
            throw Malformed(description: "a rest value of event_blocks that is no JSON object")
        }
    }
}

/// A session's events in seq order from its blocks, which come in `first_seq` order and may
/// interleave (a later file fills holes): a block joins the blocks being read once the next
/// event could be in it, and each event is the least seq of those. Memory holds the blocks
/// that overlap, not the session.
enum PGBlockMerge {
    private struct Cursor {
        let block: PGEventBlock
        var at = 0
        var seq: Int64 { block.seq[at] }
    }

    /// Calls `body` with each event (its block and index) in seq order. `fetch` gives the next
    /// blocks, in `first_seq` order, and whether they are the last; it is told the blocks
    /// still being read (whose texts must stay known).
    static func forEach(first: [PGEventBlock], last: Bool,
                        fetch: (_ reading: [PGEventBlock]) throws -> (blocks: [PGEventBlock], last: Bool),
                        _ body: (PGEventBlock, Int) throws -> Void) throws {
        var unread = first, next = 0, done = last
        var reading: [Cursor] = []
        func least() -> Int? {
            guard var best = reading.indices.first else { return nil }
            for i in reading.indices.dropFirst() where reading[i].seq < reading[best].seq { best = i }
            return best
        }
        while true {
            while true {
                if next == unread.count && !done {
                    (unread, done) = try fetch(reading.map(\.block))
                    next = 0
                }
                guard next < unread.count else { break }
                if let m = least(), unread[next].seq[0] > reading[m].seq { break }
                reading.append(Cursor(block: unread[next]))
                next += 1
            }
            guard let m = least() else { return }
            try body(reading[m].block, reading[m].at)
            reading[m].at += 1
            if reading[m].at == reading[m].block.seq.count { reading.remove(at: m) }
        }
    }
}
