"""Tesseract, run as a child process: a picture in, its lines with boxes and confidences out.

A child process, not a library in the worker: the per-page time limit is a
real one (the child is killed when it overruns, which no call into a C library
allows), a crash or a runaway allocation costs that page and not the worker,
and nothing of Tesseract's is linked into docshelf. The picture goes in on
stdin as an uncompressed greyscale PGM (no temporary file, no PNG encoding);
Tesseract's TSV comes back on stdout. Its page layout analysis finds the
blocks (columns stay apart), paragraphs and lines; the lines come in its
reading order. Each child is limited to one thread (``OMP_THREAD_LIMIT=1``):
the conversion workers are the parallelism.

What this Tesseract is (its path, version, languages) is asked once per
process, when first needed (:func:`installed`).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image

#: Seconds the ``--version`` and ``--list-langs`` questions may take.
_QUESTION_TIMEOUT = 20.0
#: Tesseract's TSV reports a word's confidence 0-100; -1 on layout rows.
_WORD_LEVEL = 5
_LANGUAGE = re.compile(r"^[A-Za-z][\w-]*$")
_VERSION = re.compile(r"tesseract\s+v?(\d+(?:\.\d+)*)", re.IGNORECASE)


class OcrTimeout(Exception):
    """The page took longer than its time limit."""


class OcrFailed(Exception):
    """Tesseract could not read the picture (it says why)."""


@dataclass(frozen=True, slots=True)
class Installed:
    """The Tesseract found on this machine."""

    path: str
    version: str
    languages: frozenset[str]


@dataclass(frozen=True, slots=True)
class OcrLine:
    """One recognised line: its text, its box in the picture's pixels
    (left, top, right, bottom) and its mean word confidence (0-1)."""

    text: str
    box: tuple[float, float, float, float]
    confidence: float
    #: Tesseract's block and paragraph numbers: which column or text region, which paragraph.
    block: int
    paragraph: int


@cache
def installed() -> Installed | None:
    """Tesseract's path, version and languages, or None when there is none to run."""
    path = shutil.which("tesseract")
    if path is None:
        return None
    try:
        version = _ask(path, "--version")
        languages = _ask(path, "--list-langs")
    except (OSError, subprocess.SubprocessError):
        return None
    found = _VERSION.search(version)
    names = {line.strip() for line in languages.splitlines() if _LANGUAGE.match(line.strip())}
    return Installed(path, found.group(1) if found else "unknown", frozenset(names - {"osd"}))


def recognise(
    image: Image.Image, languages: tuple[str, ...], *, dpi: int, timeout: float
) -> list[OcrLine]:
    """The lines Tesseract reads in ``image``, in its reading order.

    ``dpi`` 0 lets Tesseract estimate the resolution from the letters' sizes. Raises
    :class:`OcrTimeout` past ``timeout`` seconds, :class:`OcrFailed` when
    Tesseract is missing or refuses the picture.
    """
    engine = installed()
    if engine is None:
        raise OcrFailed("tesseract is not installed")
    picture = io.BytesIO()
    image.convert("L").save(picture, "PPM")  # "L" in PPM is a PGM
    command = [engine.path, "stdin", "stdout", "-l", "+".join(languages)]
    command += ["--psm", "3", *(["--dpi", str(dpi)] if dpi > 0 else []), "tsv"]
    environment = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    try:
        done = subprocess.run(
            command,
            input=picture.getvalue(),
            capture_output=True,
            timeout=timeout,
            env=environment,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise OcrTimeout(f"OCR took longer than {timeout:g} s") from exc
    except OSError as exc:
        raise OcrFailed(f"tesseract could not run: {exc}") from exc
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise OcrFailed(f"tesseract failed: {message[-1] if message else done.returncode}")
    return parse_tsv(done.stdout.decode("utf-8", "replace"))


def parse_tsv(tsv: str) -> list[OcrLine]:
    """Tesseract's TSV as lines: its words grouped by block, paragraph and line, in order."""
    lines: dict[tuple[int, int, int], list[tuple[str, int, int, int, int, float]]] = {}
    for row in tsv.splitlines()[1:]:
        fields = row.split("\t")
        if len(fields) < 12 or fields[0] != str(_WORD_LEVEL):
            continue
        text = fields[11].strip()
        if not text:
            continue
        try:
            block, paragraph, line = int(fields[2]), int(fields[3]), int(fields[4])
            left, top, width, height = (int(value) for value in fields[6:10])
            confidence = float(fields[10])
        except ValueError:
            continue
        lines.setdefault((block, paragraph, line), []).append(
            (text, left, top, left + width, top + height, max(confidence, 0.0) / 100)
        )
    return [
        OcrLine(
            text=" ".join(word[0] for word in words),
            box=(
                min(word[1] for word in words),
                min(word[2] for word in words),
                max(word[3] for word in words),
                max(word[4] for word in words),
            ),
            confidence=round(sum(word[5] for word in words) / len(words), 3),
            block=block,
            paragraph=paragraph,
        )
        for (block, paragraph, _line), words in lines.items()
    ]


def _ask(path: str, question: str) -> str:
    """What ``tesseract QUESTION`` prints (some versions print to stderr)."""
    done = subprocess.run(
        [path, question], capture_output=True, timeout=_QUESTION_TIMEOUT, check=False
    )
    return (done.stdout + done.stderr).decode("utf-8", "replace")
