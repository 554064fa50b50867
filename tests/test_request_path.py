"""The fast request path (issue 13): what it caches, what it refuses, what it logs.

Speed itself is measured by ``python -m bench serve``; these tests hold the
correctness the speed must not cost.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import event

from docshelf.app.runtime import Runtime
from docshelf.storage.catalog import NotCached
from docshelf.storage.store import RepresentationStore
from tests.support.runtimes import open_runtime
from tests.support.servers import RawClient, serve

URI = "docshelf://shelf/notes.txt"


@pytest.fixture
def runtime(sample_shelf: Path, tmp_path: Path, database_url: str) -> Iterator[Runtime]:
    rt = open_runtime(sample_shelf, tmp_path / "data", database_url=database_url)
    rt.index()
    yield rt
    rt.close()


def test_a_cached_document_is_looked_up_again_after_any_writing_commit(
    runtime: Runtime, sample_shelf: Path
) -> None:
    catalog = runtime.catalog
    first = catalog.get(URI)
    assert first is not None
    assert catalog.get(URI, cached_only=True) == first  # the event loop may answer from memory
    (sample_shelf / "notes.txt").write_text("a new version, longer than the old one\n" * 40)
    runtime.indexer.reconcile(wait=True)
    with pytest.raises(NotCached):  # the commit made every entry stale
        catalog.get(URI, cached_only=True)
    second = catalog.get(URI)
    assert second is not None and second.size != first.size
    assert catalog.get(URI, cached_only=True) == second


def test_a_lookup_that_overlaps_a_commit_is_not_served_from_memory(
    runtime: Runtime, sample_shelf: Path
) -> None:
    """A lookup that reads the old rows while a writing commit is under way must not be
    served from memory after it: the generation moves again once the commit is done."""
    catalog = runtime.catalog
    seen: list[object] = []
    writer = threading.current_thread()
    generation = [runtime.database.generation]

    def look_up_mid_commit(_connection: object) -> None:
        # Runs just before the database commits. For a commit of the writer's that wrote
        # (the generation moved), another thread looks the document up now and sees the
        # rows as they were.
        if threading.current_thread() is not writer:
            return
        if runtime.database.generation == generation[0]:
            return
        generation[0] = runtime.database.generation
        reader = threading.Thread(target=lambda: seen.append(catalog.get(URI)))
        reader.start()
        reader.join(10)

    (sample_shelf / "notes.txt").write_text("changed while someone was reading\n")
    event.listen(runtime.database.engine, "commit", look_up_mid_commit)
    try:
        runtime.indexer.reconcile(wait=True)
    finally:
        event.remove(runtime.database.engine, "commit", look_up_mid_commit)
    assert seen, "the indexer committed nothing"
    try:
        from_memory = catalog.get(URI, cached_only=True)
    except NotCached:
        from_memory = None
    fresh = catalog.get(URI, fresh=True)
    assert fresh is not None
    assert fresh.size == len("changed while someone was reading\n")
    assert from_memory in (None, fresh)  # never the rows a lookup saw before the commit


def test_store_keys_that_could_leave_the_store_are_refused(tmp_path: Path) -> None:
    store = RepresentationStore(tmp_path / "store")
    (tmp_path / "secret").write_text("not yours")
    for key in ("../secret", "/etc/passwd", "a//b", "a/./b", "a/\x00"):
        with pytest.raises(ValueError, match="leaves the store"):
            store.get(key)
    store.put("ab/cd/x", b"kept")
    assert store.get("ab/cd/x") == b"kept"


@pytest.mark.parametrize("flag", [(), ("--access-log",)], ids=["default", "--access-log"])
def test_the_access_log_is_off_unless_asked_for(
    sample_shelf: Path, tmp_path: Path, flag: tuple[str, ...]
) -> None:
    with serve(sample_shelf, tmp_path / "data", *flag, formats_built=False) as server:
        raw = RawClient(server.url)
        assert raw.modern("resources/list").status_code == 200
        raw.close()
        assert httpx.get(server.base + "/healthz").status_code == 200
        logged = '"POST /mcp HTTP/1.1" 200' in server.log()
    assert logged is bool(flag)


def test_a_shelf_root_replaced_while_serving_is_opened_afresh(tmp_path: Path) -> None:
    """Reads keep the root's descriptor open between calls; a root swapped for another
    folder (or for a symlink out of the shelf) must not keep serving the old one."""
    from docshelf.storage.shelves import Shelf

    root = tmp_path / "shelf"
    root.mkdir()
    (root / "a.md").write_text("old\n")
    shelf = Shelf("shelf", root)
    assert shelf.read("a.md").data == b"old\n"
    root.rename(tmp_path / "old-shelf")
    root.mkdir()
    (root / "a.md").write_text("new\n")
    assert shelf.read("a.md").data == b"new\n"
    (root / "a.md").unlink()
    root.rmdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "a.md").write_text("outside\n")
    root.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError):
        shelf.read("a.md")


def _descriptors_of(path: Path) -> int:
    """This process's open descriptors of ``path``."""
    found = 0
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):  # closed meanwhile (the listing's own, say)
            found += fd.readlink() == path
    return found


def test_a_thread_that_read_from_a_shelf_leaves_no_descriptor_open_when_it_ends(
    tmp_path: Path,
) -> None:
    """Each thread keeps its own descriptor of the root between reads; the request threads
    come and go (anyio retires one idle for 10 s), and each one's descriptor must go with
    it, or a server leaks one per thread it ever ran until it is out of descriptors."""
    from docshelf.storage.shelves import Shelf

    root = tmp_path / "shelf"
    root.mkdir()
    (root / "a.md").write_text("text\n")
    shelf = Shelf("shelf", root)

    def read() -> None:
        assert shelf.read("a.md").data == b"text\n"
        assert _descriptors_of(root) >= 1  # kept while the thread lives

    for _ in range(20):
        thread = threading.Thread(target=read)
        thread.start()
        thread.join()
    assert _descriptors_of(root) == 0


def test_writes_outside_the_catalog_leave_the_cache_warm(runtime: Runtime) -> None:
    """A session started (a row in the sessions table) must not make every cached document
    stale: with every new client doing so, each benchmark round began with a cold cache."""
    from docshelf.app.mcp.sessions import LegacySession

    record = runtime.catalog.get(URI)
    runtime.sessions.add(LegacySession("2025-11-25", b"{}", b"null"))
    assert runtime.catalog.get(URI, cached_only=True) == record


def test_a_part_is_cached_once_whatever_versions_of_its_document_came_before(
    runtime: Runtime, sample_shelf: Path
) -> None:
    """Parts are cached by their document's content: once the document changes, the parts
    of its old version can never be asked for again and must not stay (on a busy shelf
    they filled the cache's 32 MB with dead entries, a serving process growing ~4 MB per
    10 minutes for hours)."""
    from docshelf.app.mcp.context import LEGACY, RequestContext

    guide = sample_shelf / "guides" / "field-guide.md"
    uri = "docshelf://shelf/guides/field-guide.md?section=field-guide"
    context = RequestContext(LEGACY, "2025-11-25")
    for version in range(5):
        guide.write_text(f"# Field guide\n\nVersion {version} of the guide.\n")
        runtime.index()
        contents = runtime.resources.read_formats(context, uri)["contents"]
        assert f"Version {version} " in contents[0]["text"]
    assert len(runtime.resources.stored.parts) == len(contents)  # one version of each format


def test_negotiation_keeps_no_record_the_catalog_has_replaced(runtime: Runtime) -> None:
    """The catalog hands out a new record for a document after every writing commit (and a
    busy shelf commits every second); the negotiation memo must remember the outcome for
    the record in use, not keep every record it ever saw alive (it held up to 4,096)."""
    import gc

    from docshelf.app.mcp.context import LEGACY, RequestContext
    from docshelf.storage.catalog import DocumentRecord

    context = RequestContext(LEGACY, "2025-11-25")
    for _ in range(50):
        runtime.database.bump()  # what any commit that writes the catalog does
        record = runtime.catalog.get(URI)
        assert record is not None
        runtime.resources.documents.variants(context, record)
    del record
    gc.collect()
    alive = [o for o in gc.get_objects() if isinstance(o, DocumentRecord) and o.uri == URI]
    assert len(alive) == 1  # the catalog's current record, which the memo shares


def test_the_catalog_keeps_no_entry_a_writing_commit_made_stale(runtime: Runtime) -> None:
    """An entry read under an older generation is never handed out again; kept, the
    entries of files since deleted or renamed filled the cache's 8,192 slots on a churning
    shelf (a serving process growing for hours, issue 24 item 17)."""
    uris = [d.uri for d in runtime.catalog.page(None, 100)[0]]
    for uri in uris:
        runtime.catalog.get(uri)
    assert runtime.catalog.cached == len(uris)
    runtime.database.bump()  # what any commit that writes the catalog does
    runtime.catalog.get(URI)
    assert runtime.catalog.cached == 1


def test_a_removed_document_leaves_nothing_in_the_read_caches(
    runtime: Runtime, sample_shelf: Path
) -> None:
    """Once a change set says a document is gone, its parts and its negotiated outcomes go
    with it, in every process that hears it (on a churning shelf they stayed until 32 MB
    of parts and 4,096 outcomes pushed them out)."""
    from docshelf.app.mcp.context import LEGACY, RequestContext

    context = RequestContext(LEGACY, "2025-11-25")
    part = "docshelf://shelf/guides/field-guide.md?section=field-guide"
    runtime.resources.read_formats(context, part)
    record = runtime.catalog.get(URI)
    assert record is not None
    runtime.resources.documents.variants(context, record)
    assert len(runtime.resources.stored.parts) > 0 and runtime.resources.documents._negotiated

    (sample_shelf / "guides" / "field-guide.md").unlink()
    (sample_shelf / "notes.txt").unlink()
    runtime.index()  # publishes the removals on the bus, as the watcher's batches do
    assert len(runtime.resources.stored.parts) == 0
    assert not runtime.resources.documents._negotiated
