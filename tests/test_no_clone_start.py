"""A start without a clone: ``uvx`` and ``pipx run`` start ``docshelf stdio`` from the wheel.

docs/desktop-clients.md tells users to put ``uvx --from WHEEL docshelf stdio --root DIR``
(or ``pipx run --spec WHEEL ...``) in a client's configuration. Here each launcher gets
the wheel built from this checkout, an empty cache of its own and a shell's environment
(no ``PYTHONPATH`` to the checkout, another working directory), installs the wheel and its
dependencies from the package index into an environment of its own, and the server it
starts serves a shelf to the official SDK client.

Both launchers are in the test extra (``uv``, ``pipx``), so CI runs both. Setting up from
an empty cache (resolving and fetching the ~45 runtime dependencies) takes uvx 1-2 s on a
fast link, pipx 1-10 s (depending on pip's own cache); each test, with two server starts
and an index pass, about 8 s. The one wheel build per session adds about 3 s.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from docshelf import app
from tests.support.schema import validate
from tests.support.sdk import names_once_listed, raw_read
from tests.support.servers import MODERN
from tests.support.wheel import launcher_env, run

# Slow (builds the wheel, starts it through uvx and pipx): DOCSHELF_SLOW_TESTS=1 runs it.
pytestmark = pytest.mark.slow


def _launcher(name: str) -> str:
    beside = Path(sys.executable).with_name(name)  # this venv's, when it is not on PATH
    found = str(beside) if beside.is_file() else shutil.which(name)
    if found is None:
        package = "uv" if name == "uvx" else name
        pytest.skip(f"{name} is not installed: pip install {package} (or the test extra)")
    return found


def uvx(wheel: Path, cache: Path) -> tuple[list[str], dict[str, str]]:
    argv = [_launcher("uvx"), "--no-config", "--python", sys.executable, "--from", str(wheel)]
    return argv, {"UV_CACHE_DIR": str(cache), "UV_PYTHON_DOWNLOADS": "never"}


def pipx(wheel: Path, cache: Path) -> tuple[list[str], dict[str, str]]:
    argv = [_launcher("pipx"), "run", "--python", sys.executable, "--spec", str(wheel)]
    return argv, {"PIPX_HOME": str(cache), "PIPX_BIN_DIR": str(cache / "bin")}


Launcher = Callable[[Path, Path], tuple[list[str], dict[str, str]]]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("launcher", [uvx, pipx], ids=["uvx", "pipx"])
def test_a_launcher_starts_docshelf_stdio_from_the_wheel(
    launcher: Launcher, docshelf_wheel: Path, tmp_path: Path
) -> None:
    prefix, extra_env = launcher(docshelf_wheel, tmp_path / "launcher-cache")
    env = launcher_env(**extra_env)
    version = run([*prefix, "docshelf", "--version"], cwd=tmp_path, timeout=300, env=env)
    assert version.stdout.strip() == f"docshelf {app.__version__}"

    shelf = tmp_path / "Papers"
    (shelf / "notes").mkdir(parents=True)
    (shelf / "notes" / "today.md").write_text("# Today\n\nStarted without a clone.\n")
    params = StdioServerParameters(
        command=prefix[0],
        args=[
            *prefix[1:],
            "docshelf",
            "stdio",
            "--root",
            str(shelf),
            "--data-dir",
            str(tmp_path / "data"),
            "--no-watch",
        ],
        env=env,
        cwd=str(tmp_path),
    )

    async def session() -> tuple[set[str], str]:
        listed: dict[str, str] = {}
        with anyio.fail_after(180):
            async with Client(params, mode="2026-07-28", cache=None) as client:
                while "notes/today.md" not in listed:  # indexing runs in the background
                    resources = (await client.list_resources()).resources
                    listed = {r.name: str(r.uri) for r in resources}
                    await anyio.sleep(0.2)
                read = await client.read_resource(listed["notes/today.md"])
        texts = {c.mime_type: getattr(c, "text", None) for c in read.contents}
        return set(listed), texts.get("text/plain") or ""

    names, plain = anyio.run(session)
    assert names == {"notes/today.md"}
    assert "Started without a clone." in plain


# The stable form config desktop writes for each launcher: the launcher's own arguments
# (without the tests' --no-config and --python) and the wheel it ran from.
RELAUNCH = {"uvx": ["--from"], "pipx": ["run", "--spec"]}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("launcher", [uvx, pipx], ids=["uvx", "pipx"])
def test_config_desktop_through_a_launcher_writes_an_entry_that_outlives_its_cache(
    launcher: Launcher, docshelf_wheel: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "launcher-cache"
    prefix, extra_env = launcher(docshelf_wheel, cache)
    env = launcher_env(**extra_env)
    env["PATH"] = f"{Path(prefix[0]).parent}{os.pathsep}{env.get('PATH', '')}"  # as typed
    shelf = tmp_path / "Papers"
    shelf.mkdir()
    (shelf / "today.md").write_text("# Today\n\nStarted again after the cache went.\n")
    target = tmp_path / "mcp.json"
    done = run(
        [
            *prefix,
            "docshelf",
            "config",
            "desktop",
            "--client",
            "cursor",
            "--root",
            str(shelf),
            "--data-dir",
            str(tmp_path / "data"),
            "--no-watch",
            "--install",
            "--config-file",
            str(target),
        ],
        cwd=tmp_path,
        env=env,
    )

    written = target.read_text()
    assert str(cache) not in written, written
    entry = json.loads(written)["mcpServers"]["docshelf"]
    name = Path(prefix[0]).name
    assert entry["command"] == prefix[0]
    assert entry["args"][: len(RELAUNCH[name]) + 3] == [
        *RELAUNCH[name],
        str(docshelf_wheel),
        "docshelf",
        "stdio",
    ]
    assert f"the entry starts docshelf with {name}" in done.stderr, done.stderr

    shutil.rmtree(cache)  # `uv cache clean`, `pipx` expiring its run cache, a tidy user
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env=env, cwd=str(tmp_path)
    )

    async def session() -> dict[str, object]:
        with anyio.fail_after(300):
            async with Client(params, mode=MODERN, cache=None) as client:
                await names_once_listed(client, "today.md")
                return await raw_read(client, "docshelf://papers/today.md")

    read = anyio.run(session)
    validate(MODERN, "ReadResourceResult", read)
    assert read["contents"][0]["text"] == (shelf / "today.md").read_text()
