"""Find the fonts the PDF renderer embeds, and what characters they cover.

The PDF core fonts (Helvetica, Courier) only encode Windows-1252, so rendered
documents embed DejaVu Sans / DejaVu Sans Mono (Debian: ``fonts-dejavu-core``),
plus fallback fonts for what DejaVu lacks (math alphanumerics, CJK, emoji)
where the system has them. Fonts bundled in ``converters/fonts/`` win over the
system's. Reading font files is the one filesystem access a converter makes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from fontTools.ttLib import TTFont, TTLibError

PACKAGE_FONT_DIR = Path(__file__).parent / "fonts"
SYSTEM_FONT_DIRS: tuple[Path, ...] = (
    Path("/usr/share/fonts"),
    Path("/usr/local/share/fonts"),
    Path("/Library/Fonts"),
    Path("/System/Library/Fonts"),
    Path("C:/Windows/Fonts"),
)

#: Style letters as fpdf2 spells them: "" regular, "B" bold, "I" italic, "BI" both.
STYLES: tuple[str, ...] = ("", "B", "I", "BI")

_SANS_FILES = {
    "": "DejaVuSans.ttf",
    "B": "DejaVuSans-Bold.ttf",
    "I": "DejaVuSans-Oblique.ttf",
    "BI": "DejaVuSans-BoldOblique.ttf",
}
_MONO_FILES = {
    "": "DejaVuSansMono.ttf",
    "B": "DejaVuSansMono-Bold.ttf",
    "I": "DejaVuSansMono-Oblique.ttf",
    "BI": "DejaVuSansMono-BoldOblique.ttf",
}
#: Tried in order for characters the main fonts lack; the first that has them wins.
FALLBACK_FILES: tuple[str, ...] = (
    "DejaVuMathTeXGyre.ttf",
    "NotoSansSymbols2-Regular.ttf",
    "NotoSansSymbols-Regular.ttf",
    "NotoSansMath-Regular.ttf",
    "NotoSansCJK-Regular.ttc",
    "NotoSansCJKsc-Regular.otf",
    "DroidSansFallbackFull.ttf",
    "wqy-microhei.ttc",
    "NotoEmoji-Regular.ttf",
    "Symbola.ttf",
)
_FONT_SUFFIXES = (".ttf", ".otf", ".ttc")


@dataclass(frozen=True, slots=True)
class FontFamily:
    """Font files of one family by style; ``""`` (regular) is always present."""

    files: Mapping[str, Path]

    @property
    def regular(self) -> Path:
        return self.files[""]

    def path_for(self, style: str) -> Path:
        """The file for ``style``, or the regular one when the family lacks it."""
        return self.files.get(style, self.regular)


@dataclass(frozen=True, slots=True)
class FontSet:
    """What the renderer may embed. With no ``sans`` it uses the PDF core fonts."""

    sans: FontFamily | None
    mono: FontFamily | None
    fallbacks: tuple[Path, ...] = ()

    @property
    def is_core(self) -> bool:
        return self.sans is None


#: Renders with the PDF core fonts: characters outside Windows-1252 become "?".
CORE_FONTS = FontSet(sans=None, mono=None)


@cache
def system_fonts() -> FontSet:
    """The fonts found on this machine (searched once per process)."""
    return fonts_in((PACKAGE_FONT_DIR, *SYSTEM_FONT_DIRS))


def fonts_in(directories: Iterable[Path]) -> FontSet:
    """Build a :class:`FontSet` from font files under ``directories``.

    Without DejaVu Sans the result is :data:`CORE_FONTS`.
    """
    index = _index_fonts(directories)
    sans = _family(index, _SANS_FILES)
    if sans is None:
        return CORE_FONTS
    mono = _family(index, _MONO_FILES)
    fallbacks = tuple(index[name] for name in FALLBACK_FILES if name in index)
    return FontSet(sans=sans, mono=mono, fallbacks=fallbacks)


@cache
def coverage(path: Path) -> frozenset[int]:
    """Code points that the font at ``path`` has glyphs for (empty if unreadable)."""
    try:
        font = TTFont(path, lazy=True, fontNumber=0)
        try:
            cmap = font.getBestCmap() or {}
            return frozenset(cmap)
        finally:
            font.close()
    except (OSError, TTLibError, AssertionError, KeyError):
        return frozenset()


def _index_fonts(directories: Iterable[Path]) -> dict[str, Path]:
    """File name → path of the first font file found with that name."""
    index: dict[str, Path] = {}
    for directory in directories:
        if not directory.is_dir():
            continue
        for root, _dirs, names in os.walk(directory):
            for name in sorted(names):
                if name.lower().endswith(_FONT_SUFFIXES):
                    index.setdefault(name, Path(root) / name)
    return index


def _family(index: Mapping[str, Path], names: Mapping[str, str]) -> FontFamily | None:
    files = {style: index[name] for style, name in names.items() if name in index}
    if "" not in files:
        return None
    return FontFamily(files=files)
