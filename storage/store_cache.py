"""A bounded local copy of a bucket store's objects, shared by the processes of one host.

A read from an S3 store (issue 27) costs a request and a transfer; the same format read
again on the same host should not. The cache is a folder (``data_dir/store-cache``)
of one file per store key, named by the key's sha256. Keys are content-addressed, so
an entry is never stale and needs no invalidation; it only has to go when space is
short. That makes the folder safe to share between every process of a host:

- an entry appears whole or not at all: it is written to a temp file and renamed;
- a hit touches the entry's mtime, so mtime is its last use (atime is often off);
- room is made before an entry is written, under an ``flock`` every filling process
  takes: the oldest entries are removed until the new one fits in the bound, with a
  tenth of the bound to spare so the next fills need no scan. A running total in
  ``.usage`` (written under the lock) saves a scan of the folder per fill; it only ever
  overstates (a file removed by hand), and then a scan puts it right;
- a file may vanish at any time (another process evicted it): a read misses, an
  eviction skips it. A temp file is renamed into place under the lock too, since a scan
  that met it halfway (listed as the temp name, gone when looked at, its new name listed
  too late) would miss its bytes. A temp file counts at its final size from the start (it is
  extended before it is filled); one whose process died is removed by the next scan.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

_LOCK = ".lock"
_USAGE = ".usage"
_TEMP = ".tmp-"
SPARE = 10  # evict down to a tenth of the bound below it


class StoreCache:
    """At most ``max_bytes`` of store objects in ``folder``, least recently used first out."""

    def __init__(self, folder: Path, max_bytes: int) -> None:
        if max_bytes <= 0:
            raise ValueError("a store cache needs a bound above 0 bytes")
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.max_bytes = max_bytes

    def _entry(self, key: str) -> Path:
        return self.folder / hashlib.sha256(key.encode()).hexdigest()

    def get(self, key: str) -> bytes | None:
        """The cached bytes of ``key`` (and it becomes the most recently used), or None."""
        try:
            with open(self._entry(key), "rb") as handle:
                data = handle.read()
                with contextlib.suppress(OSError):
                    os.utime(handle.fileno())
        except FileNotFoundError:
            return None
        return data

    def fits(self, size: int) -> bool:
        return size <= self.max_bytes

    def fill(self, key: str, size: int, write: Callable[[BinaryIO], None]) -> bytes:
        """Cache ``size`` bytes of ``key`` that ``write`` writes into the file it is given,
        and return them. Room is made first; ValueError if ``write`` writes another size
        (the entry is then not kept)."""
        fd, temp = self._reserve(size)
        try:
            with os.fdopen(fd, "w+b") as handle:
                write(handle)
                if handle.tell() != size:
                    raise ValueError(f"{key}: {handle.tell()} bytes arrived, {size} expected")
                handle.seek(0)
                data = handle.read()
            with self._locked():  # not while a scan counts: it would miss the file being renamed
                os.replace(temp, self._entry(key))
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        return data

    def discard(self, key: str) -> None:
        """Forget ``key`` (its object was deleted from the store). The running total keeps
        counting it until the next scan: an overstatement, never an excess."""
        self._entry(key).unlink(missing_ok=True)

    def usage(self) -> int:
        """Bytes the cache holds now: its entries and the temp files being filled."""
        return sum(size for _, size, _ in self._scan())

    # -- making room -----------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        # Opened per call: flock locks belong to an open file, which a forked child would
        # otherwise share with its parent (and threads of one process with each other).
        fd = os.open(self.folder / _LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _reserve(self, size: int) -> tuple[int, str]:
        """Make room for ``size`` bytes and claim it with a temp file of that size."""
        with self._locked():
            used = self._recorded_usage()
            if used is None or used + size > self.max_bytes:
                target = max(0, self.max_bytes - size - self.max_bytes // SPARE)
                used = self._evict(target)
            fd, temp = tempfile.mkstemp(dir=self.folder, prefix=f"{_TEMP}{os.getpid()}-")
            try:
                os.ftruncate(fd, size)
            except BaseException:
                os.close(fd)
                Path(temp).unlink(missing_ok=True)
                raise
            self._record_usage(used + size)
        return fd, temp

    def _recorded_usage(self) -> int | None:
        try:
            return int((self.folder / _USAGE).read_text())
        except (OSError, ValueError):
            return None

    def _record_usage(self, used: int) -> None:
        (self.folder / _USAGE).write_text(str(used))

    def _scan(self) -> list[tuple[int, int, str]]:
        """(last use in ns, size, name) of every entry and live temp file; the temp files of
        processes that died are removed. Files that vanish meanwhile are skipped."""
        found = []
        with os.scandir(self.folder) as entries:
            for entry in entries:
                if entry.name in (_LOCK, _USAGE):
                    continue
                try:
                    stat = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if entry.name.startswith(_TEMP):
                    if not _alive(entry.name):
                        Path(entry.path).unlink(missing_ok=True)
                        continue
                    found.append((2**63, stat.st_size, entry.name))  # in use: never evicted
                else:
                    found.append((stat.st_mtime_ns, stat.st_size, entry.name))
        return found

    def _evict(self, target: int) -> int:
        """Remove the least recently used entries until at most ``target`` bytes remain (or
        only temp files do); the bytes that remain."""
        found = sorted(self._scan())
        used = sum(size for _, size, _ in found)
        for last_use, size, name in found:
            if used <= target or last_use == 2**63:
                break
            (self.folder / name).unlink(missing_ok=True)
            used -= size
        return used


def _alive(temp_name: str) -> bool:
    """Whether the process that named this temp file (``.tmp-PID-…``) still runs."""
    pid_text = temp_name[len(_TEMP) :].partition("-")[0]
    if not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
