"""Request and response bodies of the admin API; they are its OpenAPI description too."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetPydanticSchema,
    StringConstraints,
    field_validator,
    model_validator,
)
from pydantic_core import core_schema

from docshelf.converters import FailureReason
from docshelf.storage.jobs import normalize_path
from docshelf.storage.models import DocumentState, JobState

#: The reasons a file's error may give, as the API's descriptions list them.
REASONS = ", ".join(FailureReason)


def _spelled_out(states: type[StrEnum]) -> Any:
    """A field validated to ``states`` and described in OpenAPI as the list of their values,
    in place, as the admin API has always shown them.

    The annotation is ``str`` outside type checking: FastAPI adds every enum class it finds
    in an annotation to the document's shared schemas, which the states never were.
    """
    values = core_schema.literal_schema([state.value for state in states])
    schema = GetPydanticSchema(
        lambda _type, _handler: core_schema.no_info_after_validator_function(states, values)
    )
    return Annotated[str, schema]


if TYPE_CHECKING:
    JobStateName = JobState
    DocumentStateName = DocumentState
else:
    JobStateName = _spelled_out(JobState)
    DocumentStateName = _spelled_out(DocumentState)

MAX_PATHS = 1000
RelativePath = Annotated[str, StringConstraints(min_length=1, max_length=4096)]


class ErrorBody(BaseModel):
    detail: str = Field(description="What went wrong, and what to do about it.")


# -- jobs ---------------------------------------------------------------------------------


class ReindexRequest(BaseModel):
    """What to reindex. An empty body (or ``{}``) reindexes every shelf."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            "examples": [{"shelf": "docs", "paths": ["guides/intro.md"], "force": False}]
        },
    )

    shelf: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = Field(
        default=None, description="A configured shelf name; leave it out for every shelf."
    )
    paths: list[RelativePath] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_PATHS,
        description="Shelf-relative POSIX paths of files or folders (no leading '/', no '..'); "
        "leave it out for the whole shelf. Needs `shelf`.",
    )
    force: bool = Field(
        default=False, description="Re-convert files even if they have not changed."
    )

    @field_validator("paths")
    @classmethod
    def _relative(cls, paths: list[str] | None) -> list[str] | None:
        return None if paths is None else [normalize_path(p) for p in paths]

    @model_validator(mode="after")
    def _paths_need_a_shelf(self) -> ReindexRequest:
        if self.paths is not None and self.shelf is None:
            raise ValueError("paths are relative to a shelf: name the shelf as well")
        return self


class ReindexAccepted(BaseModel):
    job_id: int
    coalesced: bool = Field(
        description="True if the request was merged into a job that was already queued."
    )
    href: str = Field(description="Where to follow the job: GET this URL.")


class JobCounts(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    seen: int = Field(description="Files found on disk in the job's scope.")
    added: int
    changed: int
    removed: int
    unchanged: int
    failed: int = Field(
        description="Files whose derived formats are missing: failed now, or still failed "
        "from an earlier pass (see GET /admin/documents?state=failed)."
    )
    unsupported: int = Field(
        description="Files nothing reads (no converter for their type): listed and served as "
        "their originals (see GET /admin/documents?state=unsupported)."
    )


class JobProgress(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    done: int = Field(description="Files handled so far; never decreases.")
    total: int = Field(
        description="Files known to the job so far; over several shelves it grows as each "
        "shelf is walked."
    )


class FileErrorOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    path: str
    reason: str = Field(description=f"Why, one of: {REASONS}.")
    message: str


class JobSummary(BaseModel):
    # Read by attribute from a storage.jobs.JobRecord (no docstring: it would be OpenAPI's).
    model_config = ConfigDict(from_attributes=True)

    id: int
    state: JobStateName
    shelf: str | None = Field(description="None: every shelf.")
    paths: list[str] | None = Field(description="None: the whole shelf.")
    force: bool
    trigger: str = Field(description="Who asked: api (REST) or cli (docshelf reindex).")
    requests: int = Field(description="How many requests were coalesced into this job.")
    counts: JobCounts
    progress: JobProgress
    requested_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    message: str | None = Field(description="Why the job failed or was interrupted.")
    error_count: int = Field(description="Files that failed to convert during this job.")


class Job(JobSummary):
    errors: list[FileErrorOut] = Field(description="Files that failed to convert during this job.")


class JobList(BaseModel):
    jobs: list[JobSummary] = Field(description="Newest first.")


# -- status -------------------------------------------------------------------------------


class ShelfStatus(BaseModel):
    name: str
    root: str
    documents: int


class DocumentCounts(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    total: int
    by_mime_type: dict[str, int]
    by_state: dict[str, int]


class StoreStatus(BaseModel):
    path: str
    representations: int = Field(description="Distinct stored representations.")
    bytes: int = Field(description="Their total size.")


class JobsStatus(BaseModel):
    queued: int
    running: int


class Status(BaseModel):
    version: str
    uptime_seconds: float
    ready: bool = Field(description="Whether the catalog is current (as /readyz).")
    shelves: list[ShelfStatus]
    documents: DocumentCounts
    representation_store: StoreStatus
    index_lag_seconds: float = Field(
        description="Seconds since the oldest unfinished indexing work of this process was "
        "requested (a queued or running reindex job, or the start-up pass); 0 when idle."
    )
    conversion_backlog: int = Field(
        description="Catalogued documents whose formats are still to be built."
    )
    ocr_backlog: int = Field(
        description="Documents with pages that carry only pictures of text, waiting for "
        "their OCR pass (queued after every cheaper conversion)."
    )
    jobs: JobsStatus
    sessions: int = Field(description="Handshake-era MCP sessions open over HTTP.")


# -- documents ----------------------------------------------------------------------------


class RepresentationOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    mime_type: str
    size: int
    sha256: str
    store_key: str
    converter: str
    converter_version: str


class LastError(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    reason: str
    message: str | None


class DocumentSummary(BaseModel):
    # Read by attribute from a storage.models.Document row (no docstring: OpenAPI's).
    model_config = ConfigDict(from_attributes=True)

    id: int
    shelf: str
    path: str
    uri: str
    title: str
    mime_type: str
    size: int
    state: DocumentStateName
    modified_at: datetime
    indexed_at: datetime
    representations: int = Field(description="Stored derived representations.")
    error_reason: str | None

    @field_validator("representations", mode="before")
    @classmethod
    def _counted(cls, representations: object) -> object:
        """A row's ``representations`` are the rows themselves: the summary counts them."""
        return len(representations) if isinstance(representations, list) else representations


class DocumentPage(BaseModel):
    documents: list[DocumentSummary]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; None at the end."
    )


class DocumentDetail(BaseModel):
    # Read by attribute from a storage.models.Document row (no docstring: OpenAPI's).
    model_config = ConfigDict(from_attributes=True)

    id: int
    shelf: str
    path: str
    uri: str
    name: str
    title: str
    description: str | None
    mime_type: str
    size: int
    sha256: str | None = Field(description="None until the file is first read for conversion.")
    mtime_ns: int
    page_count: int | None
    language: str | None
    facts: dict[str, Any] = Field(description="What conversion learned: metadata, outline.")
    converter: str | None = Field(description="'name:version' of the converter that made them.")
    state: DocumentStateName
    modified_at: datetime
    indexed_at: datetime
    representations: list[RepresentationOut]
    last_error: LastError | None

    @field_validator("facts", mode="before")
    @classmethod
    def _no_facts_yet(cls, facts: object) -> object:
        """A row whose ``facts`` JSON is null shows none: ``{}``, as it always has."""
        return facts or {}


class RepresentationsDropped(BaseModel):
    document_id: int
    dropped: int = Field(description="How many stored representations were removed.")
    job_id: int | None = Field(
        description="The reindex job that rebuilds them; None if the document's shelf is no "
        "longer served."
    )


# -- bucket notifications -----------------------------------------------------------------


class NotifyAccepted(BaseModel):
    shelf: str
    keys: int = Field(description="Keys the notification named under this shelf's prefix.")
    added: int
    changed: int
    removed: int
