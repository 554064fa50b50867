"""The operators' REST API over real HTTP against a real ``docshelf serve`` (DESIGN D9)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.admin import TOKEN, Admin
from tests.support.rawhttp import exchange
from tests.support.servers import RawClient, RunningServer, child_env, serve
from tests.support.shelves import make_shelf

SHELF = "shelf"  # make_shelf(<tmp>/shelf) → the folder's name
SAMPLE_COUNT = 9
FAILED_PATHS = {"papers/libreoffice-writer-password.pdf", "papers/broken.pdf"}

# Every admin route, with a request that would succeed if authorized.
ROUTES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("POST", "/admin/reindex", {}),
    ("GET", "/admin/jobs", None),
    ("GET", "/admin/jobs/1", None),
    ("GET", "/admin/status", None),
    ("GET", "/admin/documents", None),
    ("GET", "/admin/documents/1", None),
    ("DELETE", "/admin/documents/1/representations", None),
]


@pytest.fixture(scope="module")
def admin_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    base = tmp_path_factory.mktemp("admin")
    shelf = make_shelf(base / SHELF)
    with serve(shelf, base / "data", env=child_env(DOCSHELF_ADMIN_TOKEN=TOKEN)) as server:
        yield server


@pytest.fixture
def admin(admin_server: RunningServer) -> Iterator[Admin]:
    client = Admin(admin_server.base)
    yield client
    client.close()


def detail_error(response: httpx.Response) -> str:
    """The text of a 422's messages (FastAPI's list) or of an ErrorBody."""
    detail = response.json()["detail"]
    return detail if isinstance(detail, str) else " | ".join(item["msg"] for item in detail)


# -- authentication ---------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
def test_missing_token_is_401_with_bearer_challenge(
    admin_server: RunningServer, method: str, path: str, body: dict[str, Any] | None
) -> None:
    response = httpx.request(method, admin_server.base + path, json=body)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="docshelf-admin"'
    assert "Authorization: Bearer" in response.json()["detail"]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
def test_wrong_token_is_401_invalid_token(
    admin_server: RunningServer, method: str, path: str, body: dict[str, Any] | None
) -> None:
    response = httpx.request(
        method, admin_server.base + path, json=body, headers={"Authorization": f"Bearer {TOKEN}x"}
    )
    assert response.status_code == 401
    assert (
        response.headers["www-authenticate"]
        == 'Bearer realm="docshelf-admin", error="invalid_token"'
    )


def test_other_schemes_and_non_ascii_tokens_are_refused(admin_server: RunningServer) -> None:
    url = admin_server.base + "/admin/status"
    basic = httpx.get(url, headers={"Authorization": f"Basic {TOKEN}"})
    assert basic.status_code == 401 and "error=" not in basic.headers["www-authenticate"]
    odd = httpx.get(url, headers=[(b"Authorization", "Bearer t\u00f6ken".encode())])
    assert odd.status_code == 401


@pytest.mark.parametrize("right_first", [True, False], ids=["right-first", "wrong-first"])
def test_two_authorization_lines_are_400_whichever_holds_the_token(
    admin_server: RunningServer, admin: Admin, right_first: bool
) -> None:
    # RFC 9110 §11.6.2: Authorization holds one set of credentials, and §5.3 lets only a
    # list field come on several lines; which one to check is the client's mistake to fix.
    tokens = [f"Bearer {TOKEN}", "Bearer wrong"]
    lines = [("Authorization", token) for token in (tokens if right_first else tokens[::-1])]
    response = exchange(admin_server.base, "GET", "/admin/status", lines)
    assert response.status == 400
    message = json.loads(response.body)["error"]["message"]
    assert "the Authorization header came on 2 lines" in message
    assert admin.get("/admin/status").status_code == 200


def test_auth_is_checked_before_the_body_is_parsed(admin_server: RunningServer) -> None:
    response = httpx.post(
        admin_server.base + "/admin/reindex",
        content=b"{not json",
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 401


def test_probes_and_metrics_need_no_token(admin_server: RunningServer) -> None:
    for path in ("/healthz", "/readyz", "/metrics"):
        assert httpx.get(admin_server.base + path).status_code == 200, path


def test_without_a_configured_token_the_admin_api_is_off(tmp_path: Path) -> None:
    shelf = tmp_path / "small"
    shelf.mkdir()
    (shelf / "a.txt").write_text("a")
    with serve(shelf, tmp_path / "data", "--no-index", "--no-watch") as server:
        for method, path, body in ROUTES:
            response = httpx.request(
                method, server.base + path, json=body, headers={"Authorization": f"Bearer {TOKEN}"}
            )
            assert response.status_code == 503, (method, path)
            assert "DOCSHELF_ADMIN_TOKEN" in response.json()["detail"]
        assert httpx.get(server.base + "/healthz").status_code == 200


# -- status -----------------------------------------------------------------------------------


def test_status_reports_shelves_counts_store_lag_version_and_sessions(
    admin: Admin, admin_server: RunningServer
) -> None:
    status = admin.get("/admin/status").json()
    assert status["version"] == httpx.get(admin_server.base + "/healthz").json()["version"]
    assert status["uptime_seconds"] > 0
    assert status["ready"] is True
    assert [s["name"] for s in status["shelves"]] == [SHELF]
    assert status["shelves"][0]["root"] == str(admin_server.shelf.resolve())
    assert status["shelves"][0]["documents"] == SAMPLE_COUNT
    documents = status["documents"]
    assert documents["total"] == SAMPLE_COUNT
    assert documents["by_mime_type"]["application/pdf"] == 3
    assert documents["by_state"]["failed"] == len(FAILED_PATHS)
    assert (
        sum(documents["by_mime_type"].values())
        == sum(documents["by_state"].values())
        == SAMPLE_COUNT
    )
    store = status["representation_store"]
    on_disk = sum(p.stat().st_size for p in Path(store["path"]).rglob("*") if p.is_file())
    assert store["representations"] > 0 and store["bytes"] == on_disk
    assert status["index_lag_seconds"] == 0
    assert status["jobs"] == {"queued": 0, "running": 0}

    raw = RawClient(admin_server.url)
    before = status["sessions"]
    session = raw.initialize()
    assert admin.get("/admin/status").json()["sessions"] == before + 1
    raw.http.delete(admin_server.url, headers={"Mcp-Session-Id": session})
    assert admin.get("/admin/status").json()["sessions"] == before
    raw.close()


# -- documents --------------------------------------------------------------------------------


def test_document_listing_pages_with_an_opaque_cursor(admin: Admin) -> None:
    first = admin.get("/admin/documents", limit=4).json()
    assert len(first["documents"]) == 4 and first["next_cursor"]
    everything = admin.documents(limit=4)
    ids = [d["id"] for d in everything]
    assert len(ids) == SAMPLE_COUNT == len(set(ids)) and ids == sorted(ids)
    assert everything[:4] == first["documents"]


def test_document_listing_filters_by_shelf_mime_state_and_path_prefix(admin: Admin) -> None:
    assert len(admin.documents(shelf=SHELF)) == SAMPLE_COUNT
    pdfs = admin.documents(mime_type="application/pdf")
    assert {d["path"] for d in pdfs} == {"papers/pdflatex-4-pages.pdf", *FAILED_PATHS}
    failed = admin.documents(state="failed")
    assert {d["path"] for d in failed} == FAILED_PATHS
    assert all(d["error_reason"] for d in failed)
    assert {d["path"] for d in admin.documents(path_prefix="papers/")} == {d["path"] for d in pdfs}
    assert admin.documents(path_prefix="papers/", state="ready", limit=1) == [
        d for d in pdfs if d["state"] == "ready"
    ]
    assert admin.documents(path_prefix="nothing-here/") == []


def test_document_listing_rejects_bad_queries_clearly(admin: Admin) -> None:
    unknown = admin.get("/admin/documents", shelf="nope")
    assert unknown.status_code == 404 and "unknown shelf 'nope'" in unknown.json()["detail"]
    bad_cursor = admin.get("/admin/documents", cursor="not-a-cursor")
    assert bad_cursor.status_code == 422 and "invalid cursor" in detail_error(bad_cursor)
    for limit in (0, 501, "many"):
        assert admin.get("/admin/documents", limit=limit).status_code == 422
    bad_state = admin.get("/admin/documents", state="exploded")
    assert bad_state.status_code == 422 and "ready" in detail_error(bad_state)


def _document(admin: Admin, path: str) -> dict[str, Any]:
    (summary,) = [d for d in admin.documents() if d["path"] == path]
    response = admin.get(f"/admin/documents/{summary['id']}")
    assert response.status_code == 200, response.text
    return response.json()


def test_document_detail_has_metadata_every_representation_and_the_last_error(
    admin: Admin, admin_server: RunningServer
) -> None:
    guide = _document(admin, "guides/field-guide.md")
    assert guide["title"] == "Field Guide" and guide["mime_type"] == "text/markdown"
    assert (
        guide["sha256"]
        == hashlib.sha256((admin_server.shelf / "guides/field-guide.md").read_bytes()).hexdigest()
    )
    assert guide["last_error"] is None and guide["state"] == "ready"
    kinds = {r["mime_type"] for r in guide["representations"]}
    # Under the lazy render policy (the default) no PDF is rendered until someone asks.
    assert {"text/plain", "application/json"} <= kinds and "application/pdf" not in kinds
    store = admin_server.data_dir / "representations"
    for representation in guide["representations"]:
        stored = (store / representation["store_key"]).read_bytes()
        assert representation["size"] == len(stored)
        assert representation["sha256"] == hashlib.sha256(stored).hexdigest()

    locked = _document(admin, "papers/libreoffice-writer-password.pdf")
    assert locked["state"] == "failed"
    assert locked["last_error"]["reason"] == "encrypted" and locked["last_error"]["message"]


def test_document_detail_404_and_422(admin: Admin) -> None:
    missing = admin.get("/admin/documents/987654")
    assert missing.status_code == 404 and "no document 987654" in missing.json()["detail"]
    assert admin.get("/admin/documents/0").status_code == 422
    assert admin.get("/admin/documents/abc").status_code == 422
    assert admin.http.delete("/admin/documents/987654/representations").status_code == 404


def test_dropping_representations_deletes_them_and_a_job_rebuilds_them(
    admin: Admin, admin_server: RunningServer
) -> None:
    before = _document(admin, "table.csv")
    store = admin_server.data_dir / "representations"
    keys = [r["store_key"] for r in before["representations"]]
    assert keys and all((store / k).is_file() for k in keys)

    response = admin.http.delete(f"/admin/documents/{before['id']}/representations")
    assert response.status_code == 202, response.text
    dropped = response.json()
    assert dropped["document_id"] == before["id"] and dropped["dropped"] == len(keys)
    job = admin.wait_job(dropped["job_id"])
    assert job["state"] == "succeeded" and job["paths"] == ["table.csv"]
    # The file itself did not change; the job waited for the builder to remake its formats.
    assert job["counts"]["seen"] == 1 and job["counts"]["unchanged"] == 1

    after = _document(admin, "table.csv")
    assert sorted((r["mime_type"], r["sha256"]) for r in after["representations"]) == sorted(
        (r["mime_type"], r["sha256"]) for r in before["representations"]
    )
    assert all((store / k).is_file() for k in keys)
    assert after["indexed_at"] > before["indexed_at"]


# -- reindex and jobs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"shelf": SHELF, "paths": ["/etc/passwd"]}, "is absolute"),
        ({"shelf": SHELF, "paths": ["../outside.txt"]}, "contains '..'"),
        ({"shelf": SHELF, "paths": ["a/../../b"]}, "contains '..'"),
        ({"shelf": SHELF, "paths": ["./"]}, "names the shelf's root"),
        ({"shelf": SHELF, "paths": []}, "at least 1 item"),
        ({"paths": ["notes.txt"]}, "name the shelf as well"),
        ({"shelf": SHELF, "force": "yes"}, "valid boolean"),
        ({"shelf": 7}, "valid string"),
        ({"shelf": SHELF, "pahts": ["x"]}, "Extra inputs are not permitted"),
        ([1, 2], "valid dictionary"),
    ],
)
def test_bad_reindex_bodies_are_422_with_a_clear_message(
    admin: Admin, body: Any, message: str
) -> None:
    response = admin.http.post("/admin/reindex", json=body)
    assert response.status_code == 422, response.text
    assert message in detail_error(response)


def test_a_path_that_is_not_unicode_is_422(admin: Admin) -> None:
    response = admin.http.post(
        "/admin/reindex",
        content=b'{"shelf": "shelf", "paths": ["\\ud800.md"]}',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 422, response.text
    assert "unable to parse raw data as a unicode string" in detail_error(response)


def test_malformed_json_is_422(admin: Admin) -> None:
    response = admin.http.post(
        "/admin/reindex", content=b'{"shelf": ', headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422
    assert "JSON decode error" in detail_error(response)


def test_unknown_shelf_is_404_naming_the_shelves(admin: Admin) -> None:
    response = admin.http.post("/admin/reindex", json={"shelf": "elsewhere"})
    assert response.status_code == 404
    assert response.json()["detail"] == "unknown shelf 'elsewhere'; this server has: shelf"


def test_reindex_without_body_queues_a_job_for_every_shelf(admin: Admin) -> None:
    response = admin.http.post("/admin/reindex")
    assert response.status_code == 202, response.text
    accepted = response.json()
    assert response.headers["location"] == accepted["href"] == f"/admin/jobs/{accepted['job_id']}"
    job = admin.wait_job(accepted["job_id"])
    assert job["state"] == "succeeded" and job["shelf"] is None and job["paths"] is None
    assert job["trigger"] == "api" and job["force"] is False
    counts = job["counts"]
    assert counts["seen"] == SAMPLE_COUNT and counts["unchanged"] == SAMPLE_COUNT
    assert counts["added"] == counts["changed"] == counts["removed"] == 0
    assert counts["failed"] == len(FAILED_PATHS)
    assert job["progress"]["done"] == job["progress"]["total"] == SAMPLE_COUNT
    assert job["requested_at"] <= job["started_at"] <= job["finished_at"]
    assert job["errors"] == [] and job["error_count"] == 0

    listed = admin.get("/admin/jobs").json()["jobs"]
    assert listed[0]["id"] == accepted["job_id"] and "errors" not in listed[0]
    ids = [j["id"] for j in listed]
    assert ids == sorted(ids, reverse=True)
    assert all(
        j["state"] == "succeeded"
        for j in admin.get("/admin/jobs", state="succeeded").json()["jobs"]
    )
    assert len(admin.get("/admin/jobs", limit=1).json()["jobs"]) == 1


def test_forced_path_reindex_reconverts_and_reports_per_file_errors(admin: Admin) -> None:
    accepted = admin.reindex({"shelf": SHELF, "paths": ["papers/", "./notes.txt"], "force": True})
    job = admin.wait_job(accepted["job_id"])
    assert job["state"] == "succeeded"
    assert job["paths"] == ["notes.txt", "papers"]
    assert job["counts"]["seen"] == 4 and job["counts"]["changed"] == 4
    assert job["counts"]["failed"] == 2
    assert {(e["path"], e["reason"]) for e in job["errors"]} >= {
        ("papers/libreoffice-writer-password.pdf", "encrypted")
    }
    assert {e["path"] for e in job["errors"]} == FAILED_PATHS
    assert all(e["message"] for e in job["errors"]) and job["error_count"] == 2


def test_unknown_job_is_404_and_bad_ids_are_422(admin: Admin) -> None:
    missing = admin.get("/admin/jobs/424242")
    assert missing.status_code == 404 and missing.json()["detail"] == "no job 424242"
    assert admin.get("/admin/jobs/0").status_code == 422
    assert admin.get(f"/admin/jobs/{2**70}").status_code == 422
    assert admin.get("/admin/jobs", state="exploded").status_code == 422


def test_openapi_describes_every_admin_route_with_models(admin_server: RunningServer) -> None:
    spec = httpx.get(admin_server.base + "/openapi.json").json()
    operations = {
        (method.upper(), path): op
        for path, item in spec["paths"].items()
        for method, op in item.items()
        if path.startswith("/admin")
    }
    assert set(operations) == {
        ("POST", "/admin/reindex"),
        ("GET", "/admin/jobs"),
        ("GET", "/admin/jobs/{job_id}"),
        ("GET", "/admin/status"),
        ("GET", "/admin/documents"),
        ("GET", "/admin/documents/{document_id}"),
        ("DELETE", "/admin/documents/{document_id}/representations"),
        ("POST", "/admin/shelves/{name}/notify"),
    }
    for key, op in operations.items():
        assert {"401", "503", "422"} <= set(op["responses"]) or key == ("GET", "/admin/status")
        assert op["security"] == [{"adminToken": []}]
        success = next(code for code in op["responses"] if code.startswith("2"))
        assert "$ref" in op["responses"][success]["content"]["application/json"]["schema"]
    reindex = operations[("POST", "/admin/reindex")]
    assert "coalesced" in reindex["description"]
    assert reindex["requestBody"]["content"]["application/json"]["schema"]
    assert spec["components"]["securitySchemes"]["adminToken"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "The value of DOCSHELF_ADMIN_TOKEN, as 'Authorization: Bearer <token>'.",
    }
