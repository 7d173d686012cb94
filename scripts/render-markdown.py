#!/usr/bin/env python3
"""Renders a Markdown file as GitHub would and describes the HTML (used by HostileInputTests).

    render-markdown.py FILE.md

Renders with markdown-it-py (CommonMark with raw HTML allowed, plus GFM tables and
strikethrough) and prints one JSON object: `tags` (every element, in order), `headings` (their
text), `comments` (HTML comments), `code` (the text of every code span), `rows` (the cell count
of every table row) and `outside` (the text that is in no code span). GitHub links
@mentions, #references and bare URLs in text outside code: a test looks for them in `outside`.

Needs `markdown-it-py` from PyPI: .ci/run installs it in the private virtualenv .ci/venv.
Exit 0 rendered, 3 renderer missing.
"""
import json, sys
from html.parser import HTMLParser

try:
    from markdown_it import MarkdownIt
except ImportError:
    print("markdown-it-py is not installed"); sys.exit(3)

html = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(open(sys.argv[1], encoding="utf-8").read())


class Describe(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.headings, self.comments, self.code, self.rows, self.outside = [], [], [], [], [], []
        self.open = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.open.append(tag)
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.headings.append("")
        elif tag == "code":
            self.code.append("")
        elif tag == "tr":
            self.rows.append(0)
        elif tag in ("td", "th"):
            self.rows[-1] += 1

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)

    def handle_endtag(self, tag):
        if tag in self.open:
            while self.open.pop() != tag:
                pass

    def handle_comment(self, data):
        self.comments.append(data)

    def handle_data(self, data):
        if any(t.startswith("h") and t[1:].isdigit() for t in self.open):
            self.headings[-1] += data
        if "code" in self.open:
            self.code[-1] += data
        else:
            self.outside.append(data)


d = Describe()
d.feed(html)
print(json.dumps({"tags": d.tags, "headings": d.headings, "comments": d.comments, "code": d.code,
                  "rows": d.rows, "outside": "".join(d.outside), "html": html}))
