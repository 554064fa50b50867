"""How a client should start this docshelf later: a command that outlives where it runs now.

``docshelf config desktop`` names the running install in a client's file. A venv's or
``pipx install``'s ``bin/docshelf`` stays where it is; the environment ``uvx`` or ``pipx
run`` made lies in the launcher's cache and is gone when the cache is cleaned (``uv cache
clean``, pipx's expiry of its run cache), taking the client's entry with it. From such an
environment the entry starts docshelf through the launcher again, from the same wheel,
folder, repository or released version (PEP 610's ``direct_url.json`` says which), and the
launcher makes the environment anew when it is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

from docshelf.app import __version__

# The Cache Directory Tagging Specification (https://bford.info/cachedir/): a directory
# holding a CACHEDIR.TAG that starts with this line is a cache, its contents disposable.
CACHE_TAG = "CACHEDIR.TAG"
CACHE_TAG_SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"

Which = Callable[[str], str | None]


@dataclass(frozen=True, slots=True)
class Launch:
    """The command prefix that starts ``docshelf``, and what to tell the user about it."""

    argv: list[str]
    note: str | None = None  # one line for stderr


def docshelf_command(executable: str | None = None, which: Which = shutil.which) -> list[str]:
    """How to start this install's ``docshelf``, as an absolute argv prefix.

    The console script beside the running interpreter comes first (a venv's or
    pipx's ``bin/``), then one on ``PATH``; failing both, ``python -m docshelf.app`` with
    the running interpreter, which is the same program.
    """
    python = Path(executable or sys.executable)  # not resolved: a venv's python is a symlink
    names = ("docshelf.exe", "docshelf-script.py") if os.name == "nt" else ("docshelf",)
    for name in names:
        script = python.parent / name
        if script.is_file() and os.access(script, os.X_OK):
            return [str(script.absolute())]
    found = which("docshelf")
    if found:
        return [str(Path(found).absolute())]
    return [str(python.absolute()), "-m", "docshelf.app"]


def cache_holding(prefix: Path) -> Path | None:
    """The tagged cache directory ``prefix`` lies in, if any.

    Only folders above the environment count: uv tags every environment it makes,
    lasting ones too, so that backups skip them.
    """
    for folder in prefix.absolute().parents:
        try:
            with (folder / CACHE_TAG).open("rb") as tag:
                if tag.read(len(CACHE_TAG_SIGNATURE)) == CACHE_TAG_SIGNATURE:
                    return folder
        except OSError:
            continue
    return None


def install_spec(direct_url: Mapping[str, Any] | None, version: str = __version__) -> str:
    """What this docshelf was installed from, as uvx's ``--from`` and pipx's ``--spec``
    take it: the wheel or folder's path, the repository at its commit, the archive's URL
    (PEP 610 ``direct_url.json``); without one, this version from the package index."""
    if not direct_url or not isinstance(direct_url.get("url"), str):
        return f"docshelf=={version}"
    url = str(direct_url["url"])
    vcs = direct_url.get("vcs_info")
    if isinstance(vcs, Mapping):
        commit = vcs.get("commit_id")
        return f"{vcs.get('vcs', 'git')}+{url}" + (f"@{commit}" if commit else "")
    if url.startswith("file:"):
        return url2pathname(urlparse(url).path)
    return url


def _direct_url() -> Mapping[str, Any] | None:
    try:
        text = distribution("docshelf").read_text("direct_url.json")
        found = json.loads(text) if text else None
    except (PackageNotFoundError, ValueError):
        return None
    return found if isinstance(found, Mapping) else None


def _made_by_uv(prefix: Path, environ: Mapping[str, str]) -> bool:
    """uv records itself in every environment's ``pyvenv.cfg``; ``uvx`` sets ``UV``."""
    try:
        config = (prefix / "pyvenv.cfg").read_text(errors="replace")
    except OSError:
        config = ""
    return "UV" in environ or any(
        line.partition("=")[0].strip() == "uv" for line in config.splitlines()
    )


def _uvx(environ: Mapping[str, str], which: Which) -> list[str] | None:
    """``uvx``, or ``uv tool run`` (the same), by absolute path: the uv that ran us first."""
    exe = ".exe" if os.name == "nt" else ""
    uv = environ.get("UV")
    if uv and Path(uv).with_name(f"uvx{exe}").is_file():
        return [str(Path(uv).with_name(f"uvx{exe}"))]
    found = which("uvx")
    if found:
        return [str(Path(found).absolute())]
    return [uv, "tool", "run"] if uv else None


def launch_command(
    prefix: Path | None = None,
    environ: Mapping[str, str] | None = None,
    which: Which = shutil.which,
    executable: str | None = None,
) -> Launch:
    """How a client should start this docshelf: :func:`docshelf_command`, unless the
    running environment lies in a cache; then through the launcher that made it."""
    prefix = Path(prefix or sys.prefix)
    environ = os.environ if environ is None else environ
    direct = docshelf_command(executable, which)
    cache = cache_holding(prefix)
    if cache is None:
        return Launch(direct)
    spec = install_spec(_direct_url())
    if (prefix / "pipx_metadata.json").is_file():
        found = which("pipx")
        launcher = [str(Path(found).absolute()) if found else "pipx", "run", "--spec", spec]
    elif _made_by_uv(prefix, environ):
        launcher = [*(_uvx(environ, which) or ["uvx"]), "--from", spec]
    else:
        return Launch(
            direct,
            f"docshelf: warning: this docshelf runs from {prefix}, inside the cache {cache}: "
            "the entry stops working when the cache is cleaned; for one that lasts, install "
            f"docshelf (pipx install {spec}, uv tool install {spec}) and run this again",
        )
    shown = " ".join([Path(launcher[0]).name, *launcher[1:]])
    note = (
        f"docshelf: this docshelf runs from a launcher's cache ({cache}), which may be "
        f"cleaned: the entry starts docshelf with {shown} instead"
    )
    if not Path(launcher[0]).is_absolute():
        note += (
            f"; {launcher[0]} is not on PATH here: give its absolute path if the client needs it"
        )
    return Launch([*launcher, "docshelf"], note)
