"""The catalog pass: makes the documents table match the shelves, before anything is converted.

Every file a pass sees is recorded at once — path, URI, size, mtime, detected
MIME type and a cheap title — and is listed and readable from the moment its
batch commits (DESIGN D11). Its formats are built afterwards by the
:class:`~storage.builder.FormatBuilder` queue; a file whose content changed is
marked ``pending`` and keeps its old rows until the new formats replace them.

For each file: unchanged size, mtime and converter → nothing to do; else
record it as pending. Files gone from disk are removed. Each step is per file:
a name that cannot become a URI, a file that cannot be read, a symlink loop —
each is reported with a reason and the rest of the shelf is indexed. Every
committed batch publishes one :class:`ChangeSet`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from docshelf.converters import FailureReason
from docshelf.converters.detect import DETECTION_VERSION, HEAD_BYTES, detect_mime
from docshelf.converters.peek import cheap_title
from docshelf.converters.registry import unsupported_reason
from docshelf.storage import search
from docshelf.storage.builder import FormatBuilder, Progress
from docshelf.storage.conversion import converter_identity
from docshelf.storage.database import RACE_ATTEMPTS, Database
from docshelf.storage.events import ChangeSet, EventBus
from docshelf.storage.garbage import release_unreferenced
from docshelf.storage.models import ConverterId, Document, DocumentState, Representation
from docshelf.storage.outcomes import fallback_description
from docshelf.storage.shelves import AnyShelf, NotRegularFile, OutsideShelf, Seen, ShelfSet
from docshelf.storage.uris import MAX_URI_LENGTH, InvalidUri, build_uri, printable

log = logging.getLogger(__name__)

_DOCUMENTS = Document.metadata.tables["documents"]
BATCH_SIZE = 500


@dataclass(frozen=True, slots=True)
class FileError:
    path: str
    reason: str
    message: str


COUNT_NAMES = ("seen", "added", "changed", "unchanged", "removed", "failed", "unsupported")
"""The counters of an :class:`IndexReport` (and of a job's row, which keeps them), in the
order ``docshelf index`` reports them."""


@dataclass
class IndexReport:
    seen: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    failed: int = 0
    # Files nothing reads (state unsupported), new or known: listed, served as their originals.
    unsupported: int = 0
    errors: list[FileError] = field(default_factory=list)  # failed in this pass
    # Failed before and unchanged since: counted in ``failed``, not in ``errors``.
    still_failed: list[FileError] = field(default_factory=list)
    changes: ChangeSet = field(default_factory=ChangeSet)

    def merge(self, other: IndexReport) -> None:
        for name in COUNT_NAMES:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.errors.extend(other.errors)
        self.still_failed.extend(other.still_failed)
        self.changes |= other.changes

    def fail(self, path: str, reason: str, message: str) -> None:
        self.failed += 1
        self.errors.append(FileError(path, reason, message))

    @property
    def failures(self) -> list[FileError]:
        """Every file counted in ``failed``, this pass's and earlier ones', by path."""
        return sorted([*self.errors, *self.still_failed], key=lambda e: e.path)


@dataclass(frozen=True, slots=True)
class _Known:
    """The index's row for a path, as far as the pass needs it (its fields name the columns
    read)."""

    id: int
    uri: str
    size: int
    mtime_ns: int
    change_key: str | None
    mime_type: str
    detection: int | None
    converter: str | None
    state: DocumentState
    error_reason: str | None
    error_message: str | None


@dataclass
class _BatchPlan:
    """What one batch of a pass changes, gathered file by file before its transaction."""

    new_rows: list[dict[str, object]] = field(default_factory=list)
    updates: list[dict[str, object]] = field(default_factory=list)
    removed_ids: list[int] = field(default_factory=list)
    added: set[str] = field(default_factory=set)  # URIs, for the change set
    changed: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    # Of ``changed``: documents queued for conversion (their ids, and their URIs). The
    # builder announces them once their new formats are built (or failed): one
    # ``resources/updated`` per change, and none for a touch that changed no byte.
    queued_ids: list[int] = field(default_factory=list)
    queued: set[str] = field(default_factory=set)

    @property
    def dropped_ids(self) -> list[int]:
        """Documents whose derived formats go: removed ones, and those no converter
        handles any more."""
        no_converter = [
            int(str(u["id"])) for u in self.updates if u.get("state") == DocumentState.UNSUPPORTED
        ]
        return self.removed_ids + no_converter

    @property
    def changes(self) -> ChangeSet:
        return ChangeSet(frozenset(self.added), frozenset(self.removed), frozenset(self.changed))

    @property
    def announcement(self) -> ChangeSet:
        """What the listeners are told now: the queued edits only refresh their caches."""
        return ChangeSet(
            frozenset(self.added),
            frozenset(self.removed),
            frozenset(self.changed - self.queued),
            frozenset(self.queued),
        )


class Indexer:
    """Catalog passes over the shelves; conversion is the builder's job."""

    def __init__(
        self,
        database: Database,
        builder: FormatBuilder,
        shelves: ShelfSet | Sequence[AnyShelf],
        *,
        bus: EventBus | None = None,
    ) -> None:
        self.database = database
        self.builder = builder
        self.store = builder.store
        # Shared with the rest of the process: a shelf added while serving is indexed here.
        self.shelves = ShelfSet.of(shelves)
        self.bus = bus
        self._locks: dict[str, threading.Lock] = {}
        self._locks_lock = threading.Lock()
        self._stop = threading.Event()

    # -- entry points ---------------------------------------------------------------------

    def reconcile(
        self,
        shelf_names: Iterable[str] | None = None,
        *,
        force: bool = False,
        progress: Progress | None = None,
        wait: bool = False,
        build_progress: Progress | None = None,
    ) -> IndexReport:
        """Catalog whole shelves (every file on disk; remove what is gone).

        ``wait``: also build every pending format before returning, and report
        the documents whose conversion failed (``docshelf index``, reindex jobs).
        """
        report = IndexReport()
        names = list(shelf_names or self.shelves)
        for name in names:
            shelf = self.shelves[name]
            # The catalog comes first: no background conversion while it runs (DESIGN D11).
            with self._lock_of(name), self.builder.held():
                on_disk = dict(shelf.walk())
                report.merge(self._index(shelf, on_disk, None, force, progress))
        if wait:
            self._wait_for_formats(report, build_progress)
        return report

    def refresh(
        self,
        shelf_name: str,
        paths: Iterable[str],
        *,
        force: bool = False,
        wait: bool = False,
        listed: Mapping[str, Seen] | None = None,
    ) -> IndexReport:
        """Catalog just ``paths`` (relative files or folders) on one shelf, e.g. for the watcher.

        An ignore file among ``paths`` (``.gitignore``, ``.docshelfignore``) stands for the
        folder it governs too: that folder's subtree is walked again, so what it now
        excludes leaves the index as a deleted file does and what it no longer excludes
        comes back — the whole shelf for the root's, else only that subtree.

        ``listed``: what a listing just found (storage.bucket_poll); ``paths`` are then
        documents, not folders, and one absent from it is gone — no second look at each.
        """
        shelf = self.shelves[shelf_name]
        paths = list(paths)
        if listed is None:
            governed = {shelf.ignore.governed(path) for path in paths} - {None}
            if "" in governed:  # the root's ignore files: every path may have changed
                return self.reconcile([shelf_name], force=force, wait=wait)
            paths = sorted({*paths, *(folder for folder in governed if folder)})
        with self._lock_of(shelf_name), self.builder.held():
            on_disk: dict[str, Seen] = {}
            prefixes = tuple(p.rstrip("/") + "/" for p in paths) if listed is None else ()
            for path in paths:
                seen = shelf.look(path) if listed is None else listed.get(path)
                if seen is not None:
                    on_disk[path] = seen  # one bad path is just absent: never fails the rest
            for folder in (p for p in paths if listed is None and shelf.is_folder(p)):
                on_disk.update(shelf.walk(folder))
            report = self._index(shelf, on_disk, (paths, prefixes), force, None)
        if wait:
            self._wait_for_formats(report)
        return report

    def stop(self) -> None:
        """Make a pass in progress end after its current batch (shutdown)."""
        self._stop.set()

    def _lock_of(self, shelf_name: str) -> threading.Lock:
        """The lock one shelf's passes take turns on (made with the first pass over it)."""
        with self._locks_lock:
            return self._locks.setdefault(shelf_name, threading.Lock())

    # -- the pass -------------------------------------------------------------------------

    def _known(
        self, shelf: AnyShelf, scope: tuple[list[str], tuple[str, ...]] | None
    ) -> dict[str, _Known]:
        columns = (getattr(Document, column.name) for column in fields(_Known))
        query = select(Document.path, *columns).where(Document.shelf == shelf.name)
        known: dict[str, _Known] = {}
        with self.database.session() as session:
            if scope is None:
                rows = session.execute(query).all()
            else:
                paths, prefixes = scope
                # A name that is not UTF-8 cannot be in the index (nor be sent to it).
                paths = [p for p in paths if p == printable(p)]
                prefixes = tuple(p for p in prefixes if p == printable(p))
                rows = [
                    *session.execute(query.where(Document.path.in_(paths))).all(),
                    *(
                        row
                        for prefix in prefixes
                        for row in session.execute(
                            query.where(Document.path.startswith(prefix, autoescape=True))
                        ).all()
                    ),
                ]
            for path, *values in rows:
                known[path] = _Known(*values)
        return known

    def _index(
        self,
        shelf: AnyShelf,
        on_disk: Mapping[str, Seen],
        scope: tuple[list[str], tuple[str, ...]] | None,
        force: bool,
        progress: Progress | None,
    ) -> IndexReport:
        """One pass over ``on_disk`` (and what the index knows in ``scope``), in batches."""
        report = IndexReport()
        known = self._known(shelf, scope)
        paths = sorted(set(known) | set(on_disk))
        total = len(paths)
        for start in range(0, total, BATCH_SIZE):
            if self._stop.is_set():
                break

            def advance(done_in_batch: int, start: int = start) -> None:
                if progress:  # per file: whoever shows or stores it decides how often
                    progress(start + done_in_batch, total)

            batch = paths[start : start + BATCH_SIZE]
            report.merge(self._catalogue_batch(shelf, batch, on_disk, known, force, advance))
            if progress:
                progress(min(start + BATCH_SIZE, total), total)
        if report.changes:
            self.builder.wake()
        return report

    def _catalogue_batch(
        self,
        shelf: AnyShelf,
        batch: Sequence[str],
        on_disk: Mapping[str, Seen],
        known: Mapping[str, _Known],
        force: bool,
        advance: Callable[[int], None],
    ) -> IndexReport:
        """Plan one batch and commit it; its report.

        Another process on the same database (a ``docshelf index`` run, a replica) may
        catalogue the same new files between this pass reading what the index knows and
        committing: the insert then meets its rows (a duplicate key). That is a race, not
        a fault: the batch is read again and planned against those rows, and the pass
        says so in one line.
        """
        attempt = 0
        while True:
            attempt += 1
            report = IndexReport()
            plan = self._plan(shelf, batch, on_disk, known, force, report, advance)
            try:
                self._commit(plan)
            except IntegrityError:
                fresh = self._known(shelf, (list(batch), ()))
                raced = sum(1 for path in fresh if path not in known)
                if not raced or attempt == RACE_ATTEMPTS:
                    raise  # not the race, or one that does not settle
                log.warning(
                    "shelf %s: %d file(s) of this pass were catalogued by another process at "
                    "the same time (docshelf index, or another server on this database); "
                    "using its rows",
                    shelf.name,
                    raced,
                )
                known = fresh
            else:
                report.changes = plan.changes
                return report

    def _plan(
        self,
        shelf: AnyShelf,
        batch: Sequence[str],
        on_disk: Mapping[str, Seen],
        known: Mapping[str, _Known],
        force: bool,
        report: IndexReport,
        advance: Callable[[int], None],
    ) -> _BatchPlan:
        """What one batch changes in the index, file by file; counted in ``report``."""
        plan = _BatchPlan()
        now = datetime.now(UTC)
        for number, path in enumerate(batch, 1):
            advance(number)
            row, seen = known.get(path), on_disk.get(path)
            if seen is None:
                if row is not None:
                    plan.removed_ids.append(row.id)
                    plan.removed.add(row.uri)
                    report.removed += 1
                continue
            report.seen += 1
            try:
                if row is None:
                    plan.new_rows.append(self._catalogue(shelf, path, seen, now))
                    plan.added.add(str(plan.new_rows[-1]["uri"]))
                    report.added += 1
                    state = plan.new_rows[-1]["state"]
                elif force or self._stale(row, path, seen):
                    values, is_change = self._recatalogue(shelf, path, row, seen, force)
                    plan.updates.append(values)
                    state = values.get("state", row.state)
                    if is_change:
                        plan.changed.add(row.uri)
                        report.changed += 1
                        if values.get("state") == DocumentState.PENDING:
                            plan.queued.add(row.uri)
                            plan.queued_ids.append(row.id)
                    else:
                        report.unchanged += 1
                else:
                    report.unchanged += 1
                    state = row.state
                    if row.state == DocumentState.FAILED:
                        report.failed += 1
                        report.still_failed.append(
                            FileError(
                                path,
                                row.error_reason or FailureReason.ERROR,
                                row.error_message or "",
                            )
                        )
                report.unsupported += state == DocumentState.UNSUPPORTED
            except _Refused as refused:
                shown = printable(path)
                report.fail(shown, refused.reason, refused.message)
                log.warning("%s/%s: %s (%s)", shelf.name, shown, refused.message, refused.reason)
        return plan

    def _commit(self, plan: _BatchPlan) -> None:
        """Write one batch in one transaction, then free the store keys it no longer
        references and tell the listeners what changed."""
        dropped = plan.dropped_ids
        stale_keys: list[str] = []
        with self.database.session() as session:
            if dropped:
                stale_keys = list(
                    session.scalars(
                        select(Representation.store_key).where(
                            Representation.document_id.in_(dropped)
                        )
                    )
                )
                session.execute(
                    delete(Representation).where(Representation.document_id.in_(dropped))
                )
                search.clear_content(session, *dropped)  # nothing derived: no text to search
            if plan.removed_ids:
                session.execute(delete(Document).where(Document.id.in_(plan.removed_ids)))
            if plan.updates:
                session.execute(update(Document), plan.updates)
            if plan.new_rows:
                # Core, not the ORM's bulk insert (a third of a pass went on its bookkeeping),
                # and with RETURNING: the ids are this batch's own — not "above the largest
                # id", which another process may have committed meanwhile — and the rows go
                # as multi-row INSERTs, where psycopg's executemany pipeline would log a
                # second warning when a race aborts it.
                ids = (
                    session.connection()
                    .execute(insert(_DOCUMENTS).returning(_DOCUMENTS.c.id), plan.new_rows)
                    .scalars()
                    .all()
                )
                search.add_name_rows(session, ids)  # searchable by name at once
        # The store follows the transaction: keys are released only after the commit.
        release_unreferenced(self.database, self.store, stale_keys)
        self.builder.first(plan.queued_ids)  # an edit someone may be waiting for goes first
        self._publish(plan.announcement)

    def _stale(self, row: _Known, path: str, seen: Seen) -> bool:
        """Whether a known file needs its formats rebuilt."""
        if Seen.of(row) != seen:
            return True
        if row.detection != DETECTION_VERSION:
            return True  # decided by an older rule: look at its type again
        if row.state == DocumentState.UNSUPPORTED and not row.converter:
            # No converter took it when it was catalogued: a newer docshelf may have one.
            return converter_identity(row.mime_type, path.rpartition("/")[2]) is not None
        made_by = ConverterId.of_column(row.converter)
        if row.state == DocumentState.PENDING or made_by is None:
            return False  # queued already, or failed before any converter ran
        # A converter upgrade (a new version) rebuilds what the old one made.
        # An OCR pass's suffix is the builder's business (it re-reads on an engine change).
        current = converter_identity(row.mime_type, path.rpartition("/")[2])
        return made_by.without_ocr() != current

    @staticmethod
    def _head(shelf: AnyShelf, path: str) -> bytes:
        """The first bytes, for the type and title (a ranged GET for an object)."""
        try:
            return shelf.head(path, HEAD_BYTES)
        except (FileNotFoundError, NotRegularFile, OutsideShelf) as exc:
            raise _Refused(FailureReason.UNREADABLE, f"cannot open: {exc}") from exc
        except OSError as exc:
            raise _Refused(FailureReason.UNREADABLE, f"cannot open: {exc.strerror}") from exc

    def _describe(self, shelf: AnyShelf, path: str) -> dict[str, object]:
        """Type, state and cheap title of a file, from its first bytes."""
        name = path.rpartition("/")[2]
        head = self._head(shelf, path)
        mime_type = detect_mime(head, name)
        has_converter = converter_identity(mime_type, name) is not None
        unsupported = None if has_converter else unsupported_reason(mime_type, name)
        return {
            "name": name,
            "mime_type": mime_type,
            "detection": DETECTION_VERSION,
            "title": cheap_title(head, mime_type) or name,
            "description": fallback_description(mime_type, None),
            "state": DocumentState.PENDING if has_converter else DocumentState.UNSUPPORTED,
            "converter": None,
            "error_reason": unsupported and FailureReason.UNSUPPORTED,
            "error_message": unsupported,
        }

    def _catalogue(
        self, shelf: AnyShelf, path: str, seen: Seen, now: datetime
    ) -> dict[str, object]:
        """The row of a file the index has not seen before."""
        try:
            uri = build_uri(shelf.name, path)
        except InvalidUri as exc:
            raise _Refused(FailureReason.INVALID_NAME, str(exc)) from exc
        if len(uri) > MAX_URI_LENGTH:
            raise _Refused(
                FailureReason.PATH_TOO_LONG,
                f"its URI would be {len(uri)} characters, over {MAX_URI_LENGTH}",
            )
        return {
            "shelf": shelf.name,
            "path": path,
            "uri": uri,
            "size": seen.size,
            "mtime_ns": seen.mtime_ns,
            "change_key": seen.change_key,
            "sha256": None,
            "page_count": None,
            "language": None,
            "facts": {},
            "format_errors": {},
            "modified_at": datetime.fromtimestamp(seen.mtime_ns / 1e9, UTC),
            "indexed_at": now,
            **self._describe(shelf, path),
        }

    def _recatalogue(
        self, shelf: AnyShelf, path: str, row: _Known, seen: Seen, force: bool
    ) -> tuple[dict[str, object], bool]:
        """A known file's new values, and whether it changed (is queued for rebuilding).

        Only a new detection rule with the same verdict is no change at all.
        """
        values: dict[str, object] = {"id": row.id, "detection": DETECTION_VERSION}
        moved = Seen.of(row) != seen
        if moved or force or row.detection != DETECTION_VERSION:
            described = self._describe(shelf, path)
            values.update(
                size=seen.size,
                mtime_ns=seen.mtime_ns,
                change_key=seen.change_key,
                modified_at=datetime.fromtimestamp(seen.mtime_ns / 1e9, UTC),
                mime_type=described["mime_type"],
            )
            readable = described["state"] != DocumentState.UNSUPPORTED
            if not (
                moved
                or force
                or described["mime_type"] != row.mime_type
                or readable == (row.state == DocumentState.UNSUPPORTED)
            ):
                return values, False
            values.update({k: described[k] for k in ("state", "error_reason", "error_message")})
        else:
            values["state"] = DocumentState.PENDING  # a converter upgrade
        if force:
            values["converter"] = None  # rebuild every format, not just the missing ones
        return values, True

    def _wait_for_formats(self, report: IndexReport, progress: Progress | None = None) -> None:
        """Build what is pending, then report the files this pass queued that failed."""
        self.builder.drain(progress)
        for path, reason, message in self.builder.failures(
            report.changes.added | report.changes.changed
        ):
            if reason == FailureReason.UNSUPPORTED:
                report.unsupported += 1  # its converter found it unreadable in principle
            else:
                report.fail(path, reason, message)

    def _publish(self, changes: ChangeSet) -> None:
        if self.bus is not None:
            self.bus.publish(changes)


class _Refused(Exception):
    """One file the pass cannot record, with the reason reported for it."""

    def __init__(self, reason: FailureReason, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
