"""Find the fonts the PDF renderer embeds, and what characters they cover.

The PDF core fonts (Helvetica, Courier) only encode Windows-1252, so rendered
documents embed DejaVu Sans / DejaVu Sans Mono (Debian: ``fonts-dejavu-core``),
plus fallback fonts for what DejaVu lacks (math alphanumerics, CJK, some
Arabic letters, emoji) where the system has them. Fallbacks are found two ways:
by file name anywhere under the font directories (:data:`FALLBACK_FILES`), and,
for characters those leave uncovered, by asking fontconfig (``fc-match``) for a
font with them, so a font installed under another name is found too. Fonts
bundled in ``converters/fonts/`` win over the system's. What was found, and
which scripts have no font, is logged when the server starts
(:func:`report_fonts`). Reading font files is the one filesystem access a
converter makes.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from fontTools.ttLib import TTFont, TTLibError

log = logging.getLogger(__name__)

PACKAGE_FONT_DIR = Path(__file__).parent.parent / "fonts"
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
#: (Debian: math in ``fonts-dejavu-core``, Arabic in ``fonts-noto-ui-core`` or
#: ``fonts-noto-core``, CJK in ``fonts-noto-cjk``.) A collection (``.ttc``)
#: contributes its first face: Noto Sans CJK's is the Japanese one, which has
#: every Han, kana and Hangul character of the others.
FALLBACK_FILES: tuple[str, ...] = (
    "DejaVuMathTeXGyre.ttf",
    "NotoSansSymbols2-Regular.ttf",
    "NotoSansSymbols-Regular.ttf",
    "NotoSansMath-Regular.ttf",
    "NotoSansArabic-Regular.ttf",
    "NotoSansArabicUI-Regular.ttf",
    "NotoNaskhArabic-Regular.ttf",
    "NotoSansCJK-Regular.ttc",
    "NotoSansCJKsc-Regular.otf",
    "NotoSansCJKjp-Regular.otf",
    "DroidSansFallbackFull.ttf",
    "wqy-microhei.ttc",
    "NotoEmoji-Regular.ttf",
    "Symbola.ttf",
)
_FONT_SUFFIXES = (".ttf", ".otf", ".ttc")

#: Scripts whose coverage is checked (and logged) at start: characters of each
#: (Arabic's include Persian and Urdu letters DejaVu Sans lacks), and the Debian
#: package that brings a font for them.
SCRIPT_SAMPLES: dict[str, tuple[str, str]] = {
    "Han": ("中文漢字", "fonts-noto-cjk"),
    "kana": ("ひらがなカタカナ", "fonts-noto-cjk"),
    "Hangul": ("한국어", "fonts-noto-cjk"),
    "Arabic": ("عربی پچژگ ۀےٱ", "fonts-noto-ui-core"),
    "math operators": ("∑∫√≠≤∞", "fonts-dejavu-core"),
    "math alphanumerics": ("\U0001d465\U0001d400\U0001d538", "fonts-dejavu-core"),
}
_FC_MATCH_TIMEOUT_S = 10
#: How many characters no known font draws a rendering asks fontconfig about.
FONTCONFIG_QUESTIONS = 4


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
    """The fonts found on this machine by file name (searched once per process).

    Reads no font file: what each covers is read when a text needs it
    (:func:`coverage`), so a Latin document never loads a CJK font's cmap.
    """
    return fonts_in((PACKAGE_FONT_DIR, *SYSTEM_FONT_DIRS))


def report_fonts() -> FontSet:
    """The fonts rendered PDFs can use, fontconfig's finds included, logged.

    Reads every fallback's cmap (the CJK one alone is ~25 MB in memory), which
    is why the server runs it in a child process at start (``app.cli``).
    """
    fonts = system_fonts()
    if not fonts.is_core:
        fonts = with_fontconfig_fallbacks(fonts)
    log_fonts(fonts)
    return fonts


def fontconfig_fallbacks(fonts: FontSet, missing: Iterable[int]) -> tuple[Path, ...]:
    """Fonts fontconfig matches for characters none of ``fonts`` draws, each
    checked to have them; at most :data:`FONTCONFIG_QUESTIONS` characters asked."""
    found: list[Path] = []
    for count, code in enumerate(sorted(missing)):
        if count == FONTCONFIG_QUESTIONS:
            break
        if any(code in coverage(path) for path in found):
            continue
        path = fontconfig_match(chr(code))
        if path is not None and path not in fonts.fallbacks and code in coverage(path):
            found.append(path)
    return tuple(found)


def with_fontconfig_fallbacks(fonts: FontSet) -> FontSet:
    """``fonts`` plus what fontconfig finds for each script's sample characters
    none of them draws (:func:`fontconfig_fallbacks`, script by script)."""
    for sample, _package in SCRIPT_SAMPLES.values():
        missing = {ord(char) for char in sample if not char.isspace()}
        missing = {code for code in missing if drawn_by(fonts, chr(code)) is None}
        found = fontconfig_fallbacks(fonts, missing)
        fonts = FontSet(sans=fonts.sans, mono=fonts.mono, fallbacks=fonts.fallbacks + found)
    return fonts


@cache
def fontconfig_match(char: str) -> Path | None:
    """The font file fontconfig picks for ``char`` in a sans-serif face, if any.

    fontconfig answers with its best match even when no font has the character:
    callers check the font's :func:`coverage`.
    """
    fc_match = shutil.which("fc-match")
    if fc_match is None:
        return None
    try:
        found = subprocess.run(
            [fc_match, "--format=%{file}", f"sans-serif:charset={ord(char):x}"],
            capture_output=True,
            text=True,
            timeout=_FC_MATCH_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    path = Path(found.stdout.strip())
    if found.returncode != 0 or not path.name.lower().endswith(_FONT_SUFFIXES):
        return None
    return path if path.is_file() else None


def drawn_by(fonts: FontSet, char: str) -> Path | None:
    """The font file that draws ``char``: the regular sans face, else the first
    fallback that has it; None when none does (or with the core fonts)."""
    if fonts.sans is None:
        return None
    for path in (fonts.sans.regular, *fonts.fallbacks):
        if ord(char) in coverage(path):
            return path
    return None


def script_fonts(fonts: FontSet) -> dict[str, tuple[Path, ...] | None]:
    """For each script of :data:`SCRIPT_SAMPLES`, the font files drawing its sample
    characters, or None when some of them no font draws."""
    found: dict[str, tuple[Path, ...] | None] = {}
    for script, (sample, _package) in SCRIPT_SAMPLES.items():
        paths = [drawn_by(fonts, char) for char in sample if not char.isspace()]
        found[script] = None if None in paths else tuple(dict.fromkeys(p for p in paths if p))
    return found


def log_fonts(fonts: FontSet) -> None:
    """Log the fonts PDFs are rendered with, and warn of the scripts no font draws."""
    if fonts.sans is None:
        log.warning(
            "PDF rendering: DejaVu Sans not found (apt-get install fonts-dejavu-core); "
            "rendered PDFs use the core fonts, and characters outside Windows-1252 become '?'"
        )
        return
    by_script = script_fonts(fonts)
    used_for = {
        path.name: [s for s, paths in by_script.items() if paths and path in paths]
        for path in fonts.fallbacks
    }
    found = ", ".join(
        f"{name} ({', '.join(scripts)})" if scripts else name for name, scripts in used_for.items()
    )
    log.info("PDF rendering fonts: %s; fallbacks: %s", fonts.sans.regular.name, found or "none")
    missing = [script for script, paths in by_script.items() if paths is None]
    if missing:
        packages = sorted({SCRIPT_SAMPLES[script][1] for script in missing})
        log.warning(
            "PDF rendering: no font for %s: rendered PDFs show U+FFFD for them "
            "(Debian: apt-get install %s)",
            ", ".join(missing),
            " ".join(packages),
        )


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
