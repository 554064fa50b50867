"""The converter contract: bytes in, facts and derived representations out.

The storage layer is written against these types alone. A converter never
touches the database, the network, the clock or the filesystem beyond the
bytes it is handed (the PDF renderer may read font files); what it learned
about a document travels in :class:`Facts`, never through side channels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

TEXT_PLAIN = "text/plain"
TEXT_MARKDOWN = "text/markdown"
APPLICATION_JSON = "application/json"
APPLICATION_PDF = "application/pdf"

#: The formats every document is offered in (DESIGN D4), besides its original.
DERIVED_MIME_TYPES: tuple[str, ...] = (TEXT_PLAIN, TEXT_MARKDOWN, APPLICATION_JSON, APPLICATION_PDF)

#: The ``reason`` values a :class:`ConversionError` may carry.
ERROR_REASONS = frozenset({"encrypted", "corrupt", "too_large", "unsupported"})


def base_mime_type(mime_type: str) -> str:
    """Return ``mime_type`` lowercased and without parameters (``; charset=...``)."""
    return mime_type.split(";", 1)[0].strip().lower()


@dataclass(frozen=True, slots=True)
class Representation:
    """One derived variant of a document; text variants are UTF-8 encoded."""

    mime_type: str
    data: bytes

    @property
    def is_text(self) -> bool:
        """Whether the variant travels as MCP ``text`` (else as a base64 ``blob``)."""
        mime = base_mime_type(self.mime_type)
        return mime.startswith("text/") or mime == APPLICATION_JSON


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """A heading or bookmark: ``level`` is 1-based, ``page`` 1-based where known."""

    title: str
    level: int
    page: int | None


@dataclass(frozen=True, slots=True)
class Facts:
    """What a converter learned about a document, for the index and for listings.

    ``title``: PDF /Title (or XMP dc:title), else the first outline entry or
    heading; Markdown front matter ``title``, else the first heading; HTML
    ``<title>``, else the first ``<h1>``; JSON a top-level ``"title"`` string.
    ``description``: front matter / PDF /Subject / HTML meta description, else
    the start of the first paragraph of prose.
    """

    title: str | None = None
    description: str | None = None
    page_count: int | None = None
    language: str | None = None
    outline: tuple[OutlineEntry, ...] = ()
    metadata: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ConversionResult:
    """Facts plus the derived variants.

    ``representations`` never holds one whose MIME type equals the source's:
    the storage layer serves the original file itself.
    """

    facts: Facts
    representations: tuple[Representation, ...]

    def get(self, mime_type: str) -> Representation | None:
        """The representation of ``mime_type``, if one was derived."""
        for representation in self.representations:
            if representation.mime_type == mime_type:
                return representation
        return None


class ConversionError(Exception):
    """A document could not be converted.

    ``reason`` is one of ``"encrypted"``, ``"corrupt"``, ``"too_large"`` or
    ``"unsupported"`` (the storage layer records it; the document stays listed
    with its original only); ``message`` says what happened, for people.
    """

    def __init__(self, reason: str, message: str) -> None:
        if reason not in ERROR_REASONS:
            raise ValueError(
                f"unknown conversion error reason {reason!r}; use one of {sorted(ERROR_REASONS)}"
            )
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message

    def __reduce__(self) -> tuple[type[ConversionError], tuple[str, str]]:
        # Conversions run in a process pool: the error must survive pickling.
        return (type(self), (self.reason, self.message))


@runtime_checkable
class Converter(Protocol):
    """One source kind (PDF, Markdown, ...).

    ``version`` is part of the storage cache key (source sha256, name, version):
    bump it whenever the output for the same input changes.
    """

    name: str
    version: str

    def accepts(self, mime_type: str, extension: str) -> bool:
        """Cheap check from the MIME type and the lowercase extension (with dot)."""
        ...

    def convert(self, data: bytes, mime_type: str, filename: str) -> ConversionResult:
        """Convert ``data``; raise :class:`ConversionError` and nothing else on failure."""
        ...
