"""Running converters in a process pool, with a per-file timeout and memory cap.

Conversion is CPU-bound and runs third-party parsers on untrusted files, so it
happens in worker processes: a file that hangs or explodes costs a worker, never
the server. The worker reads the file and writes the variants into the
representation store itself, so only small outcome records cross the pipe.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.pool
import resource
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from converters import ConversionError, Facts, convert, find_converter
from storage.store import RepresentationStore, store_key

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class StoredVariant:
    mime_type: str
    size: int
    sha256: str
    store_key: str


@dataclass(frozen=True, slots=True)
class ConversionTask:
    """One file to convert. ``path`` is the real, already confined file path."""

    path: str
    filename: str
    mime_type: str
    source_sha256: str
    converter: str
    converter_version: str


@dataclass(frozen=True, slots=True)
class ConversionOutcome:
    facts: Facts = field(default_factory=Facts)
    variants: tuple[StoredVariant, ...] = ()
    error_reason: str | None = None
    error_message: str | None = None

    @classmethod
    def failed(cls, reason: str, message: str) -> ConversionOutcome:
        return cls(error_reason=reason, error_message=message)


def convert_file(task: ConversionTask, store_root: str) -> ConversionOutcome:
    """Worker entry point: read, convert, store. Never raises for a bad document."""
    store = RepresentationStore(Path(store_root))
    try:
        data = Path(task.path).read_bytes()
        result = convert(data, task.mime_type, task.filename)
    except ConversionError as exc:
        return ConversionOutcome.failed(exc.reason, str(exc))
    except MemoryError:
        return ConversionOutcome.failed("too_large", "conversion ran out of memory")
    except Exception as exc:  # a converter bug must not take the pool down
        return ConversionOutcome.failed("error", f"{type(exc).__name__}: {exc}")
    variants = []
    for representation in result.representations:
        key = store_key(
            task.source_sha256, task.converter, task.converter_version, representation.mime_type
        )
        digest = store.put(key, representation.data)
        variants.append(
            StoredVariant(representation.mime_type, len(representation.data), digest, key)
        )
    return ConversionOutcome(facts=result.facts, variants=tuple(variants))


def _limit_memory(max_bytes: int) -> None:
    if max_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))
    logging.getLogger("pypdf").setLevel(logging.ERROR)


def converter_identity(mime_type: str, filename: str) -> tuple[str, str] | None:
    """(name, version) of the converter that handles this file, or None."""
    converter = find_converter(mime_type, filename)
    return (converter.name, converter.version) if converter else None


class ConversionPool:
    """A process pool that enforces a per-file timeout by replacing a stuck pool."""

    def __init__(
        self, store: RepresentationStore, *, workers: int, timeout_s: float, memory_bytes: int
    ) -> None:
        self.store = store
        self.workers = max(1, workers)
        self.timeout_s = timeout_s
        self.memory_bytes = memory_bytes
        self._pool: multiprocessing.pool.Pool | None = None
        # The start-up pass, the watcher and reindex jobs share one pool; a timeout replaces
        # the pool, which must not kill another caller's in-flight files, so runs take turns.
        self._lock = threading.Lock()

    def _ensure_pool(self) -> multiprocessing.pool.Pool:
        if self._pool is None:
            context = multiprocessing.get_context("forkserver")
            # Workers fork from a server that has the converters imported already, so a
            # replacement pool (after a timeout) is ready in milliseconds, not seconds.
            context.set_forkserver_preload(["storage.conversion"])
            self._pool = context.Pool(
                self.workers, initializer=_limit_memory, initargs=(self.memory_bytes,)
            )
        return self._pool

    def _discard_pool(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None

    def run(
        self, tasks: Iterable[ConversionTask]
    ) -> Iterator[tuple[ConversionTask, ConversionOutcome]]:
        """Convert ``tasks``, yielding each with its outcome in submission order."""
        with self._lock:
            yield from self._run(deque(tasks))

    def _run(
        self, pending: deque[ConversionTask]
    ) -> Iterator[tuple[ConversionTask, ConversionOutcome]]:
        window = self.workers * 2
        while pending:
            pool = self._ensure_pool()
            inflight: deque[tuple[ConversionTask, multiprocessing.pool.AsyncResult]] = deque()
            timed_out = False
            while (pending or inflight) and not timed_out:
                while pending and len(inflight) < window:
                    task = pending.popleft()
                    inflight.append(
                        (task, pool.apply_async(convert_file, (task, str(self.store.root))))
                    )
                task, result = inflight.popleft()
                try:
                    yield task, result.get(timeout=self.timeout_s)
                except multiprocessing.TimeoutError:
                    log.warning("conversion of %s timed out after %ss", task.path, self.timeout_s)
                    yield (
                        task,
                        ConversionOutcome.failed(
                            "timeout", f"conversion took longer than {self.timeout_s:g} s"
                        ),
                    )
                    timed_out = True
                except Exception as exc:  # the worker died (memory cap, crash)
                    log.warning("conversion of %s failed in its worker: %s", task.path, exc)
                    yield task, ConversionOutcome.failed("error", f"worker failed: {exc}")
            if timed_out:
                self._discard_pool()
                pending.extendleft(reversed([t for t, _ in inflight]))

    def close(self) -> None:
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool.join()
            self._pool = None
