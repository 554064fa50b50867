"""Text fragments that measure their width in time proportional to what changed.

fpdf2 2.8.9 breaks a paragraph into lines one character at a time
(``fpdf.line_break.MultiLineBreak.get_line``), and for every character it asks
the line built so far for its width (``CurrentLine.width``), which asks each of
the line's fragments for theirs (``Fragment.get_width``), which sums the widths
of all their characters again (``TTFFont.get_text_width``). A line of L
characters therefore costs about L²/2 width lookups: with ~100 characters a
line, that was ~60 % of the CPU of rendering ordinary prose (issue 24).

A :class:`MeasuredFragment` keeps the running sum of its characters' widths and
adds only the characters appended since it last measured itself; the line's
fragments are its clones (``Fragment.clone`` keeps the class), so the line
breaker's repeated question costs one addition instead of a pass over the line.
The result is the same float as fpdf2's (the same widths added in the same
order from 0), so the layout and the PDF bytes are unchanged. The widths of
single characters, asked once per character, are remembered per font and size.

Only plain TrueType text takes this path: shaped text (HarfBuzz widths are not
sums of character widths), stretched or letter-spaced text, symbol fonts and the
core fonts keep fpdf2's own measurement. fpdf2 only ever appends to a fragment's
characters or replaces the list (``trim``), so a sum is reused only while the
list is the same object and no shorter than what was summed.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import accumulate
from typing import Any, cast

from fpdf.fonts import TTFFont
from fpdf.line_break import (
    BREAKING_SPACE_SYMBOLS,
    FORM_FEED,
    NBSP,
    NEWLINE,
    SOFT_HYPHEN,
    SPACE,
    Fragment,
)

#: Characters whose line breaking fpdf2 does alone (see :mod:`converters.render.linebreak`).
SPECIAL_CHARACTERS = frozenset({NEWLINE, FORM_FEED, SOFT_HYPHEN, NBSP, *BREAKING_SPACE_SYMBOLS}) - {
    SPACE
}

#: Single-character widths of one document, by face, size and spacing, then by
#: (character, print_sh, initial_cs): what ``Fragment.get_character_width`` returns.
CharacterWidths = dict[tuple[Any, ...], dict[tuple[str, bool, bool], float]]


class MeasuredFragment(Fragment):
    """A :class:`~fpdf.line_break.Fragment` whose whole width is measured incrementally."""

    def __init__(
        self,
        characters: list[str] | str,
        graphics_state: Any,
        k: float,
        link: int | str | None = None,
        *,
        widths: CharacterWidths,
    ) -> None:
        super().__init__(characters, graphics_state, k, link)
        self._widths = widths
        # Whether the width is the plain sum of the characters' widths, known once it
        # is first asked for (fpdf2 sets a fragment's state before it measures it).
        self._plain: bool | None = None
        self._size = 0.0  # font size in points (Fragment.font_size_pt), once _plain is known
        self._face_widths: dict[tuple[str, bool, bool], float] | None = None
        self._summed: list[str] | None = None  # the character list the running sum is of
        self._summed_count = 0  # how many of its characters are in the sum
        self._summed_units: float = 0  # the sum of their widths, in font units (TTFFont.cw)
        self._layout: tuple[list[str], str, list[float]] | None = None  # see plain_layout
        self._width = 0.0  # the width of those characters

    def clone(
        self, characters: list[str] | str = "", link: int | str | None = None
    ) -> MeasuredFragment:
        clone = MeasuredFragment(characters, self.graphics_state, self.k, link, widths=self._widths)
        clone._plain, clone._size = self._plain, self._size  # the same state object
        return clone

    def has_same_style(self, other: Fragment) -> bool:
        # A line's fragments are clones sharing the state object of the fragment they
        # came from: the same object is equal to itself (GraphicsState holds no NaN).
        if other.graphics_state is self.graphics_state and other.k == self.k:
            return self.__class__ == other.__class__
        return super().has_same_style(other)

    def get_width(
        self,
        start: int = 0,
        end: int | None = None,
        chars: str | None = None,
        initial_cs: bool = True,
    ) -> float:
        if chars is None and not start and end is None:
            characters = self.characters
            if characters is self._summed and len(characters) == self._summed_count:
                return self._width  # fpdf2's line breaker asks again and again
            if self._is_plain():
                return self._measure(characters)
        return super().get_width(start, end, chars, initial_cs)

    def get_character_width(
        self, character: str, print_sh: bool = False, initial_cs: bool = True
    ) -> float:
        widths = self._face_widths
        if widths is None:
            if not self._is_plain():
                return super().get_character_width(character, print_sh, initial_cs)
            face = (self.font.fontkey, self._size, self.k)  # what else the width depends on
            widths = self._face_widths = self._widths.setdefault(face, {})
        key = (character, print_sh, initial_cs)
        width = widths.get(key)
        if width is None:
            width = widths[key] = super().get_character_width(character, print_sh, initial_cs)
        return width

    def units_width(self, units: float) -> float:
        """The width of characters whose font widths add up to ``units``, in document
        units, as ``Fragment.get_width`` computes it for unspaced plain text."""
        return units * self._size * 0.001 / self.k

    def plain_layout(self) -> tuple[str, list[float]] | None:
        """The fragment's text and the running sums of its characters' widths (font
        units, ``sums[i]`` for the first ``i``), when it is unspaced plain text
        holding no character whose line breaking is fpdf2's own; else None."""
        characters = self.characters
        layout = self._layout
        if layout is not None and layout[0] is characters and len(layout[2]) == len(characters) + 1:
            return layout[1], layout[2]
        if not self._is_plain():
            return None
        text = "".join(characters)
        if not SPECIAL_CHARACTERS.isdisjoint(text):
            return None
        widths = self._ttf().cw
        sums: list[float] = list(accumulate(map(widths.__getitem__, map(ord, text)), initial=0))
        self._layout = (characters, text, sums)
        return text, sums

    def _is_plain(self) -> bool:
        """Whether the width is the plain sum of the characters' widths: TrueType,
        not a symbol font, not shaped, neither stretched nor letter-spaced."""
        if self._plain is None:
            font = self.font
            self._plain = (
                isinstance(font, TTFFont)
                and not font.is_symbol
                and not self.text_shaping_parameters
                and self.font_stretching == 100
                and self.char_spacing == 0
            )
            if self._plain:
                size = self._size = self.font_size_pt
                if size > self._ttf().biggest_size_pt:  # as TTFFont.get_text_width records it
                    self._ttf().biggest_size_pt = size
        return self._plain

    def _ttf(self) -> TTFFont:
        return cast(TTFFont, self.font)  # plain fragments have TrueType fonts

    def _measure(self, characters: list[str]) -> float:
        """The width of all the characters, adding those appended since last time;
        the arithmetic of ``TTFFont.get_text_width`` and ``Fragment.get_width``."""
        if characters is not self._summed or len(characters) < self._summed_count:
            self._summed, self._summed_count, self._summed_units = characters, 0, 0
            self._width = 0.0
        count = len(characters)
        if self._summed_count < count:
            widths = self._ttf().cw
            units = self._summed_units
            for character in characters[self._summed_count :]:
                units += widths[ord(character)]
            self._summed_units = units
            self._summed_count = count
            self._width = self.units_width(units)
        return self._width


def measured(fragments: Iterable[Fragment], widths: CharacterWidths) -> list[Fragment]:
    """``fragments`` with every plain :class:`Fragment` made a :class:`MeasuredFragment`
    sharing the document's ``widths`` (fpdf2's special fragments, such as the
    page-count placeholder, are kept as they are)."""
    return [
        MeasuredFragment(f.characters, f.graphics_state, f.k, f.link, widths=widths)
        if type(f) is Fragment
        else f
        for f in fragments
    ]
