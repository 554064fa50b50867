"""Build the ``application/json`` representation (schema docshelf.document/v1).

Converters describe a document with :class:`DocumentData`; this module owns
the wire shape, so that it matches ``schema/document-v1.json`` in one place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from docshelf.converters.base import Facts, OutlineEntry
from docshelf.converters.declared import clean_facts
from docshelf.converters.markdown.model import CodeBlock, Link, MarkdownDocument, Section, Table
from docshelf.converters.parts import outline_parts, pages_query, section_segments
from docshelf.converters.schema import DOCUMENT_SCHEMA_NAME

#: Marks "no ``data`` member" (``None`` is a legitimate JSON value: null).
NO_DATA: Any = object()


@dataclass(frozen=True, slots=True)
class Page:
    number: int
    text: str
    #: What OCR read on the page (``$defs/ocr`` of the schema), when it ran.
    ocr: Mapping[str, Any] | None = None
    #: Why the page has no text ("blank", "needs_ocr", "ocr_timeout", ...), when it has none.
    no_text: str | None = None


@dataclass(frozen=True, slots=True)
class FormField:
    """A fillable form field: full name, kind (text, checkbox, radio, choice, signature),
    value as text ("" when not filled in; a button's on-state name or "Off"), page."""

    name: str
    kind: str
    value: str
    page: int | None = None


@dataclass(frozen=True, slots=True)
class DocumentData:
    """Everything the JSON representation says; exactly one of pages/sections."""

    facts: Facts
    pages: Sequence[Page] | None = None
    sections: Sequence[Section] | None = None
    links: Sequence[Link] = ()
    tables: Sequence[Table] = ()
    code_blocks: Sequence[CodeBlock] = ()
    fields: Sequence[FormField] = ()
    data: Any = field(default=NO_DATA)

    def __post_init__(self) -> None:
        if (self.pages is None) == (self.sections is None):
            raise ValueError("a document has either pages or sections")


def from_markdown(facts: Facts, document: MarkdownDocument) -> DocumentData:
    """The JSON view of a document whose content lives in Markdown."""
    return DocumentData(
        facts=facts,
        sections=document.sections,
        links=document.links,
        tables=document.tables,
        code_blocks=document.code_blocks,
    )


def document_json(document: DocumentData) -> bytes:
    """Serialize ``document`` as UTF-8 JSON, indented for people and agents alike."""
    return json.dumps(
        document_dict(document), ensure_ascii=False, indent=2, allow_nan=False
    ).encode("utf-8")


def document_dict(document: DocumentData) -> dict[str, Any]:
    """The JSON object for ``document`` (optional members only when known; the facts
    cleaned as :func:`converters.assemble.assemble` cleans them)."""
    facts = clean_facts(document.facts)
    out: dict[str, Any] = {
        "schema": DOCUMENT_SCHEMA_NAME,
        "title": facts.title,
    }
    if facts.description:
        out["description"] = facts.description
    if facts.language:
        out["language"] = facts.language
    if facts.page_count is not None:
        out["page_count"] = facts.page_count
    out["metadata"] = dict(facts.metadata)
    # Each outline entry, page and section names its part as a relative reference
    # ("?pages=3"): resolved against the document's URI it is the part's URI (issue #10).
    parts = outline_parts(facts.outline, facts.page_count if document.pages is not None else None)
    out["outline"] = [_outline_entry(e, part) for e, part in zip(facts.outline, parts, strict=True)]
    if document.pages is not None:
        out["pages"] = [
            {
                "number": page.number,
                "text": page.text,
                "part": f"?{pages_query(page.number, page.number)}",
            }
            | ({"ocr": dict(page.ocr)} if page.ocr is not None else {})
            | ({"no_text": page.no_text} if page.no_text else {})
            for page in document.pages
        ]
    if document.sections is not None:
        segments = section_segments(document.sections)
        out["sections"] = [
            {"heading": s.heading, "level": s.level, "text": s.text}
            | ({"part": f"?{segment.part}"} if segment.part else {})
            for s, segment in zip(document.sections, segments, strict=True)
        ]
    if document.links:
        out["links"] = [{"text": link.text, "href": link.href} for link in document.links]
    if document.tables:
        out["tables"] = [_table(table) for table in document.tables]
    if document.code_blocks:
        out["code_blocks"] = [
            {"language": block.language, "code": block.code} for block in document.code_blocks
        ]
    if document.fields:
        out["fields"] = [
            {"name": f.name, "type": f.kind, "value": f.value, "page": f.page}
            for f in document.fields
        ]
    if document.data is not NO_DATA:
        out["data"] = document.data
    return out


def _outline_entry(entry: OutlineEntry, part: str | None) -> Mapping[str, Any]:
    out: dict[str, Any] = {"title": entry.title, "level": entry.level, "page": entry.page}
    if part is not None:
        out["part"] = f"?{part}"
    return out


def _table(table: Table) -> Mapping[str, Any]:
    out: dict[str, Any] = {"header": list(table.header), "rows": [list(row) for row in table.rows]}
    if table.caption:
        out["caption"] = table.caption
    return out
