"""The in-process event bus: the indexer publishes what changed, the protocol layer listens.

The indexer runs in worker threads; listeners are asyncio tasks. ``publish`` is
thread-safe and hands each change set to every listener's own event loop.

Other processes sharing the database hear about a change through the change feed
(``storage.changefeed``): it is a *relay* of this bus, handed every set published
here, and it hands the sets other processes published to :meth:`EventBus.deliver`,
which reaches this process's listeners only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """URIs whose documents appeared, disappeared, or changed content — what subscribers
    are told — and ``refreshed``: documents whose index rows changed but not in a way a
    reader has not been told of (a format built for content already announced, an edit
    queued for conversion). Those only make caches of the rows stale."""

    added: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()
    changed: frozenset[str] = frozenset()
    refreshed: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed or self.refreshed)

    def __or__(self, other: ChangeSet) -> ChangeSet:
        return ChangeSet(
            self.added | other.added,
            self.removed | other.removed,
            self.changed | other.changed,
            self.refreshed | other.refreshed,
        )

    @property
    def list_changed(self) -> bool:
        return bool(self.added or self.removed)


@dataclass(eq=False)
class Listener:
    """One listener's queue; ``None`` in it means the bus closed (server shutdown)."""

    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[ChangeSet | None] = field(default_factory=asyncio.Queue)


class EventBus:
    def __init__(self) -> None:
        self._listeners: set[Listener] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._relays: list[Callable[[ChangeSet], None]] = []
        self._hooks: list[Callable[[ChangeSet], None]] = []
        self._counters: list[Callable[[int], None]] = []

    def listen(self) -> Listener:
        """Register a listener on the running loop; pair with :meth:`unlisten`."""
        listener = Listener(asyncio.get_running_loop())
        with self._lock:
            self._listeners.add(listener)
            self._counted()
        return listener

    def unlisten(self, listener: Listener) -> None:
        with self._lock:
            self._listeners.discard(listener)
            self._counted()

    @property
    def listener_count(self) -> int:
        with self._lock:
            return len(self._listeners)

    def on_listener_count(self, counter: Callable[[int], None]) -> None:
        """Tell ``counter`` the number of listeners now, and again at every change (the
        streams gauge of ``/metrics``: across the processes of a host it is kept in files,
        so it is written as it changes, not read at scrape time). Called under the bus's
        lock, so the counts arrive in order: it must be quick and must not use the bus."""
        with self._lock:
            self._counters.append(counter)
            self._counted()

    def _counted(self) -> None:
        for counter in self._counters:
            counter(len(self._listeners))

    def on_delivery(self, hook: Callable[[ChangeSet], None]) -> None:
        """Call ``hook`` with every set, in the delivering thread, before the listeners get
        it, whether or not anyone listens (the session registry reads what its streams'
        sessions subscribe to; the read caches drop what is gone). A hook that raises is
        logged; the set is delivered all the same."""
        with self._lock:
            self._hooks.append(hook)

    def relay_to(self, relay: Callable[[ChangeSet], None]) -> None:
        """Also hand every set published from now on to ``relay`` (the change feed). It is
        called in the publishing thread and must not block."""
        with self._lock:
            self._relays.append(relay)

    def publish(self, changes: ChangeSet) -> None:
        """A change made in this process: to the local listeners at once, and to the relays."""
        if changes:
            self._deliver(changes)
            with self._lock:
                relays = list(self._relays)
            for relay in relays:
                relay(changes)

    def deliver(self, changes: ChangeSet) -> None:
        """A change another process published, or one only this process sees (a shelf it
        stopped or started serving, storage.live_shelves): to this process's listeners
        only."""
        if changes:
            self._deliver(changes)

    def end(self, listener: Listener) -> None:
        """End one listener's stream (e.g. its session was deleted)."""
        with contextlib.suppress(RuntimeError):  # its loop has closed already
            listener.loop.call_soon_threadsafe(listener.queue.put_nowait, None)
        self.unlisten(listener)

    def close(self) -> None:
        """Tell every listener the server is stopping, so open streams end gracefully."""
        self._closed = True
        self._deliver(None)

    @property
    def closed(self) -> bool:
        return self._closed

    def _deliver(self, changes: ChangeSet | None) -> None:
        with self._lock:
            listeners = list(self._listeners)
            hooks = list(self._hooks) if changes is not None else []
        for hook in hooks:
            try:
                hook(changes)  # type: ignore[arg-type]
            except Exception:
                log.exception("a change-set hook failed; delivering the set all the same")
        for listener in listeners:
            try:
                listener.loop.call_soon_threadsafe(listener.queue.put_nowait, changes)
            except RuntimeError:  # that loop has closed; its owner is gone
                self.unlisten(listener)
