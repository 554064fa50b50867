"""The conversion queue: builds the formats of catalogued documents (DESIGN D11, D12).

The catalog pass records files as ``pending``; this builder turns them into
stored formats in the background, smallest files first, a few at a time, so
conversion never holds up the catalog. It takes each document under a lease
(:mod:`storage.leases`), so every process sharing a PostgreSQL database can build in
the background without two converting the same document, and a process that dies
leaves its documents to the others once its leases run out (issue 27). A read that
needs a format not built yet calls :meth:`FormatBuilder.ensure`, which converts that
one document at once, ahead of the queue (whoever holds its lease), under the same
per-file timeout and memory cap.

Which formats are built in the background depends on the render policy: under
``lazy`` (the default) text, Markdown and JSON; the rendered PDF of a non-PDF
source is made the first time someone asks for it and then kept. Under
``eager`` every format is built in the background.

OCR is a second pass (DESIGN D34). The first conversion of a document never runs
it; a converter reports the pages that have no text but an image
(:attr:`Facts.ocr_pages`), and the document's ``ocr`` column says ``pending``.
Once nothing is pending, the builder converts those documents again with OCR, at
a priority below every cheap conversion, under a timeout that grows with their
pages; a read of such a document asks for its OCR pass ahead of the queue and
waits as long as any read waits. An OCR pass that fails leaves the cheap formats
standing and says why (``ocr`` = ``failed``).

A worker's outcome is recorded only if the catalog has not seen a newer
version of the file meanwhile (same size and mtime as when the task was
queued); otherwise the newer version is already queued and this result is
dropped. A format that fails or times out fails alone: the document keeps every
format and search row it has and stays ``ready``, and the failure is recorded
for that format (issue "Nothing lost on a first read").

What a recorded outcome means to readers goes on the event bus: new content (or
a document that failed) as ``changed`` — its subscribers hear
``notifications/resources/updated`` once per change —, formats added to content
already announced only as ``refreshed``, unless a read gave up waiting for them
(:meth:`FormatBuilder.ensure` returned False): then they are news too.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import Future
from concurrent.futures import wait as wait_for
from dataclasses import dataclass, field, replace

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import selectinload

from docshelf.converters.formats import CHEAP_FORMATS
from docshelf.storage.changefeed import process_token
from docshelf.storage.conversion import (
    BACKGROUND,
    LATER,
    URGENT,
    ConversionOutcome,
    ConversionPool,
    ConversionTask,
    PoolClosed,
)
from docshelf.storage.database import RACE_ATTEMPTS, Database
from docshelf.storage.events import ChangeSet, EventBus
from docshelf.storage.garbage import release_unreferenced
from docshelf.storage.leases import Leases
from docshelf.storage.models import (
    ConverterId,
    Document,
    DocumentState,
    OcrState,
)
from docshelf.storage.outcomes import (
    OcrPolicy,
    Recorded,
    announced,
    apply_ocr_policy,
    apply_outcome,
    failures_of,
    ocr_facts,
    update_search,
)
from docshelf.storage.queues import Queues
from docshelf.storage.shelves import AnyShelf, Seen, ShelfSet
from docshelf.storage.store import Store

log = logging.getLogger(__name__)

RENDER_POLICIES = ("lazy", "eager")
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class _Queued:
    task: ConversionTask
    outcome: Future[ConversionOutcome]  # the pool's: running once a worker has the task
    done: Future[None] = field(default_factory=Future)  # set once the outcome is recorded


class FormatBuilder:
    """Background and on-demand conversion of catalogued documents."""

    def __init__(
        self,
        database: Database,
        store: Store,
        pool: ConversionPool,
        shelves: ShelfSet | Sequence[AnyShelf],
        *,
        max_convert_bytes: int,
        render: str = "lazy",
        bus: EventBus | None = None,
        on_failure: Callable[[str], None] | None = None,
        on_recorded: Callable[[int], None] | None = None,
        leases: Leases | None = None,
    ) -> None:
        if render not in RENDER_POLICIES:
            raise ValueError(f"render policy must be one of {RENDER_POLICIES}, not {render!r}")
        self.database = database
        self.store = store
        self.pool = pool
        # Shared with the rest of the process: its queues follow shelves added or removed.
        self.shelves = ShelfSet.of(shelves)
        self.max_convert_bytes = max_convert_bytes
        self.background_formats: tuple[str, ...] | None = (
            None if render == "eager" else CHEAP_FORMATS
        )
        self.bus = bus
        self.on_failure = on_failure  # told each recorded failure's reason (metrics)
        self.on_recorded = on_recorded  # told how many conversions each recording wrote
        self.ocr = OcrPolicy()
        self.queues = Queues(database, self.shelves)
        # What this process takes from the queues it holds under a lease (storage.leases).
        self.leases = leases or Leases(database, process_token())
        self._inflight: dict[int, _Queued] = {}
        self._done: queue.SimpleQueue[tuple[_Queued, Future[ConversionOutcome]]] = (
            queue.SimpleQueue()
        )
        self._first: deque[int] = deque()  # edited documents, built before the rest
        self._owed: set[int] = set()  # documents a read gave up waiting for
        self._background = False  # whether this process builds pending documents unasked
        self._draining = 0  # drain() calls running: they build pending documents too
        self._reconciled = False  # the OCR states are brought in line once, at the first start
        self._holds = 0  # catalog passes running; background work waits for them
        self._lock = threading.Lock()
        self._step_lock = threading.RLock()
        self._wake = threading.Event()
        self._recorded = threading.Condition()  # notified after every recording (drain)
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self, *, background: bool = True, reconcile_ocr: bool = True) -> None:
        """Start the thread that records what workers finish, until :meth:`close`; with
        ``background``, it also builds every pending document, smallest first.

        Without it (``--no-convert``, a replica on SQLite) the process builds only what
        its reads ask for; the thread starts with the first such build, so a read that
        stops waiting still has its outcome recorded and announced. ``reconcile_ocr``:
        also bring the OCR states in line with this process's settings (the indexing
        process does; other hosts building in the background leave that to it).
        """
        if background and reconcile_ocr:
            self.apply_ocr_settings()
        with self._lock:
            self._background = self._background or background
            if self._thread is not None or self._closing.is_set():
                return
            self._thread = threading.Thread(target=self._run, name="docshelf-build", daemon=True)
            self._thread.start()
        self.wake()

    def apply_ocr_settings(self) -> None:
        """Bring the documents' OCR state in line with this process's settings: OCR turned
        on or installed queues what waited for it, a new engine or languages read again
        what the old one read, OCR turned off or missing says so of what is queued. Once, by
        the indexing process or one that drains the queue."""
        with self._lock:
            if self._reconciled:
                return
            self._reconciled = True
        with self.database.session() as session:
            apply_ocr_policy(session, self.ocr, list(self.shelves))

    def adopt(self, shelf_name: str) -> None:
        """A shelf added while serving: its documents' OCR states follow this process's
        settings, as every shelf's did at start (:meth:`apply_ocr_settings`), and the
        queue looks for its pending documents."""
        with self._lock:
            reconciled = self._reconciled
        if reconciled:
            with self.database.session() as session:
                apply_ocr_policy(session, self.ocr, [shelf_name])
        self.wake()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Queue no background work while a catalog pass runs: the catalog comes first
        (DESIGN D11). Reads that need a format now are served as ever."""
        with self._lock:
            self._holds += 1
        try:
            yield
        finally:
            with self._lock:
                self._holds -= 1
            self.wake()

    def wake(self) -> None:
        """New pending documents were catalogued (maybe smaller ones: look again)."""
        self._wake.set()

    def first(self, document_ids: Iterable[int]) -> None:
        """Build these pending documents before the rest of the queue: edits, which their
        subscribers hear about once built, go ahead of a bulk backlog."""
        with self._lock:
            self._first.extend(document_ids)
        self.wake()

    def close(self) -> None:
        self._closing.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self.leases.close()  # what is still held, another process takes now

    def _run(self) -> None:
        # The only thread that clears the wake event, and it clears it before stepping:
        # whatever finishes while it steps keeps the event set, and is recorded next.
        while not self._closing.is_set():
            self._wake.clear()
            try:
                self._step(fill=self._background or self._draining > 0)
            except Exception:  # a database hiccup must not end background building
                log.exception("the conversion queue could not advance")
            self._wake.wait(timeout=5)

    # -- queries --------------------------------------------------------------------------

    def backlog(self, *, max_age_s: float = 0.0) -> int:
        """Documents on this server's shelves whose formats are still to be built
        (``max_age_s``: a count this recent will do, :meth:`Queues.count`)."""
        return self.queues.count(self.queues.pending, max_age_s)

    def ocr_backlog(self, *, max_age_s: float = 0.0) -> int:
        """Ready documents on this server's shelves waiting for their OCR pass."""
        return self.queues.count(self.queues.ocr_pending, max_age_s)

    def failures(self, uris: Collection[str]) -> list[tuple[str, str, str]]:
        """(path, reason, message) of those of ``uris`` whose conversion failed, or that
        nothing reads (reason ``unsupported``)."""
        return self.queues.failures(uris)

    def working_on(self) -> list[str]:
        """The shelf paths of the documents a worker is converting now (``docshelf index``
        names one that takes long)."""
        with self._lock:
            queued = list(self._inflight.values())
        return [q.task.path for q in queued if q.outcome.running()]

    def forget(self, document_id: int) -> bool:
        """Drop a document's stored formats and queue it for a full rebuild (admin API)."""
        with self.database.session() as session:
            doc = session.get(Document, document_id)
            if doc is None:
                return False
            keys = [r.store_key for r in doc.representations]
            doc.representations = []
            doc.converter = None
            if doc.state != DocumentState.UNSUPPORTED:
                doc.state = DocumentState.PENDING
        release_unreferenced(self.database, self.store, keys)
        self.wake()
        return True

    # -- the queue ------------------------------------------------------------------------

    def _step(self, *, fill: bool = True) -> int:
        """Record what finished (one transaction for all of it), then queue more (unless
        ``fill`` is False); returns how many documents were queued."""
        with self._step_lock:
            finished = []
            while not self._done.empty():
                finished.append(self._done.get_nowait())
            if finished:
                self._record_all(finished)
            return self._fill() if fill else 0

    def _fill(self) -> int:
        """Take pending documents under a lease (edits first, then smallest first; the OCR
        queue once nothing cheaper is free), keeping about two per worker in flight."""
        with self._lock:
            room = self.pool.workers * 2 - len(self._inflight)
            busy = set(self._inflight)
            held = self._holds > 0
            first = [i for i in dict.fromkeys(self._first) if i not in busy][: max(room, 0)]
            if room > 0 and not held:
                self._first.clear()
        if room <= 0 or held or self._closing.is_set():
            return 0
        chosen = self.leases.claim(self.queues.in_order(), room, busy=busy, first=first)
        if not chosen:
            return 0
        documents = (
            select(Document)
            .options(selectinload(Document.representations))
            .where(Document.id.in_(chosen), self.queues.either())  # still queued
        )
        with self.database.session() as session:
            tasks = [
                self._ocr_task(d, ()) if d.state == DocumentState.READY else self._cheap_task(d)
                for d in session.scalars(documents)
                if d.shelf in self.shelves  # not one removed since it was claimed
            ]
        self.leases.forget(set(chosen) - {task.document_id for task in tasks})
        for task in sorted(tasks, key=lambda t: (t.ocr, t.seen_size)):
            self._submit(task, LATER if task.ocr else BACKGROUND)
        return len(tasks)

    def drain(self, progress: Progress | None = None) -> None:
        """Build everything pending now, and return when nothing is (``docshelf index``, a
        reindex job): the recording thread builds pending documents while this runs."""
        with self._lock:
            self._draining += 1
        try:
            self.apply_ocr_settings()
            self.start(background=False)
            total = remaining = self.backlog() + self.ocr_backlog()
            if progress is not None:
                progress(0, total)
            while not self._closing.is_set():
                with self._lock:
                    idle = not self._inflight
                if idle and self._done.empty():
                    remaining = self.backlog() + self.ocr_backlog()
                    if remaining == 0:
                        break
                    self.wake()  # pending documents and nothing in flight: look again
                with self._recorded:
                    self._recorded.wait(0.5)  # a document recorded: progress moves per document
                if progress is not None:
                    remaining = self.backlog() + self.ocr_backlog()
                    total = max(total, remaining)
                    progress(total - remaining, total)
            if progress is not None and remaining == 0:
                progress(total, total)
        finally:
            with self._lock:
                self._draining -= 1

    def ensure(
        self,
        document_id: int,
        formats: Collection[str],
        *,
        rebuild: Collection[str] = (),
        timeout: float | None = None,
    ) -> bool:
        """Build a document's ``formats`` now, ahead of the queue, and wait up to ``timeout``
        seconds for them to be recorded.

        ``rebuild``: formats whose stored file went missing, made again even though the
        index lists them. A format that failed for the document's current content is not
        tried again (a new version of the file, or a forced reindex, tries it again).
        True once the outcome is recorded, or when there is nothing to build (a failed
        document, one gone, every format stored). False when the wait ran out: the build
        goes on, and once it is recorded the document is announced as changed, so whoever
        gave up waiting hears when it lands.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            current = self._inflight.get(document_id)
        if current is not None and not self._wait(current, deadline):
            return False
        with self.database.session() as session:
            doc = session.get(
                Document, document_id, options=[selectinload(Document.representations)]
            )
            if doc is None or doc.shelf not in self.shelves:
                return True
            stored = {r.mime_type for r in doc.representations} - set(rebuild)
            if doc.state == DocumentState.PENDING:
                task = self._cheap_task(doc, formats)
            elif doc.ocr == OcrState.PENDING and doc.state == DocumentState.READY:
                # A read of a document waiting for its OCR pass: that pass, ahead of the queue.
                task = self._ocr_task(doc, formats)
            elif doc.state == DocumentState.READY and (
                missing := [
                    f for f in formats if f not in stored and f not in (doc.format_errors or {})
                ]
            ):
                task = self._task(doc, tuple(dict.fromkeys([*stored, *missing])), stored)
            else:
                return True
        return self._wait(self._submit(task, URGENT), deadline)

    def _wait(self, queued: _Queued, deadline: float | None) -> bool:
        """Wait until ``queued`` is recorded or ``deadline`` passes; on giving up, owe its
        document an announcement (decided under the lock the recorder holds to settle it,
        so the outcome is either seen recorded here or announced there)."""
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not wait_for([queued.done], timeout=left).not_done:
            return True
        with self._lock:
            if queued.done.done():
                return True
            self._owed.add(queued.task.document_id)
        return False

    def _cheap_task(self, doc: Document, formats: Collection[str] = ()) -> ConversionTask:
        """The first pass of a pending document: the background formats and ``formats``."""
        if self.background_formats is None:
            return self._task(doc, None)
        return self._task(doc, tuple(dict.fromkeys([*self.background_formats, *formats])))

    def _ocr_task(self, doc: Document, formats: Collection[str]) -> ConversionTask:
        """The OCR pass of a ready document: the formats it has and ``formats``, made again
        with OCR, under the per-file timeout and the per-page limit for each page."""
        has = [r.mime_type for r in doc.representations]
        pages = ocr_facts(doc).get("pages")
        count = len(pages) if isinstance(pages, list) else 1
        timeout = self.pool.timeout_s + count * self.ocr.page_timeout_s
        task = self._task(doc, tuple(dict.fromkeys([*CHEAP_FORMATS, *has, *formats])), ())
        return replace(task, ocr=True, timeout_s=timeout)

    def _task(
        self,
        doc: Document,
        formats: tuple[str, ...] | None,
        stored: Iterable[str] | None = None,
    ) -> ConversionTask:
        return ConversionTask(
            document_id=doc.id,
            shelf=doc.shelf,
            root=self.shelves[doc.shelf].location,
            path=doc.path,
            formats=formats,
            max_bytes=self.max_convert_bytes,
            seen_size=doc.size,
            seen_mtime_ns=doc.mtime_ns,
            seen_change_key=doc.change_key,
            known_sha256=doc.sha256,
            known_converter=ConverterId.of_column(doc.converter),
            stored=frozenset(
                stored if stored is not None else (r.mime_type for r in doc.representations)
            ),
            # A format missing from an OCR-read document is made by the same OCR pass.
            ocr=doc.ocr == OcrState.DONE,
        )

    def _submit(self, task: ConversionTask, priority: int = BACKGROUND) -> _Queued:
        self.start(background=False)  # something must record the outcome
        queued = _Queued(task, self.pool.submit(task, priority=priority))
        with self._lock:
            self._inflight[task.document_id] = queued
        queued.outcome.add_done_callback(lambda future: self._finished(queued, future))
        return queued

    def _finished(self, queued: _Queued, future: Future[ConversionOutcome]) -> None:
        """A worker is done (in a pool thread): hand the outcome to the recorder."""
        self._done.put((queued, future))
        self._wake.set()

    # -- recording ------------------------------------------------------------------------

    def _record_all(self, finished: list[tuple[_Queued, Future[ConversionOutcome]]]) -> None:
        """Record every finished outcome in one transaction, then release and announce."""
        outcomes: list[tuple[ConversionTask, ConversionOutcome]] = []
        for queued, future in finished:
            # PoolClosed: shutting down; the document stays pending and is built next time.
            with contextlib.suppress(PoolClosed):
                outcomes.append((queued.task, future.result()))
        recorded = Recorded()
        try:
            recorded = self._record_racing(outcomes)
        except Exception:
            log.exception("recording %d conversions together failed; one by one", len(outcomes))
            for outcome in outcomes:
                try:
                    recorded |= self._record([outcome])
                except Exception:
                    log.exception("recording the conversion of %s failed", outcome[0].path)
        finally:
            with self._lock:
                for queued, _ in finished:
                    document_id = queued.task.document_id
                    if self._inflight.get(document_id) is queued:
                        del self._inflight[document_id]
                    if document_id in self._owed and document_id in recorded.uris:
                        self._owed.discard(document_id)
                        recorded.news.add(recorded.uris[document_id])
                    queued.done.set_result(None)
            self.leases.forget(queued.task.document_id for queued, _ in finished)
        with self._recorded:
            self._recorded.notify_all()
        if self.on_recorded is not None and recorded.uris:
            self.on_recorded(len(recorded.uris))
        if self.bus is not None and recorded.uris:
            news = frozenset(recorded.news)
            self.bus.publish(
                ChangeSet(changed=news, refreshed=frozenset(recorded.uris.values()) - news)
            )

    def _record_racing(self, outcomes: list[tuple[ConversionTask, ConversionOutcome]]) -> Recorded:
        """:meth:`_record`, again over the rows another process sharing the database wrote
        for the same documents meanwhile (a duplicate key: both built the same format)."""
        for _ in range(RACE_ATTEMPTS - 1):
            try:
                return self._record(outcomes)
            except IntegrityError:
                log.warning(
                    "another process recorded formats of %d of these documents at the same "
                    "time; recording again over its rows",
                    len(outcomes),
                )
        return self._record(outcomes)

    def _record(self, outcomes: list[tuple[ConversionTask, ConversionOutcome]]) -> Recorded:
        stale: list[str] = []
        recorded = Recorded()
        failures: list[tuple[str, ConversionOutcome]] = []
        ids = [task.document_id for task, _ in outcomes]
        query = (
            select(Document)
            .options(selectinload(Document.representations))
            .where(Document.id.in_(ids))
        )
        with self.database.session() as session:
            docs = {doc.id: doc for doc in session.scalars(query)}
            for task, outcome in outcomes:
                doc = docs.get(task.document_id)
                if doc is not None:
                    self.leases.settle(doc)  # recorded (or dropped): the lease ends with it
                if doc is None or Seen.of(doc) != task.seen:
                    # Removed, or changed again since it was queued: the newer version is queued.
                    stale.extend(v.store_key for v in outcome.variants)
                    continue
                before = announced(doc)
                stale.extend(apply_outcome(doc, task, outcome, self.ocr))
                update_search(session, doc, outcome)
                recorded.uris[doc.id] = doc.uri
                log.debug("recorded the conversion of %s (%s)", doc.uri, self.leases.holder)
                if announced(doc) != before:
                    recorded.news.add(doc.uri)
                if outcome.error_reason or outcome.format_failures:
                    failures.append((doc.uri, outcome))
        # The store follows the transaction: keys are released only after the commit.
        release_unreferenced(self.database, self.store, stale)
        for uri, outcome in failures:
            for reason, message, what in failures_of(outcome):
                log.warning("%s%s: %s (%s)", uri, what, message, reason)
                if self.on_failure is not None:
                    self.on_failure(reason)
        return recorded
