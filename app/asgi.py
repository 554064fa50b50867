"""The ASGI application: ``/mcp``, health probes, ``/metrics`` and the admin API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from app import __version__, metrics
from app.admin import admin_router
from app.admin.status import index_lag_seconds
from app.runtime import Runtime
from app.settings import Settings
from app.transports.http import StreamableHttpEndpoint
from app.transports.origin import LOOPBACK_HOSTS, OriginGuard, OriginPolicy


def origin_policy(settings: Settings) -> OriginPolicy:
    """Origins from the settings; Host checked against the loopback names plus the configured
    ones, whatever the bind address (a 0.0.0.0 bind is no less exposed to DNS rebinding)."""
    return OriginPolicy(settings.origins, [*LOOPBACK_HOSTS, *settings.allowed_hosts])


def create_app(runtime: Runtime) -> FastAPI:
    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        runtime.open()
        runtime.start_background()
        try:
            yield
        finally:
            runtime.close()

    app = FastAPI(title="docshelf", version=__version__, lifespan=lifespan)
    endpoint = StreamableHttpEndpoint(
        runtime.server,
        runtime.sessions,
        runtime.bus,
        keepalive_s=runtime.settings.keepalive_s,
        body_timeout_s=runtime.settings.body_timeout,
    )
    app.router.routes.append(Route("/mcp", endpoint.handle, methods=["GET", "POST", "DELETE"]))

    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok", "version": __version__}

    @app.get("/readyz", tags=["health"])
    def readyz() -> JSONResponse:
        """200 once the first index pass has finished; 503 with its progress before."""
        state = runtime.readiness
        body: dict[str, object] = {
            "ready": state.ready,
            "indexed": state.done,
            "total": state.total,
            "documents": runtime.catalog.count() if state.ready else None,
        }
        if state.error:
            body["error"] = state.error
        return JSONResponse(body, status_code=200 if state.ready else 503)

    @app.get("/metrics", tags=["health"], response_class=PlainTextResponse)
    def prometheus() -> Response:
        """Prometheus metrics. Open, like the probes: restrict it at the reverse proxy."""
        return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE)

    metrics.watch(
        sessions=lambda: len(runtime.sessions),
        # Every open notification stream (listen, session GET, stdio) holds one bus listener.
        subscriptions=lambda: runtime.bus.listener_count,
        documents=runtime.catalog.count,
        index_lag=lambda: index_lag_seconds(runtime),
    )
    app.include_router(admin_router(runtime))

    app.add_middleware(OriginGuard, policy=origin_policy(runtime.settings))
    return app
