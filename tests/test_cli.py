"""The ``docshelf`` command as a user runs it: real processes, real folders."""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

from tests.support.servers import child_env, docshelf_command, run_docshelf


def test_help_explains_every_subcommand_and_option() -> None:
    top = run_docshelf("--help")
    assert top.returncode == 0
    for command in ("serve", "stdio", "index"):
        assert command in top.stdout
    serve = run_docshelf("serve", "--help").stdout
    for option in (
        "--root",
        "--shelf",
        "--host",
        "--port",
        "--data-dir",
        "--database-url",
        "--allowed-origin",
        "--allowed-host",
        "--header-timeout",
        "--body-timeout",
        "--keep-alive-timeout",
        "--max-connections",
        "--max-header-bytes",
        "--shutdown-timeout",
        "--session-idle-timeout",
        "--max-sessions",
    ):
        assert option in serve
    assert "DOCSHELF_" in serve


def test_index_reports_counts_and_is_idempotent(sample_shelf: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = run_docshelf("index", "--root", str(sample_shelf), "--data-dir", str(data))
    assert first.returncode == 0, first.stderr
    assert "indexed 9 files: 9 added, 0 changed, 0 unchanged, 0 removed, 2 failed" in first.stdout
    assert "papers/libreoffice-writer-password.pdf: encrypted" in first.stdout
    second = run_docshelf("index", "--root", str(sample_shelf), "--data-dir", str(data))
    assert "9 unchanged" in second.stdout
    assert (data / "docshelf.db").is_file()


def test_env_configures_what_flags_do(sample_shelf: Path, tmp_path: Path) -> None:
    env = child_env(
        DOCSHELF_SHELVES=f"docs={sample_shelf}", DOCSHELF_DATA_DIR=str(tmp_path / "envdata")
    )
    done = run_docshelf("index", env=env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "envdata" / "docshelf.db").is_file()


def test_an_empty_variable_means_the_default(sample_shelf: Path, tmp_path: Path) -> None:
    """`DOCSHELF_WORKERS=` in an .env file is unset, not a number that does not parse."""
    empty = {f"DOCSHELF_{n}": "" for n in ("WORKERS", "LOG_LEVEL", "PROCESSES", "ADMIN_TOKEN")}
    env = child_env(
        **empty, DOCSHELF_SHELVES=str(sample_shelf), DOCSHELF_DATA_DIR=str(tmp_path / "data")
    )
    done = run_docshelf("index", env=env)
    assert done.returncode == 0, done.stderr
    assert "indexed 9 files" in done.stdout


def test_no_shelf_is_a_clear_error() -> None:
    done = run_docshelf("index")
    assert done.returncode == 2
    assert "no shelf to serve: pass --root DIR" in done.stderr


def test_bad_shelf_name_is_a_clear_error(sample_shelf: Path, tmp_path: Path) -> None:
    done = run_docshelf(
        "index", "--shelf", f"Bad Name={sample_shelf}", "--data-dir", str(tmp_path / "d")
    )
    assert done.returncode == 2
    assert "lowercase letters" in done.stderr


def test_python_dash_m_app_is_the_same_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "docshelf.app", "--version"],
        capture_output=True,
        text=True,
        env=child_env(),
    )
    assert done.returncode == 0 and done.stdout.startswith("docshelf ")


def test_serving_logs_the_rendering_fonts_at_start(sample_shelf: Path, tmp_path: Path) -> None:
    # Issue #12: the fonts rendered PDFs use are found when the server starts, and
    # it says which, rather than at the first rendering in some worker.
    process = subprocess.Popen(
        docshelf_command("stdio", "--root", str(sample_shelf), "--data-dir", str(tmp_path)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    lines: list[str] = []
    try:
        assert process.stderr is not None
        reader = threading.Thread(target=lambda: lines.extend(process.stderr or ()), daemon=True)
        reader.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any("PDF rendering fonts:" in x for x in lines):
            time.sleep(0.05)
        assert any("PDF rendering fonts: DejaVuSans.ttf" in line for line in lines), lines
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=60)


def test_ctrl_c_during_the_font_report_ends_it_without_a_traceback() -> None:
    # Ctrl-C reaches the whole process group, the font report's child included: it
    # must end as quietly as the server (test_shutdown's no-traceback promise).
    code = (
        "import signal, time\n"
        "from docshelf.app.cli import report_rendering_fonts\n"
        "child = report_rendering_fonts('info')\n"
        "time.sleep(0.3)\n"
        "child.send_signal(signal.SIGINT)\n"
        "print(child.wait())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=child_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(-signal.SIGINT)  # ended by the signal, as a server is
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr


# -- `docshelf index` output (issue #14, item 3) ---------------------------------------------

BROKEN = "  papers/broken.pdf: corrupt: not a readable PDF"
ENCRYPTED = "  papers/libreoffice-writer-password.pdf: encrypted: the PDF needs a password to open"


def _failed_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("  ")]


def test_index_through_a_pipe_names_every_failed_file_with_its_reason_once(
    sample_shelf: Path, tmp_path: Path
) -> None:
    # A run without a terminal (CI, a pipe) has no bar and no carriage returns; it ends
    # with the counts and each failed file, `path: reason: message`, the reason once.
    # The second run finds both files unchanged and must still name them.
    data = tmp_path / "data"
    for run_number in (1, 2):
        done = run_docshelf("index", "--root", str(sample_shelf), "--data-dir", str(data))
        assert done.returncode == 0, done.stderr
        assert "\r" not in done.stdout + done.stderr
        assert "2 failed" in done.stdout, (run_number, done.stdout)
        failed = _failed_lines(done.stdout)
        assert len(failed) == 2, (run_number, done.stdout)
        assert failed[0].startswith(BROKEN), (run_number, failed)
        assert failed[1] == ENCRYPTED, (run_number, failed)


def test_a_failure_stored_by_an_older_version_prints_its_reason_once(
    sample_shelf: Path, tmp_path: Path
) -> None:
    # Versions before the catalog-first queue stored ConversionError's str(), which is
    # "reason: message", as the message: `corrupt: corrupt: not a readable PDF`.
    import sqlite3

    from alembic import command

    from docshelf.storage.database import Database, alembic_config

    data = tmp_path / "data"
    assert (
        run_docshelf("index", "--root", str(sample_shelf), "--data-dir", str(data)).returncode == 0
    )
    database = Database(f"sqlite:///{data / 'docshelf.db'}")
    command.downgrade(alembic_config(database.engine), "0008")
    database.dispose()
    with sqlite3.connect(data / "docshelf.db") as db:
        db.execute(
            "UPDATE documents SET error_message = error_reason || ': ' || error_message "
            "WHERE error_reason IS NOT NULL"
        )
    done = run_docshelf("index", "--root", str(sample_shelf), "--data-dir", str(data))
    assert done.returncode == 0, done.stderr
    failed = _failed_lines(done.stdout)
    assert failed[0].startswith(BROKEN) and failed[1] == ENCRYPTED, failed
    with sqlite3.connect(data / "docshelf.db") as db:
        messages = dict(
            db.execute("SELECT path, error_message FROM documents WHERE error_reason IS NOT NULL")
        )
    assert messages["papers/libreoffice-writer-password.pdf"] == "the PDF needs a password to open"


def test_index_json_prints_one_document_on_stdout(sample_shelf: Path, tmp_path: Path) -> None:
    done = run_docshelf(
        "index", "--json", "--root", str(sample_shelf), "--data-dir", str(tmp_path / "d")
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # the whole of stdout: nothing before or after it
    assert report["counts"] == {
        "seen": 9,
        "added": 9,
        "changed": 0,
        "unchanged": 0,
        "removed": 0,
        "failed": 2,
        "unsupported": 0,
    }
    assert report["duration_s"] > 0 and report["files_per_s"] > 0
    assert [(f["path"], f["reason"]) for f in report["failed"]] == [
        ("papers/broken.pdf", "corrupt"),
        ("papers/libreoffice-writer-password.pdf", "encrypted"),
    ]
    assert report["failed"][1]["message"] == "the PDF needs a password to open"
    assert "WARNING" in done.stderr  # the logs are still there, on stderr


def test_reindex_json_names_the_job_and_its_failed_files(
    sample_shelf: Path, tmp_path: Path
) -> None:
    args = ("--root", str(sample_shelf), "--data-dir", str(tmp_path / "d"))
    done = run_docshelf("reindex", "--json", *args)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["state"] == "succeeded" and isinstance(report["job"], int)
    assert report["counts"]["seen"] == 9 and report["counts"]["failed"] == 2
    assert {f["path"]: f["reason"] for f in report["failed"]} == {
        "papers/broken.pdf": "corrupt",
        "papers/libreoffice-writer-password.pdf": "encrypted",
    }
    text = run_docshelf("reindex", *args)  # unchanged now: the failed files are still named
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith(f"job {report['job'] + 1} succeeded: indexed 9 files:")
    failed = _failed_lines(text.stdout)
    assert failed[0].startswith(BROKEN) and failed[1] == ENCRYPTED, text.stdout


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _run_in_terminal(*args: str, timeout: float = 60) -> tuple[int, str]:
    """Run docshelf with a pseudo-terminal (120 columns) as stdin, stdout and stderr."""
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    process = subprocess.Popen(
        docshelf_command(*args),
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=child_env(TERM="xterm-256color"),
    )
    os.close(follower)
    output = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: every copy of the terminal's other end is closed
                break
            if not chunk:
                break
            output += chunk
        return process.wait(timeout=10), output.decode("utf-8", "replace")
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()


def test_index_on_a_terminal_keeps_log_lines_off_the_bars(
    sample_shelf: Path, tmp_path: Path
) -> None:
    # Two bars, updated per file; the conversion warnings (broken and encrypted PDFs,
    # built first as the smallest) print above them, never on a bar's line:
    # not `64/3132026-11-23 … WARNING …`.
    for i in range(150):
        (sample_shelf / "notes" / f"part-{i % 3}").mkdir(parents=True, exist_ok=True)
        (sample_shelf / "notes" / f"part-{i % 3}" / f"note-{i:03d}.md").write_text(
            f"# Note {i}\n\n" + "Some words of a note. " * 200
        )
    status, output = _run_in_terminal(
        "index", "--root", str(sample_shelf), "--data-dir", str(tmp_path / "d")
    )
    assert status == 0, output
    lines = [ANSI.sub("", part) for part in re.split(r"[\r\n]", output)]
    logged = [line for line in lines if " WARNING " in line]
    assert any("broken.pdf" in line for line in logged), output
    for line in logged:
        assert not any(bar in line for bar in ("cataloguing", "building formats", "files/s")), line
    built = {
        int(m.group(1))
        for line in lines
        if (m := re.search(r"building formats\s.*?(\d+)/159\b", line))
    }
    assert len(built) >= 4, built  # counted up as documents were built, not in big steps
    assert any(n % 25 and n % 64 for n in built), built
    assert any(re.search(r"cataloguing\s.*159/159 .*files/s", line) for line in lines), output
    assert any(re.search(r"\b0 to build\b", line) for line in lines), output
    report = [line for line in lines if line.startswith("  papers/")]
    assert report[0].startswith(BROKEN) and report[1] == ENCRYPTED, report


def test_index_on_a_terminal_names_a_file_that_takes_more_than_two_seconds(
    tmp_path: Path,
) -> None:
    # Issue 24, item 14: the bar sat at "1 files/s" for two minutes with no hint of why.
    # A file converting for longer than a couple of seconds is named under the bars, with
    # how long it has taken so far.
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "small.md").write_text("# Small\n\nA few words.\n")
    section = "## Section {n}\n\nSome **bold** text and a [link](#x).\n\n| a | b |\n|---|---|\n\n"
    # About 1 MB of Markdown: several seconds of conversion here, more than 2 s anywhere.
    (shelf / "big.md").write_text("".join(section.format(n=n) for n in range(10_000)))
    status, output = _run_in_terminal(
        "index", "--root", str(shelf), "--data-dir", str(tmp_path / "d"), timeout=180
    )
    assert status == 0, output
    lines = [ANSI.sub("", part) for part in re.split(r"[\r\n]", output)]
    named = [
        m
        for line in lines
        if (m := re.search(r"still converting big\.md \((\d+):(\d\d):(\d\d)\)", line))
    ]
    assert named, output[-3000:]
    # Named once it has taken 2 s, with the time so far (rich's h:mm:ss, as the bars').
    assert all(int(h) * 3600 + int(m) * 60 + int(s) >= 2 for h, m, s in (n.groups() for n in named))
    assert "indexed 2 files" in output
