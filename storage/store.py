"""The representation store: converted variants, content-addressed, in a folder or a bucket.

A key is derived from the source file's sha256, the converter's name and
version, and the variant's MIME type, so identical files share their
conversions, a converter upgrade makes new keys (old ones are re-made lazily),
and a key never needs invalidating.

Two backends keep the same guarantees (DESIGN D16): :class:`RepresentationStore`,
a folder on this machine (the default; writes are atomic, temp file + rename), and
:class:`docshelf.storage.store_s3.S3Store`, a prefix in an S3-compatible bucket
(issue 27: hosts that share no folder; a PUT is atomic). Both write a key whole
before the row naming it commits, delete it only through :mod:`storage.garbage`,
and raise FileNotFoundError for a missing key, which a read answers by rebuilding
it (store recovery in ``storage.document_bytes``). :func:`open_store` opens the one a
:class:`StoreSpec` names; the spec, not an open store, is what crosses into a
conversion worker.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from docshelf.storage.s3 import is_s3_url

FILE_SCHEME = "file://"


def store_key(source_sha256: str, converter: str, version: str, mime_type: str) -> str:
    slug = re.sub(r"[^a-z0-9.+-]+", "_", mime_type.lower())
    return f"{source_sha256[:2]}/{source_sha256}/{converter}-{version}/{slug}"


def check_key(key: str) -> str:
    """``key``, if it is a relative path of plain names (see :func:`store_key`); one with an
    empty, ``.`` or ``..`` part could leave the store (a folder, or the bucket's prefix)
    and is refused."""
    parts = key.split("/")
    if key.startswith("/") or "\x00" in key or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"store key {key!r} leaves the store")
    return key


class Store(Protocol):
    """What the builder, the conversion workers, reads and garbage use of a store."""

    @property
    def location(self) -> str:
        """Where the store is, for operators: a folder path or ``s3://BUCKET/PREFIX``."""
        ...

    @property
    def spec(self) -> StoreSpec:
        """How another process (a conversion worker) opens this same store."""
        ...

    def put(self, key: str, data: bytes) -> str:
        """Store ``data`` under ``key``, whole or not at all; return its sha256."""
        ...

    def get(self, key: str) -> bytes:
        """The bytes under ``key``; FileNotFoundError if there are none."""
        ...

    def delete(self, key: str) -> None:
        """Remove ``key`` (nothing if it is not there). Only :mod:`storage.garbage` calls it."""
        ...

    def keys_before(self, cutoff: float) -> Iterator[str]:
        """Every key written before ``cutoff`` (seconds since the epoch), and drop what a
        writer that died left half-written that long ago (temp files, unfinished multipart
        uploads). Only the orphan sweep (:func:`storage.garbage.sweep_orphans`) calls it."""
        ...


@dataclass(frozen=True, slots=True)
class StoreSpec:
    """A store, as plain values that pickle: ``url`` is a folder path or an ``s3://`` URL;
    ``cache_dir``/``cache_bytes`` bound the local copy of a bucket store's objects (no
    cache when ``cache_bytes`` is 0; a folder store has none)."""

    url: str
    cache_dir: str | None = None
    cache_bytes: int = 0

    @property
    def is_s3(self) -> bool:
        return is_s3_url(self.url)

    def local_folder(self) -> Path | None:
        """The folder this store writes on this machine: the store itself, or the cache."""
        if not self.is_s3:
            return Path(self.url)
        return Path(self.cache_dir) if self.cache_dir and self.cache_bytes > 0 else None


def folder_of(url: str) -> str:
    """A folder store's path from ``file:///PATH`` or a plain path (``~`` expanded)."""
    if url.startswith(FILE_SCHEME):
        rest = url[len(FILE_SCHEME) :]
        if not rest.startswith("/"):
            raise ValueError(f"{url!r}: write file:///ABSOLUTE/PATH (three slashes)")
        return rest
    return str(Path(url).expanduser())


def open_store(spec: StoreSpec) -> Store:
    """The store ``spec`` names: a folder (made if missing), or a bucket prefix (boto3 is
    imported only then, the first time the store reaches the bucket)."""
    if spec.is_s3:
        from docshelf.storage.store_s3 import S3Store

        return S3Store.from_spec(spec)
    return RepresentationStore(Path(spec.url))


class RepresentationStore:
    """The folder store: one file per key under ``root``."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root.resolve()

    @property
    def location(self) -> str:
        return str(self.root)

    @property
    def spec(self) -> StoreSpec:
        return StoreSpec(str(self.root))

    def _path(self, key: str) -> Path:
        """The file for ``key``. Checked by its parts (:func:`check_key`) rather than by
        resolving it: nothing in the store is a symlink, and a ``resolve()`` per read was a
        tenth of a small read's time (issue 13)."""
        return self.root / check_key(key)

    def put(self, key: str, data: bytes) -> str:
        """Store ``data`` under ``key``; return its sha256."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return hashlib.sha256(data).hexdigest()

    def get(self, key: str) -> bytes:
        return self._path(key).read_bytes()

    def keys_before(self, cutoff: float) -> Iterator[str]:
        for folder, _dirs, names in os.walk(self.root):
            for name in names:
                path = Path(folder, name)
                try:
                    written = path.stat().st_mtime
                except FileNotFoundError:
                    continue  # deleted meanwhile
                if written >= cutoff:
                    continue
                if name.startswith(".tmp-"):
                    path.unlink(missing_ok=True)  # a put that died before its rename
                else:
                    yield path.relative_to(self.root).as_posix()

    def delete(self, key: str) -> None:
        path = self._path(key)
        path.unlink(missing_ok=True)
        for parent in (path.parent, path.parent.parent, path.parent.parent.parent):
            try:
                parent.rmdir()
            except OSError:
                break
