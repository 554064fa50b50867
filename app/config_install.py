"""Merge one server entry into a client's JSON configuration file, and never damage it.

The file belongs to the user and to the client: every other key and server stays as it
was, our entry replaces an earlier one of the same name instead of adding a second, the
previous file is kept as ``FILE.bak`` before it changes, and the new one replaces it in
one ``os.replace`` (a crash leaves the old file or the new, never half of one).

What cannot be rewritten faithfully is refused with :class:`InstallError` and left
untouched: anything but plain JSON. That includes JSONC (comments, trailing commas),
which VS Code and Zed accept and whose comments a rewrite would drop: no JSONC library
keeps them through a round trip, and the user is better served by the entry to paste.
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

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"cannot install into {path}: {reason}")
        self.path = path


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
        where = f"line {exc.lineno} column {exc.colno}"
        reason = f"it is not plain JSON (comments, trailing commas or an error: {exc.msg}: {where})"
        raise InstallError(path, reason) from exc
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
