"""Sample shelves of real files, made fresh in a temporary folder."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path

from fpdf import FPDF

from tests.support.paths import FIXTURE_PDF
from tests.support.runtimes import open_runtime

MARKDOWN = """---
title: Field Guide
description: How the team files its notes.
---

# Field guide

Notes are filed **by week**. See [the index](index.md).

| week | topic |
| --- | --- |
| 1 | setup |
| 2 | review |

```python
print("hello")
```
"""


def make_shelf(root: Path) -> Path:
    """A shelf with one file of each kind, a PDF from the corpus, and traps."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "guides").mkdir()
    (root / "guides" / "field-guide.md").write_text(MARKDOWN)
    (root / "notes.txt").write_text("Plain notes.\nSecond line.\n")
    (root / "data.json").write_text(json.dumps({"name": "docshelf", "items": [1, 2, 3]}))
    (root / "table.csv").write_text("city,population\nBerlin,3850809\nParis,2102650\n")
    (root / "page.html").write_text(
        "<html><head><title>A page</title></head><body><h1>Heading</h1>"
        "<p>Some <a href='https://example.com'>link</a>.</p><script>var x=1;</script></body></html>"
    )
    (root / "Straße plan.md").write_text("# Straßenplan\n\nUnicode in the name.\n")
    (root / "papers").mkdir()
    shutil.copy(FIXTURE_PDF / "pdflatex-4-pages.pdf", root / "papers" / "pdflatex-4-pages.pdf")
    shutil.copy(
        FIXTURE_PDF / "libreoffice-writer-password.pdf",
        root / "papers" / "libreoffice-writer-password.pdf",
    )
    (root / "papers" / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\ngarbage")
    (root / ".hidden.md").write_text("# not served\n")
    return root


def catalogued_only(shelf: Path, data: Path) -> None:
    """Catalog ``shelf`` into ``data`` and convert nothing: every document stays pending, as
    right after start or an edit (a ``--no-index`` replica then converts only what its
    reads ask for)."""
    runtime = open_runtime(shelf, data)
    try:
        runtime.indexer.reconcile(wait=False)
        assert runtime.builder.backlog() > 0
    finally:
        runtime.close()


def page_mark(number: int) -> str:
    """The word only page ``number`` of :func:`long_pdf` holds."""
    return f"pagemark{number:03}"


def long_pdf(pages: int) -> bytes:
    """A PDF of ``pages`` pages of about 1.5 KB of text each; page N opens with "Chapter N"
    and holds :func:`page_mark` of N, so what a reader got can be told page by page."""
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.set_font("Helvetica", size=10)
    filler = (
        "The shelf keeps every document it is given, and a reader asks for the parts "
        "that matter to the question at hand. "
    ) * 12
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.set_y(60)  # below the band where the converter drops lines repeated as running heads
        pdf.multi_cell(170, 5, f"Chapter {number}. {page_mark(number)} {filler}")
    return bytes(pdf.output())


def make_notes(root: Path, count: int, *, word: str, folders: int = 10) -> Path:
    """``count`` small Markdown notes in ``folders`` folders, ``word`` in the body of every
    one and in no title or path (titles are "Note N", paths ``folder-F/note-N.md``)."""
    for number in range(count):
        folder = root / f"folder-{number % folders}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note-{number:05}.md").write_text(
            f"# Note {number}\n\nThe {word} of the harbour was lit at dusk on day {number}.\n"
        )
    return root


def write_tree(root: Path, files: Mapping[str, str]) -> Path:
    """``files`` (relative path → text) written below ``root``, folders made as needed."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
