import Foundation
import LCTrace
import LCTraceIngest
import LCTraceModel

/// A seeded mutation fuzzer for the line decoder and the gzip reader. Inputs derive from
/// (seed, iteration) alone, so any input can be replayed; the current input also sits in a
/// buffer that a signal handler writes to disk if the process crashes.
package final class Fuzzer {
    package struct Stats: Sendable {
        package var lines = 0
        package var accepted = 0
        package var rejected = 0
        package var files = 0
        package var damagedFiles = 0
        /// Invariant violations (a bug even without a crash), as (iteration, description).
        package var violations: [(Int, String)] = []
    }

    private var rng: SplitMix64
    private let seeds: [[UInt8]]
    private let gzipSeeds: [[UInt8]]
    private let decoder = EventDecoder()
    private let scratch: String

    /// Tokens that stress a JSON reader: escapes, surrogates, huge and odd numbers, nesting.
    static let tokens: [String] = [
        "\\ud800", "\\udc00", "\\ud83d\\ude00", "\\u0000", "\\\"", "\\\\", "\\/", "\\x", "\\u12",
        "1e999", "-0", "0.0e-0", "99999999999999999999999", "-9223372036854775808", "9223372036854775807",
        "1.", ".5", "01", "true", "false", "null", "nul", "[]", "{}", "[[[[", "]]]]", "{\"a\":{\"b\":[",
        String(repeating: "[", count: 80) + String(repeating: "]", count: 80),
        String(repeating: "{\"k\":", count: 70) + "1" + String(repeating: "}", count: 70),
        "\"" + String(repeating: "a", count: 3000) + "\"", "\u{FEFF}", "é", "😀", "\t", " ", ",", ":",
    ]
    static let bytes: [UInt8] = [0x7b, 0x7d, 0x5b, 0x5d, 0x22, 0x5c, 0x2c, 0x3a, 0x30, 0x2d, 0x65, 0x2e, 0x75,
                                 0x00, 0x0a, 0x0d, 0x7f, 0x80, 0xbf, 0xc0, 0xc2, 0xe0, 0xed, 0xf0, 0xf4, 0xf5, 0xff]

    package init(seed: UInt64, scratchDirectory: String) throws {
        rng = SplitMix64(seed: seed)
        scratch = scratchDirectory
        try FileManager.default.createDirectory(atPath: scratchDirectory, withIntermediateDirectories: true)
        // Seeds: lines of a small generated session, plus hand-picked odd lines.
        var plan = SessionPlan(sid: "FUZZ-0001", plants: [.orphanView, .leakPop, .cancelledSheetSwipe, .unknownInstance], scenarios: 12)
        plan.rotateEvery = 0
        let sim = SessionSimulator(plan: plan, seed: seed)
        var lines = sim.run().map { Array($0.utf8) }
        lines += [
            #"{"v":1,"sid":"S","seq":1,"t":1,"ev":"viewIsAppearing","vc":"0x1","bounds":[393,852],"traits":{"h":"compact","v":"regular"},"x":{"y":[1,2.5e-3,null,true]}}"#,
            #"{"v":1,"sid":"S\u00e9","seq":0,"t":0,"ev":"session","wall":"2026-11-02T10:15:03.120Z","app":"a","sdk":"27.0"}"#,
            #"{"v":2,"sid":"S","seq":1,"t":1,"ev":"mark"}"#, "[1,2,3]", "{}", "",
        ].map { Array($0.utf8) }
        seeds = lines
        // Gzip seeds: the session as one and as several members.
        var gz: [[UInt8]] = []
        for members in [1, 3] {
            let path = scratch + "/seed-\(members).gz"
            let w = try TraceFileWriter(path: path, gzip: true)
            let text = sim.lines.joined(separator: "\n") + "\n"
            let chunk = max(1, text.utf8.count / members)
            var start = text.startIndex
            while start < text.endIndex {
                let end = text.utf8.index(start, offsetBy: chunk, limitedBy: text.endIndex) ?? text.endIndex
                w.write(String(text[start..<end]))
                w.endMember()
                start = end
            }
            w.close()
            gz.append([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        }
        gzipSeeds = gz
    }

    /// One mutated line: 1–4 mutations of a random seed.
    package func nextLine() -> [UInt8] {
        var input = rng.pick(seeds)
        for _ in 0..<rng.int(1...4) { mutate(&input, gzip: false) }
        return input
    }

    private func mutate(_ input: inout [UInt8], gzip: Bool) {
        let n = input.count
        switch rng.int(0...9) {
        case 0 where n > 0:
            let i = rng.int(0...(n - 1))
            input[i] ^= UInt8(1 << rng.int(0...7))
        case 1 where n > 0:
            input[rng.int(0...(n - 1))] = rng.pick(Self.bytes)
        case 2 where n > 1:
            let a = rng.int(0...(n - 1)), b = min(n, a + rng.int(1...16))
            input.removeSubrange(a..<b)
        case 3 where n > 1:
            let a = rng.int(0...(n - 1)), b = min(n, a + rng.int(1...32))
            input.insert(contentsOf: input[a..<b], at: rng.int(0...n))
        case 4, 5:
            input.insert(contentsOf: Array(rng.pick(Self.tokens).utf8), at: rng.int(0...n))
        case 6 where n > 0:
            input.removeSubrange(rng.int(0...(n - 1))..<n)  // truncate
        case 7:
            let other = gzip ? rng.pick(gzipSeeds) : rng.pick(seeds)
            if !other.isEmpty {
                let cut = rng.int(0...(other.count - 1))
                input.insert(contentsOf: other[cut...], at: rng.int(0...n))
            }
        case 8 where !gzip && n > 2:
            // Swap a value's type: replace a quote with a digit or the reverse.
            if let i = input.indices.filter({ input[$0] == 0x22 }).randomElement(using: &rng) { input[i] = 0x37 }
        default:
            if n > 0 { input[rng.int(0...(n - 1))] = UInt8(truncatingIfNeeded: rng.next()) }
        }
    }

    /// Decodes one line and checks what a correct decoder promises.
    package func checkLine(_ input: [UInt8], iteration: Int, stats: inout Stats) {
        FuzzCrashGuard.current(input)
        stats.lines += 1
        let result = input.withUnsafeBytes { decoder.decode($0) }
        switch result {
        case .failure(let reason):
            stats.rejected += 1
            if reason.message.isEmpty { stats.violations.append((iteration, "empty reject reason")) }
        case .success(let e):
            stats.accepted += 1
            if e.seq < 0 || e.t < 0 { stats.violations.append((iteration, "negative seq or t accepted")) }
            let sidLength = e.sid.unicodeScalars.count
            if sidLength < 1 || sidLength > 128 { stats.violations.append((iteration, "sid length \(sidLength) accepted")) }
            if let attrs = e.attrs {
                if !EventDecoder.isJSONObject(attrs) { stats.violations.append((iteration, "attrs is not a JSON object: \(attrs.prefix(80))")) }
            }
            if e.kind.needsVC && e.vc == nil { stats.violations.append((iteration, "\(e.name) without vc accepted")) }
        }
    }

    /// One mutated gzip file, read through TraceInput → LineReader → EventDecoder.
    package func checkFile(iteration: Int, stats: inout Stats) throws {
        var input = rng.pick(gzipSeeds)
        for _ in 0..<rng.int(1...3) { mutate(&input, gzip: true) }
        FuzzCrashGuard.current(input)
        let path = scratch + "/input.gz"
        try Data(input).write(to: URL(fileURLWithPath: path))
        let trace = try TraceInput(location: .file(path), bufferSize: 4096)
        var lines = 0
        LineReader(input: trace, maxLineLength: 1 << 16).forEachLine { line in
            lines += 1
            if line.overlongLength == nil { _ = decoder.decode(line.bytes) }
            return true
        }
        stats.files += 1
        if trace.damage != nil { stats.damagedFiles += 1 }
        // The guard lets a member grow to its limits (size and ratio), plus what one read adds.
        let limit = max(trace.maxMemberBytes, Int64(input.count) * trace.maxInflateRatio) + (1 << 20)
        if trace.bytesProduced > limit * Int64(max(trace.members, 1)) {
            stats.violations.append((iteration, "inflated past the zip-bomb guard"))
        }
        _ = lines
    }

    /// Runs `iterations` inputs; every `fileEvery`-th one is a gzip file.
    package func run(iterations: Int, fileEvery: Int = 100, progress: ((Int, Stats) -> Void)? = nil) throws -> Stats {
        var stats = Stats()
        for i in 0..<iterations {
            if fileEvery > 0 && i % fileEvery == fileEvery - 1 {
                try checkFile(iteration: i, stats: &stats)
            } else {
                checkLine(nextLine(), iteration: i, stats: &stats)
            }
            if let progress, i % 100_000 == 99_999 { progress(i + 1, stats) }
        }
        return stats
    }
}

/// Keeps the input under test where a crash handler can reach it without allocating.
package enum FuzzCrashGuard {
    nonisolated(unsafe) static var buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1 << 22)
    nonisolated(unsafe) static var length = 0
    nonisolated(unsafe) static var path: UnsafeMutablePointer<CChar>?

    @inline(__always) static func current(_ input: [UInt8]) {
        let n = min(input.count, 1 << 22)
        input.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: n) }
        length = n
    }

    /// On SIGSEGV, SIGILL (Swift traps), SIGTRAP, SIGABRT, SIGBUS or SIGFPE, writes the input
    /// being tested to `file` with async-signal-safe calls, then dies with the signal.
    package static func install(file: String) {
        path = strdup(file)
        for sig in [SIGSEGV, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE] {
            signal(sig) { signo in
                if let p = FuzzCrashGuard.path {
                    let fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                    if fd >= 0 {
                        _ = write(fd, FuzzCrashGuard.buffer, FuzzCrashGuard.length)
                        close(fd)
                    }
                }
                signal(signo, SIG_DFL)
                raise(signo)
            }
        }
    }
}
