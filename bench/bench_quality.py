"""Conversion quality: docshelf's representations against its peers', file by file.

Inputs: every readable PDF of the shared corpus (``$DOCSHELF_SHARED/corpus/pdf``)
and the documents :mod:`bench.quality_docs` builds (PDF, HTML, DOCX, Markdown),
each of which knows its truth. docshelf is measured in each of its formats
(Markdown, text, JSON). The peers give Markdown only, compared with our Markdown;
their text and JSON figures are n/a:

- markitdown (MIT; ``pip install -e '.[bench]'``): every input.
- pymupdf4llm (PDFs only; n/a for other inputs): optional, measured only when the
  user has installed it, found with importlib. It is AGPL-3.0 (as PyMuPDF, which it
  needs), so docshelf compares against it and never depends on it: it is in no
  extra of ``pyproject.toml``. ``pip install pymupdf4llm`` adds it; since PyMuPDF
  2.0 that package is an empty shim and ``pip install pymupdf`` carries the code
  (``pip install 'pymupdf4llm<2'`` installs the separate 1.x package). Without it
  its column is absent and a note says how to add it.

A peer that fails on a file is recorded as that peer's error for that file
(``errors``); the run goes on.

Measures: :mod:`bench.quality_measures` (its docstring defines each).

The verdict per measure (Markdown, where docshelf and at least one peer have
figures): the bar on each file is the best peer figure (the highest; the lowest for
leaks). PASS when docshelf's figure reaches the bar on every file, else FAIL with
the files, the gaps and the peer that set each bar. It is a report: the exit code is
0 unless ``--strict``. ``--peers markitdown,pymupdf4llm`` chooses the peers (default:
every installed one), ``--no-peer`` measures docshelf alone.

Run: ``python -m bench quality`` (``--help`` for the options). See ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import fnmatch
import io
import json
import logging
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import TYPE_CHECKING, Any

from pypdf import PasswordType, PdfReader

from bench.bench_convert import pdfium_page_texts
from bench.defect_docs import OCR_DOCUMENTS, build_defects
from bench.quality_docs import BuiltDocument, build_all
from bench.quality_measures import (
    LOWER_IS_BETTER,
    MEASURES,
    Truth,
    markdown_view,
    measure,
)
from bench.quality_sets import SET_TITLES, SETS, file_table, suite_sources
from bench.quality_sets import best_of as best_peer
from bench.quality_tools import (
    PEER_NAMES,
    Peer,
    PeerTool,
    Source,
    docshelf_views,
    load_peers,
)
from bench.shared import CORPUS_PDF
from docshelf.converters import ConversionError
from docshelf.converters.detect import HEAD_BYTES, detect_mime

if TYPE_CHECKING:
    from bench.markitdown_suite import SuiteReport

DEFAULT_PDF_DIR = CORPUS_PDF

FORMATS = ("markdown", "text", "json")
#: docshelf's (tool, format) columns of the per-file table; each peer adds (peer, "markdown").
DOCSHELF_COLUMNS = (
    ("docshelf", "markdown"),
    ("docshelf", "text"),
    ("docshelf", "json"),
)
#: Kept for callers of the one-peer bench: docshelf's columns and markitdown's.
COLUMNS = (*DOCSHELF_COLUMNS, ("markitdown", "markdown"))


def columns_for(peers: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """The per-file table's columns: docshelf's formats, then each peer's Markdown."""
    return (*DOCSHELF_COLUMNS, *((name, "markdown") for name in peers))


# ------------------------------------------------------------------ the inputs


def pdfium_text(data: bytes) -> str:
    """PDFium's raw text of every page, as the conversion benchmark reads it."""
    return "\n".join(pdfium_page_texts(Path("truth.pdf"), data))


def pdf_truth(data: bytes) -> tuple[Truth, str]:
    """Outline titles and URI links (pypdf), text (PDFium) of a corpus PDF, and a note."""
    notes = []
    reader = PdfReader(io.BytesIO(data), strict=False)
    headings: list[str] = []
    links: list[str] = []
    try:
        stack: list[Any] = [reader.outline]
        flat: list[Any] = []
        while stack:  # depth first, document order
            item = stack.pop(0)
            if isinstance(item, list):
                stack[:0] = item
            else:
                flat.append(item)
        headings = [str(item.title) for item in flat if getattr(item, "title", None)]
    except Exception as exc:
        notes.append(f"outline unreadable ({type(exc).__name__})")
    try:
        for page in reader.pages:
            for annotation in page.get("/Annots") or []:
                annotation = annotation.get_object()
                action = annotation.get("/A")
                if annotation.get("/Subtype") == "/Link" and action is not None:
                    uri = action.get_object().get("/URI")
                    if uri:
                        links.append(str(uri))
    except Exception as exc:
        notes.append(f"annotations unreadable ({type(exc).__name__})")
    try:
        text = pdfium_text(data)
    except Exception as exc:
        text = ""
        notes.append(f"PDFium cannot open it ({type(exc).__name__}): no word/symbol truth")
    truth = Truth(
        headings=tuple(headings), links=tuple(links), text=text, forbidden=(("\ufffd", 0),)
    )
    return truth, "; ".join(notes)


def corpus_sources(
    pdf_dir: Path, notes: list[str], patterns: Sequence[str] | None = None
) -> list[Source]:
    sources = []
    for path in sorted(pdf_dir.glob("*.pdf")):
        if patterns and not matches(path.name, patterns):
            continue
        data = path.read_bytes()
        try:
            reader = PdfReader(io.BytesIO(data), strict=False)
            if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
                notes.append(f"skipped {path.name}: encrypted")
                continue
        except Exception as exc:
            notes.append(f"{path.name}: pypdf cannot open it ({type(exc).__name__})")
        truth, note = pdf_truth(data)
        sources.append(Source(path.name, "application/pdf", data, truth, note))
    return sources


def built_sources(
    documents: Iterable[BuiltDocument], ocr: frozenset[str] = frozenset()
) -> list[Source]:
    """Sources of built documents; those named in ``ocr`` are read with OCR allowed."""
    return [Source(d.name, d.mime_type, d.data, d.truth, ocr=d.name in ocr) for d in documents]


# ----------------------------------------------------------------------- report

Figures = dict[str, float | None]


@dataclass
class FileResult:
    name: str
    kind: str  # the source format: pdf, html, docx, md
    note: str = ""
    figures: dict[str, Figures] = field(default_factory=dict)  # "docshelf/markdown" -> measures
    errors: dict[str, str] = field(default_factory=dict)


def evaluate(
    source: Source, peer: Peer | None = None, peers: Sequence[PeerTool] = ()
) -> FileResult:
    """docshelf's figures for a source, and each peer's that takes it. ``peer`` alone
    is markitdown (the one-peer call)."""
    result = FileResult(source.name, Path(source.name).suffix.lstrip(".").lower(), source.note)
    try:
        for fmt, view in docshelf_views(source).items():
            result.figures[f"docshelf/{fmt}"] = measure(source.truth, view)
    except ConversionError as exc:
        result.errors["docshelf"] = str(exc)
    tools = [*([PeerTool("markitdown", peer)] if peer is not None else []), *peers]
    for tool in tools:
        if not tool.takes(source):
            continue  # n/a: no column figures
        try:
            result.figures[f"{tool.name}/markdown"] = measure(
                source.truth, markdown_view(tool.convert(source))
            )
        except Exception as exc:  # a failing file is reported, not fatal
            result.errors[tool.name] = f"{type(exc).__name__}: {exc}"[:120]
    return result


def show(value: float | None, measure_name: str) -> str:
    if value is None:
        return "n/a"
    if measure_name in LOWER_IS_BETTER and value == int(value):
        return f"{value:.0f}"
    return f"{value:.3f}"


@dataclass
class Loss:
    """A file where docshelf's Markdown is behind the bar: the best peer figure."""

    file: str
    docshelf: float
    best: float
    peer: str  # the peer that set the bar (the first in peer order, on a tie)
    peers: dict[str, float]  # every peer's figure on that file


@dataclass
class PeerTally:
    """docshelf's Markdown against one peer alone, for one measure."""

    files: int = 0
    losses: list[str] = field(default_factory=list)
    leads: list[str] = field(default_factory=list)


@dataclass
class Verdict:
    measure: str
    files: int  # files where docshelf and at least one peer have a figure
    losses: list[Loss]
    leads: list[str]  # files where docshelf is ahead of the best peer
    by_peer: dict[str, PeerTally] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.losses


def _peers_in(results: Sequence[FileResult]) -> list[str]:
    seen = {column.split("/")[0] for r in results for column in r.figures}
    return [*(p for p in PEER_NAMES if p in seen), *sorted(seen - {"docshelf", *PEER_NAMES})]


def verdicts(results: Sequence[FileResult], peers: Sequence[str] | None = None) -> list[Verdict]:
    """Per measure: the files where docshelf's Markdown is behind (and ahead of) the best
    peer's Markdown on that file; ``peers`` defaults to those with figures."""
    peer_names = list(peers) if peers is not None else _peers_in(results)
    out = []
    sign = {name: -1 if name in LOWER_IS_BETTER else 1 for name in MEASURES}
    for name in MEASURES:
        losses: list[Loss] = []
        leads: list[str] = []
        by_peer = {peer: PeerTally() for peer in peer_names}
        files = 0
        for result in results:
            ours = result.figures.get("docshelf/markdown", {}).get(name)
            theirs = {
                peer: value
                for peer in peer_names
                if (value := result.figures.get(f"{peer}/markdown", {}).get(name)) is not None
            }
            if ours is None or not theirs:
                continue
            files += 1
            for peer, value in theirs.items():
                tally = by_peer[peer]
                tally.files += 1
                if sign[name] * (ours - value) < -1e-9:
                    tally.losses.append(result.name)
                elif sign[name] * (ours - value) > 1e-9:
                    tally.leads.append(result.name)
            peer, bar = best_peer(name, theirs)
            if sign[name] * (ours - bar) < -1e-9:
                losses.append(Loss(result.name, ours, bar, peer, theirs))
            elif sign[name] * (ours - bar) > 1e-9:
                leads.append(result.name)
        if files:
            out.append(Verdict(name, files, losses, leads, by_peer))
    return out


def summary(
    results: Sequence[FileResult], columns: Sequence[tuple[str, str]] | None = None
) -> dict[str, dict[str, dict[str, float]]]:
    """Means per source kind and column: {kind: {"docshelf/markdown": {measure: mean}}}.
    A peer's means are over the files it has a figure for (pymupdf4llm: PDFs)."""
    table: dict[str, dict[str, dict[str, float]]] = {}
    kinds = sorted({r.kind for r in results})
    if columns is None:
        columns = columns_for(_peers_in(results))
    for kind in [*kinds, "all"]:
        chosen = [r for r in results if kind in ("all", r.kind)]
        for tool, fmt in columns:
            column = f"{tool}/{fmt}"
            means = {}
            for name in MEASURES:
                values = [
                    v for r in chosen if (v := r.figures.get(column, {}).get(name)) is not None
                ]
                if values:
                    means[name] = mean(values)
            if means:
                table.setdefault(kind, {})[column] = means
    return table


def print_summary(
    results: Sequence[FileResult],
    verdict_list: Sequence[Verdict],
    peers: Sequence[str] | None = None,
) -> None:
    peer_names = list(peers) if peers is not None else _peers_in(results)
    print("\n# Summary (means over the files with a figure)\n")
    for kind, columns in summary(results, columns_for(peer_names)).items():
        for column, means in columns.items():
            figures = ", ".join(f"{name} {show(value, name)}" for name, value in means.items())
            print(f"{kind:<5} {column:<20} {figures}")
    against = (
        f"the best peer Markdown ({', '.join(peer_names)})"
        if len(peer_names) > 1
        else f"{''.join(peer_names) or 'peer'} Markdown"
    )
    print(f"\n# docshelf Markdown vs {against}, every file\n")
    if not verdict_list:
        print("no peer figures (no peer installed or chosen)")
    for verdict in verdict_list:
        state = "PASS" if verdict.passed else "FAIL"
        line = f"{verdict.measure:<9} {state} on {verdict.files} files"
        if verdict.leads:
            line += f"; docshelf ahead on {len(verdict.leads)}"
        if len(peer_names) > 1:
            line += "; " + ", ".join(
                f"vs {peer} {len(t.losses)} behind/{len(t.leads)} ahead of {t.files}"
                for peer, t in verdict.by_peer.items()
                if t.files
            )
        print(line)
        for loss in verdict.losses:
            others = ", ".join(
                f"{peer} {show(value, verdict.measure)}" for peer, value in loss.peers.items()
            )
            print(
                f"    behind on {loss.file}: {show(loss.docshelf, verdict.measure)} vs "
                f"{show(loss.best, verdict.measure)} ({loss.docshelf - loss.best:+.3f}), "
                f"bar set by {loss.peer} ({others})"
            )


def matches(name: str, patterns: Sequence[str]) -> bool:
    """Whether ``name`` matches a glob, or holds a substring, of ``patterns``."""
    return any(
        fnmatch.fnmatch(name, p) or fnmatch.fnmatch(Path(name).name, p) or p in name
        for p in patterns
    )


def select(
    sources: Sequence[Source],
    patterns: Sequence[str] | None,
    exclude: Sequence[str] | None = None,
) -> list[Source]:
    """The sources ``patterns`` name (all without), less those ``exclude`` names."""
    return [
        s
        for s in sources
        if (not patterns or matches(s.name, patterns))
        and not (exclude and matches(s.name, exclude))
    ]


def peer_list(value: str) -> list[str]:
    """``--peers a,b``: known peer names, in the order given."""
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in PEER_NAMES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown peer {', '.join(unknown) or '(none)'}: choose from {', '.join(PEER_NAMES)}"
        )
    return list(dict.fromkeys(names))


def loss_json(loss: Loss) -> dict[str, Any]:
    """A loss as JSON: the file, docshelf's figure, the bar, the peer that set it, and
    each peer's figure under its name (so ``markitdown`` stays where it was)."""
    return {
        "file": loss.file,
        "docshelf": loss.docshelf,
        "best": loss.best,
        "peer": loss.peer,
        **loss.peers,
    }


def set_list(value: str) -> list[str]:
    """``--sets a,b``: known set names."""
    names = [name.strip() for name in value.split(",") if name.strip()]
    if not names or any(name not in SETS for name in names):
        raise argparse.ArgumentTypeError(f"choose sets from {', '.join(SETS)}")
    return names


def set_sources(
    name: str, pdf_dir: Path, patterns: Sequence[str] | None, notes: list[str]
) -> list[Source]:
    """The inputs of one set (:mod:`bench.quality_sets`), before ``--files``/``--exclude``."""
    if name == "defects":
        return built_sources(build_defects(notes), ocr=OCR_DOCUMENTS)
    if name == "markitdown":
        from bench import markitdown_suite as suite

        if not (suite.SUITE_DIR / "vectors.json").is_file():
            return []  # markitdown_suite() notes it
        paths = suite.suite_files(suite.SUITE_DIR, None)
        mime_of = {p.name: detect_mime(p.read_bytes()[:HEAD_BYTES], p.name) for p in paths}
        return suite_sources(suite.SUITE_DIR, paths, mime_of, notes)
    corpus: list[Source] = []
    if pdf_dir.is_dir():
        corpus = corpus_sources(pdf_dir, notes, patterns)
    else:
        notes.append(f"no corpus at {pdf_dir} (set DOCSHELF_SHARED): built documents only")
    return [*corpus, *built_sources(build_all())]


def set_json(
    results: Sequence[FileResult], verdict_list: Sequence[Verdict], peer_names: Sequence[str]
) -> dict[str, Any]:
    """One set's files, means and verdicts, as the JSON report has them."""
    return {
        "files": [
            {
                "name": r.name,
                "kind": r.kind,
                "note": r.note,
                "errors": r.errors,
                "figures": r.figures,
            }
            for r in results
        ],
        "summary": summary(results, columns_for(peer_names)),
        "verdicts": [
            {
                "measure": v.measure,
                "passed": v.passed,
                "files": v.files,
                "losses": [loss_json(loss) for loss in v.losses],
                "leads": v.leads,
                "by_peer": {
                    peer: {"files": t.files, "losses": t.losses, "leads": t.leads}
                    for peer, t in v.by_peer.items()
                },
            }
            for v in verdict_list
        ],
    }


def markitdown_suite(
    patterns: Sequence[str] | None,
    exclude: Sequence[str] | None,
    with_markitdown: bool,
    notes: list[str],
) -> SuiteReport | None:
    """markitdown's test suite on the selected ``markitdown/*`` files (None when none is
    selected or the suite is absent, with a note): :mod:`bench.markitdown_suite`.
    Imported here, not above: that module builds on this one's measures."""
    from bench import markitdown_suite as suite

    if not (suite.SUITE_DIR / "vectors.json").is_file():
        if not patterns or any(p.startswith(suite.PREFIX) for p in patterns):
            notes.append(
                f"no markitdown suite at {suite.SUITE_DIR} (set DOCSHELF_SHARED; .ci/run has it)"
            )
        return None
    paths = suite.suite_files(suite.SUITE_DIR, patterns, exclude)
    if not paths:
        return None
    peer = suite.Markitdown.load() if with_markitdown else None
    return suite.run(suite.SUITE_DIR, paths, peer)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--pdf-dir", type=Path, default=DEFAULT_PDF_DIR)
    parser.add_argument(
        "--files",
        nargs="+",
        metavar="PATTERN",
        help="only files whose name matches (glob or substring; built ones are built/NAME)",
    )
    parser.add_argument(
        "--exclude",
        nargs="+",
        metavar="PATTERN",
        help="leave out files whose name matches (e.g. 'markitdown/*': markitdown's suite)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    peer_choice = parser.add_mutually_exclusive_group()
    peer_choice.add_argument("--no-peer", action="store_true", help="docshelf alone, no peer")
    peer_choice.add_argument(
        "--peers",
        type=peer_list,
        metavar="NAME,NAME",
        help=f"the peers to compare with ({','.join(PEER_NAMES)}; default: every installed "
        "one); a peer named here must be installed",
    )
    parser.add_argument(
        "--sets",
        type=set_list,
        default=list(SETS),
        metavar="NAME,NAME",
        help=f"the sets to run ({','.join(SETS)}; default: all three)",
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when a measure FAILs")
    args = parser.parse_args(argv)
    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    logging.getLogger("pypdf").setLevel(logging.ERROR)

    notes: list[str] = []
    peers: list[PeerTool] = []
    if not args.no_peer:
        peers, missing = load_peers(args.peers or PEER_NAMES)
        if args.peers and missing:
            parser.error(
                "; ".join(f"{name} is not importable ({how})" for name, how in missing.items())
            )
        for name, how in missing.items():
            notes.append(f"{name} is not importable ({how}): no {name} column")
    peer_names = [peer.name for peer in peers]
    chosen = [name for name in SETS if name in args.sets]
    sets = {
        name: select(set_sources(name, args.pdf_dir, args.files, notes), args.files, args.exclude)
        for name in chosen
    }
    results = {name: [evaluate(s, peers=peers) for s in sources] for name, sources in sets.items()}
    judged = {name: verdicts(found, peer_names) for name, found in results.items() if found}
    suite = None
    if "markitdown" in chosen:
        suite = markitdown_suite(args.files, args.exclude, "markitdown" in peer_names, notes)
    corpus = results.get("corpus", [])
    if args.json:
        print(
            json.dumps(
                {
                    "notes": notes,
                    "peers": {peer.name: peer.version for peer in peers},
                    **set_json(corpus, judged.get("corpus", []), peer_names),
                    "sets": {
                        name: set_json(found, judged.get(name, []), peer_names)
                        for name, found in results.items()
                    },
                    "markitdown_suite": suite.as_json() if suite else None,
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        for note in notes:
            print(f"note: {note}")
        if peers:
            print("peers: " + ", ".join(f"{p.name} {p.version}".strip() for p in peers))
        for name, found in results.items():
            print(f"\n# Set {SET_TITLES[name]}: {len(found)} files")
            behind = [
                r.name
                for r in found
                if file_table(r.name, r.note, r.errors, r.figures, peer_names).behind
            ]
            if found:
                print_summary(found, judged[name], peer_names)
                print(
                    f"\nset {name}: docshelf behind the best peer on {len(behind)} of "
                    f"{len(found)} files" + (f": {', '.join(behind)}" if behind else "")
                )
            if name == "markitdown" and suite:
                suite.show()
    verdict_list = [v for found in judged.values() for v in found]
    failed = any(not v.passed for v in verdict_list) or bool(suite and not suite.passed)
    return 1 if args.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
