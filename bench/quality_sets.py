"""The three sets of ``python -m bench quality``, and how each is printed.

(a) ``corpus``: the shared corpus's PDFs and the documents :mod:`bench.quality_docs`
builds (what the bench was tuned on). (b) ``markitdown``: markitdown's test suite
(``peer-suites/markitdown``, MIT), read as data, its truth taken from:

- ``expected_outputs/NAME.md`` for a PDF (the invoice, receipt, booking, scan): its
  text (words), its tables as rows (``tables``) and each row's neighbouring filled
  cells as label/value ``pairs``;
- ``reference-tests/*.py``, parsed (never run, never imported): every list of string
  literals in a test function that opens one PDF is text that PDF holds (words), used
  where the PDF has no expected output (the MasterFormat RFP);
- ``vectors.json``: a file's must strings are text, its ``# …`` strings headings, its
  ``[t](url)`` strings links, its must-not strings leaks.

A file none of these says anything about (a picture, a sound) has no row. (c)
``defects``: :mod:`bench.defect_docs`, one document per defect class of issue 26.

Each set prints, per file, docshelf's three formats beside each peer's Markdown and the
best peer's figure, then one line: "behind the best peer on …" or "never behind".
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.quality_measures import LOWER_IS_BETTER, MEASURES, Truth, markdown_view, plain_inline
from bench.quality_tools import Source

SETS = ("corpus", "markitdown", "defects")
SET_TITLES = {
    "corpus": "(a) the shared corpus and the documents the bench was tuned on",
    "markitdown": "(b) markitdown's test suite (peer-suites/markitdown)",
    "defects": "(c) documents built per defect class of issue 26 (nobody tuned on them)",
}
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)")
_EMAIL_HEADING = "# Email Message"
_PDF_NAME = re.compile(r"^[\w.-]+\.pdf$")


# --------------------------------------------------------- (b) markitdown's suite


def table_pairs(rows: Sequence[Sequence[str]]) -> tuple[tuple[str, str], ...]:
    """Neighbouring filled cells of each row: a label and its value, as the expected
    output sets them ("Insured name | Gabriel Diaz | | Year | 2022" gives two)."""
    pairs = []
    for row in rows:
        cells = [plain_inline(cell).strip() for cell in row]
        pairs += [(a, b) for a, b in itertools.pairwise(cells) if a and b]
    return tuple(pairs)


def test_strings(reference_tests: Path) -> dict[str, list[str]]:
    """PDF name → the string literals markitdown's reference tests expect in it: each
    list of string constants in a test function that names exactly one PDF."""
    found: dict[str, list[str]] = {}
    for module in sorted(reference_tests.glob("test_*.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            constants = [
                node.value
                for node in ast.walk(function)
                if isinstance(node, ast.Constant) and isinstance(node.value, str)
            ]
            pdfs = {c for c in constants if _PDF_NAME.match(c)}
            if len(pdfs) != 1:
                continue
            strings = found.setdefault(pdfs.pop(), [])
            for node in ast.walk(function):
                if isinstance(node, ast.List) and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
                ):
                    strings += [
                        e.value
                        for e in node.elts
                        if isinstance(e, ast.Constant) and isinstance(e.value, str)
                    ]
    return found


@dataclass(frozen=True)
class VectorTruth:
    must: tuple[str, ...]
    must_not: tuple[str, ...]
    url: str | None


def _vectors(suite: Path) -> dict[str, VectorTruth]:
    data = json.loads((suite / "vectors.json").read_text(encoding="utf-8"))
    return {
        v["filename"]: VectorTruth(tuple(v["must_include"]), tuple(v["must_not_include"]), v["url"])
        for v in data["GENERAL_TEST_VECTORS"]
    }


def suite_truth(
    path: Path, expected: Path | None, strings: Sequence[str], vector: VectorTruth | None
) -> tuple[Truth, str]:
    """A suite file's truth from what the suite states about it, and where it came from."""
    text: list[str] = []
    tables: tuple[tuple[tuple[str, ...], ...], ...] = ()
    pairs: tuple[tuple[str, str], ...] = ()
    sources = []
    if expected is not None and expected.read_text(encoding="utf-8").strip():
        markdown = expected.read_text(encoding="utf-8")
        rows = markdown_view(markdown).table_rows or []
        text.append(markdown)
        tables = (tuple(tuple(plain_inline(cell) for cell in row) for row in rows),) if rows else ()
        pairs = table_pairs(rows)
        sources.append(f"expected_outputs/{expected.name}")
    elif strings:
        text += strings
        sources.append("reference-tests strings")
    headings: list[str] = []
    links: list[str] = []
    forbidden: tuple[tuple[str, int], ...] = ()
    if vector is not None:
        for string in vector.must:
            if string.startswith("data:") or string.strip() == _EMAIL_HEADING:
                continue
            text.append(string)
            if string.startswith("#"):
                headings.append(string.lstrip("#").strip())
            links += _LINK.findall(string)
        forbidden = tuple((s, 0) for s in vector.must_not if not s.startswith("data:"))
        sources.append("vectors.json")
    truth = Truth(
        headings=tuple(headings),
        tables=tables,
        pairs=pairs,
        links=tuple(links),
        text="\n".join(text),
        forbidden=forbidden,
    )
    return truth, " + ".join(sources)


def suite_sources(
    suite: Path, paths: Sequence[Path], mime_of: dict[str, str], notes: list[str]
) -> list[Source]:
    """The suite's files that the suite states something about, with that truth."""
    vectors = _vectors(suite)
    strings = test_strings(suite / "reference-tests")
    sources = []
    for path in paths:
        expected = suite / "expected_outputs" / f"{path.stem}.md"
        truth, origin = suite_truth(
            path,
            expected if path.suffix.lower() == ".pdf" and expected.is_file() else None,
            strings.get(path.name, []),
            vectors.get(path.name),
        )
        if not origin or not (truth.text or truth.forbidden):
            notes.append(f"markitdown/{path.name}: the suite states no content for it, no row")
            continue
        vector = vectors.get(path.name)
        sources.append(
            Source(
                f"markitdown/{path.name}",
                mime_of[path.name],
                path.read_bytes(),
                truth,
                f"truth: {origin}",
                url=vector.url if vector else None,
            )
        )
    return sources


# ----------------------------------------------------------------------- printing


@dataclass
class FileLine:
    """docshelf's Markdown against the best peer on one file, measure by measure."""

    behind: list[str] = field(default_factory=list)  # "tables 0.500 < 1.000 (markitdown)"
    ahead: list[str] = field(default_factory=list)
    compared: int = 0


def compare(figures: dict[str, dict[str, float | None]], peers: Sequence[str]) -> FileLine:
    """Where docshelf's Markdown is behind (or ahead of) the best peer's figure."""
    line = FileLine()
    ours_all = figures.get("docshelf/markdown", {})
    for name in MEASURES:
        ours = ours_all.get(name)
        theirs = {
            peer: value
            for peer in peers
            if (value := figures.get(f"{peer}/markdown", {}).get(name)) is not None
        }
        if ours is None or not theirs:
            continue
        line.compared += 1
        best_peer, bar = best_of(name, theirs)
        sign = -1 if name in LOWER_IS_BETTER else 1
        if sign * (ours - bar) < -1e-9:
            line.behind.append(f"{name} {_show(ours, name)} vs {_show(bar, name)} ({best_peer})")
        elif sign * (ours - bar) > 1e-9:
            line.ahead.append(name)
    return line


def best_of(name: str, figures: dict[str, float]) -> tuple[str, float]:
    """The peer setting the bar for a measure: highest figure, lowest for leaks; the
    first in ``figures``' order on a tie."""
    pick = min if name in LOWER_IS_BETTER else max
    bar = pick(figures.values())
    return next(p for p, v in figures.items() if v == bar), bar


def _show(value: float | None, name: str) -> str:
    if value is None:
        return "n/a"
    if name in LOWER_IS_BETTER and value == int(value):
        return f"{value:.0f}"
    return f"{value:.3f}"


def file_table(
    name: str,
    note: str,
    errors: dict[str, str],
    figures: dict[str, dict[str, float | None]],
    peers: Sequence[str],
) -> FileLine:
    """One file: a row per measure, docshelf's formats, each peer, the best peer; then
    the line saying whether docshelf's Markdown is behind the best peer anywhere."""
    print(f"\n## {name}" + (f"  ({note})" if note else ""))
    for tool, error in errors.items():
        print(f"  {tool} failed: {error}")
    columns = [("docshelf", "markdown"), ("docshelf", "text"), ("docshelf", "json")]
    columns += [(peer, "markdown") for peer in peers]
    labels = [f"{tool} {fmt}" if tool == "docshelf" else tool for tool, fmt in columns]
    labels.append("best peer")
    print("| measure   | " + " | ".join(f"{label:>17}" for label in labels) + " |")
    print("|-----------|" + "|".join("-" * 18 + ":" for _ in labels) + "|")
    for measure in MEASURES:
        cells = [
            _show((figures.get(f"{tool}/{fmt}") or {}).get(measure), measure)
            for tool, fmt in columns
        ]
        theirs = {
            peer: value
            for peer in peers
            if (value := (figures.get(f"{peer}/markdown") or {}).get(measure)) is not None
        }
        if theirs:
            peer, bar = best_of(measure, theirs)
            cells.append(f"{_show(bar, measure)} {peer}")
        else:
            cells.append("n/a")
        if all(cell == "n/a" for cell in cells):
            continue
        print(f"| {measure:<9} | " + " | ".join(f"{cell:>17}" for cell in cells) + " |")
    line = compare(figures, peers)
    if not line.compared:
        print("-> no peer figure to compare with")
    elif line.behind:
        print("-> docshelf BEHIND the best peer on: " + "; ".join(line.behind))
    else:
        ahead = f" (ahead on {', '.join(line.ahead)})" if line.ahead else ""
        print(f"-> docshelf never behind the best peer{ahead}")
    return line
