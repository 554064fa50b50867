"""CSV and TSV sources, made in tmp_path."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docshelf.converters import ConversionError, convert
from docshelf.converters.base import Source
from docshelf.converters.csv_ import CsvConverter, read_rows, unique_keys


def convert_file(path: Path, mime_type: str = "text/csv") -> dict[str, object]:
    result = convert(path.read_bytes(), mime_type, path.name)
    assert [r.mime_type for r in result.representations] == [
        "text/plain",
        "text/markdown",
        "application/json",
        "application/pdf",
    ]
    return json.loads(result.get("application/json").data)  # type: ignore[union-attr]


def test_comma_separated_with_quotes(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_text('name,city\nAnn,"New York, NY"\nBob,"say ""hi"""\n', encoding="utf-8")
    document = convert_file(path)
    assert document["data"] == [
        {"name": "Ann", "city": "New York, NY"},
        {"name": "Bob", "city": 'say "hi"'},
    ]
    assert document["tables"] == [
        {"header": ["name", "city"], "rows": [["Ann", "New York, NY"], ["Bob", 'say "hi"']]}
    ]


def test_semicolon_dialect_is_sniffed(tmp_path: Path) -> None:
    path = tmp_path / "euro.csv"
    path.write_text("Artikel;Preis\nBrot;2,50\nMilch;1,10\n", encoding="cp1252")
    document = convert_file(path)
    assert document["data"] == [
        {"Artikel": "Brot", "Preis": "2,50"},
        {"Artikel": "Milch", "Preis": "1,10"},
    ]


def test_tsv(tmp_path: Path) -> None:
    path = tmp_path / "t.tsv"
    path.write_text("a\tb\n1\t2\n", encoding="utf-8")
    document = convert_file(path, "text/tab-separated-values")
    assert document["data"] == [{"a": "1", "b": "2"}]


def test_ragged_rows_and_odd_headers(tmp_path: Path) -> None:
    path = tmp_path / "ragged.csv"
    path.write_text("id,,id\n1,2,3,4\n5\n", encoding="utf-8")
    document = convert_file(path)
    assert document["data"] == [
        {"id": "1", "column_2": "2", "id_2": "3", "column_4": "4"},
        {"id": "5", "column_2": None, "id_2": None, "column_4": None},
    ]
    result = convert(path.read_bytes(), "text/csv", path.name)
    markdown = result.get("text/markdown").data.decode()  # type: ignore[union-attr]
    assert "| id | column\\_2 | id\\_2 | column\\_4 |" in markdown
    assert result.facts.metadata == {"rows": "2", "columns": "4", "encoding": "utf-8"}


def test_markdown_table_escapes_cell_content(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("a,b\n*x*,y|z\n", encoding="utf-8")
    result = convert(path.read_bytes(), "text/csv", path.name)
    assert "| \\*x\\* | y\\|z |" in result.get("text/markdown").data.decode()  # type: ignore[union-attr]


def test_unique_keys() -> None:
    assert unique_keys(["a", "a", " ", "a_2"], 5) == ["a", "a_2", "column_3", "a_2_2", "column_5"]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_reading_rows_never_raises_but_conversion_error(text: str) -> None:
    try:
        rows = read_rows(text, ".csv")
    except ConversionError:
        return
    assert all(any(cell for cell in row) for row in rows)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_arbitrary_bytes_raise_nothing_but_conversion_error(data: bytes) -> None:
    with contextlib.suppress(ConversionError):
        CsvConverter().convert(Source.of("fuzz.csv", "text/csv", data))
