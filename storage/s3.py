"""S3-compatible object storage: what an ``s3://`` URL names, and the client that reaches it.

One client per process, configured the way every AWS SDK is: credentials, region and
endpoint from the standard ``AWS_*`` variables and the shared config and credentials
files (``AWS_ENDPOINT_URL`` or ``AWS_ENDPOINT_URL_S3`` for MinIO, SeaweedFS, Ceph RGW,
R2 or GCS's S3 API). A store or shelf in a bucket (issue 27) uses this module only;
boto3 is imported the first time a process needs a client.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from typing import Any

SCHEME = "s3://"
# Bucket names as S3 allows them today (3 to 63 characters, lowercase, digits, '.', '-'); the
# older uppercase and underscore names are refused rather than half supported.
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
# Connections per process: a serving process's reads, its catalog listing and its
# conversion workers' uploads share them (botocore's default of 10 queues reads).
MAX_CONNECTIONS = 32


def is_s3_url(value: str) -> bool:
    return value.startswith(SCHEME)


@dataclass(frozen=True, slots=True)
class S3Location:
    """A bucket and a key prefix (``""`` or ending in ``/``): ``s3://BUCKET/PREFIX``."""

    bucket: str
    prefix: str = ""

    @classmethod
    def parse(cls, url: str) -> S3Location:
        """``s3://BUCKET`` or ``s3://BUCKET/PREFIX``; ValueError naming what is wrong."""
        if not is_s3_url(url):
            raise ValueError(f"{url!r} is not an s3:// URL")
        bucket, _, prefix = url[len(SCHEME) :].partition("/")
        if not _BUCKET.fullmatch(bucket) or ".." in bucket:
            raise ValueError(
                f"{url!r}: {bucket!r} is not a bucket name (3-63 lowercase letters, digits, "
                "'.' or '-')"
            )
        prefix = prefix.strip("/")
        if any(part in ("", ".", "..") for part in prefix.split("/")) and prefix:
            raise ValueError(f"{url!r}: the prefix must be plain names separated by '/'")
        return cls(bucket, f"{prefix}/" if prefix else "")

    def key(self, relative: str) -> str:
        """The object key of ``relative`` (a plain relative path) under this prefix."""
        return self.prefix + relative

    def relative(self, key: str) -> str | None:
        """``key`` relative to this prefix; None for a key outside it."""
        return key[len(self.prefix) :] if key.startswith(self.prefix) else None

    def __str__(self) -> str:
        return f"{SCHEME}{self.bucket}/{self.prefix}".rstrip("/")


def client_environment() -> dict[str, str]:
    """The variables this process's S3 client is configured by (``AWS_*`` and the
    addressing style), to hand to the conversion workers: they are forked by a forkserver
    that started with the environment of its own time."""
    return {
        name: value
        for name, value in os.environ.items()
        if name.startswith("AWS_") or name == "DOCSHELF_S3_ADDRESSING_STYLE"
    }


def adopt_environment(environment: dict[str, str]) -> None:
    """Make ``environment`` (:func:`client_environment` of the parent) this process's S3
    configuration, dropping any the process had of its own; before its first client."""
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        del os.environ[name]
    os.environ.pop("DOCSHELF_S3_ADDRESSING_STYLE", None)
    os.environ.update(environment)
    _clients.pop(os.getpid(), None)


_clients: dict[int, Any] = {}
_clients_lock = threading.Lock()


def s3_client() -> Any:
    """This process's S3 client (boto3 clients are thread-safe, not fork-safe: one per pid).

    A configured endpoint (``AWS_ENDPOINT_URL`` / ``AWS_ENDPOINT_URL_S3``) means a server
    other than AWS, which names buckets in the path (MinIO, SeaweedFS and Ceph RGW need
    it); ``DOCSHELF_S3_ADDRESSING_STYLE`` (``path``, ``virtual``, ``auto``) overrides that.
    """
    pid = os.getpid()
    client = _clients.get(pid)
    if client is not None:
        return client
    with _clients_lock:
        client = _clients.get(pid)
        if client is None:
            import boto3
            from botocore.config import Config

            custom_endpoint = bool(
                os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
            )
            style = os.environ.get("DOCSHELF_S3_ADDRESSING_STYLE") or (
                "path" if custom_endpoint else "auto"
            )
            config = Config(
                s3={"addressing_style": style},
                retries={"mode": "standard", "max_attempts": 4},
                max_pool_connections=MAX_CONNECTIONS,
                connect_timeout=5,
                read_timeout=30,
            )
            client = boto3.session.Session().client("s3", config=config)
            _clients[pid] = client
    return client


def _error(exc: BaseException) -> dict[str, Any]:
    """The service's error of a botocore ``ClientError`` (``{}`` for any other error)."""
    response = getattr(exc, "response", None)
    error = response.get("Error") if isinstance(response, dict) else None
    return error if isinstance(error, dict) else {}


def error_code(exc: BaseException) -> str:
    """The service's error code (``NoSuchKey``, ``InvalidRange``, ``404``...), or ``""``."""
    return str(_error(exc).get("Code", ""))


def error_text(exc: BaseException) -> str:
    """A botocore error in a few words: the service's code and message, or the error."""
    error = _error(exc)
    text = f"{error.get('Code', '')}: {error.get('Message', '')}".strip(": ")
    return text or str(exc)


def is_missing(exc: BaseException) -> bool:
    """Whether a botocore error says the object (or bucket) is not there."""
    return error_code(exc) in ("404", "NoSuchKey", "NoSuchBucket", "NotFound")
