"""The ``docshelf`` command: serve (HTTP), stdio, index, reindex.

Flags override ``DOCSHELF_*`` environment variables, which override defaults
(DESIGN D9); both feed one :class:`~app.settings.Settings`, validated at start.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, get_args, get_origin

from docshelf.app import __version__
from docshelf.app.desktop_config import add_config_command, run_config
from docshelf.app.settings import Flag, FlagGroup, Settings, setting_flags
from docshelf.app.startup import (
    CONFIGURATION,
    UNAVAILABLE,
    Sources,
    StartupError,
    build_runtime,
    listen,
    load_settings,
    open_database,
)
from docshelf.converters.library_logs import quiet_libraries

if TYPE_CHECKING:
    from docshelf.app.index_output import RunReport
    from docshelf.app.runtime import Runtime

log = logging.getLogger("docshelf")


def add_setting_flags(parser: argparse.ArgumentParser, command: str) -> None:
    """The flags of the settings ``command`` takes, from their fields (:class:`Flag`): each
    section of ``--help`` in :class:`FlagGroup`'s order, then the command's own options.
    ``--root`` and ``--shelf`` (both the ``shelves`` setting) head the shelves section."""
    sections = {group: parser.add_argument_group(group.value) for group in FlagGroup}
    _shelf_flags(sections[FlagGroup.SHELVES])
    flags = list(setting_flags(command))
    for group in [*FlagGroup, None]:
        for field, name, flag in flags:
            if flag.group is group:
                where = parser if group is None else sections[group]
                where.add_argument(name, dest=field, help=flag.help, **_argument(field, flag))


def _argument(field: str, flag: Flag) -> dict[str, Any]:
    """How argparse reads ``field``'s flag: a switch sets the opposite of the default; a
    value flag has the field's type, choices and metavar. Unset is None, so that only the
    flags given override the environment."""
    info = Settings.model_fields[field]
    if info.annotation is bool:
        return {"action": "store_const", "const": not info.default, "default": None}
    literal = get_args(info.annotation) if get_origin(info.annotation) is Literal else None
    return {
        "action": "append" if flag.repeat else "store",
        "type": info.annotation if info.annotation in (int, float) else None,
        "choices": flag.choices or literal,
        "metavar": flag.metavar,
    }


def _shelf_flags(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--root",
        dest="roots",
        action="append",
        metavar="DIR",
        help="a folder to serve; repeatable; its shelf name is the folder's name "
        "(env DOCSHELF_SHELVES)",
    )
    group.add_argument(
        "--shelf",
        dest="named",
        action="append",
        metavar="NAME=DIR",
        help="a folder (or s3://BUCKET/PREFIX, a shelf in a bucket) to serve under an "
        "explicit shelf name; repeatable",
    )


JSON_HELP = (
    "print the report as one JSON document on stdout (counts, duration_s, files_per_s, "
    "failed: [{path, reason, message}]); progress and logs stay on stderr"
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="docshelf",
        description="Serve a folder of documents as MCP resources, each in several formats.",
    )
    parser.add_argument("--version", action="version", version=f"docshelf {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser("serve", help="serve MCP over Streamable HTTP at /mcp")
    add_setting_flags(serve, "serve")

    stdio = commands.add_parser(
        "stdio",
        help="serve MCP over stdin/stdout, for desktop clients",
        description="Serve MCP over stdin/stdout. With no shelf given (no --root, --shelf or "
        "DOCSHELF_SHELVES) the shelves are the folders the client gives as roots, followed "
        "as they change (2025-era clients that declare the roots capability).",
    )
    add_setting_flags(stdio, "stdio")

    index = commands.add_parser(
        "index", help="index the shelves once, with a progress bar, then exit"
    )
    add_setting_flags(index, "index")
    index.add_argument("--force", action="store_true", help="re-convert even unchanged files")
    index.add_argument("--json", action="store_true", help=JSON_HELP)

    reindex = commands.add_parser(
        "reindex",
        help="run one reindex job in this process, exactly as POST /admin/reindex does, "
        "and print its counts (the job is recorded in the database)",
    )
    add_setting_flags(reindex, "reindex")
    reindex.add_argument(
        "--shelf-name",
        metavar="NAME",
        help="reindex only this shelf (default: every shelf; with --path and one shelf, that one)",
    )
    reindex.add_argument(
        "--path",
        dest="paths",
        action="append",
        metavar="PATH",
        help="a shelf-relative file or folder to reindex; repeatable (default: the whole shelf)",
    )
    reindex.add_argument("--force", action="store_true", help="re-convert even unchanged files")
    reindex.add_argument("--json", action="store_true", help=JSON_HELP)

    add_config_command(commands, add_setting_flags)  # docshelf config desktop
    return parser


def flag_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given as flags, by field name (each flag's ``dest`` is its field)."""
    overrides: dict[str, Any] = {}
    shelves = [*(args.roots or []), *(args.named or [])]
    if shelves:
        overrides["shelves"] = shelves
    for field, _name, _flag in setting_flags():
        value = getattr(args, field, None)
        if value is not None:
            overrides[field] = value
    return overrides


def settings_from(args: argparse.Namespace) -> Settings:
    """Flags over ``DOCSHELF_*`` over defaults; a bad value is a one-line StartupError."""
    return load_settings(flag_overrides(args))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # `docshelf` alone: what it can do, as for any unusable command line
        parser.print_help(sys.stderr)
        return CONFIGURATION
    if args.command == "config":
        return run_config(args, settings_from)
    try:
        runtime, sock = _start(args)
    except StartupError as exc:
        print(f"docshelf: {exc}", file=sys.stderr)
        return exc.status
    settings = runtime.settings
    if args.command in ("serve", "stdio"):
        report_rendering_fonts(settings.log_level)
    if sock is not None:  # serve
        if settings.processes > 1:
            from docshelf.app.supervisor import supervise

            runtime.database.dispose()  # each serving process opens its own
            return supervise(settings, sock)
        return _serve(runtime, sock)
    if args.command == "stdio":
        return _stdio(runtime)
    if args.command == "reindex":
        return _reindex(runtime, args)
    return _index(runtime, force=args.force, as_json=args.json)


def _start(args: argparse.Namespace) -> tuple[Runtime, socket.socket | None]:
    """Everything a command needs before it runs, each mistake a one-line StartupError
    (``app.startup``): the settings, the shelves, the data folder and database URL, the
    port for ``serve`` (bound before anything says it serves), then the database."""
    overrides = flag_overrides(args)
    sources = Sources(frozenset(overrides))
    settings = load_settings(overrides)
    # stdio with no shelf serves the roots its client gives (app.mcp.roots); a replica
    # serves what another process indexes, so it needs the shelves named.
    follows_roots = args.command == "stdio" and settings.index_on_start
    if not settings.shelves and not follows_roots:
        raise StartupError("no shelf to serve: pass --root DIR (or set DOCSHELF_SHELVES)")
    configure_logging(settings)
    if not settings.shelves:
        log.info(
            "no shelf given: serving the folders the client gives as roots (2025 protocol "
            "clients that declare the roots capability)"
        )
    runtime = build_runtime(settings, sources)
    sock = listen(settings, sources) if args.command == "serve" else None
    try:
        open_database(runtime, sources)
    except BaseException:
        if sock is not None:
            sock.close()
        raise
    return runtime, sock


LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s[%(process)d]: %(message)s"


def configure_logging(settings: Settings) -> None:
    """Logs to stderr at the configured level (every process of ``serve --processes``)."""
    logging.basicConfig(
        level=settings.log_level.upper(),
        stream=sys.stderr,
        format=LOG_FORMAT,
    )
    quiet_libraries()


def report_rendering_fonts(log_level: str) -> subprocess.Popen[bytes]:
    """Find the fonts rendered PDFs will use, and log them (and the scripts none
    draws), at start rather than at the first rendering.

    In a child process: the search reads every fallback font's character map
    (~40 MB and half a second for Noto CJK), which the server itself never
    needs; the conversion workers read only the maps their documents need.
    """
    # Ctrl-C reaches the child too (same process group): it ends there, quietly,
    # with SIGINT's default action rather than Python's KeyboardInterrupt traceback.
    code = (
        "import logging, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
        "logging.basicConfig(level=sys.argv[1], stream=sys.stderr, format=sys.argv[2]); "
        "from docshelf.converters.render.fonts import report_fonts; report_fonts()"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code, log_level.upper(), LOG_FORMAT],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    threading.Thread(target=child.wait, name="fonts", daemon=True).start()
    return child


def _serve(runtime: Runtime, sock: socket.socket) -> int:
    from docshelf.app.http_server import run_http

    # A server that could not start after all (its log says why): as a port or database
    # that is not there, retrying may help.
    return 0 if run_http(runtime, sock) else UNAVAILABLE


def _stdio(runtime: Runtime) -> int:
    import anyio

    from docshelf.app.transports.stdio import serve_stdio

    def stop(signum: int, _frame: object) -> None:
        # stdin is read in a thread that no signal can interrupt, so a signal ends the
        # process here: conversions in flight are abandoned and redone on the next start.
        logging.getLogger(__name__).info("signal %d: shutting down", signum)
        try:
            runtime.close()
            sys.stdout.flush()
        finally:
            os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    runtime.open()
    runtime.start_background()
    try:
        anyio.run(serve_stdio, runtime, sys.stdin.buffer, sys.stdout.buffer)
    finally:
        runtime.close()
    return 0


def _index(runtime: Runtime, *, force: bool, as_json: bool) -> int:
    from docshelf.app.index_output import RunReport, bars_if_terminal, counts_of

    started = time.perf_counter()
    runtime.open()
    try:
        with bars_if_terminal() as bars:
            if bars is not None:
                bars.follow(runtime.builder.working_on)
            report = runtime.index(
                force=force,
                progress=bars.catalog if bars else None,
                build_progress=bars.build if bars else None,
            )
    finally:
        runtime.close()
    _print_report(
        RunReport(counts_of(report), tuple(report.failures), time.perf_counter() - started),
        as_json=as_json,
    )
    return 0


def _print_report(report: RunReport, *, as_json: bool, message: str | None = None) -> None:
    """The run's last words, on stdout: the text report, or just its JSON."""
    from docshelf.app.index_output import report_json, report_text

    if as_json:
        print(report_json(report))
        return
    extra = report.extra or {}
    prefix = f"job {extra['job']} {extra['state']}: " if "job" in extra else ""
    print(report_text(report, prefix))
    if message:
        print(f"  {message}")


def _reindex(runtime: Runtime, args: argparse.Namespace) -> int:
    """One job through the same runner (and rules) as ``POST /admin/reindex``, in-process."""
    from docshelf.app.index_output import UPDATE_EVERY_S, RunReport, bars_if_terminal, counts_of
    from docshelf.storage.jobs import JobRequest, UnknownShelf
    from docshelf.storage.models import JobState

    shelf = args.shelf_name
    if shelf is None and args.paths and len(runtime.shelves) == 1:
        shelf = next(iter(runtime.shelves))
    request = JobRequest(shelf, tuple(args.paths) if args.paths else None, args.force)
    try:
        runtime.jobs.validate(request)
    except (UnknownShelf, ValueError) as exc:
        print(f"docshelf: {exc}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    runtime.open()
    try:
        with bars_if_terminal() as bars:
            if bars is not None:
                bars.follow(runtime.builder.working_on)
            job_id = runtime.jobs.submit(request, trigger="cli").job_id
            while True:
                # The bars follow the job in memory; its row is read once, when it is done.
                finished = runtime.jobs.finished_within(job_id, timeout=UPDATE_EVERY_S)
                live = runtime.jobs.live_progress(job_id)
                if bars is not None and live is not None:
                    if live.catalog[1]:
                        bars.catalog(*live.catalog)
                    if live.formats is not None:  # the catalog is current; formats follow
                        bars.build(*live.formats)
                if finished:
                    break
            job = runtime.jobs.history.get(job_id)
            assert job is not None  # submitted above, and jobs are never deleted
    except KeyboardInterrupt:
        print("\ndocshelf: interrupted; the job is recorded as interrupted", file=sys.stderr)
        return 130
    finally:
        runtime.close()
    full = runtime.jobs.report(job.id)
    report = RunReport(
        counts_of(job.counts),
        tuple(full.failures) if full is not None else job.errors,
        time.perf_counter() - started,
        {"job": job.id, "state": str(job.state), "message": job.message},
    )
    _print_report(report, as_json=args.json, message=job.message)
    return 0 if job.state == JobState.SUCCEEDED else 1
