import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
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

/// The SVG timeline: well-formed XML, one labelled group per lane, accessible names, nothing
/// fetched, colours by class for light and dark schemes.
final class SVGTimelineTests: SampleDatabaseTestCase {

    /// Elements of a parsed document, in order, with their attributes and text.
    final class Collector: NSObject, XMLParserDelegate {
        var elements: [(name: String, attributes: [String: String])] = []
        var text: [String: String] = [:]
        private var stack: [String] = []
        var error: Error?

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            elements.append((name, attributes))
            stack.append(attributes["id"] ?? "")
        }
        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            stack.removeLast()
        }
        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if let id = stack.last, !id.isEmpty { text[id, default: ""] += string }
        }
        func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) { error = parseError }
    }

    func parse(_ svg: String, file: StaticString = #filePath, line: UInt = #line) -> Collector {
        let parser = XMLParser(data: Data(svg.utf8))
        let collector = Collector()
        parser.delegate = collector
        XCTAssertTrue(parser.parse(), "not well-formed: \(String(describing: collector.error ?? parser.parserError))", file: file, line: line)
        return collector
    }

    func timeline(_ args: [String]) -> String {
        let r = TestSupport.run(["timeline", "--db", Self.db, "-f", "svg"] + args)
        XCTAssertEqual(r.status, 0, r.err)
        return r.out
    }

    func testEverySampleSessionIsAWellFormedDocumentWithALaneGroupPerInstance() throws {
        for s in try DatabaseReader(db: try SQLiteDatabase(path: Self.db, mode: .readOnly)).sessions() {
            let svg = timeline(["--session", s.sid, "--window", "1000s", "--lanes", "0", "--idle"])
            let doc = parse(svg)
            let root = try XCTUnwrap(doc.elements.first)
            XCTAssertEqual(root.name, "svg")
            XCTAssertEqual(root.attributes["role"], "img")
            XCTAssertEqual(root.attributes["aria-labelledby"], "lct-title lct-desc")
            XCTAssertEqual(doc.text["lct-title"], "Timeline of session \(s.sid)")
            XCTAssertTrue(doc.text["lct-desc"]?.contains("controller instance") == true)
            let lanes = doc.elements.filter { $0.name == "g" && ($0.attributes["class"] ?? "").hasPrefix("lane") }
            let instances = Int(try TimelineFixtures.scalar(Self.db, "SELECT count(*) FROM instances_v WHERE sid = '\(s.sid)'"))!
            XCTAssertEqual(lanes.count, instances + 1, "a lane per instance and the app row in \(s.sid)")
            for lane in lanes { XCTAssertFalse(lane.attributes["aria-label"]?.isEmpty ?? true, "\(lane)") }
            // Every phase and mark has a title for a pointer and a screen reader.
            let rects = doc.elements.filter { $0.name == "rect" && ($0.attributes["class"] ?? "").hasPrefix("phase") }
            XCTAssertFalse(rects.isEmpty)
        }
    }

    func testTheLeakLaneSaysWhatHappened() throws {
        let leak = try TimelineFixtures.scalar(Self.db, "SELECT vc || '#' || since FROM findings_v WHERE rule = 'LC301' AND session LIKE 'db9c%'")
        let doc = parse(timeline(["--session", "db9c", "--vc", leak]))
        let label = doc.elements.first { $0.name == "g" && $0.attributes["class"] == "lane focused" }?.attributes["aria-label"]
        XCTAssertEqual(label, "SettingsViewController \(leak), in UINavigationController 0x60000f500a00#25, visible 1 time, released (pop) at 19.88 s, alive at the end, LC301")
        XCTAssertTrue(doc.elements.contains { $0.name == "circle" && $0.attributes["class"] == "finding error" })
        XCTAssertTrue(doc.elements.contains { $0.name == "line" && $0.attributes["class"] == "arrow push" })
    }

    func testNothingIsFetchedAndInlineUseHasNoAddressAtAll() throws {
        let svg = timeline(["--session", "aad7"])
        for word in ["href", "url(http", "@import", "<image", "<script", "<foreignObject"] {
            XCTAssertFalse(svg.contains(word), "\(word) in the SVG")
        }
        XCTAssertEqual(svg.components(separatedBy: "http").count - 1, 1, "only the xmlns of a file of its own")
        let sid = try TimelineFixtures.scalar(Self.db, "SELECT sid FROM sessions WHERE sid LIKE 'aad7%'")
        let info = try XCTUnwrap(DatabaseReader(db: try SQLiteDatabase(path: Self.db, mode: .readOnly)).sessions(SessionFilter(session: sid)).first)
        var request = TimelineRequest()
        request.maxLanes = nil
        var inline = SVGTimeline(try TimelineReport.make(db: Storage(try SQLiteDatabase(path: Self.db, mode: .readOnly)), session: info, request))
        inline.standalone = false
        inline.idPrefix = "t2"
        let text = inline.render()
        XCTAssertFalse(text.contains("http"), "inline SVG names no address")
        XCTAssertTrue(text.contains("aria-labelledby=\"t2-title t2-desc\"") && text.contains("url(#t2-head)"), "ids follow the prefix")
        _ = parse(text.replacingOccurrences(of: "<svg ", with: "<svg xmlns=\"http://www.w3.org/2000/svg\" "))
    }

    func testColoursComeFromClassesWithALightFallbackAndADarkScheme() {
        let style = SVGTimeline.style
        XCTAssertTrue(style.contains("@media (prefers-color-scheme:dark)"))
        for (name, light, dark) in SVGTimeline.palette {
            XCTAssertTrue(style.contains("--lct-\(name):\(light)"), name)
            XCTAssertTrue(style.contains("--lct-\(name):\(dark)"), name)
        }
        XCTAssertTrue(style.contains(".lctrace-timeline .visible{fill:#2da44e;fill:var(--lct-visible,#2da44e)}"), style)
    }

    /// Markup escaped, and what XML cannot carry (controls, U+FFFE) shown: still well-formed.
    func testTextIsEscaped() {
        var b = TraceBuilder()
        b.vc(2, "init", "0xa", #""cls":"Tricky<&\"'>\u0001\u001b\ufffe\u202eVC""#)
        b.vc(3, "viewWillAppear", "0xa", #""animated":false"#)
        b.vc(4, "viewDidAppear", "0xa", #""animated":false"#)
        b.add(100, "sessionEnd", #""reason":"stopped""#)
        let svg = SVGTimeline(TimelineFixtures.timeline(b)).render()
        let doc = parse(svg)
        XCTAssertTrue(doc.elements.contains { $0.attributes["aria-label"]?.hasPrefix("Tricky<&\"'>␁␛[U+FFFE][U+202E]VC 0xa#2") == true })
    }
}
