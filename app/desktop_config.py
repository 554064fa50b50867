"""``docshelf config desktop``: the stdio entry a desktop MCP client needs, for this install.

Desktop clients (Claude Desktop's ``claude_desktop_config.json`` and the many that copy
its ``mcpServers`` format) start a server as ``command`` + ``args``, with almost none of
the user's environment and from a working directory of their own. So the snippet
names the ``docshelf`` script of the running install by absolute path and carries every
setting as a flag with absolute paths: nothing is left to ``PATH``, ``DOCSHELF_*``
variables or the current directory.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from app.settings import Settings
from storage.uris import shelf_name_for

SERVER_NAME = "docshelf"


def docshelf_command(
    executable: str | None = None, which: Callable[[str], str | None] = shutil.which
) -> list[str]:
    """How to start this install's ``docshelf``, as an absolute argv prefix.

    The console script beside the running interpreter comes first (a venv's or
    pipx's ``bin/``), then one on ``PATH``; failing both, ``python -m app`` with
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
    return [str(python.absolute()), "-m", "app"]


def stdio_args(settings: Settings) -> list[str]:
    """``stdio`` and the flags that reproduce ``settings``: shelves always, the rest when set."""
    args = ["stdio"]
    for name, folder in settings.shelf_specs():
        path = folder.expanduser().absolute()
        if not path.is_dir():
            raise ValueError(f"shelf folder {str(path)!r} is not a directory")
        if name == shelf_name_for(path.resolve().name):
            args += ["--root", str(path)]
        else:
            args += ["--shelf", f"{name}={path}"]
    chosen = settings.model_fields_set
    if "data_dir" in chosen:
        args += ["--data-dir", str(settings.data_dir.expanduser().absolute())]
    if "database_url" in chosen and settings.database_url:
        args += ["--database-url", settings.database_url]
    for field, flag in (
        ("page_size", "--page-size"),
        ("workers", "--workers"),
        ("log_level", "--log-level"),
    ):
        if field in chosen:
            args += [flag, str(getattr(settings, field))]
    if not settings.index_on_start:
        args.append("--no-index")
    if not settings.watch:
        args.append("--no-watch")
    return args


def desktop_config(
    settings: Settings, command: Sequence[str] | None = None, name: str = SERVER_NAME
) -> dict[str, Any]:
    """The ``mcpServers`` entry that runs ``docshelf stdio`` with ``settings``."""
    if not settings.shelves:
        raise ValueError("no shelf to serve: pass --root DIR (or set DOCSHELF_SHELVES)")
    argv = list(command) if command is not None else docshelf_command()
    return {"mcpServers": {name: {"command": argv[0], "args": [*argv[1:], *stdio_args(settings)]}}}


def add_config_command(
    commands: argparse._SubParsersAction,  # type: ignore[type-arg]
    shelf_options: Callable[[argparse.ArgumentParser], None],
) -> None:
    """``docshelf config desktop [shelf options]``."""
    config = commands.add_parser("config", help="print configuration for MCP clients")
    kinds = config.add_subparsers(dest="config_kind", required=True, metavar="KIND")
    desktop = kinds.add_parser(
        "desktop",
        help="print the mcpServers JSON that starts this install over stdio (absolute paths)",
        description="Print the JSON a desktop MCP client (e.g. claude_desktop_config.json) "
        "needs to start this docshelf over stdio, with absolute paths; merge it into the "
        "client's configuration.",
    )
    shelf_options(desktop)
    desktop.add_argument(
        "--no-index",
        action="store_true",
        help="a replica of an index another process keeps (no indexing, watching or "
        "background conversion)",
    )
    desktop.add_argument(
        "--no-watch", action="store_true", help="do not follow the folders for changes"
    )
    desktop.add_argument("--name", default=SERVER_NAME, help="the server's key under mcpServers")


def run_config(
    args: argparse.Namespace, settings_from: Callable[[argparse.Namespace], Settings]
) -> int:
    from pydantic import ValidationError

    try:
        config = desktop_config(settings_from(args), name=args.name)
    except (ValidationError, ValueError) as exc:
        print(f"docshelf: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(config, indent=2))
    return 0
