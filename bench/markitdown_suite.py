"""markitdown's own test suite, run on docshelf and on markitdown side by side (issue 25).

The suite is ``$DOCSHELF_SHARED/peer-suites/markitdown`` (MIT): markitdown's test files,
``vectors.json`` (its ``GENERAL_TEST_VECTORS``: per file, strings the Markdown must
include and must not include), ``expected_outputs/`` and three of its test modules,
read as statements of expected results. Its files are named ``markitdown/FILE`` here,
so ``--files 'markitdown/*'`` selects them.

How each tool reads a file:

- docshelf: :func:`docshelf.converters.registry.convert` with the MIME type docshelf's
  own detection gives (``detect_mime`` on the first bytes and the name), never the
  vector's: the type a shelf would see.
- markitdown: ``MarkItDown(enable_plugins=False).convert(path, url=vector.url)``: the
  vector's URL too, as markitdown's suite passes it (it picks markitdown's Wikipedia and
  Bing converters); docshelf gets the file alone.

Strings are checked after a normalisation of formatting only, applied alike to both
outputs and to the strings (so a string is judged by its content, not its spelling):

1. a backslash before ASCII punctuation is dropped (``test\\_mskanji``): a Markdown
   escape; markitdown's own ``validate_strings`` drops every backslash;
2. markitdown's invented ``# Email Message`` heading line is removed (its must string
   then asks for nothing: it is a heading markitdown writes over every mail, not a fact
   of the mail; docshelf's heading is the subject);
3. a table separator row (``|---|---|`` or ``| :--- | --- |``) is spelled ``| --- | --- |``;
4. a list marker ``*``, ``+`` or ``-`` at the start of a line is spelled ``-``;
5. a link's title attribute is dropped: ``[t](url "title")`` is ``[t](url)``;
6. whitespace runs (newlines included) are one space.

And one rule for images: a must string that is markitdown's truncated data URI
placeholder (``data:image/png;base64...``) is satisfied by any Markdown image
reference ``![…](…)``, since docshelf never inlines base64 (images are references).

Words recall: ``\\w+`` words of the visible text (link and image targets, HTML comments,
emphasis and escapes left out) against a reference: ``expected_outputs/NAME.md`` where
the suite has one (the PDFs), as a bag; otherwise markitdown's own output for that
file, since nothing better exists, as distinct words (:class:`Reference` says why).
markitdown's recall is then 1 by construction, and docshelf's says whether it keeps no
less text than markitdown, even where docshelf has structure markitdown lacks.

Extra checks, from markitdown's ``test_module_misc.py``: the exiftool facts of
``test.jpg`` and ``test.mp3`` (value found in the Markdown; the key's spelling is free,
``1615×1967`` and ISO 8601 ``2024-03-14T22:10:00`` accepted); ``equations.docx``
(inline ``$m=1$`` and a block ``$$…$$``); ``rlink.docx`` (an external file the
document links to is never read: the docx is rewritten to point at a file of ours that
exists, in a private folder rather than markitdown's shared ``/tmp/test_rlink.txt``; an
audit hook sees that it is never opened, and its text and base64 must not appear);
``random.bin`` is unsupported (a :class:`ConversionError` with reason ``unsupported``);
every other file converts or is reported unsupported with a reason, never a crash.

Not measured: markitdown's ``DATA_URI_TEST_VECTORS`` (images kept as data URIs, which
docshelf never writes), ``test_with_comment.docx``'s comments (markitdown keeps them only
with a ``style_map`` asked for; docshelf has no such option, so the file is measured as
converted with its words), and ``reference-tests/test_pdf_tables.py``'s cell-by-cell
table expectations (the PDFs' words are recalled against ``expected_outputs`` instead).

Verdict: PASS when docshelf passes every must string, shows no must-not string, is at
or above markitdown on every file (strings passed, which passing every string implies;
words recall at least markitdown's less :data:`WORDS_TOLERANCE`), converts every file
or says why not (never a crash), and passes every extra check; else FAIL with each gap.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import re
import shutil
import sys
import tempfile
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.bench_quality import matches
from bench.quality_measures import bag_recall, plain_inline, words
from bench.shared import SHARED
from docshelf.converters import ConversionError, registry
from docshelf.converters.detect import HEAD_BYTES, detect_mime

SUITE_DIR = SHARED / "peer-suites" / "markitdown"
PREFIX = "markitdown/"
#: docshelf's words recall may be this much below markitdown's on a file (absolute):
#: a word or two of a few hundred, such as a heading the tools spell differently.
WORDS_TOLERANCE = 0.02

_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_EMAIL_HEADING = re.compile(r"^# Email Message[ \t]*$", re.MULTILINE)
_SEPARATOR_ROW = re.compile(r"^[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+(?:[ \t]*:?-{3,}:?[ \t]*)?$")
_LIST_MARKER = re.compile(r"^([ \t]*)[*+-][ \t]+", re.MULTILINE)
_LINK_TITLE = re.compile(r"\]\((\S+?)[ \t]+\"[^\"\n]*\"\)")
_IMAGE_PLACEHOLDER = re.compile(r"^data:image/[\w.+-]+;base64\.\.\.$")
#: A link or image target after its text: ``](url)``, ``](/wiki/A_(b) "title")``.
_TARGET = re.compile(r"\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"\n]*\")?\)")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_IMAGE_REFERENCE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")


# ------------------------------------------------------------------ normalising


def _separator(row: str) -> str:
    cells = row.strip().strip("|").split("|")
    return "| " + " | ".join("---" for _ in cells) + " |"


def normalise(markdown: str) -> str:
    """The Markdown with formatting-only differences removed (module docstring, 1-6)."""
    text = _ESCAPE.sub(r"\1", markdown)
    text = _EMAIL_HEADING.sub("", text)
    lines = [_separator(line) if _SEPARATOR_ROW.match(line) else line for line in text.split("\n")]
    text = _LIST_MARKER.sub(r"\1- ", "\n".join(lines))
    text = _LINK_TITLE.sub(r"](\1)", text)
    return " ".join(text.split())


def found(string: str, normalised: str) -> bool:
    """Whether a must (or must-not) string is in a normalised output: by its content,
    and an image placeholder by any image reference."""
    if _IMAGE_PLACEHOLDER.match(string):
        return _IMAGE_REFERENCE.search(normalised) is not None
    return normalise(string) in normalised


def visible_words(markdown: str) -> Counter[str]:
    """The words a reader sees in the rendered Markdown: link and image targets (a URL's
    words are not text a person reads; ``[[1]](#cite_note-1)`` too), HTML comments
    (markitdown's ``<!-- Slide number: 1 -->``), emphasis, escapes and markitdown's
    invented heading left out."""
    text = _COMMENT.sub(" ", _EMAIL_HEADING.sub("", markdown))
    return words(plain_inline(_TARGET.sub("]", text)))


# ---------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Vector:
    """One file of ``GENERAL_TEST_VECTORS``."""

    filename: str
    must_include: tuple[str, ...]
    must_not_include: tuple[str, ...]
    url: str | None = None


def load_vectors(suite: Path) -> list[Vector]:
    data = json.loads((suite / "vectors.json").read_text(encoding="utf-8"))
    return [
        Vector(v["filename"], tuple(v["must_include"]), tuple(v["must_not_include"]), v["url"])
        for v in data["GENERAL_TEST_VECTORS"]
    ]


# ----------------------------------------------------------------------- tools


@dataclass
class Output:
    """A tool's Markdown for a file, or why there is none."""

    markdown: str | None = None
    unsupported: str | None = None  # the reason given
    error: str | None = None  # a failure or a crash: "Type: message"

    @property
    def state(self) -> str:
        if self.markdown is not None:
            return "converted"
        return "unsupported" if self.unsupported is not None else "error"

    @property
    def reason(self) -> str:
        return self.unsupported or self.error or ""


def docshelf_output(data: bytes, filename: str) -> Output:
    """docshelf's Markdown, with the MIME type docshelf's own detection gives."""
    mime_type = detect_mime(data[:HEAD_BYTES], filename)
    try:
        result = registry.convert(data, mime_type, filename)
    except ConversionError as exc:
        if exc.reason == "unsupported":
            return Output(unsupported=exc.message)
        return Output(error=f"ConversionError {exc.reason}: {exc.message}")
    except Exception as exc:  # a crash is a finding, not the end of the run
        return Output(error=f"crash {type(exc).__name__}: {exc}"[:200])
    markdown = result.get("text/markdown")
    if markdown is None:
        return Output(error=f"no text/markdown for {mime_type}")
    return Output(markdown.data.decode("utf-8"))


class Markitdown:
    """markitdown, as its own suite calls it: a path, and the vector's URL if any."""

    def __init__(self) -> None:
        from markitdown import MarkItDown, UnsupportedFormatException

        self._engine = MarkItDown(enable_plugins=False)
        self._unsupported = UnsupportedFormatException

    @staticmethod
    def load() -> Markitdown | None:
        """markitdown, or None when it is not installed (its columns are then n/a)."""
        try:
            return Markitdown()
        except ImportError:
            return None

    def convert(self, path: Path | io.BytesIO, **options: Any) -> Output:
        try:
            source = path if isinstance(path, io.BytesIO) else str(path)
            return Output(self._engine.convert(source, **options).markdown)
        except self._unsupported as exc:
            return Output(unsupported=str(exc).split(".")[0])
        except Exception as exc:
            return Output(error=f"{type(exc).__name__}: {exc}"[:200])


# -------------------------------------------------------------------- scoring


@dataclass
class Score:
    """One tool on one file: must strings found, must-not strings present, words recall."""

    state: str
    reason: str = ""
    passed: int = 0
    exact: int = 0  # found as they are, without the normalisation
    total: int = 0
    missing: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    words: float | None = None


def score(output: Output, vector: Vector | None, reference: Reference | None) -> Score:
    """Strings and words recall of one output; an output that is not Markdown finds none."""
    must = vector.must_include if vector else ()
    result = Score(output.state, output.reason, total=len(must))
    if output.markdown is None:
        result.missing = list(must)
        return result
    text = normalise(output.markdown)
    for string in must:
        if found(string, text):
            result.passed += 1
            result.exact += string in output.markdown
        else:
            result.missing.append(string)
    result.leaks = [s for s in (vector.must_not_include if vector else ()) if found(s, text)]
    if reference is not None:
        result.words = reference.recall(visible_words(output.markdown))
    return result


@dataclass
class FileRow:
    """A file of the suite: docshelf's score and markitdown's (None: not installed)."""

    name: str
    vector: bool
    reference: str | None  # "expected_outputs/NAME.md (bag)", "markitdown (distinct)", None
    docshelf: Score
    markitdown: Score | None


@dataclass(frozen=True)
class Reference:
    """The words a file's output should hold, and how they are counted.

    Against the suite's expected output, as a bag (each occurrence counts: the bench's
    ``words`` measure). Against markitdown's own output, distinct words: every word
    markitdown shows, docshelf shows at least once. A peer's output is its layout, not
    the document's word counts: it repeats (an RSS item's summary before its full
    content, ``<!-- Slide number -->``), and a bag would ask docshelf to repeat too."""

    name: str
    words: Counter[str]
    distinct: bool = False

    @property
    def label(self) -> str:
        return f"{self.name} ({'distinct' if self.distinct else 'bag'})"

    def recall(self, found: Counter[str]) -> float | None:
        if self.distinct:
            return bag_recall(Counter(set(found)), Counter(set(self.words)))
        return bag_recall(found, self.words)


def reference_for(
    path: Path, theirs: Output | None, peer: Markitdown | None = None, **options: Any
) -> Reference | None:
    """The suite's expected output, else markitdown's own output, else none.

    ``expected_outputs/`` holds PDFs' outputs only (``test.md`` is ``test.pdf``'s, as
    markitdown's test_pdf_tables.py pairs them), so only a PDF looks there. A web page
    (or an archive of them) is measured against markitdown's output of its article:
    the page less its navigation landmarks (:mod:`bench.landmarks`)."""
    expected = path.parent.parent / "expected_outputs" / f"{path.stem}.md"
    suffix = path.suffix.lower()
    if suffix == ".pdf" and expected.is_file():
        return Reference(f"expected_outputs/{expected.name}", visible_words(expected.read_text()))
    if peer is not None and suffix in (".html", ".htm", ".zip"):
        from bench.landmarks import without_landmarks, zip_without_landmarks

        strip = zip_without_landmarks if suffix == ".zip" else without_landmarks
        article = peer.convert(io.BytesIO(strip(path.read_bytes())), **options)
        if article.markdown and article.markdown.strip():
            words = visible_words(article.markdown)
            return Reference("markitdown, navigation landmarks removed", words, distinct=True)
    if theirs is not None and theirs.markdown and theirs.markdown.strip():
        return Reference("markitdown", visible_words(theirs.markdown), distinct=True)
    return None


def evaluate_file(path: Path, vector: Vector | None, peer: Markitdown | None) -> FileRow:
    ours = docshelf_output(path.read_bytes(), path.name)
    url = vector.url if vector else None
    theirs = peer.convert(path, url=url) if peer else None
    reference = reference_for(path, theirs, peer, url=url)
    return FileRow(
        path.name,
        vector is not None,
        reference.label if reference else None,
        score(ours, vector, reference),
        score(theirs, vector, reference) if theirs is not None else None,
    )


# ---------------------------------------------------------------------- checks

#: test_module_misc.py's exiftool facts: key → the spellings accepted for the value
#: (docshelf writes a Property/Value table, sizes with ×, dates in ISO 8601).
JPG_FACTS: dict[str, tuple[str, ...]] = {
    "Author": ("AutoGen Authors",),
    "Title": ("AutoGen: Enabling Next-Gen LLM Applications via Multi-Agent Conversation",),
    "Description": ("AutoGen enables diverse LLM-based applications",),
    "ImageSize": ("1615x1967", "1615×1967"),
    "DateTimeOriginal": ("2024:03:14 22:10:00", "2024-03-14T22:10:00"),
}
MP3_FACTS: dict[str, tuple[str, ...]] = {
    "Title": ("f67a499e-a7d0-4ca3-a49b-358bd934ae3e",),
    "Artist": ("Artist Name Test String",),
    "Album": ("Album Name Test String",),
    "SampleRate": ("48000",),
}
#: rlink.docx's external relationship target and the text markitdown's test puts there.
RLINK_TARGET = "file:///tmp/test_rlink.txt"
RLINK_CONTENT = "de658225-569e-4e3d-9ed2-cfb6abf927fc"


@dataclass
class Check:
    """A pass/fail fact about one file, for docshelf and markitdown (None: n/a)."""

    name: str
    file: str
    docshelf: bool
    markitdown: bool | None
    detail: str  # what docshelf did
    markitdown_detail: str = ""


def _facts_found(markdown: str | None, facts: dict[str, tuple[str, ...]], keyed: bool) -> list[str]:
    """The keys whose value is in the Markdown (``keyed``: as exiftool's ``Key: value``)."""
    text = normalise(markdown or "")
    return [
        key
        for key, values in facts.items()
        if any(normalise(f"{key}: {v}" if keyed else v) in text for v in values)
    ]


def facts_check(
    name: str, path: Path, facts: dict[str, tuple[str, ...]], peer: Markitdown | None
) -> Check:
    """Media metadata: docshelf by value; markitdown as its test reads it (needs exiftool)."""
    ours = _facts_found(docshelf_output(path.read_bytes(), path.name).markdown, facts, keyed=False)
    lost = [key for key in facts if key not in ours]
    check = Check(
        name,
        path.name,
        not lost,
        None,
        f"{len(ours)}/{len(facts)}" + (f", missing {', '.join(lost)}" if lost else ""),
    )
    if peer is None:
        return check
    if shutil.which("exiftool") is None:
        check.markitdown_detail = (
            "exiftool is not on PATH (markitdown reads media metadata only through it)"
        )
        return check
    theirs = _facts_found(peer.convert(path).markdown, facts, keyed=True)
    check.markitdown = len(theirs) == len(facts)
    check.markitdown_detail = f"{len(theirs)}/{len(facts)}"
    return check


_INLINE_MATH = "$m=1$"
_BLOCK_MATH = re.compile(r"\$\$(.+?)\$\$")


def _math(markdown: str | None) -> tuple[bool, str]:
    text = markdown or ""
    inline, blocks = _INLINE_MATH in text, len(_BLOCK_MATH.findall(text))
    return (
        inline and blocks > 0,
        f"inline {_INLINE_MATH}: {'yes' if inline else 'no'}, $$ blocks: {blocks}",
    )


def equations_check(path: Path, peer: Markitdown | None) -> Check:
    """equations.docx: Word's OMML math as ``$…$`` inline and ``$$…$$`` blocks."""
    ours, detail = _math(docshelf_output(path.read_bytes(), path.name).markdown)
    check = Check("math as $…$ and $$…$$", path.name, ours, None, detail)
    if peer is not None:
        check.markitdown, check.markitdown_detail = _math(peer.convert(path).markdown)
    return check


def relinked_docx(data: bytes, target: str) -> bytes:
    """rlink.docx with its external relationship pointing at ``target`` instead."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as copy:
        for item in source.infolist():
            part = source.read(item)
            if item.filename.endswith(".rels"):
                part = part.replace(RLINK_TARGET.encode(), target.encode())
            copy.writestr(item, part)
    return out.getvalue()


def _read_outside(markdown: str | None) -> bool:
    """Whether the external file's text (plain or as base64) is in the output."""
    prefix = base64.b64encode(RLINK_CONTENT.encode()).decode()[:40]
    text = markdown or ""
    return RLINK_CONTENT in text or prefix in text


def rlink_check(path: Path, peer: Markitdown | None) -> Check:
    """rlink.docx: a relationship to an external file is never followed.

    The file it names is made to exist, in a folder of our own (not /tmp, which other
    runs share): the docx is rewritten to point there, so following it would show."""
    data = path.read_bytes()
    if RLINK_TARGET.encode() not in _rels(data):
        return Check(
            "external file never read",
            path.name,
            False,
            None,
            f"{RLINK_TARGET} not found in the document",
        )
    with tempfile.TemporaryDirectory() as folder:
        external = Path(folder) / "test_rlink.txt"
        external.write_text(RLINK_CONTENT, encoding="utf-8")
        relinked = Path(folder) / path.name
        relinked.write_bytes(relinked_docx(data, external.as_uri()))
        data = relinked.read_bytes()
        passed, detail = never_read(lambda: docshelf_output(data, path.name), external)
        check = Check("external file never read", path.name, passed, None, detail)
        if peer is not None:
            check.markitdown, check.markitdown_detail = never_read(
                lambda: peer.convert(relinked, keep_data_uris=True), external
            )
    return check


#: Paths opened while :func:`_watching_opens` is on (one process-wide audit hook, which
#: cannot be removed once added: it records nothing outside the block).
_OPENED: list[str] | None = None
_HOOKED = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _OPENED is not None and event == "open" and isinstance(args[0], (str, bytes, Path)):
        _OPENED.append(os.fsdecode(args[0]))


@contextlib.contextmanager
def _watching_opens() -> Iterator[list[str]]:
    """The files opened inside the block: an audit hook (PEP 578) sees every ``open``,
    so a converter that reads the external file shows even if its output drops it
    (docshelf leaves images out, so the text alone could not tell)."""
    global _OPENED, _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)
        _HOOKED = True
    opened: list[str] = []
    _OPENED = opened
    try:
        yield opened
    finally:
        _OPENED = None


def never_read(convert: Callable[[], Output], external: Path) -> tuple[bool, str]:
    """Passed when the document converts, the external file is never opened, and its
    text is not in the output."""
    with _watching_opens() as opened:
        output = convert()
    if any(Path(path).name == external.name for path in opened):
        return False, "READ: the external file was opened"
    if output.state != "converted":
        return False, f"{output.state}: {output.reason}"
    if _read_outside(output.markdown):
        return False, "READ: the external file's text is in the output"
    return True, "converted; the external file never opened"


def _rels(data: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        return b"".join(package.read(n) for n in package.namelist() if n.endswith(".rels"))


def unsupported_check(path: Path, peer: Markitdown | None) -> Check:
    """random.bin: no converter takes it, and docshelf says so (reason ``unsupported``)."""
    ours = docshelf_output(path.read_bytes(), path.name)
    check = Check(
        "unsupported, with a reason",
        path.name,
        ours.state == "unsupported" and bool(ours.reason),
        None,
        f"{ours.state}: {ours.reason}",
    )
    if peer is not None:
        theirs = peer.convert(path)
        check.markitdown = theirs.state == "unsupported"
        check.markitdown_detail = f"{theirs.state}: {theirs.reason}"
    return check


#: The extra checks, by file.
CHECKS: dict[str, Callable[[Path, Markitdown | None], Check]] = {
    "test.jpg": lambda path, peer: facts_check("exiftool facts", path, JPG_FACTS, peer),
    "test.mp3": lambda path, peer: facts_check("exiftool facts", path, MP3_FACTS, peer),
    "equations.docx": equations_check,
    "rlink.docx": rlink_check,
    "random.bin": unsupported_check,
}


# ---------------------------------------------------------------------- report


#: A gap: the file, and what keeps docshelf below the target there.
Gap = tuple[str, str]


@dataclass
class SuiteReport:
    """Every selected file's row, the extra checks, and the verdict's gaps."""

    suite: Path
    markitdown: str  # markitdown's version, "" when it is not installed
    rows: list[FileRow]
    checks: list[Check]
    gaps: list[Gap] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.gaps

    def show(self) -> None:
        print_report(self)

    def as_json(self) -> dict[str, Any]:
        return report_json(self)


def row_gaps(row: FileRow) -> list[Gap]:
    """What keeps docshelf below the target on one file (module docstring, Verdict)."""
    ours, theirs = row.docshelf, row.markitdown
    gaps: list[str] = []
    if ours.state == "error":
        gaps.append(f"docshelf failed: {ours.reason}")
    gaps += [f"missing {s!r}" for s in ours.missing]
    gaps += [f"must-not string present {s!r}" for s in ours.leaks]
    bar = theirs.words if theirs is not None else None
    if bar is not None and (ours.words or 0.0) < bar - WORDS_TOLERANCE:
        gaps.append(
            f"words recall {_figure(ours.words)} < markitdown's {_figure(bar)}"
            f" - {WORDS_TOLERANCE} (reference: {row.reference})"
        )
    return [(row.name, gap) for gap in gaps]


def check_gaps(check: Check) -> list[Gap]:
    return [] if check.docshelf else [(check.file, f"{check.name}: {check.detail}")]


def suite_files(
    suite: Path, patterns: Sequence[str] | None, exclude: Sequence[str] | None = None
) -> list[Path]:
    """The test files ``patterns`` select (as ``markitdown/NAME``; all without patterns),
    less those ``exclude`` names."""
    folder = suite / "test_files"
    return [
        path
        for path in (sorted(folder.iterdir()) if folder.is_dir() else [])
        if path.is_file()
        and (not patterns or matches(PREFIX + path.name, patterns))
        and not (exclude and matches(PREFIX + path.name, exclude))
    ]


def run(suite: Path, paths: Sequence[Path], peer: Markitdown | None) -> SuiteReport:
    """The suite on ``paths`` (:func:`suite_files`), docshelf and ``peer`` side by side."""
    vectors = {v.filename: v for v in load_vectors(suite)}
    rows = [evaluate_file(path, vectors.get(path.name), peer) for path in paths]
    checks = [CHECKS[path.name](path, peer) for path in paths if path.name in CHECKS]
    report = SuiteReport(suite, _version() if peer else "", rows, checks)
    report.gaps = [gap for row in rows for gap in row_gaps(row)]
    report.gaps += [gap for check in checks for gap in check_gaps(check)]
    return report


def _version() -> str:
    from importlib.metadata import version

    return version("markitdown")


def _figure(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _strings(score: Score | None) -> str:
    if score is None:
        return "n/a"
    if score.state != "converted":
        return score.state
    if not score.total:
        return "converted"
    exact = f" ({score.exact} exact)" if score.exact != score.passed else ""
    return f"{score.passed}/{score.total}{exact}"


def _leaks(score: Score | None, has_vector: bool) -> str:
    if score is None or not has_vector or score.state != "converted":
        return "—" if score is not None else "n/a"
    return str(len(score.leaks))


def print_report(report: SuiteReport) -> None:
    """The side-by-side table, the extra checks and the verdict."""
    version = f"markitdown {report.markitdown}" if report.markitdown else "markitdown n/a"
    print(f"\n# markitdown's test suite ({report.suite}): docshelf vs {version}\n")
    print("| file | docshelf must | leaks | words | markitdown must | leaks | words | reference |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for row in report.rows:
        ours, theirs = row.docshelf, row.markitdown
        print(
            f"| {row.name} | {_strings(ours)} | {_leaks(ours, row.vector)} | "
            f"{_figure(ours.words)} | {_strings(theirs)} | {_leaks(theirs, row.vector)} | "
            f"{_figure(theirs.words if theirs else None)} | {row.reference or '—'} |"
        )
    if report.checks:
        print("\n| check | file | docshelf | markitdown |")
        print("|---|---|---|---|")
        for check in report.checks:
            mark = {True: "PASS", False: "FAIL", None: "n/a"}
            print(
                f"| {check.name} | {check.file} | {mark[check.docshelf]} ({check.detail}) | "
                f"{mark[check.markitdown]}"
                + (f" ({check.markitdown_detail})" if check.markitdown_detail else "")
                + " |"
            )
    state = "PASS" if report.passed else f"FAIL ({len(report.gaps)} gaps)"
    print(f"\nmarkitdown suite: {state} on {len(report.rows)} files, {len(report.checks)} checks")
    for file, gap in report.gaps:
        print(f"    {file}: {gap}")


def report_json(report: SuiteReport) -> dict[str, Any]:
    return {
        "markitdown": report.markitdown,
        "suite": str(report.suite),
        "words_tolerance": WORDS_TOLERANCE,
        "passed": report.passed,
        "gaps": [{"file": file, "gap": gap} for file, gap in report.gaps],
        "files": [asdict(row) for row in report.rows],
        "checks": [asdict(check) for check in report.checks],
    }
