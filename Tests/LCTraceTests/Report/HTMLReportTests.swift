import Foundation
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
@testable import LCTraceCLI

/// The HTML report as a document: one file that names no network address, the findings laid
/// out as the view model groups them, leak and orphan examples drawn (timeline, holders, raw
/// events) within caps that are stated, the commands it prints working when pasted, and text
/// from traces escaped. The page in a real browser is `HTMLBrowserTests`.
final class HTMLReportTests: SampleDatabaseTestCase {
    func page(_ args: [String] = [], file: StaticString = #filePath, line: UInt = #line) -> String {
        let r = TestSupport.run(["report", "--db", db, "-f", "html", "--fail-on", "never"] + args)
        XCTAssertEqual(r.status, 0, r.err, file: file, line: line)
        return r.out
    }

    /// The view the CLI renders, for counting what the page must hold.
    func view(_ limits: ExhibitLimits = ExhibitLimits(), examples: Int = 5) throws -> ReportView {
        let database = try SQLiteDatabase(path: db, mode: .readOnly)
        var request = ReportRequest()
        request.gapsBySession = true
        let data = try ReportCollector.collect(request, db: Storage(database))
        var options = ReportOptions()
        options.failOn = nil
        options.examples = examples
        options.followUp = FollowUp(database: db)
        var view = ReportView(data: data, options: options)
        view.exhibits = try ReportExhibits.gather(view, db: Storage(database), limits: limits)
        return view
    }

    func count(_ text: String, _ needle: String) -> Int { text.components(separatedBy: needle).count - 1 }

    /// Nothing in the page may load from anywhere: no element that fetches, no address in an
    /// attribute, style or script. The one use of `http://` an SVG may carry is its namespace
    /// (`xmlns="http://www.w3.org/2000/svg"`), which names and fetches nothing; it is the only
    /// one allowed (inline SVG in HTML needs none, and the page has none today).
    func assertFetchesNothing(_ html: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let addresses = try NSRegularExpression(pattern: "https?://[^\"'\\s<>)]*", options: [.caseInsensitive])
        for m in addresses.matches(in: html, range: NSRange(html.startIndex..., in: html)) {
            let found = String(html[Range(m.range, in: html)!])
            let before = html[..<Range(m.range, in: html)!.lowerBound].suffix(8)
            XCTAssertTrue(found == "http://www.w3.org/2000/svg" && before == "xmlns=\"", "a network address in the page: \(found)", file: file, line: line)
        }
        let fetching = [
            "<img", "<image", "<iframe", "<object", "<embed", "<link", "<audio", "<video", "<source", "<track", "<base",
            "srcset=", "@import", "fetch(", "import(", "XMLHttpRequest", "WebSocket", "EventSource", "sendBeacon",
            "<script src", "url(http", "url(//", "url('", "url(\"", "window.open", "location.href",
        ]
        for word in fetching {
            XCTAssertFalse(html.lowercased().contains(word.lowercased()), "\(word) in the page", file: file, line: line)
        }
        // Every href and src is an anchor in the page, every url() a reference inside it.
        for (attribute, allowed) in [("href=\"", "#"), ("src=\"", "#"), ("url(", "#")] {
            for part in html.components(separatedBy: attribute).dropFirst() {
                XCTAssertTrue(part.hasPrefix(allowed), "\(attribute)\(part.prefix(40)) points outside the page", file: file, line: line)
            }
        }
    }

    /// Each listed example's decisive event (where its timeline is centred and its raw events
    /// gather) is the last of its evidence whose time is the finding's, as the events say: the
    /// times are read a session at a time, and none may be lost on the way.
    func testEveryListedExampleGetsItsDecisiveEvent() throws {
        let view = try view(examples: 3)
        let database = try SQLiteDatabase(path: db, mode: .readOnly)
        let time = try database.prepare("SELECT t FROM events_v WHERE session_id = ?1 AND seq = ?2")
        var expected: [Int: Int64] = [:]
        for family in view.sections {
            for section in family.rules {
                for group in section.groups {
                    for i in group.examples.prefix(3) {
                        let f = view.findings[i]
                        guard let t = f.t, let s = view.session(f.session) else { continue }
                        for seq in f.evidence.reversed() {
                            time.reset()
                            time.bind(s.id, at: 1)
                            time.bind(seq, at: 2)
                            if try time.step(), time.int(0) == t { expected[i] = seq; break }
                        }
                    }
                }
            }
        }
        XCTAssertGreaterThan(expected.count, 20, "the samples' examples have decisive events")
        XCTAssertEqual(view.exhibits?.decisiveSeq, expected)
    }

    func testThePageIsOneFileThatFetchesNothingAndRunsOnlyItsOwnScript() throws {
        let html = page()
        XCTAssertTrue(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"))
        XCTAssertTrue(html.hasSuffix("</html>\n"))
        try assertFetchesNothing(html)
        XCTAssertEqual(count(html, "<script>"), 1, "one inline script")
        XCTAssertEqual(count(html, "<style>"), 1, "one inline style sheet (the timelines share it)")
        XCTAssertEqual(count(html, "<svg class=\"lctrace-timeline\""), count(html, "aria-labelledby=\"ex"), "timelines are labelled")
        // The Content-Security-Policy forbids every fetch and names the script by its hash.
        let script = try XCTUnwrap(html.components(separatedBy: "<script>").last?.components(separatedBy: "</script>").first)
        XCTAssertTrue(html.contains("content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-\(HTMLPage.base64SHA256(script))'"))
        XCTAssertEqual(HTMLPage.base64SHA256("abc"), "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=", "SHA-256 of abc, base64")
        XCTAssertTrue(html.contains("@media (prefers-color-scheme:dark)"), "a dark scheme")
        XCTAssertTrue(html.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"))
    }

    func testTheSummaryAndTheGroupsAreThoseOfTheViewModel() throws {
        let html = page()
        let v = try view()
        XCTAssertTrue(html.contains("<title>lctrace report · 9 sessions · 36 findings</title>"))
        for (name, value) in [("sessions", "9"), ("events", "3,579"), ("builds", "\(v.builds.count)"), ("devices", "\(v.devices)"),
                              ("findings", "36"), ("identities", "36")] {
            XCTAssertTrue(html.contains("<div><dt>\(name)</dt><dd>\(value)</dd></div>"), name)
        }
        XCTAssertTrue(html.contains("<span class=\"sev error\">11 errors</span> <span class=\"sev warning\">22 warnings</span> <span class=\"sev info\">3 info</span>"))
        let groups = v.sections.flatMap(\.rules).flatMap(\.groups)
        XCTAssertEqual(count(html, "<details class=\"group\""), groups.count)
        for rule in v.sections.flatMap(\.rules) {
            XCTAssertEqual(count(html, "data-rule=\"\(rule.rule.id)\""), rule.groups.count, rule.rule.id)
        }
        XCTAssertEqual(count(html, "<article class=\"example\">"), groups.reduce(0) { $0 + min($1.count, 5) })
        // The leak groups of text: class and how it left, the held child under its holder.
        XCTAssertTrue(html.contains("<summary><span class=\"cls\">UINavigationController</span> <span>left via dismiss</span>"))
        XCTAssertTrue(html.contains("<p>Held by it: LoginViewController ×1"))
        // One chart of findings per 100 sessions with a bar per severity present, one per class of gaps.
        let bars = v.builds.reduce(0) { sum, b in sum + [b.errors, b.warnings, b.infos].filter { $0 > 0 }.count }
        XCTAssertEqual(count(html, "<rect class=\"bar "), bars + 3, "and three in the legend")
        XCTAssertEqual(count(html, "<svg class=\"plot\""), 1 + min(v.gapsByBuild.count, HTMLPage.chartedClasses))
    }

    func testALeakExampleShowsItsTimelineTheControllersThatHeldItAndItsRawEvents() throws {
        let html = page()
        let start = try XCTUnwrap(html.range(of: "data-rule=\"LC301\" data-class=\"SettingsViewController\""))
        let group = String(html[start.lowerBound...]).components(separatedBy: "</details>")[0]
        XCTAssertTrue(group.contains("<svg class=\"lctrace-timeline\""), "a timeline")
        XCTAssertTrue(group.contains("14.88–24.88 s around SettingsViewController 0x60000f501600#125, seq 147</text>"), "10 s around the decisive event, the release")
        XCTAssertTrue(group.contains("aria-label=\"SettingsViewController 0x60000f501600#125, in UINavigationController 0x60000f500a00#25, visible 1 time, released (pop) at 19.88 s, alive at the end, LC301\""), "its lane")
        XCTAssertTrue(group.contains("<li><span class=\"rel\">container</span> UINavigationController 0x60000f500a00#25</li>"))
        XCTAssertTrue(group.contains("<li><span class=\"rel\">container</span> MainTabBarController 0x60000f500000#2</li>"))
        XCTAssertTrue(group.contains("<li><span class=\"rel\">popped by</span> UINavigationController 0x60000f500a00#25</li>"))
        for seq in [125, 141, 147] {
            XCTAssertTrue(group.contains("<tr class=\"evidence\"><td class=\"n\">\(seq)</td>"), "evidence \(seq) marked")
        }
        XCTAssertTrue(group.contains("<td>pop</td><td><code>0x60000f500a00</code></td><td>child 0x60000f501600</td><td>animated !interactive</td>"))
        // The timeline command it prints is the one to paste, and it draws the same leak.
        let command = "lctrace timeline --db \(Shell.word(db)) --session db9c5598-9194-8d23-78bc-927ded35455d --vc &#39;0x60000f501600#125&#39; --around 147"
        XCTAssertTrue(group.contains("<code>\(command)</code>"), group)
        let pasted = try TestSupport.process("/bin/sh", ["-c", MarkupText.unescapedForTest(command).replacingOccurrences(of: "lctrace ", with: TestSupport.binary + " ", options: .anchored)])
        XCTAssertEqual(pasted.status, 0, pasted.err)
        XCTAssertTrue(pasted.out.contains("around SettingsViewController 0x60000f501600#125, seq 147"), pasted.out)
        XCTAssertTrue(pasted.out.contains("LC301 error  0x60000f501600#125"), pasted.out)
    }

    func testExamplesAreCappedAndCountedNeverSilentlyDropped() throws {
        var limits = ExhibitLimits()
        limits.perGroup = 1
        limits.total = 3
        limits.events = 4
        let v = try view(limits, examples: 1)
        let x = try XCTUnwrap(v.exhibits)
        let drawable = v.sections.filter { ReportExhibits.families.contains($0.family) }.flatMap(\.rules).flatMap(\.groups)
            .filter { !$0.examples.isEmpty && v.findings[$0.examples[0]].session != nil }.count
        XCTAssertEqual(x.drawn.count, 3)
        XCTAssertEqual(x.leftOut, drawable - 3, "every example past the limit is counted")
        for (i, e) in x.drawn {
            XCTAssertLessThanOrEqual(e.events.count, 4 + v.findings[i].evidence.count, "events capped, the evidence always kept")
            XCTAssertTrue(v.findings[i].evidence.allSatisfy { seq in e.events.contains { $0.seq == seq } }, "evidence listed")
            XCTAssertGreaterThanOrEqual(e.eventsTotal, e.events.count)
        }
        let html = HTMLReporter.render(v)
        XCTAssertEqual(count(html, "<svg class=\"lctrace-timeline\""), 3)
        XCTAssertTrue(html.contains("\(drawable - 3) more examples past the page's limit of 3 carry the <code>lctrace timeline</code> command that draws them"), "the page says how many")
        XCTAssertEqual(count(html, "Not drawn here (at most 1 example per group and 3 on the page)"), drawable - 3)
        // Every listed example with a session carries its timeline command; groups name the rest.
        let listed = v.sections.flatMap(\.rules).flatMap(\.groups).reduce(0) { $0 + min($1.count, 1) }
        let withSession = v.sections.flatMap(\.rules).flatMap(\.groups).filter { v.findings[$0.examples[0]].session != nil }.count
        XCTAssertEqual(count(html, "<article class=\"example\">"), listed)
        XCTAssertEqual(count(html, "<p class=\"cmd\"><code>lctrace timeline"), withSession)
        XCTAssertTrue(html.contains("Showing 1 of 5 examples"), "LC501's group of five says it shows one")
        XCTAssertTrue(html.contains("events of the instance, nearest the decisive one"), "the raw events say they are capped")
        XCTAssertTrue(html.contains("more events of the instance:</p><p class=\"cmd\"><code>lctrace query"), "and how to see them")
    }

    func testEveryCommandThePageCarriesKeepsTheDatabaseAndTheFilters() throws {
        let html = page(["--leaks", "--grace", "4s", "--build", "812"])
        // Commands to paste (those with options; the page also names `lctrace timeline` in prose).
        let commands = html.components(separatedBy: "<code>lctrace ").dropFirst().map { "lctrace " + $0.components(separatedBy: "</code>")[0] }
            .filter { $0.contains(" --") }
        XCTAssertFalse(commands.isEmpty)
        for c in commands {
            XCTAssertTrue(c.contains("--db \(Shell.word(db))"), c)
            if c.hasPrefix("lctrace timeline") { XCTAssertTrue(c.hasSuffix(" --leaks --grace 4s"), c) }
            if c.hasPrefix("lctrace query") && c.contains("findings_v WHERE identity") { XCTAssertTrue(c.contains("build = &#39;812&#39;"), c) }
        }
        XCTAssertTrue(html.contains("build <code>812</code>"), "the header names the filter")
        XCTAssertTrue(html.contains("Findings recomputed for this report"), "tuning other than the stored findings' is said")
    }

    func testTextFromATraceIsEscapedAndControlsAreShownNotPassedOn() throws {
        let dir = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let evil = #"<img src=x onerror=alert(1)>\u001b[31mRed\u009b2J\u202eevil&\"'"#
        var b = TraceBuilder(build: "<b>7</b>")
        b.vc(2, "init", "0xn", #""cls":"UINavigationController""#)
        b.vc(3, "init", "0xa", "\"cls\":\"\(evil)\"")
        b.vc(4, "push", "0xn", #""child":"0xa","animated":true"#)
        b.vc(5, "viewWillAppear", "0xa", #""animated":true,"isMovingToParent":true"#)
        b.vc(6, "viewDidAppear", "0xa", #""animated":true,"isMovingToParent":true"#)
        b.vc(1000, "pop", "0xn", #""child":"0xa","animated":true"#)
        b.vc(1001, "viewWillDisappear", "0xa", #""animated":true,"isMovingFromParent":true"#)
        b.vc(1002, "viewDidDisappear", "0xa", #""animated":true,"isMovingFromParent":true"#)
        b.add(30000, "sessionEnd", #""reason":"stopped""#)
        TestSupport.writeLines(b.lines, to: dir + "/t.jsonl")
        let database = dir + "/t.db"
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", database, dir + "/t.jsonl"]).status, 0)
        let r = TestSupport.run(["report", "--db", database, "-f", "html", "--fail-on", "never"])
        XCTAssertEqual(r.status, 0, r.err)
        let html = r.out
        XCTAssertTrue(html.contains("LC301"), "the leak is reported")
        XCTAssertTrue(html.contains("&lt;img src=x onerror=alert(1)&gt;␛[31mRed[U+009B]2J[U+202E]evil&amp;&quot;&#39;"), "escaped and shown")
        XCTAssertTrue(html.contains("&lt;b&gt;7&lt;/b&gt;"), "a build name too")
        XCTAssertFalse(html.contains("<img"), "no element from the trace")
        XCTAssertFalse(html.contains("<b>7"), "no element from the trace")
        for control in ["\u{1B}", "\u{9B}", "\u{202E}"] { XCTAssertFalse(html.contains(control), "a raw control character") }
        try assertFetchesNothing(html)
    }

    /// Sessions changed since their analysis are rebuilt in memory (nothing written: the
    /// database may be read-only), and draw the same page as their stored model.
    func testSessionsChangedSinceTheirAnalysisDrawTheSamePage() throws {
        let dir = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let copy = dir + "/dirty.db"
        try SQLiteDatabase(path: db, mode: .readOnly).execute("VACUUM INTO '\(copy)'")
        try SQLiteDatabase(path: copy, mode: .readWrite).execute("UPDATE sessions SET dirty = 1")
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: copy)
        let r = TestSupport.run(["report", "--db", copy, "-f", "html", "--fail-on", "never"])
        XCTAssertEqual(r.status, 0, r.err)
        let stored = page().replacingOccurrences(of: Shell.word(db), with: "DB").replacingOccurrences(of: MarkupText.escape(db), with: "DB")
        let rebuilt = r.out.replacingOccurrences(of: Shell.word(copy), with: "DB").replacingOccurrences(of: MarkupText.escape(copy), with: "DB")
            .replacingOccurrences(of: "<p class=\"muted\">Findings recomputed for this report: tuning other than the stored findings', or sessions changed since their analysis.</p>\n", with: "")
        XCTAssertEqual(count(rebuilt, "<svg class=\"lctrace-timeline\""), count(stored, "<svg class=\"lctrace-timeline\""))
        XCTAssertEqual(rebuilt, stored)
    }

    func testMarkupTextEscapesMarkupAndShowsEveryControl() {
        XCTAssertEqual(MarkupText.escape("plain ViewController"), "plain ViewController")
        XCTAssertEqual(MarkupText.escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;")
        XCTAssertEqual(MarkupText.escape("a\tb\nc"), "a\tb\nc")
        XCTAssertEqual(MarkupText.escape("\u{0}\u{7}\u{1B}\u{1F}\u{7F}"), "␀␇␛␟␡")
        XCTAssertEqual(MarkupText.escape("\u{80}\u{9F}\u{200E}\u{202A}\u{2066}\u{2069}\u{61C}"), "[U+0080][U+009F][U+200E][U+202A][U+2066][U+2069][U+061C]")
        XCTAssertEqual(MarkupText.escape("é → 日本 🚀"), "é → 日本 🚀", "other text is kept as it is")
    }

    func testTheGapsPerBuildAreThoseOfTheDatabase() throws {
        let v = try view()
        let database = try SQLiteDatabase(path: db, mode: .readOnly)
        for c in v.gapsByBuild.prefix(4) {
            XCTAssertEqual(c.builds.reduce(0) { $0 + $1.stats.count }, c.all.count, "every appearance of \(c.cls) in one build")
            for b in c.builds {
                let name = v.builds[b.build].name
                let q = try database.prepare("""
                    SELECT a.did_t - a.is_t FROM appearances_v a JOIN sessions s ON s.sid = a.sid
                    WHERE a.class IS ? AND s.app_version || ' (' || s.build || ')' = ? AND a.outcome = 'completed'
                      AND a.is_t IS NOT NULL AND a.did_t IS NOT NULL AND a.interactive = 0 AND a.backgrounded = 0
                    """)
                try q.bind([c.cls == "?" ? .null : .text(c.cls), .text(name)])
                var values: [Int64] = []
                while try q.step() { values.append(q.int(0)) }
                values.sort()
                XCTAssertEqual(b.stats.count, values.count, "\(c.cls) in \(name)")
                XCTAssertEqual(b.stats.p50, Percentile.of(values, 0.5), "\(c.cls) in \(name)")
                XCTAssertEqual(b.stats.p90, Percentile.of(values, 0.9), "\(c.cls) in \(name)")
                XCTAssertEqual(b.distribution.reduce(0, +), values.count)
                XCTAssertEqual(b.distribution, GapDistribution.bins(values))
            }
        }
        // The same gaps whether read with their sessions or not, and per build the sessions and findings.
        let plain = try DatabaseReader(db: database).gaps(SessionFilter())
        var request = ReportRequest()
        request.gapsBySession = true
        XCTAssertEqual(try ReportCollector.collect(request, db: Storage(database)).gapSeries.mapValues { $0.sorted() }, plain.mapValues { $0.sorted() })
        for b in v.builds {
            let sessions = try TimelineFixtures.scalar(db, "SELECT count(*) FROM sessions WHERE app_version || ' (' || build || ')' = '\(b.name)'")
            let errors = try TimelineFixtures.scalar(db, "SELECT count(*) FROM findings_v f JOIN sessions s ON s.id = f.session_id WHERE s.app_version || ' (' || s.build || ')' = '\(b.name)' AND f.severity = 'error'")
            XCTAssertEqual(String(b.sessions), sessions, b.name)
            XCTAssertEqual(String(b.errors), errors, b.name)
        }
        XCTAssertEqual(GapDistribution.bins([0, 999_999, 1_000_000, 9_999_999_999, 10_000_000_000, 50_000_000_000]),
                       [2, 1] + Array(repeating: 0, count: 14) + [1, 2])
    }

    func testTheBusiestBuildsAreChartedWhenThereAreTooMany() {
        var builds: [BuildSummary] = []
        for i in 0..<42 { var b = BuildSummary(name: "1.0 (\(i))", build: "\(i)"); b.sessions = i % 7; builds.append(b) }
        let chosen = BuildSummary.busiest(builds, limit: 5)
        XCTAssertEqual(chosen, chosen.sorted(), "in build order")
        XCTAssertEqual(chosen.map { builds[$0].sessions }, [6, 6, 6, 6, 6])
        XCTAssertEqual(chosen, [13, 20, 27, 34, 41], "the newest of six equals")
        XCTAssertEqual(BuildSummary.busiest(Array(builds.prefix(3)), limit: 5), [0, 1, 2])
    }
}

extension MarkupText {
    /// The text a reader copies from the page (the entities the page writes, undone).
    static func unescapedForTest(_ s: String) -> String {
        s.replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&quot;", with: "\"")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}
