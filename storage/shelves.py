"""Shelves: named root folders, and the one way a path on a shelf becomes open bytes.

The server never writes to a shelf and never reads outside one (DESIGN D8).
Every read goes through :meth:`Shelf.open`, which opens the file exactly once,
walking from the root one component at a time without following symlinks
(``O_NOFOLLOW`` relative to the parent's descriptor), and refuses anything but a
regular file. A symlink swapped in between a check and a read, a FIFO swapped
in for a document, or a directory symlink pointing out of the shelf therefore
cannot make a read leave the shelf or block: the bytes that are hashed are the
bytes that are converted and served.

File symlinks whose target stays inside the root are served: the target is
resolved first, checked to lie inside, and then opened by the same walk.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from docshelf.storage.ignore_files import (
    MAX_IGNORE_FILE,
    NO_IGNORE_FILES,
    IgnoreRules,
    IgnoreScope,
    entering,
    scope_for,
)
from docshelf.storage.s3 import S3Location, is_s3_url
from docshelf.storage.uris import is_valid_shelf_name, printable

log = logging.getLogger(__name__)

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO or a device must never wait for a writer.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_SYMLINK_HOPS = 8


class OutsideShelf(PermissionError):
    """A path that would leave its shelf's root."""


class NotRegularFile(OSError):
    """The path names a FIFO, socket, device or directory: never opened as a document."""


@dataclass(frozen=True, slots=True)
class FileBytes:
    """What one open of a shelf file read: its bytes and the ``fstat`` of that same open
    (for an object: its length, LastModified and ETag, of that same GET)."""

    data: bytes
    size: int
    mtime_ns: int
    change_key: str | None = None


@dataclass(frozen=True, slots=True)
class Seen:
    """One document as a listing found it: what every "did it change" check compares.

    ``change_key`` is an object's ETag (None for a file): an object rewritten within the
    same second at the same size has a new one (issue 27, item 2).
    """

    size: int
    mtime_ns: int
    change_key: str | None = None

    @classmethod
    def of(cls, row: Versioned) -> Seen:
        """The version an index row (or a queued task's copy of it) records."""
        return cls(row.size, row.mtime_ns, row.change_key)


class Versioned(Protocol):
    """A row that records which version of a document it describes."""

    @property
    def size(self) -> int: ...
    @property
    def mtime_ns(self) -> int: ...
    @property
    def change_key(self) -> str | None: ...


class AnyShelf(Protocol):
    """What the indexer, the builder and reads use of a shelf, a folder (:class:`Shelf`)
    or a bucket (:class:`~storage.bucket_shelf.BucketShelf`), so none branches on the
    kind. ``location`` rebuilds it in a worker (:func:`shelf_at`)."""

    @property
    def name(self) -> str: ...
    @property
    def ignore(self) -> IgnoreRules: ...
    @property
    def location(self) -> str: ...

    def walk(self, under: str | None = None) -> Iterator[tuple[str, Seen]]: ...
    def look(self, relative_path: str) -> Seen | None: ...
    def is_folder(self, relative_path: str) -> bool: ...
    def head(self, relative_path: str, size: int) -> bytes: ...
    def read(self, relative_path: str, *, limit: int | None = None) -> FileBytes: ...
    def check(self) -> None:
        """Raise ValueError, in one line, if this process cannot list the shelf."""


def _open_beneath(root_fd: int, parts: Sequence[str]) -> int:
    """Open ``parts`` under the directory ``root_fd`` with no symlink followed anywhere."""
    if len(parts) == 1:  # a file at the top of the shelf: nothing to walk
        return os.open(parts[0], _FILE_FLAGS, dir_fd=root_fd)
    directory = os.open(parts[0], _DIR_FLAGS, dir_fd=root_fd)
    try:
        for part in parts[1:-1]:
            child = os.open(part, _DIR_FLAGS, dir_fd=directory)
            os.close(directory)
            directory = child
        return os.open(parts[-1], _FILE_FLAGS, dir_fd=directory)
    finally:
        os.close(directory)


class _RootDescriptor:
    """An open descriptor of a shelf root, closed when the object goes: with the thread
    whose cache holds it (a ``threading.local``'s values die with their thread) or when a
    replaced root drops it. Request threads come and go (anyio retires one idle for
    10 s), so a bare number kept per thread leaked one descriptor per thread ever run."""

    __slots__ = ("dev", "fd", "ino")

    def __init__(self, fd: int, dev: int, ino: int) -> None:
        self.fd, self.dev, self.ino = fd, dev, ino

    def __del__(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


class _RootDirectories(threading.local):
    """Each thread's open descriptor of each shelf root, kept between reads.

    Opening the root costs a path lookup and a descriptor per read (an ``open`` is
    ~18 µs on these machines; a read of a small file is a handful of system calls).
    A descriptor is reused only while ``lstat`` of the root still names the same
    directory, so a root replaced (or swapped for a symlink) is opened afresh, by the
    same no-follow rule. Per thread, so replacing one never closes a descriptor
    another thread is walking from; it is closed when its thread ends.
    """

    def __init__(self) -> None:
        self.open: dict[Path, _RootDescriptor] = {}

    def descriptor(self, root: Path) -> int:
        info = os.lstat(root)
        cached = self.open.get(root)
        if cached is not None:
            if (cached.dev, cached.ino) == (info.st_dev, info.st_ino):
                return cached.fd
            del self.open[root]  # closes it
        fd = os.open(root, _DIR_FLAGS)
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
            os.close(fd)  # replaced between the two calls: the next read looks again
            raise FileNotFoundError(errno.ENOENT, f"shelf root {root} changed while opened")
        self.open[root] = _RootDescriptor(fd, opened.st_dev, opened.st_ino)
        return fd


_ROOTS = _RootDirectories()


class _UnreadableFolders:
    """The folders this process has said it cannot read, so that each is said once.

    A walk skips a folder it cannot list (or whose entries it cannot look at, or whose
    ignore files it cannot read), and with it every file inside: those are not served,
    and the operator is told so — once per folder, not at every pass and watcher batch.
    A folder read whole again is forgotten, so breaking it again is said again.
    """

    def __init__(self) -> None:
        self._said: set[tuple[Path, Path, str]] = set()
        self._lock = threading.Lock()

    def cannot_read(self, shelf: Shelf, folder: Path, error: OSError) -> None:
        self._say(
            shelf,
            folder,
            error,
            "folder",
            "cannot read folder %s (%s): its files are not served until %s can list and "
            "enter it (chmod o+rX, or a group it is in)",
        )

    def cannot_read_ignore_file(self, shelf: Shelf, folder: Path, error: OSError) -> None:
        """An ignore file that exists but cannot be read: its folder is not served (what
        it would have excluded must not be served for want of reading it)."""
        self._say(
            shelf,
            folder,
            error,
            "ignore files",
            "cannot read the ignore files of folder %s (%s): its files are not served "
            "until %s can read them, or they are removed",
        )

    def _say(self, shelf: Shelf, folder: Path, error: OSError, what: str, message: str) -> None:
        with self._lock:
            if (shelf.root, folder, what) in self._said:
                return
            self._said.add((shelf.root, folder, what))
        relative = folder.relative_to(shelf.root).as_posix()
        log.warning(
            "shelf %s: " + message,
            shelf.name,
            printable(relative) if relative != "." else "(its root)",
            (error.strerror or str(error)).lower(),
            this_process(),
        )

    def read(self, shelf: Shelf, folder: Path) -> None:
        if self._said:  # an unlocked look first: almost always empty
            with self._lock:
                self._said.discard((shelf.root, folder, "folder"))
                self._said.discard((shelf.root, folder, "ignore files"))


_UNREADABLE = _UnreadableFolders()


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

    @property
    def location(self) -> str:
        return str(self.root)

    def check(self, given: str | None = None) -> None:  # given: the root as configured
        if problem := folder_problem(self.root):
            raise ValueError(f"shelf {self.name!r}: {given or self.location} {problem}")

    def _parts(self, relative_path: str) -> list[str]:
        parts = relative_path.split("/")
        if any(p in ("", ".", "..") for p in parts) or "\x00" in relative_path:
            raise OutsideShelf(f"{relative_path!r} is not a plain relative path")
        return parts

    def locate(self, relative_path: str) -> Path:
        """The real file behind ``relative_path``; :class:`OutsideShelf` if it leaves the root.

        For listing and watching only: a path can change after this returns, so
        reading goes through :meth:`open`.
        """
        self._parts(relative_path)
        try:
            candidate = Path(os.path.realpath(self.root / relative_path, strict=True))
        except (OSError, RuntimeError) as exc:  # missing, or a symlink loop
            raise FileNotFoundError(errno.ENOENT, f"cannot resolve {relative_path!r}") from exc
        if not candidate.is_relative_to(self.root):
            raise OutsideShelf(f"{relative_path!r} resolves outside shelf {self.name!r}")
        return candidate

    def open(self, relative_path: str) -> int:
        """A read-only descriptor for the regular file at ``relative_path``.

        Raises :class:`OutsideShelf` (leaves the root), :class:`NotRegularFile`
        (FIFO, socket, device, directory), ``FileNotFoundError``, or another
        ``OSError`` (e.g. permission denied). The caller closes the descriptor.
        """
        return self._open(relative_path)[0]

    def _open(self, relative_path: str) -> tuple[int, os.stat_result]:
        """:meth:`open`, and the ``fstat`` that checked the file."""
        parts = self._parts(relative_path)
        root_fd = _ROOTS.descriptor(self.root)
        for _ in range(_SYMLINK_HOPS):
            try:
                fd = _open_beneath(root_fd, parts)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                # A symlink on the way: serve it only if its target stays on the shelf,
                # and then open the target by the same no-follow walk.
                target = self.locate("/".join(parts))
                parts = target.relative_to(self.root).as_posix().split("/")
                continue
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                os.close(fd)
                raise NotRegularFile(errno.EINVAL, f"{relative_path!r} is not a regular file")
            return fd, info
        raise OutsideShelf(f"{relative_path!r} kept changing while it was opened")

    def read(self, relative_path: str, *, limit: int | None = None) -> FileBytes:
        """Read a whole file through :meth:`open`; ``limit`` bytes at most (``OSError`` EFBIG)."""
        fd, info = self._open(relative_path)
        try:
            if limit is not None and info.st_size > limit:
                raise OSError(errno.EFBIG, f"{info.st_size} bytes is over the limit of {limit}")
            # One read asks for a byte more than fstat said: a file that did not grow since
            # is read by that single call (a regular file reads short only at its end).
            chunk = os.read(fd, info.st_size + 1)
            chunks, total = [chunk], len(chunk)
            while chunk and total > info.st_size:
                chunk = os.read(fd, 1 << 20)
                total += len(chunk)
                if limit is not None and total > limit:
                    raise OSError(errno.EFBIG, f"{relative_path!r} grew over the limit of {limit}")
                chunks.append(chunk)
            return FileBytes(b"".join(chunks), total, info.st_mtime_ns)
        finally:
            os.close(fd)

    def look(self, relative_path: str) -> Seen | None:
        """A fresh look at one path: its size and mtime if it is a regular file on the
        shelf and not ignored, else None (gone, a loop, outside, not a file)."""
        if self.ignores(relative_path, is_dir=False):
            return None
        try:
            info = os.stat(self.locate(relative_path))
        except (OSError, ValueError):  # gone, a loop, outside, or not encodable as a file name
            return None
        return Seen(info.st_size, info.st_mtime_ns) if stat.S_ISREG(info.st_mode) else None

    def is_folder(self, relative_path: str) -> bool:
        try:
            return self.locate(relative_path).is_dir()
        except (OSError, ValueError):
            return False

    def head(self, relative_path: str, size: int) -> bytes:
        """The first ``size`` bytes, through :meth:`open` (its errors)."""
        fd = self.open(relative_path)
        try:
            return os.read(fd, size)
        finally:
            os.close(fd)

    def relative(self, path: Path) -> str | None:
        """``path`` (absolute, as the watcher reports it) relative to the root; None if outside."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return None

    # -- what is ignored ------------------------------------------------------------------

    def ignores(
        self,
        relative_path: str,
        *,
        is_dir: bool | None = None,
        scopes: dict[str, IgnoreScope | None] | None = None,
    ) -> bool:
        """Whether the shelf does not serve ``relative_path``: a name the patterns exclude,
        a path the ignore files in force exclude, or one below a folder that is ignored
        (or whose ignore files cannot be read). ``is_dir`` None: looked up on disk;
        ``scopes``: see :func:`~storage.ignore_files.scope_for`.

        What :meth:`look` and the watcher ask of one path; :meth:`walk` asks the same
        :meth:`IgnoreRules.ignores` of each entry with the scope it built on the way down.
        """
        try:
            self._parts(relative_path)
        except OutsideShelf:
            return True
        if self.ignore.ignores(relative_path):  # the patterns alone: no file read
            return True
        scope = scope_for(self, relative_path, scopes)
        if scope is None:
            return True
        if is_dir is None:
            try:
                is_dir = stat.S_ISDIR(os.lstat(os.path.join(self.root, relative_path)).st_mode)
            except (OSError, ValueError):
                is_dir = False  # gone: a folder pattern cannot tell, and nothing is there
        return self.ignore.ignores(relative_path, scope, is_dir=is_dir)

    def following(self, relative_paths: Iterable[str]) -> list[str]:
        """Of the paths a batch of changes names, those that can change what the shelf
        serves: paths it does not ignore, and ignore files of folders it does not ignore.
        Each folder's ignore files are read once for the whole batch."""
        scopes: dict[str, IgnoreScope | None] = {}
        kept = []
        for path in relative_paths:
            folder = self.ignore.governed(path)
            if (
                folder is not None
                and (folder == "" or not self.ignores(folder, is_dir=True, scopes=scopes))
            ) or not self.ignores(path, scopes=scopes):
                kept.append(path)
        return kept

    def ignore_file(self, relative_path: str) -> bytes | None:
        """An ignore file's bytes (storage.ignore_files), read through :meth:`open`: no
        symlink out of the shelf, no FIFO to block on. None when none is there, or what is
        there is a folder or a FIFO: no ignore file. Other errors raise."""
        if not os.path.lexists(os.path.join(self.root, relative_path)):
            return None
        try:
            return self.read(relative_path, limit=MAX_IGNORE_FILE).data
        except (FileNotFoundError, NotRegularFile):
            return None

    def cannot_read_ignore_files(self, folder: str, error: OSError) -> None:
        _UNREADABLE.cannot_read_ignore_file(self, self.root / folder, error)

    # -- listing --------------------------------------------------------------------------

    def walk(self, under: str | None = None) -> Iterator[tuple[str, Seen]]:
        """Relative POSIX paths of the regular files on the shelf with their size and mtime.

        ``under``: only that folder's files (a watcher batch naming a new folder, or a
        folder whose ignore file changed). Ignored names are skipped and ignored folders
        never entered (:meth:`ignores`; each folder's ignore files are read as the walk
        enters it). Directory symlinks are not followed (no loops, no escapes); file
        symlinks are kept only when their target stays inside the root. A name that
        cannot be read is skipped, never fatal; a folder that cannot be read, or whose
        ignore files cannot be, is skipped and said once (:class:`_UnreadableFolders`).
        """
        start, scope = self.root, NO_IGNORE_FILES
        if under is not None:
            start = self.root / under
            # Not through a symlink anywhere on the way (the walk never follows one).
            if os.path.realpath(start) != str(start) or not start.is_dir():
                return
            above = scope_for(self, under)
            if above is None or self.ignore.ignores(under, above, is_dir=True):
                return
            scope = above
        stack = [(start, scope)]
        while stack:
            directory, scope = stack.pop()
            try:
                with os.scandir(directory) as scan:
                    entries = sorted(scan, key=lambda e: e.name)
            except (FileNotFoundError, NotADirectoryError):
                continue  # gone or replaced since it was seen: nothing to say
            except OSError as exc:
                _UNREADABLE.cannot_read(self, directory, exc)
                continue
            folder = directory.relative_to(self.root).as_posix()
            folder = "" if folder == "." else folder
            try:
                scope = entering(self, folder, scope, {entry.name for entry in entries})
            except OSError as exc:
                _UNREADABLE.cannot_read_ignore_file(self, directory, exc)
                continue
            prefix = folder + "/" if folder else ""
            denied: OSError | None = None  # listed, but not entered (r without x)
            for entry in entries:
                relative = prefix + entry.name
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    if self.ignore.ignores(relative, scope, is_dir=is_dir):
                        continue
                    if entry.is_symlink():
                        self.locate(relative)
                        info = os.stat(entry.path)
                        if stat.S_ISREG(info.st_mode):
                            yield relative, Seen(info.st_size, info.st_mtime_ns)
                    elif is_dir:
                        stack.append((Path(entry.path), scope))
                    elif entry.is_file(follow_symlinks=False):
                        info = entry.stat(follow_symlinks=False)
                        yield relative, Seen(info.st_size, info.st_mtime_ns)
                except PermissionError as exc:
                    denied = exc
                except (OSError, RuntimeError):
                    continue
            if denied is None:
                _UNREADABLE.read(self, directory)
            else:
                _UNREADABLE.cannot_read(self, directory, denied)


class ShelfSet(Mapping[str, AnyShelf]):
    """The shelves a process serves, by name: one object every part of the process shares.

    The indexer, the builder's queues, the watcher, reads, completion and the template
    list all look shelves up here, so a shelf added or removed while serving (the roots a
    stdio client gives: ``live``, app.mcp.roots) is seen by each at once, with nothing to
    copy or keep in step. Configured shelves never change: the set is then fixed.

    Copy on write: a change replaces the whole name → shelf dict under a lock, so a
    reader in another thread (a watcher batch, a conversion, a request) iterates one
    consistent snapshot and never sees a dict change size under it.
    """

    def __init__(self, shelves: Iterable[AnyShelf] = (), *, live: bool = False) -> None:
        self._by_name: dict[str, AnyShelf] = {shelf.name: shelf for shelf in shelves}
        self.live = live
        self._lock = threading.Lock()

    @classmethod
    def of(cls, shelves: ShelfSet | Iterable[AnyShelf]) -> ShelfSet:
        """``shelves`` itself if it is a set already (shared, so changes reach its holder),
        else a fixed set of them."""
        return shelves if isinstance(shelves, ShelfSet) else cls(shelves)

    def __getitem__(self, name: str) -> AnyShelf:
        return self._by_name[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def add(self, shelf: AnyShelf) -> None:
        """Serve ``shelf`` from now on; ValueError if its name is taken."""
        with self._lock:
            if shelf.name in self._by_name:
                raise ValueError(f"a shelf is named {shelf.name!r} already")
            self._by_name = {**self._by_name, shelf.name: shelf}

    def remove(self, name: str) -> AnyShelf | None:
        """Stop serving the shelf ``name``; the shelf, or None if there was none."""
        with self._lock:
            shelf = self._by_name.get(name)
            if shelf is not None:
                self._by_name = {k: v for k, v in self._by_name.items() if k != name}
            return shelf

    def bound(self) -> tuple[str, ...] | None:
        """The shelves a listing or search keeps to, or None for every document the index
        holds. A live set's database is the data folder every session shares (other
        clients' roots, earlier sessions' roots kept for their return): only this set's
        documents are its own. A fixed set lists what its index holds, as it always has."""
        return tuple(sorted(self._by_name)) if self.live else None


def this_process() -> str:
    """Who this process is, for a message about what it may not read or write."""
    getuid = getattr(os, "getuid", None)  # POSIX only
    return f"uid {getuid()}" if getuid else "this user"


def shelf_at(name: str, location: str, ignore: IgnoreRules | None = None) -> AnyShelf:
    """The shelf ``location`` names: an ``s3://`` URL is a bucket shelf, anything else a
    folder. A worker rebuilds its task's shelf from (name, location) by this one factory."""
    rules = ignore or IgnoreRules()
    if is_s3_url(location):
        from docshelf.storage.bucket_shelf import BucketShelf  # boto3: only bucket users pay

        return BucketShelf(name, S3Location.parse(location), rules)
    return Shelf(name, Path(location), rules)


def make_shelves(specs: Sequence[tuple[str, str]], ignore: IgnoreRules) -> list[AnyShelf]:
    """Shelves from (name, folder or s3:// URL) pairs, refusing duplicate names and folders or
    buckets this process cannot list (:func:`folder_problem`, :meth:`BucketShelf.check`)."""
    shelves: list[AnyShelf] = []
    for name, location in specs:
        shelf = shelf_at(name, location, ignore)
        if isinstance(shelf, Shelf):
            shelf.check(location)  # its message names the folder as it was given
        else:
            shelf.check()
        if any(s.name == name for s in shelves):
            raise ValueError(f"two shelves are named {name!r}; name them with --shelf NAME=DIR")
        shelves.append(shelf)
    return shelves


def folder_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot be a shelf (one it cannot list would walk as empty), or None."""
    try:
        if not folder.exists():
            return "does not exist"
        if not folder.is_dir():
            return "is not a folder (docshelf serves folders, not files)"
        with os.scandir(folder):
            return None
    except PermissionError:
        return (
            f"cannot be read by {this_process()}; make the shelf readable and its folders "
            "traversable for it (chmod -R o+rX FOLDER, or a group it is in)"
        )
    except (OSError, ValueError) as exc:  # a name the file system refuses, a loop, …
        return f"cannot be opened ({getattr(exc, 'strerror', None) or exc})"
