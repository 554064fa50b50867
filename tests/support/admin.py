"""The operators' REST API (DESIGN D9) as the tests reach it: the token a test server is
started with, and a client that carries it."""

from __future__ import annotations

import time
from typing import Any

import httpx

TOKEN = "test-admin-token-0123456789"


class Admin:
    """An HTTP client for ``/admin`` that carries the token."""

    def __init__(self, base: str, token: str = TOKEN) -> None:
        self.http = httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.http.get(path, params=params)

    def reindex(self, body: dict[str, Any] | None = None) -> dict[str, Any]:
        response = self.http.post("/admin/reindex", json=body if body is not None else {})
        assert response.status_code == 202, response.text
        return response.json()

    def job(self, job_id: int) -> dict[str, Any]:
        response = self.get(f"/admin/jobs/{job_id}")
        assert response.status_code == 200, response.text
        return response.json()

    def wait_job(self, job_id: int, timeout: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            job = self.job(job_id)
            if job["state"] not in ("queued", "running"):
                return job
            assert time.monotonic() < deadline, f"job {job_id} still {job['state']}: {job}"
            time.sleep(0.05)

    def documents(self, **params: Any) -> list[dict[str, Any]]:
        """Every page of a listing, following the cursors."""
        found: list[dict[str, Any]] = []
        cursor = None
        while True:
            query = {**params, **({"cursor": cursor} if cursor else {})}
            response = self.get("/admin/documents", **query)
            assert response.status_code == 200, response.text
            page = response.json()
            found.extend(page["documents"])
            cursor = page["next_cursor"]
            if cursor is None:
                return found

    def close(self) -> None:
        self.http.close()
