"""The derived formats (DESIGN D4), one row each, and which MIME types are text.

Every document is offered in these formats besides its original. What the rest
of docshelf needs to know about a format is its row: the converters' canonical
order (:data:`DERIVED_MIME_TYPES`), the role it plays in content negotiation
(``app.negotiation``, which ``app.mcp.documents`` feeds), and whether it
travels as MCP ``text`` or as a base64 ``blob`` (:func:`is_textual`, also the
rule detection uses to tell text from binary), what the background builds
(:data:`CHEAP_FORMATS`) and what parts are cut from (:data:`PART_SOURCES`). A part
of a document (``?pages=``, ``?section=``) is offered in every derived format.
Adding a format is a row here and its producers in the converters (a whole
document's, and a part's in :mod:`converters.part_formats`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from docshelf.converters.base import (
    APPLICATION_JSON,
    APPLICATION_PDF,
    TEXT_MARKDOWN,
    TEXT_PLAIN,
    base_mime_type,
)


class Role(StrEnum):
    """Which representation of a document a variant is; the value is its ``format=`` tag."""

    ORIGINAL = "original"
    MARKDOWN = "markdown"
    TEXT = "text"
    JSON = "json"
    PDF = "pdf"


@dataclass(frozen=True, slots=True)
class DerivedFormat:
    """One derived format.

    ``aliases``: other names of the type an *original* may carry, so that it can
    stand in for the format (a ``text/x-markdown`` file is the Markdown).
    ``default_rank``: its place, after the original, in the order a client with
    no preferences gets (1 first). ``original_first``: an original of this type
    is preferred even over the derived one (a PDF the author made beats one
    docshelf rendered). ``name``: how the negotiation instructions say it.
    ``rendered``: made by laying out pages (costly): under the lazy render policy
    only built when a read asks for it. ``part_source``: a document's parts are cut
    from it, so a read of a part waits for it to be built.
    """

    mime_type: str
    role: Role
    textual: bool
    default_rank: int
    name: str
    aliases: frozenset[str] = frozenset()
    original_first: bool = False
    rendered: bool = False
    part_source: bool = False

    @property
    def mime_types(self) -> frozenset[str]:
        """The format's type and its aliases."""
        return self.aliases | {self.mime_type}


#: In the canonical order of D4, which is the order converters produce them in.
DERIVED_FORMATS: tuple[DerivedFormat, ...] = (
    DerivedFormat(TEXT_PLAIN, Role.TEXT, textual=True, default_rank=2, name="text"),
    DerivedFormat(
        TEXT_MARKDOWN,
        Role.MARKDOWN,
        textual=True,
        default_rank=1,
        name="Markdown",
        aliases=frozenset({"text/x-markdown"}),
        part_source=True,
    ),
    DerivedFormat(
        APPLICATION_JSON, Role.JSON, textual=True, default_rank=3, name="JSON", part_source=True
    ),
    DerivedFormat(
        APPLICATION_PDF,
        Role.PDF,
        textual=False,
        default_rank=4,
        name="PDF",
        original_first=True,
        rendered=True,
    ),
)

#: The formats every document is offered in (DESIGN D4), besides its original.
DERIVED_MIME_TYPES: tuple[str, ...] = tuple(f.mime_type for f in DERIVED_FORMATS)
#: The negotiation role of each derived representation, by its MIME type.
ROLE_BY_MIME_TYPE: Mapping[str, Role] = {f.mime_type: f.role for f in DERIVED_FORMATS}
#: What the background builds under the lazy render policy: every format but the rendered.
CHEAP_FORMATS: tuple[str, ...] = tuple(f.mime_type for f in DERIVED_FORMATS if not f.rendered)
#: The formats a document's parts are cut from (besides a PDF's original).
PART_SOURCES: frozenset[str] = frozenset(f.mime_type for f in DERIVED_FORMATS if f.part_source)
#: The ``format=`` tags of the textual formats: those a tool's text result can take.
TEXTUAL_ROLES: frozenset[Role] = frozenset(f.role for f in DERIVED_FORMATS if f.textual)

_TEXTUAL_BY_MIME_TYPE: Mapping[str, bool] = {f.mime_type: f.textual for f in DERIVED_FORMATS}
#: Textual types outside ``text/*`` and the ``+json``/``+xml`` suffixes, besides the formats'.
TEXTUAL_APPLICATION_TYPES = frozenset(
    {
        "application/xml",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/javascript",
    }
)
#: Suffixes of structured-syntax types (RFC 6839) that are text whatever their vocabulary.
TEXTUAL_SUFFIXES = ("+json", "+xml")


def is_textual(mime_type: str) -> bool:
    """Whether content of this type is text: sent as MCP ``text`` rather than a base64 ``blob``.

    Parameters and case are ignored (``Text/Plain; charset=utf-8`` is text).
    """
    mime = base_mime_type(mime_type)
    known = _TEXTUAL_BY_MIME_TYPE.get(mime)
    if known is not None:
        return known
    return (
        mime.startswith("text/")
        or mime in TEXTUAL_APPLICATION_TYPES
        or mime.endswith(TEXTUAL_SUFFIXES)
    )
