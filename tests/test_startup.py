"""Every start-up mistake in one line that says what to change (issue 24, items 9-11, 13).

Each test runs the real ``docshelf`` command and holds it to exactly one line on
stderr, ``docshelf: <what is wrong>; <what to change>``, no traceback, and the exit
status: 2 when a setting must change, 3 when something a setting names is not there
now (a port in use, a database that cannot be reached), so retrying may help.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from docshelf.storage.database import head_revision
from tests.support.permissions import ordinary_permissions
from tests.support.servers import child_env, free_port, run_docshelf

CONFIGURATION = 2
UNAVAILABLE = 3
URL_FORM = "postgresql+psycopg://USER:PASSWORD@HOST:PORT/DATABASE or sqlite:///PATH"


def one_line(done: subprocess.CompletedProcess[str], status: int) -> str:
    """The one line ``done`` wrote on stderr, once its exit status is checked."""
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert done.returncode == status, (done.returncode, done.stderr)
    return lines[0]


# The commands that open the database: each must say the same one line.
COMMANDS = {
    "index": ("index",),
    "stdio": ("stdio",),
    "serve": ("serve",),
    "serve --processes 2": ("serve", "--processes", "2"),
}


def command(name: str, shelf: Path, data: Path, *extra: str) -> tuple[str, ...]:
    args = (*COMMANDS[name], "--root", str(shelf), "--data-dir", str(data), *extra)
    return (*args, "--port", str(free_port())) if name.startswith("serve") else args


@pytest.fixture
def shelf(tmp_path: Path) -> Path:
    folder = tmp_path / "shelf"
    folder.mkdir()
    (folder / "note.md").write_text("# A note\n\nWords.\n")
    return folder


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on: connecting to it is refused at once."""
    return free_port()


# -- the database URL (item 9) ----------------------------------------------------------------


@pytest.mark.parametrize("name", list(COMMANDS))
def test_postgres_spelling_names_the_scheme_to_write(
    name: str, shelf: Path, tmp_path: Path
) -> None:
    url = "postgres://docshelf:secret@127.0.0.1:5432/docshelf"
    done = run_docshelf(
        *command(name, shelf, tmp_path / "data"),
        env=child_env(DOCSHELF_DATABASE_URL=url),
        timeout=60,
    )
    assert one_line(done, CONFIGURATION) == (
        "docshelf: DOCSHELF_DATABASE_URL starts with postgres://, which SQLAlchemy does not "
        "accept; write postgresql+psycopg:// instead (the rest unchanged)"
    )


def test_a_database_url_from_the_flag_is_named_as_the_flag(shelf: Path, tmp_path: Path) -> None:
    done = run_docshelf(
        *command("index", shelf, tmp_path / "data"),
        "--database-url",
        "postgres://docshelf:secret@127.0.0.1:5432/docshelf",
        timeout=60,
    )
    assert one_line(done, CONFIGURATION) == (
        "docshelf: --database-url starts with postgres://, which SQLAlchemy does not "
        "accept; write postgresql+psycopg:// instead (the rest unchanged)"
    )


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("not a url", f"DOCSHELF_DATABASE_URL is not a database URL; write {URL_FORM}"),
        (
            "mongodb://docshelf:secret@127.0.0.1/docshelf",
            "DOCSHELF_DATABASE_URL names mongodb://, a database SQLAlchemy does not know; "
            f"write {URL_FORM}",
        ),
        (
            "mysql://docshelf:secret@127.0.0.1/docshelf",
            "DOCSHELF_DATABASE_URL needs the Python module MySQLdb (for mysql://), which is "
            "not installed; install it where docshelf runs",
        ),
    ],
    ids=["malformed", "unknown-database", "missing-driver"],
)
def test_a_database_url_that_cannot_work_says_what_to_write(
    url: str, message: str, shelf: Path, tmp_path: Path
) -> None:
    done = run_docshelf(
        *command("index", shelf, tmp_path / "data"),
        env=child_env(DOCSHELF_DATABASE_URL=url),
        timeout=60,
    )
    assert one_line(done, CONFIGURATION) == f"docshelf: {message}"
    assert "secret" not in done.stderr


@pytest.mark.parametrize("name", list(COMMANDS))
def test_an_unreachable_database_names_the_host_it_could_not_reach(
    name: str, shelf: Path, tmp_path: Path, closed_port: int
) -> None:
    url = f"postgresql+psycopg://docshelf:secret@127.0.0.1:{closed_port}/docshelf"
    done = run_docshelf(
        *command(name, shelf, tmp_path / "data"),
        env=child_env(DOCSHELF_DATABASE_URL=url),
        timeout=60,
    )
    assert one_line(done, UNAVAILABLE) == (
        f"docshelf: cannot connect to the database at 127.0.0.1:{closed_port}: Connection "
        "refused; check DOCSHELF_DATABASE_URL, and that the database is running"
    )
    assert "secret" not in done.stderr


# -- the data folder (item 9) -----------------------------------------------------------------


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        yield folder
    finally:
        folder.chmod(0o755)


def test_an_unwritable_data_folder_names_the_folder_and_the_uid(
    shelf: Path, read_only: Path
) -> None:
    uid = os.geteuid()
    for data, message in (
        (read_only / "data", f"uid {uid} may not write to {read_only}, so the data folder "),
        (read_only, f"uid {uid} may not write to the data folder {read_only}"),
    ):
        done = run_docshelf(
            *command("index", shelf, data), timeout=60, preexec_fn=ordinary_permissions()
        )
        if data != read_only:
            message += f"{data} cannot be created"
        assert one_line(done, CONFIGURATION) == (
            f"docshelf: {message}; choose another folder with --data-dir, "
            f"or let uid {uid} write there"
        )


def test_a_data_folder_that_is_a_file_says_which_path_is_the_file(
    shelf: Path, tmp_path: Path
) -> None:
    file = tmp_path / "a-file"
    file.write_text("not a folder")
    for data, message in (
        (file / "data", f"{file} is a file, so the data folder {file / 'data'} cannot be created"),
        (file, f"the data folder {file} is a file"),
    ):
        env = child_env(DOCSHELF_DATA_DIR=str(data))
        done = run_docshelf("index", "--root", str(shelf), env=env, timeout=60)
        assert one_line(done, CONFIGURATION) == (
            f"docshelf: {message}; choose another folder with DOCSHELF_DATA_DIR"
        )


# -- the port (item 10) -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["serve", "serve --processes 2"])
def test_a_port_in_use_is_one_line_naming_the_port_flag(
    name: str, shelf: Path, tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = (*COMMANDS[name], "--root", str(shelf), "--data-dir", str(tmp_path / "data"))
        done = run_docshelf(*args, "--port", str(port), timeout=60)
    # One line: nothing said it was serving, and the port is named before anything else.
    assert one_line(done, UNAVAILABLE) == (
        f"docshelf: port {port} on 127.0.0.1 is in use; choose another with --port, "
        "or stop what listens there"
    )


# -- settings (item 11) -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variables", "flags", "message"),
    [
        (
            {"DOCSHELF_PORT": "abc"},
            (),
            "DOCSHELF_PORT=abc is not valid: expected a whole number from 0 to 65535",
        ),
        (
            {},
            ("--port", "70000"),
            "--port 70000 is not valid: expected a whole number from 0 to 65535",
        ),
        ({}, ("--workers", "0"), "--workers 0 is not valid: expected a whole number from 1 to 64"),
        (
            {"DOCSHELF_WATCH": "maybe"},
            (),
            "DOCSHELF_WATCH=maybe is not valid: expected true or false",
        ),
        (
            {"DOCSHELF_CONVERT_TIMEOUT": "0"},
            (),
            "DOCSHELF_CONVERT_TIMEOUT=0 is not valid: expected a number above 0",
        ),
        (
            {"DOCSHELF_RENDER": "sometimes"},
            (),
            "DOCSHELF_RENDER=sometimes is not valid: expected lazy or eager",
        ),
        (
            {"DOCSHELF_LOG_LEVEL": "very loud"},
            (),
            "DOCSHELF_LOG_LEVEL='very loud' is not valid: "
            "log level must be debug, info, warning, error or critical",
        ),
    ],
    ids=[
        "env-port",
        "flag-port",
        "flag-workers",
        "env-bool",
        "env-float",
        "env-choice",
        "env-level",
    ],
)
def test_a_bad_setting_names_its_variable_or_flag_and_what_it_takes(
    variables: dict[str, str], flags: tuple[str, ...], message: str, shelf: Path, tmp_path: Path
) -> None:
    done = run_docshelf(
        "serve",
        "--root",
        str(shelf),
        "--data-dir",
        str(tmp_path / "data"),
        *flags,
        env=child_env(**variables),
        timeout=60,
    )
    assert one_line(done, CONFIGURATION) == f"docshelf: {message}"


def test_config_desktop_names_a_bad_variable_in_one_line(shelf: Path) -> None:
    done = run_docshelf(
        "config", "desktop", "--root", str(shelf), env=child_env(DOCSHELF_WORKERS="many")
    )
    assert one_line(done, CONFIGURATION) == (
        "docshelf: DOCSHELF_WORKERS=many is not valid: expected a whole number from 1 to 64"
    )


def test_no_command_prints_the_commands_and_exits_2() -> None:
    done = run_docshelf()
    assert done.returncode == CONFIGURATION
    assert done.stdout == ""
    assert done.stderr.startswith("usage: docshelf")
    for name in ("serve", "stdio", "index", "reindex", "config"):
        assert f"    {name} " in done.stderr, done.stderr


def test_a_missing_shelf_folder_says_it_does_not_exist(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    done = run_docshelf("index", "--root", str(missing), "--data-dir", str(tmp_path / "d"))
    assert one_line(done, CONFIGURATION) == f"docshelf: shelf 'nowhere': {missing} does not exist"
    file = tmp_path / "notes.txt"
    file.write_text("a file")
    done = run_docshelf("index", "--shelf", f"notes={file}", "--data-dir", str(tmp_path / "d"))
    assert one_line(done, CONFIGURATION) == (
        f"docshelf: shelf 'notes': {file} is not a folder (docshelf serves folders, not files)"
    )


# -- quiet by default (item 13) ---------------------------------------------------------------


def test_a_first_start_says_the_database_was_upgraded_in_one_line(
    shelf: Path, tmp_path: Path
) -> None:
    args = ("index", "--root", str(shelf), "--data-dir", str(tmp_path / "data"))
    first = run_docshelf(*args)
    assert first.returncode == 0, first.stderr
    assert "alembic" not in first.stderr, first.stderr
    upgraded = [line for line in first.stderr.splitlines() if "database upgraded" in line]
    assert len(upgraded) == 1, first.stderr
    assert upgraded[0].endswith(f"database upgraded to {head_revision()} (was empty)")
    again = run_docshelf(*args)
    assert again.returncode == 0, again.stderr
    assert again.stderr == "", again.stderr  # nothing to upgrade, nothing to say


def test_rendering_a_pdf_logs_nothing_from_fonttools() -> None:
    # Every docshelf process sets its logging up the same way (the CLI's, and each
    # conversion worker's library levels); fpdf2 subsets the embedded fonts through
    # fontTools, which logs ~20 INFO lines per font of every rendered PDF.
    code = (
        "from docshelf.app.cli import configure_logging\n"
        "from docshelf.app.settings import Settings\n"
        "from docshelf.converters.render import render_markdown_pdf\n"
        "configure_logging(Settings())\n"
        "pdf = render_markdown_pdf('# Title\\n\\nSome **bold** words and `code`.')\n"
        "assert pdf.startswith(b'%PDF')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=child_env()
    )
    assert done.returncode == 0, done.stderr
    assert "fontTools" not in done.stderr, done.stderr[:2000]
