"""The operators' REST API under ``/admin`` (DESIGN D9): reindex jobs, status, documents."""

from docshelf.app.admin.routes import admin_router

__all__ = ["admin_router"]
