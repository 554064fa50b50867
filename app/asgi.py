"""The ASGI application: ``/mcp``, health probes, ``/metrics`` and the admin API."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from docshelf.app import __version__, admin, metrics
from docshelf.app.admin.status import index_lag_seconds
from docshelf.app.runtime import Runtime
from docshelf.app.settings import Settings
from docshelf.app.transports.http import StreamableHttpEndpoint
from docshelf.app.transports.origin import LOOPBACK_HOSTS, OriginGuard, OriginPolicy


def origin_policy(settings: Settings) -> OriginPolicy:
    """Origins from the settings; Host checked against the loopback names plus the configured
    ones, whatever the bind address (a 0.0.0.0 bind is no less exposed to DNS rebinding)."""
    return OriginPolicy(settings.origins, [*LOOPBACK_HOSTS, *settings.allowed_hosts])


class McpFirst:
    """``/mcp`` straight to the Streamable HTTP endpoint; everything else (probes, metrics,
    the admin API, lifespan) to the FastAPI app. An MCP request passes through no
    framework middleware: that stack was a fifth of a small read's time (issue 13)."""

    def __init__(self, mcp: ASGIApp, rest: ASGIApp) -> None:
        self.mcp = mcp
        self.rest = rest

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/mcp":
            await self.mcp(scope, receive, send)
        else:
            await self.rest(scope, receive, send)


def create_app(runtime: Runtime) -> ASGIApp:
    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        runtime.open()
        runtime.start_background()
        try:
            yield
        finally:
            runtime.close()

    app = FastAPI(title="docshelf", version=__version__, lifespan=lifespan)
    app.add_exception_handler(RequestValidationError, _unprocessable)
    endpoint = StreamableHttpEndpoint(
        runtime.kernel,
        runtime.sessions,
        runtime.bus,
        body_timeout_s=runtime.settings.body_timeout,
    )

    role = runtime.role.describe()

    @app.get("/healthz", tags=["health"])
    async def healthz() -> JSONResponse:
        """200 while the process is up and its request path can make progress; 503 if wedged.

        MCP handlers run on anyio's worker threads. If none can be had within a
        couple of seconds, requests are stuck behind something (issue 16, item 8),
        and a container orchestrator should restart the process rather than keep
        routing to it.
        """
        try:
            with anyio.fail_after(HEALTH_PROBE_S):
                await anyio.to_thread.run_sync(_nothing)
        except TimeoutError:
            body = {"status": "wedged", "version": __version__, "reason": _WEDGED}
            return JSONResponse(body, status_code=503)
        # Which process answered: `serve --processes N` runs several on one port.
        process = {"pid": os.getpid(), "indexing": runtime.indexing, "role": role}
        return JSONResponse({"status": "ok", "version": __version__, "process": process})

    @app.get("/readyz", tags=["health"])
    def readyz() -> JSONResponse:
        """200 once the catalog is current (formats may still be building); 503 before.
        ``role``: what this process does (app.roles), whichever the status."""
        state = runtime.readiness
        body: dict[str, object] = {
            "ready": state.ready,
            "role": role,
            "indexed": state.done,
            "total": state.total,
            "documents": runtime.catalog.count() if state.ready else None,
            "conversion_backlog": runtime.builder.backlog(max_age_s=0.5),
        }
        if state.error:
            body["error"] = state.error
        return JSONResponse(body, status_code=200 if state.ready else 503)

    @app.get("/metrics", tags=["health"], response_class=PlainTextResponse)
    def prometheus() -> Response:
        """Prometheus metrics. Open, like the probes: restrict it at the reverse proxy."""
        return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE)

    streams = metrics.watch(
        sessions=lambda: len(runtime.sessions),
        documents=runtime.catalog.count,
        index_lag=lambda: index_lag_seconds(runtime, host=metrics.MULTIPROCESS_DIR is not None),
        backlog=lambda: runtime.builder.backlog(max_age_s=0.5),
        ocr_backlog=lambda: runtime.builder.ocr_backlog(max_age_s=0.5),
    )
    # Every open notification stream (listen, session GET, stdio) holds one bus listener.
    runtime.bus.on_listener_count(streams)
    admin.mount(app, runtime)

    # DNS-rebinding protection comes first, for /mcp and everything else.
    return OriginGuard(McpFirst(endpoint, app), policy=origin_policy(runtime.settings))


HEALTH_PROBE_S = 2.0
_WEDGED = f"no request thread became free within {HEALTH_PROBE_S:g} s"


def _nothing() -> None:
    """What /healthz runs on a request thread: only getting one matters."""


async def _unprocessable(_request: Request, exc: Exception) -> Response:
    """FastAPI's 422, but ASCII-escaped: a body can hold text no UTF-8 encoder takes
    (a lone surrogate from a JSON ``\\ud800`` escape), and echoing it back must not 500."""
    assert isinstance(exc, RequestValidationError)
    body = json.dumps({"detail": jsonable_encoder(exc.errors())}, ensure_ascii=True)
    return Response(body, status_code=422, media_type="application/json")
