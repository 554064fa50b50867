"""The PDF renderer's entry point, imported on first use.

fpdf2 takes about half a second to import. A serving process lists, describes
and reads documents without rendering anything (rendered PDFs are built in the
conversion workers, on demand, DESIGN D12), so converters reach the renderer
through this module and only a process that renders pays for the import.
"""

from __future__ import annotations

from typing import Any


def render_markdown_pdf(source: str, **options: Any) -> bytes:
    """Render Markdown to PDF bytes (see :func:`converters.render.pdf.render_markdown_pdf`)."""
    from docshelf.converters.render.pdf import render_markdown_pdf as render

    return render(source, **options)
