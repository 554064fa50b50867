"""Turn a converter's producers into a :class:`ConversionResult`.

Every source is offered in the four derived formats of DESIGN D4 minus its own
type. Producers are callables so that a variant is computed only when it is
asked for: the one equal to the source's type (a PDF of a PDF) never, the
rendered PDF of a text source only on demand (DESIGN D12).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from docshelf.converters.base import (
    TEXT_PLAIN,
    ConversionResult,
    Facts,
    Producer,
    Segment,
    base_mime_type,
)
from docshelf.converters.formats import DERIVED_MIME_TYPES


def assemble(
    source_mime_type: str,
    facts: Facts,
    producers: Mapping[str, Producer],
    segments: Callable[[], tuple[Segment, ...]] | None = None,
) -> ConversionResult:
    """The result for a source: its producers in the canonical order of D4, minus its own type.

    ``producers`` must offer every derived type except, optionally, the
    source's own; a missing one is a programming error, not a bad document.
    ``segments``: its text page by page or section by section, for the search
    index; by default its plain text as one piece.
    """
    source = base_mime_type(source_mime_type)
    ordered: dict[str, Producer] = {}
    for mime_type in DERIVED_MIME_TYPES:
        if mime_type == source:
            continue
        producer = producers.get(mime_type)
        if producer is None:
            raise LookupError(f"converter offers no producer for {mime_type}")
        ordered[mime_type] = producer
    if segments is None:
        plain = ordered.get(TEXT_PLAIN)
        segments = (lambda: (Segment("", None, plain().decode("utf-8")),)) if plain else tuple
    return ConversionResult(facts=facts, producers=ordered, segments=segments)
