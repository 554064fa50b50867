"""Conversion in worker processes: one confined read, a per-file timeout and memory cap.

Conversion is CPU-bound and runs third-party parsers on untrusted files, so it
happens in worker processes: a file that hangs or explodes costs a worker, never
the server. The worker opens the shelf file itself, once, through
:meth:`Shelf.read` (no symlink followed, regular files only), and hashes and
converts those same bytes: what is recorded is exactly what was converted
(nothing swapped in between can leak into a format). It writes the variants
into the content-addressed store, so only small outcome records cross the pipe.

:class:`ConversionPool` runs one process per worker slot and a priority queue
in front of them: a read waiting for a document jumps ahead of background
work, a timeout kills only the worker that overran, and closing the pool kills
the workers at once (a conversion in flight is abandoned and redone later).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import heapq
import itertools
import logging
import multiprocessing
import os
import resource
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from pathlib import PurePosixPath
from typing import Any

from docshelf.converters import (
    ConversionError,
    Facts,
    FailureReason,
    find_converter,
    offered_formats,
)
from docshelf.converters.base import Segment, Source
from docshelf.converters.detect import HEAD_BYTES, detect_mime
from docshelf.converters.library_logs import quiet_libraries
from docshelf.converters.ocr import ocr_identity
from docshelf.storage.models import ConverterId, FormatFailure
from docshelf.storage.s3 import adopt_environment, client_environment
from docshelf.storage.shelves import FileBytes, NotRegularFile, OutsideShelf, Seen, shelf_at
from docshelf.storage.store import Store, StoreSpec, open_store, store_key

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class StoredVariant:
    mime_type: str
    size: int
    sha256: str
    store_key: str


@dataclass(frozen=True, slots=True)
class ConversionTask:
    """One document to (re)build, and what the index already knows of it.

    ``formats`` are the derived formats the document should have once the task
    is done. When the bytes still hash to ``known_sha256`` and the converter is
    still ``known_converter``, only the formats missing from ``stored`` are made.
    """

    document_id: int
    shelf: str
    root: str  # the shelf's location: a folder, or an s3:// URL (storage.shelves.shelf_at)
    path: str
    formats: tuple[str, ...] | None  # None: every format the converter offers
    max_bytes: int
    seen_size: int = 0  # the index's size and mtime when queued: a newer version voids this
    seen_mtime_ns: int = 0
    seen_change_key: str | None = None  # an object's ETag when queued (None for a file)
    known_sha256: str | None = None
    known_converter: ConverterId | None = None
    stored: frozenset[str] = frozenset()
    #: The OCR pass (DESIGN D34): the converter may read pages without text by OCR, and
    #: what it makes is versioned ``version+<ocr identity>``.
    ocr: bool = False
    timeout_s: float | None = None  # None: the pool's per-file timeout

    @property
    def seen(self) -> Seen:
        """The version the index had when this was queued: a row that no longer has it
        changed again since (the newer version is queued), so this outcome is not recorded."""
        return Seen(self.seen_size, self.seen_mtime_ns, self.seen_change_key)


@dataclass(frozen=True, slots=True)
class ConversionOutcome:
    """What a worker found and made. ``size``/``mtime_ns`` are of the bytes it read.

    ``error_reason`` is a failure of the whole document (it could not be read or
    parsed); ``format_failures`` are formats that could not be made while the others
    were (a rendered PDF that timed out, say).
    """

    size: int = 0
    mtime_ns: int = 0
    change_key: str | None = None  # the ETag of the object read (None for a file)
    sha256: str | None = None
    mime_type: str | None = None
    converter: ConverterId | None = None  # None when no converter handles the type
    facts: Facts | None = None  # None: unchanged content, the index's facts still hold
    variants: tuple[StoredVariant, ...] = ()
    segments: tuple[Segment, ...] | None = None  # the text to search; None: unchanged
    format_failures: tuple[FormatFailure, ...] = ()
    error_reason: FailureReason | None = None
    error_message: str | None = None
    missing: bool = False  # the file was gone (or no longer a regular file on the shelf)

    @classmethod
    def failed(cls, reason: FailureReason, message: str) -> ConversionOutcome:
        return cls(error_reason=reason, error_message=message)


@dataclass(frozen=True, slots=True)
class Parsed:
    """A worker's step: the document is parsed (None: unchanged, the index's still hold)."""

    facts: Facts | None
    segments: tuple[Segment, ...] | None


#: What a worker sends, in order, for one task: the file it found (a ConversionOutcome:
#: final when it is all there is), then Parsed, then one StoredVariant or FormatFailure per
#: format. Each step is sent as soon as it is done, so a task cut short by its timeout
#: keeps every format made before (OutcomeCollector.cut_short).
Step = ConversionOutcome | Parsed | StoredVariant | FormatFailure


def converter_identity(mime_type: str, filename: str) -> ConverterId | None:
    """The id of the converter that handles this file, or None."""
    converter = find_converter(mime_type, filename)
    return ConverterId(converter.name, converter.version) if converter else None


def ocr_version(version: str) -> str:
    """The version of what an OCR pass makes: the converter's, and the engine's identity
    (engine, its version, languages), so that changing either converts again."""
    return f"{version}+{ocr_identity()}"


def _read(task: ConversionTask) -> FileBytes | ConversionOutcome:
    shelf = shelf_at(task.shelf, task.root)
    try:
        return shelf.read(task.path, limit=task.max_bytes)
    except (FileNotFoundError, NotRegularFile, OutsideShelf) as exc:
        return ConversionOutcome(missing=True, error_message=str(exc))
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            return ConversionOutcome.failed(
                FailureReason.TOO_LARGE, f"over the conversion cap of {task.max_bytes} bytes"
            )
        return ConversionOutcome.failed(
            FailureReason.UNREADABLE, f"cannot read the file: {exc.strerror}"
        )


def _unchanged(task: ConversionTask, found: ConversionOutcome) -> bool:
    """Whether ``found`` is the content and converter the index already holds formats of."""
    return found.sha256 == task.known_sha256 and found.converter == task.known_converter


def _wanted(task: ConversionTask, found: ConversionOutcome) -> list[str]:
    """The formats to make of ``found``: those asked for, less those stored for this content."""
    filename = PurePosixPath(task.path).name
    unchanged = _unchanged(task, found)
    return [
        f
        for f in offered_formats(found.mime_type or "", filename)
        if (task.formats is None or f in task.formats) and not (unchanged and f in task.stored)
    ]


def _failure(exc: Exception) -> tuple[FailureReason, str]:
    """A converter's exception as a reason and a message (a converter bug is ``error``)."""
    if isinstance(exc, ConversionError):
        return exc.reason, exc.message
    if isinstance(exc, MemoryError):
        return FailureReason.TOO_LARGE, "conversion ran out of memory"
    return FailureReason.ERROR, f"{type(exc).__name__}: {exc}"


def conversion_steps(task: ConversionTask, store: Store) -> Iterator[Step]:
    """Worker entry point: read once, hash, detect, convert, store, one :data:`Step` at a
    time. Never raises for a bad file; a format that fails fails alone."""
    read = _read(task)
    if isinstance(read, ConversionOutcome):
        yield read
        return
    filename = PurePosixPath(task.path).name
    mime_type = detect_mime(read.data[:HEAD_BYTES], filename)
    sha = hashlib.sha256(read.data).hexdigest()
    found = ConversionOutcome(
        size=read.size,
        mtime_ns=read.mtime_ns,
        change_key=read.change_key,
        sha256=sha,
        mime_type=mime_type,
    )
    converter = find_converter(mime_type, filename)
    if converter is None:
        yield replace(found, facts=Facts())
        return
    version = ocr_version(converter.version) if task.ocr else converter.version
    found = replace(found, converter=ConverterId(converter.name, version))
    yield found
    unchanged = _unchanged(task, found)
    wanted = _wanted(task, found)
    if unchanged and not wanted:
        return  # same bytes, same converter, every format stored: nothing to parse
    try:
        result = converter.convert(Source.of(filename, mime_type, read.data, ocr=task.ocr))
        yield Parsed(None, None) if unchanged else Parsed(result.facts, result.segments())
    except Exception as exc:  # a converter bug must not take the worker down
        reason, message = _failure(exc)
        yield replace(found, error_reason=reason, error_message=message)
        return
    for mime in (f for f in result.formats if f in wanted):
        try:
            [representation] = result.produce([mime])
            key = store_key(sha, converter.name, version, mime)
            digest = store.put(key, representation.data)
        except Exception as exc:
            yield FormatFailure(mime, *_failure(exc))
        else:
            yield StoredVariant(mime, len(representation.data), digest, key)


class OutcomeCollector:
    """A task's steps, gathered into its :class:`ConversionOutcome` — whole when the worker
    finishes, or cut short (a timeout, a worker that died) keeping what was done."""

    def __init__(self, task: ConversionTask) -> None:
        self.task = task
        self.found: ConversionOutcome | None = None
        self.parsed: Parsed | None = None
        self.variants: list[StoredVariant] = []
        self.failures: list[FormatFailure] = []

    def add(self, step: Step) -> None:
        if isinstance(step, ConversionOutcome):
            self.found = step
        elif isinstance(step, Parsed):
            self.parsed = step
        elif isinstance(step, StoredVariant):
            self.variants.append(step)
        else:
            self.failures.append(step)

    def outcome(self) -> ConversionOutcome:
        """The outcome of a task whose worker sent every step."""
        found = self.found or ConversionOutcome.failed(
            FailureReason.ERROR, "the worker sent nothing"
        )
        if self.parsed is None:
            return found  # all there was: gone, unreadable, unchanged, unparsable, no converter
        if self.parsed.facts is not None and self.failures and not self.variants:
            # New content of which no format could be made: the document failed, not a format.
            first = self.failures[0]
            return replace(
                found, error_reason=FailureReason(first.reason), error_message=first.message
            )
        return replace(
            found,
            facts=self.parsed.facts,
            segments=self.parsed.segments,
            variants=tuple(self.variants),
            format_failures=tuple(self.failures),
        )

    def cut_short(self, reason: FailureReason, message: str) -> ConversionOutcome:
        """The outcome of a task stopped before its end: the formats made stay made, those
        still to make fail with ``reason``. Content the index holds formats of stays as it
        is (its formats fail alone); new content that was not even parsed has failed."""
        found = self.found
        if found is None or found.error_reason or found.missing:
            return found or ConversionOutcome.failed(reason, message)
        unchanged = _unchanged(self.task, found)
        if self.parsed is None and not unchanged:
            return replace(found, error_reason=reason, error_message=message)
        if self.parsed is None:
            self.parsed = Parsed(None, None)
        done = {v.mime_type for v in self.variants} | {f.mime_type for f in self.failures}
        self.failures.extend(
            FormatFailure(mime, reason, message)
            for mime in _wanted(self.task, found)
            if mime not in done
        )
        return self.outcome()


def convert_file(task: ConversionTask, store: Store) -> ConversionOutcome:
    """Convert in this process (tests, tools): the steps a worker would send, collected."""
    collector = OutcomeCollector(task)
    for step in conversion_steps(task, store):
        collector.add(step)
    return collector.outcome()


def _worker_main(
    connection: Connection,
    store_spec: StoreSpec,
    memory_bytes: int,
    s3_environment: dict[str, str],
) -> None:
    """One worker process: convert tasks from the pipe until it closes. ``s3_environment``:
    the serving process's S3 configuration, not the forkserver's (which started with the
    environment of its own time)."""
    adopt_environment(s3_environment)
    # Ctrl-C reaches the whole process group; the server decides when workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Conversion is background work: answering requests comes first on a busy machine.
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
    if memory_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    quiet_libraries()
    store = open_store(store_spec)
    _warm_up()
    connection.send(READY)
    while True:
        try:
            task = connection.recv()
        except (EOFError, OSError):
            return
        for step in conversion_steps(task, store):
            connection.send(step)
        connection.send(END)


def _warm_up() -> None:
    """Render a line once, so the fonts are parsed before the first real document needs
    them (a first read that renders a PDF would otherwise pay for it)."""
    from docshelf.converters.render import render_markdown_pdf

    try:
        render_markdown_pdf("# docshelf\n\nwarming up")
    except Exception:  # no fonts, say: the real render reports it properly
        log.debug("renderer warm-up failed", exc_info=True)


def _start_forkserver() -> None:
    """Start the forkserver now, immune to Ctrl-C from its first instruction.

    Ctrl-C reaches every process in the group, and the forkserver ignores SIGINT only
    once it has imported its preload (a second or more): a Ctrl-C meanwhile ended it
    with a KeyboardInterrupt traceback, and every worker slot waiting on it with an
    EOFError. A process started while SIGINT is ignored starts with it ignored, so on
    the main thread (``serve``, ``stdio``, ``index``) the forkserver is started with
    SIGINT ignored here for the few milliseconds of the fork (a Ctrl-C in exactly
    those is lost; the next one works). Elsewhere (a replica's first on-demand build)
    the first worker starts it, and ``storage.forkserver_init``, imported first, covers
    all of the preload but the interpreter's own start.
    """
    from multiprocessing import forkserver

    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, previous)


class PoolClosed(Exception):
    """The pool closed before this task finished; the document stays queued for next time."""


@dataclass(order=True)
class _Queued:
    priority: int
    sequence: int
    task: ConversionTask = field(compare=False)
    future: Future[ConversionOutcome] = field(compare=False)


class _Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, context: Any, store_spec: StoreSpec, memory_bytes: int) -> None:
        self.connection, child = context.Pipe()
        self.process = context.Process(
            target=_worker_main,
            args=(child, store_spec, memory_bytes, client_environment()),
            daemon=True,
        )
        self.process.start()
        child.close()
        # The per-file timeout measures conversion, not a worker (or the forkserver,
        # importing every converter) starting up.
        if not self.connection.poll(WORKER_START_S) or self.connection.recv() != READY:
            self.kill()
            raise OSError(f"a conversion worker did not start within {WORKER_START_S} s")

    def kill(self) -> None:
        self.process.kill()
        self.process.join(timeout=5)
        self.connection.close()


URGENT = 0
BACKGROUND = 10
LATER = 20  # OCR passes: after every cheap conversion (DESIGN D34)
READY = "ready"  # what a worker sends once it can take tasks
END = "end"  # what a worker sends after a task's last step
WORKER_NICENESS = 10
WORKER_START_S = 120


class ConversionPool:
    """Worker processes fed from a priority queue, each task under its own timeout."""

    def __init__(self, store: Store, *, workers: int, timeout_s: float, memory_bytes: int) -> None:
        self.store = store
        self.workers = max(1, workers)
        self.timeout_s = timeout_s
        self.memory_bytes = memory_bytes
        self._queue: list[_Queued] = []
        self._sequence = itertools.count()
        self._ready = threading.Condition()
        self._closed = False
        self._live: set[_Worker] = set()
        self._slots: list[threading.Thread] = []
        self._context: Any = None

    def submit(self, task: ConversionTask, *, priority: int = BACKGROUND) -> Future[Any]:
        """Queue ``task``; the future gives its :class:`ConversionOutcome` (or PoolClosed)."""
        future: Future[ConversionOutcome] = Future()
        with self._ready:
            if self._closed:
                future.set_exception(PoolClosed())
                return future
            self._start_slots()
            heapq.heappush(self._queue, _Queued(priority, next(self._sequence), task, future))
            self._ready.notify()
        return future

    def _start_slots(self) -> None:
        if self._slots:
            return
        self._context = multiprocessing.get_context("forkserver")
        # Workers fork from a server that has the converters imported already, so a
        # replacement worker (after a timeout) is ready in milliseconds, not seconds.
        self._context.set_forkserver_preload(
            [
                "docshelf.storage.forkserver_init",
                "docshelf.storage.conversion",
                "docshelf.converters.render.pdf",
            ]
        )
        _start_forkserver()
        for number in range(self.workers):
            slot = threading.Thread(
                target=self._slot, name=f"docshelf-convert-{number}", daemon=True
            )
            slot.start()
            self._slots.append(slot)

    def _take(self) -> _Queued | None:
        with self._ready:
            while not self._queue and not self._closed:
                self._ready.wait()
            return None if self._closed else heapq.heappop(self._queue)

    def start(self) -> None:
        """Start the workers now rather than at the first task, so a first read that needs
        a conversion does not also wait for processes to start and warm up."""
        with self._ready:
            if not self._closed:
                self._start_slots()

    def _spawn(self) -> _Worker:
        worker = _Worker(self._context, self.store.spec, self.memory_bytes)
        with self._ready:
            self._live.add(worker)
        return worker

    def _slot(self) -> None:
        worker: _Worker | None = None
        with contextlib.suppress(OSError, EOFError):  # EOFError: the forkserver died (closing)
            worker = self._spawn()
        while (item := self._take()) is not None:
            if not item.future.set_running_or_notify_cancel():
                continue
            try:
                if worker is None:
                    worker = self._spawn()
                outcome, healthy = self._convert(worker, item.task)
            except (EOFError, OSError) as exc:  # no worker could be started (closing, say)
                outcome, healthy = ConversionOutcome.failed(FailureReason.ERROR, str(exc)), False
            if not healthy and worker is not None:
                self._retire(worker)
                worker = None
            if self._closed:
                item.future.set_exception(PoolClosed())
            else:
                item.future.set_result(outcome)
        if worker is not None:
            self._retire(worker)

    def _convert(self, worker: _Worker, task: ConversionTask) -> tuple[ConversionOutcome, bool]:
        """Run ``task`` on ``worker``, step by step, under the per-file timeout; the outcome,
        and whether the worker can take another task (not if it overran or died)."""
        collector = OutcomeCollector(task)
        timeout_s = task.timeout_s or self.timeout_s
        deadline = time.monotonic() + timeout_s
        try:
            worker.connection.send(task)
            while (left := deadline - time.monotonic()) > 0 and worker.connection.poll(left):
                step = worker.connection.recv()
                if step == END:
                    return collector.outcome(), True
                collector.add(step)
        except (EOFError, OSError) as exc:  # the worker died (memory cap, crash, closing)
            return collector.cut_short(
                FailureReason.ERROR, f"the conversion worker died: {exc!r}"
            ), False
        log.warning("conversion of %s timed out after %ss", task.path, timeout_s)
        return collector.cut_short(
            FailureReason.TIMEOUT, f"conversion took longer than {timeout_s:g} s"
        ), False

    def _retire(self, worker: _Worker) -> None:
        with self._ready:
            self._live.discard(worker)
        worker.kill()

    def close(self) -> None:
        """Stop now: queued tasks and conversions in flight end with :class:`PoolClosed`."""
        with self._ready:
            self._closed = True
            queued, self._queue = self._queue, []
            live = list(self._live)
            self._ready.notify_all()
        for item in queued:
            if item.future.set_running_or_notify_cancel():
                item.future.set_exception(PoolClosed())
        for worker in live:
            worker.process.kill()
        for slot in self._slots:
            slot.join(timeout=5)
