"""The index: one row per document on a shelf, one per stored representation."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import TypeVar

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that always comes back timezone-aware in UTC.

    PostgreSQL keeps the zone; SQLite keeps none, so a value read back from it is
    naive. We only ever store UTC, so naive values are UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


class Base(DeclarativeBase):
    pass


class DocumentState(StrEnum):
    """Values of :attr:`Document.state`."""

    PENDING = "pending"  # catalogued; its formats are queued for (re)building
    READY = "ready"  # the background formats are stored (a lazy PDF is made when asked for)
    FAILED = "failed"  # listed and readable as its original; the derived variants are missing
    # Nothing docshelf has reads this file (no converter for its type, or its converter found
    # it unreadable in principle): the original is all there is; error_message says why.
    UNSUPPORTED = "unsupported"


class OcrState(StrEnum):
    """Values of :attr:`Document.ocr`: whether a document's pages that carry no text were
    read by OCR (issue 26). NULL: no page needs it. OCR is a second conversion pass,
    queued after the cheap one of every document (DESIGN D34)."""

    PENDING = "pending"  # queued: the formats stored are the cheap pass's, without OCR text
    DONE = "done"  # the formats stored are the OCR pass's
    FAILED = "failed"  # the OCR pass failed; the cheap formats stand (facts["ocr_error"] says why)
    OFF = "off"  # OCR is turned off (DOCSHELF_OCR=0)
    UNAVAILABLE = "unavailable"  # no OCR engine is installed (facts["ocr_error"] says what to do)


class JobState(StrEnum):
    """Values of :attr:`Job.state`: queued → running → succeeded | failed | interrupted."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"  # the pass ran to its end; single files may still have failed
    FAILED = "failed"  # the pass itself raised; ``message`` says why
    INTERRUPTED = "interrupted"  # the process stopped before the job finished

    @property
    def finished(self) -> bool:
        return self not in UNFINISHED_JOB_STATES


UNFINISHED_JOB_STATES = (JobState.QUEUED, JobState.RUNNING)
"""A job in one of these still has a process that owes it a pass."""

S = TypeVar("S", bound=StrEnum)


class StateColumn(TypeDecorator[S]):
    """A state stored as its plain string (no database enum type: no migration when a state
    is added) and read back as the enum, so code past the query compares members."""

    impl = String(16)
    cache_ok = True

    def __init__(self, states: type[S]) -> None:
        super().__init__()
        self.states = states

    def process_result_value(self, value: str | None, dialect: Dialect) -> S | None:
        return None if value is None else self.states(value)


FOLDER_INDEX = "ix_documents_shelf_path_bytes"


class Document(Base):
    __tablename__ = "documents"
    __table_args__ = (
        UniqueConstraint("shelf", "path", name="uq_documents_shelf_path"),
        Index("ix_documents_shelf_mime", "shelf", "mime_type"),
        Index("ix_documents_state_size", "state", "size"),
        Index("ix_documents_ocr", "ocr"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    shelf: Mapped[str] = mapped_column(String(64))
    path: Mapped[str] = mapped_column(String(4096))
    uri: Mapped[str] = mapped_column(String(8192), unique=True)
    name: Mapped[str] = mapped_column(String(1024))
    mime_type: Mapped[str] = mapped_column(String(255))
    detection: Mapped[int | None]  # the detection rule mime_type was decided by
    size: Mapped[int] = mapped_column(BigInteger)
    mtime_ns: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str | None] = mapped_column(String(64))  # None until first read
    title: Mapped[str] = mapped_column(Text)
    description: Mapped[str | None] = mapped_column(Text)
    page_count: Mapped[int | None]
    language: Mapped[str | None] = mapped_column(String(35))
    facts: Mapped[dict[str, object]] = mapped_column(JSON, default=dict)
    converter: Mapped[str | None] = mapped_column(String(64))  # ConverterId.to_column()
    state: Mapped[DocumentState] = mapped_column(
        StateColumn(DocumentState), default=DocumentState.READY
    )
    error_reason: Mapped[str | None] = mapped_column(String(32))
    error_message: Mapped[str | None] = mapped_column(Text)
    # Formats of a ready document that could not be made from its current content, by MIME
    # type: {"reason": …, "message": …} (FormatFailure). The document's other formats stand.
    format_errors: Mapped[dict[str, dict[str, str]]] = mapped_column(JSON, default=dict)
    ocr: Mapped[OcrState | None] = mapped_column(StateColumn(OcrState), default=None)
    # An object in a bucket: its ETag, which changes when the object does (None for a file).
    change_key: Mapped[str | None] = mapped_column(String(256), default=None)
    # Who converts this pending document, and until when (a lease another host may take
    # once it has run out: the holder died).
    lease_holder: Mapped[str | None] = mapped_column(String(128), default=None)
    lease_expires: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    modified_at: Mapped[datetime] = mapped_column(UTCDateTime())
    indexed_at: Mapped[datetime] = mapped_column(UTCDateTime())

    representations: Mapped[list[Representation]] = relationship(
        back_populates="document", cascade="all, delete-orphan", order_by="Representation.id"
    )

    @property
    def last_error(self) -> LastError | None:
        """Why the last conversion failed, or None if it did not."""
        return LastError(self.error_reason, self.error_message) if self.error_reason else None


# A folder's paths as one range, on PostgreSQL whatever the database's collation
# (storage.folders, migration 0014; SQLite's default collation already compares bytes).
Index(FOLDER_INDEX, Document.shelf, Document.path.collate("C")).ddl_if(dialect="postgresql")
# The orders of a listing (storage.listing, migration 0016): newest and largest first, ties
# by id, read backwards; a page after the first seeks straight to where it starts.
Index("ix_documents_mtime", Document.mtime_ns, Document.id)
Index("ix_documents_size", Document.size, Document.id)
# What a search could not read (storage.completeness, migration 0015), counted within its
# filters from the index alone: every search answer carries the count.
Index(
    "ix_documents_state_shelf_path",
    Document.state,
    Document.shelf,
    Document.path,
    Document.mime_type,
)


@dataclass(frozen=True, slots=True)
class LastError:
    reason: str
    message: str | None


@dataclass(frozen=True, slots=True)
class ConverterId:
    """Which converter made a document's formats, and which version of it: a rebuild is due
    when either changes. The version of what an OCR pass made carries the engine's identity
    (``5+ocr-rapidocr-en``: ``storage.conversion.ocr_version``).

    Stored as one string, ``"name:version"``, in :attr:`Document.converter`; only
    :meth:`of_column` and :meth:`to_column` spell it."""

    name: str
    version: str

    @staticmethod
    def of_column(value: str | None) -> ConverterId | None:
        """The id :attr:`Document.converter` holds; None for none (no converter ran)."""
        if not value:
            return None
        name, _, version = value.partition(":")
        return ConverterId(name, version)

    def to_column(self) -> str:
        return f"{self.name}:{self.version}"

    def without_ocr(self) -> ConverterId:
        """The converter's own id, less an OCR pass's suffix."""
        return replace(self, version=self.version.partition("+")[0])


@dataclass(frozen=True, slots=True)
class FormatFailure:
    """One format that could not be made (a rendered PDF that timed out, say): it fails
    alone, and the document keeps every other format (issue "Nothing lost on a first read")."""

    mime_type: str
    reason: str
    message: str

    @staticmethod
    def of_column(value: object) -> tuple[FormatFailure, ...]:
        """The failures stored in :attr:`Document.format_errors` (malformed entries skipped)."""
        if not isinstance(value, dict):
            return ()
        return tuple(
            FormatFailure(mime, str(entry.get("reason", "")), str(entry.get("message", "")))
            for mime, entry in value.items()
            if isinstance(entry, dict)
        )

    @staticmethod
    def to_column(failures: Iterable[FormatFailure]) -> dict[str, dict[str, str]]:
        return {f.mime_type: {"reason": f.reason, "message": f.message} for f in failures}


class Representation(Base):
    """A derived variant of a document, stored content-addressed in the representation store."""

    __tablename__ = "representations"
    __table_args__ = (
        UniqueConstraint("document_id", "mime_type", name="uq_representations_doc_mime"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    document_id: Mapped[int] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE"), index=True
    )
    mime_type: Mapped[str] = mapped_column(String(255))
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    store_key: Mapped[str] = mapped_column(String(512), index=True)
    converter: Mapped[str] = mapped_column(String(64))
    converter_version: Mapped[str] = mapped_column(String(64))  # "5", "5+ocr-rapidocr-en"

    document: Mapped[Document] = relationship(back_populates="representations")


class SearchPart(Base):
    """What full-text search looks through (``storage.search``, migration 0007): a document's
    name row (``kind`` 0, written by the indexer, kept current by a trigger) and a row per
    page or section (``kind`` 1). The engines' own index (an FTS5 table, a tsvector
    column) is declared by the migration."""

    __tablename__ = "search_parts"

    id: Mapped[int] = mapped_column(primary_key=True)
    document_id: Mapped[int] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[int] = mapped_column(SmallInteger)
    part: Mapped[str] = mapped_column(String(300))  # "pages=3", "section=setup" or ""
    title: Mapped[str | None] = mapped_column(Text)
    body: Mapped[str] = mapped_column(Text)


class Job(Base):
    """A reindex request and what became of it (``storage.jobs``); rows stay as history."""

    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_state", "state"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    shelf: Mapped[str | None] = mapped_column(String(64))  # None: every shelf
    paths: Mapped[list[str] | None] = mapped_column(JSON)  # None: the whole shelf
    force: Mapped[bool] = mapped_column(default=False)
    trigger: Mapped[str] = mapped_column(String(16))  # "api" | "cli"
    owner: Mapped[str] = mapped_column(String(300))  # "host:pid" of the process that runs it
    requests: Mapped[int] = mapped_column(default=1)  # how many requests were coalesced into it
    state: Mapped[JobState] = mapped_column(StateColumn(JobState))
    requested_at: Mapped[datetime] = mapped_column(UTCDateTime())
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    seen: Mapped[int] = mapped_column(default=0)
    added: Mapped[int] = mapped_column(default=0)
    changed: Mapped[int] = mapped_column(default=0)
    removed: Mapped[int] = mapped_column(default=0)
    unchanged: Mapped[int] = mapped_column(default=0)
    failed: Mapped[int] = mapped_column(default=0)
    unsupported: Mapped[int] = mapped_column(default=0)
    progress_done: Mapped[int] = mapped_column(default=0)
    progress_total: Mapped[int] = mapped_column(default=0)
    errors: Mapped[list[dict[str, str]]] = mapped_column(
        JSON, default=list
    )  # path, reason, message
    message: Mapped[str | None] = mapped_column(Text)  # why the job failed or was interrupted


class ChangeRecord(Base):
    """One published change set, for the other processes sharing the database
    (``storage.changefeed``); kept for minutes, then pruned."""

    __tablename__ = "change_log"
    __table_args__ = (
        Index("ix_change_log_created_at", "created_at"),
        {"sqlite_autoincrement": True},  # ids are never reused: followers remember the last
    )

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True
    )
    origin: Mapped[str] = mapped_column(String(64))  # the publishing process's token
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    added: Mapped[list[str]] = mapped_column(JSON)
    removed: Mapped[list[str]] = mapped_column(JSON)
    changed: Mapped[list[str]] = mapped_column(JSON)
    # Documents whose index rows changed but not their content (a format built): caches
    # follow, subscribers are not told (storage.events.ChangeSet.refreshed).
    refreshed: Mapped[list[str]] = mapped_column(JSON, default=list)


class SessionRecord(Base):
    """A 2025-era HTTP session, shared by every process serving the database
    (``app.mcp.sessions``). Keyed by the SHA-256 of its id: whoever reads the table
    cannot take the session over."""

    __tablename__ = "sessions"
    __table_args__ = (Index("ix_sessions_last_used_at", "last_used_at"),)

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    protocol_version: Mapped[str] = mapped_column(String(32))
    capabilities: Mapped[bytes] = mapped_column(LargeBinary)  # compact JSON, at most 64 KiB
    client_info: Mapped[bytes] = mapped_column(LargeBinary)  # compact JSON, at most 64 KiB
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_used_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # The process holding the session's GET stream ("host:pid"), and when it last said so.
    stream_owner: Mapped[str | None] = mapped_column(String(300))
    stream_beat: Mapped[datetime | None] = mapped_column(UTCDateTime())


class SessionSubscription(Base):
    """One ``resources/subscribe`` of a session; gone with the session."""

    __tablename__ = "session_subscriptions"

    session_key: Mapped[str] = mapped_column(
        ForeignKey("sessions.key", ondelete="CASCADE"), primary_key=True
    )
    uri: Mapped[str] = mapped_column(String(8192), primary_key=True)
    # The document a part's subscriber follows (``uri`` up to its "?"): a change to the
    # document reaches the subscribers of its parts too.
    document_uri: Mapped[str] = mapped_column(String(8192), index=True)
