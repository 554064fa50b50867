"""Shelves: named root folders, and the one function allowed to turn a path into a file.

The server never writes to a shelf and never reads outside one (DESIGN D8):
every read goes through :meth:`Shelf.locate`, which resolves symlinks and
refuses anything whose real path leaves the root.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from storage.uris import is_valid_shelf_name

DEFAULT_IGNORE = (".*", "~$*", "*.tmp", "*.swp", "*~")


class OutsideShelf(PermissionError):
    """A path that would leave its shelf's root."""


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    """Glob patterns matched against every component of a relative path."""

    patterns: tuple[str, ...] = DEFAULT_IGNORE

    def ignores(self, relative_path: str) -> bool:
        return any(
            fnmatch.fnmatchcase(part, pattern)
            for part in PurePosixPath(relative_path).parts
            for pattern in self.patterns
        )


@dataclass(frozen=True, slots=True)
class Shelf:
    name: str
    root: Path
    ignore: IgnoreRules = field(default_factory=IgnoreRules)

    def __post_init__(self) -> None:
        if not is_valid_shelf_name(self.name):
            raise ValueError(
                f"invalid shelf name {self.name!r}: use lowercase letters, digits, '.', '_' or '-'"
            )
        object.__setattr__(self, "root", self.root.expanduser().resolve())

    def locate(self, relative_path: str) -> Path:
        """The real file behind ``relative_path``; :class:`OutsideShelf` if it leaves the root."""
        candidate = (self.root / relative_path).resolve()
        if not candidate.is_relative_to(self.root):
            raise OutsideShelf(f"{relative_path!r} resolves outside shelf {self.name!r}")
        return candidate

    def relative(self, path: Path) -> str | None:
        """``path`` (absolute, as the watcher reports it) relative to the root; None if outside."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return None

    def walk(self) -> Iterator[str]:
        """Relative POSIX paths of the regular files on the shelf, minus ignored ones.

        Directory symlinks are not followed (no loops, no escapes); file symlinks
        are kept only when their target stays inside the root.
        """
        stack = [self.root]
        while stack:
            directory = stack.pop()
            try:
                entries = sorted(directory.iterdir())
            except OSError:
                continue
            for entry in entries:
                relative = entry.relative_to(self.root).as_posix()
                if self.ignore.ignores(relative):
                    continue
                if entry.is_symlink():
                    try:
                        if entry.is_file() and self.locate(relative):
                            yield relative
                    except (OutsideShelf, OSError):
                        continue
                elif entry.is_dir():
                    stack.append(entry)
                elif entry.is_file():
                    yield relative


def make_shelves(specs: Sequence[tuple[str, Path]], ignore: IgnoreRules) -> list[Shelf]:
    """Shelves from (name, folder) pairs, refusing duplicate names and missing folders."""
    shelves: list[Shelf] = []
    for name, folder in specs:
        shelf = Shelf(name, folder, ignore)
        if not shelf.root.is_dir():
            raise ValueError(f"shelf {name!r}: {folder} is not a directory")
        if any(s.name == name for s in shelves):
            raise ValueError(f"two shelves are named {name!r}; name them with --shelf NAME=DIR")
        shelves.append(shelf)
    return shelves
