"""Where a cell's displayed text comes from, per format, for :mod:`.table`.

* .xlsx/.xlsm: the number format of the cell's style. ``xl/styles.xml`` maps each
  style (``cellXfs/xf``, by position) to a ``numFmtId``, custom ids to a
  ``formatCode`` (``numFmts``), the others to ECMA-376's built-ins
  (:data:`.numfmt.BUILTIN_FORMATS`); the sheet part's ``<c s="…">`` names the style.
  The style indices are collected by :mod:`.grid` in the pass it already makes
  over each sheet, and only for styles with a number format and cells that may be
  shown. Sheets are found as calamine finds them: ``workbook.xml``'s ``<sheet>``
  names and their relationships' targets.
* .ods: ``content.xml`` holds the text LibreOffice displays (``<text:p>25.6%</text:p>``
  beside ``office:value="0.256"``); :mod:`.grid` keeps it for numeric cells.
* .xls: calamine gives no formats and reading them would take another library
  (xlrd), so .xls cells show as :func:`.table.display` shows them.

Anything unreadable here only costs the formatting: the cells then show as before,
and calamine still decides whether the workbook is readable at all.
"""

from __future__ import annotations

import posixpath
import zipfile
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from docshelf.converters.base import ConversionError
from docshelf.converters.package import optional_member
from docshelf.converters.sheets.numfmt import BUILTIN_FORMATS, Unsupported, parse, render
from docshelf.converters.sheets.table import Shown

_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_STRICT = "http://purl.oclc.org/ooxml/spreadsheetml/main"
_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_R_ID = (
    "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id",
    "{http://purl.oclc.org/ooxml/officeDocument/relationships}id",
)


@dataclass
class XlsxFormats:
    """A workbook's sheets (name → part), its styles' format codes (xf index → code, only
    those that are not General and parse) and its date system."""

    sheets: dict[str, str] = field(default_factory=dict)
    codes: dict[int, str] = field(default_factory=dict)
    date1904: bool = False

    def shown(self, styles: dict[tuple[int, int], int]) -> Shown:
        """The text of a sheet's cells from their style indices (collected by :mod:`.grid`)."""

        def text(row: int, column: int, value: Any) -> str | None:
            xf = styles.get((row, column))
            code = self.codes.get(xf) if xf is not None else None
            return render(value, code, self.date1904) if code else None

        return text


def xlsx_formats(package: zipfile.ZipFile) -> XlsxFormats:
    """Read ``workbook.xml``, its relationships and ``styles.xml`` (empty when unreadable)."""
    workbook_part = _office_document(package)
    root = _xml(package, workbook_part)
    if root is None:
        return XlsxFormats()
    targets = _relationships(package, workbook_part)
    formats = XlsxFormats()
    for ns in (_MAIN, _STRICT):
        properties = root.find(f"{{{ns}}}workbookPr")
        if properties is not None:
            formats.date1904 = properties.get("date1904", "").lower() in ("1", "true")
        for sheet in root.iterfind(f"{{{ns}}}sheets/{{{ns}}}sheet"):
            target = next((targets.get(sheet.get(a) or "") for a in _R_ID if sheet.get(a)), None)
            if target and sheet.get("name") is not None:
                formats.sheets[sheet.get("name", "")] = target
    styles_part = next(
        (part for part in targets.values() if part.lower().endswith("styles.xml")), None
    )
    styles = _xml(package, styles_part) if styles_part else None
    if styles is not None:
        formats.codes = _codes(styles)
    return formats


def _codes(styles: Any) -> dict[int, str]:
    """xf index → format code, for the styles whose code is not General and can be rendered."""
    custom: dict[int, str] = {}
    codes: dict[int, str] = {}
    for ns in (_MAIN, _STRICT):
        for element in styles.iterfind(f"{{{ns}}}numFmts/{{{ns}}}numFmt"):
            number = _int(element.get("numFmtId"))
            if number is not None:
                custom[number] = element.get("formatCode") or ""
        for index, xf in enumerate(styles.iterfind(f"{{{ns}}}cellXfs/{{{ns}}}xf")):
            number = _int(xf.get("numFmtId"))
            code = custom.get(number, BUILTIN_FORMATS.get(number, "")) if number else ""
            if code and _renderable(code):
                codes[index] = code
    return codes


def _renderable(code: str) -> bool:
    try:
        return parse(code) is not None
    except Unsupported:
        return False


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _office_document(package: zipfile.ZipFile) -> str:
    root = _xml(package, "_rels/.rels")
    if root is not None:
        for relationship in root.iterfind(f"{{{_RELS}}}Relationship"):
            if relationship.get("Type", "").endswith("/officeDocument"):
                return relationship.get("Target", "").lstrip("/")
    return "xl/workbook.xml"


def _relationships(package: zipfile.ZipFile, part: str) -> dict[str, str]:
    """Relationship id → target part name of ``part``."""
    folder, name = posixpath.split(part)
    root = _xml(package, posixpath.join(folder, "_rels", name + ".rels"))
    targets: dict[str, str] = {}
    for relationship in root.iterfind(f"{{{_RELS}}}Relationship") if root is not None else ():
        target = relationship.get("Target", "")
        if relationship.get("TargetMode") == "External" or not target:
            continue
        resolved = target[1:] if target.startswith("/") else posixpath.join(folder, target)
        targets[relationship.get("Id", "")] = posixpath.normpath(resolved)
    return targets


def _xml(package: zipfile.ZipFile, name: str) -> Any:
    """The parsed part, or ``None`` when it is absent or unreadable."""
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import fromstring

    try:
        data = optional_member(package, name, "XLSX")
        return fromstring(data, forbid_dtd=True) if data is not None else None
    except (ConversionError, DefusedXmlException, SyntaxError, ValueError):
        return None  # formats are optional; calamine judges the workbook


@dataclass
class Displayed:
    """The texts an .ods shows for a table's numeric cells, by runs of repeated rows: row
    runs start at ``starts`` (0-based, ascending), each with its end and its cells as
    ``(first column, end column, text)``."""

    starts: list[int] = field(default_factory=list)
    rows: list[tuple[int, list[tuple[int, int, str]]]] = field(default_factory=list)

    def add(self, row: int, end: int, cells: list[tuple[int, int, str]]) -> None:
        if cells:
            self.starts.append(row)
            self.rows.append((end, cells))

    def text(self, row: int, column: int, value: Any) -> str | None:
        del value
        index = bisect_right(self.starts, row) - 1
        if index < 0 or row >= self.rows[index][0]:
            return None
        for first, end, text in self.rows[index][1]:
            if first <= column < end:
                return text
        return None
