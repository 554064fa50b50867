"""Ignore files: ``.gitignore`` and ``.docshelfignore`` at any depth of a folder shelf
(issue 28, item 5).

Each file's patterns mean what git says they mean, relative to the folder the file is
in: negation (``!``), directory-only (``dir/``), anchored (``/x``), ``**``. Reading one
pattern against one path is pathspec's :class:`~pathspec.GitIgnoreSpec`; what git adds
on top — and what this module does — is the composition across folders:

- a folder's ignore files apply to every path below that folder, relative to it;
- for one path, the deepest folder whose files have a pattern matching it decides,
  and within that folder the last matching pattern (so a deeper ``!keep.log`` re-includes
  what a shallower ``*.log`` excluded);
- a ``.docshelfignore`` is read after the ``.gitignore`` of the same folder, as more lines
  of the same file, so it can add patterns or re-include (``!``) what git ignores;
- a folder that is ignored is never entered, so nothing below it can be re-included
  (git: "It is not possible to re-include a file if a parent directory of that file is
  excluded"). The shelf's walk prunes it; a look at one path checks each folder on the
  way down (:func:`scope_for`).

The operator's glob patterns (``DOCSHELF_IGNORE``) and the ignore files meet in one test,
:meth:`IgnoreRules.ignores`, which every listing, look and watcher event goes through.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections import defaultdict
from collections.abc import Callable, Container, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pathspec import GitIgnoreSpec

DEFAULT_IGNORE = (".*", "~$*", "*.tmp", "*.swp", "*~")
"""``DOCSHELF_IGNORE``'s default: hidden files and folders (``.git`` and the ignore files
among them) and editors' temporary files."""

IGNORE_FILES = (".gitignore", ".docshelfignore")
"""The names of ignore files, in the order a folder's are read (later lines win)."""

MAX_IGNORE_FILE = 1 << 20
"""An ignore file larger than this is not read (its folder is then not served: see
``Shelf.walk``); a real one is a few kilobytes."""

T = TypeVar("T")
_BOM = b"\xef\xbb\xbf"  # git skips a UTF-8 byte order mark at the start of an ignore file


def governed_folder(relative_path: str) -> str | None:
    """The folder whose paths the ignore file at ``relative_path`` governs ("" for the
    shelf's root), or None when ``relative_path`` is no ignore file."""
    folder, _, name = relative_path.rpartition("/")
    return folder if name in IGNORE_FILES else None


@functools.lru_cache(maxsize=256)
def _compile(contents: tuple[bytes, ...]) -> GitIgnoreSpec | None:
    """One folder's ignore files (their bytes, in :data:`IGNORE_FILES` order) as one spec;
    None when they hold no pattern. Cached by content: the watcher and every look at a
    path read the same few files again and again, and compiling is the costly part."""
    lines: list[str] = []
    for content in contents:
        text = content.removeprefix(_BOM)
        # Patterns are matched against names as Python holds them: UTF-8, with any byte
        # that is not held as a lone surrogate (os.fsdecode's rule on POSIX).
        lines.extend(text.decode("utf-8", "surrogateescape").splitlines())
    spec = GitIgnoreSpec.from_lines(lines)
    return spec if any(p.include is not None for p in spec.patterns) else None


def _names(pattern: Any, path: str, is_dir: bool) -> bool:
    """Whether one compiled pattern names ``path`` itself, as git matches it, rather than
    a folder above it.

    pathspec's expression for a pattern also matches everything inside a folder it names,
    and marks such a match with the expression's one named group, the slash after the
    folder. Git never needs that (it does not enter the folder), and here the folders
    above were judged on the way down by every ignore file, so only a match of the path
    itself counts: an unmarked one, or for a folder the mark on its own trailing slash
    (``build/``, ``*/``). ``x/**`` matches what is inside x, not x.
    """
    regex = pattern.regex
    marks = tuple(regex.groupindex)

    def mark_end(found: re.Match[str]) -> int | None:
        ends = [found.end(name) for name in marks if found.group(name) is not None]
        return max(ends) if ends else None

    if any(mark_end(found) is None for found in regex.finditer(path)):
        return True
    folder = path + "/"
    return is_dir and any(mark_end(found) == len(folder) for found in regex.finditer(folder))


@dataclass(frozen=True, slots=True)
class FolderPatterns:
    """The patterns of one folder's ignore files; ``folder`` is "" for the shelf's root."""

    folder: str
    spec: GitIgnoreSpec

    def verdict(self, relative_path: str, is_dir: bool) -> bool | None:
        """True (ignored), False (re-included by a ``!`` pattern) or None (no pattern of
        this folder names ``relative_path``, which lies below it): git's last matching
        pattern, of those that name the path itself (:func:`_names`)."""
        below = relative_path[len(self.folder) + 1 :] if self.folder else relative_path
        if is_dir:
            mentioned = self.spec.check_file(below).include is not None or (
                self.spec.check_file(below + "/").include is not None
            )
        else:
            checked = self.spec.check_file(below)
            if checked.index is None:
                return None
            # For a file pathspec prefers the patterns that name it to those that name a
            # folder above it, so when the one it reports names the file, its answer is
            # git's. (Which of several agreeing patterns it reports depends on its backend.)
            if _names(self.spec.patterns[checked.index], below, False):
                return checked.include
            mentioned = True
        if not mentioned:
            return None  # nothing here mentions it: the common case, at pathspec's speed
        for pattern in reversed(self.spec.patterns):  # the rare rest: pattern by pattern
            if pattern.include is not None and _names(pattern, below, is_dir):
                return bool(pattern.include)
        return None


@dataclass(frozen=True, slots=True)
class IgnoreScope:
    """The ignore files in force in one folder: its own and those of every folder above
    it, shallowest first. The empty scope ignores nothing."""

    levels: tuple[FolderPatterns, ...] = ()

    def ignores(self, relative_path: str, *, is_dir: bool) -> bool:
        """Whether the ignore files exclude ``relative_path`` (a path in this folder; the
        folders above it are the caller's to have checked)."""
        for level in reversed(self.levels):  # the deepest folder with a matching pattern
            verdict = level.verdict(relative_path, is_dir)
            if verdict is not None:
                return verdict
        return False

    def entering(self, folder: str, contents: Sequence[bytes]) -> IgnoreScope:
        """The scope inside ``folder``, whose ignore files hold ``contents`` (in
        :data:`IGNORE_FILES` order; none: the same scope)."""
        spec = _compile(tuple(contents)) if contents else None
        if spec is None:
            return self
        return IgnoreScope((*self.levels, FolderPatterns(folder, spec)))


NO_IGNORE_FILES = IgnoreScope()


@functools.lru_cache(maxsize=16)
def _any_of(patterns: tuple[str, ...]) -> Callable[[str], re.Match[str] | None]:
    """One regular expression that matches a name when any of the glob ``patterns`` does,
    as :func:`fnmatch.fnmatchcase` would: every name of every path is put to it."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns)).match


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    """What a shelf never serves: the operator's glob patterns (``DOCSHELF_IGNORE``), matched
    against every component of a relative path, and — with ``files`` on
    (``DOCSHELF_IGNORE_FILES``) — what the ignore files in force (``scope``) exclude.

    The patterns win: an ignore file cannot re-include (``!``) what they exclude.
    """

    patterns: tuple[str, ...] = DEFAULT_IGNORE
    files: bool = True

    def ignores(
        self, relative_path: str, scope: IgnoreScope = NO_IGNORE_FILES, *, is_dir: bool = False
    ) -> bool:
        if self.patterns:
            match = _any_of(self.patterns)
            if any(match(part) for part in relative_path.split("/")):
                return True
        return self.files and scope.ignores(relative_path, is_dir=is_dir)

    def governed(self, relative_path: str) -> str | None:
        """The folder an ignore file at ``relative_path`` governs ("" for the root), when
        ignore files are honoured and it is one: a change to it changes what that
        folder's subtree serves."""
        return governed_folder(relative_path) if self.files else None


class IgnoreFileReader(Protocol):
    """What :func:`entering` and :func:`scope_for` need of a shelf."""

    @property
    def ignore(self) -> IgnoreRules: ...

    def ignore_file(self, relative_path: str) -> bytes | None:
        """The bytes of the ignore file at ``relative_path``; None when there is none (or
        no regular file is so named). ``OSError`` when one is there but cannot be read."""
        ...

    def cannot_read_ignore_files(self, folder: str, error: OSError) -> None:
        """Say (once) that ``folder`` is not served because its ignore files cannot be read."""
        ...


def entering(
    shelf: IgnoreFileReader, folder: str, scope: IgnoreScope, names: Container[str] | None = None
) -> IgnoreScope:
    """``scope`` with the ignore files of ``folder`` added; ``names``: the folder's entries
    when a listing has them (None: each name is looked for). ``OSError`` for an ignore file
    that is there but cannot be read."""
    if not shelf.ignore.files:
        return scope
    prefix = folder + "/" if folder else ""
    contents = []
    for name in IGNORE_FILES:
        if names is None or name in names:
            content = shelf.ignore_file(prefix + name)
            if content is not None:
                contents.append(content)
    return scope.entering(folder, contents)


def scope_for(
    shelf: IgnoreFileReader,
    relative_path: str,
    scopes: dict[str, IgnoreScope | None] | None = None,
    names_of: Callable[[str], Container[str] | None] | None = None,
) -> IgnoreScope | None:
    """The ignore files in force for ``relative_path``: those of the root and of every
    folder above it, each such folder checked on the way down not to be ignored; None when
    one is (nothing below it is served, as git re-includes nothing there) or its ignore
    files cannot be read.

    ``scopes``: each folder's scope (None: ignored) as already found, shared by the looks at
    the paths of one batch, so that a thousand changes in one folder read its ignore
    files once and a thousand in an ignored one stop at the first folder. ``names_of``: a
    folder's entries where a listing has them (see :func:`entering`).
    """
    if not shelf.ignore.files:
        return NO_IGNORE_FILES
    scopes = {} if scopes is None else scopes
    parts = relative_path.split("/")[:-1]
    scope: IgnoreScope | None = NO_IGNORE_FILES
    for depth in range(len(parts) + 1):
        folder = "/".join(parts[:depth])
        if folder in scopes:
            scope = scopes[folder]
        elif scope is not None:
            if depth and shelf.ignore.ignores(folder, scope, is_dir=True):
                scope = None
            else:
                try:
                    scope = entering(shelf, folder, scope, names_of and names_of(folder))
                except OSError as exc:
                    shelf.cannot_read_ignore_files(folder, exc)
                    scope = None
            scopes[folder] = scope
        if scope is None:
            return None
    return scope


def served(
    shelf: IgnoreFileReader, listed: Sequence[tuple[str, T]], under: str | None = None
) -> Iterator[tuple[str, T]]:
    """What the shelf serves of a flat listing of every path below ``under`` (None: the
    whole shelf), ignored ones included: a bucket has no folders to leave unlisted, so
    its listing is judged after the fact, the ignore files found in the listing itself
    (those of the folders above ``under`` are looked for)."""
    rules = shelf.ignore
    present: dict[str, set[str]] = defaultdict(set)
    if rules.files:
        for path, _ in listed:
            folder = governed_folder(path)
            if folder is not None:
                present[folder].add(path.rpartition("/")[2])
    inside = (under or "").strip("/")

    def names_of(folder: str) -> Container[str] | None:
        if not inside or folder == inside or folder.startswith(inside + "/"):
            return present.get(folder, ())
        return None  # above the listing: look

    scopes: dict[str, IgnoreScope | None] = {}
    for path, value in listed:
        if rules.ignores(path):
            continue
        scope = scope_for(shelf, path, scopes, names_of)
        if scope is not None and not rules.ignores(path, scope):
            yield path, value
