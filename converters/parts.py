"""Parts of a document: its pages and its sections, and the query that names each.

A part is addressed by a query on the document's URI (issue #10):
``?pages=3`` or ``?pages=3-5`` for pages of a paginated source (PDF), and
``?section=medium-tests`` for the section under a heading of a structured one
(Markdown, HTML, DOCX, text). The section slug is GitHub's: the heading's
visible text, lowercased, with punctuation dropped and spaces turned into
hyphens; a repeated slug gets ``-1``, ``-2``... in document order.

Converters use this module to say which part each page and section is
(:class:`Segment`, the JSON representation's ``part`` members); the server uses
it to cut a part out of a document's Markdown. Both compute slugs from the same
headings in the same way, so the names agree.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from pypdf import PdfReader, PdfWriter

from docshelf.converters.base import OutlineEntry, Segment
from docshelf.converters.markdown.model import Section, inline_text, markdown_parser
from docshelf.converters.textutil import collapse_whitespace

#: The most pages one part may span: a part is meant to fit a model's context.
MAX_PART_PAGES = 50

# GitHub's anchor slugs keep letters, digits, marks, "-", "_" and spaces (then hyphens).
_NOT_SLUG = re.compile(r"[^\w\- ]", re.UNICODE)
# The page markers pdf_markdown (and a deck's Markdown) writes: one comment per page.
_PAGE_MARKER = re.compile(r"^<!-- page (\d+) -->$", re.MULTILINE)


def slugify(heading: str) -> str:
    """GitHub's anchor for ``heading`` ("Medium tests!" → "medium-tests")."""
    return _NOT_SLUG.sub("", heading.strip().lower()).replace(" ", "-")


def unique_slugs(headings: Iterable[str]) -> list[str]:
    """Slugs for ``headings`` in document order, repeats numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    slugs: list[str] = []
    for heading in headings:
        base = slug = slugify(heading)
        while slug in seen:
            seen[base] += 1
            slug = f"{base}-{seen[base]}"
        seen.setdefault(slug, 0)
        slugs.append(slug)
    return slugs


def pages_query(first: int, last: int) -> str:
    return f"pages={first}" if first == last else f"pages={first}-{last}"


def section_query(slug: str) -> str:
    """``section=`` and the slug as a URI writes it (UTF-8, percent-encoded)."""
    return "section=" + quote(slug, safe="-_.~")


class PartNotFound(LookupError):
    """No such part; ``reason`` says why, for the error's ``data``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class PartQuery:
    """What a part URI's query asks for: a page range or a section slug."""

    pages: tuple[int, int] | None = None
    section: str | None = None

    @property
    def query(self) -> str:
        """The canonical query string (without ``?``)."""
        if self.pages is not None:
            return pages_query(*self.pages)
        return section_query(self.section or "")


def outline_parts(outline: Sequence[OutlineEntry], page_count: int | None) -> list[str | None]:
    """The part each outline entry names, or None where it names none.

    A paginated document's entry names the pages from its own to where the next
    entry of the same or a higher level starts (that page included: sections
    share pages), at most :data:`MAX_PART_PAGES`. Any other document's entries
    are its headings and name their sections.
    """
    if page_count is None:
        return [section_query(slug) for slug in unique_slugs(e.title for e in outline)]
    parts: list[str | None] = []
    for index, entry in enumerate(outline):
        if entry.page is None or not 1 <= entry.page <= page_count:
            parts.append(None)
            continue
        end = page_count
        for following in outline[index + 1 :]:
            if following.level <= entry.level and following.page is not None:
                end = max(entry.page, min(following.page, page_count))
                break
        parts.append(pages_query(entry.page, min(end, entry.page + MAX_PART_PAGES - 1)))
    return parts


def section_segments(sections: Sequence[Section]) -> tuple[Segment, ...]:
    """One segment per section (the text under a heading, to the next heading)."""
    slugs = iter(unique_slugs(s.heading for s in sections if s.heading is not None))
    return tuple(
        Segment(
            "" if section.heading is None else section_query(next(slugs)),
            section.heading,
            section.text,
        )
        for section in sections
    )


def page_segments(texts: Sequence[str]) -> tuple[Segment, ...]:
    """One segment per page, numbered from 1."""
    return tuple(
        Segment(pages_query(number, number), f"Page {number}", text)
        for number, text in enumerate(texts, start=1)
    )


@dataclass(frozen=True, slots=True)
class Heading:
    title: str
    level: int
    slug: str
    first_line: int  # 0-based line where the heading starts in the source


def headings_of(markdown: str) -> list[Heading]:
    """Every heading of ``markdown`` (ATX and setext) with its slug and line."""
    tokens = markdown_parser().parse(markdown)
    found = [
        (collapse_whitespace(inline_text(tokens[i + 1].children)), int(t.tag[1]), t.map)
        for i, t in enumerate(tokens)
        if t.type == "heading_open" and t.map is not None
    ]
    slugs = unique_slugs(title for title, _, _ in found)
    return [
        Heading(title, level, slug, line_map[0])
        for (title, level, line_map), slug in zip(found, slugs, strict=True)
    ]


def section_markdown(markdown: str, slug: str) -> tuple[Heading, str] | None:
    """The heading named ``slug`` and its section of ``markdown``: from the heading down
    to the next heading of the same or a higher level. None if no heading has the slug."""
    headings = headings_of(markdown)
    for index, heading in enumerate(headings):
        if heading.slug != slug:
            continue
        end = next((h.first_line for h in headings[index + 1 :] if h.level <= heading.level), None)
        lines = markdown.splitlines(keepends=True)
        return heading, "".join(lines[heading.first_line : end])
    return None


def pages_markdown(markdown: str, first: int, last: int) -> str | None:
    """The part of a PDF's Markdown (see :mod:`converters.pdf.markdown`) for pages
    ``first``..``last``, or None if it carries no page markers to cut at."""
    markers = [(int(m.group(1)), m.start()) for m in _PAGE_MARKER.finditer(markdown)]
    if not markers:
        return None
    start = next((offset for number, offset in markers if number >= first), len(markdown))
    end = next((offset for number, offset in markers if number > last), len(markdown))
    return markdown[start:end].rstrip("\n") + "\n"


def pdf_page_range(data: bytes, first: int, last: int) -> bytes:
    """A PDF of pages ``first``..``last`` of ``data`` (pypdf copies the pages and what
    they use; the document's metadata goes along)."""
    reader = PdfReader(io.BytesIO(data), strict=False)
    if reader.is_encrypted:
        reader.decrypt("")
    writer = PdfWriter()
    for page in reader.pages[first - 1 : last]:
        writer.add_page(page)
    if reader.metadata:
        writer.add_metadata({k: v for k, v in reader.metadata.items() if isinstance(v, str)})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
