"""The operators' REST API under ``/admin`` (DESIGN D9): reindex jobs, status, documents."""

from fastapi import FastAPI

from docshelf.app.admin.auth import AdminAuth
from docshelf.app.admin.routes import router
from docshelf.app.runtime import Runtime


def mount(app: FastAPI, runtime: Runtime) -> None:
    """Serve the admin API on ``app``, over ``runtime``, behind its configured token."""
    app.state.runtime = runtime
    app.state.admin_auth = AdminAuth(runtime.settings.admin_token)
    app.include_router(router)


__all__ = ["mount", "router"]
