import Foundation
import LCTraceGen

// lctrace-gen: writes deterministic trace corpora with their answer key (expected.json).
//   lctrace-gen --sample DIR                  the SampleTraces/ set
//   lctrace-gen [options] DIR                 a random corpus
// Options: --seed N --sessions N --per-file N --scenarios N --bug-rate P --look-alike-rate P
//          --rotate-every N --lines-per-member N --plain

let usage = """
usage: lctrace-gen --sample DIR
       lctrace-gen [--seed N] [--sessions N] [--per-file N] [--scenarios N] [--bug-rate P]
                   [--look-alike-rate P] [--rotate-every N] [--lines-per-member N] [--plain] DIR

"""

var options = CorpusOptions()
var sample = false
var directory: String?
var args = Array(CommandLine.arguments.dropFirst())
func value() -> String {
    guard !args.isEmpty else { FileHandle.standardError.write(usage.data(using: .utf8)!); exit(64) }
    return args.removeFirst()
}
while !args.isEmpty {
    let arg = args.removeFirst()
    switch arg {
    case "--sample": sample = true
    case "--seed": options.seed = UInt64(value()) ?? 1
    case "--sessions": options.sessions = Int(value()) ?? 8
    case "--per-file": options.sessionsPerFile = Int(value()) ?? 2
    case "--scenarios": options.scenarios = Int(value()) ?? 40
    case "--bug-rate": options.bugRate = Double(value()) ?? 0.25
    case "--look-alike-rate": options.lookAlikeRate = Double(value()) ?? 0.4
    case "--rotate-every": options.rotateEvery = Int(value()) ?? 0
    case "--lines-per-member": options.linesPerMember = Int(value()) ?? 0
    case "--plain": options.gzip = false
    case "-h", "--help": print(usage, terminator: ""); exit(0)
    default:
        if arg.hasPrefix("-") { FileHandle.standardError.write("unknown option \(arg)\n\(usage)".data(using: .utf8)!); exit(64) }
        directory = arg
    }
}
guard let directory else { FileHandle.standardError.write(usage.data(using: .utf8)!); exit(64) }

do {
    var labels: Labels
    var events: Int
    var files: [String]
    if sample {
        (labels, events, files) = try CorpusWriter.writeSample(to: directory)
    } else {
        (labels, events, files) = try CorpusWriter.write(plans: CorpusWriter.randomPlans(options), to: directory, options: options)
    }
    try CorpusWriter.expectedJSON(labels).write(toFile: (directory as NSString).appendingPathComponent("expected.json"), atomically: true, encoding: .utf8)
    print("wrote \(files.count) files, \(events) events, \(labels.expected.count) expected findings, \(labels.mustNotFlag.count) look-alikes to \(directory)")
} catch {
    FileHandle.standardError.write("lctrace-gen: \(error)\n".data(using: .utf8)!)
    exit(74)
}
