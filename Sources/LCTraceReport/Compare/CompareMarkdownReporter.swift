/// `compare --format markdown`: a short summary for a pull-request comment: the counts, the
/// new identities with what sets each apart (`ComparedIdentity.detail`) and the regressions
/// (fixed and persisting are only counted). Every text that
/// came from a trace (builds, classes, messages) is a code span (`MarkdownText`): inert.
enum CompareMarkdownReporter: ComparisonReporter {
    package static let id = "markdown"
    package static let summary = "a short summary for a pull-request comment"

    package static func render(_ c: BuildComparison) -> String {
        func cell(_ s: String?) -> String { s.map { MarkdownText.code($0, inTable: true) } ?? "-" }
        func code(_ s: String?) -> String { s.map { MarkdownText.code($0) } ?? "-" }
        let verdict = c.failing ? "❌" : "✅"
        var out = "### \(verdict) lctrace: build \(code(c.head.build)) against \(code(c.base.build))\n\n"
        out += "**\(c.new.count) new**, \(c.fixed.count) fixed, \(c.persisting.count) persisting; "
        out += "**\(c.regressions.count) timing regression\(c.regressions.count == 1 ? "" : "s")** "
        out += "(\(c.base.sessions) base sessions, \(c.head.sessions) head sessions)\n"
        if !c.new.isEmpty {
            out += "\n| new | severity | class | app · detail | per 100 sessions | example |\n|---|---|---|---|---|---|\n"
            for e in c.new.prefix(15) {
                out += "| \(e.rule.id) \(cell(e.identity)) | \(e.rule.severity.rawValue) | \(cell(e.cls)) | \(cell(e.detail)) | \(CompareFormat.rate(e.headPer100)) | \(cell(e.example)) |\n"
            }
            if c.new.count > 15 { out += "\n… and \(c.new.count - 15) more (`lctrace compare --format json`)\n" }
        }
        if !c.regressions.isEmpty {
            out += "\n| slower | p50 base → head | p90 base → head | appearances | p |\n|---|---|---|---|---|\n"
            for t in c.regressions {
                out += "| \(cell(t.cls)) (\(CompareFormat.animation(t.animated))) | \(CompareFormat.ms(t.baseP50)) → \(CompareFormat.ms(t.headP50)) | \(CompareFormat.ms(t.baseP90)) → \(CompareFormat.ms(t.headP90)) | \(t.baseN) → \(t.headN) | \(CompareFormat.p(t.pValue)) |\n"
            }
        }
        if !c.fixed.isEmpty {
            out += "\nFixed: " + c.fixed.prefix(10).map { "\($0.rule.id) \(code($0.cls))" + ($0.detail.isEmpty ? "" : " (\(code($0.detail)))") }.joined(separator: ", ")
                + (c.fixed.count > 10 ? ", …" : "") + "\n"
        }
        return out
    }
}
