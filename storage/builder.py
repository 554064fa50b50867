"""The conversion queue: builds the formats of catalogued documents (DESIGN D11, D12).

The catalog pass records files as ``pending``; this builder turns them into
stored formats in the background, smallest files first, a few at a time, so
conversion never holds up the catalog. A read that needs a format not built
yet calls :meth:`FormatBuilder.ensure`, which converts that one document at
once, ahead of the queue, under the same per-file timeout and memory cap.

Which formats are built in the background depends on the render policy: under
``lazy`` (the default) text, Markdown and JSON; the rendered PDF of a non-PDF
source is made the first time someone asks for it and then kept. Under
``eager`` every format is built in the background.

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
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import wait as wait_for
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from sqlalchemy import ColumnElement, and_, func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from docshelf.converters import (
    APPLICATION_JSON,
    TEXT_MARKDOWN,
    TEXT_PLAIN,
    Facts,
    FailureReason,
    offered_formats,
)
from docshelf.converters.registry import unsupported_reason
from docshelf.storage import search
from docshelf.storage.conversion import (
    BACKGROUND,
    URGENT,
    ConversionOutcome,
    ConversionPool,
    ConversionTask,
    PoolClosed,
)
from docshelf.storage.database import RACE_ATTEMPTS, Database
from docshelf.storage.events import ChangeSet, EventBus
from docshelf.storage.garbage import release_unreferenced
from docshelf.storage.models import Document, DocumentState, FormatFailure, Representation
from docshelf.storage.shelves import Shelf
from docshelf.storage.store import RepresentationStore

log = logging.getLogger(__name__)

#: What the background builds under the lazy render policy: everything but a rendered PDF.
CHEAP_FORMATS = (TEXT_PLAIN, TEXT_MARKDOWN, APPLICATION_JSON)
RENDER_POLICIES = ("lazy", "eager")
CANDIDATES = 256  # pending document ids fetched at a time, smallest first
Progress = Callable[[int, int], None]

_KIND_LABELS = {
    "application/pdf": "PDF document",
    "text/markdown": "Markdown document",
    "text/plain": "Plain text",
    "application/json": "JSON document",
    "text/html": "HTML page",
    "text/csv": "CSV table",
}


def fallback_description(mime_type: str, page_count: int | None) -> str:
    """A description for a document that declares none: its kind, and its pages."""
    label = _KIND_LABELS.get(mime_type, f"{mime_type} file")
    if page_count:
        return f"{label}, {page_count} page{'s' if page_count != 1 else ''}"
    return label


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
        store: RepresentationStore,
        pool: ConversionPool,
        shelves: Sequence[Shelf],
        *,
        max_convert_bytes: int,
        render: str = "lazy",
        bus: EventBus | None = None,
        on_failure: Callable[[str], None] | None = None,
    ) -> None:
        if render not in RENDER_POLICIES:
            raise ValueError(f"render policy must be one of {RENDER_POLICIES}, not {render!r}")
        self.database = database
        self.store = store
        self.pool = pool
        self.shelves: Mapping[str, Shelf] = {shelf.name: shelf for shelf in shelves}
        self.max_convert_bytes = max_convert_bytes
        self.background_formats: tuple[str, ...] | None = (
            None if render == "eager" else CHEAP_FORMATS
        )
        self.bus = bus
        self.on_failure = on_failure  # told each recorded failure's reason (metrics)
        self._inflight: dict[int, _Queued] = {}
        self._done: queue.SimpleQueue[tuple[_Queued, Future[ConversionOutcome]]] = (
            queue.SimpleQueue()
        )
        self._candidates: deque[int] = deque()
        self._first: deque[int] = deque()  # edited documents, built before the rest
        self._owed: set[int] = set()  # documents a read gave up waiting for
        self._background = False  # whether this process builds pending documents unasked
        self._draining = 0  # drain() calls running: they build pending documents too
        self._refetch = True
        self._holds = 0  # catalog passes running; background work waits for them
        self._backlog: tuple[float, int] = (0.0, 0)  # (when counted, count)
        self._lock = threading.Lock()
        self._step_lock = threading.RLock()
        self._wake = threading.Event()
        self._recorded = threading.Condition()  # notified after every recording (drain)
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self, *, background: bool = True) -> None:
        """Start the thread that records what workers finish, until :meth:`close`; with
        ``background``, it also builds every pending document, smallest first.

        Without it (a replica, ``serve --processes`` beyond the first) the process builds
        only what its reads ask for; the thread starts with the first such build, so a
        read that stops waiting still has its outcome recorded and announced.
        """
        with self._lock:
            self._background = self._background or background
            if self._thread is not None or self._closing.is_set():
                return
            self._thread = threading.Thread(target=self._run, name="docshelf-build", daemon=True)
            self._thread.start()
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
        self._refetch = True
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
        """Documents on this server's shelves whose formats are still to be built.

        ``max_age_s``: a count this recent will do. Probes and scrapes pass 0.5 s, so
        a client polling ``/readyz`` does not slow the pass it is waiting for
        (counting 50,000 rows on every poll did).
        """
        counted_at, count = self._backlog
        if max_age_s and time.monotonic() - counted_at < max_age_s:
            return count
        query = select(func.count(Document.id)).where(*self._pending())
        with self.database.session() as session:
            count = session.scalar(query) or 0
        self._backlog = (time.monotonic(), count)
        return count

    def _pending(self) -> tuple[ColumnElement[bool], ...]:
        """The queue: documents on this server's shelves whose formats are to be built."""
        return Document.state == DocumentState.PENDING, Document.shelf.in_(list(self.shelves))

    def failures(self, uris: Collection[str]) -> list[tuple[str, str, str]]:
        """(path, reason, message) of those of ``uris`` whose conversion failed, or that
        nothing reads (reason ``unsupported``)."""
        found: list[tuple[str, str, str]] = []
        ordered = sorted(uris)
        with self.database.session() as session:
            for start in range(0, len(ordered), 500):
                query = select(Document.path, Document.error_reason, Document.error_message).where(
                    Document.uri.in_(ordered[start : start + 500]),
                    or_(
                        Document.state == DocumentState.FAILED,
                        # a converter ran and found it unreadable (no converter: the catalog
                        # pass counted it)
                        and_(
                            Document.state == DocumentState.UNSUPPORTED,
                            Document.converter.is_not(None),
                        ),
                    ),
                )
                found.extend(
                    (path, reason or FailureReason.ERROR, message or "")
                    for path, reason, message in session.execute(query)
                )
        return sorted(found)

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
        """Queue pending documents, smallest first, keeping about two per worker in flight."""
        with self._lock:
            room = self.pool.workers * 2 - len(self._inflight)
            busy = set(self._inflight)
            held = self._holds > 0
        if room <= 0 or held or self._closing.is_set():
            return 0
        if self._refetch or not self._candidates:
            self._refetch = False
            query = (
                select(Document.id)
                .where(*self._pending())
                .order_by(Document.size, Document.id)
                .limit(CANDIDATES + len(busy))
            )
            with self.database.session() as session:
                self._candidates = deque(i for i in session.scalars(query) if i not in busy)
        with self._lock:
            chosen = list(dict.fromkeys(i for i in self._first if i not in busy))[:room]
            self._first.clear()
        while self._candidates and len(chosen) < room:
            if (candidate := self._candidates.popleft()) not in busy and candidate not in chosen:
                chosen.append(candidate)
        if not chosen:
            return 0
        documents = (
            select(Document)
            .options(selectinload(Document.representations))
            .where(Document.id.in_(chosen), Document.state == DocumentState.PENDING)
        )
        with self.database.session() as session:
            tasks = [self._task(d, self.background_formats) for d in session.scalars(documents)]
        for task in sorted(tasks, key=lambda t: t.seen_size):
            self._submit(task)
        return len(tasks)

    def drain(self, progress: Progress | None = None) -> None:
        """Build everything pending now, and return when nothing is (``docshelf index``, a
        reindex job): the recording thread builds pending documents while this runs."""
        with self._lock:
            self._draining += 1
        try:
            self.start(background=False)
            total = remaining = self.backlog()
            if progress is not None:
                progress(0, total)
            while not self._closing.is_set():
                with self._lock:
                    idle = not self._inflight
                if idle and self._done.empty():
                    remaining = self.backlog()
                    if remaining == 0:
                        break
                    self.wake()  # pending documents and nothing in flight: look again
                with self._recorded:
                    self._recorded.wait(0.5)  # a document recorded: progress moves per document
                if progress is not None:
                    remaining = self.backlog()
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
                wanted = (
                    None
                    if self.background_formats is None
                    else tuple(dict.fromkeys([*self.background_formats, *formats]))
                )
                task = self._task(doc, wanted)
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

    def _task(
        self,
        doc: Document,
        formats: tuple[str, ...] | None,
        stored: Iterable[str] | None = None,
    ) -> ConversionTask:
        shelf = self.shelves[doc.shelf]
        return ConversionTask(
            document_id=doc.id,
            shelf=shelf.name,
            root=str(shelf.root),
            path=doc.path,
            formats=formats,
            max_bytes=self.max_convert_bytes,
            seen_size=doc.size,
            seen_mtime_ns=doc.mtime_ns,
            known_sha256=doc.sha256,
            known_converter=doc.converter,
            stored=frozenset(
                stored if stored is not None else (r.mime_type for r in doc.representations)
            ),
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
        recorded = _Recorded()
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
        with self._recorded:
            self._recorded.notify_all()
        if self.bus is not None and recorded.uris:
            news = frozenset(recorded.news)
            self.bus.publish(
                ChangeSet(changed=news, refreshed=frozenset(recorded.uris.values()) - news)
            )

    def _record_racing(self, outcomes: list[tuple[ConversionTask, ConversionOutcome]]) -> _Recorded:
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

    def _record(self, outcomes: list[tuple[ConversionTask, ConversionOutcome]]) -> _Recorded:
        stale: list[str] = []
        recorded = _Recorded()
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
                if doc is None or (doc.size, doc.mtime_ns) != (task.seen_size, task.seen_mtime_ns):
                    # Removed, or changed again since it was queued: the newer version is queued.
                    stale.extend(v.store_key for v in outcome.variants)
                    continue
                before = _announced(doc)
                stale.extend(_apply(doc, task, outcome))
                _search(session, doc, outcome)
                recorded.uris[doc.id] = doc.uri
                if _announced(doc) != before:
                    recorded.news.add(doc.uri)
                if outcome.error_reason or outcome.format_failures:
                    failures.append((doc.uri, outcome))
        # The store follows the transaction: keys are released only after the commit.
        release_unreferenced(self.database, self.store, stale)
        for uri, outcome in failures:
            for reason, message, what in _failures_of(outcome):
                log.warning("%s%s: %s (%s)", uri, what, message, reason)
                if self.on_failure is not None:
                    self.on_failure(reason)
        return recorded


@dataclass
class _Recorded:
    """What a recording wrote: every document's URI by id, and the URIs that are news to
    their readers (new content, a document that failed or recovered)."""

    uris: dict[int, str] = field(default_factory=dict)
    news: set[str] = field(default_factory=set)

    def __or__(self, other: _Recorded) -> _Recorded:
        return _Recorded({**self.uris, **other.uris}, self.news | other.news)


def _announced(doc: Document) -> tuple[object, ...]:
    """What a reader of ``doc`` was told when it last changed: its content, the converter
    its formats come from, and whether (and why) it failed. A change here is news; formats
    added to the same content are not."""
    return doc.sha256, doc.converter, doc.error_reason


def _failures_of(outcome: ConversionOutcome) -> Iterator[tuple[str, str, str]]:
    """(reason, message, " format" or "") of each failure in ``outcome``, for the log."""
    if outcome.error_reason:
        yield outcome.error_reason, outcome.error_message or "", ""
    for failure in outcome.format_failures:
        yield failure.reason, failure.message, f" ({failure.mime_type})"


def _apply(doc: Document, task: ConversionTask, outcome: ConversionOutcome) -> list[str]:
    """Write one outcome onto its document; returns the store keys it no longer uses."""
    doc.indexed_at = datetime.now(UTC)
    if outcome.missing:
        dropped = [r.store_key for r in doc.representations]
        doc.state = DocumentState.FAILED
        doc.error_reason = FailureReason.UNREADABLE
        doc.error_message = outcome.error_message or "the file is gone"
        doc.representations = []
        doc.format_errors = {}
        return dropped
    if _same_content(doc, outcome):
        return _add_formats(doc, task, outcome)
    dropped = [r.store_key for r in doc.representations]
    if outcome.sha256 is not None:
        doc.size, doc.mtime_ns, doc.sha256 = outcome.size, outcome.mtime_ns, outcome.sha256
        doc.modified_at = datetime.fromtimestamp(outcome.mtime_ns / 1e9, UTC)
    if outcome.mime_type is not None:
        doc.mime_type = outcome.mime_type
    doc.converter = outcome.converter
    doc.format_errors = {}
    if outcome.converter is None and not outcome.error_reason:  # nothing reads what it is
        outcome = replace(
            outcome,
            error_reason=FailureReason.UNSUPPORTED,
            error_message=unsupported_reason(doc.mime_type, doc.name),
        )
    if outcome.error_reason:
        doc.error_reason, doc.error_message = outcome.error_reason, outcome.error_message
        unreadable = outcome.error_reason == FailureReason.UNSUPPORTED
        doc.state = DocumentState.UNSUPPORTED if unreadable else DocumentState.FAILED
        doc.representations = []
        return dropped
    doc.error_reason = doc.error_message = None
    doc.state = DocumentState.READY
    if outcome.facts is not None:  # new content: new facts, and only the new formats stay
        _apply_facts(doc, outcome.facts)
        made = {v.mime_type for v in outcome.variants}
        doc.representations = [r for r in doc.representations if r.mime_type in made]
    kept = _store_variants(doc, outcome)
    doc.format_errors = FormatFailure.to_column(outcome.format_failures)
    return [key for key in dropped if key not in kept]


def _same_content(doc: Document, outcome: ConversionOutcome) -> bool:
    """Whether ``outcome`` only adds formats (or fails to) to a ready document's current
    content: the same bytes and converter, or a task cut short before it could tell."""
    return (
        doc.state == DocumentState.READY
        and outcome.sha256 in (None, doc.sha256)
        and outcome.converter in (None, doc.converter)
    )


def _add_formats(doc: Document, task: ConversionTask, outcome: ConversionOutcome) -> list[str]:
    """Record the formats made for a ready document's current content, and those that
    failed — alone: its other formats, facts, search rows and state stand."""
    failures = list(outcome.format_failures)
    if outcome.error_reason:  # cut short before any format: each one asked for failed
        made_or_failed = {v.mime_type for v in outcome.variants} | {f.mime_type for f in failures}
        asked = task.formats or offered_formats(doc.mime_type, doc.name)
        failures.extend(
            FormatFailure(mime, outcome.error_reason, outcome.error_message or "")
            for mime in asked
            if mime not in task.stored and mime not in made_or_failed
        )
    before = {r.store_key for r in doc.representations}
    kept = _store_variants(doc, outcome)
    errors = {
        mime: entry
        for mime, entry in (doc.format_errors or {}).items()
        if mime not in {v.mime_type for v in outcome.variants}
    }
    doc.format_errors = errors | FormatFailure.to_column(failures)
    return sorted(before - kept)


def _store_variants(doc: Document, outcome: ConversionOutcome) -> set[str]:
    """Point the document's rows at the variants made; returns the store keys it uses."""
    name, _, version = (outcome.converter or doc.converter or "").partition(":")
    rows = {r.mime_type: r for r in doc.representations}
    for variant in outcome.variants:
        row = rows.get(variant.mime_type)
        if row is None:  # a format made for the first time
            row = Representation(mime_type=variant.mime_type)
            doc.representations.append(row)
        # Rows are updated in place: no delete-then-insert of the same (document, type).
        row.size, row.sha256, row.store_key = variant.size, variant.sha256, variant.store_key
        row.converter, row.converter_version = name, version
    return {r.store_key for r in doc.representations}


def _search(session: Session, doc: Document, outcome: ConversionOutcome) -> None:
    """Keep the document's searchable text in step with its formats (issue #10): new text
    replaces the old; a document left with no derived formats has none to search."""
    if doc.state in (DocumentState.FAILED, DocumentState.UNSUPPORTED):
        search.clear_content(session, doc.id)
    elif outcome.segments is not None:
        search.replace_content(session, doc.id, outcome.segments)


def _apply_facts(doc: Document, facts: Facts) -> None:
    doc.title = (facts.title or "").strip() or doc.name
    doc.page_count = facts.page_count
    doc.description = (facts.description or "").strip() or fallback_description(
        doc.mime_type, facts.page_count
    )
    doc.language = facts.language
    doc.facts = {
        "metadata": dict(facts.metadata),
        "outline": [{"title": e.title, "level": e.level, "page": e.page} for e in facts.outline],
    }
