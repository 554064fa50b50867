"""The indexer: makes the database (and the representation store) match the shelves.

For each file: unchanged size and mtime → skip; else hash; unchanged hash and
current converter → touch only; else convert (in the pool) and record. Files
gone from disk are removed. Every pass returns an :class:`IndexReport` and
publishes one :class:`ChangeSet` on the event bus (DESIGN D7).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from converters.detect import HEAD_BYTES, detect_mime
from storage.conversion import ConversionOutcome, ConversionPool, ConversionTask, converter_identity
from storage.database import Database
from storage.events import ChangeSet, EventBus
from storage.models import Document, DocumentState, Representation
from storage.shelves import OutsideShelf, Shelf
from storage.store import RepresentationStore
from storage.uris import MAX_URI_LENGTH, build_uri

log = logging.getLogger(__name__)

BATCH_SIZE = 64
Progress = Callable[[int, int], None]

_KIND_LABELS = {
    "application/pdf": "PDF document",
    "text/markdown": "Markdown document",
    "text/plain": "Plain text",
    "application/json": "JSON document",
    "text/html": "HTML page",
    "text/csv": "CSV table",
}


@dataclass(frozen=True, slots=True)
class FileError:
    path: str
    reason: str
    message: str


@dataclass
class IndexReport:
    seen: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    failed: int = 0
    errors: list[FileError] = field(default_factory=list)
    changes: ChangeSet = field(default_factory=ChangeSet)

    def merge(self, other: IndexReport) -> None:
        for name in ("seen", "added", "changed", "removed", "unchanged", "failed"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.errors.extend(other.errors)
        self.changes = ChangeSet(
            self.changes.added | other.changes.added,
            self.changes.removed | other.changes.removed,
            self.changes.changed | other.changes.changed,
        )


@dataclass(frozen=True, slots=True)
class _Probe:
    """What one look at a file on disk found."""

    path: str
    real_path: Path
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class _Work:
    """A file that needs converting, and whether it is new to the index."""

    task: ConversionTask
    probe: _Probe
    is_new: bool


def _sha256_file(path: Path) -> tuple[str, bytes]:
    digest = hashlib.sha256()
    head = b""
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            if not head:
                head = chunk[:HEAD_BYTES]
            digest.update(chunk)
    return digest.hexdigest(), head


def fallback_description(mime_type: str, page_count: int | None) -> str:
    label = _KIND_LABELS.get(mime_type, f"{mime_type} file")
    if page_count:
        return f"{label}, {page_count} page{'s' if page_count != 1 else ''}"
    return label


def _identity_string(identity: tuple[str, str] | None) -> str | None:
    return f"{identity[0]}:{identity[1]}" if identity else None


class Indexer:
    def __init__(
        self,
        database: Database,
        store: RepresentationStore,
        pool: ConversionPool,
        shelves: Sequence[Shelf],
        *,
        max_convert_bytes: int,
        bus: EventBus | None = None,
    ) -> None:
        self.database = database
        self.store = store
        self.pool = pool
        self.shelves = {shelf.name: shelf for shelf in shelves}
        self.max_convert_bytes = max_convert_bytes
        self.bus = bus
        self._locks = {name: threading.Lock() for name in self.shelves}

    # -- entry points ---------------------------------------------------------------------

    def reconcile(
        self,
        shelf_names: Iterable[str] | None = None,
        *,
        force: bool = False,
        progress: Progress | None = None,
    ) -> IndexReport:
        """Index whole shelves: every file on disk, and remove what is gone."""
        report = IndexReport()
        for name in shelf_names or self.shelves:
            shelf = self.shelves[name]
            with self._locks[name]:
                on_disk = list(shelf.walk())
                with self.database.session() as session:
                    known = set(
                        session.scalars(select(Document.path).where(Document.shelf == name))
                    )
                report.merge(self._index(shelf, sorted(known | set(on_disk)), force, progress))
        return report

    def refresh(self, shelf_name: str, paths: Iterable[str], *, force: bool = False) -> IndexReport:
        """Index just ``paths`` (relative; files or folders) on one shelf, e.g. from the watcher."""
        shelf = self.shelves[shelf_name]
        with self._locks[shelf_name]:
            candidates: set[str] = set()
            with self.database.session() as session:
                for path in paths:
                    candidates.add(path)
                    prefix = path.rstrip("/") + "/"
                    candidates.update(
                        session.scalars(
                            select(Document.path).where(
                                Document.shelf == shelf_name,
                                Document.path.startswith(prefix, autoescape=True),
                            )
                        )
                    )
            for path in list(candidates):
                try:
                    real = shelf.locate(path)
                except OutsideShelf:
                    continue
                if real.is_dir():
                    candidates.discard(path)
                    candidates.update(
                        p for p in shelf.walk() if p.startswith(path.rstrip("/") + "/")
                    )
            report = self._index(shelf, sorted(candidates), force, None)
        return report

    # -- the pass -------------------------------------------------------------------------

    def _probe(self, shelf: Shelf, path: str) -> _Probe | None:
        if shelf.ignore.ignores(path):
            return None
        try:
            real = shelf.locate(path)
            stat = real.stat()
        except (OutsideShelf, OSError):
            return None
        if not real.is_file():
            return None
        return _Probe(path, real, stat.st_size, stat.st_mtime_ns)

    def _index(
        self, shelf: Shelf, paths: Sequence[str], force: bool, progress: Progress | None
    ) -> IndexReport:
        report = IndexReport()
        added: set[str] = set()
        removed: set[str] = set()
        changed: set[str] = set()
        seen_added: set[str] = set()
        seen_removed: set[str] = set()
        seen_changed: set[str] = set()
        total = len(paths)
        for start in range(0, total, BATCH_SIZE):
            batch = paths[start : start + BATCH_SIZE]
            work: list[_Work] = []
            with self.database.session() as session:
                existing = {
                    doc.path: doc
                    for doc in session.scalars(
                        select(Document).where(
                            Document.shelf == shelf.name, Document.path.in_(batch)
                        )
                    )
                }
                for path in batch:
                    doc = existing.get(path)
                    if len(uri := build_uri(shelf.name, path)) > MAX_URI_LENGTH:
                        report.failed += 1
                        message = f"its URI would be {len(uri)} characters, over {MAX_URI_LENGTH}"
                        report.errors.append(FileError(path, "path_too_long", message))
                        continue
                    probe = self._probe(shelf, path)
                    if probe is None:
                        if doc is not None:
                            self._remove(session, doc)
                            removed.add(doc.uri)
                            report.removed += 1
                        continue
                    report.seen += 1
                    task = self._examine(probe, doc, force, report)
                    if task is not None:
                        work.append(_Work(task, probe, doc is None))
                    elif doc is not None and doc.state == DocumentState.FAILED:
                        report.failed += 1
            # Convert outside any database transaction: it is the slow part.
            results = self._convert(work)
            with self.database.session() as session:
                for item, outcome in results:
                    uri = self._record(session, shelf, item, outcome)
                    if outcome.error_reason:
                        report.failed += 1
                        report.errors.append(
                            FileError(
                                item.probe.path, outcome.error_reason, outcome.error_message or ""
                            )
                        )
                        log.warning(
                            "%s: %s (%s)",
                            item.probe.real_path,
                            outcome.error_message,
                            outcome.error_reason,
                        )
                    (added if item.is_new else changed).add(uri)
                    if item.is_new:
                        report.added += 1
                    else:
                        report.changed += 1
            # Publish per batch, so clients hear about a bulk copy as it is absorbed.
            self._publish(
                ChangeSet(
                    frozenset(added - seen_added),
                    frozenset(removed - seen_removed),
                    frozenset(changed - seen_changed),
                )
            )
            seen_added, seen_removed, seen_changed = set(added), set(removed), set(changed)
            if progress:
                progress(min(start + BATCH_SIZE, total), total)
        report.changes = ChangeSet(frozenset(added), frozenset(removed), frozenset(changed))
        return report

    def _examine(
        self, probe: _Probe, doc: Document | None, force: bool, report: IndexReport
    ) -> ConversionTask | None:
        """Decide whether a file needs (re)converting; returns the task if so."""
        if (
            not force
            and doc is not None
            and doc.size == probe.size
            and doc.mtime_ns == probe.mtime_ns
            and doc.converter == _identity_string(converter_identity(doc.mime_type, doc.name))
        ):
            report.unchanged += 1
            return None
        try:
            sha, head = _sha256_file(probe.real_path)
        except OSError as exc:
            log.warning("cannot read %s: %s", probe.real_path, exc)
            return None
        mime_type = detect_mime(head, probe.path)
        identity = converter_identity(mime_type, probe.path)
        if (
            not force
            and doc is not None
            and doc.sha256 == sha
            and doc.mime_type == mime_type
            and doc.converter == _identity_string(identity)
        ):
            doc.mtime_ns = probe.mtime_ns
            doc.modified_at = datetime.fromtimestamp(probe.mtime_ns / 1e9, UTC)
            report.unchanged += 1
            return None
        name, version = identity or ("", "")
        return ConversionTask(
            str(probe.real_path), PurePosixPath(probe.path).name, mime_type, sha, name, version
        )

    def _convert(self, work: list[_Work]) -> list[tuple[_Work, ConversionOutcome]]:
        """Convert in the pool; files no converter handles, or too large, skip it."""
        results: list[tuple[_Work, ConversionOutcome]] = []
        runnable: dict[int, _Work] = {}
        for item in work:
            if not item.task.converter:
                results.append((item, ConversionOutcome()))
            elif item.probe.size > self.max_convert_bytes:
                message = (
                    f"{item.probe.size} bytes exceeds the conversion cap "
                    f"of {self.max_convert_bytes} bytes"
                )
                results.append((item, ConversionOutcome.failed("too_large", message)))
            else:
                runnable[id(item.task)] = item
        for task, outcome in self.pool.run(item.task for item in runnable.values()):
            results.append((runnable[id(task)], outcome))
        return results

    def _record(
        self, session: Session, shelf: Shelf, item: _Work, outcome: ConversionOutcome
    ) -> str:
        """Write one converted file's row and representation rows; returns its URI."""
        task, probe = item.task, item.probe
        doc = session.scalar(
            select(Document).where(Document.shelf == shelf.name, Document.path == probe.path)
        )
        if doc is None:
            doc = Document(shelf=shelf.name, path=probe.path, uri=build_uri(shelf.name, probe.path))
            session.add(doc)
        else:
            self._drop_representations(session, doc)
        facts = outcome.facts
        doc.name = PurePosixPath(probe.path).name
        doc.mime_type = task.mime_type
        doc.size = probe.size
        doc.mtime_ns = probe.mtime_ns
        doc.sha256 = task.source_sha256
        doc.title = (facts.title or "").strip() or doc.name
        doc.page_count = facts.page_count
        doc.description = (facts.description or "").strip() or fallback_description(
            task.mime_type, facts.page_count
        )
        doc.language = facts.language
        doc.facts = {
            "metadata": dict(facts.metadata),
            "outline": [
                {"title": e.title, "level": e.level, "page": e.page} for e in facts.outline
            ],
        }
        doc.converter = f"{task.converter}:{task.converter_version}" if task.converter else None
        doc.error_reason = outcome.error_reason
        doc.error_message = outcome.error_message
        if outcome.error_reason:
            doc.state = DocumentState.FAILED
        elif not task.converter:
            doc.state = DocumentState.ORIGINAL_ONLY
        else:
            doc.state = DocumentState.READY
        doc.modified_at = datetime.fromtimestamp(probe.mtime_ns / 1e9, UTC)
        doc.indexed_at = datetime.now(UTC)
        doc.representations = [
            Representation(
                mime_type=v.mime_type,
                size=v.size,
                sha256=v.sha256,
                store_key=v.store_key,
                converter=task.converter,
                converter_version=task.converter_version,
            )
            for v in outcome.variants
        ]
        session.flush()
        return doc.uri

    def _drop_representations(self, session: Session, doc: Document) -> None:
        keys = [r.store_key for r in doc.representations]
        doc.representations = []
        session.flush()
        self._prune(session, keys)

    def _remove(self, session: Session, doc: Document) -> None:
        keys = [r.store_key for r in doc.representations]
        session.delete(doc)
        session.flush()
        self._prune(session, keys)

    def _prune(self, session: Session, keys: list[str]) -> None:
        """Delete stored variants no other document still uses."""
        for key in keys:
            if not session.scalar(select(func.count()).where(Representation.store_key == key)):
                self.store.delete(key)

    def drop_representations(self, document_id: int) -> bool:
        """Forget a document's stored variants so the next pass rebuilds them."""
        with self.database.session() as session:
            doc = session.get(Document, document_id)
            if doc is None:
                return False
            self._drop_representations(session, doc)
            doc.converter = None
        return True

    def _publish(self, changes: ChangeSet) -> None:
        if self.bus is not None:
            self.bus.publish(changes)
