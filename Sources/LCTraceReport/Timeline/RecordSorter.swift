import Foundation
import LCTraceFormat

/// Byte records put in order by (time, rank, group, arrival), with memory bounded: once the records
/// held pass `memoryLimit` bytes they are sorted and written to a temporary file as a run, and
/// the runs are merged when read. A Chrome trace orders every record of a session, and
/// holding them all took 4 GB for a 5 M-event session; now at most the limit is held.
struct RecordSorter {
    /// The order of records: time, then rank, then group, then arrival (unique, so the order
    /// is total and the output the same whether or not anything was spilled). The group lets
    /// a caller that reads its sources interleaved order ties as if each group had arrived
    /// whole, one after another.
    struct Key: Comparable {
        var t: Int64
        var rank: Int
        var group: Int
        var order: Int
        static func < (a: Key, b: Key) -> Bool { (a.t, a.rank, a.group, a.order) < (b.t, b.rank, b.group, b.order) }
    }

    /// The records' bytes, one after another; `records` says where each is.
    private var json = JSONWriter(capacity: 1 << 16)
    private var records: [(key: Key, start: Int, end: Int)] = []
    private var arrivals = 0
    /// Bytes held before a run is written out (record bytes plus their index entries).
    let memoryLimit: Int
    private var spill: UnsafeMutablePointer<FILE>?
    /// Where each run is in the temporary file: its start and end offsets.
    private var runs: [(start: Int, end: Int)] = []
    private var spilledBytes = 0
    /// The most bytes held at once (records and index), for the tests that guard the bound.
    private(set) var peakHeldBytes = 0
    /// Runs written to the temporary file so far.
    var spilledRuns: Int { runs.count }

    /// An index entry's size, counted against the limit.
    private static let entryBytes = MemoryLayout<(key: Key, start: Int, end: Int)>.stride

    init(memoryLimit: Int = 32 << 20) { self.memoryLimit = max(memoryLimit, 1) }

    /// Adds a record written by `write` (one whole JSON value).
    mutating func append(t: Int64, rank: Int, group: Int = 0, _ write: (inout JSONWriter) -> Void) throws {
        let start = json.bytes.count
        write(&json)
        records.append((Key(t: t, rank: rank, group: group, order: arrivals), start, json.bytes.count))
        arrivals += 1
        let held = json.bytes.count + records.count * Self.entryBytes
        peakHeldBytes = max(peakHeldBytes, held)
        if held >= memoryLimit { try writeRun() }
    }

    /// Each record's bytes, in order; the sorter is empty afterwards.
    mutating func forEachOrdered(_ body: (ArraySlice<UInt8>) throws -> Void) throws {
        defer { close() }
        if runs.isEmpty {
            for r in records.sorted(by: { $0.key < $1.key }) { try body(json.bytes[r.start..<r.end]) }
            records = []
            _ = json.takeBytes()
            return
        }
        try writeRun()
        guard let spill, fflush(spill) == 0 else { throw RecordSorterError.io(String(cString: strerror(errno))) }
        let fd = fileno(spill)
        var readers = try runs.map { try RunReader(fd: fd, start: $0.start, end: $0.end) }
        // A binary heap of the readers by their current record's key.
        var heap = readers.indices.filter { readers[$0].current != nil }
        func less(_ a: Int, _ b: Int) -> Bool { readers[heap[a]].current!.key < readers[heap[b]].current!.key }
        func down(_ i: Int) {
            var i = i
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < heap.count && less(l, m) { m = l }
                if r < heap.count && less(r, m) { m = r }
                if m == i { return }
                heap.swapAt(i, m)
                i = m
            }
        }
        for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { down(i) }
        while let top = heap.first {
            try body(readers[top].current!.bytes[...])
            try readers[top].advance()
            if readers[top].current == nil {
                heap.swapAt(0, heap.count - 1)
                heap.removeLast()
            }
            if !heap.isEmpty { down(0) }
        }
    }

    /// Sorts the records held and appends them to the temporary file as one run.
    private mutating func writeRun() throws {
        guard !records.isEmpty else { return }
        if spill == nil {
            guard let file = tmpfile() else { throw RecordSorterError.io(String(cString: strerror(errno))) }
            spill = file
        }
        var out: [UInt8] = []
        out.reserveCapacity(1 << 16)
        let start = spilledBytes
        func put(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
        for r in records.sorted(by: { $0.key < $1.key }) {
            put(UInt64(bitPattern: r.key.t))
            put(UInt64(r.key.rank))
            put(UInt64(bitPattern: Int64(r.key.group)))
            put(UInt64(r.key.order))
            put(UInt64(r.end - r.start))
            out.append(contentsOf: json.bytes[r.start..<r.end])
            if out.count >= 1 << 16 { try flush(&out) }
        }
        try flush(&out)
        runs.append((start, spilledBytes))
        records.removeAll(keepingCapacity: true)
        _ = json.takeBytes()
    }

    private mutating func flush(_ out: inout [UInt8]) throws {
        guard !out.isEmpty else { return }
        let written = out.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, spill) }
        guard written == out.count else { throw RecordSorterError.io(String(cString: strerror(errno))) }
        spilledBytes += out.count
        out.removeAll(keepingCapacity: true)
    }

    private mutating func close() {
        if let spill { fclose(spill) }
        spill = nil
        runs = []
        spilledBytes = 0
    }
}

/// The temporary file of an export could not be written or read back.
enum RecordSorterError: Error, CustomStringConvertible {
    case io(String)
    var description: String {
        switch self {
        case .io(let reason): return "could not use a temporary file for the export: \(reason)"
        }
    }
}

/// Reads one sorted run back from the temporary file, a buffer at a time.
private struct RunReader {
    private let fd: Int32
    private var offset: Int
    private let end: Int
    private var buffer: [UInt8] = []
    private var position = 0
    private(set) var current: (key: RecordSorter.Key, bytes: [UInt8])?
    /// A record's header in the file: t, rank, group, arrival, length (8 bytes each).
    private static let header = 40

    init(fd: Int32, start: Int, end: Int) throws {
        self.fd = fd
        offset = start
        self.end = end
        try advance()
    }

    /// Moves to the next record of the run (nil at its end).
    mutating func advance() throws {
        guard try available(Self.header) else { current = nil; return }
        func word(_ i: Int) -> UInt64 {
            var v: UInt64 = 0
            for b in 0..<8 { v |= UInt64(buffer[position + i * 8 + b]) << (8 * UInt64(b)) }
            return v
        }
        let key = RecordSorter.Key(t: Int64(bitPattern: word(0)), rank: Int(word(1)),
                                   group: Int(Int64(bitPattern: word(2))), order: Int(word(3)))
        let length = Int(word(4))
        position += Self.header
        guard try available(length) else { throw RecordSorterError.io("the temporary file ended early") }
        current = (key, Array(buffer[position..<position + length]))
        position += length
    }

    /// Makes `n` bytes available from `position`, reading more of the run; false at its end.
    private mutating func available(_ n: Int) throws -> Bool {
        if buffer.count - position >= n { return true }
        buffer.removeFirst(position)
        position = 0
        let want = max(n - buffer.count, 1 << 16)
        let take = min(want, end - offset)
        guard take > 0 else { return buffer.count >= n && n > 0 }
        let old = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: take))
        let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + old, take, off_t(offset)) }
        guard got == take else { throw RecordSorterError.io(got < 0 ? String(cString: strerror(errno)) : "the temporary file ended early") }
        offset += take
        return buffer.count >= n
    }
}
