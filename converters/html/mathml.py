"""MathML formulas written as LaTeX in Markdown: ``$…$``, or ``$$…$$`` displayed.

A ``<math>`` element's presentation markup (``<mi>x</mi><mo>=</mo>``) reads as
run-together symbols; its TeX source, where the page keeps one, is what a
reader and a Markdown renderer understand. The TeX is the ``<annotation>`` of
encoding ``application/x-tex`` (MathJax, Wikipedia, and the DOCX converter's
formulas: :mod:`converters.html.docx_math`), else the ``alttext`` attribute.
A formula without either is left to the writer (its text).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from docshelf.converters.textutil import collapse_whitespace

if TYPE_CHECKING:
    from docshelf.converters.html.markdown import Element

TEX_ENCODINGS = frozenset({"application/x-tex", "text/x-tex", "application/x-latex"})


def math_markdown(element: Element) -> str | None:
    """``element`` (a ``<math>``) as ``$tex$`` or ``$$tex$$``; None when it carries no TeX."""
    tex = ""
    for inner in element.iter():
        if inner.tag == "annotation" and inner.attrs.get("encoding", "").lower() in TEX_ENCODINGS:
            tex = inner.text()
            break
    tex = collapse_whitespace(tex or element.attrs.get("alttext", ""))
    if not tex:
        return None
    fence = "$$" if element.attrs.get("display", "").lower() == "block" else "$"
    return f"{fence}{tex}{fence}"
