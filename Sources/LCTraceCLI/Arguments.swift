import LCTrace
import LCTraceModel
import LCTraceStore

/// One option of a command. The parser and the help text both read this table, so the
/// help cannot drift from what is accepted.
struct OptionSpec: Sendable {
    package var name: String            // long name without dashes: "db"
    package var short: Character?       // "-f"
    package var value: String?          // value placeholder ("PATH"); nil for a flag
    package var help: String
    package var repeatable = false
    /// The values a shell completion offers (formats, levels); empty: see `completion`.
    var choices: [String] = []

    package init(_ name: String, short: Character? = nil, value: String? = nil, help: String, repeatable: Bool = false,
                choices: [String] = []) {
        self.name = name; self.short = short; self.value = value; self.help = help; self.repeatable = repeatable
        self.choices = choices
    }
}

/// A command's name, summary and accepted arguments.
struct CommandSpec: Sendable {
    package var name: String
    package var summary: String
    var positional: String?     // "PATH..." or "SQL"
    var positionalHelp: String?
    var minPositionals = 0
    var maxPositionals: Int? = 0
    package var options: [OptionSpec]
    var discussion: String?
    /// What a shell completion offers for the arguments; nil: derived from `positional`.
    var positionalCompletion: ValueCompletion?
    /// The argument is free text that may start with `-` (query's SQL: a leading `-- comment`
    /// line): whatever is not one of the options is the argument. A lone option-shaped word
    /// (`--fromat`) is still refused as an unknown option, with a hint: it cannot be a statement.
    var freeTextPositional = false

    package var usage: String {
        var parts = ["lctrace", name]
        if !options.isEmpty { parts.append("[options]") }
        if let positional { parts.append(positional) }
        return parts.joined(separator: " ")
    }

    /// Help text generated from the option table.
    package var help: String {
        var text = "\(summary)\n\nUsage: \(usage)\n"
        if let positional, let positionalHelp {
            text += "\nArguments:\n  \(positional.padding(toLength: 24, withPad: " ", startingAt: 0)) \(positionalHelp)\n"
        }
        let all = options + [OptionSpec("help", short: "h", help: "Show this help.")]
        text += "\nOptions:\n"
        for o in all {
            var left = o.short.map { "-\($0), " } ?? "    "
            left += "--\(o.name)"
            if let v = o.value { left += " \(v)" }
            let pad = left.count < 26 ? left.padding(toLength: 26, withPad: " ", startingAt: 0) : left + "\n" + String(repeating: " ", count: 28)
            text += "  \(pad)\(o.help)\n"
        }
        if let discussion { text += "\n\(discussion)\n" }
        return text
    }
}

/// A usage error: exit status 64, with a hint where one helps.
package struct UsageError: Error, CustomStringConvertible {
    package var message: String
    package var hint: String?
    package init(_ message: String, hint: String? = nil) {
        self.message = message; self.hint = hint
    }
    package var description: String { message }
}

/// Parsed arguments of one command.
struct ParsedArguments {
    package var values: [String: [String]] = [:]
    package var flags: Set<String> = []
    var positionals: [String] = []
    var wantsHelp = false
    /// The options the command declares (set by the parser): reading any other name is a
    /// typo in lctrace, caught in debug builds (the tests) instead of reading as "not given".
    var declared: Set<String>?

    package func value(_ name: String) -> String? { checked(name); return values[name]?.last }
    package func all(_ name: String) -> [String] { checked(name); return values[name] ?? [] }
    package func has(_ name: String) -> Bool { checked(name); return flags.contains(name) || values[name] != nil }

    @inline(__always) private func checked(_ name: String) {
        assert(declared?.contains(name) ?? true, "lctrace reads option --\(name), which the command does not declare")
    }
}

enum ArgumentParser {
    /// Parses `arguments` (after the command name) against `spec`. Supports `--name value`,
    /// `--name=value`, `-x value`, `--` to end options; a lone `-` is a positional (stdin).
    package static func parse(_ arguments: [String], spec: CommandSpec) throws -> ParsedArguments {
        var result = ParsedArguments()
        result.declared = Set(spec.options.map(\.name))
        var i = 0
        var onlyPositionals = false
        while i < arguments.count {
            let arg = arguments[i]
            i += 1
            if onlyPositionals || arg == "-" || !arg.hasPrefix("-") {
                result.positionals.append(arg)
                continue
            }
            if arg == "--" { onlyPositionals = true; continue }
            if arg == "--help" || arg == "-h" { result.wantsHelp = true; continue }
            var name: String
            var inlineValue: String?
            let option: OptionSpec?
            if arg.hasPrefix("--") {
                name = String(arg.dropFirst(2))
                if let eq = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
                option = spec.options.first { $0.name == name }
            } else {
                let letters = Array(arg.dropFirst())
                name = String(letters)
                option = letters.count == 1 ? spec.options.first { $0.short == letters[0] } : nil
            }
            if option == nil, spec.freeTextPositional, !looksLikeOption(arg) {
                result.positionals.append(arg)
                continue
            }
            guard let option else {
                let display = arg.hasPrefix("--") ? "--\(name)" : arg
                let candidates = spec.options.map { "--\($0.name)" } + ["--help"]
                let suggestion = closest(display, in: candidates)
                throw UsageError("unknown option '\(display)' for 'lctrace \(spec.name)'",
                                 hint: suggestion.map { "did you mean '\($0)'?" } ?? "see 'lctrace help \(spec.name)'")
            }
            if option.value == nil {
                if inlineValue != nil {
                    throw UsageError("option '--\(option.name)' takes no value")
                }
                result.flags.insert(option.name)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if i < arguments.count {
                value = arguments[i]
                i += 1
            } else {
                throw UsageError("option '--\(option.name)' needs a value (\(option.value!))")
            }
            // An empty path is no path: SQLite would open a temporary database for `--db ""`.
            if value.isEmpty, let kind = option.value, ["PATH", "FILE", "DIR"].contains(kind) {
                throw UsageError("option '--\(option.name)' needs a \(kind), got an empty value")
            }
            if !option.repeatable, result.values[option.name] != nil {
                throw UsageError("option '--\(option.name)' given more than once")
            }
            result.values[option.name, default: []].append(value)
        }
        if !result.wantsHelp {
            if result.positionals.count < spec.minPositionals {
                throw UsageError("missing \(spec.positional ?? "argument") for 'lctrace \(spec.name)'",
                                 hint: "usage: \(spec.usage)")
            }
            if let max = spec.maxPositionals, result.positionals.count > max {
                let extra = result.positionals[max]
                // `lctrace report sample.db`: the database named where a file would go.
                let lower = extra.lowercased()
                let meantForServer = ConnectionText.notAPath(extra) != nil
                let database = meantForServer || [".db", ".sqlite", ".sqlite3"].contains(where: lower.hasSuffix)
                    || lower.hasPrefix("postgres:") || lower.hasPrefix("postgresql:")
                let hint = database && spec.options.contains(where: { $0.name == "db" }) && result.values["db"] == nil
                    ? "a database goes after --db: lctrace \(spec.name) --db \(Shell.word(Storage.shown(extra)))"
                    : "usage: \(spec.usage)"
                let given = meantForServer ? "(a database URL or connection string, not shown)" : "'\(Storage.shown(extra))'"
                throw UsageError("unexpected argument \(given) for 'lctrace \(spec.name)'", hint: hint)
            }
        }
        return result
    }

    /// True for one word shaped like an option (`--name`, `--name=value`, `-x`): no SQL
    /// statement is one (`--name` alone is a comment, `-x` an expression).
    static func looksLikeOption(_ arg: String) -> Bool {
        let name = arg.hasPrefix("--") ? arg.dropFirst(2) : arg.dropFirst()
        let word = name.prefix { $0 != "=" }
        guard let first = word.first, first.isASCII, first.isLetter else { return false }
        return word.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
            && !name.dropFirst(word.count).contains(where: \.isNewline)
    }

    /// The candidate nearest to `word` by edit distance, when near enough to be a typo.
    static func closest(_ word: String, in candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance(word, $0)) }.sorted { $0.1 < $1.1 }
        guard let best = scored.first else { return nil }
        let limit = max(2, word.count / 3)
        if best.1 <= limit { return best.0 }
        // A prefix of an option ("--form" for "--format") is a typo too.
        if let prefixed = candidates.first(where: { $0.hasPrefix(word) && word.count >= 4 }) { return prefixed }
        return nil
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
