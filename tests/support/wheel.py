"""The wheel built from this checkout, as a user would get it: built from a clean copy.

Building copies the checkout without VCS data, venvs, caches or build output, so the
wheel holds only what ``pyproject.toml`` packages — never a file that happens to lie in
the working tree. A build takes a while: :func:`tests.conftest.docshelf_wheel` makes one
per session.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO
from tests.support.servers import child_env

# Not part of a checkout's build: VCS data, local venvs, caches, build output.
NOT_SOURCE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    "*.pyc",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    "node_modules",
    ".env",
    "*.db",
)


def launcher_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: no ``DOCSHELF_*``, no ``PYTHONPATH`` to the checkout."""
    env = child_env(**extra)
    env.pop("PYTHONPATH", None)
    return env


def run(
    argv: list[str], cwd: Path, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=env or launcher_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{' '.join(argv)} failed:\n{done.stdout}\n{done.stderr}"
    return done


def build_wheel(workdir: Path) -> Path:
    """``pip wheel`` of a clean copy of the checkout, in ``workdir``; the wheel's path."""
    source = workdir / "checkout"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)
    dist = workdir / "dist"
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--wheel-dir",
            str(dist),
            str(source),
        ],
        cwd=workdir,
    )
    [wheel] = dist.glob("docshelf-*.whl")
    return wheel
