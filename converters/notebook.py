"""Jupyter notebooks (``.ipynb``, nbformat 4 and 3), read with the standard library's json.

Markdown cells are the notebook's own Markdown; code cells are fenced with the
kernel's language; what a cell printed follows it: streams, results and
tracebacks as plain fences (terminal colour codes removed), Markdown results as
Markdown, HTML results (tables) through the HTML path, images as references
(``![output 3](cell-3-output.png)``), never as base64. Very long outputs are
cut (:data:`MAX_OUTPUT_CHARS`). Notebook bookkeeping (format version, cell
ids, widget state) is left out of every representation.

Title: ``metadata.title``, else the first heading. The JSON ``data`` has the
kernel, its language and the cells (type, source, outputs as text).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from docshelf.converters.assemble import parsed_markdown_result
from docshelf.converters.base import ConversionError, ConversionResult, FailureReason, Source
from docshelf.converters.html.markdown import html_to_markdown
from docshelf.converters.json_ import parse_json
from docshelf.converters.markdown.converter import markdown_facts
from docshelf.converters.markdown.model import parse_markdown
from docshelf.converters.textutil import (
    check_size,
    clean_text,
    code_fence,
    collapse_whitespace,
    decode_text,
    escape_markdown_inline,
    markdown_heading,
)

NOTEBOOK_MIME_TYPES = frozenset({"application/x-ipynb+json"})
NOTEBOOK_EXTENSIONS = frozenset({".ipynb"})
#: Cells read; a long notebook has a few hundred.
MAX_CELLS = 10_000
#: Characters kept of one output (a loop printing a million lines is not worth reading).
MAX_OUTPUT_CHARS = 20_000
#: Image types shown as references, and the extension their file name gets.
IMAGE_EXTENSIONS = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
    "image/svg+xml": "svg",
    "image/webp": "webp",
}
#: nbformat 3 named output data by short keys.
_V3_DATA_KEYS = {
    "text": "text/plain",
    "html": "text/html",
    "markdown": "text/markdown",
    "latex": "text/latex",
    "png": "image/png",
    "jpeg": "image/jpeg",
    "svg": "image/svg+xml",
    "json": "application/json",
}
_V3_OUTPUT_TYPES = {"pyout": "execute_result", "pyerr": "error"}
# Terminal escape sequences: CSI (colours, cursor) and OSC (titles, hyperlinks).
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")
_LANGUAGE = re.compile(r"[\w+#.-]{1,40}")


@dataclass(frozen=True, slots=True)
class Output:
    type: str  # "stream", "execute_result", "display_data" or "error"
    data: Mapping[str, str]  # MIME type → content (base64 for images); "text/plain" for text


@dataclass(frozen=True, slots=True)
class Cell:
    type: str  # "markdown", "code", "raw" (nbformat 3's "heading" becomes markdown)
    source: str
    execution_count: int | None
    outputs: tuple[Output, ...]


@dataclass(frozen=True, slots=True)
class Notebook:
    title: str | None
    language: str
    kernel: str | None
    authors: tuple[str, ...]
    cells: tuple[Cell, ...]


#: Fewer words of prose than this, and the description says what the notebook is instead.
MIN_DESCRIPTION_WORDS = 4


class NotebookConverter:
    """Converts Jupyter notebooks."""

    name = "notebook"
    version = "2"

    def accepts(self, source: Source) -> bool:
        return (
            source.base_mime_type in NOTEBOOK_MIME_TYPES or source.extension in NOTEBOOK_EXTENSIONS
        )

    def convert(self, source: Source) -> ConversionResult:
        check_size(source.data)
        notebook = read_notebook(parse_json(decode_text(source.data)))
        markdown = notebook_markdown(notebook)
        document = parse_markdown(markdown)
        metadata = {
            key: value
            for key, value in {
                "author": "; ".join(notebook.authors),
                "kernel": notebook.kernel,
                "programming_language": notebook.language,
            }.items()
            if value
        }
        facts = markdown_facts(document, title=notebook.title, metadata=metadata)
        # A closing "End" says less than what the notebook is: prose of a few words gives way.
        if len((facts.description or "").split()) < MIN_DESCRIPTION_WORDS:
            count = len(notebook.cells)
            language = f" ({notebook.language})" if notebook.language else ""
            facts = replace(facts, description=f"Jupyter notebook{language}, {count} cells")
        return parsed_markdown_result(
            source,
            facts,
            markdown,
            document,
            pdf_author=metadata.get("author"),
            data=notebook_data(notebook),
        )


# --- Reading ---------------------------------------------------------------------------


def read_notebook(value: Any) -> Notebook:
    """The notebook in parsed JSON ``value``: nbformat 4 ``cells`` or nbformat 3 ``worksheets``."""
    if not isinstance(value, dict):
        raise ConversionError(FailureReason.CORRUPT, "not a Jupyter notebook: not a JSON object")
    metadata = _mapping(value.get("metadata"))
    if isinstance(value.get("cells"), list):
        raw_cells = value["cells"]
    elif isinstance(value.get("worksheets"), list):
        raw_cells = [
            cell for sheet in value["worksheets"] for cell in _list(_mapping(sheet).get("cells"))
        ]
    else:
        raise ConversionError(
            FailureReason.CORRUPT, "not a Jupyter notebook: it has no cells (nor worksheets)"
        )
    if len(raw_cells) > MAX_CELLS:
        raise ConversionError(
            FailureReason.TOO_LARGE,
            f"the notebook has {len(raw_cells)} cells, over the limit of {MAX_CELLS}",
        )
    cells = tuple(cell for raw in raw_cells if (cell := _cell(_mapping(raw))) is not None)
    kernelspec = _mapping(metadata.get("kernelspec"))
    language = next(
        (
            name.lower()
            for name in (
                kernelspec.get("language"),
                _mapping(metadata.get("language_info")).get("name"),
                *(_mapping(raw).get("language") for raw in raw_cells),  # nbformat 3
            )
            if isinstance(name, str) and _LANGUAGE.fullmatch(name.strip())
        ),
        "",
    )
    title = metadata.get("title")
    authors = tuple(
        name.strip()
        for author in _list(metadata.get("authors"))
        if isinstance(name := _mapping(author).get("name"), str) and name.strip()
    )
    return Notebook(
        title=collapse_whitespace(title) or None if isinstance(title, str) else None,
        language=language,
        kernel=_string(kernelspec.get("display_name")) or _string(kernelspec.get("name")),
        authors=authors,
        cells=cells,
    )


def _cell(raw: Mapping[str, Any]) -> Cell | None:
    kind = raw.get("cell_type")
    if kind == "heading":  # nbformat 3
        level = raw["level"] if isinstance(raw.get("level"), int) else 1
        text = collapse_whitespace(_text(raw.get("source")))
        heading = markdown_heading(min(max(level, 1), 6), text) if text else ""
        return Cell("markdown", heading, None, ())
    if kind not in ("markdown", "code", "raw"):
        return None
    source = _text(raw.get("source") if "source" in raw else raw.get("input"))
    count = raw.get("execution_count", raw.get("prompt_number"))
    outputs = tuple(
        output for item in _list(raw.get("outputs")) if (output := _output(_mapping(item)))
    )
    return Cell(kind, source, count if isinstance(count, int) else None, outputs)


def _output(raw: Mapping[str, Any]) -> Output | None:
    kind = raw.get("output_type")
    kind = _V3_OUTPUT_TYPES.get(kind, kind) if isinstance(kind, str) else ""
    if kind == "stream":
        return Output(kind, {"text/plain": _text(raw.get("text"))})
    if kind == "error":
        traceback = "\n".join(_text(line) for line in _list(raw.get("traceback")))
        summary = f"{_string(raw.get('ename')) or 'Error'}: {_string(raw.get('evalue')) or ''}"
        return Output(kind, {"text/plain": traceback or summary})
    if kind in ("execute_result", "display_data"):
        data = _mapping(raw.get("data")) or {
            _V3_DATA_KEYS[key]: value for key, value in raw.items() if key in _V3_DATA_KEYS
        }
        return Output(kind, {str(mime): _text(value) for mime, value in data.items()})
    return None


def _text(value: Any) -> str:
    """A notebook string: one string, or a list of lines to join."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return ""


def _string(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def terminal_text(text: str) -> str:
    """Output as a terminal showed it, without colour codes, cut at :data:`MAX_OUTPUT_CHARS`."""
    text = clean_text(_ANSI.sub("", text))
    if len(text) > MAX_OUTPUT_CHARS:
        more = len(text) - MAX_OUTPUT_CHARS
        text = f"{text[:MAX_OUTPUT_CHARS]}\n… ({more} more characters)"
    return text


# --- Writing ---------------------------------------------------------------------------


def notebook_markdown(notebook: Notebook) -> str:
    """Every cell in order, each code cell followed by its outputs.

    The title heads the Markdown when the notebook has no ``#`` heading of its own.
    """
    blocks: list[str] = []
    for number, cell in enumerate(notebook.cells, start=1):
        blocks.extend(_cell_blocks(cell, number, notebook.language))
    markdown = "\n\n".join(block.strip("\n") for block in blocks if block.strip())
    if notebook.title and not any(h.level == 1 for h in parse_markdown(markdown).headings):
        markdown = f"{markdown_heading(1, notebook.title)}\n\n{markdown}"
    return markdown.rstrip("\n") + "\n"


def _cell_blocks(cell: Cell, number: int, language: str) -> list[str]:
    if cell.type == "markdown":
        return [cell.source]
    if cell.type == "raw":
        return [code_fence(cell.source)] if cell.source.strip() else []
    blocks = [code_fence(cell.source, language)] if cell.source.strip() else []
    for output, image in zip(cell.outputs, image_names(cell, number), strict=True):
        if image:
            alt = escape_markdown_inline(f"output {number}")
            blocks.append(f"![{alt}]({image})")
        elif output.data.get("text/markdown", "").strip():
            blocks.append(output.data["text/markdown"])
        elif output.data.get("text/html", "").strip():
            blocks.append(html_to_markdown(output.data["text/html"]).markdown)
        elif output.data.get("text/plain", "").strip():
            blocks.append(code_fence(terminal_text(output.data["text/plain"])))
    return blocks


def image_names(cell: Cell, number: int) -> list[str | None]:
    """Per output of cell ``number``, the name its image is referred to by (None: no image).

    ``cell-3-output.png`` for the cell's first image, ``cell-3-output-2.png`` for its second.
    """
    names: list[str | None] = []
    count = 0
    for output in cell.outputs:
        mime = next((mime for mime in IMAGE_EXTENSIONS if mime in output.data), None)
        if mime is None:
            names.append(None)
            continue
        count += 1
        suffix = "" if count == 1 else f"-{count}"
        names.append(f"cell-{number}-output{suffix}.{IMAGE_EXTENSIONS[mime]}")
    return names


def notebook_data(notebook: Notebook) -> dict[str, Any]:
    """The notebook for programs: kernel, language, cells with their outputs as text."""
    return {
        "kernel": notebook.kernel,
        "language": notebook.language or None,
        "cells": [
            {
                "type": cell.type,
                "source": cell.source,
                "execution_count": cell.execution_count,
                "outputs": [
                    _output_data(output, image)
                    for output, image in zip(cell.outputs, image_names(cell, number), strict=True)
                ],
            }
            for number, cell in enumerate(notebook.cells, start=1)
        ],
    }


def _output_data(output: Output, image: str | None) -> dict[str, Any]:
    text = output.data.get("text/plain")
    return {
        "type": output.type,
        "text": terminal_text(text) if text is not None else None,
        "image": image,
    }
