"""Turn a converter's producers into a :class:`ConversionResult`.

Every source is offered in the four derived formats of DESIGN D4 minus its own
type. Producers are callables so that the variant equal to the source's type
(say, rendering a PDF of a PDF) is never computed at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from converters.base import (
    DERIVED_MIME_TYPES,
    ConversionResult,
    Facts,
    Representation,
    base_mime_type,
)

Producer = Callable[[], bytes]


def assemble(
    source_mime_type: str, facts: Facts, producers: Mapping[str, Producer]
) -> ConversionResult:
    """Call the producers the source needs, in the canonical order of D4.

    ``producers`` must offer every derived type except, optionally, the
    source's own; a missing one is a programming error, not a bad document.
    """
    source = base_mime_type(source_mime_type)
    representations: list[Representation] = []
    for mime_type in DERIVED_MIME_TYPES:
        if mime_type == source:
            continue
        producer = producers.get(mime_type)
        if producer is None:
            raise LookupError(f"converter offers no producer for {mime_type}")
        representations.append(Representation(mime_type, producer()))
    return ConversionResult(facts=facts, representations=tuple(representations))
