"""Readable text from an HTML page: headings, paragraphs, list items and links; no markup.

Scripts, styles, navigation, headers, footers, forms and other page furniture are dropped
with everything inside them. Headings become ``#`` lines, list items ``- `` lines, links
``text (url)`` with the URL made absolute, ``<pre>`` keeps its line breaks, and the rest is
whitespace-collapsed paragraphs. The standard library's :class:`html.parser.HTMLParser` is
enough for this (it tolerates broken markup and decodes entities); no extra dependency.
The output is cut at ``max_chars``.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

__all__ = ["html_to_text"]

# Content inside these is not what a reader came for.
_SKIP = frozenset(
    {
        "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object",
        "nav", "header", "footer", "aside", "form", "button", "select",
    }
)  # fmt: skip
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "wbr", "source", "area", "col"})
_BLOCK = frozenset(
    {
        "p", "div", "section", "article", "main", "blockquote", "table", "tr", "ul", "ol",
        "dl", "dt", "dd", "figure", "figcaption", "address", "details", "summary", "body",
    }
)  # fmt: skip
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_SPACE = re.compile(r"[ \t\r\n\f\v]+")
_FEED_CHARS = 16_384
_MAX_DEPTH = 256  # skipped-element nesting tracked; deeper junk stays skipped


class _Extractor(HTMLParser):
    def __init__(self, base_url: str, max_chars: int) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.max_chars = max_chars
        self.lines: list[str] = []
        self.size = 0
        self.current: list[str] = []
        self.prefix = ""
        self.skip: list[str] = []
        self.in_title = False
        self.title = ""
        self.pre = 0
        self.link: tuple[str, list[str]] | None = None

    # --- building lines -------------------------------------------------------------------

    def flush(self) -> None:
        text = "".join(self.current)
        if not self.pre:
            text = _SPACE.sub(" ", text).strip()
        self.current = []
        if text.strip():
            line = f"{self.prefix}{text}"
            self.lines.append(line)
            self.size += len(line) + 1
        self.prefix = ""

    def full(self) -> bool:
        return self.size > self.max_chars

    # --- parser callbacks -----------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and not self.skip:
            self.in_title = True
            return
        if self.skip or tag in _SKIP:
            if tag not in _VOID and len(self.skip) < _MAX_DEPTH:
                self.skip.append(tag)
            return
        if tag in _HEADINGS:
            self.flush()
            self.prefix = "#" * _HEADINGS[tag] + " "
        elif tag == "li":
            self.flush()
            self.prefix = "- "
        elif tag == "pre":
            self.flush()
            self.pre += 1
        elif tag in _BLOCK:
            self.flush()
        elif tag == "br":
            if self.pre:
                self.current.append("\n")
            else:
                self.flush()
        elif tag == "a":
            href = dict(attrs).get("href") or ""
            self.link = (href, [])

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
            return
        if self.skip:
            # Close up to the matching tag; a stray end tag of another name is ignored.
            if tag in self.skip:
                while self.skip and self.skip.pop() != tag:
                    pass
            return
        if tag == "a" and self.link is not None:
            href, words = self.link
            self.link = None
            text = _SPACE.sub(" ", "".join(words)).strip()
            target = urljoin(self.base_url, href) if href else ""
            if target.startswith(("http://", "https://")) and text and target != text:
                self.current.append(f"{text} ({target})")
            else:
                self.current.append(text)
        elif tag == "pre":
            self.flush()
            self.pre = max(0, self.pre - 1)
        elif tag in _HEADINGS or tag in _BLOCK or tag == "li":
            self.flush()

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
        elif self.skip or self.full():
            return
        elif self.link is not None:
            self.link[1].append(data)
        else:
            self.current.append(data)


def html_to_text(html: str, *, base_url: str = "", max_chars: int = 8000) -> tuple[str, bool]:
    """The page's readable text and whether it was cut at ``max_chars``.

    The title, when there is one, is the first line (``Title: ...``).
    """
    parser = _Extractor(base_url, max_chars)
    # Fed in pieces, so parsing stops once the text is full: the rest of a long page would
    # only be tokenized to be thrown away (html.parser costs about 1 µs per character here).
    for start in range(0, len(html), _FEED_CHARS):
        parser.feed(html[start : start + _FEED_CHARS])
        if parser.full():
            break
    else:
        parser.close()
    parser.flush()
    lines = parser.lines
    title = _SPACE.sub(" ", parser.title).strip()
    if title:
        lines = [f"Title: {title}", *lines]
    text = "\n".join(lines)
    if len(text) > max_chars:
        return text[:max_chars], True
    return text, parser.full()
