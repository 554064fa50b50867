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
from dataclasses import dataclass
from typing import Any

import anyio

from app.mcp import wire
from app.mcp.sessions import LegacySession
from storage.events import ChangeSet, EventBus, Listener

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
    for each watched URI whose content changed or which went away.
    """
    messages = []
    if list_changed and changes.list_changed:
        messages.append(wire.notification(LIST_CHANGED, {"_meta": meta} if meta else None))
    for uri in sorted((changes.changed | changes.removed) & set(watched)):
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


# URIs one listen stream may watch: the stream holds them as long as it is open.
MAX_LISTEN_URIS = 1000


@dataclass(frozen=True, slots=True)
class ListenFilter:
    """The part of a ``subscriptions/listen`` filter this server honours."""

    resources_list_changed: bool
    resource_subscriptions: tuple[str, ...]

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> ListenFilter:
        requested = params.get("notifications")
        if not isinstance(requested, dict):
            raise wire.McpError(
                wire.INVALID_PARAMS, "subscriptions/listen: params.notifications must be an object"
            )
        uris = requested.get("resourceSubscriptions", [])
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            raise wire.McpError(
                wire.INVALID_PARAMS,
                "subscriptions/listen: resourceSubscriptions must be an array of URIs",
            )
        if len(uris) > MAX_LISTEN_URIS:
            raise wire.McpError(
                wire.INVALID_PARAMS,
                f"subscriptions/listen: at most {MAX_LISTEN_URIS} resourceSubscriptions per "
                f"stream, got {len(uris)}; split them over several streams",
            )
        return cls(requested.get("resourcesListChanged") is True, tuple(dict.fromkeys(uris)))

    def honored(self) -> dict[str, Any]:
        """The acknowledged filter: tools/prompts are omitted (we serve neither)."""
        honored: dict[str, Any] = {}
        if self.resources_list_changed:
            honored["resourcesListChanged"] = True
        if self.resource_subscriptions:
            honored["resourceSubscriptions"] = list(self.resource_subscriptions)
        return honored


async def listen(
    bus: EventBus,
    subscription_id: Any,
    listen_filter: ListenFilter,
    *,
    keepalive_s: float,
) -> AsyncIterator[dict[str, Any] | None]:
    """A 2026-07-28 subscription as a stream of messages (``None`` = keep-alive tick).

    The acknowledgement comes first; when the bus closes (server shutdown) the
    stream ends with the graceful-closure result (subscriptions "Graceful
    Closure"). The bus listener is released however the stream ends, including
    a client disconnect.
    """
    meta = {wire.META_SUBSCRIPTION_ID: subscription_id}
    listener = bus.listen()
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
        yield wire.result_response(subscription_id, {"resultType": "complete", "_meta": meta})
    finally:
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
