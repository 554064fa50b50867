"""Turn a converter's producers into a :class:`ConversionResult`.

Every source is offered in the four derived formats of DESIGN D4 minus its own
type. Producers are callables so that a variant is computed only when it is
asked for: the one equal to the source's type (a PDF of a PDF) never, the
rendered PDF of a text source only on demand (DESIGN D12).

All converters but PDF's hold their source as Markdown and derive the same four
formats from it the same way: :func:`markdown_result` builds them once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from docshelf.converters.base import (
    APPLICATION_JSON,
    APPLICATION_PDF,
    TEXT_MARKDOWN,
    TEXT_PLAIN,
    ConversionResult,
    Facts,
    Producer,
    Segment,
    Source,
    base_mime_type,
)
from docshelf.converters.declared import clean_facts
from docshelf.converters.document import NO_DATA, DocumentData, document_json, from_markdown
from docshelf.converters.formats import DERIVED_MIME_TYPES
from docshelf.converters.markdown.model import MarkdownDocument
from docshelf.converters.parts import section_segments
from docshelf.converters.render import render_markdown_pdf


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
    index; by default its plain text as one piece. The facts go out cleaned
    (:func:`~converters.declared.clean_facts`): no placeholder title, no control character.
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
    return ConversionResult(facts=clean_facts(facts), producers=ordered, segments=segments)


def markdown_result(
    source: Source,
    facts: Facts,
    markdown: str,
    *,
    plain: str,
    json_view: DocumentData,
    segments: Callable[[], tuple[Segment, ...]] | None = None,
    pdf_author: str | None = None,
) -> ConversionResult:
    """The result for a source whose content docshelf holds as Markdown (all but PDF sources).

    The text is ``plain``, the Markdown ``markdown``, the JSON ``json_view``, and
    the PDF that Markdown rendered under the facts' title and language, with
    ``pdf_author`` as its author. ``segments`` as for :func:`assemble`.
    """
    return assemble(
        source.mime_type,
        facts,
        {
            TEXT_PLAIN: lambda: plain.encode("utf-8"),
            TEXT_MARKDOWN: lambda: markdown.encode("utf-8"),
            APPLICATION_JSON: lambda: document_json(json_view),
            APPLICATION_PDF: lambda: render_markdown_pdf(
                markdown, title=facts.title, author=pdf_author, language=facts.language
            ),
        },
        segments,
    )


def parsed_markdown_result(
    source: Source,
    facts: Facts,
    markdown: str,
    model: MarkdownDocument,
    *,
    plain: str | None = None,
    pdf_author: str | None = None,
    data: Any = NO_DATA,
) -> ConversionResult:
    """:func:`markdown_result` for Markdown docshelf parsed into ``model``.

    The model's sections are the JSON view and the search segments; its text is
    the plain text unless ``plain`` says otherwise. ``data``: the JSON's ``data``
    member, the family's own structure (a mail's headers, a workbook's sheets).
    """
    return markdown_result(
        source,
        facts,
        markdown,
        plain=model.text if plain is None else plain,
        json_view=replace(from_markdown(facts, model), data=data),
        segments=lambda: section_segments(model.sections),
        pdf_author=pdf_author,
    )
