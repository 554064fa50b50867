"""Jupyter notebooks (nbformat 4 and 3), written with json in the tests."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from docshelf.converters import ConversionError, ConversionResult, convert, find_converter
from docshelf.converters import notebook as notebook_module
from docshelf.converters.parts import section_markdown
from tests.support.markitdown_vectors import NEEDS_PEERS, TEST_FILES, markitdown_vector, normalized
from tests.support.results import text_of as text

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def notebook(cells: list[dict[str, Any]], **metadata: Any) -> bytes:
    return json.dumps(
        {
            "cells": cells,
            "metadata": {
                "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                "language_info": {"name": "python", "version": "3.12.8"},
                **metadata,
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    ).encode()


def markdown_cell(*lines: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "id": "m", "metadata": {}, "source": list(lines)}


def code_cell(source: str, *outputs: dict[str, Any], count: int = 1) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "execution_count": count,
        "id": "c",
        "metadata": {},
        "outputs": list(outputs),
        "source": source,
    }


CELLS = [
    markdown_cell("# Analysis\n", "\n", "We look at *shelves*."),
    code_cell(
        'print("hello")\n1 + 1',
        {"output_type": "stream", "name": "stdout", "text": ["hello\n"]},
        {
            "output_type": "execute_result",
            "execution_count": 1,
            "metadata": {},
            "data": {"text/plain": ["2"]},
        },
    ),
    markdown_cell("## Results"),
    code_cell(
        "plot()",
        {
            "output_type": "display_data",
            "metadata": {},
            "data": {"image/png": PNG, "text/plain": ["<Figure size 640x480>"]},
        },
        {"output_type": "display_data", "metadata": {}, "data": {"image/svg+xml": ["<svg/>"]}},
        {
            "output_type": "display_data",
            "metadata": {},
            "data": {"text/markdown": ["**Bold** result"]},
        },
        {
            "output_type": "execute_result",
            "execution_count": 2,
            "metadata": {},
            "data": {
                "text/html": [
                    "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>"
                ],
                "text/plain": ["   a  b\n0  1  2"],
            },
        },
    ),
    code_cell(
        "1/0",
        {
            "output_type": "error",
            "ename": "ZeroDivisionError",
            "evalue": "division by zero",
            "traceback": [
                "\u001b[0;31m---------\u001b[0m",
                "\u001b[0;31mZeroDivisionError\u001b[0m: division by zero",
            ],
        },
    ),
    {"cell_type": "raw", "metadata": {}, "source": "\\LaTeX{} raw"},
    code_cell("", count=5),
]


@pytest.fixture(scope="module")
def analysis() -> ConversionResult:
    return convert(notebook(CELLS), "application/x-ipynb+json", "analysis.ipynb")


def test_cells_in_order_code_fenced_with_the_kernel_language(analysis: ConversionResult) -> None:
    assert text(analysis, "text/markdown") == (
        "# Analysis\n\nWe look at *shelves*.\n\n"
        '```python\nprint("hello")\n1 + 1\n```\n\n```\nhello\n```\n\n```\n2\n```\n\n'
        "## Results\n\n```python\nplot()\n```\n\n"
        "![output 4](cell-4-output.png)\n\n![output 4](cell-4-output-2.svg)\n\n**Bold** result\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "```python\n1/0\n```\n\n```\n---------\nZeroDivisionError: division by zero\n```\n\n"
        "```\n\\LaTeX{} raw\n```\n"
    )


def test_nothing_of_the_file_format_leaks(analysis: ConversionResult) -> None:
    for mime in ("text/markdown", "text/plain", "application/json"):
        body = text(analysis, mime)
        assert "nbformat" not in body and "iVBOR" not in body and "\u001b" not in body
        assert '"id"' not in body


def test_facts_title_description_and_parts(analysis: ConversionResult) -> None:
    facts = analysis.facts
    assert facts.title == "Analysis"
    assert facts.description == "We look at shelves."
    assert facts.metadata == {"kernel": "Python 3", "programming_language": "python"}
    assert [entry.title for entry in facts.outline] == ["Analysis", "Results"]
    cut = section_markdown(text(analysis, "text/markdown"), "results")
    assert cut is not None and "plot()" in cut[1] and "hello" not in cut[1]


def test_json_data_has_cells_and_outputs_as_text(analysis: ConversionResult) -> None:
    data = json.loads(text(analysis, "application/json"))["data"]
    assert (data["kernel"], data["language"]) == ("Python 3", "python")
    assert [cell["type"] for cell in data["cells"]] == [
        "markdown",
        "code",
        "markdown",
        "code",
        "code",
        "raw",
        "code",
    ]
    assert data["cells"][1]["outputs"] == [
        {"type": "stream", "text": "hello\n", "image": None},
        {"type": "execute_result", "text": "2", "image": None},
    ]
    assert [o["image"] for o in data["cells"][3]["outputs"]] == [
        "cell-4-output.png",
        "cell-4-output-2.svg",
        None,
        None,
    ]
    assert data["cells"][4]["outputs"][0]["text"].endswith("ZeroDivisionError: division by zero")


def test_metadata_title_wins_and_heads_a_notebook_without_h1() -> None:
    result = convert(
        notebook(
            [markdown_cell("## Part"), code_cell("x = 1")],
            title="Shelf Study",
            authors=[{"name": "Ann"}],
        ),
        "application/x-ipynb+json",
        "s.ipynb",
    )
    assert text(result, "text/markdown").startswith(
        "# Shelf Study\n\n## Part\n\n```python\nx = 1\n```"
    )
    assert result.facts.title == "Shelf Study"
    assert result.facts.metadata["author"] == "Ann"
    assert result.facts.description == "Jupyter notebook (python), 2 cells"


def test_nbformat_3_worksheets() -> None:
    v3 = {
        "metadata": {"name": "old"},
        "nbformat": 3,
        "nbformat_minor": 0,
        "worksheets": [
            {
                "cells": [
                    {
                        "cell_type": "heading",
                        "level": 2,
                        "metadata": {},
                        "source": ["Old notebook"],
                    },
                    {
                        "cell_type": "code",
                        "language": "python",
                        "input": ["a = 2\n", "a"],
                        "prompt_number": 3,
                        "collapsed": False,
                        "metadata": {},
                        "outputs": [
                            {
                                "output_type": "pyout",
                                "prompt_number": 3,
                                "text": ["2"],
                                "metadata": {},
                            },
                            {"output_type": "display_data", "png": PNG, "metadata": {}},
                            {"output_type": "pyerr", "ename": "E", "evalue": "v", "traceback": []},
                        ],
                    },
                ]
            }
        ],
    }
    result = convert(json.dumps(v3).encode(), "application/json", "old.ipynb")
    assert text(result, "text/markdown") == (
        "## Old notebook\n\n```python\na = 2\na\n```\n\n```\n2\n```\n\n"
        "![output 2](cell-2-output.png)\n\n```\nE: v\n```\n"
    )
    assert result.facts.title == "Old notebook"


def test_long_outputs_are_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notebook_module, "MAX_OUTPUT_CHARS", 10)
    cells = [code_cell("spam()", {"output_type": "stream", "name": "stdout", "text": "x" * 25})]
    result = convert(notebook(cells), "application/x-ipynb+json", "a.ipynb")
    assert "```\nxxxxxxxxxx\n… (15 more characters)\n```" in text(result, "text/markdown")


def test_registry_picks_the_notebook_converter_before_json() -> None:
    for mime, name in [
        ("application/json", "a.ipynb"),
        ("application/x-ipynb+json", "a.ipynb"),
        ("application/x-ipynb+json", "noext"),
        ("text/plain", "A.IPYNB"),
    ]:
        converter = find_converter(mime, name)
        assert converter is not None and converter.name == "notebook"
    converter = find_converter("application/json", "a.json")
    assert converter is not None and converter.name == "json"


@pytest.mark.parametrize(
    ("data", "reason", "message"),
    [
        (b'{"cells": [', "corrupt", "invalid JSON"),
        (b"[1, 2]", "corrupt", "not a Jupyter notebook: not a JSON object"),
        (
            b'{"metadata": {}}',
            "corrupt",
            "not a Jupyter notebook: it has no cells (nor worksheets)",
        ),
        (b"\x00\x01\x02", "unsupported", "binary data (NUL bytes) where text was expected"),
    ],
)
def test_bad_notebooks_are_refused_with_a_reason(data: bytes, reason: str, message: str) -> None:
    with pytest.raises(ConversionError) as caught:
        convert(data, "application/x-ipynb+json", "bad.ipynb")
    assert caught.value.reason == reason
    assert caught.value.message.startswith(message)


def test_odd_values_are_skipped_not_crashed_on() -> None:
    cells: list[Any] = [
        42,
        {"cell_type": "unknown", "source": "x"},
        {"cell_type": "code", "source": [1, "ok()"], "outputs": [None, {"output_type": "x"}]},
        {"cell_type": "markdown", "source": None},
    ]
    result = convert(notebook(cells, kernelspec="nope"), "application/x-ipynb+json", "odd.ipynb")
    assert text(result, "text/markdown") == "```python\nok()\n```\n"


def test_too_many_cells_is_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notebook_module, "MAX_CELLS", 3)
    with pytest.raises(ConversionError) as caught:
        convert(notebook(CELLS), "application/x-ipynb+json", "a.ipynb")
    assert (caught.value.reason, caught.value.message) == (
        "too_large",
        "the notebook has 7 cells, over the limit of 3",
    )


@NEEDS_PEERS
def test_markitdown_vector_test_notebook_ipynb() -> None:
    vector = markitdown_vector("test_notebook.ipynb")
    path = TEST_FILES / "test_notebook.ipynb"
    result = convert(path.read_bytes(), vector["mimetype"], path.name)
    markdown = normalized(text(result, "text/markdown"))
    for needed in vector["must_include"]:
        assert normalized(needed) in markdown
    for refused in vector["must_not_include"]:
        assert normalized(refused) not in markdown
    assert result.facts.title == "Test Notebook Title"


def test_json_validates_against_the_document_schema(
    analysis: ConversionResult, schema_validator: jsonschema.protocols.Validator
) -> None:
    schema_validator.validate(json.loads(text(analysis, "application/json")))


def test_a_word_or_two_of_prose_is_no_description() -> None:
    """markitdown's test notebook ends with a cell "End": that is not what it is about."""
    result = convert(
        notebook([markdown_cell("# Study"), code_cell("x = 1"), markdown_cell("End")]),
        "application/x-ipynb+json",
        "s.ipynb",
    )
    assert result.facts.description == "Jupyter notebook (python), 3 cells"
