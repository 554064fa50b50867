"""Writing a conversion's outcome onto its document (DESIGN D11, D34).

The builder (:mod:`storage.builder`) decides what to convert and when; this module
decides what an outcome means for the index: new content replaces facts, formats
and search rows; formats added to the same content join it; a format that fails
fails alone; an OCR pass that fails leaves the first pass's formats standing. All
of it inside the recording transaction, on ORM rows: nothing here touches the store
or the event bus.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cached_property

from sqlalchemy import and_, or_, update
from sqlalchemy.orm import Session

from docshelf.converters import Facts, FailureReason, offered_formats
from docshelf.converters.formats import CHEAP_FORMATS
from docshelf.converters.ocr import (
    ocr_enabled,
    ocr_identity,
    ocr_page_timeout,
    ocr_unavailable,
)
from docshelf.converters.ocr.reading import CONFIDENCE_KEY
from docshelf.converters.registry import unsupported_reason
from docshelf.storage import search
from docshelf.storage.conversion import ConversionOutcome, ConversionTask
from docshelf.storage.models import (
    ConverterId,
    Document,
    DocumentState,
    FormatFailure,
    OcrState,
    Representation,
)

_KIND_LABELS = {
    "application/pdf": "PDF document",
    "text/markdown": "Markdown document",
    "text/plain": "Plain text",
    "application/json": "JSON document",
    "text/html": "HTML page",
    "text/csv": "CSV table",
}


def fallback_description(mime_type: str, page_count: int | None) -> str:
    """A description for a document that declares none: its kind, and its pages."""
    label = _KIND_LABELS.get(mime_type, f"{mime_type} file")
    if page_count:
        return f"{label}, {page_count} page{'s' if page_count != 1 else ''}"
    return label


@dataclass(frozen=True, slots=True)
class _OcrSettings:
    state: OcrState  # PENDING (on and installed), OFF or UNAVAILABLE
    note: str | None  # why not, for OFF and UNAVAILABLE
    identity: str  # of the engine, in an OCR pass's converter version ("" when none runs)
    page_timeout_s: float


class OcrPolicy:
    """What becomes of a document with pages only OCR can read, from this process's
    settings (DOCSHELF_OCR*, read by :mod:`converters.ocr`).

    Read the first time something asks, not when the builder is made: asking Tesseract
    its version and languages takes about half a second, which every process would spend
    at start (replicas, CLI commands) though most never meet a scan."""

    @cached_property
    def _settings(self) -> _OcrSettings:
        if not ocr_enabled():
            return _OcrSettings(OcrState.OFF, "OCR is turned off (DOCSHELF_OCR=0)", "", 0.0)
        if (reason := ocr_unavailable()) is not None:
            return _OcrSettings(OcrState.UNAVAILABLE, reason, "", 0.0)
        return _OcrSettings(OcrState.PENDING, None, ocr_identity(), ocr_page_timeout())

    @property
    def state(self) -> OcrState:
        return self._settings.state

    @property
    def note(self) -> str | None:
        return self._settings.note

    @property
    def identity(self) -> str:
        return self._settings.identity

    @property
    def page_timeout_s(self) -> float:
        return self._settings.page_timeout_s


@dataclass
class Recorded:
    """What a recording wrote: every document's URI by id, and the URIs that are news to
    their readers (new content, a document that failed or recovered)."""

    uris: dict[int, str] = field(default_factory=dict)
    news: set[str] = field(default_factory=set)

    def __or__(self, other: Recorded) -> Recorded:
        return Recorded({**self.uris, **other.uris}, self.news | other.news)


def announced(doc: Document) -> tuple[object, ...]:
    """What a reader of ``doc`` was told when it last changed: its content, the converter
    its formats come from, and whether (and why) it failed. A change here is news; formats
    added to the same content are not."""
    return doc.sha256, doc.converter, doc.error_reason


def failures_of(outcome: ConversionOutcome) -> Iterator[tuple[str, str, str]]:
    """(reason, message, " format" or "") of each failure in ``outcome``, for the log."""
    if outcome.error_reason:
        yield outcome.error_reason, outcome.error_message or "", ""
    for failure in outcome.format_failures:
        yield failure.reason, failure.message, f" ({failure.mime_type})"


def apply_outcome(
    doc: Document, task: ConversionTask, outcome: ConversionOutcome, ocr: OcrPolicy
) -> list[str]:
    """Write one outcome onto its document; returns the store keys it no longer uses."""
    doc.indexed_at = datetime.now(UTC)
    if task.ocr and doc.ocr != OcrState.DONE and (failure := _ocr_failure(outcome)):
        # The OCR pass failed: the first pass's formats, facts and search rows stand.
        doc.ocr = OcrState.FAILED
        doc.facts = {**(doc.facts or {}), "ocr": {**ocr_facts(doc), "note": failure}}
        return [v.store_key for v in outcome.variants]
    if outcome.missing:
        dropped = [r.store_key for r in doc.representations]
        doc.state = DocumentState.FAILED
        doc.error_reason = FailureReason.UNREADABLE
        doc.error_message = outcome.error_message or "the file is gone"
        doc.representations = []
        doc.format_errors = {}
        return dropped
    if _same_content(doc, outcome):
        return _add_formats(doc, task, outcome)
    dropped = [r.store_key for r in doc.representations]
    if outcome.sha256 is not None:
        doc.size, doc.mtime_ns, doc.sha256 = outcome.size, outcome.mtime_ns, outcome.sha256
        doc.change_key = outcome.change_key  # the version read, as its size and mtime are
        doc.modified_at = datetime.fromtimestamp(outcome.mtime_ns / 1e9, UTC)
    if outcome.mime_type is not None:
        doc.mime_type = outcome.mime_type
    doc.converter = None if outcome.converter is None else outcome.converter.to_column()
    doc.format_errors = {}
    if outcome.converter is None and not outcome.error_reason:  # nothing reads what it is
        outcome = replace(
            outcome,
            error_reason=FailureReason.UNSUPPORTED,
            error_message=unsupported_reason(doc.mime_type, doc.name),
        )
    if outcome.error_reason:
        doc.error_reason, doc.error_message = outcome.error_reason, outcome.error_message
        unreadable = outcome.error_reason == FailureReason.UNSUPPORTED
        doc.state = DocumentState.UNSUPPORTED if unreadable else DocumentState.FAILED
        doc.representations = []
        return dropped
    doc.error_reason = doc.error_message = None
    doc.state = DocumentState.READY
    if outcome.facts is not None:  # new content: new facts, and only the new formats stay
        earlier = ocr_facts(doc)
        _apply_facts(doc, outcome.facts)
        _apply_ocr(doc, outcome.facts, ocr, earlier if task.ocr else None)
        made = {v.mime_type for v in outcome.variants}
        doc.representations = [r for r in doc.representations if r.mime_type in made]
    kept = _store_variants(doc, outcome)
    doc.format_errors = FormatFailure.to_column(outcome.format_failures)
    return [key for key in dropped if key not in kept]


def _same_content(doc: Document, outcome: ConversionOutcome) -> bool:
    """Whether ``outcome`` only adds formats (or fails to) to a ready document's current
    content: the same bytes and converter, or a task cut short before it could tell."""
    return (
        doc.state == DocumentState.READY
        and outcome.sha256 in (None, doc.sha256)
        and outcome.converter in (None, ConverterId.of_column(doc.converter))
    )


def _add_formats(doc: Document, task: ConversionTask, outcome: ConversionOutcome) -> list[str]:
    """Record the formats made for a ready document's current content, and those that
    failed — alone: its other formats, facts, search rows and state stand."""
    failures = list(outcome.format_failures)
    if outcome.error_reason:  # cut short before any format: each one asked for failed
        made_or_failed = {v.mime_type for v in outcome.variants} | {f.mime_type for f in failures}
        asked = task.formats or offered_formats(doc.mime_type, doc.name)
        failures.extend(
            FormatFailure(mime, outcome.error_reason, outcome.error_message or "")
            for mime in asked
            if mime not in task.stored and mime not in made_or_failed
        )
    before = {r.store_key for r in doc.representations}
    kept = _store_variants(doc, outcome)
    errors = {
        mime: entry
        for mime, entry in (doc.format_errors or {}).items()
        if mime not in {v.mime_type for v in outcome.variants}
    }
    doc.format_errors = errors | FormatFailure.to_column(failures)
    return sorted(before - kept)


def _store_variants(doc: Document, outcome: ConversionOutcome) -> set[str]:
    """Point the document's rows at the variants made; returns the store keys it uses."""
    made_by = outcome.converter or ConverterId.of_column(doc.converter) or ConverterId("", "")
    rows = {r.mime_type: r for r in doc.representations}
    for variant in outcome.variants:
        row = rows.get(variant.mime_type)
        if row is None:  # a format made for the first time
            row = Representation(mime_type=variant.mime_type)
            doc.representations.append(row)
        # Rows are updated in place: no delete-then-insert of the same (document, type).
        row.size, row.sha256, row.store_key = variant.size, variant.sha256, variant.store_key
        row.converter, row.converter_version = made_by.name, made_by.version
    return {r.store_key for r in doc.representations}


def update_search(session: Session, doc: Document, outcome: ConversionOutcome) -> None:
    """Keep the document's searchable text in step with its formats (issue #10): new text
    replaces the old; a document left with no derived formats has none to search."""
    if doc.state in (DocumentState.FAILED, DocumentState.UNSUPPORTED):
        search.clear_content(session, doc.id)
    elif outcome.segments is not None:
        search.replace_content(session, doc.id, outcome.segments)


def _ocr_failure(outcome: ConversionOutcome) -> str | None:
    """Why an OCR pass failed, if it did: the whole task, or one of the text formats (a pass
    is kept whole or not at all, so a document never mixes OCR and first-pass formats)."""
    if outcome.missing:
        return None  # the file is gone: recorded as for any pass
    if outcome.error_reason:
        return f"{outcome.error_reason}: {outcome.error_message or ''}".rstrip(": ")
    for failure in outcome.format_failures:
        if failure.mime_type in CHEAP_FORMATS:
            return f"{failure.reason}: {failure.message} ({failure.mime_type})"
    return None


def ocr_facts(doc: Document) -> dict[str, object]:
    found = (doc.facts or {}).get("ocr")
    return dict(found) if isinstance(found, dict) else {}


def _apply_ocr(doc: Document, facts: Facts, ocr: OcrPolicy, read: dict[str, object] | None) -> None:
    """Record whether the document has pages only OCR reads, and what became of them
    (``read``: what the first pass said of them, when this was the OCR pass)."""
    if read is not None:
        doc.ocr = OcrState.DONE
        done: dict[str, object] = {"pages": read.get("pages", [])}
        with contextlib.suppress(KeyError, ValueError):
            done["meanConfidence"] = float(facts.metadata[CONFIDENCE_KEY])
        doc.facts = {**doc.facts, "ocr": done}
    elif facts.ocr_pages:
        doc.ocr = ocr.state
        noted = {"pages": list(facts.ocr_pages)} | ({"note": ocr.note} if ocr.note else {})
        doc.facts = {**doc.facts, "ocr": noted}
    else:
        doc.ocr = None


def _apply_facts(doc: Document, facts: Facts) -> None:
    doc.title = (facts.title or "").strip() or doc.name
    doc.page_count = facts.page_count
    doc.description = (facts.description or "").strip() or fallback_description(
        doc.mime_type, facts.page_count
    )
    doc.language = facts.language
    doc.facts = {
        "metadata": dict(facts.metadata),
        "outline": [{"title": e.title, "level": e.level, "page": e.page} for e in facts.outline],
    }


def apply_ocr_policy(session: Session, ocr: OcrPolicy, shelves: list[str]) -> None:
    """Bring the OCR state of the documents on ``shelves`` in line with ``ocr``: OCR turned
    on or installed queues what waited for it, a new engine or languages read again what
    the old one read, OCR turned off or missing says so of what is queued."""
    waiting = (OcrState.PENDING, OcrState.OFF, OcrState.UNAVAILABLE)
    on_shelves = Document.shelf.in_(shelves)
    if ocr.state == OcrState.PENDING:
        stale = and_(
            Document.ocr == OcrState.DONE, Document.converter.not_like(f"%+{ocr.identity}")
        )
        queued = or_(Document.ocr.in_(waiting[1:]), stale)
        session.execute(update(Document).where(on_shelves, queued).values(ocr=OcrState.PENDING))
    else:
        session.execute(
            update(Document).where(on_shelves, Document.ocr.in_(waiting)).values(ocr=ocr.state)
        )
