"""The quality benchmark's measures compute what bench/README.md says they do."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench import bench_quality as bq
from bench.quality_docs import Truth, build_spec_pdf, build_sphinx_html

ROOT = Path(__file__).resolve().parents[1]
QUALITY = [sys.executable, "-m", "bench", "quality"]


def run_quality(*args: str, timeout: float, check: bool = True) -> tuple[int, dict[str, Any]]:
    """``python -m bench quality --json ARGS`` from the checkout: exit code and report."""
    completed = subprocess.run(
        [*QUALITY, "--json", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=check,
    )
    return completed.returncode, json.loads(completed.stdout)


NO_MARKITDOWN = importlib.util.find_spec("markitdown") is None
#: pymupdf4llm is AGPL: never a dependency, so CI runs without it and these tests skip.
NO_PYMUPDF4LLM = importlib.util.find_spec("pymupdf4llm") is None
PYMUPDF4LLM_MISSING = (
    "pymupdf4llm is not installed (AGPL, never a docshelf dependency): pip install pymupdf4llm "
    "(since PyMuPDF 2.0 that package is empty: pip install pymupdf carries it)"
)

MARKDOWN = """\
# 2.1 ASN.1 syntax

Text with a [link](https://example.com/a/) and <https://example.com/b>.

Setext heading
--------------

| Name | Value |
| ---- | ----- |
| **alpha** | 1 |
| beta | 2 |

```xml
  <mime-type type="text/x-diff">
    <glob/>
  </mime-type>
```

- first
  - nested
# not a heading inside text? yes it is
"""


def test_markdown_view_reads_headings_tables_links_code_and_lists() -> None:
    view = bq.markdown_view(MARKDOWN)
    assert view.headings == [
        "2.1 ASN.1 syntax",
        "Setext heading",
        "not a heading inside text? yes it is",
    ]
    assert view.table_rows == [["Name", "Value"], ["**alpha**", "1"], ["beta", "2"]]
    assert view.links == ["https://example.com/a/", "https://example.com/b"]
    assert view.code == ['  <mime-type type="text/x-diff">\n    <glob/>\n  </mime-type>']
    assert view.list_items == [("first", 0), ("nested", 1)]
    assert view.title == "2.1 ASN.1 syntax"


def test_recalls_against_a_known_truth() -> None:
    view = bq.markdown_view(MARKDOWN)
    truth = Truth(
        headings=("ASN.1 syntax", "Setext heading", "Missing", "Missing too"),
        tables=((("Name", "Value"), ("alpha", "1"), ("gamma", "3")),),
        links=("https://example.com/a", "https://example.com/c"),
        code=('<mime-type type="text/x-diff">\n  <glob/>\n</mime-type>\n<other/>',),
        lists=(("first", 0), ("nested", 0)),
        titles=("ASN.1 syntax",),
        text="alpha ≤ beta ≤ gamma",
        forbidden=(("¶", 0), ("Value", 0)),
    )
    figures = bq.measure(truth, view)
    assert figures["headings"] == 0.5  # the section number is ignored
    assert figures["tables"] == 4 / 6  # gamma and 3 are not there
    assert figures["links"] == 0.5  # a trailing slash is ignored
    assert figures["code"] == 3 / 4  # indentation relative to the block kept
    assert figures["lists"] == 0.5  # "nested" is nested, the truth says it is not
    assert figures["title"] == 1.0
    assert figures["symbols"] == 0.0  # ≤ is nowhere in the Markdown
    assert figures["words"] == 2 / 3
    assert figures["leaks"] == 1.0  # "Value" once, ¶ never


def test_symbols_words_and_cells_are_normalized() -> None:
    assert bq.symbols("a \u2212 b ≤ c • ¹ ¶\ufffd Γ") == Counter(
        {"\u2212": 1, "≤": 1, "¹": 1, "¶": 1}
    )
    assert bq.words("infor-\nmation ﬁne") == Counter({"information": 1, "fine": 1})
    assert bq.bag_recall(Counter("aab"), Counter("aaab")) == 0.75
    assert bq.bag_recall(Counter("a"), Counter()) is None
    assert bq.heading_key("3.2. **Tables**¶") == bq.heading_key("tables")
    table = bq.table_recall(((("a", "b"),),), [["a", "b", "c", "d", "e"]])
    assert table == 0.0  # a row of five cells is not a two-cell row


def test_json_view_and_text_view() -> None:
    document = {
        "title": "T",
        "outline": [{"title": "Intro", "level": 1, "page": 1}],
        "pages": [{"number": 1, "text": "Intro\nhello"}],
        "tables": [{"header": ["h"], "rows": [["c"]]}],
        "links": [{"text": "x", "href": "https://x.example"}],
        "code_blocks": [{"language": None, "code": "x = 1"}],
    }
    view = bq.json_view(document)
    assert view.headings == ["Intro"] and view.title == "T"
    assert view.table_rows == [["h"], ["c"]] and view.links == ["https://x.example"]
    assert view.code == ["x = 1"] and view.text == "Intro\nhello"
    text = bq.text_view("Intro\n\nhello")
    assert text.headings == ["Intro", "hello"] and text.links is None


def test_built_documents_are_deterministic_and_measured() -> None:
    first, second = build_spec_pdf(), build_spec_pdf()
    assert first.data == second.data
    result = bq.evaluate(bq.built_sources([build_sphinx_html()])[0], peer=None)
    figures = result.figures["docshelf/markdown"]
    assert figures["headings"] == 1.0 and figures["links"] == 1.0 and figures["code"] == 1.0
    assert "markitdown/markdown" not in result.figures


def test_spec_pdf_truth_matches_what_pdfium_reads() -> None:
    document = build_spec_pdf()
    truth, note = bq.pdf_truth(document.data)
    assert note == ""
    assert list(truth.headings) == list(document.truth.headings)  # the bookmarks
    assert set(truth.links) == set(document.truth.links)  # the URI annotations
    assert bq.bag_recall(bq.words(truth.text), bq.words(document.truth.text)) == 1.0


@pytest.mark.skipif(
    importlib.util.find_spec("markitdown") is None,
    reason='markitdown is not installed: pip install -e ".[bench]"',
)
def test_command_line_on_one_built_document() -> None:
    _, report = run_quality("--files", "built/README.md", timeout=60)
    assert [f["name"] for f in report["files"]] == ["built/README.md"]
    figures = report["files"][0]["figures"]
    assert set(figures) == {
        "docshelf/markdown",
        "docshelf/text",
        "docshelf/json",
        "markitdown/markdown",
    }
    assert figures["docshelf/markdown"]["tables"] == 1.0
    assert {v["measure"] for v in report["verdicts"]} >= {"headings", "tables", "links"}


@pytest.mark.skipif(
    importlib.util.find_spec("markitdown") is None or not bq.DEFAULT_PDF_DIR.is_dir(),
    reason='needs markitdown (pip install -e ".[bench]") and the shared corpus '
    "(DOCSHELF_SHARED or ../shared beside the checkout); .ci/run has both",
)
def test_docshelf_keeps_at_least_what_markitdown_keeps_on_every_file() -> None:
    """Issue #12's aim, held: on every file of the corpus and every built document,
    each measure at least markitdown's (``--strict`` exits 1 on any FAIL). The peer set
    is explicit, so a machine with pymupdf4llm installed runs what CI runs."""
    returncode, report = run_quality("--strict", "--peers", "markitdown", timeout=300, check=False)
    losses = {v["measure"]: v["losses"] for v in report["verdicts"] if not v["passed"]}
    assert returncode == 0 and not losses, losses
    # Where docshelf leads today: a lead lost shows here before it shows as a loss.
    leads = {v["measure"]: set(v["leads"]) for v in report["verdicts"]}
    assert {"GeoTopo-komprimiert.pdf", "built/spec.pdf"} <= leads["links"]
    assert {"pdflatex-outline.pdf", "built/layout.html"} <= leads["headings"]
    assert "built/layout.html" in leads["tables"]


def test_corpus_pdfs_have_outline_and_link_truth() -> None:
    if not bq.DEFAULT_PDF_DIR.is_dir():
        pytest.skip(
            f"no shared corpus at {bq.DEFAULT_PDF_DIR}: set DOCSHELF_SHARED to the shared "
            "folder (or check it out as ../shared beside the repository)"
        )
    notes: list[str] = []
    sources = bq.corpus_sources(bq.DEFAULT_PDF_DIR, notes, ["pdflatex-outline.pdf"])
    assert len(sources) == 1
    assert len(sources[0].truth.headings) == 9 and sources[0].truth.text
    figures = bq.evaluate(sources[0], peer=None).figures
    assert figures["docshelf/json"]["headings"] == 1.0


def _result(name: str, **figures: dict[str, float | None]) -> bq.FileResult:
    return bq.FileResult(
        name, "pdf", figures={column.replace("__", "/"): f for column, f in figures.items()}
    )


def test_verdict_sets_the_bar_at_the_best_of_two_peers() -> None:
    """Highest peer figure for a recall, lowest for leaks; the loss names the peer."""
    results = [
        _result(  # behind pymupdf4llm, ahead of markitdown: a loss to pymupdf4llm
            "a.pdf",
            docshelf__markdown={"headings": 0.5, "leaks": 1.0},
            markitdown__markdown={"headings": 0.0, "leaks": 3.0},
            pymupdf4llm__markdown={"headings": 0.75, "leaks": 0.0},
        ),
        _result(  # ahead of both
            "b.pdf",
            docshelf__markdown={"headings": 1.0, "leaks": 0.0},
            markitdown__markdown={"headings": 0.5, "leaks": 0.0},
            pymupdf4llm__markdown={"headings": 0.25, "leaks": 2.0},
        ),
        _result(  # only markitdown has a figure (pymupdf4llm: n/a, not a PDF)
            "c.html",
            docshelf__markdown={"headings": 0.5, "leaks": 0.0},
            markitdown__markdown={"headings": 1.0, "leaks": None},
        ),
    ]
    by_measure = {v.measure: v for v in bq.verdicts(results, ["markitdown", "pymupdf4llm"])}
    headings, leaks = by_measure["headings"], by_measure["leaks"]
    assert headings.files == 3 and not headings.passed
    assert [(x.file, x.docshelf, x.best, x.peer) for x in headings.losses] == [
        ("a.pdf", 0.5, 0.75, "pymupdf4llm"),
        ("c.html", 0.5, 1.0, "markitdown"),
    ]
    assert headings.losses[0].peers == {"markitdown": 0.0, "pymupdf4llm": 0.75}
    assert headings.leads == ["b.pdf"]
    assert headings.by_peer["markitdown"].losses == ["c.html"]
    assert headings.by_peer["pymupdf4llm"].files == 2
    assert headings.by_peer["pymupdf4llm"].losses == ["a.pdf"]
    assert leaks.files == 2  # c.html has no leak truth
    assert [(x.file, x.best, x.peer) for x in leaks.losses] == [("a.pdf", 0.0, "pymupdf4llm")]
    assert leaks.leads == []  # b.pdf ties markitdown's 0
    # One peer chosen: the bar is that peer's figure alone.
    alone = {v.measure: v for v in bq.verdicts(results, ["markitdown"])}
    assert [x.file for x in alone["headings"].losses] == ["c.html"]
    assert alone["headings"].leads == ["a.pdf", "b.pdf"]
    assert bq.best_peer("words", {"markitdown": 0.9, "pymupdf4llm": 0.9}) == ("markitdown", 0.9)


def test_a_failing_peer_is_that_files_error_and_a_pdf_only_peer_is_na_elsewhere() -> None:
    def broken(source: bq.Source) -> str:
        raise IndexError("range object index out of range")

    peers = [
        bq.PeerTool("pymupdf4llm", broken, frozenset({"application/pdf"})),
        bq.PeerTool("markitdown", lambda source: "# Sphinx\n"),
    ]
    html = bq.evaluate(bq.built_sources([build_sphinx_html()])[0], peers=peers)
    assert "pymupdf4llm/markdown" not in html.figures and "pymupdf4llm" not in html.errors
    assert "markitdown/markdown" in html.figures
    pdf = bq.evaluate(bq.built_sources([build_spec_pdf()])[0], peers=peers)
    assert pdf.errors == {"pymupdf4llm": "IndexError: range object index out of range"}
    assert "pymupdf4llm/markdown" not in pdf.figures and "docshelf/markdown" in pdf.figures


def test_unknown_peer_is_refused() -> None:
    with pytest.raises(SystemExit) as exited:
        bq.main(["--peers", "pandoc", "--files", "built/mixed.md"])
    assert exited.value.code == 2


@pytest.mark.skipif(NO_PYMUPDF4LLM, reason=PYMUPDF4LLM_MISSING)
def test_command_line_with_pymupdf4llm_on_built_documents() -> None:
    # pymupdf4llm's parser prints to stdout: the report must still be JSON alone.
    _, report = run_quality(
        "--peers", "pymupdf4llm", "--files", "built/*.pdf", "*mixed*", timeout=120
    )
    assert set(report["peers"]) == {"pymupdf4llm"}
    files = {f["name"]: f for f in report["files"]}
    assert "pymupdf4llm/markdown" in files["built/spec.pdf"]["figures"]
    assert "pymupdf4llm/markdown" not in files["built/mixed.md"]["figures"]  # PDFs only
    assert "markitdown/markdown" not in files["built/spec.pdf"]["figures"]
    assert "pymupdf4llm/markdown" in report["summary"]["pdf"]
    verdicts = {v["measure"]: v for v in report["verdicts"]}
    assert verdicts["words"]["files"] == 1  # mixed.md has no peer figure
    assert verdicts["words"]["by_peer"]["pymupdf4llm"]["files"] == 1


@pytest.mark.skipif(NO_PYMUPDF4LLM, reason=PYMUPDF4LLM_MISSING)
@pytest.mark.skipif(
    NO_MARKITDOWN or not bq.DEFAULT_PDF_DIR.is_dir(),
    reason='needs markitdown (pip install -e ".[bench]") and the shared corpus',
)
def test_docshelf_keeps_at_least_what_the_best_peer_keeps_on_every_file() -> None:
    """Issue #12's aim against both peers: on every file, each measure at least the
    best of markitdown's and pymupdf4llm's."""
    returncode, report = run_quality(
        "--strict", "--peers", "markitdown,pymupdf4llm", timeout=300, check=False
    )
    assert set(report["peers"]) == {"markitdown", "pymupdf4llm"}
    losses = {v["measure"]: v["losses"] for v in report["verdicts"] if not v["passed"]}
    assert returncode == 0 and not losses, losses
