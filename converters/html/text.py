"""Visible text of an HTML fragment (tags, comments, scripts and styles dropped).

Markdown documents carry raw HTML blocks and inline tags; their visible text
belongs in the plain-text and JSON variants, their markup does not.
"""

from __future__ import annotations

from html.parser import HTMLParser

#: Elements whose content is never visible text (or not text a reader sees:
#: an inline SVG's labels, a select's options, an iframe's fallback).
INVISIBLE_ELEMENTS = frozenset(
    [
        "script",
        "style",
        "template",
        "noscript",
        "head",
        "title",
        "svg",
        "iframe",
        "object",
        "canvas",
        "select",
        "textarea",
        "datalist",
        "option",
    ]
)
_LINE_BREAKING = frozenset({"br", "p", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6"})


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in INVISIBLE_ELEMENTS:
            self._hidden_depth += 1
        elif tag in _LINE_BREAKING:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _LINE_BREAKING:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in INVISIBLE_ELEMENTS:
            self._hidden_depth = max(0, self._hidden_depth - 1)
        elif tag in _LINE_BREAKING:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._hidden_depth:
            self.parts.append(data)


def html_to_text(fragment: str) -> str:
    """The visible text of ``fragment``, line breaks at block boundaries."""
    collector = _TextCollector()
    collector.feed(fragment)
    collector.close()
    lines = (" ".join(line.split()) for line in "".join(collector.parts).split("\n"))
    return "\n".join(line for line in lines if line)
