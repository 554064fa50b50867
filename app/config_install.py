"""Merge one server entry into a client's JSON configuration file, and never damage it.

The file belongs to the user and to the client: every other key and server stays as it
was, our entry replaces an earlier one of the same name instead of adding a second, the
previous file is kept as ``FILE.bak`` before it changes, and the new one replaces it in
one ``os.replace`` (a crash leaves the old file or the new, never half of one).

What cannot be rewritten faithfully is refused with :class:`InstallError` and left
untouched: a file that is not JSON, and JSONC (comments, trailing commas — what VS Code
and Zed accept), whose comments a rewrite would drop.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any


class Outcome(Enum):
    CREATED = "created"  # there was no file
    ADDED = "added"  # the file had no entry of that name
    UPDATED = "updated"  # it had one, different
    UNCHANGED = "unchanged"  # it had this very entry: nothing written


@dataclass(frozen=True)
class Installed:
    path: Path
    outcome: Outcome
    backup: Path | None = None


class InstallError(Exception):
    """The file cannot take the entry as it stands; nothing was written."""

    def __init__(self, path: Path, reason: str, *, jsonc: bool = False) -> None:
        super().__init__(f"cannot install into {path}: {reason}")
        self.path = path
        self.jsonc = jsonc  # it parses once comments and trailing commas are removed


def install_entry(path: Path, servers_key: str, name: str, entry: dict[str, Any]) -> Installed:
    """Put ``entry`` at ``servers_key.name`` in the JSON file at ``path`` (created if missing).

    A symlink is followed: the file it points at changes, the link stays.
    """
    path = Path(os.path.realpath(path))
    try:
        original = path.read_bytes()
    except FileNotFoundError:
        original = None
    except OSError as exc:
        raise InstallError(path, exc.strerror or str(exc)) from exc

    config = {} if original is None else _parse(path, original)
    servers = config.setdefault(servers_key, {})
    if not isinstance(servers, dict):
        raise InstallError(path, f'its "{servers_key}" is not a JSON object')
    previous = servers.get(name)
    if previous == entry:
        return Installed(path, Outcome.UNCHANGED)
    servers[name] = entry
    text = json.dumps(config, indent=2, ensure_ascii=False) + "\n"

    try:
        if original is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_atomically(path, text.encode(), like=None)
            return Installed(path, Outcome.CREATED)
        backup = path.with_name(path.name + ".bak")
        _write_atomically(backup, original, like=path)
        _write_atomically(path, text.encode(), like=path)
    except OSError as exc:
        raise InstallError(path, exc.strerror or str(exc)) from exc
    return Installed(path, Outcome.ADDED if previous is None else Outcome.UPDATED, backup)


def _parse(path: Path, data: bytes) -> dict[str, Any]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"it is not UTF-8 text ({exc.reason} at byte {exc.start})"
        raise InstallError(path, reason) from exc
    if not text.strip():
        return {}  # an empty file: as good as none
    try:
        config = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKey as exc:
        raise InstallError(path, f"it repeats the key {exc.args[0]!r}") from exc
    except json.JSONDecodeError as exc:
        if _is_jsonc(text):
            raise InstallError(
                path,
                "it has comments or trailing commas (JSONC), which rewriting it would drop",
                jsonc=True,
            ) from exc
        where = f"line {exc.lineno} column {exc.colno}"
        raise InstallError(path, f"it is not valid JSON ({exc.msg}: {where})") from exc
    if not isinstance(config, dict):
        raise InstallError(path, "its top level is not a JSON object")
    return config


class _DuplicateKey(Exception):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)  # a rewrite would keep only the last one
        seen[key] = value
    return seen


def _is_jsonc(text: str) -> bool:
    """Whether ``text`` is JSON once its comments and trailing commas are taken out."""
    try:
        json.loads(_strip_jsonc(text))
    except ValueError:  # json.JSONDecodeError too
        return False
    return True


def _strip_jsonc(text: str) -> str:
    """``text`` without ``//`` and ``/* */`` comments and commas before ``}`` or ``]``."""
    return _drop_trailing_commas(_drop_comments(text))


def _drop_comments(text: str) -> str:
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] == '"':
            j = _string_end(text, i)
            out.append(text[i:j])
            i = j
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise ValueError("unterminated comment")
            out.append(" ")
            i = end + 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _drop_trailing_commas(text: str) -> str:
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] == '"':
            j = _string_end(text, i)
            out.append(text[i:j])
            i = j
            continue
        if text[i] != "," or text[i + 1 :].lstrip()[:1] not in ("}", "]"):
            out.append(text[i])
        i += 1
    return "".join(out)


def _string_end(text: str, start: int) -> int:
    """The index just past the JSON string that opens at ``start``."""
    j = start + 1
    while j < len(text) and text[j] != '"':
        j += 2 if text[j] == "\\" else 1
    return j + 1


def _write_atomically(path: Path, data: bytes, like: Path | None) -> None:
    """Write ``path`` through a temporary file beside it, with ``like``'s permissions."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if like is not None:
            shutil.copymode(like, temp)
        else:
            os.chmod(temp, 0o666 & ~_umask())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
