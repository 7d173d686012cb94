import Foundation
import LCTraceCLI
import LCTraceModel

/// A seeded mutation fuzzer of the command line's option values: numbers, durations and
/// lists (`--grace`, `--gap-threshold`, `--max-live`, `--examples`, `--timeout`, `--fail-on` …).
/// Each input is a whole command run in-process against a database that does not exist, so
/// nothing is read or written: the value is parsed, then refused (64) or accepted (74: no
/// database). A crash is a failure by itself; the invariants below are checked on every input.
package final class OptionFuzzer {
    package struct Stats: Sendable {
        package var inputs = 0
        /// Accepted by the parser (the command then found no database).
        package var accepted = 0
        /// Refused as a usage error.
        package var refused = 0
        package var violations: [(Int, String)] = []
    }

    private var rng: SplitMix64
    private let missingDatabase: String

    /// Options that take a value, with values that are right, nearly right, and wrong.
    static let options: [(name: String, commands: [String], seeds: [String])] = [
        ("grace", ["report", "analyze", "ingest"], durations),
        ("timeout", ["query"], durations),
        ("gap-threshold", ["report", "analyze", "ingest"],
         ["animated=1000ms,plain=250ms", "animated=2s", "plain=0ns", "not-animated=5s", "animated=", "=1s",
          "plain=1s,plain=2s", ",,", "animated=1000ms,", "animated=1e20ms", "animated=1000", "walk=1s", "animated=24h,plain=24h"]),
        ("max-live", ["report", "analyze", "ingest"],
         ["A=3", "ImageCellController=10", "A=", "=3", "A=99999999999999999999", "A=-1", "A=+1", "A=1e3", "A==3",
          "A=3=4", "A=1000000000", "A=1000000001", "Ä=٣"]),
        ("examples", ["report"], ["5", "0", "1000000", "1000001", "-1", "18446744073709551616", "٣", "5 ", "0x10", "1e3"]),
        ("fail-on", ["report"], ["error", "warning", "info", "never", "ERROR", "", "errors", "nevr"]),
        ("min-severity", ["report"], ["info", "warning", "error", "never", "Warning", ""]),
        ("format", ["report", "sessions", "query", "ingest"], ["json", "csv", "table", "text", "jsn", "", "JSON"]),
    ]

    static let durations = ["5s", "2500ms", "1.5m", "24h", "0ns", "300us", "300µs", "86400s", "86400000000000ns",
                            "1e20ms", "9223372036854775807ns", "10000000000s", "-5s", "5000", ".5s", "5.s", "0x10s",
                            "nans", "infs", "1_000ms", "5 s", "5S", "５s", "٣s", "0.000000001s", "99999999999999999999h"]

    /// Pieces that stress a number or list parser.
    static let tokens = ["0", "9", "00000000000000000000", "9223372036854775807", "9223372036854775808", "18446744073709551616",
                         "-", "+", ".", "..", "e", "E", "e308", "e-400", "x", "=", ",", " ", "\t", "\n", "\u{0}", "\u{1B}[2J",
                         "ns", "us", "µs", "ms", "s", "m", "h", "d", "٣", "５", "é", "😀", "\u{202E}", "\u{FEFF}",
                         String(repeating: "9", count: 400), String(repeating: ",", count: 50)]

    package init(seed: UInt64, scratchDirectory: String) {
        rng = SplitMix64(seed: seed)
        missingDatabase = scratchDirectory + "/no-such-directory/none.db"
    }

    /// One mutated value: a seed with 0–3 changes.
    func mutate(_ seed: String) -> String {
        var scalars = Array(seed.unicodeScalars)
        for _ in 0..<rng.int(0...3) {
            let n = scalars.count
            switch rng.int(0...6) {
            case 0 where n > 0: scalars.remove(at: rng.int(0...(n - 1)))
            case 1: scalars.insert(contentsOf: rng.pick(Self.tokens).unicodeScalars, at: rng.int(0...n))
            case 2 where n > 0:
                let i = rng.int(0...(n - 1))
                scalars[i] = Unicode.Scalar(UInt8(rng.int(0x20...0x7e)))
            case 3 where n > 1:
                let a = rng.int(0...(n - 1)), b = min(n, a + rng.int(1...8))
                scalars.insert(contentsOf: scalars[a..<b], at: rng.int(0...n))
            case 4: scalars = Array(rng.pick(Self.durations).unicodeScalars) + scalars
            case 5 where n > 0: scalars.removeSubrange(rng.int(0...(n - 1))..<n)
            default: scalars.append(contentsOf: rng.pick(Self.tokens).unicodeScalars)
            }
        }
        var text = String.UnicodeScalarView()
        text.append(contentsOf: scalars)
        return String(text)
    }

    /// Checks one option value, directly and through the whole command line.
    func check(option: String, command: String, value: String, iteration: Int, stats: inout Stats) {
        var args = [command, "--db", missingDatabase, "--\(option)", value]
        if command == "query" { args.append("SELECT 1") }
        if command == "ingest" { args.append(missingDatabase + ".jsonl") }
        FuzzCrashGuard.current(Array(args.joined(separator: "\u{0}").utf8))
        stats.inputs += 1
        let console = CapturingConsole()
        let status = CLI.run(args, console: console, environment: [:])
        switch status {
        case 64:
            stats.refused += 1
            if !console.errors.hasPrefix("Error: ") { stats.violations.append((iteration, "refusal without 'Error: ': \(console.errors.prefix(80))")) }
        case 74:
            stats.accepted += 1
        default:
            stats.violations.append((iteration, "exit \(status) for --\(option) '\(value.prefix(40))' (expected 64 or 74)"))
        }
        if console.errors.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\n" || ($0.value >= 0x7F && $0.value <= 0x9F) }) {
            stats.violations.append((iteration, "a control character reached the terminal: \(console.errors.debugDescription.prefix(80))"))
        }
        // The parsers themselves: what they accept is in range, and reads back the same.
        switch option {
        case "grace", "timeout":
            let range: ClosedRange<Int64> = option == "grace" ? OptionValues.ruleDurations : 1_000_000...86_400_000_000_000
            if let ns = try? OptionValues.duration(value, option: "--\(option)", range: range) {
                if !range.contains(ns) { stats.violations.append((iteration, "duration \(ns) outside its range accepted")) }
                if (try? OptionValues.duration(OptionValues.describe(ns), option: "--x", range: range)) != ns {
                    stats.violations.append((iteration, "\(ns) ns does not read back from '\(OptionValues.describe(ns))'"))
                }
                if status == 64 && option == "grace" { stats.violations.append((iteration, "valid --grace '\(value)' refused")) }
            } else if status != 64 {
                stats.violations.append((iteration, "invalid --\(option) '\(value.prefix(40))' accepted by the command"))
            }
        case "examples":
            if let n = try? OptionValues.count(value, option: "--examples", range: 0...1_000_000) {
                if n < 0 || n > 1_000_000 || String(n) != String(value.drop { $0 == "0" }.isEmpty ? "0" : value.drop { $0 == "0" }) {
                    stats.violations.append((iteration, "count \(n) from '\(value)'"))
                }
            } else if status != 64 {
                stats.violations.append((iteration, "invalid --examples '\(value.prefix(40))' accepted"))
            }
        default:
            break
        }
    }

    /// Runs `iterations` inputs.
    package func run(iterations: Int, progress: ((Int, Stats) -> Void)? = nil) -> Stats {
        var stats = Stats()
        for i in 0..<iterations {
            let option = rng.pick(Self.options)
            check(option: option.name, command: rng.pick(option.commands), value: mutate(rng.pick(option.seeds)),
                  iteration: i, stats: &stats)
            if let progress, i % 100_000 == 99_999 { progress(i + 1, stats) }
        }
        return stats
    }
}
