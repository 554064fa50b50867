# ruff: noqa: RUF001, RUF003 - look-alike characters (full-width, math letters) are the point
"""Rendered PDFs draw every script the fonts installed cover: CJK, Arabic, math.

Real conversions, read back two ways: the text layer (pypdfium2) must hold
every character of the input and no U+FFFD, and each character must map, in an
embedded font program, to a real glyph (not .notdef, not empty). Tests that
need a font this machine lacks skip and say which Debian package brings it;
``.ci/run`` installs them, so CI runs them all.
"""

from __future__ import annotations

import io
import logging
import re
import shutil
import subprocess
import sys
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pypdf
import pypdfium2 as pdfium
import pytest
from fontTools.cffLib import CFFFontSet
from fontTools.ttLib import TTFont

from docshelf.converters import convert
from docshelf.converters.render.fonts import (
    FontSet,
    coverage,
    fonts_in,
    log_fonts,
    script_fonts,
    system_fonts,
    with_fontconfig_fallbacks,
)

FONTS = system_fonts()
pytestmark = pytest.mark.skipif(FONTS.sans is None, reason="DejaVu Sans is not installed")

#: One paragraph per script; Arabic includes Persian and Urdu letters DejaVu Sans lacks.
LINES: dict[str, str] = {
    "latin": "The quick brown fox: café, Größe, naïve, Ελληνικά, Кириллица.",
    "Han": "中文文本：汉字渲染测试，繁體中文也要顯示。",
    "kana": "ひらがなとカタカナ、日本語の文章です。",
    "Hangul": "한국어 텍스트 렌더링 시험입니다.",
    "Arabic": "مرحبا بالعالم، هذا نص عربي؟ پچژگ ۀے ٱ",
    "math": "∑ ∫ √ ≠ ≤ ≥ ∞ 𝑥 𝑦 𝐀 𝔸 ℝ",
}
CJK = ("Han", "kana", "Hangul")


def needs(*scripts: str) -> pytest.MarkDecorator:
    """Skip unless the installed fonts draw ``scripts`` (saying how to install them)."""
    covered = script_fonts(FONTS)
    lacking = [s for s in scripts if covered.get(s, ()) is None]
    packages = {"Arabic": "fonts-noto-ui-core"}
    hint = " ".join(sorted({packages.get(s, "fonts-noto-cjk") for s in lacking}))
    return pytest.mark.skipif(
        bool(lacking),
        reason=f"no font for {', '.join(lacking)}: apt-get install {hint} (.ci/run does)",
    )


def mixed_markdown() -> str:
    return "\n".join(
        [
            f"# 標題 {LINES['Hangul'].split()[0]} heading",
            "",
            *(f"{line}\n" for line in LINES.values()),
            f"**太字 굵게** and *斜体* in a sentence with {LINES['math'].split()[0]}.",
            "",
            "- リスト項目 one",
            "- 목록 항목 two",
            "",
            "| 列 | 열 |",
            "|---|---|",
            "| 表格 | 표 |",
            "",
            "```",
            "code: 変数 = 1  # 코드 ≤ √",
            "```",
            "",
            "长段落" * 120,  # no spaces to wrap at
            "",
        ]
    )


def pdfium_text(data: bytes) -> str:
    document = pdfium.PdfDocument(data)
    try:
        return "\n".join(page.get_textpage().get_text_range() for page in document)
    finally:
        document.close()


def drawn_characters(data: bytes) -> dict[str, set[str]]:
    """Each character the PDF's embedded fonts map to a real glyph → those fonts' names.

    Follows each Type0 font from its ToUnicode map (code → text) through its
    encoding (code → CID) and the descendant font (CID → glyph) to the glyph in
    the embedded program: TrueType (FontFile2, CIDToGIDMap) or CID-keyed CFF
    (FontFile3, CIDs named in the charset). Glyph 0 (.notdef) and glyphs with no
    outline do not count.
    """
    reader = pypdf.PdfReader(io.BytesIO(data))
    seen: set[int] = set()
    drawn: dict[str, set[str]] = {}
    for page in reader.pages:
        for reference in page["/Resources"].get_object().get("/Font", {}).values():
            if reference.idnum in seen:
                continue
            seen.add(reference.idnum)
            font = reference.get_object()
            if font.get("/Subtype") != "/Type0":
                continue
            name = str(font["/BaseFont"])
            code_to_cid = _code_to_cid(font["/Encoding"])
            descendant = font["/DescendantFonts"][0].get_object()
            has_glyph = _glyph_test(descendant)
            for code, text in _to_unicode(font["/ToUnicode"].get_object().get_data()).items():
                if has_glyph(code_to_cid(code)):
                    drawn.setdefault(text, set()).add(name)
    return drawn


def _to_unicode(cmap: bytes) -> dict[int, str]:
    mapping: dict[int, str] = {}
    for block in re.findall(rb"beginbfchar(.*?)endbfchar", cmap, re.S):
        for code, text in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            mapping[int(code, 16)] = bytes.fromhex(text.decode()).decode("utf-16-be")
    return mapping


def _code_to_cid(encoding: object) -> Callable[[int], int]:
    if isinstance(encoding, pypdf.generic.IndirectObject):
        encoding = encoding.get_object()
    if isinstance(encoding, pypdf.generic.StreamObject):
        pairs = re.findall(
            rb"<([0-9A-Fa-f]+)>\s+(\d+)", encoding.get_data().split(b"begincidchar")[1]
        )
        table = {int(code, 16): int(cid) for code, cid in pairs}
        return lambda code: table.get(code, 0)
    assert encoding == "/Identity-H", encoding
    return lambda code: code


def _glyph_test(descendant: pypdf.generic.DictionaryObject) -> Callable[[int], bool]:
    descriptor = descendant["/FontDescriptor"].get_object()
    if "/FontFile2" in descriptor:
        font = TTFont(io.BytesIO(descriptor["/FontFile2"].get_object().get_data()))
        order = font.getGlyphOrder()
        glyf = font["glyf"]
        mapping = descendant.get("/CIDToGIDMap", "/Identity")
        if isinstance(mapping, pypdf.generic.IndirectObject):
            mapping = mapping.get_object()
        gids = mapping.get_data() if isinstance(mapping, pypdf.generic.StreamObject) else None

        def truetype(cid: int) -> bool:
            gid = cid if gids is None else int.from_bytes(gids[2 * cid : 2 * cid + 2], "big")
            return 0 < gid < len(order) and glyf[order[gid]].numberOfContours != 0

        return truetype
    program = descriptor["/FontFile3"].get_object()
    assert program.get("/Subtype") == "/CIDFontType0C"
    cff = CFFFontSet()
    cff.decompile(io.BytesIO(program.get_data()), None)
    top = cff[cff.fontNames[0]]
    charset = top.charset
    position = {glyph: gid for gid, glyph in enumerate(charset)}

    def cid_keyed(cid: int) -> bool:
        glyph = f"cid{cid:05d}"
        if position.get(glyph, 0) == 0:
            return False
        return top.CharStrings[glyph].calcBounds(top.CharStrings) is not None

    return cid_keyed


def assert_drawn(markdown: str, lines: list[str]) -> bytes:
    """Render ``markdown`` and check every character of ``lines`` is in the PDF, drawn."""
    started = time.perf_counter()
    data = convert(markdown.encode(), "text/markdown", "mixed.md").get("application/pdf").data  # type: ignore[union-attr]
    elapsed = time.perf_counter() - started
    # pdfium hands some Arabic letters back decomposed (ۀ as ە + hamza above).
    text = unicodedata.normalize("NFC", pdfium_text(data))
    assert "\ufffd" not in text
    found = set(text)
    wanted = {c for line in lines for c in line if not c.isspace()}
    assert sorted(wanted - found) == []
    drawn = drawn_characters(data)
    assert sorted(c for c in wanted if c not in drawn) == []
    squashed = re.sub(r"\s+", "", text)
    for line in lines:
        # Arabic too: drawn shaped, right to left, it reads back in logical order.
        assert re.sub(r"\s+", "", line) in squashed, line
    print(f"{len(data)} bytes in {elapsed * 1000:.0f} ms")
    return data


def test_latin_greek_cyrillic_basic_arabic_and_math_with_dejavu_alone() -> None:
    dejavu_only = fonts_in([FONTS.sans.regular.parent])  # type: ignore[union-attr]
    covered = script_fonts(dejavu_only)
    assert covered["math operators"] == (FONTS.sans.regular,)  # type: ignore[union-attr]
    basic_arabic = "مرحبا بالعالم، هذا نص عربي؟"
    # DejaVu Sans Oblique has no Arabic, DejaVu Sans Mono less than Sans: the
    # regular face stands in.
    styled = "*مرحبا* ***عربي*** `نص ي`"
    data = assert_drawn(
        f"{LINES['latin']}\n\n{basic_arabic}\n\n{styled}\n\n∑ ∫ √ ≠ ≤ ≥ ∞\n",
        [LINES["latin"], basic_arabic, styled.replace("*", "").replace("`", ""), "∑ ∫ √ ≠ ≤ ≥ ∞"],
    )
    assert all("DejaVu" in name for name in drawn_characters(data).get("ع", ()))


@needs("math alphanumerics")
def test_math_alphanumerics_come_from_a_math_fallback() -> None:
    data = assert_drawn(f"{LINES['math']}\n", [LINES["math"]])
    assert all("Math" in name for name in drawn_characters(data)["𝑥"])


@needs("Arabic")
def test_persian_and_urdu_letters_dejavu_lacks_come_from_an_arabic_fallback() -> None:
    data = assert_drawn(f"{LINES['Arabic']}\n", [LINES["Arabic"]])
    assert all("DejaVu" not in name for name in drawn_characters(data)["ے"])


@needs(*CJK, "Arabic", "math alphanumerics")
def test_mixed_document_draws_every_character() -> None:
    markdown = mixed_markdown()
    lines = [
        *LINES.values(),
        "太字 굵게",
        "斜体",
        "リスト項目",
        "목록 항목",
        "表格",
        "code: 変数 = 1",
    ]
    data = assert_drawn(markdown, lines)
    drawn = drawn_characters(data)
    assert any("CJK" in name for name in drawn["中"] | drawn["ひ"] | drawn["한"])
    # Only the glyphs used are embedded: the CJK face is ~16 MB, the whole PDF far less.
    assert len(data) < 200_000


@needs(*CJK)
def test_latin_document_embeds_and_loads_no_fallback() -> None:
    from docshelf.converters.render import pdf as render_pdf

    glyphs = render_pdf._Glyphs.for_text(FONTS, LINES["latin"] + " ∑ ≤ √")
    assert glyphs.fallbacks == ()
    data = render_pdf.render_markdown_pdf(f"# Plain\n\n{LINES['latin']}\n\n`code`\n")
    names = {name for names in drawn_characters(data).values() for name in names}
    assert names and all("DejaVu" in name for name in names)


# --- finding the fonts ------------------------------------------------------------------------


@needs(*CJK)
def test_fallbacks_are_found_by_name_in_subfolders(tmp_path: Path) -> None:
    cjk = next(p for p in script_fonts(FONTS)["Han"] or () if p != FONTS.sans.regular)  # type: ignore[union-attr]
    nested = tmp_path / "opentype" / "vendor" / "deep"
    nested.mkdir(parents=True)
    for path in FONTS.sans.regular.parent.glob("DejaVuSans*.ttf"):  # type: ignore[union-attr]
        (tmp_path / path.name).symlink_to(path)
    (nested / "NotoSansCJK-Regular.ttc").symlink_to(cjk)
    found = fonts_in([tmp_path])
    assert nested / "NotoSansCJK-Regular.ttc" in found.fallbacks


@needs(*CJK)
@pytest.mark.skipif(shutil.which("fc-match") is None, reason="fontconfig is not installed")
def test_fontconfig_finds_a_font_under_a_name_not_listed() -> None:
    dejavu_only = fonts_in([FONTS.sans.regular.parent])  # type: ignore[union-attr]
    assert script_fonts(dejavu_only)["Han"] is None
    found = with_fontconfig_fallbacks(dejavu_only)
    assert all(ord(c) in set().union(*map(coverage, found.fallbacks)) for c in "中ひ한")


@needs(*CJK)
@pytest.mark.skipif(shutil.which("fc-match") is None, reason="fontconfig is not installed")
def test_a_rendering_asks_fontconfig_for_what_no_listed_font_draws() -> None:
    from docshelf.converters.render import pdf as render_pdf

    dejavu_only = fonts_in([FONTS.sans.regular.parent])  # type: ignore[union-attr]
    glyphs = render_pdf._Glyphs.for_text(dejavu_only, "Latin 中文 ひらがな 한국어")
    assert glyphs.fallbacks and not glyphs.table  # every character drawn, none replaced


def test_a_latin_rendering_reads_no_fallback_font_in_a_fresh_process() -> None:
    # Finding the fonts reads no font file; a Latin text reads DejaVu's cmap alone
    # (a CJK cmap costs ~25 MB and 0.2 s in every conversion worker).
    code = (
        "from docshelf.converters.render.pdf import render_markdown_pdf; "
        "from docshelf.converters.render import fonts; "
        "render_markdown_pdf('# Plain\\n\\nLatin text, and code: `x = 1`.\\n'); "
        "print(fonts.coverage.cache_info().currsize)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "1", done.stderr


def test_start_log_names_the_fallbacks_and_the_scripts_without_a_font(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="docshelf.converters.render.fonts")
    log_fonts(FONTS)
    assert "fallbacks: " in caplog.text and FONTS.sans.regular.name in caplog.text  # type: ignore[union-attr]
    caplog.clear()
    dejavu_only = FontSet(sans=FONTS.sans, mono=FONTS.mono, fallbacks=())
    log_fonts(dejavu_only)
    warning = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warning) == 1
    assert "Han, kana, Hangul" in warning[0] and "fonts-noto-cjk" in warning[0]


# --- right to left: shaped, joined, in order -----------------------------------------------

ARABIC_PARAGRAPH = "سلام عليكم، هذا نص عربي للاختبار."
HEBREW_PARAGRAPH = "שלום עולם, זהו טקסט בעברית."
MIXED_LINE = "The word سلام means peace, and 𝑥 = 1 in العربية too."


def render(markdown: str) -> bytes:
    pdf = convert(markdown.encode(), "text/markdown", "rtl.md").get("application/pdf")
    return pdf.data  # type: ignore[union-attr]


def read_back(data: bytes) -> str:
    """The text docshelf's PDF reader finds in ``data``.

    Not PDFium's raw text: PDFium turns a right-to-left run into logical order
    character by character, so a ligature's letters, which the PDF stores in
    logical order as every writer does, come back swapped (لا as ال), and a
    surrogate pair inside the run halves swapped (dropped); the reader puts
    both right (converters/pdf/bidi.py), as it does for any PDF.
    """
    plain = convert(data, "application/pdf", "rendered.pdf").get("text/plain")
    return plain.data.decode()  # type: ignore[union-attr]


def char_boxes(data: bytes, word: str) -> list[tuple[str, float, float]]:
    """(character, left, right) for each character where ``word`` first shows in
    PDFium's raw text (lam-alef as PDFium reads it, see :func:`read_back`)."""
    document = pdfium.PdfDocument(data)
    try:
        page = document[0].get_textpage()
        text = page.get_text_range()
        start = text.index(word.replace("لا", "ال"))
        boxes = []
        for index in range(start, start + len(word)):
            left, _bottom, right, _top = page.get_charbox(index)
            boxes.append((text[index], left, right))
        return boxes
    finally:
        document.close()


def assert_right_to_left(boxes: list[tuple[str, float, float]]) -> None:
    """The word's first letter is drawn rightmost, its last leftmost."""
    assert boxes[0][2] == max(right for _c, _left, right in boxes), boxes
    assert boxes[-1][1] == min(left for _c, left, _right in boxes), boxes


def embedded_glyph_names(data: bytes, family: str) -> set[str]:
    reader = pypdf.PdfReader(io.BytesIO(data))
    names: set[str] = set()
    for reference in reader.pages[0]["/Resources"].get_object()["/Font"].values():
        font = reference.get_object()
        if family not in str(font["/BaseFont"]):
            continue
        descriptor = font["/DescendantFonts"][0].get_object()["/FontDescriptor"].get_object()
        program = TTFont(io.BytesIO(descriptor["/FontFile2"].get_object().get_data()))
        names |= set(program.getGlyphOrder())
    return names


@needs("Arabic")
def test_arabic_and_hebrew_paragraphs_read_back_in_logical_order_drawn_right_to_left() -> None:
    data = render(f"{ARABIC_PARAGRAPH}\n\n{HEBREW_PARAGRAPH}\n")
    text = read_back(data)
    assert "\ufffd" not in text
    assert ARABIC_PARAGRAPH in text and HEBREW_PARAGRAPH in text
    for word in ("سلام", "عليكم", "שלום"):
        assert_right_to_left(char_boxes(data, word))


@needs("Arabic")
def test_arabic_letters_are_drawn_joined() -> None:
    data = render(f"{ARABIC_PARAGRAPH}\n")
    source = TTFont(FONTS.sans.regular)  # type: ignore[union-attr]
    cmap = source.getBestCmap()
    used = embedded_glyph_names(data, "DejaVuSans")
    # "سلام": seen takes its initial form and lam + alef their ligature, not
    # the isolated glyphs the font's cmap maps the letters to.
    isolated = {cmap[ord(c)] for c in "سل"}
    assert "uniFEB3" in used and "uniFEFC" in used, sorted(used)
    assert not isolated & used, sorted(isolated & used)


@needs("Arabic", "math alphanumerics")
def test_mixed_latin_arabic_math_line_reads_back_whole() -> None:
    data = render(f"{MIXED_LINE}\n")
    text = read_back(data)
    assert "\ufffd" not in text
    assert MIXED_LINE in text, text
    assert_right_to_left(char_boxes(data, "سلام"))
    # the line runs left to right around them
    assert char_boxes(data, "The")[0][1] < char_boxes(data, "سلام")[0][1]
    assert char_boxes(data, "سلام")[0][2] < char_boxes(data, "means")[0][1]


@needs("Arabic", "math alphanumerics")
def test_math_letter_between_arabic_words_reads_back() -> None:
    # PDFium counts the UTF-16 halves of 𝑥 as neutral and swaps them with the run.
    data = render("سلام 𝑥 عليكم\n")
    assert "سلام 𝑥 عليكم" in read_back(data)


def test_latin_document_is_not_shaped(monkeypatch: pytest.MonkeyPatch) -> None:
    from docshelf.converters.render import pdf as render_pdf
    from docshelf.converters.render.document import ShelfPDF

    calls: list[bool] = []
    original = ShelfPDF.set_text_shaping

    def spy(self: ShelfPDF, use_shaping_engine: bool = True) -> None:
        calls.append(use_shaping_engine)
        original(self, use_shaping_engine)

    monkeypatch.setattr(ShelfPDF, "set_text_shaping", spy)
    render_pdf.render_markdown_pdf(f"# Plain\n\n{LINES['latin']}\n\n{LINES['math']}\n")
    assert calls == []
    render_pdf.render_markdown_pdf(f"# Mixed\n\n{LINES['latin']}\n\n{ARABIC_PARAGRAPH}\n")
    assert calls == [True, False]  # for the Arabic block alone
