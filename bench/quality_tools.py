"""The tools the quality benchmark compares: docshelf, and the peers installed.

docshelf is read in its three formats (Markdown, text, JSON) through the converter a
shelf would pick; each peer gives Markdown. Peers: markitdown (MIT, the ``bench``
extra), and pymupdf4llm (PDFs only), AGPL-3.0 like the PyMuPDF it needs, so measured
only when the user installed it and never a docshelf dependency.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import importlib.util
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.quality_measures import Truth, View, json_view, markdown_view, text_view
from docshelf.converters import ConversionError, FailureReason, find_converter
from docshelf.converters import Source as ConverterSource
from docshelf.converters.registry import unsupported_reason

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


@dataclass
class Source:
    """One input of the bench: its bytes, its truth, and how the tools are to read it."""

    name: str
    mime_type: str
    data: bytes
    truth: Truth
    note: str = ""
    #: docshelf converts with OCR allowed (``Source(ocr=True)``, the second pass a shelf
    #: queues): the scans, whose text only OCR can read.
    ocr: bool = False
    #: The page's address, given to markitdown as its own suite gives it (it picks
    #: markitdown's Wikipedia and Bing converters); docshelf gets the file alone.
    url: str | None = None


def docshelf_views(source: Source) -> dict[str, View]:
    """docshelf's Markdown, text and JSON of a source (a Markdown/text source is its own)."""
    converter = find_converter(source.mime_type, source.name)
    if converter is None:
        raise ConversionError(
            FailureReason.UNSUPPORTED, unsupported_reason(source.mime_type, source.name)
        )
    result = converter.convert(
        ConverterSource.of(source.name, source.mime_type, source.data, ocr=source.ocr)
    )
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
            url=source.url,
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
