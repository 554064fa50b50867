"""E-books (EPUB 2 and 3), read with zipfile, defusedxml and the HTML path.

``META-INF/container.xml`` names the package document (OPF): its metadata
(Dublin Core title, creators, language, description, publisher, date,
identifier) heads the Markdown as a block of ``**Name:** value`` lines, and
its spine gives the chapters in reading order. Each chapter's XHTML goes
through :func:`converters.html.markdown.html_to_markdown` — never an XML
parser: EPUB 2 chapters use ``&nbsp;`` and other XHTML entities an XML parser
rejects. The navigation document is left out (it is the table of contents,
not text); items the spine marks ``linear="no"`` (notes, answers) follow the
others.

Each chapter is a section. The table of contents (EPUB 3's ``nav``, else
EPUB 2's ``toc.ncx``) names chapters: one whose Markdown does not open with a
heading gets its label as one, at its depth in the contents, so that
``?section=`` can cut every chapter the contents list. A spine item the
contents do not list and that has no heading of its own continues the
chapter before it (converters split long chapters into several files).

Images stay references to their path inside the package (``![alt](OEBPS/img/map.png)``);
nothing outside the package is read, and a path that climbs out of it is dropped.
DRM-encrypted chapters (``META-INF/encryption.xml``) are ``encrypted``.
"""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any
from urllib.parse import unquote, urlsplit
from xml.etree.ElementTree import Element

from docshelf.converters.assemble import parsed_markdown_result
from docshelf.converters.base import ConversionError, ConversionResult, FailureReason, Source
from docshelf.converters.html.markdown import html_to_markdown
from docshelf.converters.html.text import html_to_text
from docshelf.converters.markdown.converter import markdown_facts
from docshelf.converters.markdown.model import parse_markdown
from docshelf.converters.package import open_package, read_member
from docshelf.converters.parts import headings_of
from docshelf.converters.safexml import child_text, parse_xml
from docshelf.converters.textutil import (
    check_size,
    collapse_whitespace,
    decode_text,
    escape_markdown_inline,
    markdown_heading,
)

EPUB_MIME_TYPE = "application/epub+zip"
#: The compressed file refused outright (bombs are :mod:`converters.package`'s).
MAX_EPUB_BYTES = 256 * 1024 * 1024
#: Spine items read; a book has tens to hundreds.
MAX_CHAPTERS = 2_000
#: What one chapter's XHTML, and all chapters together, may unpack to.
MAX_CHAPTER_BYTES = 16 * 1024 * 1024
MAX_BOOK_TEXT_BYTES = 64 * 1024 * 1024
#: The container, package and navigation documents are small XML.
MAX_XML_BYTES = 8 * 1024 * 1024
#: Table-of-contents entries kept (a dictionary's index can list every word).
MAX_TOC_ENTRIES = 10_000

CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
OPF = "{http://www.idpf.org/2007/opf}"
DC = "{http://purl.org/dc/elements/1.1/}"
NCX = "{http://www.daisy.org/z3986/2005/ncx/}"
ENCRYPTION = "{http://www.w3.org/2001/04/xmlenc#}"
#: Font obfuscation (IDPF, Adobe) "encrypts" fonts only; chapters stay readable.
FONT_OBFUSCATION = frozenset(
    {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}
)
CHAPTER_MEDIA_TYPES = frozenset({"application/xhtml+xml", "text/html"})
#: The header block: metadata name → its label, in markitdown's order.
HEADER_FIELDS = (
    ("title", "Title"),
    ("authors", "Authors"),
    ("language", "Language"),
    ("publisher", "Publisher"),
    ("date", "Date"),
    ("description", "Description"),
    ("identifier", "Identifier"),
)
_KIND = "EPUB"


@dataclass(frozen=True, slots=True)
class Chapter:
    path: str  # inside the package
    label: str | None  # from the table of contents
    depth: int  # in the table of contents (1 at the top)
    linear: bool
    markdown: str


@dataclass(frozen=True, slots=True)
class Book:
    metadata: Mapping[str, Any]  # HEADER_FIELDS' names (authors: a list) and "subjects"
    chapters: tuple[Chapter, ...]


class EpubConverter:
    """Converts EPUB e-books."""

    name = "epub"
    version = "1"

    def accepts(self, source: Source) -> bool:
        return source.base_mime_type == EPUB_MIME_TYPE or source.extension == ".epub"

    def convert(self, source: Source) -> ConversionResult:
        check_size(source.data, MAX_EPUB_BYTES)
        book = read_book(open_package(source.data, _KIND))
        markdown = book_markdown(book)
        document = parse_markdown(markdown)
        meta = book.metadata
        authors = "; ".join(meta["authors"])
        facts = markdown_facts(
            document,
            title=meta["title"],
            description=meta["description"] or _shape(book),
            language=meta["language"],
            metadata={
                key: value
                for key, value in {
                    "author": authors,
                    "publisher": meta["publisher"],
                    "date": meta["date"],
                    "identifier": meta["identifier"],
                    "subject": ", ".join(meta["subjects"]),
                }.items()
                if value
            },
        )
        chapters = [
            {
                "title": chapter.label or _first_heading(chapter.markdown),
                "path": chapter.path,
                "linear": chapter.linear,
            }
            for chapter in book.chapters
        ]
        return parsed_markdown_result(
            source,
            facts,
            markdown,
            document,
            pdf_author=authors or None,
            data={**meta, "chapters": chapters},
        )


def _shape(book: Book) -> str:
    """A description for a book that has none: who wrote it and how long it is."""
    by = f" by {', '.join(book.metadata['authors'])}" if book.metadata["authors"] else ""
    count = len(book.chapters)
    return f"E-book{by}, {count} chapter{'s' if count != 1 else ''}"


def _first_heading(markdown: str) -> str | None:
    headings = headings_of(markdown)
    return headings[0].title if headings else None


def read_book(package: zipfile.ZipFile) -> Book:
    """The metadata and the chapters (as Markdown) of the EPUB ``package``."""
    opf_path = _package_document(package)
    opf = parse_xml(
        read_member(package, opf_path, _KIND, limit=MAX_XML_BYTES), f"the EPUB's {opf_path!r}"
    )
    if opf.tag != f"{OPF}package":
        raise ConversionError(
            FailureReason.CORRUPT, f"{opf_path!r} is not an EPUB package document (OPF)"
        )
    base = posixpath.dirname(opf_path)
    manifest = {
        item.get("id", ""): item
        for item in opf.iterfind(f"{OPF}manifest/{OPF}item")
        if item.get("id") and item.get("href")
    }
    spine = opf.find(f"{OPF}spine")
    refs = list(spine.iterfind(f"{OPF}itemref")) if spine is not None else []
    if len(refs) > MAX_CHAPTERS:
        raise ConversionError(
            FailureReason.TOO_LARGE,
            f"the EPUB's spine lists {len(refs)} items, over the limit of {MAX_CHAPTERS}",
        )
    toc = _table_of_contents(package, manifest, spine, base)
    encrypted = _encrypted_paths(package)
    chapters: list[Chapter] = []
    budget = MAX_BOOK_TEXT_BYTES
    for ref in sorted(refs, key=lambda ref: ref.get("linear", "yes").strip() == "no"):
        item = manifest.get(ref.get("idref", ""))
        if item is None or "nav" in item.get("properties", "").split():
            continue
        if item.get("media-type", "").strip().lower() not in CHAPTER_MEDIA_TYPES:
            continue
        path = resolve_href(base, item.get("href", ""))
        if path is None or path not in package.NameToInfo:
            continue
        if path in encrypted:
            raise ConversionError(
                FailureReason.ENCRYPTED, f"the EPUB's chapters are encrypted (DRM): {path!r}"
            )
        budget -= package.getinfo(path).file_size
        if budget < 0:
            raise ConversionError(
                FailureReason.TOO_LARGE,
                f"the EPUB's chapters unpack to over {MAX_BOOK_TEXT_BYTES} bytes of text",
            )
        label, depth = toc.get(path, (None, 1))
        chapters.append(
            Chapter(
                path=path,
                label=label,
                depth=depth,
                linear=ref.get("linear", "yes").strip() != "no",
                markdown=_chapter_markdown(package, path),
            )
        )
    return Book(metadata=_metadata(opf), chapters=tuple(chapters))


def _package_document(package: zipfile.ZipFile) -> str:
    """The OPF's path: the container's first rootfile, else the package's only ``.opf``."""
    if "META-INF/container.xml" in package.NameToInfo:
        container = parse_xml(
            read_member(package, "META-INF/container.xml", _KIND, limit=MAX_XML_BYTES),
            "the EPUB's META-INF/container.xml",
        )
        for rootfile in container.iter(f"{CONTAINER}rootfile"):
            path = resolve_href("", rootfile.get("full-path", ""))
            if path:
                return path
    candidates = [name for name in package.namelist() if name.lower().endswith(".opf")]
    if len(candidates) == 1:
        return candidates[0]
    raise ConversionError(
        FailureReason.CORRUPT, "not an EPUB: no package document (META-INF/container.xml, .opf)"
    )


def _metadata(opf: Element) -> dict[str, Any]:
    """The OPF's Dublin Core metadata, by :data:`HEADER_FIELDS` name (and "subjects")."""
    metadata = opf.find(f"{OPF}metadata")
    if metadata is None:
        metadata = Element("metadata")

    def all_of(name: str) -> list[str]:
        values = (collapse_whitespace("".join(e.itertext())) for e in metadata.iter(f"{DC}{name}"))
        return list(dict.fromkeys(value for value in values if value))

    def first(name: str) -> str | None:
        values = all_of(name)
        return values[0] if values else None

    description = first("description")
    if description and "<" in description:  # Calibre writes HTML into dc:description
        description = collapse_whitespace(html_to_text(description)) or None
    unique = opf.get("unique-identifier")
    identifier = next(
        (
            collapse_whitespace("".join(e.itertext()))
            for e in metadata.iter(f"{DC}identifier")
            if unique and e.get("id") == unique
        ),
        None,
    )
    return {
        "title": first("title"),
        "authors": all_of("creator"),
        "language": first("language"),
        "publisher": first("publisher"),
        "date": first("date"),
        "description": description,
        "identifier": identifier or first("identifier"),
        "subjects": all_of("subject"),
    }


def resolve_href(base: str, href: str) -> str | None:
    """``href`` (relative to folder ``base``) as a path inside the package.

    The fragment is dropped and ``%20`` and friends decoded; None for an
    address elsewhere (``http:``, ``/abs``) or one that climbs out of the package.
    """
    parts = urlsplit(href.strip())
    if parts.scheme or parts.netloc or not parts.path or parts.path.startswith("/"):
        return None
    path = posixpath.normpath(posixpath.join(base, unquote(parts.path)))
    if path == ".." or path.startswith("../") or path.startswith("/"):
        return None
    return path


def _chapter_markdown(package: zipfile.ZipFile, path: str) -> str:
    xhtml = decode_text(read_member(package, path, _KIND, limit=MAX_CHAPTER_BYTES))
    folder = posixpath.dirname(path)
    return html_to_markdown(xhtml, image_source=lambda src: _image_path(folder, src)).markdown


def _image_path(folder: str, src: str) -> str | None:
    """An image's reference: its path in the package, or its web address; never a data URI."""
    if urlsplit(src.strip()).scheme.lower() in ("http", "https"):
        return src
    return resolve_href(folder, src)


def _encrypted_paths(package: zipfile.ZipFile) -> frozenset[str]:
    """The members ``META-INF/encryption.xml`` says are encrypted (obfuscated fonts aside)."""
    if "META-INF/encryption.xml" not in package.NameToInfo:
        return frozenset()
    root = parse_xml(
        read_member(package, "META-INF/encryption.xml", _KIND, limit=MAX_XML_BYTES),
        "the EPUB's META-INF/encryption.xml",
    )
    paths: set[str] = set()
    for data in root.iter(f"{ENCRYPTION}EncryptedData"):
        method = data.find(f"{ENCRYPTION}EncryptionMethod")
        if method is not None and method.get("Algorithm", "") in FONT_OBFUSCATION:
            continue
        for reference in data.iter(f"{ENCRYPTION}CipherReference"):
            path = resolve_href("", reference.get("URI", ""))
            if path:
                paths.add(path)
    return frozenset(paths)


# --- The table of contents -----------------------------------------------------------


def _table_of_contents(
    package: zipfile.ZipFile,
    manifest: Mapping[str, Element],
    spine: Element | None,
    base: str,
) -> dict[str, tuple[str, int]]:
    """Chapter path → (label, depth) of its first entry: from the nav document, else toc.ncx."""
    nav = next(
        (item for item in manifest.values() if "nav" in item.get("properties", "").split()), None
    )
    ncx_id = spine.get("toc", "") if spine is not None else ""
    ncx = manifest.get(ncx_id) or next(
        (
            item
            for item in manifest.values()
            if item.get("media-type", "").strip() == "application/x-dtbncx+xml"
        ),
        None,
    )
    for item, read in ((nav, _nav_entries), (ncx, _ncx_entries)):
        path = resolve_href(base, item.get("href", "")) if item is not None else None
        if path is None or path not in package.NameToInfo:
            continue
        folder = posixpath.dirname(path)
        labels: dict[str, tuple[str, int]] = {}
        for count, (href, label, depth) in enumerate(
            read(read_member(package, path, _KIND, limit=MAX_XML_BYTES))
        ):
            if count == MAX_TOC_ENTRIES:
                break
            target = resolve_href(folder, href)
            if target and label:
                labels.setdefault(target, (label, depth))
        if labels:
            return labels
    return {}


def _ncx_entries(data: bytes) -> Iterator[tuple[str, str, int]]:
    """(href, label, depth) of each ``navPoint`` of an NCX, in document order."""
    root = parse_xml(data, "the EPUB's toc.ncx")
    nav_map = root.find(f"{NCX}navMap")
    points = nav_map.findall(f"{NCX}navPoint") if nav_map is not None else []
    stack = [(point, 1) for point in reversed(points)]
    while stack:
        point, depth = stack.pop()
        content = point.find(f"{NCX}content")
        label = collapse_whitespace(child_text(point, f"{NCX}navLabel/{NCX}text") or "")
        yield (content.get("src", "") if content is not None else "", label, depth)
        stack.extend((child, depth + 1) for child in reversed(point.findall(f"{NCX}navPoint")))


def _nav_entries(data: bytes) -> Iterator[tuple[str, str, int]]:
    """(href, label, depth) of each link of an EPUB 3 navigation document's ``toc`` nav."""
    reader = _NavReader()
    reader.feed(decode_text(data))
    reader.close()
    navs = reader.navs
    toc = next((entries for is_toc, entries in navs if is_toc), navs[0][1] if navs else [])
    return iter(toc)


class _NavReader(HTMLParser):
    """The links of each top-level ``<nav>``, with their list depth, and whether it is the
    ``epub:type="toc"`` one (landmarks and page lists are navs too).

    XHTML, read as HTML for the reason chapters are: entities an XML parser refuses.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.navs: list[tuple[bool, list[tuple[str, str, int]]]] = []
        self._open = 0  # <nav> elements open
        self._lists = 0
        self._link: tuple[str, list[str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag == "nav":
            if not self._open:
                self.navs.append(("toc" in attributes.get("epub:type", "").split(), []))
            self._open += 1
        elif not self._open:
            return
        elif tag in ("ol", "ul"):
            self._lists += 1
        elif tag == "a":
            self._link = (attributes.get("href", ""), [])

    def handle_endtag(self, tag: str) -> None:
        if not self._open:
            return
        if tag == "nav":
            self._open -= 1
        elif tag in ("ol", "ul"):
            self._lists = max(0, self._lists - 1)
        elif tag == "a" and self._link is not None:
            href, text = self._link
            entry = (href, collapse_whitespace("".join(text)), max(self._lists, 1))
            self.navs[-1][1].append(entry)
            self._link = None

    def handle_data(self, data: str) -> None:
        if self._link is not None:
            self._link[1].append(data)


# --- The Markdown ----------------------------------------------------------------------


def book_markdown(book: Book) -> str:
    """The header block, then every chapter, each opening with its heading."""
    blocks = [_header_block(book.metadata)]
    blocks.extend(_chapter_block(chapter) for chapter in book.chapters)
    return "\n\n".join(block.strip("\n") for block in blocks if block.strip()) + "\n"


def _header_block(metadata: Mapping[str, Any]) -> str:
    """``**Title:** …`` lines (hard line breaks), as markitdown heads an e-book."""
    lines = []
    for name, label in HEADER_FIELDS:
        value = metadata[name]
        text = ", ".join(value) if isinstance(value, list) else value
        if text:
            lines.append(f"**{label}:** {escape_markdown_inline(collapse_whitespace(text))}")
    return "\\\n".join(lines)


def _chapter_block(chapter: Chapter) -> str:
    """The chapter's Markdown, headed by its contents label unless it opens with that heading."""
    markdown = chapter.markdown.strip("\n")
    if chapter.label is None or _opens_with(markdown, chapter.label):
        return markdown
    heading = markdown_heading(min(chapter.depth, 6), chapter.label)
    return f"{heading}\n\n{markdown}" if markdown else heading


def _opens_with(markdown: str, label: str) -> bool:
    """Whether ``markdown`` starts with a heading, or its first heading reads ``label``."""
    if markdown.startswith("#"):
        return True
    first = _first_heading(markdown)
    return first is not None and first.casefold() == collapse_whitespace(label).casefold()
