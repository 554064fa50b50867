# ruff: noqa: RUF001, RUF002  (symbols and scripts are what this measures)
"""Conversion quality: docshelf's representations against its peers', file by file.

Inputs: every readable PDF of the shared corpus (``$DOCSHELF_SHARED/corpus/pdf``)
and the documents :mod:`bench.quality_docs` builds (PDF, HTML, DOCX, Markdown),
each of which knows its truth. docshelf is measured in each of its formats
(Markdown, text, JSON). The peers give Markdown only, compared with our Markdown;
their text and JSON figures are n/a:

- markitdown (MIT; ``pip install -e '.[bench]'``): every input.
- pymupdf4llm (PDFs only; n/a for other inputs): optional, measured only when the
  user has installed it, found with importlib. It is AGPL-3.0 (as PyMuPDF, which it
  needs), so docshelf compares against it and never depends on it: it is in no
  extra of ``pyproject.toml``. ``pip install pymupdf4llm`` adds it; since PyMuPDF
  2.0 that package is an empty shim and ``pip install pymupdf`` carries the code
  (``pip install 'pymupdf4llm<2'`` installs the separate 1.x package). Without it
  its column is absent and a note says how to add it.

A peer that fails on a file is recorded as that peer's error for that file
(``errors``); the run goes on.

Measures (each a share from 0 to 1, higher is better, except ``leaks``; "n/a" when
the file has no truth for it or the format cannot carry it). Texts are compared
after NFKC and case folding:

- ``headings``: truth headings found as headings. Truth: the PDF outline (pypdf)
  for corpus PDFs, the source headings for built documents. Markdown: ATX and
  setext headings; text: a line of its own; JSON: ``outline`` titles and section
  headings. A leading section number ("2.1") is ignored on both sides, so the
  printed heading "1 Foo" matches the bookmark "Foo". Counted as multisets.
- ``tables``: truth cells recovered in table rows. For each truth row, the best
  Markdown table row (JSON: table header or row) holding at most two cells more
  than it; the cells they share (as multisets) over all truth cells.
- ``links``: distinct truth hrefs present as link targets (Markdown
  ``[text](href)``, ``<href>``, reference definitions; JSON ``links``). Truth:
  URI link annotations (pypdf) for corpus PDFs; a link drawn as two
  annotations counts once. Trailing ``/`` ignored.
- ``code``: truth code lines (non-blank, indentation kept relative to the
  block) found as lines of a fenced code block (JSON: ``code_blocks``).
- ``lists``: truth list items found as Markdown list items, nested exactly when
  the truth item is (built documents only).
- ``symbols``: non-ASCII characters that are not letters, marks, spaces or
  controls (punctuation, symbols, digits such as − ≤ ∑ “ ¹ ١), bullets and
  U+FFFD left out: sum of min(found, truth) over truth, per character. Truth:
  PDFium's page text (pypdfium2) for corpus PDFs, the visible source text for
  built documents.
- ``words``: ``\\w+`` words, the same way as a bag (line-end hyphens joined first
  on both sides): sum of min(found, truth) over truth.
- ``title``: 1 when the title (JSON ``title``; Markdown: the first level-1
  heading) is one of the expected ones, else 0 (built documents only).
- ``leaks``: occurrences of strings that must not appear (¶, U+FFFD,
  ``/Bullet``, a running head beyond its first), beyond those allowed. Lower is
  better; for corpus PDFs only U+FFFD.

The verdict per measure (Markdown, where docshelf and at least one peer have
figures): the bar on each file is the best peer figure (the highest; the lowest for
leaks). PASS when docshelf's figure reaches the bar on every file, else FAIL with
the files, the gaps and the peer that set each bar. It is a report: the exit code is
0 unless ``--strict``. ``--peers markitdown,pymupdf4llm`` chooses the peers (default:
every installed one), ``--no-peer`` measures docshelf alone.

Run: ``python -m bench quality`` (``--help`` for the options). See ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import importlib
import importlib.metadata
import importlib.util
import io
import json
import logging
import re
import sys
import textwrap
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import TYPE_CHECKING, Any, TypeVar

from pypdf import PasswordType, PdfReader

from bench.bench_convert import pdfium_page_texts
from bench.quality_docs import BuiltDocument, Truth, build_all
from bench.shared import CORPUS_PDF
from docshelf.converters import ConversionError, convert

if TYPE_CHECKING:
    from bench.markitdown_suite import SuiteReport

T = TypeVar("T")
DEFAULT_PDF_DIR = CORPUS_PDF

MEASURES = ("headings", "tables", "links", "code", "lists", "symbols", "words", "title", "leaks")
LOWER_IS_BETTER = frozenset({"leaks"})
FORMATS = ("markdown", "text", "json")
#: docshelf's (tool, format) columns of the per-file table; each peer adds (peer, "markdown").
DOCSHELF_COLUMNS = (
    ("docshelf", "markdown"),
    ("docshelf", "text"),
    ("docshelf", "json"),
)
#: Every peer the bench knows, in column order.
PEER_NAMES = ("markitdown", "pymupdf4llm")
#: How to get each peer when it is not importable.
PEER_INSTALL = {
    "markitdown": "pip install -e '.[bench]'",
    "pymupdf4llm": (
        "pip install pymupdf4llm; AGPL-3.0, so never a docshelf dependency; since PyMuPDF "
        "2.0 that package is empty and `pip install pymupdf` carries the code"
    ),
}
#: Kept for callers of the one-peer bench: docshelf's columns and markitdown's.
COLUMNS = (*DOCSHELF_COLUMNS, ("markitdown", "markdown"))


def columns_for(peers: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """The per-file table's columns: docshelf's formats, then each peer's Markdown."""
    return (*DOCSHELF_COLUMNS, *((name, "markdown") for name in peers))


BULLETS = frozenset("•◦▪▫‣∙●○■□➢►▸–-*")  # list markers, not content
_WORD = re.compile(r"\w+")
_NUMBER = re.compile(r"^\d+(\.\d+)*\.?\s+")
_HYPHEN_BREAK = re.compile(r"(\w)[-\u00ad\x02]\s*\n\s*(\w)")
_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
_LINK = re.compile(r"(?<!!)\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_AUTOLINK = re.compile(r"<((?:https?|mailto|ftp):[^>\s]+)>")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
_INLINE_LINK = re.compile(r"!?\[((?:[^\]\\]|\\.)*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|`|\*|_(?=\w)|(?<=\w)_)")
_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


# ------------------------------------------------------------------ normalizing


def fold(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def plain_inline(text: str) -> str:
    """Markdown inline syntax removed: links to their text, emphasis, escapes, ¶ anchors."""
    text = _INLINE_LINK.sub(r"\1", text)
    text = _MD_ESCAPE.sub(r"\1", _EMPHASIS.sub("", text))
    return text.replace("\N{PILCROW SIGN}", "")


def heading_key(text: str) -> str:
    """A heading compared without inline syntax and without its leading section number."""
    folded = fold(plain_inline(text))
    return _NUMBER.sub("", folded) or folded


def cell_key(text: str) -> str:
    return fold(plain_inline(text.replace("\\|", "|")))


def href_key(href: str) -> str:
    return href.strip().strip("<>").rstrip("/")


def words(text: str) -> Counter[str]:
    text = _HYPHEN_BREAK.sub(r"\1\2", unicodedata.normalize("NFKC", text))
    return Counter(_WORD.findall(text.casefold()))


def is_symbol(char: str) -> bool:
    if ord(char) < 128 or char in BULLETS or char == "\ufffd":
        return False
    return unicodedata.category(char)[0] in "PSN"


def symbols(text: str) -> Counter[str]:
    return Counter(c for c in unicodedata.normalize("NFC", text) if is_symbol(c))


def bag_recall(found: Counter[T], truth: Counter[T]) -> float | None:
    """sum(min(found, truth)) / sum(truth), per item; None without truth."""
    total = sum(truth.values())
    return sum((found & truth).values()) / total if total else None


# ----------------------------------------------------------------- what we read


@dataclass
class View:
    """What a measure looks at in one output: ``None`` fields cannot be measured."""

    text: str
    headings: list[str] | None = None
    table_rows: list[list[str]] | None = None
    links: list[str] | None = None
    code: list[str] | None = None
    list_items: list[tuple[str, int]] | None = None
    title: str | None = None
    has_title: bool = False


def markdown_view(markdown: str) -> View:
    """Headings, table rows, links, code blocks and list items of a Markdown text."""
    headings: list[str] = []
    rows: list[list[str]] = []
    code: list[str] = []
    items: list[tuple[str, int]] = []
    fence: str | None = None
    block: list[str] = []
    previous = ""
    for line in markdown.splitlines():
        if fence is not None:
            if line.strip().startswith(fence):
                code.append("\n".join(block))
                fence, block = None, []
            else:
                block.append(line)
            continue
        opened = _FENCE.match(line)
        if opened:
            fence, block = opened.group(1)[:3], []
            previous = ""
            continue
        atx = _ATX.match(line)
        setext = _SETEXT.match(line)
        stripped = line.strip()
        if atx:
            headings.append(atx.group(2))
        elif setext and previous.strip() and not previous.lstrip().startswith(("|", "-", "*")):
            headings.append(previous.strip())
        elif stripped.startswith("|") or (stripped.count("|") >= 2 and rows and previous):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", stripped.strip("|"))]
            if not all(re.fullmatch(r":?-{2,}:?", c) or not c for c in cells):
                rows.append(cells)
        else:
            item = _LIST_ITEM.match(line)
            if item:
                items.append((item.group(2), 1 if len(item.group(1).expandtabs(4)) >= 2 else 0))
        previous = line
    if fence is not None:
        code.append("\n".join(block))
    links = _LINK.findall(markdown) + _AUTOLINK.findall(markdown) + _REFERENCE.findall(markdown)
    first_h1 = next(
        (m.group(2) for m in map(_ATX.match, _unfenced(markdown)) if m and m.group(1) == "#"), None
    )
    return View(markdown, headings, rows, links, code, items, first_h1, has_title=True)


def _unfenced(markdown: str) -> Iterable[str]:
    fence: str | None = None
    for line in markdown.splitlines():
        opened = _FENCE.match(line)
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
        elif opened:
            fence = opened.group(1)[:3]
        else:
            yield line


def text_view(text: str) -> View:
    """Plain text: headings are lines of their own; nothing else is structured."""
    return View(text, headings=[line for line in text.splitlines() if line.strip()])


def json_view(document: dict[str, Any]) -> View:
    """The docshelf.document/v1 JSON: outline, tables, links, code blocks, title."""
    parts: list[str] = []
    for page in document.get("pages") or []:
        parts.append(page.get("text", ""))
    for section in document.get("sections") or []:
        if section.get("heading"):
            parts.append(section["heading"])
        parts.append(section.get("text", ""))
    headings = [entry["title"] for entry in document.get("outline") or []]
    if not headings:
        headings = [s["heading"] for s in document.get("sections") or [] if s.get("heading")]
    rows: list[list[str]] = []
    for table in document.get("tables") or []:
        rows.extend([table.get("header") or [], *(table.get("rows") or [])])
    return View(
        "\n".join(parts),
        headings=headings,
        table_rows=rows,
        links=[link["href"] for link in document.get("links") or []],
        code=[block["code"] for block in document.get("code_blocks") or []],
        title=document.get("title"),
        has_title=True,
    )


# --------------------------------------------------------------------- measures


def heading_recall(truth: Sequence[str], found: Sequence[str] | None) -> float | None:
    if not truth or found is None:
        return None
    return bag_recall(Counter(map(heading_key, found)), Counter(map(heading_key, truth)))


def table_recall(
    truth: Sequence[Sequence[Sequence[str]]], rows: Sequence[Sequence[str]] | None
) -> float | None:
    truth_rows = [[c for c in map(cell_key, row) if c] for table in truth for row in table]
    total = sum(len(row) for row in truth_rows)
    if not total or rows is None:
        return None
    candidates = [Counter(c for c in map(cell_key, row) if c) for row in rows]
    found = 0
    for row in truth_rows:
        wanted = Counter(row)
        fitting = [c for c in candidates if sum(c.values()) <= len(row) + 2]
        found += max((sum((wanted & c).values()) for c in fitting), default=0)
    return found / total


def link_recall(truth: Sequence[str], found: Sequence[str] | None) -> float | None:
    """Share of the distinct targets kept: a link drawn as two annotations (one
    per rectangle of its text) is one link to a reader."""
    if not truth or found is None:
        return None
    wanted = set(map(href_key, truth))
    return len(wanted & set(map(href_key, found))) / len(wanted)


def _code_lines(block: str) -> list[str]:
    return [line.rstrip() for line in textwrap.dedent(block).splitlines() if line.strip()]


def code_recall(truth: Sequence[str], found: Sequence[str] | None) -> float | None:
    if not truth or found is None:
        return None
    have = Counter(line for block in found for line in _code_lines(block))
    return bag_recall(have, Counter(line for block in truth for line in _code_lines(block)))


def list_recall(
    truth: Sequence[tuple[str, int]], found: Sequence[tuple[str, int]] | None
) -> float | None:
    if not truth or found is None:
        return None
    have = Counter((cell_key(text), min(depth, 1)) for text, depth in found)
    return bag_recall(have, Counter((cell_key(text), min(depth, 1)) for text, depth in truth))


def title_match(titles: Sequence[str], view: View) -> float | None:
    if not titles or not view.has_title:
        return None
    return 1.0 if view.title and heading_key(view.title) in map(heading_key, titles) else 0.0


def leak_count(forbidden: Sequence[tuple[str, int]], text: str) -> float | None:
    if not forbidden:
        return None
    return float(sum(max(0, text.count(s) - allowed) for s, allowed in forbidden))


def measure(truth: Truth, view: View) -> dict[str, float | None]:
    """Every measure of one output against one truth."""
    return {
        "headings": heading_recall(truth.headings, view.headings),
        "tables": table_recall(truth.tables, view.table_rows),
        "links": link_recall(truth.links, view.links),
        "code": code_recall(truth.code, view.code),
        "lists": list_recall(truth.lists, view.list_items),
        "symbols": bag_recall(symbols(view.text), symbols(truth.text)) if truth.text else None,
        "words": bag_recall(words(view.text), words(truth.text)) if truth.text else None,
        "title": title_match(truth.titles, view),
        "leaks": leak_count(truth.forbidden, view.text),
    }


# ------------------------------------------------------------------ the inputs


@dataclass
class Source:
    name: str
    mime_type: str
    data: bytes
    truth: Truth
    note: str = ""


def pdfium_text(data: bytes) -> str:
    """PDFium's raw text of every page, as the conversion benchmark reads it."""
    return "\n".join(pdfium_page_texts(Path("truth.pdf"), data))


def pdf_truth(data: bytes) -> tuple[Truth, str]:
    """Outline titles and URI links (pypdf), text (PDFium) of a corpus PDF, and a note."""
    notes = []
    reader = PdfReader(io.BytesIO(data), strict=False)
    headings: list[str] = []
    links: list[str] = []
    try:
        stack: list[Any] = [reader.outline]
        flat: list[Any] = []
        while stack:  # depth first, document order
            item = stack.pop(0)
            if isinstance(item, list):
                stack[:0] = item
            else:
                flat.append(item)
        headings = [str(item.title) for item in flat if getattr(item, "title", None)]
    except Exception as exc:
        notes.append(f"outline unreadable ({type(exc).__name__})")
    try:
        for page in reader.pages:
            for annotation in page.get("/Annots") or []:
                annotation = annotation.get_object()
                action = annotation.get("/A")
                if annotation.get("/Subtype") == "/Link" and action is not None:
                    uri = action.get_object().get("/URI")
                    if uri:
                        links.append(str(uri))
    except Exception as exc:
        notes.append(f"annotations unreadable ({type(exc).__name__})")
    try:
        text = pdfium_text(data)
    except Exception as exc:
        text = ""
        notes.append(f"PDFium cannot open it ({type(exc).__name__}): no word/symbol truth")
    truth = Truth(
        headings=tuple(headings), links=tuple(links), text=text, forbidden=(("\ufffd", 0),)
    )
    return truth, "; ".join(notes)


def corpus_sources(
    pdf_dir: Path, notes: list[str], patterns: Sequence[str] | None = None
) -> list[Source]:
    sources = []
    for path in sorted(pdf_dir.glob("*.pdf")):
        if patterns and not matches(path.name, patterns):
            continue
        data = path.read_bytes()
        try:
            reader = PdfReader(io.BytesIO(data), strict=False)
            if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
                notes.append(f"skipped {path.name}: encrypted")
                continue
        except Exception as exc:
            notes.append(f"{path.name}: pypdf cannot open it ({type(exc).__name__})")
        truth, note = pdf_truth(data)
        sources.append(Source(path.name, "application/pdf", data, truth, note))
    return sources


def built_sources(documents: Iterable[BuiltDocument]) -> list[Source]:
    return [Source(d.name, d.mime_type, d.data, d.truth) for d in documents]


# --------------------------------------------------------------------- the tools


def docshelf_views(source: Source) -> dict[str, View]:
    """docshelf's Markdown, text and JSON of a source (a Markdown/text source is its own)."""
    result = convert(source.data, source.mime_type, source.name)
    views: dict[str, View] = {}
    original = source.data.decode("utf-8", "replace")
    markdown = result.get("text/markdown")
    if markdown is not None:
        views["markdown"] = markdown_view(markdown.data.decode())
    elif source.mime_type == "text/markdown":
        views["markdown"] = markdown_view(original)
    text = result.get("text/plain")
    views["text"] = text_view(text.data.decode() if text is not None else original)
    document = result.get("application/json")
    if document is not None:
        views["json"] = json_view(json.loads(document.data))
    return views


Peer = Callable[[Source], str]


@dataclass(frozen=True)
class PeerTool:
    """A peer converter: its name (the column is ``NAME/markdown``), its Markdown for a
    source, and the source MIME types it takes (``None``: all; others are n/a)."""

    name: str
    convert: Peer
    mime_types: frozenset[str] | None = None
    version: str = ""

    def takes(self, source: Source) -> bool:
        return self.mime_types is None or source.mime_type in self.mime_types


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return ""


def markitdown_peer() -> Peer | None:
    """markitdown's Markdown for a source, or None when markitdown is not installed."""
    try:
        from markitdown import MarkItDown, StreamInfo
    except ImportError:
        return None
    engine = MarkItDown(enable_plugins=False)

    def run(source: Source) -> str:
        info = StreamInfo(
            mimetype=source.mime_type,
            extension=Path(source.name).suffix,
            filename=Path(source.name).name,
            charset="utf-8" if source.mime_type.startswith("text/") else None,
        )
        return engine.convert_stream(io.BytesIO(source.data), stream_info=info).markdown

    return run


def pymupdf4llm_peer() -> Peer | None:
    """pymupdf4llm's Markdown for a PDF, or None when it is not importable.

    AGPL-3.0: imported only when the user installed it (never a dependency). Called
    with its defaults, as a user would. Its parser's messages (a missing OCR engine)
    go to stdout: kept out of the report, which may be JSON.
    """
    if importlib.util.find_spec("pymupdf4llm") is None:
        return None
    try:
        pymupdf4llm = importlib.import_module("pymupdf4llm")
        pymupdf = importlib.import_module("pymupdf")
    except Exception:  # e.g. a pymupdf4llm 1.x beside a PyMuPDF of another version
        return None

    chatter = io.StringIO()
    if hasattr(pymupdf, "set_messages"):  # pymupdf.message() holds the sys.stdout of its import
        pymupdf.set_messages(stream=chatter)

    def run(source: Source) -> str:
        chatter.seek(0)
        chatter.truncate()
        with contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
            document = pymupdf.open(stream=source.data, filetype="pdf")
            try:
                return str(pymupdf4llm.to_markdown(document))
            finally:
                document.close()

    return run


def load_peers(names: Sequence[str]) -> tuple[list[PeerTool], dict[str, str]]:
    """The named peers that are importable, and for the others how to add them."""
    factories: dict[str, Callable[[], Peer | None]] = {
        "markitdown": markitdown_peer,
        "pymupdf4llm": pymupdf4llm_peer,
    }
    peers: list[PeerTool] = []
    missing: dict[str, str] = {}
    for name in names:
        run = factories[name]()
        if run is None:
            missing[name] = PEER_INSTALL[name]
        elif name == "pymupdf4llm":
            version = _version("pymupdf")
            peers.append(
                PeerTool(
                    name,
                    run,
                    frozenset({"application/pdf"}),
                    f"{_version('pymupdf4llm')} (PyMuPDF {version})" if version else "",
                )
            )
        else:
            peers.append(PeerTool(name, run, None, _version(name)))
    return peers, missing


# ----------------------------------------------------------------------- report

Figures = dict[str, float | None]


@dataclass
class FileResult:
    name: str
    kind: str  # the source format: pdf, html, docx, md
    note: str = ""
    figures: dict[str, Figures] = field(default_factory=dict)  # "docshelf/markdown" -> measures
    errors: dict[str, str] = field(default_factory=dict)


def evaluate(
    source: Source, peer: Peer | None = None, peers: Sequence[PeerTool] = ()
) -> FileResult:
    """docshelf's figures for a source, and each peer's that takes it. ``peer`` alone
    is markitdown (the one-peer call)."""
    result = FileResult(source.name, Path(source.name).suffix.lstrip(".").lower(), source.note)
    try:
        for fmt, view in docshelf_views(source).items():
            result.figures[f"docshelf/{fmt}"] = measure(source.truth, view)
    except ConversionError as exc:
        result.errors["docshelf"] = str(exc)
    tools = [*([PeerTool("markitdown", peer)] if peer is not None else []), *peers]
    for tool in tools:
        if not tool.takes(source):
            continue  # n/a: no column figures
        try:
            result.figures[f"{tool.name}/markdown"] = measure(
                source.truth, markdown_view(tool.convert(source))
            )
        except Exception as exc:  # a failing file is reported, not fatal
            result.errors[tool.name] = f"{type(exc).__name__}: {exc}"[:120]
    return result


def show(value: float | None, measure_name: str) -> str:
    if value is None:
        return "n/a"
    if measure_name in LOWER_IS_BETTER and value == int(value):
        return f"{value:.0f}"
    return f"{value:.3f}"


def print_file(result: FileResult, columns: Sequence[tuple[str, str]] = COLUMNS) -> None:
    print(f"\n## {result.name}" + (f"  ({result.note})" if result.note else ""))
    for tool, error in result.errors.items():
        print(f"  {tool} failed: {error}")
    labels = [f"{tool} {fmt}" for tool, fmt in columns]
    print(f"| {'measure':<9} | " + " | ".join(f"{label:>19}" for label in labels) + " |")
    print(f"|{'-' * 11}|" + "|".join("-" * 20 + ":" for _ in labels) + "|")
    for name in MEASURES:
        cells = []
        for tool, fmt in columns:
            figures = result.figures.get(f"{tool}/{fmt}")
            cells.append(show(figures.get(name) if figures else None, name))
        if all(cell == "n/a" for cell in cells):
            continue
        print(f"| {name:<9} | " + " | ".join(f"{cell:>19}" for cell in cells) + " |")


@dataclass
class Loss:
    """A file where docshelf's Markdown is behind the bar: the best peer figure."""

    file: str
    docshelf: float
    best: float
    peer: str  # the peer that set the bar (the first in peer order, on a tie)
    peers: dict[str, float]  # every peer's figure on that file


@dataclass
class PeerTally:
    """docshelf's Markdown against one peer alone, for one measure."""

    files: int = 0
    losses: list[str] = field(default_factory=list)
    leads: list[str] = field(default_factory=list)


@dataclass
class Verdict:
    measure: str
    files: int  # files where docshelf and at least one peer have a figure
    losses: list[Loss]
    leads: list[str]  # files where docshelf is ahead of the best peer
    by_peer: dict[str, PeerTally] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.losses


def _peers_in(results: Sequence[FileResult]) -> list[str]:
    seen = {column.split("/")[0] for r in results for column in r.figures}
    return [*(p for p in PEER_NAMES if p in seen), *sorted(seen - {"docshelf", *PEER_NAMES})]


def best_peer(name: str, figures: dict[str, float]) -> tuple[str, float]:
    """The peer setting the bar for a measure: highest figure, lowest for leaks;
    the first in ``figures``' order on a tie."""
    pick = min if name in LOWER_IS_BETTER else max
    bar = pick(figures.values())
    return next(p for p, v in figures.items() if v == bar), bar


def verdicts(results: Sequence[FileResult], peers: Sequence[str] | None = None) -> list[Verdict]:
    """Per measure: the files where docshelf's Markdown is behind (and ahead of) the best
    peer's Markdown on that file; ``peers`` defaults to those with figures."""
    peer_names = list(peers) if peers is not None else _peers_in(results)
    out = []
    sign = {name: -1 if name in LOWER_IS_BETTER else 1 for name in MEASURES}
    for name in MEASURES:
        losses: list[Loss] = []
        leads: list[str] = []
        by_peer = {peer: PeerTally() for peer in peer_names}
        files = 0
        for result in results:
            ours = result.figures.get("docshelf/markdown", {}).get(name)
            theirs = {
                peer: value
                for peer in peer_names
                if (value := result.figures.get(f"{peer}/markdown", {}).get(name)) is not None
            }
            if ours is None or not theirs:
                continue
            files += 1
            for peer, value in theirs.items():
                tally = by_peer[peer]
                tally.files += 1
                if sign[name] * (ours - value) < -1e-9:
                    tally.losses.append(result.name)
                elif sign[name] * (ours - value) > 1e-9:
                    tally.leads.append(result.name)
            peer, bar = best_peer(name, theirs)
            if sign[name] * (ours - bar) < -1e-9:
                losses.append(Loss(result.name, ours, bar, peer, theirs))
            elif sign[name] * (ours - bar) > 1e-9:
                leads.append(result.name)
        if files:
            out.append(Verdict(name, files, losses, leads, by_peer))
    return out


def summary(
    results: Sequence[FileResult], columns: Sequence[tuple[str, str]] | None = None
) -> dict[str, dict[str, dict[str, float]]]:
    """Means per source kind and column: {kind: {"docshelf/markdown": {measure: mean}}}.
    A peer's means are over the files it has a figure for (pymupdf4llm: PDFs)."""
    table: dict[str, dict[str, dict[str, float]]] = {}
    kinds = sorted({r.kind for r in results})
    if columns is None:
        columns = columns_for(_peers_in(results))
    for kind in [*kinds, "all"]:
        chosen = [r for r in results if kind in ("all", r.kind)]
        for tool, fmt in columns:
            column = f"{tool}/{fmt}"
            means = {}
            for name in MEASURES:
                values = [
                    v for r in chosen if (v := r.figures.get(column, {}).get(name)) is not None
                ]
                if values:
                    means[name] = mean(values)
            if means:
                table.setdefault(kind, {})[column] = means
    return table


def print_summary(
    results: Sequence[FileResult],
    verdict_list: Sequence[Verdict],
    peers: Sequence[str] | None = None,
) -> None:
    peer_names = list(peers) if peers is not None else _peers_in(results)
    print("\n# Summary (means over the files with a figure)\n")
    for kind, columns in summary(results, columns_for(peer_names)).items():
        for column, means in columns.items():
            figures = ", ".join(f"{name} {show(value, name)}" for name, value in means.items())
            print(f"{kind:<5} {column:<20} {figures}")
    against = (
        f"the best peer Markdown ({', '.join(peer_names)})"
        if len(peer_names) > 1
        else f"{''.join(peer_names) or 'peer'} Markdown"
    )
    print(f"\n# docshelf Markdown vs {against}, every file\n")
    if not verdict_list:
        print("no peer figures (no peer installed or chosen)")
    for verdict in verdict_list:
        state = "PASS" if verdict.passed else "FAIL"
        line = f"{verdict.measure:<9} {state} on {verdict.files} files"
        if verdict.leads:
            line += f"; docshelf ahead on {len(verdict.leads)}"
        if len(peer_names) > 1:
            line += "; " + ", ".join(
                f"vs {peer} {len(t.losses)} behind/{len(t.leads)} ahead of {t.files}"
                for peer, t in verdict.by_peer.items()
                if t.files
            )
        print(line)
        for loss in verdict.losses:
            others = ", ".join(
                f"{peer} {show(value, verdict.measure)}" for peer, value in loss.peers.items()
            )
            print(
                f"    behind on {loss.file}: {show(loss.docshelf, verdict.measure)} vs "
                f"{show(loss.best, verdict.measure)} ({loss.docshelf - loss.best:+.3f}), "
                f"bar set by {loss.peer} ({others})"
            )


def matches(name: str, patterns: Sequence[str]) -> bool:
    """Whether ``name`` matches a glob, or holds a substring, of ``patterns``."""
    return any(
        fnmatch.fnmatch(name, p) or fnmatch.fnmatch(Path(name).name, p) or p in name
        for p in patterns
    )


def select(
    sources: Sequence[Source],
    patterns: Sequence[str] | None,
    exclude: Sequence[str] | None = None,
) -> list[Source]:
    """The sources ``patterns`` name (all without), less those ``exclude`` names."""
    return [
        s
        for s in sources
        if (not patterns or matches(s.name, patterns))
        and not (exclude and matches(s.name, exclude))
    ]


def peer_list(value: str) -> list[str]:
    """``--peers a,b``: known peer names, in the order given."""
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in PEER_NAMES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown peer {', '.join(unknown) or '(none)'}: choose from {', '.join(PEER_NAMES)}"
        )
    return list(dict.fromkeys(names))


def loss_json(loss: Loss) -> dict[str, Any]:
    """A loss as JSON: the file, docshelf's figure, the bar, the peer that set it, and
    each peer's figure under its name (so ``markitdown`` stays where it was)."""
    return {
        "file": loss.file,
        "docshelf": loss.docshelf,
        "best": loss.best,
        "peer": loss.peer,
        **loss.peers,
    }


def markitdown_suite(
    patterns: Sequence[str] | None,
    exclude: Sequence[str] | None,
    with_markitdown: bool,
    notes: list[str],
) -> SuiteReport | None:
    """markitdown's test suite on the selected ``markitdown/*`` files (None when none is
    selected or the suite is absent, with a note): :mod:`bench.markitdown_suite`.
    Imported here, not above: that module builds on this one's measures."""
    from bench import markitdown_suite as suite

    if not (suite.SUITE_DIR / "vectors.json").is_file():
        if not patterns or any(p.startswith(suite.PREFIX) for p in patterns):
            notes.append(
                f"no markitdown suite at {suite.SUITE_DIR} (set DOCSHELF_SHARED; .ci/run has it)"
            )
        return None
    paths = suite.suite_files(suite.SUITE_DIR, patterns, exclude)
    if not paths:
        return None
    peer = suite.Markitdown.load() if with_markitdown else None
    return suite.run(suite.SUITE_DIR, paths, peer)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--pdf-dir", type=Path, default=DEFAULT_PDF_DIR)
    parser.add_argument(
        "--files",
        nargs="+",
        metavar="PATTERN",
        help="only files whose name matches (glob or substring; built ones are built/NAME)",
    )
    parser.add_argument(
        "--exclude",
        nargs="+",
        metavar="PATTERN",
        help="leave out files whose name matches (e.g. 'markitdown/*': markitdown's suite)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--no-peer", action="store_true", help="docshelf alone, no peer")
    chosen.add_argument(
        "--peers",
        type=peer_list,
        metavar="NAME,NAME",
        help=f"the peers to compare with ({','.join(PEER_NAMES)}; default: every installed "
        "one); a peer named here must be installed",
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when a measure FAILs")
    args = parser.parse_args(argv)
    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    logging.getLogger("pypdf").setLevel(logging.ERROR)

    notes: list[str] = []
    peers: list[PeerTool] = []
    if not args.no_peer:
        peers, missing = load_peers(args.peers or PEER_NAMES)
        if args.peers and missing:
            parser.error(
                "; ".join(f"{name} is not importable ({how})" for name, how in missing.items())
            )
        for name, how in missing.items():
            notes.append(f"{name} is not importable ({how}): no {name} column")
    if args.pdf_dir.is_dir():
        sources = corpus_sources(args.pdf_dir, notes, args.files)
    else:
        sources = []
        notes.append(f"no corpus at {args.pdf_dir} (set DOCSHELF_SHARED): built documents only")
    sources = select([*sources, *built_sources(build_all())], args.files, args.exclude)
    results = [evaluate(source, peers=peers) for source in sources]
    peer_names = [peer.name for peer in peers]
    verdict_list = verdicts(results, peer_names)
    suite = markitdown_suite(args.files, args.exclude, "markitdown" in peer_names, notes)
    if args.json:
        print(
            json.dumps(
                {
                    "notes": notes,
                    "peers": {peer.name: peer.version for peer in peers},
                    "files": [
                        {
                            "name": r.name,
                            "kind": r.kind,
                            "note": r.note,
                            "errors": r.errors,
                            "figures": r.figures,
                        }
                        for r in results
                    ],
                    "summary": summary(results, columns_for(peer_names)),
                    "markitdown_suite": suite.as_json() if suite else None,
                    "verdicts": [
                        {
                            "measure": v.measure,
                            "passed": v.passed,
                            "files": v.files,
                            "losses": [loss_json(loss) for loss in v.losses],
                            "leads": v.leads,
                            "by_peer": {
                                peer: {
                                    "files": t.files,
                                    "losses": t.losses,
                                    "leads": t.leads,
                                }
                                for peer, t in v.by_peer.items()
                            },
                        }
                        for v in verdict_list
                    ],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        for note in notes:
            print(f"note: {note}")
        if peers:
            print("peers: " + ", ".join(f"{p.name} {p.version}".strip() for p in peers))
        for result in results:
            print_file(result, columns_for(peer_names))
        if results:
            print_summary(results, verdict_list, peer_names)
        if suite:
            suite.show()
    failed = any(not v.passed for v in verdict_list) or bool(suite and not suite.passed)
    return 1 if args.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
