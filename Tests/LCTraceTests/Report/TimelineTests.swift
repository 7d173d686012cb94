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
import LCTraceGen

/// The timeline model from inline traces (phases, containment, presentations, releases,
/// what is left out), the stored and rebuilt models agreeing, the command's errors, and a
/// long session staying readable.
final class TimelineTests: TemporaryDirectoryTestCase {

    /// A navigation stack with a pushed controller whose interactive pop is cancelled, then
    /// popped for real and freed.
    func cancelledPop() -> TraceBuilder {
        var b = TraceBuilder()
        b.vc(2, "init", "0xn", #""cls":"UINavigationController""#)
        b.vc(3, "init", "0xa", #""cls":"ListVC""#)
        b.vc(4, "addChild", "0xa", #""parent":"0xn""#)
        b.vc(5, "didMoveToParent", "0xa", #""parent":"0xn""#)
        for vc in ["0xn", "0xa"] { b.vc(6, "viewWillAppear", vc, #""animated":false"#) }
        for vc in ["0xn", "0xa"] { b.vc(10, "viewDidAppear", vc, #""animated":false"#) }
        b.vc(1000, "init", "0xb", #""cls":"DetailVC""#)
        b.vc(1001, "push", "0xn", #""child":"0xb","animated":true"#)
        b.vc(1001, "addChild", "0xb", #""parent":"0xn""#)
        b.vc(1002, "viewWillDisappear", "0xa", #""animated":true"#)
        b.vc(1002, "viewWillAppear", "0xb", #""animated":true,"isMovingToParent":true"#)
        b.vc(1400, "viewDidDisappear", "0xa", #""animated":true"#)
        b.vc(1400, "viewDidAppear", "0xb", #""animated":true,"isMovingToParent":true"#)
        b.vc(1400, "didMoveToParent", "0xb", #""parent":"0xn""#)
        // The finger pulls B half out for 3 s, then lets go: cancelled.
        b.vc(3000, "pop", "0xn", #""child":"0xb","animated":true,"interactive":true"#)
        b.vc(3000, "viewWillDisappear", "0xb", #""animated":true,"isMovingFromParent":true"#)
        b.vc(3001, "viewWillAppear", "0xa", #""animated":true"#)
        b.vc(6000, "viewWillDisappear", "0xa", #""animated":true"#)
        b.vc(6001, "viewDidDisappear", "0xa", #""animated":true"#)
        b.vc(6001, "viewWillAppear", "0xb", #""animated":true"#)
        b.vc(6300, "viewDidAppear", "0xb", #""animated":true"#)
        // Popped for real.
        b.vc(9000, "pop", "0xn", #""child":"0xb","animated":true"#)
        b.vc(9000, "willMoveToParent", "0xb", #""parent":null"#)
        b.vc(9000, "viewWillDisappear", "0xb", #""animated":true,"isMovingFromParent":true"#)
        b.vc(9001, "viewWillAppear", "0xa", #""animated":true"#)
        b.vc(9400, "viewDidDisappear", "0xb", #""animated":true,"isMovingFromParent":true"#)
        b.vc(9400, "viewDidAppear", "0xa", #""animated":true"#)
        b.vc(9400, "removeFromParent", "0xb", #""parent":"0xn""#)
        b.vc(9500, "deinit", "0xb")
        b.add(20000, "sessionEnd", #""reason":"stopped""#)
        return b
    }

    func lane(_ t: Timeline, _ vc: String) -> TimelineLane? { t.lanes.first { $0.key.vc == vc } }

    func testCancelledInteractivePopDisappearsUntilTheNextAppearanceAndReleasesNothingUntilThePop() throws {
        let t = TimelineFixtures.timeline(cancelledPop())
        let b = try XCTUnwrap(lane(t, "0xb"))
        XCTAssertEqual(b.spans.map(\.phase), [.appearing, .visible, .disappearing, .appearing, .visible, .disappearing])
        // The cancelled disappearance lasts as long as the finger: until B's next viewWillAppear.
        XCTAssertEqual(b.spans[2].start, 3_000_000_000)
        XCTAssertEqual(b.spans[2].end, 6_001_000_000)
        XCTAssertEqual(b.release?.how, "pop", "released by the real pop only")
        XCTAssertEqual(b.release?.t, 9_400_000_000)
        XCTAssertEqual(b.end, 9_500_000_000)
        XCTAssertEqual(b.endHow, "deinit")
        // A's cancelled appearance: appearing, then disappearing, never visible.
        let a = try XCTUnwrap(lane(t, "0xa"))
        let cancelled = try XCTUnwrap(a.spans.first { $0.start == 3_001_000_000 })
        XCTAssertEqual(a.spans.filter { $0.cycle == cancelled.cycle }.map(\.phase), [.appearing, .disappearing])
        XCTAssertTrue(cancelled.interactive)
        XCTAssertEqual(t.arrows.map { "\($0.kind.rawValue) \($0.from?.vc ?? "-")>\($0.to?.vc ?? "-") \($0.interactive)" },
                       ["push 0xn>0xb false", "pop 0xn>0xb true", "pop 0xn>0xb false"])
        // Nothing to find (the trace records no viewIsAppearing: LC402 only).
        XCTAssertEqual(Set(t.findings.map(\.finding.rule)), ["LC402"])
        // Containment: the stack first, its children indented under it.
        XCTAssertEqual(t.lanes.map { "\($0.depth) \($0.key.vc)" }, ["0 0xn", "1 0xa", "1 0xb"])
    }

    func testAPresentedControllerSitsUnderItsPresenterAndItsLeakIsMarkedAtItsRelease() throws {
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"OrderVC""#)
        b.vc(3, "viewWillAppear", "0xa", #""animated":false"#)
        b.vc(4, "viewDidAppear", "0xa", #""animated":false"#)
        b.vc(5, "init", "0xz", #""cls":"OtherRootVC""#)
        b.vc(100, "present", "0xa", #""presented":"0xp","style":"fullScreen","animated":true"#)
        b.vc(101, "init", "0xp", #""cls":"PreviewVC""#)  // recorded after the present call
        b.vc(102, "viewWillAppear", "0xp", #""animated":true,"isBeingPresented":true"#)
        b.vc(500, "viewDidAppear", "0xp", #""animated":true,"isBeingPresented":true"#)
        b.vc(3000, "dismiss", "0xp", #""animated":true"#)
        b.vc(3000, "viewWillDisappear", "0xp", #""animated":true,"isBeingDismissed":true"#)
        b.vc(3400, "viewDidDisappear", "0xp", #""animated":true,"isBeingDismissed":true"#)
        b.add(60000, "sessionEnd", #""reason":"stopped""#)
        let t = TimelineFixtures.timeline(b)
        XCTAssertEqual(t.lanes.map { "\($0.depth) \($0.key.vc) \($0.underPresenter)" }, ["0 0xa false", "1 0xp true", "0 0xz false"])
        XCTAssertEqual(t.arrows.map { "\($0.kind.rawValue) \($0.from?.vc ?? "-")>\($0.to?.vc ?? "-")" },
                       ["present 0xa>0xp", "dismiss 0xa>0xp"], "a dismissal comes from the presenter")
        XCTAssertEqual(t.arrows.first?.style, "fullScreen")
        let leak = try XCTUnwrap(t.findings.first { $0.finding.rule == "LC301" })
        XCTAssertEqual(leak.lane, InstanceKey(vc: "0xp", since: 7))
        XCTAssertEqual(leak.t, 3_400_000_000, "at its decisive event, the release")
        let text = TextTimeline(t, width: 100, color: false).render()
        XCTAssertTrue(text.contains("  > PreviewVC 0xp#7"), text)
        XCTAssertTrue(text.contains("present      OrderVC 0xa#2 -> PreviewVC 0xp#7 (fullScreen)"), text)
        XCTAssertTrue(text.contains("release      PreviewVC 0xp#7 (dismiss)"), text)
    }

    /// A release kind the timeline has never heard of is drawn, listed and exported as it is:
    /// adding one to the model needs no code here.
    func testAReleaseKindIsTextAllTheWay() {
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"ChainVC""#)
        b.add(9000, "sessionEnd", #""reason":"stopped""#)
        let model = b.model()
        var rows = TimelineFixtures.rows(b, model)
        rows.instances[0].release = TimelineRows.ReleaseRow(seq: 3, t: 4_000_000_000, how: "chain")
        let info = TimelineFixtures.session(b, model: model)
        let t = TimelineBuilder.build(session: info, rows: rows, findings: [], window: TimeWindow(start: info.firstT!, end: info.lastT!))
        XCTAssertTrue(TextTimeline(t, width: 90, color: false).render().contains("release      ChainVC 0xa#2 (chain)"))
        XCTAssertTrue(SVGTimeline(t).render().contains("released (chain) at 4.00 s"))
        var json = ""
        let writer = ChromeTraceWriter { json += $0 }
        XCTAssertNoThrow(try writer.begin())
        let span = TimeWindow(start: info.firstT!, end: info.lastT!)
        XCTAssertNoThrow(try writer.add(session: info, span: span, sessionSpan: span,
                                        lanes: try SessionLanes(instances: rows.instances, window: span) { try rows.edges.forEach($0) },
                                        findings: [], source: TimelineFixtures.RowsInMemory(rows: rows, events: [])))
        XCTAssertNoThrow(try writer.finish())
        XCTAssertTrue(json.contains("\"name\":\"release (chain)\""), json)
    }

    func testIdleOutsideAndOverTheLimitAreCountedNotDrawn() throws {
        let b = cancelledPop()
        // 1.5–2.9 s: A is hidden throughout (idle), B visible.
        let window = TimeWindow(start: 1_500_000_000, end: 2_900_000_000)
        let t = TimelineFixtures.timeline(b, window: window)
        XCTAssertEqual(t.lanes.map(\.key.vc), ["0xn", "0xb"], "the idle child is left out, the container stays")
        XCTAssertEqual(t.omitted.idle, 1)
        var options = TimelineOptions()
        options.showIdle = true
        XCTAssertEqual(TimelineFixtures.timeline(b, window: window, options: options).lanes.map(\.key.vc), ["0xn", "0xa", "0xb"])
        // After B's deinit, B is outside.
        let late = TimelineFixtures.timeline(b, window: TimeWindow(start: 10_000_000_000, end: 11_000_000_000), options: options)
        XCTAssertEqual(late.omitted.outside, 1)
        XCTAssertEqual(late.lanes.map(\.key.vc), ["0xn", "0xa"])
        // A limit of two lanes keeps the focus and its container.
        options.maxLanes = 2
        options.focus = [InstanceKey(vc: "0xb", since: 8)]
        let limited = TimelineFixtures.timeline(b, options: options)
        XCTAssertEqual(limited.lanes.map(\.key.vc), ["0xn", "0xb"])
        XCTAssertEqual(limited.omitted.overLimit, 1)
        let text = TextTimeline(limited, width: 80, color: false).render()
        XCTAssertTrue(text.contains("left out: 1 past the lane limit (--lanes N)"), text)
    }

    func testABackwardsClockNeverDrawsAPhaseEndingBeforeItStarts() throws {
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"ClockVC""#)
        b.vc(500, "viewWillAppear", "0xa", #""animated":false"#)
        b.vc(400, "viewDidAppear", "0xa", #""animated":false"#)  // t went back 100 ms
        b.vc(300, "viewWillDisappear", "0xa", #""animated":false"#)
        b.vc(900, "viewDidDisappear", "0xa", #""animated":false"#)
        b.add(2000, "sessionEnd", #""reason":"stopped""#)
        let t = TimelineFixtures.timeline(b)
        let a = try XCTUnwrap(lane(t, "0xa"))
        XCTAssertEqual(a.spans.count, 3)
        for s in a.spans { XCTAssertLessThanOrEqual(s.start, s.end, "\(s)") }
        XCTAssertFalse(TextTimeline(t, width: 80, color: false).render().isEmpty)
    }

    func testLabelsShortenTheClassNeverTheInstance() {
        let label = TextTimeline.Label(prefix: "    > ", cls: "AVeryLongViewControllerClassName", key: "0x600003be1800#200")
        XCTAssertEqual(label.fitted(36), "    > AVeryLongV… 0x600003be1800#200")
        XCTAssertEqual(label.fitted(36).count, 36)
        XCTAssertEqual(label.fitted(80), label.full)
    }

    // MARK: Stored and rebuilt

    /// A session whose events changed since its analysis is drawn from its model rebuilt in
    /// memory; it must draw exactly what the stored model draws.
    func testStoredAndRebuiltModelsDrawTheSameTimelines() throws {
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, samples]).status, 0)
        let sessions = try DatabaseReader(db: try SQLiteDatabase(path: db, mode: .readOnly)).sessions()
        func draw() -> [String] {
            sessions.flatMap { s in
                [["timeline", "--db", db, "--session", s.sid, "--width", "120", "--lanes", "0", "--idle"],
                 ["timeline", "--db", db, "--session", s.sid, "--width", "90", "--window", "7s"],
                 ["timeline", "--db", db, "--session", s.sid, "-f", "svg"],
                 ["export", "--db", db, "--session", s.sid]].map { args -> String in
                    let r = TestSupport.run(args)
                    XCTAssertEqual(r.status, 0, "\(args) \(r.err)")
                    return r.out
                }
            }
        }
        let stored = draw()
        try SQLiteDatabase(path: db).execute("UPDATE sessions SET dirty = 1")
        let rebuilt = draw()
        // Loaded without analysis: not even the session's counts and times are stored yet.
        db = dir + "/unanalyzed.db"
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--no-analyze", "--db", db, samples]).status, 0)
        let unanalyzed = draw()
        for (name, other) in [("rebuilt", rebuilt), ("unanalyzed", unanalyzed)] {
            XCTAssertEqual(stored.count, other.count)
            for (a, b) in zip(stored, other) where a != b {
                XCTFail("stored and \(name) differ:\n\(a.prefix(600))\n---\n\(b.prefix(600))")
                break
            }
        }
    }

    // MARK: The command

    func testSessionsAreChosenByAUniqueCaseInsensitivePrefix() {
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, samples]).status, 0)
        XCTAssertEqual(TestSupport.run(["timeline", "--db", db, "--session", "DB9C5598"]).status, 0)
        let ambiguous = TestSupport.run(["timeline", "--db", db, "--session", "55"])
        XCTAssertEqual(ambiguous.status, 64)
        XCTAssertTrue(ambiguous.err.contains("session '55' is ambiguous: 2 sessions match"), ambiguous.err)
        XCTAssertTrue(ambiguous.err.contains("55b87171-1a20-12f4-3ae5-78fd14e84742"), ambiguous.err)
        XCTAssertTrue(ambiguous.err.contains("55cba8d6-b3a3-e36d-e6e0-d6dede7fa7e0"), ambiguous.err)
        XCTAssertEqual(ambiguous.out, "")
        // LIKE wildcards are not wildcards here: they match nothing (exit 66), the nearest id named.
        let wildcard = TestSupport.run(["timeline", "--db", db, "--session", "db9c_598"])
        XCTAssertEqual(wildcard.status, 66)
        XCTAssertTrue(wildcard.err.contains("(did you mean 'db9c5598-9194-8d23-78bc-927ded35455d'?)"), wildcard.err)
        XCTAssertEqual(TestSupport.run(["export", "--db", db, "--session", "%"]).status, 66)
        let none = TestSupport.run(["timeline", "--db", db, "--session", "ffff"])
        XCTAssertEqual(none.status, 66)
        XCTAssertTrue(none.err.contains("no session matches --session 'ffff'"), none.err)
        XCTAssertFalse(none.err.contains("did you mean"), "nothing is near: \(none.err)")
    }

    func testBadRequestsAreUsageErrorsNamingTheValue() {
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, samples]).status, 0)
        let cases: [([String], String)] = [
            (["timeline"], "missing --session SID"),
            (["timeline", "--session", "db9c", "--around", "99999"], "has no event with seq 99999"),
            (["timeline", "--session", "db9c", "--around", "-3"], "invalid --around '-3'"),
            (["timeline", "--session", "db9c", "--window", "soon"], "invalid --window 'soon'"),
            (["timeline", "--session", "db9c", "--window", "0s"], "invalid --window '0s'"),
            (["timeline", "--session", "db9c", "--lanes", "many"], "invalid --lanes 'many'"),
            (["timeline", "--session", "db9c", "-f", "svgg"], "did you mean 'svg'?"),
            (["export"], "name what to export"),
            (["export", "--session", "db9c", "-f", "json"], "unknown format 'json'"),
        ]
        for (args, message) in cases {
            let r = TestSupport.run(args + ["--db", db])
            XCTAssertEqual(r.status, 64, "\(args): \(r.err)")
            XCTAssertTrue(r.err.contains(message), "\(args): \(r.err)")
            XCTAssertEqual(r.out, "", "\(args)")
        }
        // What names nothing in the database is an empty selection (66), the nearest value named.
        let nothing: [([String], String)] = [
            (["timeline", "--session", "db9c", "--vc", "0xdead"], "has no controller '0xdead'"),
            (["timeline", "--session", "db9c", "--vc", "0x60000f501600#1"],
             "has no controller '0x60000f501600#1' (did you mean '0x60000f501600'?)"),
            (["export", "--build", "999"], "no session matches --build 999"),
        ]
        for (args, message) in nothing {
            let r = TestSupport.run(args + ["--db", db])
            XCTAssertEqual(r.status, 66, "\(args): \(r.err)")
            XCTAssertTrue(r.err.contains(message), "\(args): \(r.err)")
            XCTAssertEqual(r.out, "", "\(args)")
        }
    }

    func testOutputFilesAreWholeOrAbsent() throws {
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, samples]).status, 0)
        let missing = TestSupport.run(["export", "--db", db, "--session", "db9c", "-o", dir + "/no/such/dir/t.json"])
        XCTAssertEqual(missing.status, 74)
        XCTAssertTrue(missing.err.contains("cannot write '\(dir)/no/such/dir/t.json': no such file or directory"), missing.err)
        let file = dir + "/t.svg"
        let ok = TestSupport.run(["timeline", "--db", db, "--session", "db9c", "--format", "svg", "--output", file])
        XCTAssertEqual(ok.status, 0, ok.err)
        XCTAssertEqual(ok.out, "")
        XCTAssertTrue(try String(contentsOfFile: file, encoding: .utf8).hasSuffix("</svg>\n"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".tmp") }, [],
                       "no temporary file is left")
    }

    func testATerminalGetsColourAndItsWidthAPipePlainText() {
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, samples]).status, 0)
        let terminal = CapturingConsole(terminal: true)
        terminal.outputWidth = 72
        XCTAssertEqual(CLI.run(["timeline", "--db", db, "--session", "db9c"], console: terminal, environment: [:]), 0)
        XCTAssertTrue(terminal.output.contains("\u{1B}["), "colour on a terminal")
        let plain = TestSupport.run(["timeline", "--db", db, "--session", "db9c"])
        XCTAssertFalse(plain.out.contains("\u{1B}"), "no escape in a pipe")
        for line in stripped(terminal.output).split(separator: "\n") {
            XCTAssertLessThanOrEqual(line.count, 72, "fits the terminal: \(line)")
        }
        let chart = plain.out.split(separator: "\n").filter { $0.contains(" 0x") && !$0.hasPrefix(" ") }
        XCTAssertFalse(chart.isEmpty)
        for line in chart { XCTAssertLessThanOrEqual(line.count, 100, "a pipe gets 100 columns: \(line)") }
    }

    func stripped(_ text: String) -> String {
        text.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
    }

    /// A session of thousands of events and hundreds of controllers gets a window, a bounded
    /// number of lanes and a line saying what was left out and how to see it.
    func testALongSessionIsWindowedNotAWallOfText() throws {
        var options = CorpusOptions.make(seed: 15, sessions: 1, sessionsPerFile: 1, scenarios: 700)
        options.bugRate = 0.5
        try CorpusWriter.write(plans: CorpusWriter.randomPlans(options), to: dir + "/long", options: options)
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, dir + "/long"]).status, 0)
        let sid = try TimelineFixtures.scalar(db, "SELECT sid FROM sessions")
        let instances = Int(try TimelineFixtures.scalar(db, "SELECT count(*) FROM instances")) ?? 0
        XCTAssertGreaterThan(instances, 200)
        let r = TestSupport.run(["timeline", "--db", db, "--session", sid, "--width", "110"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("window ") && r.out.contains(", around "), "centred on the worst finding")
        let lanes = r.out.split(separator: "\n").filter { $0.contains("#") && $0.contains(" 0x") && !$0.hasPrefix(" ") }
        XCTAssertLessThanOrEqual(lanes.count, 41, "at most the lane limit")
        XCTAssertTrue(r.out.contains("instances outside the window"), r.out)
        XCTAssertTrue(r.out.contains("see more with --around SEQ, --window DURATION, --vc ID[#SINCE]"), r.out)
        XCTAssertLessThan(r.out.split(separator: "\n").count, 120, "not a wall of text")
        // Asking for all of it is possible, and says nothing was left out.
        let all = TestSupport.run(["timeline", "--db", db, "--session", sid, "--window", "100000s", "--lanes", "0", "--idle"])
        XCTAssertEqual(all.status, 0, all.err)
        XCTAssertFalse(all.out.contains("left out:"), String(all.out.suffix(400)))
    }
}
