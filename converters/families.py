"""Format families: the words people use for kinds of documents ("pdf", "slides", "image"),
each a set of the MIME types the index records (issue 28, ``list_documents``'s ``type``).

A family is decided by a document's MIME type alone (the type detection gave it and
``resources/list`` shows), so a filter on a family is a filter on an indexed column:
the types the family's converters accept, or a type prefix (``image/``) for the
families whose converter takes a whole top-level type. The table follows the rows of
docs/formats.md and is built from the converters' own type sets, so a type a converter
learns joins its family with it. A few formats docshelf lists but cannot read (legacy
``.doc`` and ``.ppt``, :data:`converters.registry.UNSUPPORTED_REASONS`) belong to their
family too: the family says what a file is, not whether it converts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from docshelf.converters.archive import TAR_MIME_TYPES, ZIP_MIME_TYPES
from docshelf.converters.base import APPLICATION_JSON, TEXT_PLAIN, base_mime_type
from docshelf.converters.csv_ import CSV_MIME_TYPES
from docshelf.converters.epub import EPUB_MIME_TYPE
from docshelf.converters.feed import ATOM_MIME_TYPE, RSS_MIME_TYPE
from docshelf.converters.formats import TEXTUAL_APPLICATION_TYPES
from docshelf.converters.html.converter import HTML_MIME_TYPES
from docshelf.converters.html.docx import DOCX_MIME_TYPE
from docshelf.converters.mail.eml import EML_MIME_TYPES
from docshelf.converters.mail.msg import MSG_MIME_TYPES
from docshelf.converters.markdown.converter import MARKDOWN_MIME_TYPES
from docshelf.converters.markup.adoc import ADOC_MIME_TYPES
from docshelf.converters.markup.org import ORG_MIME_TYPES
from docshelf.converters.markup.rst import RST_MIME_TYPES
from docshelf.converters.notebook import NOTEBOOK_MIME_TYPES
from docshelf.converters.odf.odp import ODP_MIME_TYPES
from docshelf.converters.odf.odt import ODT_MIME_TYPES
from docshelf.converters.pdf.converter import PDF_MIME_TYPES
from docshelf.converters.pptx_ import PPTX_MIME_TYPES
from docshelf.converters.rtf import RTF_MIME_TYPES
from docshelf.converters.sheets.converter import SPREADSHEET_MIME_TYPES

#: Formats people keep that no converter reads, by the family they belong to.
LEGACY_WORD = "application/msword"
LEGACY_POWERPOINT = "application/vnd.ms-powerpoint"


@dataclass(frozen=True, slots=True)
class Family:
    """One kind of document: its name, how docs/formats.md calls it, and its types.

    ``mime_types`` are matched exactly; ``prefix`` (``"image/"``) takes every type
    under it that no family lists by name (an SVG drawing is an image, a ``text/csv``
    file a spreadsheet and not text).
    """

    name: str
    title: str
    mime_types: frozenset[str] = frozenset()
    prefix: str | None = None


def _lower(types: Iterable[str]) -> frozenset[str]:
    """The index records types in lowercase (``base_mime_type``); some sets spell them as
    their registrations do (``macroEnabled``)."""
    return frozenset(base_mime_type(t) for t in types)


_MARKUP = MARKDOWN_MIME_TYPES | RST_MIME_TYPES | ORG_MIME_TYPES | ADOC_MIME_TYPES

#: In the order of docs/formats.md; "markdown" is a part of "markup", the one most asked for.
FAMILIES: tuple[Family, ...] = (
    Family("pdf", "PDF documents", _lower(PDF_MIME_TYPES)),
    Family("word", "Word documents (.docx, .doc)", _lower({DOCX_MIME_TYPE, LEGACY_WORD})),
    Family(
        "slides",
        "presentations (.pptx, .odp, .ppt)",
        _lower(PPTX_MIME_TYPES | ODP_MIME_TYPES | {LEGACY_POWERPOINT}),
    ),
    Family(
        "spreadsheet",
        "spreadsheets and tables (.xlsx, .xls, .ods, .csv, .tsv)",
        _lower(SPREADSHEET_MIME_TYPES | CSV_MIME_TYPES),
    ),
    Family("odt", "OpenDocument text (.odt)", _lower(ODT_MIME_TYPES)),
    Family("rtf", "rich text (.rtf)", _lower(RTF_MIME_TYPES)),
    Family("ebook", "e-books (.epub)", _lower({EPUB_MIME_TYPE})),
    Family("mail", "mail (.eml, .msg)", _lower(EML_MIME_TYPES | MSG_MIME_TYPES)),
    Family("markup", "markup (.md, .rst, .org, .adoc)", _lower(_MARKUP)),
    Family("markdown", "Markdown (.md)", _lower(MARKDOWN_MIME_TYPES)),
    Family("notebook", "Jupyter notebooks (.ipynb)", _lower(NOTEBOOK_MIME_TYPES)),
    Family("feed", "RSS and Atom feeds", _lower({RSS_MIME_TYPE, ATOM_MIME_TYPE})),
    Family("html", "web pages (.html)", _lower(HTML_MIME_TYPES)),
    Family("json", "JSON data (.json)", _lower({APPLICATION_JSON})),
    # The text converter's: plain text, source code, XML, YAML (whatever text/* is left).
    Family(
        "text",
        "plain text and code (.txt, .py, .xml, …)",
        _lower(TEXTUAL_APPLICATION_TYPES | {TEXT_PLAIN}),
        prefix="text/",
    ),
    Family("archive", "archives (.zip, .tar.gz, …)", _lower(ZIP_MIME_TYPES | TAR_MIME_TYPES)),
    Family("image", "pictures and drawings", prefix="image/"),
    Family("audio", "sound", prefix="audio/"),
    Family("video", "films", prefix="video/"),
)

FAMILY_BY_NAME: Mapping[str, Family] = {family.name: family for family in FAMILIES}

#: Every type some family names exactly: what a family's prefix leaves to the others.
NAMED_TYPES: frozenset[str] = frozenset().union(*(family.mime_types for family in FAMILIES))


def in_family(family: Family, mime_type: str) -> bool:
    """Whether a document of ``mime_type`` (as the index records it) is one of ``family``."""
    mime = base_mime_type(mime_type)
    if mime in family.mime_types:
        return True
    return family.prefix is not None and mime.startswith(family.prefix) and mime not in NAMED_TYPES


def family_named(name: str) -> Family | None:
    """The family called ``name``, lowercase, or by its plural or singular ("images",
    "slide"): how people and models ask for one."""
    for candidate in (name, name.removesuffix("s"), name + "s"):
        family = FAMILY_BY_NAME.get(candidate)
        if family is not None:
            return family
    return None
