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

/// The HTML report in a real browser: headless Chromium (Debian's `chromium`, which `.ci/run`
/// installs) driven over the DevTools protocol by `.ci/browser-check.py`. The page must run
/// without a console error, make no request, hold the findings, charts and timelines of the
/// view model once its script ran, filter as asked, fit a phone's width and follow the dark
/// scheme; a screenshot is saved. Skipped with a message where Chromium is absent.
final class HTMLBrowserTests: SampleDatabaseTestCase {
    var python: String? { ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) } }

    /// Runs the check on `page`; its facts as JSON.
    func check(_ page: String, _ extra: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        guard let chromium = TestSupport.chromium else { throw XCTSkip("chromium is not installed (apt-get install chromium; .ci/run installs it): the HTML report is not checked in a browser") }
        guard let python else { throw XCTSkip("python3 is not installed: the HTML report is not checked in a browser") }
        let script = TestSupport.root.appendingPathComponent(".ci/browser-check.py").path
        let r = try TestSupport.process(python, [script, page, "--chromium", chromium] + extra)
        let facts = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any], "\(r.out)\(r.err)", file: file, line: line)
        XCTAssertEqual(r.status, 0, "browser check failed: \(facts["error"] ?? r.err)", file: file, line: line)
        return facts
    }

    func writePage(_ args: [String], name: String) throws -> String {
        let dir = (db as NSString).deletingLastPathComponent
        let path = dir + "/" + name
        let r = TestSupport.run(["report", "--db", db, "-f", "html", "--fail-on", "never", "-o", path] + args)
        XCTAssertEqual(r.status, 0, r.err)
        return path
    }

    func testTheReportRunsCleanlyInChromiumAndHoldsWhatTheViewModelHas() throws {
        let page = try writePage([], name: "report.html")
        let shot = (page as NSString).deletingLastPathComponent + "/report.png"
        let facts = try check(page, ["--screenshot", shot, "--search", "SettingsView"])
        XCTAssertEqual(facts["errors"] as? [String], [], "no console error, exception or blocked load")
        XCTAssertEqual(facts["requests"] as? [String], [], "no request besides the page itself")

        // What the DOM must hold: the view model's groups, examples, timelines and charts.
        let database = try SQLiteDatabase(path: db, mode: .readOnly)
        var request = ReportRequest()
        request.gapsBySession = true
        var view = ReportView(data: try ReportCollector.collect(request, db: Storage(database)), options: ReportOptions())
        view.exhibits = try ReportExhibits.gather(view, db: Storage(database))
        let groups = view.sections.flatMap(\.rules).flatMap(\.groups)
        let dom = try XCTUnwrap(facts["dom"] as? [String: Any])
        XCTAssertEqual(dom["title"] as? String, "lctrace report · 9 sessions · 36 findings")
        XCTAssertEqual(dom["groups"] as? Int, groups.count)
        XCTAssertEqual(dom["rules"] as? [String], view.sections.flatMap(\.rules).map(\.rule.id))
        XCTAssertEqual(dom["examples"] as? Int, groups.reduce(0) { $0 + min($1.count, 5) })
        XCTAssertEqual(dom["timelines"] as? Int, view.exhibits?.drawn.count)
        XCTAssertGreaterThan(dom["timelines"] as? Int ?? 0, 0)
        XCTAssertGreaterThan(dom["findingMarks"] as? Int ?? 0, 0, "findings marked on the timelines")
        XCTAssertGreaterThan(dom["holders"] as? Int ?? 0, 0, "controllers that held them")
        XCTAssertGreaterThan(dom["evidenceRows"] as? Int ?? 0, 0, "raw events with their evidence")
        XCTAssertEqual(dom["gapPlots"] as? Int, min(view.gapsByBuild.count, HTMLPage.chartedClasses))
        XCTAssertEqual(dom["buildPlots"] as? Int, 1)
        XCTAssertEqual(dom["timelinesLabelled"] as? Bool, true)
        XCTAssertEqual(dom["plotsLabelled"] as? Bool, true)
        XCTAssertEqual(dom["images"] as? Int, 0)
        // Laid out for a reader: findings first, every axis label and legend whole, every
        // build column of every chart named (the sample has several builds).
        XCTAssertGreaterThan(view.builds.count, 1)
        XCTAssertEqual(dom["findingsBeforeCharts"] as? Bool, true, "findings before the charts")
        XCTAssertEqual(dom["textOverflows"] as? [String], [], "text cut at the edge of its SVG")
        XCTAssertEqual(dom["unlabelledColumns"] as? Int, 0, "a build column without its label")
        XCTAssertTrue((dom["messages"] as? [String] ?? []).contains("SettingsViewController not deallocated 62.0 s of foreground time (81.6 s in all) after its pop (grace 5 s)"))

        // The filters, shown by the script, labelled, reachable from the keyboard, and filtering.
        XCTAssertEqual(dom["filtersShown"] as? Bool, true)
        XCTAssertEqual(dom["filtersLabelled"] as? Bool, true)
        XCTAssertEqual(dom["filtersFocusable"] as? Bool, true)
        XCTAssertEqual(dom["shownText"] as? String, "all \(groups.count) groups shown")
        let filters = try XCTUnwrap(facts["filters"] as? [String: Any])
        XCTAssertEqual(filters["searchValue"] as? String, "SettingsView", "typed from the keyboard")
        XCTAssertEqual(filters["afterSearch"] as? Int, 1, "one group is about SettingsViewController")
        XCTAssertEqual(filters["shownText"] as? String, "1 of \(groups.count) groups shown")
        XCTAssertEqual(filters["afterReset"] as? Int, groups.count)
        let byRule = try XCTUnwrap(filters["byRule"] as? [String: Int])
        for rule in view.sections.flatMap(\.rules) { XCTAssertEqual(byRule[rule.rule.id], rule.groups.count, rule.rule.id) }
        let bySeverity = try XCTUnwrap(filters["bySeverity"] as? [String: Int])
        for s in Severity.allCases {
            XCTAssertEqual(bySeverity[s.rawValue], view.sections.flatMap(\.rules).filter { $0.rule.severity == s }.reduce(0) { $0 + $1.groups.count }, s.rawValue)
        }
        let byBuild = try XCTUnwrap(filters["byBuild"] as? [String: Int])
        for (b, build) in view.builds.enumerated() {
            XCTAssertEqual(byBuild[build.name], groups.filter { $0.builds.contains(b) }.count, build.name)
        }
        let byClass = try XCTUnwrap(filters["byClass"] as? [String: Int])
        XCTAssertEqual(Set(byClass.keys), Set(groups.map(\.label)))
        for (label, shown) in byClass { XCTAssertEqual(shown, groups.filter { $0.label == label }.count, label) }
        XCTAssertEqual(filters["hiddenRulesWhenFiltered"] as? Int, view.sections.flatMap(\.rules).count - 1, "other rules hide")

        // Readable at 1280 px and at a phone's width (nothing wider than the screen), both schemes.
        let light = try XCTUnwrap(facts["light"] as? [String: Any]), dark = try XCTUnwrap(facts["dark"] as? [String: Any])
        let phone = try XCTUnwrap(facts["phone"] as? [String: Any])
        XCTAssertEqual(light["scrollWidth"] as? Int, 1280)
        XCTAssertEqual(phone["width"] as? Int, 390)
        XCTAssertLessThanOrEqual(phone["scrollWidth"] as? Int ?? .max, 390, "the page fits a phone; wide plots scroll in their own box")
        XCTAssertEqual(light["background"] as? String, "rgb(255, 255, 255)")
        XCTAssertEqual(dark["background"] as? String, "rgb(13, 17, 23)")
        XCTAssertNotEqual(light["color"] as? String, dark["color"] as? String)
        XCTAssertEqual(dark["timelinePaper"] as? String, "rgb(13, 17, 23)", "the timelines follow the scheme")

        let png = try Data(contentsOf: URL(fileURLWithPath: shot))
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "a PNG screenshot")
        XCTAssertGreaterThan(png.count, 20_000)
    }

    /// One build: the narrowest charts, whose legends were cut ("warn" for "warnings").
    func testTheChartsOfOneBuildHoldTheirLegendsAndLabels() throws {
        let page = try writePage(["--build", "812"], name: "one-build.html")
        let facts = try check(page)
        let dom = try XCTUnwrap(facts["dom"] as? [String: Any])
        XCTAssertEqual(dom["buildPlots"] as? Int, 1)
        XCTAssertEqual(dom["textOverflows"] as? [String], [], "text cut at the edge of its SVG")
        XCTAssertEqual(dom["unlabelledColumns"] as? Int, 0)
        XCTAssertEqual(dom["findingsBeforeCharts"] as? Bool, true)
    }

    func testUnderABaselineTheNewAndKnownFilterWorks() throws {
        let dir = (db as NSString).deletingLastPathComponent
        XCTAssertEqual(TestSupport.run(["baseline", "--db", db, "--leaks", "-o", dir + "/b.json"]).status, 0)
        let page = try writePage(["--baseline", dir + "/b.json"], name: "baseline.html")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        XCTAssertTrue(html.contains("<select id=\"f-state\" name=\"state\">"))
        XCTAssertTrue(html.contains("Against the baseline"))
        let facts = try check(page)
        XCTAssertEqual(facts["errors"] as? [String], [])
        XCTAssertEqual(facts["requests"] as? [String], [])
    }

    /// The check itself can fail: a page that loads an image, and a page whose script is not
    /// the one its policy names, are both reported.
    func testTheCheckSeesARequestAndABlockedScript() throws {
        let page = try writePage([], name: "good.html")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        let dir = (page as NSString).deletingLastPathComponent
        let fetching = dir + "/fetching.html"
        try html.replacingOccurrences(of: "<main>", with: "<main><img src=\"http://127.0.0.1:9/x.png\" alt=\"\">")
            .write(toFile: fetching, atomically: true, encoding: .utf8)
        let f = try check(fetching)
        XCTAssertEqual(f["requests"] as? [String], ["http://127.0.0.1:9/x.png"])
        XCTAssertFalse((f["errors"] as? [String] ?? []).isEmpty, "the policy blocks it, loudly")
        let tampered = dir + "/tampered.html"
        try html.replacingOccurrences(of: "\"use strict\";", with: "\"use strict\"; document.title = 'x';")
            .write(toFile: tampered, atomically: true, encoding: .utf8)
        let t = try check(tampered)
        XCTAssertTrue((t["errors"] as? [String] ?? []).contains { $0.contains("Content Security Policy") }, "\(t["errors"] ?? "")")
        XCTAssertEqual((t["dom"] as? [String: Any])?["filtersShown"] as? Bool, false, "a script the policy does not name never runs")
    }
}
