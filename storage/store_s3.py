"""The representation store in an S3-compatible bucket (issue 27, item 1).

``DOCSHELF_STORE_URL=s3://BUCKET/PREFIX`` puts every stored format under
``PREFIX/<store_key>`` in the bucket, so hosts that share only the database and the
bucket serve the same formats. The folder store's guarantees hold (DESIGN D16):

- keys are :func:`storage.store.store_key`, content-addressed, under the prefix;
- an object is whole or absent: a PUT, or a multipart upload's completion, is atomic
  in S3, and a failed multipart upload is aborted; the builder records the row only
  after :meth:`S3Store.put` returned, so no committed row names a missing upload;
- objects are deleted only by :mod:`storage.garbage`, once no committed row names them;
- a missing object raises FileNotFoundError, as a missing file does, and the read that
  met it rebuilds the format (store recovery in ``storage.document_bytes``).

Transfers stream. Uploads from :data:`MULTIPART_BYTES` up go multipart through boto3's
managed transfer, a part at a time. A download is one GET whose body is copied a chunk
at a time into the local cache's file, or, without a cache, into the one buffer
:meth:`get` returns (``get`` returns bytes because the MCP response embeds them; the
transfer never holds a second whole copy). One GET rather than ``download_fileobj``:
that adds a HEAD to every read, and its parallel ranged GETs pay off only for objects
far above the read cap (``DOCSHELF_MAX_READ_MB``, 32 MB by default).

A bounded cache (:class:`storage.store_cache.StoreCache`) keeps what this host read:
a hit makes no request at all.
"""

from __future__ import annotations

import errno
import hashlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from docshelf.storage.s3 import S3Location, is_missing, s3_client
from docshelf.storage.store import StoreSpec, check_key
from docshelf.storage.store_cache import StoreCache

# From this size an upload goes multipart (boto3's own default threshold and part size).
MULTIPART_BYTES = 8 * 1024 * 1024
# Parts of one upload in flight at once: a worker's upload should not take every
# connection of its process.
UPLOAD_CONCURRENCY = 4
CHUNK_BYTES = 1024 * 1024


class StoreUnavailable(Exception):
    """The bucket cannot be used now; ``lasting`` when a setting must change (credentials
    refused), not when retrying later may work (a server that does not answer)."""

    def __init__(self, message: str, *, lasting: bool) -> None:
        super().__init__(message)
        self.lasting = lasting


class S3Store:
    """Stored formats as objects under a bucket prefix, with an optional local cache."""

    def __init__(
        self,
        where: S3Location,
        *,
        cache: StoreCache | None = None,
        client: Any = None,
        multipart_bytes: int = MULTIPART_BYTES,
    ) -> None:
        self.where = where
        self.cache = cache
        self._client = client  # None: this process's client (storage.s3), made on first use
        self.multipart_bytes = multipart_bytes

    @classmethod
    def from_spec(cls, spec: StoreSpec) -> S3Store:
        cache = None
        if spec.cache_dir and spec.cache_bytes > 0:
            cache = StoreCache(Path(spec.cache_dir), spec.cache_bytes)
        return cls(S3Location.parse(spec.url), cache=cache)

    @property
    def location(self) -> str:
        return str(self.where)

    @property
    def spec(self) -> StoreSpec:
        if self.cache is None:
            return StoreSpec(self.location)
        return StoreSpec(self.location, str(self.cache.folder), self.cache.max_bytes)

    @property
    def client(self) -> Any:
        # Looked up per use, not kept: a boto3 client must not cross a fork (s3_client
        # makes one per process).
        return self._client if self._client is not None else s3_client()

    def _object(self, key: str) -> str:
        return self.where.key(check_key(key))

    def put(self, key: str, data: bytes) -> str:
        """Upload ``data`` as ``key`` (multipart from :attr:`multipart_bytes`); its sha256.
        The object is visible only once whole."""
        name = self._object(key)
        if len(data) < self.multipart_bytes:
            self.client.put_object(Bucket=self.where.bucket, Key=name, Body=data)
        else:
            from boto3.s3.transfer import TransferConfig

            config = TransferConfig(
                multipart_threshold=self.multipart_bytes,
                multipart_chunksize=self.multipart_bytes,
                max_concurrency=UPLOAD_CONCURRENCY,
            )
            # BytesIO over bytes shares them: the parts are read from ``data`` itself.
            self.client.upload_fileobj(io.BytesIO(data), self.where.bucket, name, Config=config)
        return hashlib.sha256(data).hexdigest()

    def get(self, key: str) -> bytes:
        """The object ``key``: from the cache if this host has it, else one streamed GET
        (kept in the cache when it fits). FileNotFoundError if the bucket has no such key."""
        name = self._object(key)
        if self.cache is not None and (cached := self.cache.get(key)) is not None:
            return cached
        try:
            response = self.client.get_object(Bucket=self.where.bucket, Key=name)
        except Exception as exc:
            if is_missing(exc):
                raise FileNotFoundError(
                    errno.ENOENT, "no such object in the store", f"{self.location}/{key}"
                ) from exc
            raise
        body = response["Body"]
        try:
            size = int(response["ContentLength"])
            if self.cache is not None and self.cache.fits(size):
                return self.cache.fill(key, size, lambda out: _copy(body, out))
            buffer = io.BytesIO()
            _copy(body, buffer)
            return buffer.getvalue()  # the buffer's own bytes, not a copy
        finally:
            body.close()

    def delete(self, key: str) -> None:
        """Delete the object (S3 deletes of a missing key succeed) and this host's copy."""
        self.client.delete_object(Bucket=self.where.bucket, Key=self._object(key))
        if self.cache is not None:
            self.cache.discard(key)

    def keys_before(self, cutoff: float) -> Iterator[str]:
        """Keys under the prefix last written before ``cutoff``, listed a page at a time;
        multipart uploads begun before it (a host that died mid-upload) are aborted, so
        their parts stop costing storage."""
        bucket, prefix = self.where.bucket, self.where.prefix
        uploads = self.client.get_paginator("list_multipart_uploads")
        for page in uploads.paginate(Bucket=bucket, Prefix=prefix):
            for upload in page.get("Uploads", []):
                if upload["Initiated"].timestamp() < cutoff:
                    self.client.abort_multipart_upload(
                        Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"]
                    )
        for page in self.client.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=prefix
        ):
            for item in page.get("Contents", []):
                key = self.where.relative(item["Key"])
                if key and item["LastModified"].timestamp() < cutoff:
                    yield key

    def check(self) -> None:
        """Reach the bucket once (at start), so a wrong setting is said at the door:
        :class:`StoreUnavailable` with what to change."""
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
            EndpointConnectionError,
            NoCredentialsError,
        )

        client = self.client
        where = f"{self.where.bucket} (DOCSHELF_STORE_URL={self.location})"
        endpoint = client.meta.endpoint_url
        try:
            client.head_bucket(Bucket=self.where.bucket)
        except NoCredentialsError:
            raise StoreUnavailable(
                f"no credentials for the object store of bucket {where}; set "
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)",
                lasting=True,
            ) from None
        except ClientError as exc:
            if is_missing(exc):
                raise StoreUnavailable(
                    f"there is no bucket {where} at {endpoint}; create it, or name another",
                    lasting=False,
                ) from None
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            raise StoreUnavailable(
                f"the object store at {endpoint} refuses bucket {where} (HTTP {status}); "
                "check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and the bucket's policy",
                lasting=status in (401, 403),
            ) from None
        except (EndpointConnectionError, BotoCoreError) as exc:
            raise StoreUnavailable(
                f"cannot reach the object store at {endpoint} for bucket {where}: {exc}; "
                "check AWS_ENDPOINT_URL, and that the store is running",
                lasting=False,
            ) from None


def _copy(body: Any, out: BinaryIO) -> None:
    """Copy a streaming response body into ``out``, a chunk at a time."""
    for chunk in body.iter_chunks(CHUNK_BYTES):
        out.write(chunk)
