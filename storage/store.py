"""The representation store: converted variants on disk, content-addressed.

A key is derived from the source file's sha256, the converter's name and
version, and the variant's MIME type, so identical files share their
conversions, a converter upgrade makes new keys (old ones are re-made lazily),
and a key never needs invalidating. Writes are atomic (temp file + rename).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path


def store_key(source_sha256: str, converter: str, version: str, mime_type: str) -> str:
    slug = re.sub(r"[^a-z0-9.+-]+", "_", mime_type.lower())
    return f"{source_sha256[:2]}/{source_sha256}/{converter}-{version}/{slug}"


class RepresentationStore:
    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root.resolve()

    def _path(self, key: str) -> Path:
        """The file for ``key``. Keys are relative paths of plain names (see :func:`store_key`);
        one with an empty, ``.`` or ``..`` part could leave the store and is refused. Checked
        by its parts rather than by resolving it: nothing in the store is a symlink, and a
        ``resolve()`` per read was a tenth of a small read's time (issue 13)."""
        parts = key.split("/")
        if key.startswith("/") or "\x00" in key or any(p in ("", ".", "..") for p in parts):
            raise ValueError(f"store key {key!r} leaves the store")
        return self.root / key

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

    def delete(self, key: str) -> None:
        path = self._path(key)
        path.unlink(missing_ok=True)
        for parent in (path.parent, path.parent.parent, path.parent.parent.parent):
            try:
                parent.rmdir()
            except OSError:
                break
