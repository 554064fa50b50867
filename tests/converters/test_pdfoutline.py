"""The outline reader: pypdf's entries and pages, named destinations looked up on demand."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader, PdfWriter
from pypdf.generic import DictionaryObject, NameObject, TextStringObject

from docshelf.converters.base import OutlineEntry
from docshelf.converters.pdf.outline import read_outline
from docshelf.converters.textutil import collapse_whitespace

from .conftest import CORPUS_PDF, READABLE_PDFS


def outlined_pdf(*, loop: bool = False) -> bytes:
    """Four pages; bookmarks A (page 1) > B (page 2), then C, which names page 3."""
    writer = PdfWriter()
    for _ in range(4):
        writer.add_blank_page(width=100, height=100)
    writer.add_named_destination("sec.c", 2)
    first = writer.add_outline_item(title="A", page_number=0)
    writer.add_outline_item(title="B", page_number=1, parent=first)
    last: Any = writer.add_outline_item(title="C", page_number=3).get_object()
    action = last["/A"]
    assert isinstance(action, DictionaryObject)
    action[NameObject("/D")] = TextStringObject("sec.c")
    if loop:
        last[NameObject("/Next")] = first
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def pypdf_outline(reader: PdfReader) -> list[OutlineEntry]:
    """The same entries through pypdf's own ``reader.outline``."""

    def walk(items: Sequence[Any], level: int) -> list[OutlineEntry]:
        entries: list[OutlineEntry] = []
        for item in items:
            if isinstance(item, list):
                entries.extend(walk(item, level + 1))
                continue
            index = reader.get_destination_page_number(item)
            page = index + 1 if index is not None and index >= 0 else None
            entries.append(OutlineEntry(collapse_whitespace(str(item.title)), level, page))
        return entries

    return [entry for entry in walk(reader.outline, 1) if entry.title]


def test_named_destination_is_looked_up_in_the_name_tree() -> None:
    outline = read_outline(PdfReader(io.BytesIO(outlined_pdf())))
    assert outline == (
        OutlineEntry("A", 1, 1),
        OutlineEntry("B", 2, 2),
        OutlineEntry("C", 1, 3),
    )


def test_looping_outline_is_read_once() -> None:
    outline = read_outline(PdfReader(io.BytesIO(outlined_pdf(loop=True))))
    assert [entry.title for entry in outline] == ["A", "B", "C"]


@pytest.mark.skipif(
    not CORPUS_PDF.is_dir(),
    reason=f"needs the shared PDF corpus at {CORPUS_PDF} "
    "(../shared beside the checkout, or set DOCSHELF_SHARED)",
)
@pytest.mark.parametrize("name", READABLE_PDFS)
def test_corpus_outlines_match_pypdfs(name: str) -> None:
    data = (Path(CORPUS_PDF) / name).read_bytes()
    try:
        expected = pypdf_outline(PdfReader(io.BytesIO(data), strict=False))
    except Exception:
        pytest.skip("pypdf's own outline cannot be read from this file")
    assert list(read_outline(PdfReader(io.BytesIO(data), strict=False))) == expected
