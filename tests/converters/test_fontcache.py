"""Fonts parsed once per process: the same PDFs, no state carried between documents."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from fontTools.ttLib import TTCollection, TTFont
from fontTools.ttLib.tables._g_l_y_f import Glyph
from fpdf import FPDF
from fpdf.fonts import TTFFont

from docshelf.converters.render import fontcache
from docshelf.converters.render.document import FIXED_CREATION_DATE
from docshelf.converters.render.fonts import system_fonts
from docshelf.converters.render.pdf import render_markdown_pdf

SANS = system_fonts().sans
pytestmark = pytest.mark.skipif(SANS is None, reason="DejaVu Sans is not installed")

FIRST = "# Ωmega and ∑\n\nGrüße, Ελληνικά, **Кириллица**, `код ≠ code`.\n"
SECOND = "# Plain\n\nJust ascii, *some* of it `code`.\n"


@pytest.fixture
def parse_counter(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Font files fpdf2 parses (its ``TTFFont`` constructor), from an empty cache."""
    parsed: list[str] = []
    original = TTFFont.__init__

    def counting(self: TTFFont, fpdf: FPDF, font_file_path: Path, *args: object) -> None:
        parsed.append(Path(font_file_path).name)
        original(self, fpdf, font_file_path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(TTFFont, "__init__", counting)
    fontcache._parsed.cache_clear()
    yield parsed
    fontcache._parsed.cache_clear()


def render_parsing_every_time(markdown: str, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """What the renderer made before the cache: fpdf2's own ``add_font`` per document."""
    with monkeypatch.context() as patch:
        patch.setattr(fontcache, "_parsed", lambda path: None)
        return render_markdown_pdf(markdown)


def test_installed_fpdf2_font_state_is_all_reviewed() -> None:
    # An fpdf2 upgrade that adds state to its font object turns the cache off
    # (every document parses again); this says so before a benchmark does.
    assert fontcache.slots_reviewed(), sorted(
        set(TTFFont.__slots__) ^ (fontcache.SHARED_SLOTS | fontcache.PER_DOCUMENT_SLOTS)
    )


COMMON_FACES = [
    "DejaVuSans-Bold.ttf", "DejaVuSans-Oblique.ttf", "DejaVuSans.ttf", "DejaVuSansMono.ttf"
]  # fmt: skip


def test_the_first_rendering_parses_the_faces_most_documents_use(
    parse_counter: list[str],
) -> None:
    # What a conversion worker renders to warm up (storage.conversion._warm_up): it
    # pays for the italic and monospace faces too, not the first document read.
    render_markdown_pdf("# docshelf\n\nwarming up")
    assert sorted(parse_counter) == COMMON_FACES


def test_each_font_file_is_parsed_once_per_process(parse_counter: list[str]) -> None:
    render_markdown_pdf(FIRST)
    assert sorted(parse_counter) == COMMON_FACES
    render_markdown_pdf(FIRST)
    render_markdown_pdf(SECOND)
    assert len(parse_counter) == 4
    render_markdown_pdf("***Bold italic***, a face more.\n")
    assert sorted(parse_counter) == sorted([*COMMON_FACES, "DejaVuSans-BoldOblique.ttf"])
    render_markdown_pdf("***Bold italic*** again.\n")
    assert len(parse_counter) == 5


def test_cached_fonts_render_the_same_bytes_as_parsing_each_time(
    parse_counter: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The second document follows one that used other glyphs and faces: had
    # any subset, width or descriptor state leaked, its bytes would differ.
    assert render_markdown_pdf(FIRST) == render_parsing_every_time(FIRST, monkeypatch)
    assert render_markdown_pdf(SECOND) == render_parsing_every_time(SECOND, monkeypatch)
    assert render_markdown_pdf(FIRST) == render_parsing_every_time(FIRST, monkeypatch)


def test_font_from_a_collection_file_embeds_the_same_bytes(tmp_path: Path) -> None:
    assert SANS is not None
    collection = TTCollection()
    collection.fonts = [TTFont(SANS.regular), TTFont(SANS.path_for("B"))]
    path = tmp_path / "sans.ttc"
    collection.save(path)

    def render(cached: bool) -> bytes:
        pdf = FPDF()
        pdf.creation_date = FIXED_CREATION_DATE
        if cached:
            fontcache.add_font(pdf, "sans", "", path)
        else:
            pdf.add_font("sans", "", str(path))
        pdf.add_page()
        pdf.set_font("sans", size=12)
        pdf.cell(text="Grüße ∑ Ωmega")
        return bytes(pdf.output())

    assert render(cached=True) == render(cached=False)


def _cjk_collection() -> Path | None:
    """An installed CFF-outline CJK collection (Debian's fonts-noto-cjk), if any."""
    return next(
        (path for path in system_fonts().fallbacks if path.name == "NotoSansCJK-Regular.ttc"),
        None,
    )


CJK = _cjk_collection()
needs_cjk = pytest.mark.skipif(
    CJK is None, reason="Noto Sans CJK is not installed: apt-get install fonts-noto-cjk"
)
CJK_DOCUMENT = "# 中文 and ひらがな\n\n한국어 텍스트, 漢字 ≠ \U0001d465\n"


@needs_cjk
def test_cff_collection_is_parsed_once_and_embeds_the_same_bytes(
    parse_counter: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Noto Sans CJK has CFF outlines in a collection: fpdf2 embeds its CFF
    # table as CIDFontType0C (PDF 1.6). Parsing it takes ~170 ms a document.
    first = render_markdown_pdf(CJK_DOCUMENT)
    assert parse_counter.count("NotoSansCJK-Regular.ttc") == 1
    assert render_markdown_pdf(CJK_DOCUMENT) == first
    assert render_markdown_pdf(FIRST) == render_parsing_every_time(FIRST, monkeypatch)
    assert render_markdown_pdf(CJK_DOCUMENT) == render_parsing_every_time(CJK_DOCUMENT, monkeypatch)
    assert parse_counter.count("NotoSansCJK-Regular.ttc") == 2  # one of them uncached
    assert first.startswith(b"%PDF-1.6")


def test_latin_documents_never_parse_a_fallback_font(parse_counter: list[str]) -> None:
    render_markdown_pdf(SECOND)
    render_markdown_pdf(FIRST)
    assert all(name.startswith("DejaVuSans") for name in parse_counter)


def test_a_parsed_font_keeps_no_decompiled_glyphs(parse_counter: list[str]) -> None:
    # fpdf2 decompiles the glyf table while parsing (6,253 glyphs for DejaVu Sans);
    # the per-process copy must not keep them alive in every worker.
    def glyphs_alive() -> int:
        gc.collect()
        return sum(isinstance(o, Glyph) for o in gc.get_objects())

    before = glyphs_alive()
    for style in ("", "B", "I"):
        fontcache.parse(SANS.path_for(style))  # type: ignore[union-attr]
    assert len(parse_counter) == 3
    assert glyphs_alive() <= before
