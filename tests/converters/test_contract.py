"""The converter contract: types, registry, schema, derived-format rules."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import jsonschema
import pytest

from docshelf.converters import (
    CONVERTERS,
    DERIVED_MIME_TYPES,
    ConversionError,
    Converter,
    Representation,
    convert,
    find_converter,
)
from docshelf.converters.assemble import assemble
from docshelf.converters.base import Facts
from docshelf.converters.document import DocumentData, document_json
from docshelf.converters.formats import is_textual
from docshelf.converters.html.docx import DOCX_MIME_TYPE
from docshelf.converters.markdown.model import Section

from .conftest import CORPUS_PDF, READABLE_PDFS, SPEC, SPEC_PAGES, SPEC_SCHEMAS, Convert

SAMPLES: dict[str, tuple[str, bytes]] = {
    "page.html": ("text/html", b"<title>T</title><h1>H</h1><p>x <a href='/y'>y</a></p>"),
    "data.csv": ("text/csv", b"a,b\n1,2\n"),
    "notes.txt": ("text/plain", b"Just text.\n"),
    "data.json": ("application/json", b'{"title": "J", "items": [1, 2]}'),
    "readme.md": ("text/markdown", b"# R\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"),
}


@pytest.mark.parametrize(
    ("mime_type", "filename", "expected"),
    [
        ("application/pdf", "a.pdf", "pdf"),
        ("application/pdf", "misnamed.txt", "pdf"),
        (DOCX_MIME_TYPE, "a.docx", "docx"),
        ("application/zip", "report.docx", "docx"),
        ("application/zip", "book.xlsx", "spreadsheet"),
        ("application/zip", "macros.xlsm", "spreadsheet"),
        ("application/x-ole-storage", "old.xls", "spreadsheet"),
        ("application/vnd.ms-excel", "noext", "spreadsheet"),
        ("application/zip", "calc.ods", "spreadsheet"),
        ("application/octet-stream", "a.tsv", "csv"),
        ("text/markdown", "a.md", "markdown"),
        ("text/plain", "README.md", "markdown"),
        ("text/html", "README.md", "markdown"),
        ("text/plain", "page.mdx", "markdown"),
        ("text/html", "a.html", "html"),
        ("application/xhtml+xml", "a.xhtml", "html"),
        ("application/json", "a.json", "json"),
        ("application/ld+json", "a.jsonld", "json"),
        ("text/plain", "a.json", "json"),
        ("text/csv", "a.csv", "csv"),
        ("text/plain", "a.csv", "csv"),
        ("text/plain", "A.TSV", "csv"),
        ("text/plain", "a.txt", "text"),
        ("text/x-python", "a.py", "text"),
        ("application/yaml", "config.yml", "text"),
        ("text/plain; charset=utf-8", "noext", "text"),
    ],
)
def test_registry_picks_by_priority(mime_type: str, filename: str, expected: str) -> None:
    converter = find_converter(mime_type, filename)
    assert converter is not None and converter.name == expected


def test_unsupported_type_is_an_error() -> None:
    assert find_converter("application/x-executable", "tool") is None
    with pytest.raises(ConversionError) as caught:
        convert(b"\x7fELF", "application/x-executable", "tool")
    assert caught.value.reason == "unsupported"


def test_every_converter_satisfies_the_protocol() -> None:
    names = [converter.name for converter in CONVERTERS]
    assert len(set(names)) == len(names)
    for converter in CONVERTERS:
        assert isinstance(converter, Converter)
        assert converter.version


def test_conversion_error_carries_reason_and_survives_pickling() -> None:
    error = pickle.loads(pickle.dumps(ConversionError("corrupt", "bad xref")))
    assert (error.reason, error.message) == ("corrupt", "bad xref")
    with pytest.raises(ValueError, match="unknown conversion error reason"):
        ConversionError("oops", "not a reason")


def test_text_representations_are_textual() -> None:
    assert is_textual("text/markdown")
    assert is_textual("application/json")
    assert not is_textual("application/pdf")


def test_assemble_never_calls_the_producer_of_the_source_type() -> None:
    def refuse() -> bytes:
        raise AssertionError("the source's own type must not be produced")

    producers = {
        mime: (refuse if mime == "application/json" else (lambda: b"x"))
        for mime in DERIVED_MIME_TYPES
    }
    result = assemble("application/json; charset=utf-8", Facts(), producers)
    assert [r.mime_type for r in result.representations] == [
        "text/plain",
        "text/markdown",
        "application/pdf",
    ]


def test_document_needs_pages_or_sections() -> None:
    with pytest.raises(ValueError):
        DocumentData(facts=Facts())
    with pytest.raises(ValueError):
        DocumentData(facts=Facts(), pages=(), sections=())


def test_schema_rejects_what_it_should(schema_validator: jsonschema.protocols.Validator) -> None:
    good = json.loads(
        document_json(DocumentData(facts=Facts(title="t"), sections=[Section(None, 0, "x")]))
    )
    schema_validator.validate(good)
    for broken in (
        {**good, "schema": "docshelf.document/v2"},
        {key: value for key, value in good.items() if key != "sections"},
        {**good, "pages": []},
        {**good, "metadata": {"n": 1}},
        {**good, "outline": [{"title": "x", "level": 0, "page": None}]},
        {**good, "surprise": True},
    ):
        assert not schema_validator.is_valid(broken)


def _json_of(result_representations: tuple[Representation, ...]) -> dict[str, object]:
    by_type = {r.mime_type: r for r in result_representations}
    return json.loads(by_type["application/json"].data)


@pytest.mark.parametrize("name", READABLE_PDFS)
def test_pdf_json_validates(
    name: str, converted: Convert, schema_validator: jsonschema.protocols.Validator
) -> None:
    schema_validator.validate(_json_of(converted(CORPUS_PDF / name).representations))


@pytest.mark.parametrize("page", SPEC_PAGES)
def test_spec_page_json_validates(
    page: str, converted: Convert, schema_validator: jsonschema.protocols.Validator
) -> None:
    schema_validator.validate(_json_of(converted(SPEC / page).representations))


@pytest.mark.parametrize("name", SPEC_SCHEMAS)
def test_json_source_document_validates(
    name: str, schema_validator: jsonschema.protocols.Validator
) -> None:
    path = SPEC / name
    # Labelled text/plain, a JSON source gets a docshelf.document too.
    result = convert(path.read_bytes(), "text/plain", path.name)
    document = _json_of(result.representations)
    schema_validator.validate(document)
    assert document["data"] == json.loads(path.read_bytes())


@pytest.mark.parametrize("filename", sorted(SAMPLES))
def test_made_up_sources_validate_and_derive_the_other_four(
    filename: str, tmp_path: Path, schema_validator: jsonschema.protocols.Validator
) -> None:
    mime_type, data = SAMPLES[filename]
    path = tmp_path / filename
    path.write_bytes(data)
    result = convert(path.read_bytes(), mime_type, path.name)
    types = [r.mime_type for r in result.representations]
    assert types == [mime for mime in DERIVED_MIME_TYPES if mime != mime_type]
    for representation in result.representations:
        if is_textual(representation.mime_type):
            representation.data.decode("utf-8")
    if "application/json" in types:
        schema_validator.validate(_json_of(result.representations))
