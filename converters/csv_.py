"""CSV and TSV sources (dialect sniffed).

Derived: text/markdown (a GFM table), application/json (the table, and the
rows as objects keyed by the header under ``data``), application/pdf
(rendered), and text/plain, the file as it is (decoded to UTF-8). The first
row is the header: that is what CSV files overwhelmingly do, and guessing
otherwise (``csv.Sniffer.has_header``) is wrong as often as it is right.
"""

from __future__ import annotations

import csv
import io
from pathlib import PurePosixPath
from typing import Any

from docshelf.converters.assemble import markdown_result
from docshelf.converters.base import (
    ConversionResult,
    Facts,
    Source,
)
from docshelf.converters.document import DocumentData
from docshelf.converters.failures import conversion_failure
from docshelf.converters.markdown.model import Table
from docshelf.converters.textutil import check_size, decode, markdown_heading, markdown_table

CSV_MIME_TYPES = frozenset({"text/csv", "application/csv", "text/tab-separated-values"})
CSV_EXTENSIONS = frozenset({".csv", ".tsv", ".tab"})
#: How much of the file the dialect sniffer looks at.
SNIFF_BYTES = 16 * 1024
_DELIMITERS = ",;\t|"
_TAB_EXTENSIONS = frozenset({".tsv", ".tab"})


class CsvConverter:
    """Converts delimited tables."""

    name = "csv"
    version = "3"

    def accepts(self, source: Source) -> bool:
        return source.base_mime_type in CSV_MIME_TYPES or source.extension in CSV_EXTENSIONS

    def convert(self, source: Source) -> ConversionResult:
        check_size(source.data)
        decoded = decode(source.data)
        text = decoded.text
        rows = read_rows(text, source.extension)
        header, body = (rows[0], rows[1:]) if rows else ([], [])
        keys = unique_keys(header, max((len(row) for row in rows), default=0))
        records = [_record(keys, row) for row in body]
        table = Table(
            header=tuple(keys),
            rows=tuple(tuple(row) + ("",) * (len(keys) - len(row)) for row in body),
        )
        facts = Facts(
            description=_describe(keys, len(body)),
            metadata={"rows": str(len(body)), "columns": str(len(keys)), **decoded.metadata},
        )
        heading = markdown_heading(1, PurePosixPath(source.filename).name or "Table")
        markdown = f"{heading}\n\n{markdown_table(keys, body)}"
        return markdown_result(
            source,
            facts,
            markdown,
            plain=text,
            json_view=DocumentData(facts=facts, sections=(), tables=(table,), data=records),
        )


def read_rows(text: str, extension: str) -> list[list[str]]:
    """All non-blank rows, in the sniffed dialect."""
    dialect = sniff_dialect(text[:SNIFF_BYTES], extension)
    try:
        return [row for row in csv.reader(io.StringIO(text, newline=""), dialect) if any(row)]
    except csv.Error as exc:
        raise conversion_failure(exc, f"unreadable CSV: {exc}") from exc


def sniff_dialect(sample: str, extension: str) -> type[csv.Dialect] | csv.Dialect:
    """The sample's dialect; Excel's (tab-separated for .tsv) when it is not clear."""
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS)
    except csv.Error:
        return csv.excel_tab if extension in _TAB_EXTENSIONS else csv.excel


def unique_keys(header: list[str], width: int) -> list[str]:
    """Header cells as object keys: blanks named ``column_N``, repeats suffixed ``_2``..."""
    keys: list[str] = []
    seen: set[str] = set()
    for index in range(max(width, len(header))):
        base = header[index].strip() if index < len(header) else ""
        base = base or f"column_{index + 1}"
        key, suffix = base, 2
        while key in seen:
            key, suffix = f"{base}_{suffix}", suffix + 1
        seen.add(key)
        keys.append(key)
    return keys


def _record(keys: list[str], row: list[str]) -> dict[str, Any]:
    """A row as an object; a cell the row does not have is null."""
    return {key: (row[index] if index < len(row) else None) for index, key in enumerate(keys)}


def _describe(keys: list[str], count: int) -> str:
    shown = ", ".join(keys[:8]) + (", …" if len(keys) > 8 else "")
    return f"Table of {count} rows and {len(keys)} columns" + (f": {shown}" if shown else "")
