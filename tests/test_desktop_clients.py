"""``docshelf config desktop --client X [--install]``: each client's format, merged safely.

- Every ``--client`` prints its own top-level key and entry shape, and the entry is a
  ``docshelf stdio`` command line; VS Code's passes VS Code's own schema.
- The entry gives a client that negotiates nothing the text-first default
  (``--default-features``), which ``--default-features`` of its own overrides.
- Run from a launcher's cache (``uvx``, ``pipx run``), the entry starts docshelf through
  the launcher, from what it was installed from; ``tests/test_no_clone_start.py`` runs the
  real launchers and deletes their caches.
- Each client's file is where its documentation says, per platform.
- ``--install`` creates a missing file, merges beside other servers and keys without
  touching them, replaces its own entry instead of adding a second, keeps ``FILE.bak``,
  writes nothing when nothing changes, and refuses — exit 2, the file byte for byte as it
  was, with the entry printed to paste — what it cannot rewrite faithfully: anything but
  plain JSON (JSONC included).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest

from docshelf.app.cli import build_parser, main
from docshelf.app.desktop_clients import CLIENTS, LINUX, MACOS, WINDOWS
from docshelf.app.desktop_config import DESKTOP_DEFAULT_FEATURES
from docshelf.app.launcher import CACHE_TAG_SIGNATURE, cache_holding, install_spec, launch_command
from tests.support.schema import validate
from tests.support.sdk import as_a_desktop_client, names_once_listed, raw_read
from tests.support.servers import MODERN, child_env, run_docshelf

DOCSHELF = Path(sys.executable).with_name("docshelf")


@pytest.fixture
def shelf(tmp_path: Path) -> Path:
    folder = tmp_path / "Papers"
    folder.mkdir()
    (folder / "notes.txt").write_text("Plain notes.\n")
    return folder


@pytest.fixture(autouse=True)
def no_docshelf_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if k.startswith("DOCSHELF_")]:
        monkeypatch.delenv(key)


def config_desktop(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``docshelf config desktop ARGS`` in this process: (exit status, stdout, stderr)."""
    status = main(["config", "desktop", *args])
    out, err = capsys.readouterr()
    return status, out, err


# --- the formats --------------------------------------------------------------------------------

SHAPES = {  # client -> (top-level key, the entry's keys in order)
    "claude": ("mcpServers", ["command", "args"]),
    "claude-code": ("mcpServers", ["command", "args"]),
    "cursor": ("mcpServers", ["command", "args"]),
    "windsurf": ("mcpServers", ["command", "args"]),
    "vscode": ("servers", ["type", "command", "args"]),
    "zed": ("context_servers", ["command", "args"]),
}


def test_every_client_has_its_shape_here() -> None:
    assert set(SHAPES) == set(CLIENTS)


@pytest.mark.parametrize("client", sorted(SHAPES))
def test_each_client_gets_its_own_key_and_entry_shape(
    client: str, shelf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = config_desktop(capsys, "--client", client, "--root", str(shelf))
    assert status == 0, err
    config = json.loads(out)
    key, fields = SHAPES[client]
    assert list(config) == [key]
    entry = config[key]["docshelf"]
    assert list(entry) == fields
    assert entry.get("type", "stdio") == "stdio"
    assert Path(entry["command"]).is_absolute()
    args = build_parser().parse_args(entry["args"])
    assert args.command == "stdio" and args.roots == [str(shelf)]


def test_claude_desktop_is_the_default_format(
    shelf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert config_desktop(capsys, "--root", str(shelf)) == config_desktop(
        capsys, "--client", "claude", "--root", str(shelf)
    )


# VS Code's own schema for mcp.json, transcribed from microsoft/vscode
# src/vs/workbench/contrib/mcp/common/mcpConfiguration.ts (mcpServerSchema and
# mcpStdioServerSchema, commit 0b37532c56dc57c42571502253aba19111d27fc0; the `dev` and
# `inputs` parts left open). Documented at
# https://code.visualstudio.com/docs/copilot/reference/mcp-configuration
VSCODE_STDIO_SERVER = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "type": {"type": "string", "enum": ["stdio"]},
        "command": {"type": "string"},
        "cwd": {"type": "string"},
        "args": {"type": "array", "items": {"type": "string"}},
        "envFile": {"type": "string"},
        "env": {"additionalProperties": {"anyOf": [{"type": "null"}, {"type": "string"}]}},
        "dev": {"type": "object"},
    },
}
VSCODE_MCP_JSON = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "servers": {"additionalProperties": {"oneOf": [VSCODE_STDIO_SERVER]}},
        "inputs": {"type": "array"},
    },
}


def test_the_vscode_entry_passes_vscodes_own_schema(
    shelf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _err = config_desktop(capsys, "--client", "vscode", "--root", str(shelf))
    assert status == 0
    jsonschema.validate(json.loads(out), VSCODE_MCP_JSON)
    # the schema is not vacuous: Claude Desktop's format is not VS Code's
    _status, claude, _err = config_desktop(capsys, "--root", str(shelf))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(json.loads(claude), VSCODE_MCP_JSON)


# --- what a client that negotiates nothing gets ---------------------------------------------------


def printed_args(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    status, out, err = config_desktop(capsys, *args)
    assert status == 0, err
    entry_args: list[str] = json.loads(out)["mcpServers"]["docshelf"]["args"]
    return entry_args


def test_the_entry_gives_a_client_that_negotiates_nothing_the_text_first_default(
    shelf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = printed_args(capsys, "--root", str(shelf))
    assert args == ["stdio", "--root", str(shelf), *TEXT_FIRST]
    assert build_parser().parse_args(args).default_features == "format=markdown,verbosity=compact"


@pytest.mark.parametrize("tags", ["", "agent,format!=pdf"], ids=["none", "others"])
def test_default_features_overrides_the_desktop_default(
    tags: str, shelf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = printed_args(capsys, "--root", str(shelf), "--default-features", tags)
    assert args == ["stdio", "--root", str(shelf), "--default-features", tags]


def test_the_variable_overrides_the_desktop_default_too(
    shelf: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCSHELF_DEFAULT_FEATURES", "human")
    args = printed_args(capsys, "--root", str(shelf))
    assert args == ["stdio", "--root", str(shelf), "--default-features", "human"]


def test_a_bad_default_is_one_line_and_no_entry(
    shelf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = config_desktop(
        capsys, "--root", str(shelf), "--default-features", "format=markdown verbosity=compact"
    )
    assert status == 2 and out == ""
    assert err == (
        "docshelf: --default-features 'format=markdown verbosity=compact' is not valid: "
        "'format=markdown verbosity=compact' is not a feature tag: write name, !name, "
        "name=value or name!=value, of letters, digits, '_' and '-', comma-separated\n"
    )


# --- a command that outlives a launcher's cache ---------------------------------------------------


@pytest.mark.parametrize(
    ("direct_url", "spec"),
    [
        (None, "docshelf==0.1.0"),  # from the package index: this version again
        (
            {"url": "file:///home/me/dist/docshelf-0.1.0-py3-none-any.whl", "archive_info": {}},
            "/home/me/dist/docshelf-0.1.0-py3-none-any.whl",
        ),
        ({"url": "file:///home/me/src/docshelf", "dir_info": {}}, "/home/me/src/docshelf"),
        (
            {"url": "file:///home/me/My%20Wheels/d.whl", "archive_info": {}},
            "/home/me/My Wheels/d.whl",
        ),
        (
            {"url": "https://example.org/docshelf-0.1.0.tar.gz", "archive_info": {}},
            "https://example.org/docshelf-0.1.0.tar.gz",
        ),
        (
            {
                "url": "https://github.com/me/docshelf",
                "vcs_info": {"vcs": "git", "commit_id": "ab12"},
            },
            "git+https://github.com/me/docshelf@ab12",
        ),
    ],
    ids=["index", "wheel", "folder", "quoted", "archive", "git"],
)
def test_the_install_spec_is_what_docshelf_was_installed_from(
    direct_url: dict[str, Any] | None, spec: str
) -> None:
    """PEP 610's direct_url.json, as uvx --from and pipx run --spec take it."""
    assert install_spec(direct_url, "0.1.0") == spec


def environment_in(cache: Path, *markers: str, signature: bytes = CACHE_TAG_SIGNATURE) -> Path:
    """An environment's folder inside ``cache`` (tagged with ``signature``), with ``markers``."""
    prefix = cache / "archive-v0" / "abc"
    prefix.mkdir(parents=True)
    (cache / "CACHEDIR.TAG").write_bytes(signature + b"\n# a cache\n")
    (prefix / "CACHEDIR.TAG").write_bytes(CACHE_TAG_SIGNATURE)  # uv tags every venv it makes
    (prefix / "pyvenv.cfg").write_text("home = /usr/bin\n" + "".join(markers))
    return prefix


def test_a_cache_is_a_folder_above_the_environment_tagged_as_one(tmp_path: Path) -> None:
    prefix = environment_in(tmp_path / "cache")
    assert cache_holding(prefix) == tmp_path / "cache"
    assert cache_holding(tmp_path / "cache") is None  # its own tag does not count
    untagged = environment_in(tmp_path / "other", signature=b"Signature: something else")
    assert cache_holding(untagged) is None


def test_a_lasting_environment_is_named_directly() -> None:
    launch = launch_command()  # this venv: not in a cache
    assert launch.argv == [str(DOCSHELF)] and launch.note is None


def test_uvx_not_found_is_named_bare_and_said(tmp_path: Path) -> None:
    prefix = environment_in(tmp_path / "uv", "uv = 0.13.9\n")
    launch = launch_command(prefix, environ={}, which=lambda name: None)
    assert launch.argv[:2] == ["uvx", "--from"] and launch.argv[3:] == ["docshelf"]
    assert launch.note is not None and launch.note.endswith(
        "; uvx is not on PATH here: give its absolute path if the client needs it"
    )


def test_an_unknown_cache_is_named_with_a_warning(tmp_path: Path) -> None:
    prefix = environment_in(tmp_path / "cache")
    launch = launch_command(prefix, environ={})
    assert launch.argv == [str(DOCSHELF)]
    assert launch.note is not None
    assert launch.note.startswith(
        f"docshelf: warning: this docshelf runs from {prefix}, inside the cache "
        f"{tmp_path / 'cache'}: the entry stops working when the cache is cleaned; for one "
        "that lasts, install docshelf (pipx install "
    )


# --- where each client keeps its file -------------------------------------------------------------

HOME = Path("/home/me")
APPDATA = r"C:\Users\me\AppData\Roaming"


@pytest.mark.parametrize(
    ("client", "platform", "expected"),
    [
        ("claude", MACOS, HOME / "Library/Application Support/Claude/claude_desktop_config.json"),
        ("claude", WINDOWS, Path(APPDATA, "Claude", "claude_desktop_config.json")),
        ("claude", LINUX, None),  # no Linux build
        ("claude-code", LINUX, Path("/work/project/.mcp.json")),
        ("cursor", MACOS, HOME / ".cursor/mcp.json"),
        ("cursor", WINDOWS, HOME / ".cursor/mcp.json"),
        ("vscode", MACOS, HOME / "Library/Application Support/Code/User/mcp.json"),
        ("vscode", WINDOWS, Path(APPDATA, "Code", "User", "mcp.json")),
        ("vscode", LINUX, Path("/xdg/Code/User/mcp.json")),
        ("windsurf", LINUX, HOME / ".codeium/windsurf/mcp_config.json"),
        ("zed", MACOS, HOME / ".config/zed/settings.json"),
        ("zed", WINDOWS, Path(APPDATA, "Zed", "settings.json")),
        ("zed", LINUX, Path("/xdg/zed/settings.json")),
    ],
)
def test_each_client_file_is_where_its_documentation_says(
    client: str, platform: str, expected: Path | None
) -> None:
    env = {"APPDATA": APPDATA, "XDG_CONFIG_HOME": "/xdg"}
    where = CLIENTS[client].config_file(platform, env=env, home=HOME, cwd=Path("/work/project"))
    assert where == expected


def test_without_xdg_config_home_linux_files_are_under_dot_config() -> None:
    assert CLIENTS["vscode"].config_file(LINUX, env={}, home=HOME) == (
        HOME / ".config/Code/User/mcp.json"
    )


def test_install_writes_the_clients_own_file_by_default(shelf: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = child_env(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), APPDATA="")
    for client, relative in (
        ("cursor", ".cursor/mcp.json"),
        ("windsurf", ".codeium/windsurf/mcp_config.json"),
    ):
        done = run_docshelf(
            "config",
            "desktop",
            "--client",
            client,
            "--root",
            str(shelf),
            "--install",
            env=env,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        written = json.loads((home / relative).read_text())
        assert written["mcpServers"]["docshelf"] == entry_for(shelf)
        assert f'created {home / relative} with the "docshelf" server' in done.stdout


# --- --install ------------------------------------------------------------------------------------


def install(
    capsys: pytest.CaptureFixture[str], config_file: Path, shelf: Path, *args: str
) -> tuple[int, str, str]:
    return config_desktop(
        capsys, "--root", str(shelf), "--install", "--config-file", str(config_file), *args
    )


TEXT_FIRST = ["--default-features", DESKTOP_DEFAULT_FEATURES]


def entry_for(shelf: Path, *flags: str) -> dict[str, Any]:
    args = ["stdio", "--root", str(shelf), *TEXT_FIRST, *flags]
    return {"command": str(DOCSHELF), "args": args}


def test_install_creates_a_missing_file_and_its_folder(
    shelf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "Claude" / "claude_desktop_config.json"
    status, out, err = install(capsys, target, shelf)
    assert status == 0, err
    assert json.loads(target.read_text()) == {"mcpServers": {"docshelf": entry_for(shelf)}}
    assert out == (
        f'created {target} with the "docshelf" server\nrestart Claude Desktop to load it\n'
    )
    assert not target.with_name(target.name + ".bak").exists()


def test_install_merges_beside_other_servers_and_keys_and_keeps_a_backup(
    shelf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "claude_desktop_config.json"
    before = {
        "globalShortcut": "Ctrl+Space",
        "mcpServers": {
            "filesystem": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"]},
            "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "Europe/Berlin"}},
        },
        "préférences": {"nested": [1, 2, {"deep": None}]},
    }
    original = json.dumps(before, indent=4).encode()
    target.write_bytes(original)
    target.chmod(0o600)  # it may hold other servers' tokens

    status, out, err = install(capsys, target, shelf)

    assert status == 0, err
    after = json.loads(target.read_text())
    assert list(after) == list(before)  # every key kept, in its place
    assert after["globalShortcut"] == before["globalShortcut"]
    assert after["préférences"] == before["préférences"]
    assert after["mcpServers"] == {**before["mcpServers"], "docshelf": entry_for(shelf)}
    backup = target.with_name(target.name + ".bak")
    assert backup.read_bytes() == original
    assert stat.S_IMODE(target.stat().st_mode) == stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert out == (
        f'added the "docshelf" server in {target}\n'
        f"the previous file is kept as {backup}\n"
        "restart Claude Desktop to load it\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["Papers", target.name, backup.name]  # no temporary file left behind
    )


def test_a_second_install_replaces_the_entry_instead_of_adding_one(
    shelf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "mcp.json"
    target.write_text('{"servers": {"other": {"type": "http", "url": "http://x/mcp"}}}')
    assert install(capsys, target, shelf, "--client", "vscode")[0] == 0
    first = target.read_bytes()

    status, out, err = install(capsys, target, shelf, "--client", "vscode", "--no-watch")

    assert status == 0, err
    assert out.startswith(f'updated the "docshelf" server in {target}\n')
    servers = json.loads(target.read_text())["servers"]
    assert list(servers) == ["other", "docshelf"]
    assert servers["docshelf"]["args"] == entry_for(shelf, "--no-watch")["args"]
    assert target.read_text().count('"docshelf"') == 1
    assert target.with_name("mcp.json.bak").read_bytes() == first  # the state just before


def test_an_install_that_changes_nothing_writes_nothing(
    shelf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "settings.json"
    assert install(capsys, target, shelf, "--client", "zed")[0] == 0
    written = target.read_bytes()
    os.utime(target, (1_000_000, 1_000_000))

    status, out, err = install(capsys, target, shelf, "--client", "zed")

    assert status == 0, err
    assert out == f'{target} already has this "docshelf" server: nothing written\n'
    assert target.read_bytes() == written and target.stat().st_mtime == 1_000_000
    assert not target.with_name("settings.json.bak").exists()


def test_install_follows_a_symlink_and_keeps_it(
    shelf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = tmp_path / "dotfiles" / "mcp.json"
    real.parent.mkdir()
    real.write_text('{"mcpServers": {}}')
    link = tmp_path / "mcp.json"
    link.symlink_to(real)
    assert install(capsys, link, shelf, "--client", "cursor")[0] == 0
    assert link.is_symlink()
    assert "docshelf" in json.loads(real.read_text())["mcpServers"]


REFUSED = [
    (
        '{"mcpServers": {"a": {"command": "x"}}',
        "it is not plain JSON (comments, trailing commas or an error: "
        "Expecting ',' delimiter: line 1 column 39)",
    ),
    ("", None),  # an empty file is not refused: see the test below
    ("[1, 2]", "its top level is not a JSON object"),
    ('{"mcpServers": ["docshelf"]}', 'its "mcpServers" is not a JSON object'),
    ('{"mcpServers": {}, "mcpServers": {}}', "it repeats the key 'mcpServers'"),
    (b"\xff\xfe{}", "it is not UTF-8 text (invalid start byte at byte 0)"),
]


@pytest.mark.parametrize(("content", "reason"), [r for r in REFUSED if r[1] is not None])
def test_install_refuses_what_it_cannot_rewrite_and_leaves_it_untouched(
    content: str | bytes, reason: str, shelf: Path, tmp_path: Path
) -> None:
    target = tmp_path / "claude_desktop_config.json"
    original = content if isinstance(content, bytes) else content.encode()
    target.write_bytes(original)
    done = run_docshelf(
        "config", "desktop", "--root", str(shelf), "--install", "--config-file", str(target)
    )
    assert done.returncode == 2
    assert done.stderr == (
        f"docshelf: cannot install into {target}: {reason}; nothing was changed\n"
        'docshelf: add this under "mcpServers" by hand:\n'
    )
    assert json.loads(done.stdout) == {"docshelf": entry_for(shelf)}  # ready to paste
    assert target.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Papers", target.name]


def test_an_empty_file_takes_the_entry(
    shelf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "mcp.json"
    target.write_text("\n")
    status, out, _err = install(capsys, target, shelf, "--client", "cursor")
    assert status == 0 and out.startswith("added")
    assert json.loads(target.read_text()) == {"mcpServers": {"docshelf": entry_for(shelf)}}


ZED_SETTINGS = """// Zed settings
//
// For information on how to configure Zed, see the Zed
// documentation: https://zed.dev/docs/configuring-zed
{
  "theme": "One Dark", /* the dark one */
  "context_servers": {
    "other": {"command": "https://not-a-comment//here", "args": [],},
  },
}
"""


def test_install_refuses_jsonc_whose_comments_a_rewrite_would_drop_and_shows_the_entry(
    shelf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "settings.json"
    target.write_text(ZED_SETTINGS)

    status, out, err = install(capsys, target, shelf, "--client", "zed")

    assert status == 2
    assert err == (
        f"docshelf: cannot install into {target}: it is not plain JSON (comments, trailing "
        "commas or an error: Expecting value: line 1 column 1); nothing was changed\n"
        'docshelf: add this under "context_servers" by hand:\n'
    )
    assert json.loads(out) == {"docshelf": entry_for(shelf)}  # ready to paste
    assert target.read_text() == ZED_SETTINGS
    assert not target.with_name("settings.json.bak").exists()


def test_config_file_without_install_is_an_error(
    shelf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _out, err = config_desktop(
        capsys, "--root", str(shelf), "--config-file", str(tmp_path / "x.json")
    )
    assert status == 2 and err == "docshelf: --config-file is for --install\n"
    assert not (tmp_path / "x.json").exists()


@pytest.mark.skipif(sys.platform != "linux", reason="Claude Desktop's Linux gap")
def test_claude_desktop_has_no_file_on_linux_so_install_asks_for_one(
    shelf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _out, err = config_desktop(capsys, "--root", str(shelf), "--install")
    assert status == 2
    assert err == (
        "docshelf: Claude Desktop has no documented configuration file on Linux; "
        "pass --config-file PATH\n"
    )


def test_an_installed_entry_starts_a_working_server(shelf: Path, tmp_path: Path) -> None:
    """What --install wrote is what the client runs: start it as VS Code would; a client
    that negotiates nothing reads a Markdown note as its Markdown alone."""
    target = tmp_path / "Code" / "User" / "mcp.json"
    done = run_docshelf(
        "config",
        "desktop",
        "--client",
        "vscode",
        "--root",
        str(shelf),
        "--data-dir",
        str(tmp_path / "data"),
        "--install",
        "--config-file",
        str(target),
    )
    assert done.returncode == 0, done.stderr
    entry = json.loads(target.read_text())["servers"]["docshelf"]
    assert entry["type"] == "stdio"

    (shelf / "today.md").write_text("# Today\n\nA small note.\n")

    async def session() -> dict[str, Any]:
        with anyio.fail_after(90):
            async with as_a_desktop_client(entry) as client:
                await names_once_listed(client, "today.md")
                return await raw_read(client, "docshelf://papers/today.md")

    read = anyio.run(session)
    validate(MODERN, "ReadResourceResult", read)
    # The text-first default: the note's Markdown, no rendered PDF (issue 24, item 16).
    assert [c["mimeType"] for c in read["contents"]] == ["text/markdown"]
