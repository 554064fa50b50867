"""A shelf in a bucket: ``--shelf NAME=s3://BUCKET/PREFIX`` (issue 27, item 2).

The objects under the prefix are the shelf's documents; an object's key less the
prefix is its path, and becomes a URI by the same rules as a file's path
(storage/uris.py), so the indexer refuses the same odd names with the same reasons
(a key with ``//``, a ``.`` or ``..`` segment, over the URI length limit). A key
ending in ``/`` is a "folder marker" some tools write: it is a folder, as on disk,
and not listed.

What every "did it change" check compares is the size, LastModified (whole seconds,
as S3 keeps it) and the ETag (:class:`~storage.shelves.Seen`), so an object rewritten
within one second at the same size is still seen to change. The catalog pass lists
(paged, :data:`LIST_PAGE` keys a request) and reads only the first bytes of an object,
by a ranged GET, to detect its type; a read of an original streams the object and
stops at the read limit. The server never writes to a bucket shelf (DESIGN D8).
"""

from __future__ import annotations

import errno
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from docshelf.storage.ignore_files import MAX_IGNORE_FILE, IgnoreRules, scope_for, served
from docshelf.storage.s3 import S3Location, error_code, error_text, is_missing, s3_client
from docshelf.storage.shelves import FileBytes, OutsideShelf, Seen
from docshelf.storage.uris import printable

log = logging.getLogger(__name__)

LIST_PAGE = 1000  # keys per ListObjectsV2 request: S3's largest page
_CHUNK = 1 << 20


def _mtime_ns(modified: datetime) -> int:
    """LastModified in whole seconds: a listing may say more than a GET's header can."""
    return int(modified.timestamp()) * 1_000_000_000


def _etag(raw: str | None) -> str | None:
    return raw.strip('"') if raw else None


def _errors() -> tuple[type[BaseException], ...]:
    from botocore.exceptions import BotoCoreError, ClientError

    return (BotoCoreError, ClientError)


@dataclass(frozen=True, slots=True)
class BucketShelf:
    """The objects under ``bucket`` (a bucket and a key prefix), as a shelf."""

    name: str
    bucket: S3Location
    ignore: IgnoreRules = field(default_factory=IgnoreRules)
    page_size: int | None = None  # None: LIST_PAGE
    _said: set[tuple[str, str]] = field(default_factory=set, compare=False, repr=False)

    @property
    def location(self) -> str:
        return str(self.bucket)

    @property
    def _client(self) -> Any:
        return s3_client()

    def _key(self, relative_path: str) -> str:
        """The key of a plain relative path; :class:`OutsideShelf` for any other (a ``..``
        must not reach a key outside the prefix, on a server that resolves it)."""
        if any(p in ("", ".", "..") for p in relative_path.split("/")) or "\x00" in relative_path:
            raise OutsideShelf(f"{relative_path!r} is not a plain relative path")
        return self.bucket.key(relative_path)

    def check(self) -> None:
        """The bucket is reachable and this process may list the prefix: else one line."""
        try:
            self._client.list_objects_v2(
                Bucket=self.bucket.bucket, Prefix=self.bucket.prefix, MaxKeys=1
            )
        except _errors() as exc:
            raise ValueError(
                f"shelf {self.name!r}: cannot list {self.location} ({error_text(exc)}); check the "
                "bucket name, and the AWS_* credentials, region and endpoint this process has"
            ) from None

    def walk(self, under: str | None = None) -> Iterator[tuple[str, Seen]]:
        """Every object under the prefix (or under its folder ``under``), a page at a time.

        A listing that fails part way raises: a pass that took a partial listing for the
        shelf would remove every document it had not reached yet.
        """
        prefix = self.bucket.prefix + (under.strip("/") + "/" if under else "")
        pages = self._client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket.bucket,
            Prefix=prefix,
            PaginationConfig={"PageSize": self.page_size or LIST_PAGE},
        )
        listed = []
        for page in pages:
            for item in page.get("Contents", ()):
                relative = self.bucket.relative(item["Key"])
                if not relative or relative.endswith("/"):
                    continue  # the prefix itself, or a folder marker
                seen = Seen(int(item["Size"]), _mtime_ns(item["LastModified"]), _etag(item["ETag"]))
                listed.append((relative, seen))
        # Judged once listed: the ignore files of a folder may come after its other keys.
        yield from served(self, listed, under)

    def look(self, relative_path: str) -> Seen | None:
        """The object at ``relative_path`` (HEAD), or None if there is none (or the name is
        ignored or not a plain path). Other errors raise: an object is never taken for
        gone (and its document removed) because the store did not answer."""
        if relative_path.endswith("/"):
            return None
        try:
            key = self._key(relative_path)
        except OutsideShelf:
            return None
        if self.ignore.ignores(relative_path):
            return None
        scope = scope_for(self, relative_path)  # a GET for each ignore file above it
        if scope is None or self.ignore.ignores(relative_path, scope):
            return None
        try:
            head = self._client.head_object(Bucket=self.bucket.bucket, Key=key)
        except _errors() as exc:
            if is_missing(exc):
                return None
            raise OSError(
                errno.EIO, f"cannot look at {self.location}/{relative_path}: {error_text(exc)}"
            ) from exc
        return Seen(
            int(head["ContentLength"]), _mtime_ns(head["LastModified"]), _etag(head.get("ETag"))
        )

    def ignore_file(self, relative_path: str) -> bytes | None:
        """An ignore file's bytes (storage.ignore_files); None when there is no such object."""
        try:
            return self.read(relative_path, limit=MAX_IGNORE_FILE).data
        except FileNotFoundError:
            return None

    def cannot_read_ignore_files(self, folder: str, error: OSError) -> None:
        if (folder, str(error)) not in self._said:  # once, not at every listing
            self._said.add((folder, str(error)))
            log.warning(
                "shelf %s: cannot read the ignore files of folder %s (%s): its objects are "
                "not served until they can be read, or are removed",
                self.name,
                printable(folder) if folder else "(its root)",
                error.strerror or error,
            )

    def is_folder(self, relative_path: str) -> bool:
        """Whether any object's key continues ``relative_path/`` (a folder, as S3 has none)."""
        try:
            prefix = self._key(relative_path.rstrip("/")) + "/"
        except OutsideShelf:
            return False
        try:
            listed = self._client.list_objects_v2(
                Bucket=self.bucket.bucket, Prefix=prefix, MaxKeys=1
            )
        except _errors():
            return False
        return bool(listed.get("KeyCount") or listed.get("Contents"))

    def _get(self, relative_path: str, **extra: str) -> dict[str, Any]:
        try:
            return dict(
                self._client.get_object(
                    Bucket=self.bucket.bucket, Key=self._key(relative_path), **extra
                )
            )
        except _errors() as exc:
            if is_missing(exc):
                raise FileNotFoundError(errno.ENOENT, f"no object {relative_path!r}") from None
            if error_code(exc) == "InvalidRange":
                return {"Body": None}  # a range of an empty object: no bytes to read
            raise OSError(errno.EIO, error_text(exc)) from exc

    def head(self, relative_path: str, size: int) -> bytes:
        """The first ``size`` bytes by a ranged GET: the object is never downloaded whole."""
        body = self._get(relative_path, Range=f"bytes=0-{size - 1}")["Body"]
        if body is None:
            return b""
        with body:
            return bytes(body.read(size))

    def read(self, relative_path: str, *, limit: int | None = None) -> FileBytes:
        """The object, streamed in chunks; ``limit`` bytes at most (``OSError`` EFBIG,
        before any byte is read when its length says so). The ETag and LastModified are
        the same GET's, so what is hashed is the version they name."""
        got = self._get(relative_path)
        body = got["Body"]
        if body is None:
            return FileBytes(b"", 0, 0)
        with body:
            length = int(got.get("ContentLength", 0))
            if limit is not None and length > limit:
                raise OSError(errno.EFBIG, f"{length} bytes is over the limit of {limit}")
            chunks, total = [], 0
            try:
                for chunk in body.iter_chunks(_CHUNK):
                    total += len(chunk)
                    if limit is not None and total > limit:
                        raise OSError(
                            errno.EFBIG, f"{relative_path!r} grew over the limit of {limit}"
                        )
                    chunks.append(chunk)
            except _errors() as exc:
                raise OSError(errno.EIO, f"reading {relative_path!r}: {error_text(exc)}") from exc
        return FileBytes(
            b"".join(chunks), total, _mtime_ns(got["LastModified"]), _etag(got.get("ETag"))
        )
