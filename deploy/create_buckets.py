"""compose.scale.yml's init step: create the buckets that the given s3:// URLs name.

Run once, with the docshelf image's Python and the same ``AWS_*`` variables as docshelf,
before the indexer and the replicas start (they need the buckets to exist: docshelf
writes into a bucket, it does not create one). A bucket that exists already is left as
it is, so running it again — every ``docker compose up`` does — changes nothing.

    python create_buckets.py s3://docshelf/formats shelf=s3://docshelf/shelf

Each argument is a store URL or a ``DOCSHELF_SHELVES`` value (``NAME=s3://BUCKET/PREFIX``
entries, comma-separated); entries that are folders, not s3:// URLs, are skipped.
"""

from __future__ import annotations

import sys

from docshelf.storage.s3 import S3Location, is_missing, is_s3_url, s3_client


def bucket_urls(arguments: list[str]) -> list[str]:
    """The s3:// URLs in store URLs and shelf lists (``NAME=URL``, comma-separated)."""
    urls = []
    for argument in arguments:
        for entry in argument.split(","):
            url = entry.strip()
            if not is_s3_url(url):
                url = url.partition("=")[2].strip()
            if is_s3_url(url):
                urls.append(url)
    return urls


def create_buckets(urls: list[str]) -> list[str]:
    """The buckets created (those that already existed are not listed)."""
    client = s3_client()
    created: list[str] = []
    for bucket in dict.fromkeys(S3Location.parse(url).bucket for url in urls):
        try:
            client.head_bucket(Bucket=bucket)
        except Exception as exc:
            if not is_missing(exc):
                raise
            client.create_bucket(Bucket=bucket)
            created.append(bucket)
    return created


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: create_buckets.py s3://BUCKET[/PREFIX]...", file=sys.stderr)
        return 2
    try:
        created = create_buckets(bucket_urls(argv))
    except ValueError as exc:  # not an s3:// URL
        print(f"create_buckets: {exc}", file=sys.stderr)
        return 2
    print(f"created: {', '.join(created)}" if created else "the buckets exist already")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
