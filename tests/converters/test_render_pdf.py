"""The Markdown → PDF renderer: every spec page, safety, fonts, degradation."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pypdf
import pytest

from docshelf.converters.markdown.model import markdown_parser
from docshelf.converters.render.fonts import CORE_FONTS, coverage, fonts_in, system_fonts
from docshelf.converters.render.pdf import (
    RENDER_LIMIT_CHARS,
    render_markdown_pdf,
    truncate_for_rendering,
)
from docshelf.converters.textutil import text_to_markdown

from .conftest import SPEC, SPEC_PAGES, Convert


def pdf_text(data: bytes) -> str:
    """The text of a rendered PDF, without the page-number footers."""
    reader = pypdf.PdfReader(io.BytesIO(data))
    pages = [page.extract_text() for page in reader.pages]
    return "\n".join(
        text.rstrip().removesuffix(str(number)) for number, text in enumerate(pages, start=1)
    )


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def font_names(data: bytes) -> set[str]:
    reader = pypdf.PdfReader(io.BytesIO(data))
    names: set[str] = set()
    for page in reader.pages:
        fonts = page["/Resources"].get_object().get("/Font", {})
        for font in fonts.values():
            names.add(str(font.get_object()["/BaseFont"]))
    return names


@pytest.mark.parametrize("page", SPEC_PAGES)
def test_every_spec_page_renders_with_its_text(page: str, converted: Convert) -> None:
    result = converted(SPEC / page)
    data = result.get("application/pdf").data  # type: ignore[union-attr]
    reader = pypdf.PdfReader(io.BytesIO(data))
    assert len(reader.pages) >= 1
    assert reader.metadata is not None and reader.metadata.title == result.facts.title
    rendered = squash(pdf_text(data))
    for heading in result.facts.outline:
        assert squash(heading.title) in rendered
    text = result.get("text/plain").data.decode()  # type: ignore[union-attr]
    missing = [
        paragraph
        for paragraph in text.split("\n\n")
        if squash(paragraph.lstrip("•0123456789. "))[:50] not in rendered
    ]
    assert not missing


def test_images_are_never_loaded(tmp_path: Path) -> None:
    image = tmp_path / "secret.png"
    _write_png(image)
    markdown = (
        f"![the secret]({image})\n\n"
        f'<img src="{image}" alt="raw html image">\n\n'
        f"[link to the file]({image}) and [anchor](#nowhere) and [web](https://example.com)\n"
    )
    data = render_markdown_pdf(markdown)
    reader = pypdf.PdfReader(io.BytesIO(data))
    assert all(not page.images for page in reader.pages)
    text = pdf_text(data)
    assert "[the secret]" in text and "link to the file" in text and "anchor" in text
    annotations = reader.pages[0].get("/Annots") or []
    uris = [a.get_object()["/A"]["/URI"] for a in annotations]
    assert uris == ["https://example.com"]


def _write_png(path: Path) -> None:
    from PIL import Image

    Image.new("RGB", (4, 4), (255, 0, 0)).save(path)


def test_unicode_text_is_embedded_with_dejavu() -> None:
    data = render_markdown_pdf("Grüße, Ελληνικά, Кириллица, `код ≠ code`, ∀x∃y\n")
    text = pdf_text(data)
    assert "Ελληνικά" in text and "Кириллица" in text and "∀x∃y" in text
    names = font_names(data)
    assert any("DejaVuSans" in name for name in names)
    assert any("DejaVuSansMono" in name for name in names)


def test_fallback_font_draws_what_dejavu_sans_lacks() -> None:
    fonts = system_fonts()
    math_bold_a = "\U0001d400"
    if not any(ord(math_bold_a) in coverage(path) for path in fonts.fallbacks):
        pytest.skip("no fallback font with mathematical alphanumerics installed")
    data = render_markdown_pdf(f"Bold A: {math_bold_a}\n")
    assert any("MathTeXGyre" in name for name in font_names(data))


def test_glyph_no_font_has_becomes_replacement_character() -> None:
    private_use = "\U00100000"
    data = render_markdown_pdf(f"before {private_use} after\u200b\n")
    text = pdf_text(data)
    assert "before" in text and "after" in text
    assert private_use not in text


def test_core_font_degradation_replaces_non_latin_characters() -> None:
    data = render_markdown_pdf(
        "# Grüße \u2013 東京 ✓\n\nEuro € and emoji 😀 in `code`\n", fonts=CORE_FONTS
    )
    text = pdf_text(data)
    assert "Grüße \u2013 ?? ?" in text
    assert "Euro € and emoji ? in code" in text
    assert all("DejaVu" not in name for name in font_names(data))


def test_no_fonts_found_means_core_fonts(tmp_path: Path) -> None:
    assert fonts_in([tmp_path]) == CORE_FONTS


def test_rendering_is_deterministic() -> None:
    markdown = "# Same\n\nInput, same *output*.\n"
    assert render_markdown_pdf(markdown, title="T") == render_markdown_pdf(markdown, title="T")


def test_unlayoutable_table_falls_back_to_text() -> None:
    wide = "| " + " | ".join(f"c{i}" for i in range(80)) + " |\n|" + "---|" * 80 + "\n"
    wide += "| " + " | ".join("supercalifragilistic" for _ in range(80)) + " |\n"
    data = render_markdown_pdf(f"Before.\n\n{wide}\nAfter.\n")
    text = pdf_text(data)
    assert "Before." in text and "After." in text and "c79" in text


def test_long_input_is_truncated_with_a_note() -> None:
    markdown = "\n\n".join(f"Paragraph {i}." for i in range(20))
    cut = truncate_for_rendering(markdown, limit=60)
    assert cut.startswith("Paragraph 0.") and "Paragraph 19." not in cut
    assert "stops here" in cut
    assert truncate_for_rendering(markdown, limit=RENDER_LIMIT_CHARS) == markdown
    in_code = "Intro.\n\n````python\n" + "x = 1\n" * 50 + "````\n"
    cut = truncate_for_rendering(in_code, limit=100)
    assert "x = 1\n````\n\n*[The PDF rendering stops here" in cut
    tokens = markdown_parser().parse(cut)
    assert tokens[-3].type == "paragraph_open"  # the note is a paragraph, not code


def test_plain_text_rendering_keeps_lines() -> None:
    text = pdf_text(
        render_markdown_pdf(text_to_markdown("line one\nline two\n\n# not a heading\n"))
    )
    assert "line one\nline two" in text and "# not a heading" in text
