"""Titles and descriptions a person would use (issue #12, item 4).

Every case converts a real document (or the opening of one, copied from the
project named) through :func:`converters.convert`.
"""

# ruff: noqa: E501 -- the README lines are quoted as they are, long URLs and all.

from __future__ import annotations

import pytest

from docshelf.converters import convert
from docshelf.converters.base import Facts
from docshelf.converters.peek import cheap_title
from docshelf.converters.textutil import is_boilerplate
from tests.support.paths import NEEDS_SHARED

from .conftest import CORPUS_PDF, READABLE_PDFS, Convert

# facebook/zstd README.md (dev branch): a logo, a bold name, no H1.
ZSTD_README = """\
<p align="center"><img src="https://raw.githubusercontent.com/facebook/zstd/dev/doc/images/zstd_logo86.png" alt="Zstandard"></p>

__Zstandard__, or `zstd` as short version, is a fast lossless compression algorithm,
targeting real-time compression scenarios at zlib-level and better compression ratios.
It's backed by a very fast entropy stage, provided by [Huff0 and FSE library](https://github.com/Cyan4973/FiniteStateEntropy).

## Benchmarks

For reference, several fast compression algorithms were tested and compared.
"""

# nodejs/node doc/api/http.md: H1, an HTML comment, a stability banner.
NODE_HTTP = """\
# HTTP

<!--introduced_in=v0.10.0-->

> Stability: 2 - Stable

<!-- source_link=lib/http.js -->

To use the HTTP server and client one must `require('http')`.

## Class: `http.Agent`
"""

# psf/black README.md (2018): H1, then a line of badges.
BLACK_2018 = """\
# black

[![Build Status](https://travis-ci.org/ambv/black.svg?branch=master)](https://travis-ci.org/ambv/black) ![License: MIT](https://img.shields.io/github/license/ambv/black.svg) ![PyPI](https://img.shields.io/pypi/v/black.svg) [![Code style: black](https://img.shields.io/badge/code%20style-black-000000.svg)](https://github.com/ambv/black)

*Black* is the uncompromising Python code formatter.

## Installation
"""

# psf/black README.md (today): a linked logo, an HTML h2 tagline, badges in HTML.
BLACK_NOW = """\
[![Black Logo](https://raw.githubusercontent.com/psf/black/main/docs/_static/logo2-readme.png)](https://black.readthedocs.io/en/stable/)

<h2 align="center">The Uncompromising Code Formatter</h2>

<p align="center">
<a href="https://github.com/psf/black/actions"><img alt="Actions Status" src="https://github.com/psf/black/workflows/Test/badge.svg"></a>
<a href="https://pypi.org/project/black/"><img alt="PyPI" src="https://img.shields.io/pypi/v/black"></a>
</p>

Black is the uncompromising Python code formatter.

## Installation and usage
"""

# A README in the style of encode/httpx: linked logo and tagline in HTML, no heading.
HTTPX_STYLE = """\
<p align="center">
  <a href="https://www.python-httpx.org/"><img width="350" height="208" src="https://raw.githubusercontent.com/encode/httpx/master/docs/img/butterfly.png" alt='HTTPX'></a>
</p>

<p align="center"><strong>HTTPX</strong> <em>- A next-generation HTTP client for Python.</em></p>

<p align="center">
<a href="https://github.com/encode/httpx/actions"><img src="https://github.com/encode/httpx/workflows/Test%20Suite/badge.svg" alt="Test Suite"></a>
</p>

HTTPX is a fully featured HTTP client library for Python 3.
"""

# Badges first, then no H1: badges are never the title nor the description.
BADGES_FIRST = """\
[![Build](https://github.com/acme/widget/actions/workflows/ci.yml/badge.svg)](https://github.com/acme/widget/actions)
[![PyPI](https://img.shields.io/pypi/v/widget.svg)](https://pypi.org/project/widget/)

[Documentation](https://widget.readthedocs.io) | [Changelog](CHANGES.md)

## Installation

Widget makes widgets.
"""


def markdown_facts(source: str, filename: str = "README.md") -> Facts:
    return convert(source.encode(), "text/markdown", filename).facts


@pytest.mark.parametrize(
    ("source", "title", "description"),
    [
        pytest.param(
            ZSTD_README,
            "Zstandard",
            "Zstandard, or zstd as short version, is a fast lossless compression algorithm,",
            id="zstd-logo-and-bold-name",
        ),
        pytest.param(
            NODE_HTTP,
            "HTTP",
            "To use the HTTP server and client one must require('http').",
            id="node-stability-banner",
        ),
        pytest.param(
            BLACK_2018,
            "black",
            "Black is the uncompromising Python code formatter.",
            id="black-badges-under-h1",
        ),
        pytest.param(
            BLACK_NOW,
            "Black",
            "The Uncompromising Code Formatter",
            id="black-linked-logo",
        ),
        pytest.param(
            HTTPX_STYLE,
            "HTTPX",
            "HTTPX - A next-generation HTTP client for Python.",
            id="httpx-html-logo",
        ),
        pytest.param(
            BADGES_FIRST,
            "Installation",
            "Widget makes widgets.",
            id="badges-first",
        ),
    ],
)
def test_readme_title_and_description(source: str, title: str, description: str) -> None:
    facts = markdown_facts(source)
    assert facts.title == title
    assert facts.description is not None and facts.description.startswith(description)


CATALOG_CASES = [
    ZSTD_README,
    NODE_HTTP,
    BLACK_2018,
    BLACK_NOW,
    HTTPX_STYLE,
    BADGES_FIRST,
    "---\ntitle: From front matter\n---\n\n" + ZSTD_README,
    "**Widget** is a tool.\n\n## Usage\n\n# The Widget Manual\n",
    "<img src='logo.png' alt='Widget'>\n\nManual\n======\n\nText.\n",
    "**Note:** this is alpha software.\n\n## Usage\n",
    "![logo](logo.png)\n\n## Usage\n",
]


@pytest.mark.parametrize("source", CATALOG_CASES)
def test_the_catalog_lists_a_readme_under_the_title_its_conversion_gives(source: str) -> None:
    # The catalog names a file from its first bytes before any conversion (DESIGN
    # D11); the name must not change when the formats are built. Before: "Benchmarks"
    # for zstd, the first heading of any level.
    assert cheap_title(source.encode(), "text/markdown") == markdown_facts(source).title


def test_front_matter_title_beats_everything() -> None:
    facts = markdown_facts("---\ntitle: From front matter\n---\n\n" + ZSTD_README)
    assert facts.title == "From front matter"


def test_h1_beats_a_leading_bold_name() -> None:
    facts = markdown_facts("**Widget** is a tool.\n\n## Usage\n\n# The Widget Manual\n")
    assert facts.title == "The Widget Manual"


def test_a_setext_h1_is_a_level_1_heading() -> None:
    facts = markdown_facts("<img src='logo.png' alt='Widget'>\n\nManual\n======\n\nText.\n")
    assert facts.title == "Manual"


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("**Note:** this is alpha software.\n\n## Usage\n", id="bold-label"),
        pytest.param("**Warning** this is alpha software.\n\n## Usage\n", id="admonition"),
        pytest.param("![logo](logo.png)\n\n## Usage\n", id="generic-alt"),
        pytest.param("Widget is a tool. **Bold** later.\n\n## Usage\n", id="bold-not-first"),
        pytest.param("- **Item** one\n\n## Usage\n", id="bold-in-list"),
    ],
)
def test_what_does_not_name_a_document(source: str) -> None:
    assert markdown_facts(source).title == "Usage"


def test_a_badge_alone_names_nothing() -> None:
    source = "[![Build](https://img.shields.io/badge/build-passing-green.svg)](https://ci)\n"
    facts = markdown_facts(source)
    assert facts.title is None and facts.description is None


def test_text_file_description_skips_a_licence_header() -> None:
    source = (
        "Copyright (c) 2001 Acme Inc.\nAll rights reserved.\n\n"
        "SPDX-License-Identifier: MIT\n\n"
        "Widget reads the configuration from widget.toml.\n"
    )
    facts = convert(source.encode(), "text/plain", "NOTES.txt").facts
    assert facts.description == "Widget reads the configuration from widget.toml."


def test_html_page_without_meta_description_skips_its_notice() -> None:
    page = (
        b"<html><head><title>Widget</title></head><body>"
        b"<p>Copyright &copy; 2001 Acme Inc.</p><p>Widget makes widgets.</p></body></html>"
    )
    facts = convert(page, "text/html", "widget.html").facts
    assert facts.description == "Widget makes widgets."


@NEEDS_SHARED
@pytest.mark.parametrize("name", READABLE_PDFS)
def test_pdf_descriptions_are_never_boilerplate(name: str, converted: Convert) -> None:
    description = converted(CORPUS_PDF / name).facts.description
    assert description is None or not is_boilerplate(description)


@NEEDS_SHARED
@pytest.mark.parametrize(
    ("name", "start"),
    [
        # "Your Name" and the date on its title page came first.
        ("multicolumn.pdf", "This is a sample document with two columns"),
        # Its table of contents came first.
        ("pdflatex-outline.pdf", "Hello, here is some text without a meaning."),
    ],
)
def test_pdf_description_is_the_first_prose(name: str, start: str, converted: Convert) -> None:
    description = converted(CORPUS_PDF / name).facts.description
    assert description is not None and description.startswith(start)
