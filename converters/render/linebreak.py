"""Line breaking of plain text a line at a time, with fpdf2's exact results.

fpdf2 2.8.9 breaks a paragraph into lines one character at a time
(``fpdf.line_break.MultiLineBreak.get_line``): for each character it measures
it, asks the line built so far for its width, and appends the character to a
line fragment, a dozen Python calls a character. :class:`PlainLineBreak` finds
each line's end from running sums of the characters' widths instead: a
fragment's sums are computed once (C loops), the first character that would
overflow the line is found by bisection, and the line is cut at the last space
before it, as fpdf2 cuts it. The line itself is then handed to fpdf2's own
``CurrentLine.manual_break``, so the ``TextLine`` it yields is fpdf2's.

The result is identical to fpdf2's, line for line and float for float: the
bisection only skips characters that provably fit (a line's width computed as
fpdf2 computes it differs from the monotonic running sum by a few units in the
last place, far below fpdf2's 1e-9 tolerance), and every remaining comparison
is fpdf2's own expression. Whatever is not plain text of
:class:`~converters.render.measure.MeasuredFragment` (shaped or letter-spaced
text, core fonts, newlines, soft hyphens, no-break and other special spaces, a
word wider than the line, character wrapping) is left to fpdf2, for that line.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from fpdf.enums import Align, WrapMode
from fpdf.line_break import SPACE, CurrentLine, Fragment, MultiLineBreak, TextLine
from fpdf.text_region import ImageParagraph, LineWrapper, Paragraph, TextColumns
from fpdf.util import FloatTolerance

from docshelf.converters.render.measure import MeasuredFragment

_DECLINED = object()


@dataclass(slots=True)
class _Piece:
    """A line fragment being built: its first source fragment and the slices it holds."""

    source: MeasuredFragment
    slices: list[tuple[list[str], int, int]] = field(default_factory=list)
    units: float = 0  # the sum of its characters' widths, in font units
    length: int = 0

    def width(self) -> float:
        return self.source.units_width(self.units)


class PlainLineBreak(MultiLineBreak):
    """fpdf2's ``MultiLineBreak``, finding the end of a plain-text line without a
    per-character loop (see the module's docstring)."""

    def get_line(self) -> TextLine | None:
        line = self._plain_line()
        if line is _DECLINED:
            return super().get_line()
        return line  # type: ignore[return-value]

    def _limit(self, full_width: float) -> float:
        """The width text may fill, as ``get_line`` reduces it."""
        limit = full_width
        for margin in self.margins:
            limit -= float(margin)
        if self._is_first_line:
            limit -= self.first_line_indent
        return limit

    def _plain_line(self) -> TextLine | object | None:
        """The next line, or ``_DECLINED`` (nothing changed) when fpdf2 must lay it out."""
        fragments = self.fragments
        count = len(fragments)
        fragment_index, character_index = self.fragment_index, self.character_index
        if self.wrapmode != WrapMode.WORD or fragment_index == count:
            return _DECLINED
        if self.skip_leading_spaces:
            while fragment_index < count:
                characters = fragments[fragment_index].characters
                if character_index >= len(characters):
                    fragment_index, character_index = fragment_index + 1, 0
                elif characters[character_index] == SPACE:
                    character_index += 1
                else:
                    break
        full_width = self.get_width(0)
        limit = self._limit(full_width)
        font_height: float = 0
        height: float = 0  # the line's height when its last character was added
        pieces: list[_Piece] = []
        closed: float = 0  # the width of pieces[:-1], summed as CurrentLine.width sums it
        spaces = 0
        hint: tuple[int, int, int, int, int] | None = None  # fpdf2's SpaceHint, in short
        while fragment_index < count:
            fragment = fragments[fragment_index]
            characters = fragment.characters
            end = len(characters)
            if character_index >= end:
                fragment_index, character_index = fragment_index + 1, 0
                continue
            if not isinstance(fragment, MeasuredFragment):
                return _DECLINED
            layout = fragment.plain_layout()
            if layout is None:
                return _DECLINED
            text, sums = layout
            if FloatTolerance.greater_than(fragment.font_size, font_height):
                font_height = fragment.font_size
                full_width = self.get_width(font_height)
                limit = self._limit(full_width)
            last = pieces[-1] if pieces else None
            if (
                last is not None
                and fragment.has_same_style(last.source)
                and fragment.link == last.source.link
            ):
                piece, base, units = last, closed, last.units
                new_piece = False
            else:
                piece = _Piece(fragment)
                base = closed if last is None else closed + last.width()
                units = 0
                new_piece = True
            start = character_index
            offset = units - sums[start]  # piece units before character j: offset + sums[j]
            stop = _first_overflow(fragment, sums, start, base, offset, limit)
            if stop > start:  # characters start..stop-1 join the line
                if new_piece:
                    if last is not None:
                        closed = base
                    pieces.append(piece)
                space = text.rfind(SPACE, start, stop)
                if space >= 0:
                    hint = (
                        fragment_index,
                        space,
                        len(pieces),
                        piece.length + space - start,
                        spaces + text.count(SPACE, start, space),
                    )
                spaces += text.count(SPACE, start, stop)
                piece.slices.append((characters, start, stop))
                piece.units = offset + sums[stop]
                piece.length += stop - start
                height = font_height * self.line_height
            if stop == end:
                fragment_index, character_index = fragment_index + 1, 0
                continue
            # Character `stop` does not fit: break the line as get_line does.
            if text[stop] == SPACE:
                return self._commit(
                    pieces, spaces, height, full_width, self.align, (fragment_index, stop + 1)
                )
            if hint is None:
                return _DECLINED  # a word wider than the line: fpdf2 forces a break
            hint_fragment, hint_character, kept, kept_length, spaces = hint
            del pieces[kept:]
            _trim(pieces[-1], kept_length)
            return self._commit(
                pieces, spaces, height, full_width, self.align, (hint_fragment, hint_character + 1)
            )
        align = Align.L if self.align == Align.J else self.align
        return self._commit(pieces, spaces, height, full_width, align, (count, 0), last=True)

    def _commit(
        self,
        pieces: list[_Piece],
        spaces: int,
        height: float,
        full_width: float,
        align: Align,
        resume: tuple[int, int],
        last: bool = False,
    ) -> TextLine | None:
        """The line as fpdf2's CurrentLine makes it, and the breaker moved past it."""
        line = CurrentLine(
            max_width=full_width,
            print_sh=self.print_sh,
            indent=self.first_line_indent if self._is_first_line else 0,
        )
        line.fragments = [_fragment(piece) for piece in pieces]
        line.number_of_spaces = spaces
        line.height = height
        self.idx_last_forced_break = None
        self.fragment_index, self.character_index = resume
        if last and not line.width:
            return None
        self._is_first_line = False
        return line.manual_break(align)


def _first_overflow(
    fragment: MeasuredFragment,
    sums: list[float],
    start: int,
    base: float,
    offset: float,
    limit: float,
) -> int:
    """The first character from ``start`` that fpdf2 finds does not fit on the line
    (``len(sums) - 1`` when all do): the line's width so far (``base`` for the
    pieces before, then the piece's ``offset + sums[j]`` font units) plus the
    character's, more than ``limit`` by fpdf2's tolerance.

    Characters before the first whose running sum exceeds ``limit`` cannot
    overflow (see the module's docstring), so bisection skips them; from there
    on, fpdf2's own comparison decides.
    """
    end = len(sums) - 1
    width = fragment.units_width
    candidate = bisect.bisect_right(
        range(start, end), limit, key=lambda j: base + width(offset + sums[j + 1])
    )
    for j in range(start + candidate, end):
        before = base + width(offset + sums[j])  # CurrentLine.width
        if FloatTolerance.greater_than(before + width(sums[j + 1] - sums[j]), limit):
            return j
    return end


def _trim(piece: _Piece, length: int) -> None:
    """Keep the first ``length`` characters of ``piece``."""
    kept: list[tuple[list[str], int, int]] = []
    left = length
    for characters, start, stop in piece.slices:
        if left <= 0:
            break
        stop = min(stop, start + left)
        kept.append((characters, start, stop))
        left -= stop - start
    piece.slices = kept or [(piece.slices[0][0], piece.slices[0][1], piece.slices[0][1])]
    piece.length = length


def _fragment(piece: _Piece) -> Fragment:
    """The line fragment fpdf2 would have built for ``piece``."""
    characters: list[str] = []
    for chars, start, stop in piece.slices:
        characters.extend(chars[start:stop])
    return piece.source.clone(characters=characters, link=piece.source.link)


class PlainTextColumns(TextColumns):
    """fpdf2's text region of ``write_html``, breaking its paragraphs with
    :class:`PlainLineBreak`."""

    def collect_lines(self) -> list[ImageParagraph | LineWrapper]:
        lines: list[ImageParagraph | LineWrapper] = []
        for paragraph in self._paragraphs:
            if isinstance(paragraph, Paragraph):
                lines.extend(_paragraph_lines(paragraph, self.print_sh))
            else:
                lines.append(paragraph.build_line())
        return lines


def _paragraph_lines(paragraph: Paragraph, print_sh: bool) -> list[LineWrapper]:
    """``Paragraph.build_lines`` of fpdf2 2.8.9, with :class:`PlainLineBreak`."""
    pdf = paragraph.pdf
    region = paragraph._region
    breaker = PlainLineBreak(
        paragraph._text_fragments,
        max_width=region.get_width,
        margins=(pdf.c_margin + paragraph.indent, pdf.c_margin),
        first_line_indent=paragraph.first_line_indent,
        align=paragraph.text_align or region.text_align or Align.L,
        print_sh=print_sh,
        wrapmode=paragraph.wrapmode,
        line_height=paragraph.line_height,
        skip_leading_spaces=paragraph.skip_leading_spaces,
    )
    paragraph._text_fragments = []
    lines: list[LineWrapper] = []
    line = breaker.get_line()
    while line is not None:
        lines.append(LineWrapper(line, paragraph, first_line=not lines))
        line = breaker.get_line()
    if lines:
        last = lines[-1]
        lines[-1] = LineWrapper(last.line, paragraph, first_line=last.first_line, last_line=True)
    return lines
