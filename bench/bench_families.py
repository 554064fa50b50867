"""Catalog speed on a shelf of every family people keep (issue 25), side by side.

The families of issue 25 are detected from their first bytes and their name in the
catalog pass, without opening an archive or parsing a document, so the pass must
run as fast on slides, sheets, mail and archives as on Markdown. This starts
``docshelf serve`` on a fresh data folder and times process start to ``/readyz`` 200
(the catalog current; formats build behind it) on a shelf of N files: a third
Markdown, the rest hard links to markitdown's 30 test files (pptx, xlsx, xls, epub,
msg, zip, jpg, mp3, …; ``$DOCSHELF_SHARED/peer-suites/markitdown``), in folders of
500. ``--against PYTHON`` runs another installation (an older checkout's venv) in
the same run, alternating, so the machine's load falls on both alike.

Target: at least 1,000 files/s (the catalog target of ``bench index``: 5,000 files
listed within 5 s), and no slower than the other installation by more than 10 %.

Run: ``python -m bench families [--files 6000] [--rounds 3] [--against PYTHON]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.docshelf_process import child_env, free_port
from bench.shared import SHARED

#: Files per second the catalog must reach, and how much slower than the other
#: installation it may be.
TARGET_FILES_PER_S = 1000
TOLERANCE = 1.10


def build_shelf(root: Path, count: int, suite: Path) -> Path:
    files = sorted(path for path in suite.iterdir() if path.is_file())
    for index in range(count):
        folder = root / f"f{index // 500:03}"
        folder.mkdir(parents=True, exist_ok=True)
        if index % 3 == 0:
            (folder / f"note-{index}.md").write_text(f"# Note {index}\n\nBody {index}.\n")
        else:
            source = files[index % len(files)]
            os.link(source, folder / f"{index}-{source.name}")
    return root


def catalog_seconds(python: str, root: Path, data: Path) -> float:
    """Seconds from starting ``docshelf serve`` on ``python`` to its catalog being current."""
    port = free_port()
    started = time.perf_counter()
    command = [python, "-m", "docshelf.app", "serve", "--root", str(root)]
    command += ["--data-dir", str(data), "--port", str(port), "--no-watch"]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=child_env()
    )
    try:
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                    return time.perf_counter() - started
            except httpx.TransportError:
                pass
            if process.poll() is not None:
                raise SystemExit(f"{python}: docshelf exited with {process.returncode}")
            time.sleep(0.02)
    finally:
        process.terminate()
        process.wait(20)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench families", description=__doc__)
    parser.add_argument("--files", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", metavar="PYTHON", help="another installation's python")
    options = parser.parse_args(argv)
    suite = SHARED / "peer-suites" / "markitdown" / "test_files"
    if not suite.is_dir():
        print(f"needs markitdown's test files at {suite} (DOCSHELF_SHARED)", file=sys.stderr)
        return 2
    pythons = {"this": sys.executable} | ({"against": options.against} if options.against else {})
    times: dict[str, list[float]] = {name: [] for name in pythons}
    with tempfile.TemporaryDirectory() as tmp:
        root = build_shelf(Path(tmp) / "every", options.files, suite)
        for round_ in range(options.rounds):
            for name, python in pythons.items():
                data = Path(tmp) / f"data-{name}-{round_}"
                times[name].append(catalog_seconds(python, root, data))
                shutil.rmtree(data, ignore_errors=True)
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, values in times.items():
        shown = ", ".join(f"{value:.2f}" for value in values)
        rate = options.files / medians[name]
        print(
            f"{name:8} {pythons[name]}: {options.files} files, catalog current in "
            f"{medians[name]:.2f} s median ({shown}); {rate:,.0f} files/s"
        )
    rate = options.files / medians["this"]
    verdicts = [("files/s", rate >= TARGET_FILES_PER_S, f"{rate:,.0f} ≥ {TARGET_FILES_PER_S:,}")]
    if "against" in medians:
        ratio = medians["this"] / medians["against"]
        verdicts.append(("vs --against", ratio <= TOLERANCE, f"{ratio:.2f} ≤ {TOLERANCE:.2f}"))
    for what, ok, figure in verdicts:
        print(f"{'PASS' if ok else 'FAIL'}  {what}: {figure}")
    return 0
