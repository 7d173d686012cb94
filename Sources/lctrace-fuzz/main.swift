import Foundation
import LCTraceGen

// lctrace-fuzz: seeded mutation fuzzing of the line decoder and the gzip reader, then of the
// command line's option values (numbers, durations, lists).
//   lctrace-fuzz [--iterations N] [--options N] [--seed S] [--file-every K] [--crash-file PATH]
// Exits 1 when an invariant is broken; a crash leaves its input in --crash-file.

var iterations = 1_000_000
var seed: UInt64 = 1
var fileEvery = 100
var optionInputs = 0
var crashFile = "fuzz-crash.bin"
var args = Array(CommandLine.arguments.dropFirst())
while !args.isEmpty {
    let a = args.removeFirst()
    let v = args.isEmpty ? "" : args.removeFirst()
    switch a {
    case "--iterations": iterations = Int(v) ?? iterations
    case "--seed": seed = UInt64(v) ?? seed
    case "--file-every": fileEvery = Int(v) ?? fileEvery
    case "--options": optionInputs = Int(v) ?? optionInputs
    case "--crash-file": crashFile = v
    default:
        FileHandle.standardError.write("usage: lctrace-fuzz [--iterations N] [--options N] [--seed S] [--file-every K] [--crash-file PATH]\n".data(using: .utf8)!)
        exit(64)
    }
}
FuzzCrashGuard.install(file: crashFile)
let scratch = NSTemporaryDirectory() + "lctrace-fuzz-\(getpid())"
/// Runs the fuzzer and returns the exit status (so everything is released before exit,
/// and valgrind's leak check sees only what the reader leaks).
@MainActor func fuzz() -> Int32 {
    let started = Date()
    do {
        let fuzzer = try Fuzzer(seed: seed, scratchDirectory: scratch)
        let stats = try fuzzer.run(iterations: iterations, fileEvery: fileEvery) { done, s in
            let rate = Double(done) / Date().timeIntervalSince(started)
            FileHandle.standardError.write("\(done) inputs, \(s.accepted) accepted, \(s.rejected) rejected, \(s.files) files (\(s.damagedFiles) damaged), \(Int(rate))/s\n".data(using: .utf8)!)
        }
        let seconds = Date().timeIntervalSince(started)
        print("fuzz seed \(seed): \(iterations) inputs in \(String(format: "%.1f", seconds)) s: \(stats.lines) lines (\(stats.accepted) accepted, \(stats.rejected) rejected), \(stats.files) gzip files (\(stats.damagedFiles) damaged), \(stats.violations.count) invariant violations, 0 crashes")
        for (i, v) in stats.violations.prefix(20) { print("violation at iteration \(i): \(v)") }
        var status: Int32 = stats.violations.isEmpty ? 0 : 1
        if optionInputs > 0 {
            let optionsStarted = Date()
            let options = OptionFuzzer(seed: seed, scratchDirectory: scratch).run(iterations: optionInputs) { done, s in
                FileHandle.standardError.write("\(done) option values, \(s.accepted) accepted, \(s.refused) refused\n".data(using: .utf8)!)
            }
            print("fuzz seed \(seed): \(options.inputs) option values in \(String(format: "%.1f", Date().timeIntervalSince(optionsStarted))) s (\(options.accepted) accepted, \(options.refused) refused as usage errors), \(options.violations.count) invariant violations, 0 crashes")
            for (i, v) in options.violations.prefix(20) { print("option violation at input \(i): \(v)") }
            if !options.violations.isEmpty { status = 1 }
        }
        return status
    } catch {
        FileHandle.standardError.write("lctrace-fuzz: \(error)\n".data(using: .utf8)!)
        return 74
    }
}
let status = fuzz()
try? FileManager.default.removeItem(atPath: scratch)
exit(status)
