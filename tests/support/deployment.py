"""The deployment files read as Docker and Compose read them, without an engine: the
Dockerfile's instructions, Compose's interpolation, the Compose Specification's schema."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft7Validator

from tests.support.paths import DATA, REPO

DEPLOYMENT_DOC = REPO / "docs" / "deployment.md"
DOCKERFILE = REPO / "Dockerfile"
COMPOSE_SCHEMA = DATA / "compose-spec" / "compose-spec.json"


def compose_schema_errors(document: Any) -> list[str]:
    """What the Compose Specification's schema finds wrong in ``document``, a line each."""
    validator = Draft7Validator(json.loads(COMPOSE_SCHEMA.read_text()))
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


class ComposeStops(Exception):
    """What ``docker compose`` would refuse to start with (a required variable unset)."""


INTERPOLATION = re.compile(
    r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?+])(?P<arg>[^}]*))?\}"
)


def interpolate(value: Any, env: dict[str, str]) -> Any:
    """Compose's ``${VAR}``, ``${VAR:-default}``, ``${VAR-default}``, ``${VAR:?err}`` on a tree.

    The rules of the Compose Specification's "Interpolation" section (12-interpolation.md),
    checked against its own words in ``tests/test_deployment.py``'s
    ``test_the_interpolation_helper_follows_the_spec``. Nested forms and bare ``$VAR`` are
    not implemented: ``test_compose_files_use_only_the_interpolation_the_tests_implement``
    keeps them out of our files.
    """
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
                raise ComposeStops(f"required variable {name} is missing a value: {arg}")
            return current or ""
        return current or ""

    return INTERPOLATION.sub(one, value.replace("$$", "\0")).replace("\0", "$")


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
