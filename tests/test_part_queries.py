"""Part queries and section slugs (issue #10): the parsers, property-tested.

``?pages=3``, ``?pages=3-5`` and ``?section=slug`` name parts of a document; the
canonical form of any query we accept parses back to the same part, and
anything else is refused with a reason, never an exception of another kind.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docshelf.app.mcp.parts import parse_query
from docshelf.converters.base import OutlineEntry
from docshelf.converters.parts import (
    MAX_PART_PAGES,
    PartNotFound,
    PartQuery,
    headings_of,
    outline_parts,
    pages_markdown,
    pages_query,
    section_markdown,
    section_query,
    slugify,
    unique_slugs,
)


@given(st.text(max_size=80))
def test_any_query_is_a_part_or_a_reason(query: str) -> None:
    try:
        part = parse_query(query)
    except PartNotFound as exc:
        assert exc.reason
        return
    assert parse_query(part.query) == part


@given(st.integers(1, 10**6), st.integers(0, MAX_PART_PAGES - 1))
def test_page_ranges_round_trip(first: int, extra: int) -> None:
    assert parse_query(pages_query(first, first + extra)) == PartQuery(pages=(first, first + extra))


@given(st.text(min_size=1, max_size=60))
def test_any_heading_slug_round_trips_through_a_uri(heading: str) -> None:
    slug = slugify(heading)
    query = section_query(slug)
    assert query.isascii() and "&" not in query and "#" not in query
    if slug:
        assert parse_query(query) == PartQuery(section=slug)


@given(st.lists(st.text(alphabet="ab -!", max_size=4), max_size=12))
def test_slugs_are_unique_in_document_order(headings: list[str]) -> None:
    slugs = unique_slugs(headings)
    assert len(slugs) == len(headings)
    assert len(set(slugs)) == len(slugs)


@pytest.mark.parametrize(
    ("headings", "slugs"),
    [
        # GitHub's anchors (github-slugger): punctuation dropped, spaces to hyphens.
        (["Hello, World!"], ["hello-world"]),
        (
            ["Medium tests", "Medium tests", "Medium tests"],
            ["medium-tests", "medium-tests-1", "medium-tests-2"],
        ),
        (["a", "a", "a-1"], ["a", "a-1", "a-1-1"]),
        (["Straße & Café"], ["straße--café"]),
        (["snake_case and `code`"], ["snake_case-and-code"]),
    ],
)
def test_slugs_are_githubs(headings: list[str], slugs: list[str]) -> None:
    assert unique_slugs(headings) == slugs


_BLOCK = st.one_of(
    st.tuples(st.integers(1, 6), st.sampled_from(["Intro", "Setup", "Usage", "Setup"])).map(
        lambda h: f"{'#' * h[0]} {h[1]}"
    ),
    st.sampled_from(["Setext title\n============", "Setext sub\n----------"]),
    st.sampled_from(["Some prose.", "- a list\n- of items", "```\n# not a heading\n```"]),
)


@given(st.lists(_BLOCK, max_size=12))
def test_every_heading_names_a_section_that_starts_with_it(blocks: list[str]) -> None:
    markdown = "\n\n".join(blocks) + "\n"
    headings = headings_of(markdown)
    assert all(h.title != "not a heading" for h in headings)  # fenced code is no heading
    lines = markdown.splitlines()
    for heading in headings:
        found = section_markdown(markdown, heading.slug)
        assert found is not None
        assert found[1].splitlines()[0] == lines[heading.first_line]


def test_outline_parts_of_a_paginated_document_run_to_the_next_entry() -> None:
    outline = [
        OutlineEntry("Intro", 1, 1),
        OutlineEntry("Detail", 2, 2),
        OutlineEntry("Methods", 1, 4),
        OutlineEntry("Nowhere", 1, None),
        OutlineEntry("Results", 1, 120),
    ]
    assert outline_parts(outline, 200) == [
        "pages=1-4",  # to where "Methods" starts: sections share pages
        "pages=2-4",
        "pages=4-53",  # to "Results" (120), but at most 50 pages in one part
        None,
        "pages=120-169",
    ]


def test_pages_markdown_cuts_at_page_markers() -> None:
    markdown = "# T\n\n<!-- page 1 -->\none\n\n<!-- page 2 -->\ntwo\n\n<!-- page 3 -->\nthree\n"
    assert pages_markdown(markdown, 2, 2) == "<!-- page 2 -->\ntwo\n"
    assert pages_markdown(markdown, 2, 3) == "<!-- page 2 -->\ntwo\n\n<!-- page 3 -->\nthree\n"
    assert pages_markdown("no markers\n", 1, 1) is None
