"""``docshelf config desktop``: the stdio entry a desktop MCP client needs, for this install.

Desktop clients (Claude Desktop, Cursor, VS Code, Zed, ...; their formats and files are in
:mod:`app.desktop_clients`) start a server as ``command`` + ``args``, with almost none of
the user's environment and from a working directory of their own. So the snippet
names the ``docshelf`` script of the running install by absolute path (or, run from
``uvx``'s or ``pipx run``'s cache, the launcher: :mod:`app.launcher`) and carries every
setting as a flag with absolute paths: nothing is left to ``PATH``, ``DOCSHELF_*``
variables or the current directory. ``--install`` merges it into the client's file
(:mod:`app.config_install`) instead of printing it.

Desktop clients negotiate no content, so the entry also carries a text-first default for
them (:data:`DESKTOP_DEFAULT_FEATURES`, as ``--default-features``) unless told otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from docshelf.app.config_install import InstallError, Outcome, install_entry
from docshelf.app.desktop_clients import CLIENTS, DEFAULT_CLIENT, PLATFORM_NAMES, Client
from docshelf.app.launcher import launch_command
from docshelf.app.settings import Settings
from docshelf.storage.s3 import is_s3_url
from docshelf.storage.uris import shelf_name_for

SERVER_NAME = "docshelf"
# What a desktop client that negotiates nothing gets (DOCSHELF_DEFAULT_FEATURES): the note
# it reads as the one text a model reads best, and no PDF rendered for it. format!=pdf would
# only move the PDF last, still rendered and sent; compact keeps the first representation.
DESKTOP_DEFAULT_FEATURES = "format=markdown,verbosity=compact"


def stdio_args(settings: Settings) -> list[str]:
    """``stdio`` and the flags that reproduce ``settings``: shelves and the negotiation
    default always (:data:`DESKTOP_DEFAULT_FEATURES` unless set), the rest when set."""
    args = ["stdio"]
    for name, location in settings.shelf_specs():
        if is_s3_url(location):  # a bucket shelf: its URL as given (AWS_* come from the env)
            args += ["--shelf", f"{name}={location}"]
            continue
        path = Path(location).expanduser().absolute()
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
    # Desktop clients negotiate nothing: text first, unless the settings say otherwise.
    tags = settings.default_features if "default_features" in chosen else DESKTOP_DEFAULT_FEATURES
    args += ["--default-features", tags]
    if not settings.index_on_start:
        args.append("--no-index")
    if not settings.watch:
        args.append("--no-watch")
    if not settings.ignore_files:
        args.append("--no-ignore-files")
    return args


def desktop_entry(
    settings: Settings, command: Sequence[str] | None = None, client: Client | None = None
) -> dict[str, Any]:
    """The server entry, in ``client``'s shape, that runs ``docshelf stdio`` with ``settings``."""
    if not settings.shelves:
        raise ValueError("no shelf to serve: pass --root DIR (or set DOCSHELF_SHELVES)")
    argv = list(command) if command is not None else launch_command().argv
    return (client or CLIENTS[DEFAULT_CLIENT]).entry([*argv, *stdio_args(settings)])


def desktop_config(
    settings: Settings,
    command: Sequence[str] | None = None,
    name: str = SERVER_NAME,
    client: Client | None = None,
) -> dict[str, Any]:
    """What to merge into ``client``'s file (Claude Desktop's by default): our entry, keyed."""
    client = client or CLIENTS[DEFAULT_CLIENT]
    return {client.servers_key: {name: desktop_entry(settings, command, client)}}


def add_config_command(
    commands: argparse._SubParsersAction,  # type: ignore[type-arg]
    setting_flags: Callable[[argparse.ArgumentParser, str], None],
) -> None:
    """``docshelf config desktop [setting flags]``; ``setting_flags`` adds those a command
    takes (:func:`app.cli.add_setting_flags`)."""
    config = commands.add_parser("config", help="print configuration for MCP clients")
    kinds = config.add_subparsers(dest="config_kind", required=True, metavar="KIND")
    desktop = kinds.add_parser(
        "desktop",
        help="the JSON a desktop client needs to start this install over stdio: "
        "print it, or --install it",
        description="Print the JSON a desktop MCP client needs to start this docshelf over "
        "stdio, with absolute paths, in the format of the client named by --client; or, with "
        "--install, merge it into that client's configuration file (keeping a .bak of it).",
    )
    setting_flags(desktop, "config desktop")  # the shelves' and --no-index, --no-watch
    desktop.add_argument(
        "--name", default=SERVER_NAME, help="the server's name in the client's configuration"
    )
    desktop.add_argument(
        "--default-features",
        metavar="TAGS",
        help="content negotiation: the feature tags a client that negotiates none gets, "
        f"comma-separated as a client sends them (default {DESKTOP_DEFAULT_FEATURES}: the "
        "Markdown alone, no rendered PDF; '' for every representation; env "
        "DOCSHELF_DEFAULT_FEATURES)",
    )
    desktop.add_argument(
        "--client",
        choices=list(CLIENTS),
        default=DEFAULT_CLIENT,
        help="whose format and file: "
        + ", ".join(f"{c.name} ({c.label})" for c in CLIENTS.values())
        + f"; default {DEFAULT_CLIENT}",
    )
    desktop.add_argument(
        "--install",
        action="store_true",
        help="merge the entry into the client's configuration file instead of printing it: "
        "other servers and keys stay, an entry of the same name is replaced, the previous "
        "file is kept as FILE.bak",
    )
    desktop.add_argument(
        "--config-file",
        type=Path,
        metavar="PATH",
        help="with --install: this file instead of the client's usual one",
    )


def run_config(
    args: argparse.Namespace, settings_from: Callable[[argparse.Namespace], Settings]
) -> int:
    from pydantic import ValidationError

    client = CLIENTS[args.client]
    if args.config_file is not None and not args.install:
        print("docshelf: --config-file is for --install", file=sys.stderr)
        return 2
    try:
        launch = launch_command()
        config = desktop_config(settings_from(args), launch.argv, name=args.name, client=client)
    except (ValidationError, ValueError) as exc:
        print(f"docshelf: {exc}", file=sys.stderr)
        return 2
    if launch.note:
        print(launch.note, file=sys.stderr)
    if not args.install:
        print(json.dumps(config, indent=2, ensure_ascii=False))
        return 0
    return install(client, args.name, config[client.servers_key][args.name], args.config_file)


def install(client: Client, name: str, entry: dict[str, Any], config_file: Path | None) -> int:
    """``--install``: merge ``entry`` into the client's file and say what happened."""
    path = config_file or client.config_file(sys.platform)
    if path is None:
        where = PLATFORM_NAMES.get(sys.platform, sys.platform)
        print(
            f"docshelf: {client.label} has no documented configuration file on {where}; "
            "pass --config-file PATH",
            file=sys.stderr,
        )
        return 2
    try:
        done = install_entry(path, client.servers_key, name, entry)
    except InstallError as exc:
        print(f"docshelf: {exc}; nothing was changed", file=sys.stderr)
        print(f'docshelf: add this under "{client.servers_key}" by hand:', file=sys.stderr)
        print(json.dumps({name: entry}, indent=2, ensure_ascii=False))
        return 2
    if done.outcome is Outcome.UNCHANGED:
        print(f'{done.path} already has this "{name}" server: nothing written')
        return 0
    if done.outcome is Outcome.CREATED:
        print(f'created {done.path} with the "{name}" server')
    else:
        print(f'{done.outcome.value} the "{name}" server in {done.path}')
        print(f"the previous file is kept as {done.backup}")
    print(f"restart {client.label} to load it")
    return 0
