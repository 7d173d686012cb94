import XCTest
@testable import LCTraceFormat
@testable import LCTraceModel
@testable import LCTraceRules
@testable import LCTraceIngest
@testable import LCTraceStore
@testable import LCTraceSQLite
@testable import LCTracePostgreSQL
@testable import LCTraceAnalysis
@testable import LCTraceReport
@testable import LCTrace
import LCTraceGen

/// On a real terminal (a pty made by util-linux `script`) the ingest draws its progress line,
/// of the whole run; piped it draws nothing; on TERM=dumb it draws without escape sequences.
final class TerminalTests: TemporaryDirectoryTestCase {

    /// Runs `command` (a shell line) on a pseudo-terminal; returns all it wrote there.
    func onATerminal(_ command: String) throws -> String {
        let script = "/usr/bin/script"
        guard FileManager.default.isExecutableFile(atPath: script) else { throw XCTSkip("no util-linux script: no pty to try") }
        #if !os(Linux)
        throw XCTSkip("script -c is util-linux's")
        #endif
        let r = try TestSupport.process(script, ["-q", "-e", "-c", command, "/dev/null"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.out + r.err)
        return r.out
    }

    func corpus() throws -> String {
        let corpus = dir + "/corpus"
        let o = CorpusOptions.make(seed: 5, sessions: 12, sessionsPerFile: 1, scenarios: 80)
        try CorpusWriter.write(plans: CorpusWriter.randomPlans(o), to: corpus, options: o)
        return corpus
    }

    func testProgressIsDrawnOnATerminalOnly() throws {
        let corpus = try corpus()
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus).filter { $0.hasSuffix(".gz") }.count
        let terminal = try onATerminal("\(TestSupport.binary) ingest --db \(dir)/tty.db \(corpus)")
        XCTAssertTrue(terminal.contains("\r\u{1B}[2Kingest "), "no progress line drawn: \(terminal.debugDescription)")
        XCTAssertTrue(terminal.contains(" files · "), terminal.debugDescription)
        XCTAssertTrue(terminal.contains("ingest 1/\(files) files · "), "the run's files done of all: \(terminal.debugDescription)")
        XCTAssertTrue(terminal.contains(" MB · ") && terminal.contains(" events/s"), terminal.debugDescription)
        XCTAssertTrue(terminal.contains("Loaded \(files) files"), terminal.debugDescription)
        // Cleared before the summary: the summary line starts a line of its own.
        XCTAssertTrue(terminal.contains("\r\u{1B}[2KLoaded") || terminal.contains("\r\u{1B}[2K\r\u{1B}[2KLoaded") || terminal.contains("\u{1B}[2KLoaded"),
                      terminal.debugDescription)

        let piped = try TestSupport.process(TestSupport.binary, ["ingest", "--db", dir + "/pipe.db", corpus], timeout: 120)
        XCTAssertEqual(piped.status, 0, piped.err)
        XCTAssertFalse(piped.err.contains("ingest ") || piped.err.contains("\r"), piped.err.debugDescription)
        XCTAssertFalse((piped.out + piped.err).utf8.contains(0x1B))

        let dumb = try onATerminal("TERM=dumb \(TestSupport.binary) ingest --db \(dir)/dumb.db \(corpus)")
        XCTAssertTrue(dumb.contains("\ringest "), dumb.debugDescription)
        XCTAssertFalse(dumb.utf8.contains(0x1B), "an escape on TERM=dumb: \(dumb.debugDescription)")
        // The report colours the terminal, not a dumb one or under NO_COLOR.
        // The test runner may set NO_COLOR (it does here): unset, as in a user's shell.
        let coloured = try onATerminal("env -u NO_COLOR \(TestSupport.binary) report --db \(dir)/tty.db --fail-on never")
        XCTAssertTrue(coloured.utf8.contains(0x1B), coloured)
        XCTAssertFalse(try onATerminal("NO_COLOR=1 \(TestSupport.binary) report --db \(dir)/tty.db --fail-on never").utf8.contains(0x1B))
        XCTAssertFalse(try onATerminal("env -u NO_COLOR TERM=dumb \(TestSupport.binary) report --db \(dir)/tty.db --fail-on never").utf8.contains(0x1B))
    }
}
