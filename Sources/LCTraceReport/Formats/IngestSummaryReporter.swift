import Foundation
import LCTraceAnalysis
import LCTraceIngest
import LCTraceFormat
import LCTraceModel
import LCTraceStore

/// What `lctrace ingest` prints when it is done, as text for people or one JSON document:
/// the files loaded, skipped, damaged or missing, the events and rejects, and the analysis.
/// Problems (each rejected line, a damaged file) go to standard error as the command's
/// warnings, not here.
package enum IngestSummaryReporter {
    /// Files skipped as already loaded that the text names without `verbose`.
    package static let skippedShown = 3

    /// `database`: what the database holds after the run, said apart from the run's own
    /// numbers (a run that loaded nothing valid still leaves findings on its files, and a
    /// database full of earlier runs is not this run's work).
    /// `databaseOption`: ` --db DB` (a shell word, no password) when the run named its
    /// database, so the commands it suggests read the same one when pasted.
    package static func text(_ s: IngestSummary, _ a: AnalysisSummary?, database: DatabaseTotals? = nil,
                             verbose: Bool = false, databaseOption: String = "") -> String {
        let loaded = loadedFiles(s)
        let skipped = s.files.filter {
            switch $0.status { case .alreadyLoaded, .sameContent: return true; default: return false }
        }.count
        var notes: [String] = []
        if skipped > 0 { notes.append("\(skipped) already loaded") }
        if !s.damagedFiles.isEmpty { notes.append("\(s.damagedFiles.count) damaged") }
        if !s.missingFiles.isEmpty { notes.append("\(s.missingFiles.count) missing or unreadable") }
        let rate = s.seconds > 0 ? Double(s.eventLines) / s.seconds : 0
        let n = NumberFormat.thousands
        var out = "Loaded \(loaded) file\(loaded == 1 ? "" : "s")\(notes.isEmpty ? "" : " (" + notes.joined(separator: ", ") + ")")"
            + " in \(NumberFormat.seconds(s.seconds)) (\(n(Int(rate))) events/s)\n"
        out += "  events    \(n(s.newEvents)) new, \(n(s.duplicates)) duplicate, \(n(s.conflicts)) conflicting\n"
        out += "  rejects   \(n(s.rejects)) line\(s.rejects == 1 ? "" : "s")"
        let rejectFiles = s.files.filter { $0.rejects > 0 }.count
        out += rejectFiles > 0 ? " in \(rejectFiles) file\(rejectFiles == 1 ? "" : "s")\n" : "\n"
        if let a {
            let when = a.whileLoading > 0
                ? "(\(n(a.whileLoading)) while loading, \(n(a.sessions - a.whileLoading)) after in \(NumberFormat.seconds(a.seconds)))"
                : "in \(NumberFormat.seconds(a.seconds))"
            out += "  sessions  \(n(a.sessions)) analyzed \(when): \(plural(a.findings, "finding"))\n"
        } else {
            out += "  sessions  not analyzed (--no-analyze): run lctrace analyze\(databaseOption)\n"
        }
        if let d = database {
            var held = "\(plural(d.sessions, "session")), \(plural(d.events, "event")), "
                + "\(plural(d.sessionFindings, "finding")) on sessions"
            if d.fileFindings > 0 { held += ", \(plural(d.fileFindings, "finding")) on files" }
            held += d.sessions > 0 ? " (lctrace report\(databaseOption))"
                : ": no session yet, nothing for lctrace report to show until a file with valid trace lines loads"
            out += "  database  \(held)\n"
        }
        // A re-run over a campaign skips every file: a count and the first few, not a line each.
        var skippedListed = 0
        let shown: (String) -> String = { TerminalText.escaped($0) }
        for file in s.files {
            switch file.status {
            case .alreadyLoaded(let path), .sameContent(let path):
                skippedListed += 1
                if verbose || skippedListed <= skippedShown {
                    out += path == file.path ? "  skipped   \(shown(file.path)): already loaded\n"
                        : "  skipped   \(shown(file.path)): same content as \(shown(path)), already loaded\n"
                }
            case .damaged(let why):
                out += "  damaged   \(shown(file.path)): \(shown(why))\n"
            case .missing:
                out += "  missing   \(shown(file.path))\n"
            case .unreadable(let why):
                out += "  unreadable \(shown(file.path)): \(shown(why))\n"
            case .refused(let why):
                out += "  refused   \(shown(file.path)): \(shown(why))\n"
            case .loaded:
                break
            }
            if file.replacedEarlierReads > 0 {
                let reads = file.replacedEarlierReads == 1 ? "an earlier read" : "\(file.replacedEarlierReads) earlier reads"
                out += "  replaced  \(shown(file.path)): \(reads) of it while it was being written (the warnings of those reads are gone)\n"
            }
        }
        if !verbose && skipped > skippedShown {
            let more = skipped - skippedShown
            out += "  skipped   \(n(more)) more file\(more == 1 ? "" : "s") already loaded (--verbose lists them)\n"
        }
        return out
    }

    package static func json(_ s: IngestSummary, _ a: AnalysisSummary?, database: DatabaseTotals? = nil) -> String {
        var json = JSONWriter()
        json.beginObject()
        json.key("files")
        json.beginArray()
        for f in s.files {
            let (status, note) = describe(f.status)
            json.beginObject()
            json.key("path"); json.string(f.path)
            json.key("status"); json.string(status)
            json.key("note"); json.string(note)
            json.key("lines"); json.int(f.lines)
            json.key("events"); json.int(f.events)
            json.key("new"); json.int(f.newEvents)
            json.key("duplicates"); json.int(f.duplicates)
            json.key("conflicts"); json.int(f.conflicts)
            json.key("rejects"); json.int(f.rejects)
            json.endObject()
        }
        json.endArray()
        json.key("events")
        json.beginObject()
        json.key("new"); json.int(s.newEvents)
        json.key("duplicate"); json.int(s.duplicates)
        json.key("conflicting"); json.int(s.conflicts)
        json.endObject()
        json.key("record_conflicts"); json.int(s.recordConflicts.reduce(0) { $0 + $1.count })
        json.key("rejects"); json.int(s.rejects)
        json.key("damaged_files"); json.int(s.damagedFiles.count)
        json.key("missing_files"); json.int(s.missingFiles.count)
        json.key("seconds"); json.rawValue(String(format: "%.3f", s.seconds))
        json.key("events_per_second"); json.int(s.seconds > 0 ? Int(Double(s.eventLines) / s.seconds) : 0)
        json.key("analysis")
        if let a {
            json.beginObject()
            json.key("sessions"); json.int(a.sessions)
            json.key("while_loading"); json.int(a.whileLoading)
            json.key("findings"); json.int(a.findings)
            json.key("seconds"); json.rawValue(String(format: "%.3f", a.seconds))
            json.endObject()
        } else {
            json.null()
        }
        json.key("database")
        if let d = database {
            json.beginObject()
            json.key("sessions"); json.int(d.sessions)
            json.key("events"); json.int(d.events)
            json.key("session_findings"); json.int(d.sessionFindings)
            json.key("file_findings"); json.int(d.fileFindings)
            json.endObject()
        } else {
            json.null()
        }
        json.endObject()
        return json.text + "\n"
    }

    private static func plural(_ count: Int, _ noun: String) -> String {
        "\(NumberFormat.thousands(count)) \(noun)\(count == 1 ? "" : "s")"
    }

    /// Files read into the database in this run (whole or up to their damage).
    package static func loadedFiles(_ s: IngestSummary) -> Int {
        s.files.filter {
            switch $0.status { case .loaded, .damaged: return true; default: return false }
        }.count
    }

    private static func describe(_ status: FileReport.Status) -> (String, String?) {
        switch status {
        case .loaded: return ("loaded", nil)
        case .damaged(let w): return ("damaged", w)
        case .alreadyLoaded(let p): return ("already-loaded", p)
        case .sameContent(let p): return ("same-content", p)
        case .missing(let w): return ("missing", w)
        case .unreadable(let w): return ("unreadable", w)
        case .refused(let w): return ("refused", w)
        }
    }
}
