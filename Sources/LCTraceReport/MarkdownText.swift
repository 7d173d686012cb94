/// Text from traces in Markdown (`compare --format markdown`, posted as a pull-request comment):
/// every such text is an inline code span, the one Markdown construct whose content is never
/// read as markup. Raw HTML, links, images, emphasis and entities stay text there, and GitHub
/// links no @mention, #reference or bare URL inside code. What a code span cannot hold safely
/// is written differently: a backtick run is fenced by a longer one, line endings and other
/// controls (which would end the line: a carriage return starts a heading) are escaped as
/// `TerminalText` escapes them, and in a table cell `|` is `\|` (GFM splits cells before it
/// reads code spans, and takes `\|` back as `|`).
enum MarkdownText {
    /// `text` as an inline code span; `inTable` for a GFM table cell. An empty text stays empty.
    package static func code(_ text: String, inTable: Bool = false) -> String {
        var content = TerminalText.escaped(text)
        guard !content.isEmpty else { return "" }
        var longest = 0, run = 0
        for ch in content.utf8 {
            run = ch == UInt8(ascii: "`") ? run + 1 : 0
            longest = max(longest, run)
        }
        if inTable { content = content.replacingOccurrences(of: "|", with: "\\|") }
        // CommonMark strips one space from each end when both have one: a fence beside a
        // backtick needs the space, and a text with spaces at both ends keeps them.
        let pad = content.first == "`" || content.last == "`"
            || (content.first == " " && content.last == " " && content.contains { $0 != " " })
        let fence = String(repeating: "`", count: longest + 1)
        return pad ? fence + " " + content + " " + fence : fence + content + fence
    }
}
