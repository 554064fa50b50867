"""Golden files: the Markdown and plain text of each corpus PDF and some spec pages.

A change in output shows up here as a diff to review. After reviewing it,
rewrite the files with ``DOCSHELF_UPDATE_GOLDEN=1 pytest tests/converters``
(and bump the converter's ``version``: storage caches output by it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from docshelf.converters import ConversionResult, convert
from tests.support.markitdown_vectors import TEST_FILES
from tests.support.paths import NEEDS_SHARED

from .conftest import CORPUS_PDF, READABLE_PDFS, SPEC, Convert

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
UPDATE = os.environ.get("DOCSHELF_UPDATE_GOLDEN") == "1"
GOLDEN_SPEC_PAGES = [
    "mcp-2026-07-28/server_resources.mdx",
    "mcp-2026-07-28/extensions_overview.mdx",
    "mcp-2025-11-25/basic_lifecycle.mdx",
]
SUFFIXES = {"text/markdown": ".md", "text/plain": ".txt"}


def check(result: ConversionResult, stem: Path) -> None:
    for mime_type, suffix in SUFFIXES.items():
        representation = result.get(mime_type)
        assert representation is not None
        actual = representation.data.decode("utf-8")
        path = stem.with_name(stem.name + suffix)
        if UPDATE:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(actual, encoding="utf-8")
            continue
        assert path.exists(), f"no golden file {path}; run with DOCSHELF_UPDATE_GOLDEN=1"
        assert actual == path.read_text(encoding="utf-8"), f"{path} differs"


@pytest.mark.parametrize("name", READABLE_PDFS)
def test_pdf_matches_golden(name: str, converted: Convert) -> None:
    check(converted(CORPUS_PDF / name), GOLDEN / "pdf" / Path(name).stem)


@NEEDS_SHARED
@pytest.mark.parametrize("page", GOLDEN_SPEC_PAGES)
def test_spec_page_matches_golden(page: str) -> None:
    path = SPEC / page
    # Labelled as MDX, the page gets a Markdown variant: the MDX unwrapped.
    result = convert(path.read_bytes(), "text/mdx", path.name)
    check(result, GOLDEN / "spec" / page.replace("/", "__").removesuffix(".mdx"))


#: markitdown's test files (MIT; ``../shared/peer-suites/markitdown``) of every family
#: issue 25 added: files nobody here wrote, one per kind.
MARKITDOWN_FILES = [
    "test.pptx",
    "test.xlsx",
    "test.xls",
    "test.epub",
    "test_outlook_msg.msg",
    "test_notebook.ipynb",
    "test_rss.xml",
    "test_files.zip",
    "test_mskanji.csv",
    "test.jpg",
    "test.mp3",
    "test.docx",
]


@NEEDS_SHARED
@pytest.mark.parametrize("name", MARKITDOWN_FILES)
def test_every_family_matches_golden(name: str) -> None:
    from docshelf.converters.detect import HEAD_BYTES, detect_mime

    data = (TEST_FILES / name).read_bytes()
    result = convert(data, detect_mime(data[:HEAD_BYTES], name), name)
    check(result, GOLDEN / "markitdown" / name)
