"""Change notifications: from index change sets to the messages each listener asked for.

Two shapes, one source (the event bus):

- 2025-11-25: a session's ``resources/subscribe`` set, delivered on its GET SSE
  stream (HTTP) or on stdout (stdio); ``list_changed`` to every session.
- 2026-07-28: ``subscriptions/listen`` with a notification filter; every message
  carries ``io.modelcontextprotocol/subscriptionId`` = the listen request's id
  (basic/patterns/subscriptions "Receiving Notifications").
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from typing import Any

import anyio

from docshelf.app.mcp import wire
from docshelf.app.mcp.params import ListenParams
from docshelf.app.mcp.sessions import LegacySession
from docshelf.storage.events import ChangeSet, EventBus, Listener
from docshelf.storage.folders import folders_touched
from docshelf.storage.uris import document_of

LIST_CHANGED = "notifications/resources/list_changed"
UPDATED = "notifications/resources/updated"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


def messages_for(
    changes: ChangeSet,
    *,
    list_changed: bool,
    watched: Collection[str],
    meta: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The notifications a listener gets for one change set.

    ``list_changed`` when the set of URIs changed (added or removed); ``updated``
    for each watched URI whose content changed or which went away, and for each watched
    folder with a document below it added, changed or removed (SEP-2093 listable
    resources: a folder's content is its children).
    """
    messages = []
    if list_changed and changes.list_changed:
        messages.append(wire.notification(LIST_CHANGED, {"_meta": meta} if meta else None))
    touched = changes.changed | changes.removed
    if any(uri.endswith("/") for uri in watched):
        touched = touched | folders_touched(changes)
    # A part's subscriber hears about every change to its document, under the part's URI.
    for uri in sorted(uri for uri in watched if document_of(uri) in touched):
        params: dict[str, Any] = {"uri": uri}
        if meta:
            params["_meta"] = meta
        messages.append(wire.notification(UPDATED, params))
    return messages


async def _changes(
    bus: EventBus, listener: Listener, keepalive_s: float
) -> AsyncIterator[ChangeSet | None]:
    """Change sets as they come, ``None`` after each quiet ``keepalive_s``; stops at bus close
    or when the listener is ended."""
    while not bus.closed:
        with anyio.move_on_after(keepalive_s) as scope:
            changes = await listener.queue.get()
        if scope.cancelled_caught:
            yield None
        elif changes is None:
            return
        else:
            yield changes


async def listen(
    bus: EventBus,
    subscription_id: Any,
    listen_filter: ListenParams,
    *,
    keepalive_s: float,
    open_streams: dict[Any, Listener] | None = None,
) -> AsyncIterator[dict[str, Any] | None]:
    """A 2026-07-28 subscription as a stream of messages (``None`` = keep-alive tick).

    The acknowledgement comes first; when the bus closes (server shutdown) the
    stream ends with the graceful-closure result (subscriptions "Graceful
    Closure"). The bus listener is released however the stream ends, including
    a client disconnect. While open it is in ``open_streams`` under the listen
    request's id, where ``notifications/cancelled`` finds it.
    """
    meta = {wire.META_SUBSCRIPTION_ID: subscription_id}
    listener = bus.listen()
    if open_streams is not None:
        open_streams[subscription_id] = listener
    try:
        yield wire.notification(
            ACKNOWLEDGED, {"notifications": listen_filter.honored(), "_meta": meta}
        )
        async for changes in _changes(bus, listener, keepalive_s):
            if changes is None:
                yield None
                continue
            for message in messages_for(
                changes,
                list_changed=listen_filter.resources_list_changed,
                watched=listen_filter.resource_subscriptions,
                meta=meta,
            ):
                yield message
        if open_streams is not None and open_streams.get(subscription_id) is not listener:
            return  # cancelled: nothing more is sent for the request (utilities/cancellation)
        yield wire.result_response(subscription_id, {"resultType": "complete", "_meta": meta})
    finally:
        if open_streams is not None and open_streams.get(subscription_id) is listener:
            del open_streams[subscription_id]
        bus.unlisten(listener)


async def session_stream(
    bus: EventBus,
    session: LegacySession,
    *,
    keepalive_s: float,
) -> AsyncIterator[dict[str, Any] | None]:
    """A 2025-11-25 session's notifications (``None`` = keep-alive tick).

    Ends when the bus closes or the session ends (``session.listener`` is ended).
    """
    listener = bus.listen()
    session.listener = listener
    try:
        async for changes in _changes(bus, listener, keepalive_s):
            if changes is None:
                yield None
                continue
            for message in messages_for(changes, list_changed=True, watched=session.subscriptions):
                yield message
    finally:
        session.listener = None
        session.touch()  # idle from now, not from its last request (app.mcp.sessions)
        bus.unlisten(listener)
