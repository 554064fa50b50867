"""The operator's default for clients that negotiate nothing (``DOCSHELF_DEFAULT_FEATURES``).

Issue 24, item 16: a desktop client that negotiates nothing waited for a PDF rendering of
a small Markdown note and got it as 70 % of the payload. The operator may now choose what
such a client gets, in the client's own tag syntax; ``docshelf config desktop`` writes the
text-first default (:data:`docshelf.app.desktop_config.DESKTOP_DEFAULT_FEATURES`).

- It applies to a client that negotiated no feature at all (the extension not declared, or
  declared with no well-formed tag), in both eras, over stdio and HTTP.
- A client that negotiates anything gets exactly what its tags ask for.
- Without the setting nothing changes (``tests/test_negotiation_e2e.py`` holds the built-in
  default for clients that negotiate nothing).
- A bad setting stops the start with one line naming the variable.

Every result is validated against its era's schema; the peer is the official SDK client.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from docshelf.app.desktop_config import DESKTOP_DEFAULT_FEATURES
from tests.support.schema import validate
from tests.support.sdk import (
    content_negotiation,
    http_client,
    names_once_listed,
    raw_metadata,
    raw_read,
    stdio_client,
)
from tests.support.servers import LEGACY, MODERN, child_env, run_docshelf, serve

pytestmark = pytest.mark.anyio

NOTE = "docshelf://notes/today.md"
NOTE_TEXT = "# Today\n\nA small note, read as text.\n"
# What a client that negotiates nothing gets from a server without the setting.
EVERY_FORMAT = ["text/markdown", "text/plain", "application/json", "application/pdf"]
FORMAT_JSON = ["application/json", "text/markdown", "text/plain", "application/pdf"]
# "Not declared" and "declared, no tag" both negotiate nothing: one of each here, one per era
# (the SDK calls its 2025 mode "legacy"); every form against the policy in test_negotiation.py.
NOTHING = [
    pytest.param(MODERN, MODERN, None, id="2026-07-28-not-declared"),
    pytest.param("legacy", LEGACY, [], id="2025-11-25-no-tags"),
]
# How the instructions put it: initialize's say what this session gets, server/discover's
# what any client that negotiates nothing gets.
SAYS = {MODERN: "for a client that negotiates no feature,", LEGACY: ", so"}


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    shelf = tmp_path / "notes"
    shelf.mkdir()
    (shelf / "today.md").write_text(NOTE_TEXT)
    return shelf


def declaring(features: list[Any] | None) -> dict[str, Any]:
    """The SDK ``Client`` keyword that declares ``features`` (``None``: not at all)."""
    return {} if features is None else {"extensions": [content_negotiation(features)]}


async def read(client: Client, era: str) -> dict[str, Any]:
    """The note's ``resources/read`` as sent, validated, once the note is listed."""
    await names_once_listed(client, "today.md")
    result = await raw_read(client, NOTE)
    validate(era, "ReadResourceResult", result)
    return result


async def told(client: Client, era: str) -> str:
    """The server's instructions: ``initialize``'s (2025-11-25), ``server/discover``'s."""
    if era == LEGACY:
        instructions = client.session.instructions
        assert instructions is not None
        return instructions
    discovered = await client.session.send_discover(MODERN)
    validate(MODERN, "DiscoverResult", discovered)
    text: str = discovered["instructions"]
    return text


def types_of(entries: list[dict[str, Any]]) -> list[str]:
    return [entry["mimeType"] for entry in entries]


@pytest.mark.parametrize(("mode", "era", "features"), NOTHING)
async def test_a_client_that_negotiates_nothing_gets_the_desktop_default_over_stdio(
    notes: Path, tmp_path: Path, mode: str, era: str, features: list[Any] | None
) -> None:
    """The desktop default: the note's Markdown and nothing else; no PDF is rendered for it."""
    data = str(tmp_path / "data")
    env = {"DOCSHELF_DEFAULT_FEATURES": DESKTOP_DEFAULT_FEATURES}
    with anyio.fail_after(90):
        async with stdio_client(str(notes), data, mode, env=env, **declaring(features)) as plain:
            result = await read(plain, era)
            instructions = await told(plain, era)
        # A client that asks for everything, after: the PDF is offered, and was never built
        # (a format not built yet has no size, DESIGN D11).
        verbose = declaring(["verbosity=verbose"])
        async with stdio_client(str(notes), data, mode, env=env, **verbose) as everything:
            described = await raw_metadata(everything, NOTE)
    assert types_of(result["contents"]) == ["text/markdown"]
    assert result["contents"][0]["text"] == NOTE_TEXT
    for resource in described["metadata"]:
        validate(era, "Resource", resource)
    [pdf] = [r for r in described["metadata"] if r["mimeType"] == "application/pdf"]
    assert "size" not in pdf, "the default client's read rendered a PDF"
    assert (
        SAYS[era]
        + (
            " this server's default applies: format=markdown, verbosity=compact — resources/read "
            "returns only the first available of Markdown, the original, text, JSON or PDF"
        )
        in instructions
    ), instructions


@pytest.mark.parametrize(
    ("mode", "era", "features", "expected"),
    [
        pytest.param(MODERN, MODERN, ["format=json"], FORMAT_JSON, id="2026-07-28-format=json"),
        pytest.param("legacy", LEGACY, ["format=json"], FORMAT_JSON, id="2025-11-25-format=json"),
        # Tags with no effect on resources are still negotiation: the built-in default.
        pytest.param(MODERN, MODERN, ["sampling", "x-acme"], EVERY_FORMAT, id="no-effect"),
    ],
)
async def test_a_client_that_negotiates_gets_exactly_what_it_asked_for_over_stdio(
    notes: Path, tmp_path: Path, mode: str, era: str, features: list[str], expected: list[str]
) -> None:
    env = {"DOCSHELF_DEFAULT_FEATURES": DESKTOP_DEFAULT_FEATURES}
    data = str(tmp_path / "data")
    with anyio.fail_after(90):
        async with stdio_client(str(notes), data, mode, env=env, **declaring(features)) as asked:
            result = await read(asked, era)
    assert types_of(result["contents"]) == expected


async def test_the_default_applies_over_http_in_both_eras_when_the_operator_sets_it(
    notes: Path, tmp_path: Path
) -> None:
    """``serve`` keeps the built-in default unless told otherwise; told, it applies there too."""
    env = child_env(DOCSHELF_DEFAULT_FEATURES="format=text,verbosity=compact")
    with serve(notes, tmp_path / "data", env=env) as server:
        for era in (MODERN, LEGACY):
            async with http_client(server.url, era) as plain:
                defaulted = await read(plain, era)
            async with http_client(server.url, era, **declaring(["format=markdown"])) as asked:
                negotiated = await read(asked, era)
            assert types_of(defaulted["contents"]) == ["text/plain"], era
            assert types_of(negotiated["contents"]) == EVERY_FORMAT, era


@pytest.mark.parametrize(
    ("command", "value", "complaint"),
    [
        (["stdio"], "format==json", "'format==json' is not a feature tag"),
        (["stdio"], "format=markdown;verbosity=compact", "is not a feature tag"),
        (["stdio"], "verbosty=compact", "'verbosty=compact' changes nothing docshelf returns"),
        (["serve", "--port", "0"], "format=markdown verbosity=compact", "is not a feature tag"),
    ],
    ids=["grammar", "separator", "no-effect", "serve"],
)
def test_a_bad_default_stops_the_start_in_one_line_naming_the_variable(
    notes: Path, tmp_path: Path, value: str, complaint: str, command: list[str]
) -> None:
    done = run_docshelf(
        *command,
        "--root",
        str(notes),
        "--data-dir",
        str(tmp_path / "data"),
        env=child_env(DOCSHELF_DEFAULT_FEATURES=value),
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(
        f"docshelf: DOCSHELF_DEFAULT_FEATURES={shlex.quote(value)} is not valid: "
    )
    assert complaint in done.stderr
    assert not (tmp_path / "data").exists(), "nothing was started"


def test_the_flag_beats_the_variable(notes: Path, tmp_path: Path) -> None:
    done = run_docshelf(
        "stdio",
        "--root",
        str(notes),
        "--data-dir",
        str(tmp_path / "data"),
        "--default-features",
        "nonsense==1",
        env=child_env(DOCSHELF_DEFAULT_FEATURES="agent"),
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr == (
        "docshelf: --default-features nonsense==1 is not valid: 'nonsense==1' is not a "
        "feature tag: write name, !name, name=value or name!=value, of letters, digits, '_' "
        "and '-', comma-separated\n"
    )
