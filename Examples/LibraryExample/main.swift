// The example of docs/library.md, built with the package and run by its tests
// (LibraryExampleTests): usage `lctrace-library-example DATABASE TRACES...`.
import Foundation
import LCTrace

let arguments = CommandLine.arguments.dropFirst()
guard let location = arguments.first, arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: lctrace-library-example DATABASE TRACES...\n".utf8))
    exit(64)
}

do {
    // Open (or create) a database: a file path, or a postgresql:// URL of a team database.
    let db = try TraceDatabase(location: location)
    defer { db.close() }

    // Load trace files and directories; the findings of what changed are built as they load.
    let loaded = try db.ingest(Array(arguments.dropFirst()))
    print("loaded \(loaded.filesLoaded) files, \(loaded.newEvents) new events, \(loaded.rejectedLines) rejected lines")

    // Every finding, with the instance it is about and the events that prove it.
    for finding in try db.findings() where finding.severity == .error {
        print("\(finding.rule) \(finding.cls ?? "-"): \(finding.message) (seqs \(finding.evidence))")
    }

    // A report, rendered as `lctrace report` would, and the gate's verdict.
    let report = try db.report(.sarif, failOn: .error)
    try report.text.write(toFile: location + ".sarif", atomically: true, encoding: .utf8)
    print(report.failing ? "gate: fails" : "gate: passes")
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
