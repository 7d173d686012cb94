import Foundation
import LCTraceCLI
import LCTraceModel

/// lctrace-gen's command line. One option table feeds both the parser and `--help`, and each
/// option's default is read from `CorpusOptions()`, so the help can drift neither from what is
/// accepted nor from what is used.
package struct GeneratorCommandLine: Sendable {
    package var options = CorpusOptions()
    /// Write the fixed SampleTraces set instead of a random corpus.
    package var sample = false
    /// The folder the traces go to.
    package var directory = ""
    /// `--truth FILE`, else nil (the answer key then goes beside the folder).
    package var truth: String?

    package init() {}

    /// Where the answer key goes: `--truth`, else `DIR.expected.json` beside the folder, never
    /// inside it (a following `lctrace ingest DIR/*` would read it as a trace).
    package var truthPath: String { truth ?? Self.defaultTruthPath(forDirectory: directory) }

    /// `logs` → `logs.expected.json`; `.` or `a/..` → the absolute folder's name beside it.
    package static func defaultTruthPath(forDirectory directory: String) -> String {
        var trimmed = directory
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        let last = (trimmed as NSString).lastPathComponent
        if last == "." || last == ".." || trimmed == "/" || trimmed.isEmpty {
            let absolute = URL(fileURLWithPath: trimmed.isEmpty ? "." : trimmed).standardizedFileURL.path
            return absolute + ".expected.json"
        }
        return trimmed + ".expected.json"
    }

    /// One option: its name, value placeholder (nil for a flag), what it does, its default
    /// (nil when it has none worth saying) and how it changes the command line.
    struct Option: Sendable {
        var name: String
        var value: String?
        var help: String
        var defaultValue: @Sendable (CorpusOptions) -> String?
        var apply: @Sendable (inout GeneratorCommandLine, String) throws -> Void
        /// A corpus option: meaningless with `--sample`.
        var shapesCorpus = true
    }

    static let table: [Option] = [
        Option(name: "sample", value: nil, help: "Write the fixed SampleTraces set instead of a random corpus.",
               defaultValue: { _ in nil }, apply: { c, _ in c.sample = true }, shapesCorpus: false),
        Option(name: "seed", value: "N", help: "Seed of the random corpus: the same seed writes the same bytes.",
               defaultValue: { "\($0.seed)" }, apply: { c, v in c.options.seed = try unsigned(v, "seed") }),
        Option(name: "sessions", value: "N", help: "Number of sessions.",
               defaultValue: { "\($0.sessions)" }, apply: { c, v in c.options.sessions = try integer(v, "sessions", 0...10_000_000) }),
        Option(name: "per-file", value: "N", help: "Sessions per device file.",
               defaultValue: { "\($0.sessionsPerFile)" }, apply: { c, v in c.options.sessionsPerFile = try integer(v, "per-file", 1...10_000_000) }),
        Option(name: "scenarios", value: "N", help: "Scenarios (navigation steps) per session.",
               defaultValue: { "\($0.scenarios)" }, apply: { c, v in c.options.scenarios = try integer(v, "scenarios", 0...100_000_000) }),
        Option(name: "bug-rate", value: "P", help: "Chance, 0 to 1, that a session gets each planted bug.",
               defaultValue: { "\($0.bugRate)" }, apply: { c, v in c.options.bugRate = try probability(v, "bug-rate") }),
        Option(name: "look-alike-rate", value: "P", help: "Chance, 0 to 1, that a session gets each legitimate look-alike.",
               defaultValue: { "\($0.lookAlikeRate)" }, apply: { c, v in c.options.lookAlikeRate = try probability(v, "look-alike-rate") }),
        Option(name: "rotate-every", value: "N", help: "Start a new rotated file (session record repeated) about every N events; 0: never.",
               defaultValue: { "\($0.rotateEvery)" }, apply: { c, v in c.options.rotateEvery = try integer(v, "rotate-every", 0...Int(Int32.max)) }),
        Option(name: "lines-per-member", value: "N", help: "Lines per gzip member; 0: one member per file.",
               defaultValue: { "\($0.linesPerMember)" }, apply: { c, v in c.options.linesPerMember = try integer(v, "lines-per-member", 0...Int(Int32.max)) }),
        Option(name: "plain", value: nil, help: "Write plain .jsonl files instead of gzip.",
               defaultValue: { $0.gzip ? "gzip" : "plain" }, apply: { c, _ in c.options.gzip = false }),
        Option(name: "app", value: "ID", help: "Every session's app (bundle id), else drawn per session.",
               defaultValue: { _ in nil }, apply: { c, v in c.options.app = try text(v, "app") }),
        Option(name: "app-version", value: "V", help: "Every session's app version, else drawn per session.",
               defaultValue: { _ in nil }, apply: { c, v in c.options.appVersion = try text(v, "app-version") }),
        Option(name: "build", value: "B", help: "Every session's build, else drawn per session; the session ids are the build's own, so two builds of one seed load into one database.",
               defaultValue: { _ in nil }, apply: { c, v in c.options.build = try text(v, "build") }),
        Option(name: "plant", value: "LIST", help: "A regression: these plants (comma-separated) once in every session, on classes of their own (New…), the rest of each session drawn as without it. Plants: \(SessionSimulator.regressionCandidates.map(\.rawValue).joined(separator: ", ")).",
               defaultValue: { _ in nil }, apply: { c, v in c.options.regressions = try plants(v) }),
        Option(name: "via-recorder", value: nil,
               help: "Write every session through LCTraceRecorder, the writer apps link: its files, names, ids and seqs (the answer key follows them); one session per file set, gzip.",
               defaultValue: { _ in nil }, apply: { c, _ in c.options.viaRecorder = true }, shapesCorpus: false),
        Option(name: "truth", value: "FILE", help: "Where to write the answer key (expected findings, look-alikes).",
               defaultValue: { _ in "DIR.expected.json, beside DIR" }, apply: { c, v in c.truth = v }, shapesCorpus: false),
        Option(name: "help", value: nil, help: "Show this help.", defaultValue: { _ in nil }, apply: { _, _ in }, shapesCorpus: false),
    ]

    /// The help text, generated from `table`.
    package static var help: String {
        let defaults = CorpusOptions()
        var text = """
        lctrace-gen: writes deterministic UIKit lifecycle trace corpora with planted bugs and an
        answer key, for tests, benchmarks and the SampleTraces folder.

        Usage: lctrace-gen [options] DIR
               lctrace-gen --sample DIR

        Options:

        """
        for o in table {
            var left = "  -\(o.name == "help" ? "h, --" : "-")\(o.name)"
            if let v = o.value { left += " \(v)" }
            // The default stays whole on one line (the tests read it there).
            var lines = wrap(o.help, width: 100 - 26)
            if let d = o.defaultValue(defaults) {
                let said = "(default: \(d))"
                if let last = lines.last, last.count + 1 + said.count <= 100 - 26 { lines[lines.count - 1] += " " + said } else { lines.append(said) }
            }
            let wrapped = lines.joined(separator: "\n" + String(repeating: " ", count: 26))
            text += left.count < 26 ? left.padding(toLength: 26, withPad: " ", startingAt: 0) + wrapped + "\n"
                                    : left + "\n" + String(repeating: " ", count: 26) + wrapped + "\n"
        }
        text += """

        The answer key never goes inside DIR, where 'lctrace ingest DIR/*' would read it as a
        trace. Exit status: 0 written, 64 usage, 74 could not write.

        """
        return text
    }

    /// `text` in lines of at most `width` characters, broken at spaces.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = [], current = ""
        for word in text.split(separator: " ") {
            if !current.isEmpty && current.count + 1 + word.count > width {
                lines.append(current)
                current = ""
            }
            current += (current.isEmpty ? "" : " ") + word
        }
        return lines + (current.isEmpty ? [] : [current])
    }

    /// What the arguments ask for.
    package enum Request: Sendable {
        case help
        case generate(GeneratorCommandLine)
    }

    package struct UsageError: Error, CustomStringConvertible, Sendable {
        package var message: String
        package var description: String { message }
    }

    /// Parses `arguments` (without the program name): `--name value`, `--name=value`, `-h`.
    package static func parse(_ arguments: [String]) throws -> Request {
        var line = GeneratorCommandLine()
        var directories: [String] = []
        var corpusOptions: [String] = []
        var seen: Set<String> = []
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            i += 1
            if arg == "-h" || arg == "--help" { return .help }
            guard arg.hasPrefix("--") else {
                if arg.hasPrefix("-") && arg != "-" { throw UsageError(message: "unknown option '\(arg)' (see lctrace-gen --help)") }
                directories.append(arg)
                continue
            }
            var name = String(arg.dropFirst(2))
            var inline: String?
            if let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            guard let option = table.first(where: { $0.name == name }) else {
                throw UsageError(message: "unknown option '--\(name)' (see lctrace-gen --help)")
            }
            guard seen.insert(name).inserted else { throw UsageError(message: "option '--\(name)' given more than once") }
            if option.shapesCorpus { corpusOptions.append("--\(name)") }
            var value = ""
            if option.value != nil {
                if let inline { value = inline } else if i < arguments.count { value = arguments[i]; i += 1 } else {
                    throw UsageError(message: "option '--\(name)' needs a value (\(option.value!))")
                }
            } else if inline != nil {
                throw UsageError(message: "option '--\(name)' takes no value")
            }
            try option.apply(&line, value)
        }
        guard directories.count == 1 else {
            throw UsageError(message: directories.isEmpty ? "missing DIR, the folder to write the traces to"
                                                          : "one DIR only, got '\(directories[1])' too")
        }
        line.directory = directories[0]
        if line.sample, !corpusOptions.isEmpty {
            throw UsageError(message: "--sample writes the fixed set: \(corpusOptions.joined(separator: ", ")) \(corpusOptions.count == 1 ? "does" : "do") not apply")
        }
        if line.options.viaRecorder {
            let apart = ["--per-file", "--plain"].filter { corpusOptions.contains($0) }
            if !apart.isEmpty {
                throw UsageError(message: "--via-recorder writes each session's own gzip files as the recorder does: \(apart.joined(separator: ", ")) \(apart.count == 1 ? "does" : "do") not apply")
            }
        }
        if isInside(line.truthPath, directory: line.directory) {
            throw UsageError(message: "--truth '\(line.truthPath)' is inside '\(line.directory)', where 'lctrace ingest \(line.directory)/*' would read it as a trace")
        }
        return .generate(line)
    }

    /// Writes the traces and the answer key; returns the line to print.
    package func run() throws -> String {
        let (labels, events, files) = sample
            ? try CorpusWriter.writeSample(to: directory, viaRecorder: options.viaRecorder)
            : try CorpusWriter.write(plans: CorpusWriter.randomPlans(options), to: directory, options: options)
        try CorpusWriter.expectedJSON(labels).write(toFile: truthPath, atomically: true, encoding: .utf8)
        return "wrote \(files.count) files, \(events) events to \(directory); answer key (\(labels.expected.count) expected findings, \(labels.mustNotFlag.count) look-alikes) to \(truthPath)"
    }

    static func isInside(_ file: String, directory: String) -> Bool {
        let f = URL(fileURLWithPath: file).standardizedFileURL.path
        let d = URL(fileURLWithPath: directory).standardizedFileURL.path
        return f.hasPrefix(d.hasSuffix("/") ? d : d + "/")
    }

    static func integer(_ text: String, _ name: String, _ range: ClosedRange<Int>) throws -> Int {
        guard let n = Int(text), range.contains(n) else {
            throw UsageError(message: "invalid --\(name) '\(text)' (expected a whole number from \(range.lowerBound) to \(range.upperBound))")
        }
        return n
    }

    static func unsigned(_ text: String, _ name: String) throws -> UInt64 {
        guard let n = UInt64(text) else {
            throw UsageError(message: "invalid --\(name) '\(text)' (expected a whole number from 0 to \(UInt64.max))")
        }
        return n
    }

    /// A session record's text value: not empty, no control characters.
    static func text(_ value: String, _ name: String) throws -> String {
        guard !value.isEmpty, !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw UsageError(message: "invalid --\(name) '\(value)' (expected text without control characters)")
        }
        return value
    }

    static func plants(_ list: String) throws -> [Plant] {
        try list.split(separator: ",", omittingEmptySubsequences: false).map { name in
            let name = name.trimmingCharacters(in: .whitespaces)
            guard let plant = Plant(rawValue: name), SessionSimulator.regressionCandidates.contains(plant) else {
                throw UsageError(message: "invalid --plant '\(name)' (expected one of: \(SessionSimulator.regressionCandidates.map(\.rawValue).joined(separator: ", ")))")
            }
            return plant
        }
    }

    static func probability(_ text: String, _ name: String) throws -> Double {
        guard let p = Double(text), p >= 0, p <= 1 else {
            throw UsageError(message: "invalid --\(name) '\(text)' (expected a probability from 0 to 1)")
        }
        return p
    }
}
