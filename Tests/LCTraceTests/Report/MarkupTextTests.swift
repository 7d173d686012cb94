import XCTest
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
@testable import LCTraceReport

/// `MarkupText.escape`, the one escaper of the HTML report, SVG timelines and JUnit: the same
/// characters shown the same way in each, the few a context writes differently, and that what
/// it writes is XML a parser takes, whatever the text.
final class MarkupTextTests: XCTestCase {
    let contexts: [MarkupText.Context] = [.html, .xml]

    func testMarkupCharactersAreEntitiesAndTheQuoteOnlyWhereAttributesMayUseIt() {
        XCTAssertEqual(MarkupText.escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;")
        XCTAssertEqual(MarkupText.escape("<a href=\"x\">&'", for: .xml), "&lt;a href=&quot;x&quot;&gt;&amp;'")
        for context in contexts {
            XCTAssertEqual(MarkupText.escape("plain ViewController é → 日本 🚀", for: context), "plain ViewController é → 日本 🚀")
        }
    }

    /// Tab, line feed and carriage return are the C0 characters XML carries: HTML keeps the
    /// first two as they are, XML writes all three as references an attribute keeps.
    func testWhitespaceControlsByContext() {
        XCTAssertEqual(MarkupText.escape("a\tb\nc\rd"), "a\tb\nc\u{240D}d")
        XCTAssertEqual(MarkupText.escape("a\tb\nc\rd", for: .xml), "a&#9;b&#10;c&#13;d")
    }

    func testEveryOtherControlAndInvisibleCharacterIsShownTheSameWayInEveryContext() {
        for context in contexts {
            for v in UInt32(0)..<0x20 where ![0x09, 0x0A, 0x0D].contains(v) {
                XCTAssertEqual(MarkupText.escape(String(UnicodeScalar(v)!), for: context), String(UnicodeScalar(0x2400 + v)!),
                               "U+\(String(v, radix: 16)) in \(context)")
            }
            XCTAssertEqual(MarkupText.escape("\u{7F}", for: context), "\u{2421}")
            XCTAssertEqual(MarkupText.escape("\u{80}\u{85}\u{9F}\u{200E}\u{200F}\u{202A}\u{202E}\u{2066}\u{2069}\u{61C}", for: context),
                           "[U+0080][U+0085][U+009F][U+200E][U+200F][U+202A][U+202E][U+2066][U+2069][U+061C]")
            XCTAssertEqual(MarkupText.escape("\u{FFFE}\u{FFFF}\u{FFFD}", for: context), "[U+FFFE][U+FFFF]\u{FFFD}",
                           "not XML characters; U+FFFD is one")
        }
    }

    #if canImport(FoundationXML) || canImport(Darwin)
    /// Every character of the Basic Multilingual Plane and the first of the others, escaped,
    /// in an attribute and as content: a well-formed document that reads back as it was
    /// written (in XML the whitespace controls survive even in the attribute).
    func testWhatItWritesIsWellFormedXMLForAnyText() throws {
        let scalars = (UInt32(0)...0x10000).compactMap(UnicodeScalar.init)
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars)
        for context in contexts {
            let escaped = MarkupText.escape(text, for: context)
            let document = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><a v=\"\(escaped)\">\(escaped)</a>"
            let reader = Reader()
            let parser = XMLParser(data: Data(document.utf8))
            parser.delegate = reader
            XCTAssertTrue(parser.parse(), "\(context): \(String(describing: reader.error ?? parser.parserError))")
            XCTAssertTrue(reader.text.contains("\t\n"), "\(context): content keeps tab and line feed")
            if context == .xml {
                XCTAssertTrue(reader.attribute?.contains("\t\n") == true && reader.attribute?.contains("\r") == true,
                              "an attribute keeps them as references")
                XCTAssertEqual(reader.text, reader.attribute)
            }
        }
    }

    final class Reader: NSObject, XMLParserDelegate {
        var attribute: String?
        var text = ""
        var error: Error?
        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            attribute = attributes["v"]
        }
        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }
        func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) { error = parseError }
    }
    #endif
}

/// `MarkdownText.code`: the code span every trace text of a Markdown output is written as.
final class MarkdownTextTests: XCTestCase {
    func testTheFenceOutrunsEveryBacktickRunAndEndsKeepTheirBackticksAndSpaces() {
        XCTAssertEqual(MarkdownText.code("LoginVC"), "`LoginVC`")
        XCTAssertEqual(MarkdownText.code("a`b``c"), "```a`b``c```")
        XCTAssertEqual(MarkdownText.code("`x"), "`` `x ``", "a backtick at an end needs the space")
        XCTAssertEqual(MarkdownText.code(" x "), "`  x  `", "CommonMark strips one space from each end")
        XCTAssertEqual(MarkdownText.code("  "), "`  `", "only spaces are kept as they are")
        XCTAssertEqual(MarkdownText.code(""), "")
    }

    func testControlsAreEscapedAndPipesOnlyInTableCells() {
        XCTAssertEqual(MarkdownText.code("A\r# H\n\u{202E}"), "`A\\u000d# H\\u000a\\u202e`")
        XCTAssertEqual(MarkdownText.code("a|b"), "`a|b`")
        XCTAssertEqual(MarkdownText.code("a|b\\|", inTable: true), "`a\\|b\\\\|`")
    }
}
