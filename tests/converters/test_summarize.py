"""Descriptions: the first real prose of a document, boilerplate skipped."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docshelf.converters.textutil import collapse_whitespace, is_boilerplate, summarize

BOILERPLATE = [
    # Copyright and licence notices.
    "Copyright © 2001 Free Software Foundation, Inc.",
    "Copyright (c) 2016-present, Facebook, Inc. All rights reserved.",
    "Copyright 2023 Google LLC",
    "© 2024 Example Corp.",
    "(C) 1998 Acme",
    "All rights reserved.",
    "SPDX-License-Identifier: Apache-2.0",
    'Licensed under the Apache License, Version 2.0 (the "License");',
    "Permission is hereby granted, free of charge, to any person obtaining a copy",
    "This program is free software: you can redistribute it and/or modify",
    # Stability banners (Node.js API docs).
    "Stability: 2 - Stable",
    "Stability: 1.1 - Active development",
    # Form fields and placeholders (a LaTeX form, a template's author line).
    "Your Name",
    "Gender:",
    "Name:\nDate of birth:\nGender:",
    "Signature: ____________",
    "Enter your email address",
    "Click or tap here to enter text.",
    # A title page's date.
    "January 3, 2024",
    "3 May 2024",
    # Tables of contents.
    "Table of Contents",
    "Contents",
    "Contents 1 Foo 2 2 Bar 2 3 Baz 2",
    "Introduction .......... 3\nUsage .......... 7",
    # Markup with nothing to read: comments, images, badges, links, rules.
    "<!--introduced_in=v0.10.0-->",
    "![logo](docs/logo.png)",
    "[![Build Status](https://travis-ci.org/a/b.svg)](https://travis-ci.org/a/b) "
    "[![PyPI](https://img.shields.io/pypi/v/b.svg)](https://pypi.org/project/b/)",
    '<img src="logo.png" alt="Widget" width="200">',
    "[Documentation](https://b.readthedocs.io) | [Changelog](CHANGES.md)",
    "https://example.com/docs/",
    "* * *",
    "— 12 —",
]

PROSE = [
    "Zstandard, or zstd as short version, is a fast lossless compression algorithm.",
    "To use the HTTP server and client one must require('http').",
    "Copyright law protects original works of authorship.",
    "Stability matters: this library never breaks its API.",
    "Your Name is a 2016 animated film by Makoto Shinkai.",
    "Note: the API changed in version 2.",
    "Contents of the box: a widget and a manual.",
    "The HTTP message headers are represented by an object like this:",
    "See [the guide](guide.md) for details.",
    "Lorem ipsum dolor sit amet, consetetur sadipscing elitr.",
    "May 2024 bring you good compression ratios.",
    "Title line\nsecond line",
    "حَبيبي habibi حَبيبي",
]


@pytest.mark.parametrize("paragraph", BOILERPLATE)
def test_boilerplate_is_never_a_description(paragraph: str) -> None:
    assert is_boilerplate(paragraph)
    assert summarize(paragraph) is None


@pytest.mark.parametrize("paragraph", PROSE)
def test_real_first_sentences_are_descriptions(paragraph: str) -> None:
    assert not is_boilerplate(paragraph)
    assert summarize(paragraph) == collapse_whitespace(paragraph)


def test_the_first_paragraph_that_is_not_boilerplate_is_the_description() -> None:
    text = "\n\n".join([*BOILERPLATE, "This manual describes Widget.", "Second paragraph."])
    assert summarize(text) == "This manual describes Widget."


def test_a_notice_at_the_start_of_a_paragraph_takes_the_paragraph() -> None:
    assert summarize("Copyright © 2001 Acme.\nThis manual describes Widget.") is None


def test_summary_cuts_at_a_word_within_the_limit() -> None:
    summary = summarize("word " * 100, limit=50)
    assert summary == "word " * 9 + "word…"
    assert summarize("x" * 300, limit=50) == "x" * 49 + "…"


TEXT = st.lists(
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=120)
    | st.sampled_from([*BOILERPLATE, *PROSE, "", "\n", "!!! ...", "(" * 300]),
    max_size=6,
).map("\n\n".join)


@given(TEXT, st.integers(min_value=2, max_value=300))
def test_summary_is_short_readable_and_taken_from_the_text(text: str, limit: int) -> None:
    summary = summarize(text, limit)
    if summary is None:
        return
    assert 0 < len(summary) <= limit
    assert summary == summary.strip()
    assert any(char.isalpha() for char in summary)
    assert summary.removesuffix("…") in collapse_whitespace(text)


@given(TEXT)
def test_a_summary_is_never_boilerplate(text: str) -> None:
    summary = summarize(text)
    assert summary is None or not is_boilerplate(summary)
