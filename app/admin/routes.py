"""The ``/admin`` routes. Each one is a thin translation between HTTP and the runtime.

The router is built once, at import; the runtime it serves is the application's
(``app.state.runtime``, set by :func:`app.admin.mount`), handed to each route as a
dependency.
"""

from __future__ import annotations

import contextlib
from typing import Annotated, Any

from fastapi import (
    APIRouter,
    Body,
    Depends,
    HTTPException,
    Path,
    Query,
    Request,
    Response,
    Security,
)
from fastapi.exceptions import RequestValidationError
from starlette.concurrency import run_in_threadpool

from docshelf.app.admin.auth import BEARER_SCHEME, AdminRoute
from docshelf.app.admin.cursor import MAX_ID, InvalidCursor, decode_cursor, encode_cursor
from docshelf.app.admin.models import (
    DocumentDetail,
    DocumentPage,
    DocumentStateName,
    DocumentSummary,
    ErrorBody,
    Job,
    JobList,
    JobStateName,
    JobSummary,
    NotifyAccepted,
    ReindexAccepted,
    ReindexRequest,
    RepresentationsDropped,
    Status,
)
from docshelf.app.admin.notify import SHAPE, BadNotification, notified_keys, shelf_paths
from docshelf.app.admin.status import build_status
from docshelf.app.runtime import Runtime
from docshelf.storage import inventory
from docshelf.storage.bucket_shelf import BucketShelf
from docshelf.storage.inventory import DocumentFilter
from docshelf.storage.jobs import JobRequest, JobRunner, UnknownShelf
from docshelf.storage.models import Document

REINDEX_DESCRIPTION = """\
Queue a reindex job and return its id at once (202); follow it at `GET /admin/jobs/{id}`.

* No body, or `{}`: every shelf. `shelf`: one shelf. `paths` (with `shelf`): only those
  files or folders, as shelf-relative POSIX paths (no leading `/`, no `..`).
* `force`: re-convert files even when they have not changed.

**One job at a time, coalesced while queued.** Jobs run one after another in request order,
on one worker per server process. A request whose target (the same shelf, or all shelves)
already has a *queued* job is merged into it and answered with that job's id and
`coalesced: true`: paths are united (a whole-shelf request absorbs any paths) and `force`
is or-ed. A *running* job is never interrupted or changed; a request that arrives while
it runs queues a new job that starts after it.
"""

ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "Missing or wrong bearer token."},
    503: {"model": ErrorBody, "description": "No admin token is configured: the API is off."},
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorBody, "description": "No such item."}
}

JobId = Annotated[int, Path(ge=1, le=MAX_ID, description="A job id from POST /admin/reindex.")]
DocumentId = Annotated[
    int, Path(ge=1, le=MAX_ID, description="A document id from GET /admin/documents.")
]


NOTIFY_RECORD = f"One S3 event record; docshelf reads s3.bucket.name and s3.object.key: {SHAPE}"

INVALID_CURSOR = "invalid cursor: pass the next_cursor of the previous page unchanged"


def _not_found(what: str) -> HTTPException:
    return HTTPException(404, what)


async def _runtime(request: Request) -> Runtime:
    """The runtime the application serves (set by :func:`app.admin.mount`)."""
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(_runtime)]


async def _jobs(runtime: RuntimeDep) -> JobRunner:
    return runtime.jobs


def _document(document_id: DocumentId, runtime: RuntimeDep) -> Document:
    """The document the path names, with its representations; 404 if there is none."""
    document = inventory.document(runtime.database, document_id)
    if document is None:
        raise _not_found(f"no document {document_id}")
    return document


JobsDep = Annotated[JobRunner, Depends(_jobs)]
DocumentDep = Annotated[Document, Depends(_document)]

router = APIRouter(
    prefix="/admin",
    tags=["admin"],
    route_class=AdminRoute,  # every route needs the bearer token
    dependencies=[Security(BEARER_SCHEME)],
    responses=ERRORS,
)


@router.post(
    "/reindex",
    status_code=202,
    response_model=ReindexAccepted,
    responses={
        **NOT_FOUND,
        400: {"model": ErrorBody, "description": "The body is not readable as JSON text."},
    },
    summary="Queue a reindex job",
    description=REINDEX_DESCRIPTION,
)
def reindex(
    response: Response,
    jobs: JobsDep,
    body: Annotated[ReindexRequest | None, Body()] = None,
) -> ReindexAccepted:
    request = body or ReindexRequest()
    paths = tuple(request.paths) if request.paths is not None else None
    try:
        submission = jobs.submit(JobRequest(request.shelf, paths, request.force), trigger="api")
    except UnknownShelf as exc:
        raise _not_found(str(exc)) from exc
    href = f"/admin/jobs/{submission.job_id}"
    response.headers["Location"] = href
    return ReindexAccepted(job_id=submission.job_id, coalesced=submission.coalesced, href=href)


@router.get("/jobs", response_model=JobList, summary="Recent reindex jobs, newest first")
def list_jobs(
    jobs: JobsDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    state: JobStateName | None = None,
) -> JobList:
    recent = jobs.history.recent(limit, state)
    return JobList(jobs=[JobSummary.model_validate(job) for job in recent])


@router.get(
    "/jobs/{job_id}",
    response_model=Job,
    responses=NOT_FOUND,
    summary="One job: state, counts, progress, times and per-file errors",
)
def get_job(job_id: JobId, jobs: JobsDep) -> Job:
    job = jobs.history.get(job_id)
    if job is None:
        raise _not_found(f"no job {job_id}")
    return Job.model_validate(job)


@router.get("/status", response_model=Status, summary="Shelves, counts, store, lag, sessions")
def status(runtime: RuntimeDep) -> Status:
    return build_status(runtime)


@router.get(
    "/documents",
    response_model=DocumentPage,
    responses=NOT_FOUND,
    summary="Indexed documents, filtered, in pages",
)
def list_documents(
    runtime: RuntimeDep,
    shelf: Annotated[str | None, Query(max_length=64)] = None,
    mime_type: Annotated[str | None, Query(max_length=255)] = None,
    state: DocumentStateName | None = None,
    path_prefix: Annotated[
        str | None, Query(max_length=4096, description="Only paths that start with this.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    cursor: Annotated[
        str | None, Query(max_length=200, description="`next_cursor` of the previous page.")
    ] = None,
) -> DocumentPage:
    if shelf is not None:
        try:
            UnknownShelf.check(shelf, runtime.jobs.shelf_names)
        except UnknownShelf as exc:
            raise _not_found(str(exc)) from exc
    try:
        after = decode_cursor(cursor) if cursor is not None else 0
    except InvalidCursor:
        raise RequestValidationError(
            [
                {
                    "type": "value_error",
                    "loc": ("query", "cursor"),
                    "msg": INVALID_CURSOR,
                    "input": cursor,
                }
            ]
        ) from None
    where = DocumentFilter(shelf, mime_type, state, path_prefix)
    rows, more = inventory.documents_after(runtime.database, where, after, limit)
    documents = [DocumentSummary.model_validate(row) for row in rows]
    next_cursor = encode_cursor(documents[-1].id) if more else None
    return DocumentPage(documents=documents, next_cursor=next_cursor)


@router.get(
    "/documents/{document_id}",
    response_model=DocumentDetail,
    responses=NOT_FOUND,
    summary="One document: metadata, every representation, the last error",
)
def get_document(document: DocumentDep) -> DocumentDetail:
    return DocumentDetail.model_validate(document)


@router.delete(
    "/documents/{document_id}/representations",
    status_code=202,
    response_model=RepresentationsDropped,
    responses=NOT_FOUND,
    summary="Drop a document's stored representations and queue their rebuild",
    description="The stored derived formats are deleted at once (clients see only the "
    "original until the rebuild); a reindex job for the document's path rebuilds them, "
    "coalesced like any other (see POST /admin/reindex).",
)
def drop_representations(document: DocumentDep, runtime: RuntimeDep) -> RepresentationsDropped:
    if not runtime.builder.forget(document.id):
        raise _not_found(f"no document {document.id}")
    job_id: int | None = None
    # A document indexed under a shelf this server no longer serves cannot be rebuilt.
    with contextlib.suppress(UnknownShelf):
        job_id = runtime.jobs.submit(
            JobRequest(document.shelf, (document.path,)), trigger="api"
        ).job_id
    return RepresentationsDropped(
        document_id=document.id, dropped=len(document.representations), job_id=job_id
    )


@router.post(
    "/shelves/{name}/notify",
    response_model=NotifyAccepted,
    responses={
        **NOT_FOUND,
        400: {"model": ErrorBody, "description": "The body is not an S3 event notification."},
        409: {"model": ErrorBody, "description": "The shelf is a folder, not a bucket."},
    },
    summary="A bucket notification: refresh the keys it names at once",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "required": ["Records"],
                        "properties": {
                            "Records": {
                                "type": "array",
                                "items": {"type": "object", "description": NOTIFY_RECORD},
                            }
                        },
                    }
                }
            },
        }
    },
    description="The body is the S3 event-notification JSON (`Records[].s3.object.key`, "
    "URL-encoded), as a MinIO webhook sends it and AWS S3's events carry it. The keys "
    "under the shelf's prefix are catalogued again now (added, changed or removed) and "
    "subscribers are told; "
    "records of other buckets or prefixes are ignored.",
)
async def notify(
    name: Annotated[str, Path(description="A bucket shelf's name.")],
    request: Request,
    runtime: RuntimeDep,
) -> NotifyAccepted:
    shelf = runtime.indexer.shelves.get(name)
    if shelf is None:
        raise _not_found(f"no shelf {name!r}")
    if not isinstance(shelf, BucketShelf):
        raise HTTPException(
            409, f"shelf {name!r} is a folder: its changes are watched, not notified"
        )
    try:
        keys = notified_keys(await request.body())
    except BadNotification as exc:
        raise HTTPException(400, f"not an S3 event notification: {exc}") from None
    paths = shelf_paths(shelf.bucket, keys)
    report = await run_in_threadpool(runtime.indexer.refresh, name, paths)
    return NotifyAccepted(
        shelf=name,
        keys=len(paths),
        added=report.added,
        changed=report.changed,
        removed=report.removed,
    )
