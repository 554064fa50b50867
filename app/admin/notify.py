"""Bucket notifications: the S3 event-notification JSON, as the keys it names.

MinIO's webhook target sends, and AWS S3's events (through SNS, SQS or Lambda) carry,
one shape (AWS's "event message structure"): ``{"Records": [{"s3": {"bucket":
{"name": …}, "object": {"key": …}}}, …]}``, the key URL-encoded (``+`` for a space).
POST /admin/shelves/{name}/notify refreshes those keys at once (issue 27, item 2); the
periodic listing (storage.bucket_poll) still catches what a notification missed.
AWS's ``s3:TestEvent`` (sent when a notification is configured) names no key.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote_plus

from docshelf.storage.s3 import S3Location

SHAPE = '{"Records": [{"s3": {"bucket": {"name": ...}, "object": {"key": ...}}}]}'


class BadNotification(ValueError):
    """A body that is not an S3 event notification; the message says what is wrong."""


def _record_key(number: int, record: Any) -> tuple[str | None, str]:
    s3 = record.get("s3") if isinstance(record, dict) else None
    target = s3.get("object") if isinstance(s3, dict) else None
    key = target.get("key") if isinstance(target, dict) else None
    if not isinstance(key, str) or not key:
        raise BadNotification(f"Records[{number}] has no s3.object.key; expected {SHAPE}")
    bucket = s3.get("bucket") if isinstance(s3, dict) else None
    name = bucket.get("name") if isinstance(bucket, dict) else None
    return (name if isinstance(name, str) else None), unquote_plus(key)


def notified_keys(body: bytes) -> list[tuple[str | None, str]]:
    """(bucket or None, decoded key) of each record of an S3 event notification."""
    try:
        event = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadNotification(f"the body is not JSON ({exc}); expected {SHAPE}") from None
    if isinstance(event, dict) and "Records" not in event and event.get("Event") == "s3:TestEvent":
        return []
    records = event.get("Records") if isinstance(event, dict) else None
    if not isinstance(records, list):
        raise BadNotification(f"the body has no Records list; expected {SHAPE}")
    return [_record_key(number, record) for number, record in enumerate(records)]


def shelf_paths(location: S3Location, keys: list[tuple[str | None, str]]) -> list[str]:
    """The shelf paths of the keys under ``location`` (other buckets' and prefixes' are
    not this shelf's documents)."""
    paths: list[str] = []
    for bucket, key in keys:
        relative = location.relative(key) if bucket in (None, location.bucket) else None
        if relative and relative not in paths:
            paths.append(relative)
    return paths
