"""Packaging: the wheel built from this checkout, installed in a fresh venv, is the whole product.

One build, one install, one stdio session: ``pip install`` of the wheel gives the
``docshelf`` command (and ``python -m docshelf.app``) with the version from ``app.__version__``,
and that command serves the shared PDF corpus to the official SDK client over stdio —
so the migrations, the converters' data files and every runtime dependency shipped.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from docshelf import app
from tests.support.paths import CORPUS_PDF, NEEDS_SHARED
from tests.support.wheel import launcher_env, run

# Slow (builds the wheel, installs it in a fresh venv): DOCSHELF_SLOW_TESTS=1 runs it.
pytestmark = pytest.mark.slow


@NEEDS_SHARED
@pytest.mark.timeout(900)
def test_the_wheel_installs_in_a_fresh_venv_and_serves_the_corpus_over_stdio(
    tmp_path: Path, docshelf_wheel: Path
) -> None:
    wheel = docshelf_wheel
    assert wheel.name.startswith(f"docshelf-{app.__version__}-")

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    python, docshelf = venv / "bin" / "python", venv / "bin" / "docshelf"
    run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], cwd=tmp_path, timeout=600)

    assert (
        run([str(docshelf), "--version"], cwd=tmp_path).stdout.strip()
        == f"docshelf {app.__version__}"
    )
    assert (
        run([str(python), "-m", "docshelf.app", "--version"], cwd=tmp_path).stdout.strip()
        == f"docshelf {app.__version__}"
    )
    where = run(
        [
            str(python),
            "-c",
            "import importlib.util as u, docshelf.app as a, docshelf.migrations as m; "
            "print(a.__file__, m.__file__, *(u.find_spec(n) for n in ('app', 'storage')))",
        ],
        cwd=tmp_path,
    ).stdout.split()
    # everything under docshelf/ in the venv, not this checkout; no top-level `app`, `storage`
    assert [Path(p).is_relative_to(venv / "lib") for p in where[:2]] == [True, True], where
    assert where[2:] == ["None", "None"], where

    expected = {p.name for p in CORPUS_PDF.iterdir() if p.is_file() and not p.name.startswith(".")}
    assert len(expected) > 10
    params = StdioServerParameters(
        command=str(docshelf),
        args=[
            "stdio",
            "--root",
            str(CORPUS_PDF),
            "--data-dir",
            str(tmp_path / "data"),
            "--no-watch",
        ],
        env=launcher_env(),
        cwd=str(tmp_path),
    )

    async def session() -> tuple[set[str], dict[str, str | None]]:
        names: set[str] = set()
        with anyio.fail_after(180):
            async with Client(params, mode="2026-07-28", cache=None) as client:
                while not expected <= names:  # the first index pass runs in the background
                    names = {r.name for r in (await client.list_resources()).resources}
                    await anyio.sleep(0.25)
                read = await client.read_resource("docshelf://pdf/pdflatex-4-pages.pdf")
        variants = {
            c.mime_type or "": getattr(c, "text", None) or getattr(c, "blob", None)
            for c in read.contents
        }
        return names, variants

    names, variants = anyio.run(session)
    assert expected <= names
    assert base64.b64decode(variants["application/pdf"] or "")[:5] == b"%PDF-"
    assert variants["text/markdown"] and variants["text/plain"]  # the converters ran from the wheel
    assert "application/json" in variants
