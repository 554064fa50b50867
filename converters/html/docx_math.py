"""A Word document's formulas carried through mammoth, which drops Office Math.

mammoth reads runs, paragraphs and tables; an ``m:oMath`` (an inline formula) or
``m:oMathPara`` (a displayed one) is not among them, so "For m=1," came out as
"For ,". Before mammoth reads the package, each formula in a part of it (body,
footnotes, endnotes, comments) is cut out at its exact bytes and a text run
holding a placeholder put in its place; everything else stays byte for byte
what it was. After mammoth, each placeholder in its HTML becomes a MathML
``<math>`` element whose TeX annotation is the formula as LaTeX
(:mod:`converters.html.omml`), which the HTML writer spells ``$…$`` or, for a
displayed formula, ``$$…$$``.

Bounds: parts larger than :data:`MAX_PART_BYTES` and formulas past
:data:`MAX_FORMULAS` are left as they are (mammoth then drops them as before).
"""

from __future__ import annotations

import html
import io
import re
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from xml.etree.ElementTree import Element

from docshelf.converters.base import ConversionError
from docshelf.converters.html.omml import MATH_NAMESPACE, omml_to_latex
from docshelf.converters.package import read_member
from docshelf.converters.safexml import local_name, namespace, parse_xml

#: A part whose formulas are read at most this large (Word bodies are rarely over 10 MB).
MAX_PART_BYTES = 64 * 1024 * 1024
#: Formulas carried per document; more are left to mammoth, which drops them.
MAX_FORMULAS = 20_000
WORD_NAMESPACE = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
#: Elements that hold paragraphs, not runs: a formula directly inside one gets a paragraph.
BLOCK_CONTAINERS = frozenset(
    {"body", "tc", "txbxContent", "footnote", "endnote", "comment", "hdr", "ftr"}
)
_FORMULA_TAGS = frozenset({"oMath", "oMathPara"})
#: Placeholders: private-use characters around the formula's number.
_OPEN, _CLOSE = "\ue000", "\ue001"
_PLACEHOLDER = re.compile(f"{_OPEN}(\\d+){_CLOSE}")


@dataclass(frozen=True, slots=True)
class Formula:
    latex: str
    display: bool


def mark_formulas(package: zipfile.ZipFile) -> tuple[bytes | None, list[Formula]]:
    """The package rewritten with a placeholder run for each formula, and the formulas in
    placeholder order; ``(None, [])`` when it holds none."""
    formulas: list[Formula] = []
    rewritten: dict[str, bytes] = {}
    for info in package.infolist():
        name = info.filename
        if not (name.startswith("word/") and name.endswith(".xml")):
            continue
        if info.file_size > MAX_PART_BYTES or len(formulas) >= MAX_FORMULAS:
            continue
        data = read_member(package, name, "DOCX")
        if b"oMath" not in data:
            continue
        marked = _marked_part(data, formulas)
        if marked is not None:
            rewritten[name] = marked
    if not rewritten:
        return None, []
    return _repackaged(package, rewritten), formulas


def place_formulas(markup: str, formulas: Sequence[Formula]) -> str:
    """mammoth's HTML with each placeholder replaced by its formula as MathML with TeX."""

    def formula(match: re.Match[str]) -> str:
        index = int(match.group(1))
        if index >= len(formulas) or not formulas[index].latex:
            return ""
        found = formulas[index]
        display = "block" if found.display else "inline"
        return (
            f'<math display="{display}"><semantics><annotation encoding="application/x-tex">'
            f"{html.escape(found.latex, quote=False)}</annotation></semantics></math>"
        )

    return _PLACEHOLDER.sub(formula, markup) if formulas else markup


def _marked_part(data: bytes, formulas: list[Formula]) -> bytes | None:
    """``data`` with each outermost formula replaced by a placeholder run (appending the
    formulas to ``formulas``), or None when it cannot be done exactly (not UTF-8, not
    well-formed, formulas not found where the tree has them)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None  # UTF-16: byte offsets and the UTF-8 placeholder would not agree
    try:
        root = parse_xml(data, "a DOCX part")  # defusedxml: entities and DTDs refused
    except ConversionError:
        return None
    found = list(_outermost_formulas(root))
    spans = _formula_spans(data)
    if spans is None or len(spans) != len(found):
        return None
    pieces: list[bytes] = []
    position = 0
    for (start, end), (element, parent) in zip(spans, found, strict=True):
        if len(formulas) >= MAX_FORMULAS:
            break
        pieces.append(data[position:start])
        run = _placeholder_run(len(formulas))
        pieces.append(_paragraph(run) if local_name(parent) in BLOCK_CONTAINERS else run)
        formulas.append(Formula(omml_to_latex(element), local_name(element) == "oMathPara"))
        position = end
    pieces.append(data[position:])
    return b"".join(pieces)


def _outermost_formulas(root: Element) -> Iterator[tuple[Element, Element]]:
    """Formulas not inside another, with their parents, in document order."""
    stack: list[tuple[Element, Element]] = [(child, root) for child in reversed(root)]
    while stack:
        element, parent = stack.pop()
        if _is_formula(element):
            yield element, parent
            continue
        stack.extend((child, element) for child in reversed(element))


def _is_formula(element: Element) -> bool:
    return namespace(element) == MATH_NAMESPACE and local_name(element) in _FORMULA_TAGS


def _formula_spans(data: bytes) -> list[tuple[int, int]] | None:
    """Byte ranges of the outermost formulas, from expat's positions (the tree has none).

    ``data`` was parsed safely by defusedxml first; expat is used again here only for
    ``CurrentByteIndex``, with entity declarations refused the same way.
    """
    from xml.parsers import expat

    parser = expat.ParserCreate(namespace_separator=" ")
    spans: list[tuple[int, int]] = []
    depth = 0
    start = 0

    def refuse(*_: object) -> None:
        raise ValueError("entity declarations are not allowed")

    def opened(name: str, _attributes: object) -> None:
        nonlocal depth, start
        if depth or _formula_name(name):
            if depth == 0:
                start = parser.CurrentByteIndex
            depth += 1

    def closed(name: str) -> None:
        nonlocal depth
        if not depth:
            return
        depth -= 1
        if depth == 0:
            end = data.find(b">", parser.CurrentByteIndex)
            spans.append((start, end + 1))

    parser.EntityDeclHandler = refuse
    parser.StartElementHandler = opened
    parser.EndElementHandler = closed
    try:
        parser.Parse(data, True)
    except (expat.ExpatError, ValueError):
        return None
    return spans


def _formula_name(name: str) -> bool:
    uri, _, local = name.rpartition(" ")
    return uri == MATH_NAMESPACE and local in _FORMULA_TAGS


def _placeholder_run(index: int) -> bytes:
    return (
        f'<w:r xmlns:w="{WORD_NAMESPACE}"><w:t xml:space="preserve">'
        f"{_OPEN}{index}{_CLOSE}</w:t></w:r>"
    ).encode()


def _paragraph(run: bytes) -> bytes:
    return f'<w:p xmlns:w="{WORD_NAMESPACE}">'.encode() + run + b"</w:p>"


def _repackaged(package: zipfile.ZipFile, replaced: dict[str, bytes]) -> bytes:
    """The package again, with the parts in ``replaced`` swapped (stored, not recompressed:
    mammoth reads it once, right away)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as copy:
        for info in package.infolist():
            data = replaced.get(info.filename)
            if data is None:
                data = read_member(package, info.filename, "DOCX")
            copy.writestr(info.filename, data)
    return out.getvalue()
