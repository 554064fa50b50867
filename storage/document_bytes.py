"""The bytes a read returns: a document's original, its stored formats and its parts.

A stored format is never "not found" for a document that exists (issue 16, item 2):
the row a read holds may have been replaced by a re-index meanwhile (then the index
names another key), or the stored file was lost (then it is made again). A part is
made from the document's formats (:mod:`converters.part_formats`) and kept a while
(:class:`PartCache`). The protocol layer (``app.mcp``) says how each failure is answered.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Sequence

from docshelf.converters.part_formats import PartMaker, PartSpec
from docshelf.converters.parts import PartNotFound, PartQuery
from docshelf.storage.builder import FormatBuilder
from docshelf.storage.catalog import Catalog, DocumentRecord, NotCached, VariantRecord
from docshelf.storage.shelves import NotRegularFile, OutsideShelf, ShelfSet
from docshelf.storage.store import Store

log = logging.getLogger(__name__)

PartKey = tuple[str, str, str]  # the document's URI, the part's canonical query, a format


class FormatLost(LookupError):
    """A stored format is missing from the store and could not be made again."""

    def __init__(self, uri: str, mime_type: str) -> None:
        super().__init__(f"the stored {mime_type} of {uri} is missing and could not be rebuilt")
        self.uri = uri
        self.mime_type = mime_type


class Unreadable(Exception):
    """A document's file cannot be read: ``gone`` if it is no longer a regular file on its
    shelf (the watcher will catch up), else ``reason`` says what the system said."""

    def __init__(self, reason: str, *, gone: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.gone = gone


class DocumentBytes:
    """Reads a document's bytes from its shelf and the store (never from anywhere else)."""

    def __init__(
        self,
        catalog: Catalog,
        store: Store,
        shelves: ShelfSet,
        builder: FormatBuilder,
        *,
        max_read_bytes: int,
        build_timeout_s: float,
    ) -> None:
        self.catalog = catalog
        self.store = store
        self.shelves = shelves
        self.builder = builder
        self.max_read_bytes = max_read_bytes
        self.build_timeout_s = build_timeout_s
        self.parts = PartCache()

    def load(self, record: DocumentRecord, variant: VariantRecord, *, may_block: bool) -> bytes:
        """``variant`` of ``record``: its original (see :meth:`original`), or its stored
        format, made again if the store lost it. :class:`NotCached` when finding it would
        ask the index and ``may_block`` is false; :class:`FormatLost` if it cannot be made."""
        if variant.original:
            return self.original(record)
        data = self._stored(variant.store_key, record.uri, variant.mime_type, may_block)
        if data is None:
            mime = [variant.mime_type]
            log.warning("stored %s of %s is missing; rebuilding it", mime[0], record.uri)
            self.builder.ensure(record.id, mime, rebuild=mime, timeout=self.build_timeout_s)
            data = self._stored(None, record.uri, variant.mime_type, True)
        if data is None:
            raise FormatLost(record.uri, variant.mime_type)
        return data

    def original(self, record: DocumentRecord, limit: int = 0) -> bytes:
        """The document's file on its shelf, up to ``limit`` bytes (default: the read cap);
        :class:`Unreadable` if it cannot be read."""
        shelf = self.shelves.get(record.shelf)
        if shelf is None:
            raise Unreadable("its shelf is not served", gone=True)
        try:
            return shelf.read(record.path, limit=limit or self.max_read_bytes).data
        except (OutsideShelf, NotRegularFile, FileNotFoundError) as exc:
            raise Unreadable(str(exc), gone=True) from None
        except OSError as exc:
            raise Unreadable(f"{exc.strerror}", gone=False) from exc

    def part(
        self, record: DocumentRecord, query: PartQuery, title: str, formats: Sequence[str]
    ) -> Iterator[tuple[str, bytes]]:
        """Each of ``formats`` of the part of ``record`` that ``query`` names (titled
        ``title``), as it is made or found made; :class:`PartNotFound` if the document's
        formats do not hold it."""
        spec = PartSpec(query, record.path, record.name, record.mime_type, title)
        maker = PartMaker(spec, lambda mime_type: self._part_source(record, mime_type))
        for mime_type in formats:
            key = (record.uri, query.query, mime_type)
            data = self.parts.get(key, record.sha256)
            if data is None:
                data = maker.make(mime_type)
                self.parts.put(key, record.sha256, data)
            yield mime_type, data

    def forget(self, uris: Collection[str]) -> None:
        """Drop the parts of the documents at ``uris``: they changed or are gone."""
        self.parts.forget(lambda key: key[0] in uris)

    def _part_source(self, record: DocumentRecord, mime_type: str) -> bytes:
        if mime_type == record.mime_type:  # cut from it whole: the part is what is capped
            return self.original(record, max(self.max_read_bytes, record.size))
        variant = next((v for v in record.derived if v.mime_type == mime_type), None)
        if variant is None or not variant.built:
            raise PartNotFound(f"{record.path} has no {mime_type} format to cut from")
        return self.load(record, variant, may_block=True)

    def _stored(self, key: str | None, uri: str, mime_type: str, may_block: bool) -> bytes | None:
        """The stored bytes under ``key``, else under the key the index names now; None
        if neither is on disk. The index is asked only when ``key`` is missing."""
        if key is not None:
            with contextlib.suppress(FileNotFoundError):
                return self.store.get(key)
        if not may_block:
            raise NotCached(uri)  # the index moved on, or the file is lost: not for the loop
        current = self._current_key(uri, mime_type)
        if current is not None and current != key:
            with contextlib.suppress(FileNotFoundError):
                return self.store.get(current)
        return None

    def _current_key(self, uri: str, mime_type: str) -> str | None:
        fresh = self.catalog.get(uri, fresh=True)
        keys = (v.store_key for v in fresh.derived if v.mime_type == mime_type) if fresh else ()
        return next((k for k in keys if k), None)


class PartCache:
    """Parts made recently, up to ``max_bytes`` in all (the oldest go first): a model
    reading a section often reads it again, and a PDF's pages cost a parse to cut.

    Each part is kept in one version, that of the document it was cut from (its content
    hash): once the document changes, the part is made again and replaces the old one,
    which no read can ask for any more (kept, such versions filled the cache on a busy
    shelf)."""

    def __init__(self, max_bytes: int = 32 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[PartKey, tuple[str | None, bytes]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Parts held."""
        return len(self._entries)

    def get(self, key: PartKey, version: str | None) -> bytes | None:
        """The part under ``key`` if it was cut from this ``version`` of its document."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != version:
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def forget(self, gone: Callable[[PartKey], bool]) -> None:
        """Drop the parts whose key ``gone`` says belongs to a document that is no more."""
        with self._lock:
            for key in [key for key in self._entries if gone(key)]:
                self._size -= len(self._entries.pop(key)[1])

    def put(self, key: PartKey, version: str | None, data: bytes) -> None:
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._size -= len(old[1])
            if len(data) > self.max_bytes // 4:
                return  # one big part would push out everything else
            self._entries[key] = (version, data)
            self._size += len(data)
            while self._size > self.max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._size -= len(dropped)
