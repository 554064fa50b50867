"""Roots as shelves: ``docshelf stdio`` started with no shelf serves its client's folders.

2025-11-25 client/roots. A client that declares the ``roots`` capability in
``initialize`` is asked for its roots (``roots/list``) once it is initialized
(basic/lifecycle: no server request before ``notifications/initialized``), and again at
each ``notifications/roots/list_changed`` ("Root List Changes"). Every root that is a
``file://`` URI of a folder this process can read becomes a shelf named after the
folder; the others are skipped, each with a log line saying why, and the server goes
on serving. Shelves whose root is gone stop being served (storage.live_shelves). The
client is told ``notifications/resources/list_changed`` after each change to the set.

A shelf is named after its folder (:func:`storage.uris.shelf_name_for`); when two roots'
folders have the same name, the one whose path sorts first keeps it and the other gets
it with a short hash of its path. So the same roots get the same names — and their
documents the same URIs — in every session, in whatever order the client lists them,
and a shelf keeps its name for as long as it is served.

Roots are a 2025-era feature here: 2026-07-28 has no ``initialize`` to declare them in,
no server-to-client requests outside a request's own round trips and no
``roots/list_changed`` (its changelog; roots are deprecated there, SEP-2577).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio
import anyio.abc

from docshelf.app.mcp.kernel import INITIALIZED, Kernel
from docshelf.app.mcp.notifications import LIST_CHANGED
from docshelf.app.mcp.outbound import ClientError, ClientRequests, NoAnswer
from docshelf.app.mcp.sessions import LegacySession, Peer
from docshelf.storage.live_shelves import LiveShelves
from docshelf.storage.shelves import folder_problem
from docshelf.storage.uris import is_valid_shelf_name, shelf_name_for

log = logging.getLogger(__name__)

LIST_ROOTS = "roots/list"
ROOTS_CHANGED = "notifications/roots/list_changed"
ANSWER_TIMEOUT_S = 30.0  # a client answers roots/list from what it holds: at once

INSTRUCTIONS = (
    "This docshelf was started without a shelf: its shelves are the folders the client "
    "gives as roots (the roots capability of the 2025 protocol), one shelf per folder, "
    "named after it. A client that gives no roots gets no documents: start docshelf "
    "stdio with --root DIR instead."
)


class RootRefused(ValueError):
    """A root that cannot be a shelf; the message says why, for the log."""


def folder_of(uri: object) -> Path:
    """The local folder a root's URI names, absolute and resolved; :class:`RootRefused`
    if it is not a ``file://`` URI of a folder on this machine.

    Root "uri": "This *must* start with file:// for now" (2025-11-25 schema, Root).
    ``file:///home/me/x`` and ``file://localhost/home/me/x`` name ``/home/me/x``;
    percent-escapes are decoded (RFC 8089). Whether the folder exists and can be read is
    :func:`storage.shelves.folder_problem`'s to say.
    """
    if not isinstance(uri, str):
        raise RootRefused(f"its uri is {type(uri).__name__}, not a string")
    try:
        parts = urlsplit(uri)
    except ValueError as exc:  # "Invalid IPv6 URL" and the like
        raise RootRefused(f"it is not a URI ({exc})") from None
    if parts.scheme.lower() != "file":
        raise RootRefused("it is not a file:// URI: docshelf serves folders on this machine")
    if parts.netloc.lower() not in ("", "localhost"):
        raise RootRefused(f"it names the host {parts.netloc!r}: only local folders are served")
    if parts.query or parts.fragment:
        raise RootRefused("a file:// URI with a query or fragment names no folder")
    path = unquote(parts.path, errors="surrogateescape")
    if os.name == "nt" and len(path) > 2 and path[0] == "/" and path[2] == ":":
        path = path[1:]  # file:///C:/Users/me → C:/Users/me
    if "\x00" in path or not Path(path).is_absolute():
        raise RootRefused("its path is not an absolute path")
    return Path(os.path.normpath(path))


def _hashed(base: str, folder: Path, length: int) -> str:
    digest = hashlib.sha256(os.fsencode(folder)).hexdigest()[:length]
    return f"{base[: 63 - length].rstrip('-._')}-{digest}"


def shelf_names(folders: Iterable[Path], served: Mapping[str, Path]) -> dict[str, Path]:
    """A shelf name for each of ``folders`` (resolved paths): a folder served now keeps
    its name (``served``: name → folder); a new one gets its folder's name, or that name
    and a hash of its path if another of the folders has it. New folders are named in
    the order of their paths, so the client's order changes nothing."""
    wanted = set(folders)
    names = {name: folder for name, folder in served.items() if folder in wanted}
    kept = set(names.values())
    for folder in sorted(wanted - kept):
        base = shelf_name_for(folder.name)
        name = base
        for length in (6, 12, 64):
            if name not in names:
                break
            name = _hashed(base, folder, length)
        assert is_valid_shelf_name(name) and name not in names, name
        names[name] = folder
    return names


def wanted_folders(result: Mapping[str, Any]) -> list[Path]:
    """The folders a ``roots/list`` result names that can be shelves, in its order and
    without repeats; each root skipped says why in the log. :class:`RootRefused` if the
    result holds no list of roots at all."""
    roots = result.get("roots")
    if not isinstance(roots, list):
        raise RootRefused(f"the result's roots is {type(roots).__name__}, not a list")
    folders: list[Path] = []
    for root in roots:
        try:
            folder = _servable(root)
        except RootRefused as exc:
            uri = root.get("uri") if isinstance(root, dict) else root
            log.warning("root %r is not served: %s", uri, exc)
            continue
        if folder not in folders:
            folders.append(folder)
    return folders


def _servable(root: object) -> Path:
    """The resolved folder of one Root that can be a shelf; :class:`RootRefused` if none."""
    if not isinstance(root, dict):
        raise RootRefused("it is not a Root object")
    folder = folder_of(root.get("uri"))
    if (problem := folder_problem(folder)) is not None:
        raise RootRefused(f"it {problem}")
    try:
        return folder.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop met while resolving
        raise RootRefused(f"it cannot be resolved ({exc})") from None


class RootsFollower:
    """Asks the client for its roots and serves them as shelves, following their changes.

    Refreshes run one at a time, in the connection's task group (:meth:`attach`); a
    change announced while one runs is followed by one more. Until the first answer is
    served (or fails), ``catalogued`` is clear, so a client's first ``resources/list``
    waits for its roots' documents (ResourceService, DESIGN D11) instead of finding none.
    """

    def __init__(self, live: LiveShelves, kernel: Kernel, catalogued: threading.Event) -> None:
        self.live = live
        self.catalogued = catalogued
        self._tasks: anyio.abc.TaskGroup | None = None
        self._outbound: ClientRequests | None = None
        self._again = False
        self._running = False
        kernel.on_notification(INITIALIZED, self._initialized)
        kernel.on_notification(ROOTS_CHANGED, self._roots_changed)

    def attach(self, tasks: anyio.abc.TaskGroup) -> None:
        """Run refreshes in ``tasks`` (the stdio connection's)."""
        self._tasks = tasks

    def _initialized(self, session: LegacySession, peer: Peer | None) -> None:
        roots = session.client_capabilities.get("roots")
        if not isinstance(roots, dict):
            log.warning(
                "no shelf was given and the client declared no roots capability: serving "
                "no documents; start docshelf stdio with --root DIR for this client"
            )
            self.catalogued.set()
            return
        if peer is None or peer.outbound is None or self._tasks is None:
            return  # not a connection we can send requests on
        self._outbound = peer.outbound
        self.catalogued.clear()  # the first list waits for the roots' first pass
        self._refresh_soon()

    def _roots_changed(self, session: LegacySession, peer: Peer | None) -> None:
        if self._outbound is None:
            log.warning(
                "the client sent %s but declared no roots capability: ignored", ROOTS_CHANGED
            )
            return
        self._refresh_soon()

    def _refresh_soon(self) -> None:
        self._again = True
        if not self._running and self._tasks is not None and self._outbound is not None:
            self._running = True
            self._tasks.start_soon(self._refresh_while_asked, self._outbound)

    async def _refresh_while_asked(self, outbound: ClientRequests) -> None:
        try:
            while self._again:
                self._again = False
                try:
                    await self._refresh(outbound)
                except Exception:  # the database, say: in the log; the connection serves on
                    log.exception("the shelves could not be made to match the client's roots")
        finally:
            self._running = False

    async def _refresh(self, outbound: ClientRequests) -> None:
        """One ``roots/list`` round trip, and the shelves made to match its answer."""
        try:
            result = await outbound.request(LIST_ROOTS, None, timeout_s=ANSWER_TIMEOUT_S)
            folders = wanted_folders(result)
        except (ClientError, NoAnswer, RootRefused) as exc:
            served = ", ".join(sorted(self.live.folders())) or "none"
            log.warning("roots not followed: %s; the shelves stay as they were (%s)", exc, served)
            self.catalogued.set()
            return
        wanted = shelf_names(folders, self.live.folders())
        try:
            change = await anyio.to_thread.run_sync(self.live.serve, wanted, abandon_on_cancel=True)
        finally:
            self.catalogued.set()
        for folder, why in change.refused:
            log.warning("root %s is not served: %s", folder, why)
        if change and not change.announced:
            # The shelves changed, and resources/templates/list with them, though no
            # document came or went (an empty folder): the client hears of it all the same.
            await outbound.notify(LIST_CHANGED)
