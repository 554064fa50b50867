"""PowerPoint decks: one page per slide, built with python-pptx in the test."""

from __future__ import annotations

import io
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image
from pptx import Presentation
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE
from pptx.enum.shapes import MSO_SHAPE
from pptx.util import Inches, Pt

from docshelf.converters import ConversionError, ConversionResult, convert
from docshelf.converters.parts import pages_markdown
from docshelf.converters.pptx_ import MAX_PPTX_UNPACKED
from tests.support.markitdown_vectors import NEEDS_PEERS, TEST_FILES, markitdown_vector
from tests.support.results import json_of, text_of

PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(out, "PNG")
    return out.getvalue()


def build_deck(*, core_title: str = "", subject: str = "") -> bytes:
    """Six slides: bullets and a link, a merged table, a nested group, a chart, a picture
    with alt text and notes, and a slide without a title."""
    deck = Presentation()
    deck.core_properties.title = core_title
    deck.core_properties.subject = subject
    deck.core_properties.author = "Ada"

    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Plan"
    body = slide.placeholders[1].text_frame
    body.text = "Goals"
    for text, level in (("Ship it", 1), ("On time", 2), ("Measure", 0)):
        paragraph = body.add_paragraph()
        paragraph.text, paragraph.level = text, level
    run = body.add_paragraph().add_run()
    run.text = "docs"
    run.hyperlink.address = "https://example.com/docs"
    slide.notes_slide.notes_text_frame.text = "Say hello first."

    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Numbers"
    table = slide.shapes.add_table(3, 3, Inches(1), Inches(2), Inches(6), Inches(2)).table
    for r, row in enumerate([["Name", "Q1", "Q2"], ["North", "1", "2"], ["Total", "", ""]]):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    table.cell(2, 1).merge(table.cell(2, 2))
    table.cell(2, 1).text = "3 and 4"

    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Groups"
    outer = slide.shapes.add_group_shape()
    lower = outer.shapes.add_textbox(Inches(1), Inches(5), Inches(3), Inches(1))
    lower.text_frame.text = "Bottom text"
    inner = outer.shapes.add_group_shape()
    box = inner.shapes.add_shape(MSO_SHAPE.RECTANGLE, Inches(5), Inches(2), Inches(2), Inches(1))
    box.text_frame.text = "Top right"
    left = inner.shapes.add_textbox(Inches(1), Inches(2), Inches(2), Inches(1))
    left.text_frame.text = "Top left"

    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Sales"
    data = CategoryChartData()
    data.categories = ["2022", "2023"]
    data.add_series("East", (1.5, 2))
    data.add_series("West", (3, 4.25))
    frame = slide.shapes.add_chart(
        XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(2), Inches(6), Inches(4), data
    )
    frame.chart.has_title = True
    frame.chart.chart_title.text_frame.text = "Revenue by region"

    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Page 3"  # looks like the PDF page headings of old
    picture = slide.shapes.add_picture(io.BytesIO(_png()), Inches(1), Inches(2))
    picture.name = "Logo [1]"
    picture._element._nvXxPr.cNvPr.set("descr", "The red square")

    slide = deck.slides.add_slide(deck.slide_layouts[6])  # blank: no title placeholder
    note = slide.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1))
    note.text_frame.text = "# not a heading"
    note.text_frame.paragraphs[0].runs[0].font.size = Pt(20)

    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


@pytest.fixture(scope="module")
def deck() -> ConversionResult:
    return convert(build_deck(), PPTX, "plan.pptx")


def test_every_slide_is_a_page_with_a_marker_and_a_heading(deck: ConversionResult) -> None:
    markdown = text_of(deck, "text/markdown")
    assert deck.facts.page_count == 6
    for number in range(1, 7):
        assert f"<!-- page {number} -->\n" in markdown
    assert [(e.title, e.level, e.page) for e in deck.facts.outline] == [
        ("Plan", 1, 1),
        ("Numbers", 1, 2),
        ("Groups", 1, 3),
        ("Sales", 1, 4),
        ("Page 3", 1, 5),
        ("Slide 6", 1, 6),
    ]
    assert "## Slide 6\n" in markdown
    # A title that reads like a page is a heading like any other: pages are cut at markers.
    assert "## Page 3\n" in markdown
    assert pages_markdown(markdown, 3, 3).startswith("<!-- page 3 -->\n\n## Groups\n")
    assert "Bottom text" in pages_markdown(markdown, 3, 3)


def test_bullets_nest_by_level_and_links_and_notes_stay(deck: ConversionResult) -> None:
    slide = pages_markdown(text_of(deck, "text/markdown"), 1, 1)
    assert "- Goals\n  - Ship it\n    - On time\n- Measure\n" in slide
    assert "[docs](https://example.com/docs)" in slide
    assert slide.rstrip().endswith("### Notes\n\nSay hello first.")


def test_table_keeps_a_merged_cells_text_once(deck: ConversionResult) -> None:
    slide = pages_markdown(text_of(deck, "text/markdown"), 2, 2)
    assert "| Name | Q1 | Q2 |\n|---|---|---|\n| North | 1 | 2 |\n| Total | 3 and 4 |  |" in slide
    assert json_of(deck)["tables"][0]["header"] == ["Name", "Q1", "Q2"]


def test_groups_read_top_to_bottom_then_left_to_right(deck: ConversionResult) -> None:
    slide = pages_markdown(text_of(deck, "text/markdown"), 3, 3)
    assert slide.index("Top left") < slide.index("Top right") < slide.index("Bottom text")


def test_chart_title_and_data_as_a_table(deck: ConversionResult) -> None:
    slide = pages_markdown(text_of(deck, "text/markdown"), 4, 4)
    assert "**Chart: Revenue by region**" in slide
    assert "| Category | East | West |\n|---|---|---|\n| 2022 | 1.5 | 3 |\n| 2023 | 2 | 4.25 |" in (
        slide
    )
    [chart] = json_of(deck)["data"]["slides"][3]["charts"]
    assert chart == {
        "title": "Revenue by region",
        "categories": ["2022", "2023"],
        "series": [{"name": "East", "values": [1.5, 2.0]}, {"name": "West", "values": [3.0, 4.25]}],
    }


def test_picture_is_its_alt_text_and_name_never_data(deck: ConversionResult) -> None:
    markdown = text_of(deck, "text/markdown")
    assert "![The red square](Logo1.png)" in markdown
    assert "data:image" not in markdown
    assert json_of(deck)["data"]["slides"][4]["images"] == [
        {"name": "Logo1.png", "alt": "The red square"}
    ]


def test_text_that_looks_like_markup_is_escaped(deck: ConversionResult) -> None:
    assert "\\# not a heading" in pages_markdown(text_of(deck, "text/markdown"), 6, 6)


def test_json_pages_and_search_segments_are_slides(deck: ConversionResult) -> None:
    document = json_of(deck)
    assert [page["part"] for page in document["pages"]] == [f"?pages={n}" for n in range(1, 7)]
    assert "Ship it" in document["pages"][0]["text"]
    assert document["data"]["slides"][0]["notes"] == "Say hello first."
    assert document["data"]["slides"][0]["layout"] == "Title and Content"
    segments = deck.segments()
    assert [(s.part, s.title) for s in segments][:2] == [
        ("pages=1", "Plan"),
        ("pages=2", "Numbers"),
    ]
    assert "Revenue by region" in segments[3].text


def test_title_and_description() -> None:
    plain = convert(build_deck(), PPTX, "plan.pptx")
    # python-pptx's template title "PowerPoint Presentation" is no title: the first slide's is.
    assert plain.facts.title == "Plan"
    assert plain.facts.description == "Presentation, 6 slides: Plan; Numbers; Groups"
    assert plain.facts.metadata["author"] == "Ada"
    declared = convert(build_deck(core_title="Q3 review", subject="How Q3 went"), PPTX, "x.pptx")
    assert (declared.facts.title, declared.facts.description) == ("Q3 review", "How Q3 went")


def test_the_rendered_pdf_has_the_slides() -> None:
    deck = Presentation()
    deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = "Only slide"
    out = io.BytesIO()
    deck.save(out)
    pdf = convert(out.getvalue(), PPTX, "one.pptx").get("application/pdf")
    assert pdf is not None and pdf.data.startswith(b"%PDF")


def test_accepts_the_type_and_the_extension() -> None:
    from docshelf.converters import find_converter

    for mime_type, name in ((PPTX, "deck"), ("application/zip", "deck.pptx"), ("", "a.PPTM")):
        converter = find_converter(mime_type, name)
        assert converter is not None and converter.name == "pptx"


def test_not_a_zip_is_corrupt() -> None:
    with pytest.raises(ConversionError) as caught:
        convert(b"not a zip at all", PPTX, "x.pptx")
    assert caught.value.reason == "corrupt"
    assert caught.value.message.startswith("not a PPTX (ZIP) package")


def test_a_zip_without_a_presentation_is_corrupt() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        package.writestr("hello.txt", "hi")
    with pytest.raises(ConversionError) as caught:
        convert(out.getvalue(), PPTX, "x.pptx")
    assert caught.value.reason == "corrupt"
    assert caught.value.message.startswith("unreadable PPTX: ")


def test_truncated_deck_is_corrupt() -> None:
    with pytest.raises(ConversionError) as caught:
        convert(build_deck()[:5000], PPTX, "x.pptx")
    assert caught.value.reason == "corrupt"


def test_broken_slide_xml_is_corrupt() -> None:
    source = zipfile.ZipFile(io.BytesIO(build_deck()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for info in source.infolist():
            data = source.read(info)
            package.writestr(info, b"<p:sld" if info.filename == "ppt/slides/slide1.xml" else data)
    with pytest.raises(ConversionError) as caught:
        convert(out.getvalue(), PPTX, "x.pptx")
    assert caught.value.reason == "corrupt"
    assert "XMLSyntaxError" in caught.value.message


def test_a_part_that_unpacks_too_large_is_refused_before_python_pptx_opens_it() -> None:
    source = zipfile.ZipFile(io.BytesIO(build_deck()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for info in source.infolist():
            package.writestr(info.filename, source.read(info))
        # A bomb: 300 MB of zeros compress to ~300 KB.
        with package.open("ppt/media/zeros.bin", "w", force_zip64=True) as member:
            chunk = bytes(1024 * 1024)
            for _ in range(MAX_PPTX_UNPACKED // len(chunk) + 1):
                member.write(chunk)
    with pytest.raises(ConversionError) as caught:
        convert(out.getvalue(), PPTX, "bomb.pptx")
    assert caught.value.reason == "too_large"
    assert "expands" in caught.value.message or "unpacks to" in caught.value.message


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_damaged_decks_are_refused_with_a_reason(data: st.DataObject) -> None:
    original = _small_deck()
    position = data.draw(st.integers(0, len(original) - 1))
    damage = data.draw(st.binary(min_size=1, max_size=64))
    damaged = original[:position] + damage + original[position + len(damage) :]
    try:
        convert(damaged, PPTX, "x.pptx")
    except ConversionError as exc:
        assert exc.reason in ("corrupt", "too_large")


_SMALL: list[bytes] = []


def _small_deck() -> bytes:
    if not _SMALL:
        deck = Presentation()
        deck.slides.add_slide(deck.slide_layouts[1]).shapes.title.text = "Tiny"
        out = io.BytesIO()
        deck.save(out)
        _SMALL.append(out.getvalue())
    return _SMALL[0]


@NEEDS_PEERS
def test_markitdown_vectors_for_test_pptx() -> None:
    vector = markitdown_vector("test.pptx")
    data = (TEST_FILES / "test.pptx").read_bytes()
    markdown = text_of(convert(data, vector["mimetype"], "test.pptx"), "text/markdown")
    for expected in vector["must_include"]:
        assert expected in markdown
    for unexpected in vector["must_not_include"]:
        assert unexpected not in markdown
