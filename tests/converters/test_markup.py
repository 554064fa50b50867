"""Lightweight markup: reStructuredText, Org mode and AsciiDoc sources written here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from docshelf.converters import ConversionError, ConversionResult, convert, find_converter
from docshelf.converters.base import Source
from docshelf.converters.markup.adoc import MAX_EXPANSION, AsciidocConverter
from docshelf.converters.markup.common import MAX_NESTING
from docshelf.converters.markup.org import OrgConverter
from docshelf.converters.markup.rst import RstConverter
from tests.support.results import json_of

RST = """\
==============
 The Handbook
==============

:Author: Ada Lovelace
:Date: 2024-05-01
:Version: 1.2

Intro paragraph with *em*, **strong**, ``code`` and a `link <https://example.com>`_.

Install
=======

- bullet a

  - nested b

- bullet c

#. first
#. second

.. code-block:: python

   print("hi")

.. note:: Back up **first**.

+-------+-------+
| Name  | Value |
+=======+=======+
| alpha | 1     |
+-------+-------+

.. include:: {secret}

.. raw:: html

   <script>alert(1)</script>

Usage
-----

See :ref:`the index <genindex>` and `unknown`_.
"""

ORG = """\
#+TITLE: Garden Plans
#+AUTHOR: Ada Lovelace
#+DATE: 2024-05-01

Intro paragraph with *bold*, /italic/, =code= and [[https://example.com][a link]].

* TODO Planting                                                :garden:spring:
  SCHEDULED: <2024-03-14 Thu>
  :PROPERTIES:
  :EFFORT: 2h
  :END:
  - tomatoes
    - cherry
  - beans
  1. dig
  2. sow
** DONE Watering                                                   :daily:
   #+BEGIN_SRC python
   def water(plant):
       return plant
   #+END_SRC
   | Plant | Litres |
   |-------+--------|
   | rose  |      2 |
   #+BEGIN_EXPORT html
   <script>alert(1)</script>
   #+END_EXPORT
* Notes
  See [[file:other.org][the other file]].
"""

ADOC = """\
= User Guide: {product}
Ada Lovelace <ada@example.com>
v2.1, 2024-05-01
:product: Gizmo
:description: How to install and run {product}.

// a comment
Welcome to *{product}*, the _best_ tool with `mono` text, link:https://example.com[a site],
https://docs.example.com[the docs] and <<install,installing>>.

include::{secret}[]

[[install]]
== Install

* first
** nested
* second
. step one
. step two

CPU:: any
RAM:: 2 GB

NOTE: Back up first.

[source,python]
----
print("hi")
----

[cols="1,2",options="header"]
|===
|Name |Value
|alpha |1
|===

=== Details

++++
<script>alert(1)</script>
++++
"""


def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text("TOP-SECRET-CONTENT\n", encoding="utf-8")
    return path


def converted(source: str, filename: str, mime_type: str = "text/plain") -> ConversionResult:
    return convert(source.encode("utf-8"), mime_type, filename)


def markdown_of(result: ConversionResult) -> str:
    return result.get("text/markdown").data.decode("utf-8")  # type: ignore[union-attr]


def test_before_this_change_rst_and_org_were_plain_text() -> None:
    """The defect: the registry handed .rst and .org to the plain-text converter."""
    for filename, mime_type in (("a.rst", "text/x-rst"), ("a.org", "text/plain")):
        converter = find_converter(mime_type, filename)
        assert converter is not None and converter.name != "text"
    result = converted(RST, "guide.rst", "text/x-rst")
    assert "=====" not in markdown_of(result)  # was: underlines escaped into the text
    assert result.facts.title == "The Handbook"  # was: None (the file name)
    org = converted(ORG, "garden.org")
    assert "#+TITLE" not in markdown_of(org)
    assert org.facts.title == "Garden Plans"  # was: None


@pytest.mark.parametrize(
    ("mime_type", "filename", "expected"),
    [
        ("text/x-rst", "a.rst", "rst"),
        ("text/plain", "a.rest", "rst"),
        ("text/x-org", "a.org", "org"),
        ("text/plain", "notes.org", "org"),
        ("text/asciidoc", "a.adoc", "asciidoc"),
        ("text/plain", "a.asciidoc", "asciidoc"),
        ("text/plain", "a.txt", "text"),
    ],
)
def test_registry_picks_markup_before_plain_text(
    mime_type: str, filename: str, expected: str
) -> None:
    converter = find_converter(mime_type, filename)
    assert converter is not None and converter.name == expected


def test_rst_structure(tmp_path: Path) -> None:
    result = converted(RST.format(secret=secret_file(tmp_path)), "guide.rst", "text/x-rst")
    markdown = markdown_of(result)
    for expected in (
        "# The Handbook",
        "## Install",
        "### Usage",
        "- bullet a\n  - nested b\n- bullet c",
        "1. first\n2. second",
        '```python\nprint("hi")\n```',
        "> **Note:** Back up **first**.",
        "| Name | Value |\n|---|---|\n| alpha | 1 |",
        "[link](https://example.com)",
        "*em*, **strong**, `code`",
        "- **Author:** Ada Lovelace",
        "See the index and unknown.",  # an unknown role and a broken reference keep their words
    ):
        assert expected in markdown, expected
    assert "TOP-SECRET" not in markdown and "include" not in markdown
    assert "<script>" not in markdown and "alert" not in markdown


def test_rst_facts_and_json(tmp_path: Path) -> None:
    result = converted(RST.format(secret=secret_file(tmp_path)), "guide.rst", "text/x-rst")
    facts = result.facts
    assert facts.title == "The Handbook"
    assert facts.description == "Intro paragraph with em, strong, code and a link."
    assert facts.metadata == {
        "author": "Ada Lovelace",
        "date": "2024-05-01",
        "version": "1.2",
        "encoding": "utf-8",
    }
    assert [(e.title, e.level) for e in facts.outline] == [
        ("The Handbook", 1),
        ("Install", 2),
        ("Usage", 3),
    ]
    document = json_of(result)
    assert document["data"] == {
        "docinfo": {k: v for k, v in facts.metadata.items() if k != "encoding"}
    }
    assert document["code_blocks"] == [{"language": "python", "code": 'print("hi")'}]
    assert document["tables"] == [{"header": ["Name", "Value"], "rows": [["alpha", "1"]]}]
    assert [s["part"] for s in document["sections"]] == [
        "?section=the-handbook",
        "?section=install",
        "?section=usage",
    ]
    segments = result.segments()
    assert [s.part for s in segments] == [
        "section=the-handbook",
        "section=install",
        "section=usage",
    ]


def test_rst_declared_description_wins() -> None:
    source = "Title\n=====\n\n:Abstract: What it is about.\n\nFirst prose.\n"
    assert converted(source, "a.rst").facts.description == "What it is about."
    meta = ".. meta::\n   :description: Meta words.\n\nFirst prose.\n"
    assert converted(meta, "b.rst").facts.description == "Meta words."


def test_rst_reads_no_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "docutils.conf"
    config.write_text("[general]\nreport_level: 1\nhalt_level: 1\n", encoding="utf-8")
    monkeypatch.setenv("DOCUTILSCONFIG", str(config))
    monkeypatch.chdir(tmp_path)
    # halt_level 1 would make the unknown directive fatal if the file were read.
    result = converted("Title\n=====\n\n.. toctree::\n\n   a\n\nText.\n", "a.rst")
    assert result.facts.title == "Title"


def test_org_structure() -> None:
    result = converted(ORG, "garden.org")
    markdown = markdown_of(result)
    for expected in (
        "# Garden Plans",
        "## Planting",
        "### Watering",
        "## Notes",
        "- tomatoes\n   - cherry\n- beans",
        "1. dig\n1. sow",
        "```python\ndef water(plant):\n    return plant\n```",
        "| Plant | Litres |\n|---|---|\n| rose | 2 |",
        "**bold**, *italic*, `code` and [a link](https://example.com)",
        "[the other file](other.org)",
    ):
        assert expected in markdown, expected
    assert "SCHEDULED" not in markdown and ":PROPERTIES:" not in markdown
    assert "<script>" not in markdown and "alert" not in markdown


def test_org_facts_and_json() -> None:
    result = converted(ORG, "garden.org")
    assert result.facts.title == "Garden Plans"
    assert result.facts.description == "Intro paragraph with bold, italic, code and a link."
    assert result.facts.metadata == {
        "author": "Ada Lovelace",
        "date": "2024-05-01",
        "encoding": "utf-8",
    }
    document = json_of(result)
    assert document["data"]["headings"][:2] == [
        {
            "heading": "Planting",
            "level": 1,
            "todo": "TODO",
            "tags": ["garden", "spring"],
            "scheduled": "<2024-03-14 Thu>",
            "properties": {"EFFORT": "2h"},
        },
        {"heading": "Watering", "level": 2, "todo": "DONE", "tags": ["daily"]},
    ]
    assert [s.part for s in result.segments()][1:] == [
        "section=planting",
        "section=watering",
        "section=notes",
    ]


def test_org_without_title_uses_first_heading() -> None:
    result = converted("* First heading\nBody text here.\n** Child\n", "t.org")
    assert result.facts.title == "First heading"
    assert markdown_of(result).startswith("# First heading\n\nBody text here.\n\n## Child")


def test_asciidoc_structure(tmp_path: Path) -> None:
    result = converted(ADOC.replace("{secret}", str(secret_file(tmp_path))), "guide.adoc")
    markdown = markdown_of(result)
    for expected in (
        "# User Guide: Gizmo",
        "## Install",
        "### Details",
        "- first\n   - nested\n- second\n   1. step one\n   1. step two",
        "- **CPU**: any\n- **RAM**: 2 GB",
        "> **Note:** Back up first.",
        '```python\nprint("hi")\n```',
        "| Name | Value |\n|---|---|\n| alpha | 1 |",
        "Welcome to **Gizmo**, the *best* tool with `mono` text, [a site](https://example.com),",
        "[the docs](https://docs.example.com) and [installing](#install).",
    ):
        assert expected in markdown, expected
    assert "TOP-SECRET" not in markdown and "include" not in markdown
    assert "<script>" not in markdown and "comment" not in markdown


def test_asciidoc_facts_and_json() -> None:
    result = converted(ADOC, "guide.adoc")
    assert result.facts.title == "User Guide: Gizmo"
    assert result.facts.description == "How to install and run Gizmo."
    assert result.facts.metadata == {
        "author": "Ada Lovelace",
        "email": "ada@example.com",
        "revision": "2.1",
        "date": "2024-05-01",
        "encoding": "utf-8",
    }
    document = json_of(result)
    assert document["data"]["attributes"]["product"] == "Gizmo"
    assert document["tables"] == [{"header": ["Name", "Value"], "rows": [["alpha", "1"]]}]
    assert [s.part for s in result.segments()] == [
        "section=user-guide-gizmo",
        "section=install",
        "section=details",
    ]


README_ADOC = Path(
    "/usr/lib/google-cloud-sdk/platform/google_appengine/google/appengine/tools/java/"
    "jetty12/jetty-home/README.adoc"
)


@pytest.mark.skipif(not README_ADOC.exists(), reason="needs the Google Cloud SDK's Jetty README")
def test_asciidoc_real_readme() -> None:
    result = convert(README_ADOC.read_bytes(), "text/plain", README_ADOC.name)
    markdown = markdown_of(result)
    assert result.facts.title == "ECLIPSE JETTY"
    assert "[Eclipse Jetty](https://jetty.org/)" in markdown
    assert "`*.war`" in markdown and "tag::" not in markdown
    assert "```\n$ java -jar $JETTY_HOME/start.jar\n```" in markdown


def test_asciidoc_attribute_bomb_is_refused() -> None:
    lines = [":a0: " + "x" * 1000]
    lines += [f":a{n}: {{a{n - 1}}}{{a{n - 1}}}" for n in range(1, 40)]
    with pytest.raises(ConversionError) as caught:
        converted("\n".join([*lines, "", "{a39}"]), "bomb.adoc")
    assert caught.value.reason == "too_large"
    assert caught.value.message == (
        f"attribute references expand to over {MAX_EXPANSION} characters"
    )


@pytest.mark.parametrize(
    ("filename", "source", "kind"),
    [
        ("deep.org", "".join(f"{'  ' * n}- item {n}\n" for n in range(60)), "Org lists"),
        ("deep.adoc", "".join(f"{'====' + '=' * n}\n" for n in range(60)), "AsciiDoc blocks"),
        ("deep.rst", "".join(f"{'  ' * n}- item {n}\n\n" for n in range(60)), None),
    ],
)
def test_huge_nesting_is_bounded(filename: str, source: str, kind: str | None) -> None:
    try:
        result = converted(source, filename)
    except ConversionError as error:
        assert error.reason == "too_large"
        assert kind is None or error.message == f"{kind} nested more than {MAX_NESTING} levels deep"
    else:
        assert kind is None, "expected a refusal"
        assert "item 0" in markdown_of(result)


@pytest.mark.parametrize("converter", [RstConverter(), OrgConverter(), AsciidocConverter()])
def test_binary_bytes_are_unsupported(converter: Any) -> None:
    with pytest.raises(ConversionError) as caught:
        converter.convert(Source.of("x.bin", "text/plain", b"\x89PNG\x00\x01\x02binary"))
    assert caught.value.reason == "unsupported"
    assert caught.value.message == "binary data (NUL bytes) where text was expected"


@pytest.mark.parametrize(
    ("filename", "mime_type", "source"),
    [
        ("a.rst", "text/x-rst", RST.format(secret="/nonexistent")),
        ("a.org", "text/x-org", ORG),
        ("a.adoc", "text/asciidoc", ADOC),
    ],
)
def test_json_validates_and_all_formats_derive(
    filename: str, mime_type: str, source: str, schema_validator: Any
) -> None:
    result = converted(source, filename, mime_type)
    assert result.formats == ("text/plain", "text/markdown", "application/json", "application/pdf")
    schema_validator.validate(json_of(result))
    assert result.get("application/pdf").data.startswith(b"%PDF")  # type: ignore[union-attr]
