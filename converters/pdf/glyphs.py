"""What a glyph PDFium cannot map reads as, from its font's encoding as pypdf reads it.

PDFium leaves a glyph it finds no Unicode for as its raw character code. In
TeX's math fonts (no ToUnicode; built-in encodings with TeX's glyph names:
CMSY's ``prime``, ``angbracketleft``, ``mapsto`` ...) that turns a prime
into "0" and an angle bracket into "h": a wrong character, worse than none. pypdf reads the same
fonts' ToUnicode maps, /Differences and embedded font programs, and knows
TeX's glyph names, so it is asked, for just the glyphs PDFium flagged.

A glyph nobody can name reads as nothing. A glyph name pypdf could not map
(it hands back ``/Bullet``) is tried in lower case against the Adobe Glyph
List and otherwise reads as nothing: a name never shows up as text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from fontTools import agl
from pypdf import PageObject
from pypdf.generic import DictionaryObject

from docshelf.converters.pdf.meta import READ_ERRORS

try:  # pypdf's font decoding is not public API; without it, unmapped glyphs are dropped
    from pypdf._cmap import get_encoding as _get_encoding
except ImportError:  # pragma: no cover
    _get_encoding = None  # type: ignore[assignment]

#: Form XObjects nest; their fonts are looked for this deep.
MAX_RESOURCE_DEPTH = 4

_SUBSET_TAG = re.compile(r"^[A-Z]{6}\+")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


class GlyphNames:
    """Text for (page, font, code) triples, resolved through each page's fonts.

    Fonts are found by name: PDFium reports a font's /BaseFont (with or
    without the subset tag; empty for Type 3 fonts). A page's resources are
    read only when a name is not yet known from an earlier page.
    """

    def __init__(self, pages: Sequence[PageObject]) -> None:
        self._pages = pages
        self._fonts: dict[str, list[DictionaryObject]] = {}
        self._read_pages: set[int] = set()
        self._maps: dict[int, _FontMap] = {}

    def text(self, page_index: int, font_name: str, code: int) -> str:
        """What the glyph ``code`` of font ``font_name`` on page ``page_index`` reads as."""
        name = _SUBSET_TAG.sub("", font_name)
        if name not in self._fonts and page_index not in self._read_pages:
            self._read_page(page_index)
        for font in self._fonts.get(name, ()):
            text = self._map(font).text(code)
            if text is not None:
                return text
        return ""

    def silent_codes(self, page_index: int, font_name: str) -> frozenset[int]:
        """Codes that font ``font_name``'s ToUnicode map explicitly gives no text."""
        name = _SUBSET_TAG.sub("", font_name)
        if name not in self._fonts and page_index not in self._read_pages:
            self._read_page(page_index)
        codes: frozenset[int] = frozenset()
        for font in self._fonts.get(name, ()):
            codes |= self._map(font).silent
        return codes

    def _read_page(self, page_index: int) -> None:
        self._read_pages.add(page_index)
        if not 0 <= page_index < len(self._pages):
            return
        try:
            for font in _fonts(self._pages[page_index].get("/Resources"), 0):
                name = _SUBSET_TAG.sub("", str(font.get("/BaseFont", "")).lstrip("/"))
                known = self._fonts.setdefault(name, [])
                if not any(font is other for other in known):
                    known.append(font)
        except READ_ERRORS:
            return

    def _map(self, font: DictionaryObject) -> _FontMap:
        key = id(font)
        if key not in self._maps:
            self._maps[key] = _FontMap(font)
        return self._maps[key]


class _FontMap:
    """One font's code → text, as pypdf decodes it (None where it has no entry)."""

    def __init__(self, font: DictionaryObject) -> None:
        self._encoding: Mapping[int, str] = {}
        self._to_unicode: Mapping[Any, Any] = {}
        #: Codes the ToUnicode map gives no text.
        self.silent: frozenset[int] = frozenset()
        if _get_encoding is None:
            return
        try:
            encoding, to_unicode = _get_encoding(font)
        except READ_ERRORS:
            return
        self._encoding = encoding if isinstance(encoding, dict) else {}
        self._to_unicode = to_unicode
        self.silent = frozenset(
            ord(key)
            for key, value in to_unicode.items()
            if isinstance(key, str) and len(key) == 1 and value == ""
        )

    def text(self, code: int) -> str | None:
        key = chr(code)
        if key in self._to_unicode:
            found = self._to_unicode[key]
        elif code in self._encoding:
            found = self._encoding[code]
        else:
            return None
        return _readable(found) if isinstance(found, str) else None


def _readable(text: str) -> str:
    """``text`` unless it is a glyph name or control characters; a name is looked up."""
    if text.startswith("/"):
        name = text[1:]
        return agl.toUnicode(name) or agl.toUnicode(name.lower())
    return _CONTROL.sub("", text)


def _fonts(resources: Any, depth: int) -> Iterator[DictionaryObject]:
    """Font dictionaries of a resource dictionary, its form XObjects' and its Type 3 fonts'."""
    resources = resources.get_object() if resources is not None else None
    if not isinstance(resources, DictionaryObject) or depth > MAX_RESOURCE_DEPTH:
        return
    fonts = resources.get("/Font")
    fonts = fonts.get_object() if fonts is not None else None
    if isinstance(fonts, DictionaryObject):
        for reference in fonts.values():
            font = reference.get_object()
            if isinstance(font, DictionaryObject):
                yield font
                if font.get("/Subtype") == "/Type3":
                    yield from _fonts(font.get("/Resources"), depth + 1)
    objects = resources.get("/XObject")
    objects = objects.get_object() if objects is not None else None
    if isinstance(objects, DictionaryObject):
        for reference in objects.values():
            xobject = reference.get_object()
            if isinstance(xobject, DictionaryObject) and xobject.get("/Subtype") == "/Form":
                yield from _fonts(xobject.get("/Resources"), depth + 1)
