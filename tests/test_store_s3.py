"""The representation store in a bucket (issue 27, item 1), in-process against a real
SeaweedFS S3 server: the folder store's contract, multipart uploads, the bounded local
cache (a hit makes no request, the bound holds, several processes share it), and the
settings that choose the store. Requests are counted by botocore's own event hooks on a
real client, not by a mock."""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import os
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docshelf.app.startup import StartupError, load_settings
from docshelf.storage import s3
from docshelf.storage.s3 import S3Location
from docshelf.storage.store import RepresentationStore, StoreSpec, open_store, store_key
from docshelf.storage.store_cache import StoreCache
from docshelf.storage.store_s3 import S3Store
from tests.support.object_store import SeaweedServer

KIB = 1024


def counted(client: Any) -> Counter[str]:
    """Every S3 operation ``client`` sends from now on, by name (botocore's event hook)."""
    calls: Counter[str] = Counter()

    def count(model: Any, **_: Any) -> None:
        calls[model.name] += 1

    client.meta.events.register("before-call.s3", count)
    return calls


def cache_bytes(folder: Path) -> int:
    """Bytes in the cache folder, its bookkeeping files aside (and those another process
    removes while they are counted)."""
    total = 0
    for path in folder.iterdir():
        if path.name not in (".lock", ".usage"):
            with contextlib.suppress(FileNotFoundError):
                total += path.stat().st_size
    return total


@pytest.fixture
def bucket_url(s3_server: SeaweedServer) -> str:
    return f"s3://{s3_server.new_bucket()}/formats"


@pytest.fixture
def aws_env(s3_server: SeaweedServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process's AWS_* variables pointing at the test server, and a fresh client."""
    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    saved = dict(s3._clients)
    s3._clients.clear()
    yield
    s3._clients.clear()
    s3._clients.update(saved)


def make_store(
    s3_server: SeaweedServer, url: str, cache: StoreCache | None = None, **kwargs: Any
) -> tuple[S3Store, Counter[str]]:
    client = s3_server.client()
    return S3Store(S3Location.parse(url), cache=cache, client=client, **kwargs), counted(client)


def test_put_get_delete_under_the_prefix_and_a_missing_key_is_file_not_found(
    s3_server: SeaweedServer, bucket_url: str
) -> None:
    store, _ = make_store(s3_server, bucket_url)
    key = store_key("ab" * 32, "markdown", "1", "text/markdown")
    assert store.put(key, b"# hello\n") == hashlib.sha256(b"# hello\n").hexdigest()
    bucket = S3Location.parse(bucket_url).bucket
    assert s3_server.keys(bucket) == [f"formats/{key}"]
    assert store.get(key) == b"# hello\n"
    store.delete(key)
    assert s3_server.keys(bucket) == []
    # The exception the folder store raises, which the read path answers by rebuilding.
    with pytest.raises(FileNotFoundError) as missing:
        store.get(key)
    assert missing.value.filename == f"{bucket_url}/{key}"
    with pytest.raises(FileNotFoundError):
        RepresentationStore(Path(os.devnull).parent / "no-such-store-here").get(key)
    store.delete(key)  # deleting what is gone is no error, as in the folder store
    with pytest.raises(ValueError, match="leaves the store"):
        store.put("../outside", b"x")


def test_a_large_format_is_uploaded_in_parts_and_read_back_whole(
    s3_server: SeaweedServer, bucket_url: str
) -> None:
    store, calls = make_store(s3_server, bucket_url, multipart_bytes=5 * KIB * KIB)
    data = random.Random(1).randbytes(11 * KIB * KIB + 7)
    store.put("aa/big/x-1/application_pdf", data)
    assert calls["CreateMultipartUpload"] == 1 and calls["UploadPart"] == 3
    assert calls["CompleteMultipartUpload"] == 1 and calls["PutObject"] == 0
    assert store.get("aa/big/x-1/application_pdf") == data
    assert calls["GetObject"] == 1 and calls["HeadObject"] == 0  # one streamed GET
    store.put("aa/small/x-1/text_plain", b"small")
    assert calls["PutObject"] == 1 and calls["CreateMultipartUpload"] == 1


def test_a_cache_hit_makes_no_request_and_a_deleted_key_leaves_the_cache(
    s3_server: SeaweedServer, bucket_url: str, tmp_path: Path
) -> None:
    cache = StoreCache(tmp_path / "cache", 1024 * KIB)
    store, calls = make_store(s3_server, bucket_url, cache)
    store.put("aa/one/x-1/text_plain", b"one")
    assert cache_bytes(cache.folder) == 0  # writing does not fill the cache; reading does
    assert store.get("aa/one/x-1/text_plain") == b"one"
    assert calls["GetObject"] == 1
    for _ in range(5):
        assert store.get("aa/one/x-1/text_plain") == b"one"
    assert calls["GetObject"] == 1 and sum(calls.values()) == 2  # the PUT and one GET
    store.delete("aa/one/x-1/text_plain")
    assert cache_bytes(cache.folder) == 0
    with pytest.raises(FileNotFoundError):
        store.get("aa/one/x-1/text_plain")


def test_the_cache_never_exceeds_its_bound_and_keeps_what_was_used_last(
    s3_server: SeaweedServer, bucket_url: str, tmp_path: Path
) -> None:
    bound = 64 * KIB
    cache = StoreCache(tmp_path / "cache", bound)
    store, calls = make_store(s3_server, bucket_url, cache)
    rng = random.Random(7)
    objects = {f"aa/k{n}/x-1/text_plain": rng.randbytes(rng.randint(1, 9) * KIB) for n in range(40)}
    for key, data in objects.items():
        store.put(key, data)
    keys = list(objects)
    for _ in range(300):
        key = rng.choice(keys)
        assert store.get(key) == objects[key]
        assert cache_bytes(cache.folder) <= bound
    assert cache.usage() <= bound
    # The most recently read key is a hit; an object over the bound is read, not kept.
    gets = calls["GetObject"]
    store.get(key)
    assert calls["GetObject"] == gets
    store.put("aa/huge/x-1/application_pdf", b"h" * (bound + 1))
    assert store.get("aa/huge/x-1/application_pdf") == b"h" * (bound + 1)
    assert cache_bytes(cache.folder) <= bound


def _read_many(endpoint: str, url: str, folder: str, bound: int, keys: list[str], seed: int) -> int:
    """A second process of the same host: its own client, the same cache folder."""
    client = SeaweedServer.client_for(endpoint)
    store = S3Store(S3Location.parse(url), cache=StoreCache(Path(folder), bound), client=client)
    rng = random.Random(seed)
    worst = 0
    for _ in range(200):
        key = rng.choice(keys)
        assert store.get(key) == key.encode() * 300
        worst = max(worst, cache_bytes(Path(folder)))
    return worst


def test_processes_of_one_host_share_the_cache_within_its_bound(
    s3_server: SeaweedServer, bucket_url: str, tmp_path: Path
) -> None:
    bound = 48 * KIB
    store, _ = make_store(s3_server, bucket_url)
    keys = [f"aa/k{n:02}/x-1/text_plain" for n in range(30)]
    for key in keys:
        store.put(key, key.encode() * 300)  # about 7 KiB each: 30 of them are 4x the bound
    folder = str(tmp_path / "cache")
    context = multiprocessing.get_context("spawn")
    args = [(s3_server.endpoint, bucket_url, folder, bound, keys, seed) for seed in range(3)]
    with context.Pool(3) as pool:
        worst = pool.starmap(_read_many, args)
    assert max(worst) <= bound
    assert cache_bytes(Path(folder)) <= bound
    assert not [p for p in Path(folder).iterdir() if p.name.startswith(".tmp-")]


def test_no_cache_writes_nothing_locally(
    s3_server: SeaweedServer, bucket_url: str, tmp_path: Path, aws_env: None
) -> None:
    spec = StoreSpec(bucket_url, str(tmp_path / "cache"), 0)
    store = open_store(spec)
    assert isinstance(store, S3Store) and store.cache is None and spec.local_folder() is None
    store.put("aa/k/x-1/text_plain", b"payload")
    assert store.get("aa/k/x-1/text_plain") == b"payload"
    assert store.spec == StoreSpec(bucket_url)
    assert list(tmp_path.iterdir()) == []


def test_the_spec_crosses_into_a_worker_and_opens_the_same_store(
    s3_server: SeaweedServer, bucket_url: str, tmp_path: Path, aws_env: None
) -> None:
    import pickle

    spec = StoreSpec(bucket_url, str(tmp_path / "cache"), 1024 * KIB)
    store = open_store(pickle.loads(pickle.dumps(spec)))
    assert store.spec == spec and store.location == bucket_url
    assert isinstance(store, S3Store) and store.cache is not None
    store.put("aa/k/x-1/text_plain", b"payload")
    assert store.get("aa/k/x-1/text_plain") == b"payload"
    assert [p.name for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")]


# -- settings ---------------------------------------------------------------------------------


def test_the_store_settings_and_their_defaults(tmp_path: Path) -> None:
    folder = load_settings({"data_dir": tmp_path})
    assert folder.store_spec == StoreSpec(str(tmp_path / "representations"))
    assert open_store(folder.store_spec).location == str(tmp_path / "representations")
    bucket = load_settings({"data_dir": tmp_path, "store_url": "s3://docs-bucket/formats/"})
    assert bucket.store_spec == StoreSpec(
        "s3://docs-bucket/formats", str(tmp_path / "store-cache"), 512 * KIB * KIB
    )
    elsewhere = load_settings({"data_dir": tmp_path, "store_url": f"file://{tmp_path}/f"})
    assert elsewhere.store_spec == StoreSpec(f"{tmp_path}/f")
    assert load_settings({"store_url": str(tmp_path / "g")}).store_spec.url == str(tmp_path / "g")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            "gs://bucket/x",
            "DOCSHELF_STORE_URL=gs://bucket/x is not valid: gs:// is not a store; write "
            "s3://BUCKET/PREFIX, file:///PATH or a folder path",
        ),
        (
            "s3://Bad_Bucket/x",
            "DOCSHELF_STORE_URL=s3://Bad_Bucket/x is not valid: 's3://Bad_Bucket/x': "
            "'Bad_Bucket' is not a bucket name (3-63 lowercase letters, digits, '.' or '-')",
        ),
        (
            "file://relative/x",
            "DOCSHELF_STORE_URL=file://relative/x is not valid: 'file://relative/x': write "
            "file:///ABSOLUTE/PATH (three slashes)",
        ),
    ],
)
def test_a_bad_store_url_is_refused_at_the_door(
    value: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCSHELF_STORE_URL", value)
    with pytest.raises(StartupError) as refused:
        load_settings({})
    assert str(refused.value) == message
    monkeypatch.setenv("DOCSHELF_STORE_URL", "s3://bucket/x")
    monkeypatch.setenv("DOCSHELF_STORE_CACHE_MB", "-1")
    with pytest.raises(StartupError) as negative:
        load_settings({})
    assert str(negative.value) == (
        "DOCSHELF_STORE_CACHE_MB=-1 is not valid: expected a whole number at least 0"
    )


def test_the_bench_measures_reads_from_each_kind_of_store(
    s3_server: SeaweedServer, bucket_url: str, tmp_path: Path, aws_env: None
) -> None:
    from bench.store_reads import store_reads

    specs = {
        "folder": StoreSpec(str(tmp_path / "folder")),
        "s3": StoreSpec(bucket_url),
        "s3+cache": StoreSpec(bucket_url, str(tmp_path / "cache"), 8 * KIB * KIB),
    }
    for name, spec in specs.items():
        figures = store_reads(spec, count=10, size=4 * KIB, rounds=2)
        assert figures["reads"] == 20 and figures["reads_per_s"] > 0, name
    assert s3_server.keys(S3Location.parse(bucket_url).bucket) == []  # the bench cleans up
