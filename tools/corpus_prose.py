"""HTML to prose for the mixed corpus (tools/corpus_mix.py): documents of plain sentences.

    sections(html, split_at)   [(anchor, text)]: the page cut at each heading in `split_at`
                               ("h1", "h2", ...), each part one line of prose

Code, tables, navigation and markup are dropped, not turned into text: <pre>, <table>, the
Sphinx and Publican page furniture (sidebars, headers, footers, "¶" links) and the signature
lines of Python's API entries (<dt class="sig ...">), whose prose (<dd>) stays. Whitespace is
one space; case and punctuation are the page's.
"""
import html.parser
import re

# elements whose whole content is not prose
SKIP_TAGS = {"pre", "table", "script", "style", "head", "nav", "title", "math", "svg"}
# classes (any one of an element's) whose whole content is not prose
SKIP_CLASSES = {"headerlink", "sphinxsidebar", "related", "footer", "highlight", "doctest",
                "informalexample", "programlisting", "screen", "docnav", "navfooter", "navheader",
                "toc", "sig", "literal-block", "mobile-nav", "inline-search", "toctree-wrapper",
                "synopsis", "cmdsynopsis", "mediaobject", "footnotes", "index"}
SKIP_IDS = {"banner", "navigation", "footer", "header"}
BLOCKS = {"p", "div", "li", "dd", "dt", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "section",
          "br", "ul", "ol", "dl", "tr", "figcaption", "caption", "body"}
VOID = {"br", "img", "hr", "meta", "link", "input", "col", "area", "base", "wbr", "source"}
SPACE = re.compile(r"\s+")


class _Prose(html.parser.HTMLParser):
    def __init__(self, split_at):
        super().__init__(convert_charrefs=True)
        self.split_at = split_at
        self.stack = []  # (tag, skipped) of every open element
        self.skip = 0  # open elements that hide their content
        self.parts = [["", []]]  # [anchor, blocks] per section
        self.block = []  # the words of the block being read
        self.anchor = ""

    def _end_block(self):
        text = SPACE.sub(" ", "".join(self.block)).strip()
        if text:
            self.parts[-1][1].append(text)
        self.block = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.anchor = a["id"]
        if tag in VOID:
            if tag == "br" and not self.skip:
                self.block.append(" ")
            return
        hidden = (tag in SKIP_TAGS or a.get("id") in SKIP_IDS or
                  bool(SKIP_CLASSES.intersection((a.get("class") or "").split())))
        if tag in BLOCKS and not self.skip:
            self._end_block()
        if tag in self.split_at and not self.skip:
            self.parts.append([a.get("id") or self.anchor, []])
        self.stack.append((tag, hidden))
        self.skip += hidden

    def handle_endtag(self, tag):
        if tag in VOID or not any(t == tag for t, _ in self.stack):
            return
        while self.stack:  # close what was left open inside it, as browsers do
            t, hidden = self.stack.pop()
            self.skip -= hidden
            if t == tag:
                break
        if tag in BLOCKS and not self.skip:
            self._end_block()

    def handle_data(self, data):
        if not self.skip:
            self.block.append(data)


def sections(page, split_at=("h1", "h2")):
    """[(anchor, text)] of the page's parts, cut before each heading in split_at; empty parts dropped."""
    p = _Prose(set(split_at))
    p.feed(page)
    p.close()
    p._end_block()
    out = []
    for anchor, blocks in p.parts:
        text = " ".join(blocks)
        if text:
            out.append((anchor, text))
    return out
