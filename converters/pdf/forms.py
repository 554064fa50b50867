"""Filled-in PDF form fields (AcroForm): their values in the page text, beside their labels.

A form's printed page carries the labels; what was typed in lives in the
field dictionaries (``/V``), drawn by each widget annotation's appearance,
which text extraction never sees. Each widget's value is made text at the
widget's place: appended to the line it sits on (its label, to its left) as
a cell of its own, or set as a line of its own where no line is, so that the
layout steps pair labels and values as they would printed text. Check boxes
and radio buttons read ☒ when on and ☐ when off; the JSON lists every field
with its full name, kind and value (:class:`FormField`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pypdf import PageObject

from docshelf.converters.document import FormField
from docshelf.converters.pdf.layout import Cell, TextLine
from docshelf.converters.pdf.meta import READ_ERRORS
from docshelf.converters.textutil import clean_text

#: Fields read from one document at most (a form has tens; a damaged file may loop).
MAX_FIELDS = 2000
#: Characters of one value kept.
MAX_VALUE_CHARS = 10_000
#: Parents followed up from a widget to its field at most.
MAX_DEPTH = 32
_KINDS = {"/Tx": "text", "/Ch": "choice", "/Sig": "signature"}
#: /Ff bits of a button field (PDF 32000-1 §12.7.4.2): radio, push button.
_RADIO, _PUSH = 1 << 15, 1 << 16
CHECKED, UNCHECKED = "☒", "☐"


@dataclass(frozen=True, slots=True)
class Widget:
    """One field's widget on a page: what it shows, and where (page space)."""

    field: FormField
    shown: str
    left: float
    bottom: float
    right: float
    top: float


def read_widgets(pages: Sequence[PageObject]) -> list[Widget]:
    """The form-field widgets of every page, page by page, in the order each page lists them."""
    widgets: list[Widget] = []
    for number, page in enumerate(pages, start=1):
        try:
            annotations = page.get("/Annots")
            annotations = annotations.get_object() if annotations is not None else None
        except READ_ERRORS:
            continue
        for annotation in annotations if isinstance(annotations, list) else ():
            try:
                widget = _widget(annotation.get_object(), number)
            except READ_ERRORS:
                continue  # a damaged field costs its value, not the document
            if widget is not None:
                widgets.append(widget)
                if len(widgets) >= MAX_FIELDS:
                    return widgets
    return widgets


def form_fields(widgets: Sequence[Widget]) -> tuple[FormField, ...]:
    """Each field once (a radio group has a widget per button)."""
    return tuple(dict.fromkeys(widget.field for widget in widgets))


def _widget(annotation: Any, page: int) -> Widget | None:
    if not isinstance(annotation, Mapping) or annotation.get("/Subtype") != "/Widget":
        return None
    chain = list(_field_chain(annotation))
    names = [str(node["/T"]) for node in reversed(chain) if "/T" in node]
    kind_name = _inherited(chain, "/FT")
    flags = _inherited(chain, "/Ff")
    flags = flags if isinstance(flags, int) else 0
    value = _inherited(chain, "/V")
    rect = annotation.get("/Rect")
    if not names or kind_name is None or not isinstance(rect, Sequence) or len(rect) != 4:
        return None
    left, bottom, right, top = (float(number) for number in rect)
    if kind_name == "/Btn":
        if flags & _PUSH:
            return None
        kind = "radio" if flags & _RADIO else "checkbox"
        state = str(annotation.get("/AS", value if value is not None else "/Off"))
        text = _value_text(value) or "Off"
        shown = UNCHECKED if state == "/Off" else CHECKED
    else:
        kind = _KINDS.get(str(kind_name), "text")
        text = _value_text(value)
        shown = text
    field = FormField(".".join(names), kind, text, page)
    return Widget(
        field, shown, min(left, right), min(bottom, top), max(left, right), max(bottom, top)
    )


def _field_chain(annotation: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The widget, then its parents up to the top field (names and values are inherited)."""
    node: Any = annotation
    for _ in range(MAX_DEPTH):
        if not isinstance(node, Mapping):
            return
        yield node
        parent = node.get("/Parent")
        node = parent.get_object() if parent is not None else None


def _inherited(chain: Sequence[Mapping[str, Any]], key: str) -> Any:
    for node in chain:
        if key in node:
            value = node[key]
            return value.get_object() if hasattr(value, "get_object") else value
    return None


def _value_text(value: Any) -> str:
    """A field value as text: a string, a name without its slash, a list joined."""
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(_value_text(item) for item in value[:100])
    text = str(value)
    if text.startswith("/"):
        text = text[1:]
    return clean_text(text[:MAX_VALUE_CHARS]).strip()


def place_widgets(lines: Sequence[TextLine], widgets: Sequence[Widget]) -> list[TextLine]:
    """``lines`` with each widget's value on the line it sits on, else on a line of its own."""
    out = list(lines)
    for widget in sorted(widgets, key=lambda widget: widget.left):
        if not widget.shown:
            continue
        height = widget.top - widget.bottom
        at = _line_beside(out, widget)
        value = Cell(widget.shown, widget.left, widget.right)
        if at is not None:
            line = out[at]
            x0 = line.x0 if line.x0 is not None else widget.left
            cells = line.cells or (Cell(line.text, x0, x0 + 0.5 * line.size * len(line.text)),)
            out[at] = replace(line, text=f"{line.text} {widget.shown}", cells=(*cells, value))
            continue
        size = max(1.0, min(12.0, 0.7 * height))
        baseline = widget.bottom + max(0.0, (height - size) / 2)
        new = TextLine(widget.shown, size, baseline, bold=False, x0=widget.left)
        below = next(
            (i for i, line in enumerate(out) if line.y is not None and line.y < baseline), len(out)
        )
        out.insert(below, new)
    return out


def _line_beside(lines: Sequence[TextLine], widget: Widget) -> int | None:
    """The line whose baseline falls within the widget's height, starting to its left."""
    beside = [
        (abs(line.y - widget.bottom), index)
        for index, line in enumerate(lines)
        if line.y is not None
        and line.x0 is not None
        and line.table is None
        and widget.bottom - 0.3 * line.size <= line.y <= widget.top
        and line.x0 < widget.left
    ]
    return min(beside)[1] if beside else None
