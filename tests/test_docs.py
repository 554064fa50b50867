"""The README and the docs/ pages tell the truth: what they show is checked against the code.

Every ``docshelf`` command they show parses with today's options, every path they name
exists, every ``curl`` reaches a route of the admin API with its method, every link
lands on a file and heading, every ``DOCSHELF_*`` variable is a setting (and every
setting is documented), and the README's two commands and its client example run as
written, printing what the README says they print.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.routing import Route

from bench.__main__ import BENCHMARKS
from docshelf.app.cli import build_parser
from tests.support.markdown import PAGES, anchors, fenced_blocks, prose
from tests.support.paths import REPO
from tests.support.servers import child_env, serve
from tests.support.settings import SETTING_FLAGS, SETTING_VARIABLES

README = REPO / "README.md"
SHELL = {"sh", "bash", "shell", "console"}
REDIRECT = re.compile(r"\d*[<>]")
# Variables of the test suite and benchmarks, not of the server.
DEVELOPMENT_VARIABLES = {
    "DOCSHELF_SHARED",
    "DOCSHELF_SLOW_TESTS",
    "DOCSHELF_TEST_DATABASE_URL",
    "DOCSHELF_UPDATE_GOLDEN",
}
# Settings a deployer has no reason to change, left out of the settings table on purpose.
UNDOCUMENTED_SETTINGS: set[str] = set()


def page_id(page: Path) -> str:
    return str(page.relative_to(REPO))


def shell_commands(text: str) -> Iterator[tuple[int, list[str]]]:
    """(line, argv) of each simple command in the page's shell blocks, environment
    assignments and redirections dropped; ``&&``, ``;`` and ``|`` separate commands."""
    for block in fenced_blocks(text):
        if block.info not in SHELL:
            continue
        joined = re.sub(r"\\\n", " ", block.body)
        for offset, line in enumerate(joined.splitlines()):
            for part in re.split(r"&&|;|\|", line):
                argv = [w for w in shlex.split(part, comments=True) if not REDIRECT.match(w)]
                while argv and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", argv[0]):
                    argv.pop(0)
                if argv:
                    yield block.line + offset, argv


def inline_commands(text: str) -> Iterator[str]:
    """``docshelf …`` code spans of the prose (tables), optional parts' brackets removed."""
    for span in re.findall(r"`(docshelf [^`]+)`", prose(text)):
        yield span.replace("[", "").replace("]", "")


#: Placeholders the pages write for numbers, and a number argparse accepts in their place.
NUMBER_PLACEHOLDERS = {"N": "2", "SECONDS": "10", "PORT": "8000"}


def docshelf_argv(argv: list[str]) -> list[str] | None:
    """The arguments after ``docshelf`` (or ``python -m docshelf.app``), None for other commands."""
    if argv[0] == "docshelf":
        return argv[1:]
    if argv[:3] in (["python", "-m", "docshelf.app"], ["python3", "-m", "docshelf.app"]):
        return argv[3:]
    return None


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_docshelf_command_shown_parses_with_todays_options(page: Path) -> None:
    text = page.read_text()
    shown = [(line, docshelf_argv(argv)) for line, argv in shell_commands(text)]
    shown += [(0, shlex.split(span)[1:]) for span in inline_commands(text)]
    for line, args in shown:
        if args is None or "--help" in args or "--version" in args:
            continue
        args = [NUMBER_PLACEHOLDERS.get(word, word) for word in args]
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors), contextlib.suppress(SystemExit):
            build_parser().parse_args(args)
        assert not errors.getvalue(), (
            f"{page_id(page)}:{line}: docshelf {shlex.join(args)}\n{errors.getvalue()}"
        )


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_script_and_benchmark_shown_exists(page: Path) -> None:
    for line, argv in shell_commands(page.read_text()):
        for word in argv:
            if re.match(r"(\.ci|deploy|bench|tests|examples|docs)/", word):
                assert (REPO / word.split("::")[0]).exists(), f"{page_id(page)}:{line}: {word}"
        if argv[:3] == ["python", "-m", "bench"]:
            assert argv[3] in BENCHMARKS, f"{page_id(page)}:{line}: no benchmark {argv[3]!r}"


def admin_routes() -> list[Route]:
    from docshelf.app.admin.routes import router

    return [route for route in router.routes if isinstance(route, Route)]


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_curl_shown_reaches_a_route_with_its_method(page: Path, tmp_path: Path) -> None:
    routes = None
    for line, argv in shell_commands(page.read_text()):
        if argv[0] != "curl":
            continue
        routes = routes or admin_routes()
        method = argv[argv.index("-X") + 1] if "-X" in argv else "GET"
        url = next(word for word in argv if word.startswith("http"))
        path = re.sub(r"^https?://[^/]+", "", url).split("?")[0]
        if path in ("/metrics", "/healthz", "/readyz", "/openapi.json", "/mcp"):
            continue
        assert any(
            route.path_regex.match(path) and method in (route.methods or ()) for route in routes
        ), f"{page_id(page)}:{line}: no admin route for {method} {path}"


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_relative_link_lands_on_a_file_and_heading(page: Path) -> None:
    text = prose(page.read_text())
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.exists(), f"{page_id(page)}: link to missing {target}"
        if anchor and file.suffix == ".md":
            assert anchor in anchors(file.read_text()), f"{page_id(page)}: no heading #{anchor}"


# `tests/x.py::test_name` and, after it in the same cell, `::test_other` of the same file.
TEST_REFERENCE = re.compile(r"`(tests/[\w/]+\.py)?(?:::(\w+))?(?:\[[^\]`]*\])?`")


def test_every_test_a_guarantee_names_exists() -> None:
    """docs/guarantees.md proves each guarantee by naming its tests: each file is there and
    holds a test of that name (a renamed or deleted test would leave a promise unproved)."""
    missing = []
    for row in (REPO / "docs" / "guarantees.md").read_text().splitlines():
        module: Path | None = None
        for path, name in TEST_REFERENCE.findall(row):
            if path:
                module = REPO / path
                if not module.is_file():
                    missing.append(path)
                    continue
            if name and (module is None or not re.search(rf"def {name}\(", module.read_text())):
                missing.append(f"{module}::{name}")
    assert not missing, missing


def test_every_docshelf_variable_named_anywhere_is_a_setting() -> None:
    sources = [*PAGES, REPO / ".env.example", REPO / "docker-compose.yml", REPO / "Dockerfile"]
    known = SETTING_VARIABLES | DEVELOPMENT_VARIABLES
    for source in sources:
        for name in set(re.findall(r"\bDOCSHELF_[A-Z_]+[A-Z]\b", source.read_text())):
            assert name in known, f"{source.relative_to(REPO)} names {name}, which is no setting"


def test_every_setting_is_in_the_settings_table() -> None:
    table = (REPO / "docs" / "configuration.md").read_text()
    missing = {
        name for name in SETTING_VARIABLES - UNDOCUMENTED_SETTINGS if f"`{name}`" not in table
    }
    assert not missing, f"docs/configuration.md does not document {sorted(missing)}"


def test_each_setting_row_names_the_flag_the_setting_declares() -> None:
    """A setting's flag comes from its field (app.settings.Flag): its row in the table
    (the one that names its variable first) names that flag."""
    rows = (REPO / "docs" / "configuration.md").read_text().splitlines()
    wrong = []
    for variable, flag in sorted(SETTING_FLAGS):
        row = next(r for r in rows if r.startswith("|") and f"`{variable}`" in r)
        if f"`{flag}" not in row.split("|")[1]:
            wrong.append(f"{variable}: {flag}")
    assert not wrong, f"docs/configuration.md's settings table lacks these flags: {wrong}"


# --- the README's first screen ------------------------------------------------------------


def readme_blocks(info: str) -> list[str]:
    return [block.body for block in fenced_blocks(README.read_text()) if block.info == info]


def test_the_readme_starts_the_sample_shelf_and_ci_runs_its_test_command() -> None:
    start, tests = readme_blocks("sh")[:2]
    assert start.strip() == "pip install -e . && docshelf serve --root examples/shelf"
    assert (REPO / "examples" / "shelf").is_dir()
    ci = [line for line in (REPO / ".ci" / "run").read_text().splitlines() if line.strip()]
    assert ci[-1] == tests.strip(), ".ci/run must end with the README's test command"


def test_the_readme_client_example_prints_what_the_readme_shows(tmp_path: Path) -> None:
    """The Quick start's server (the sample shelf) and the example as written, with only
    the port changed: it prints every document and the formats of one."""
    example = readme_blocks("python")[0]
    expected = readme_blocks("text")[0]
    with serve(REPO / "examples" / "shelf", tmp_path / "data") as server:
        code = example.replace("http://127.0.0.1:8000/mcp", server.url)
        assert code != example, "the example must name the Quick start's URL"
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=60,
            env=child_env(),
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected
