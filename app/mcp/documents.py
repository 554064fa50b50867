"""Documents as the index holds them: finding the one a request names, its ``Resource``,
waiting for its formats, and content negotiation's outcome for it (remembered).

``Resource`` objects come from the index alone. Every ``contents[]`` entry of a
read carries the full Resource metadata of its representation (SEP
"Resource Contents Metadata and Multi-Format Semantics", §1 and §3): same URI,
one MIME type each, ``size`` of that representation.
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from typing import Any

from docshelf.app.mcp import wire
from docshelf.app.mcp.context import RequestContext, WouldBlock
from docshelf.app.negotiation import Role, Variant, negotiate
from docshelf.app.negotiation_features import Features
from docshelf.converters.formats import PART_SOURCES, ROLE_BY_MIME_TYPE, is_textual
from docshelf.storage.builder import FormatBuilder
from docshelf.storage.catalog import Catalog, DocumentRecord, NotCached, VariantRecord
from docshelf.storage.models import OcrState
from docshelf.storage.shelves import ShelfSet
from docshelf.storage.uris import MAX_URI_LENGTH

# Negotiation outcomes remembered (see Documents.variants).
NEGOTIATED_CACHE_SIZE = 4096

Negotiated = tuple[tuple[VariantRecord, ...], tuple[dict[str, str], ...]]


def iso(record: DocumentRecord) -> str:
    return record.modified_at.isoformat().replace("+00:00", "Z")


def resource_object(record: DocumentRecord, variant: VariantRecord | None = None) -> dict[str, Any]:
    """A ``Resource`` for the document, describing ``variant`` (default: the original)."""
    variant = variant or record.original
    document_meta: dict[str, Any] = {
        "shelf": record.shelf,
        "path": record.path,
        "state": record.state,
    }
    if record.page_count is not None:
        document_meta["pageCount"] = record.page_count
    if record.error_reason:
        document_meta["error"] = {
            "reason": record.error_reason,
            "message": record.error_message or "",
        }
    if record.ocr is not None:
        document_meta["ocr"] = ocr_meta(record)
    resource: dict[str, Any] = {
        "uri": record.uri,
        "name": record.path,
        "title": record.title,
        "mimeType": variant.mime_type,
        "annotations": {"lastModified": iso(record)},
        "_meta": {wire.META_DOCSHELF: document_meta},
    }
    if variant.size is not None:  # a format not built yet has no size (DESIGN D11)
        resource["size"] = variant.size
    if record.description:
        resource["description"] = record.description
    return resource


def ocr_meta(record: DocumentRecord) -> dict[str, Any]:
    """What ``_meta`` says of a document's pages that only OCR reads (issue 26): the state
    of its OCR pass, which pages, the engine's mean confidence, and why not, if it did not
    run (the page numbers and the rest are read for single documents, not listings)."""
    meta: dict[str, Any] = {"state": str(record.ocr)}
    facts = record.ocr_facts
    if isinstance(pages := facts.get("pages"), list) and pages:
        meta["pages"] = pages
    if isinstance(confidence := facts.get("meanConfidence"), int | float):
        meta["meanConfidence"] = confidence
    if isinstance(note := facts.get("note"), str):
        meta["note"] = note
    return meta


def _could_be_indexed(uri: str) -> bool:
    """Whether the index could hold ``uri``: the indexer stores only percent-encoded
    printable ASCII of at most ``MAX_URI_LENGTH`` characters. Anything else is not found
    without a query — the databases cannot even compare a NUL (PostgreSQL) or a lone
    surrogate (SQLite) — and a 4 MiB "URI" costs no index lookup."""
    return len(uri) <= MAX_URI_LENGTH and uri.isascii() and uri.isprintable()


class Documents:
    """The indexed documents on the served shelves, as a request finds them."""

    def __init__(
        self,
        catalog: Catalog,
        shelves: ShelfSet,
        builder: FormatBuilder,
        *,
        binary_cap: int,
        read_wait_s: float,
    ) -> None:
        self.catalog = catalog
        self.shelves = shelves
        self.builder = builder
        self.binary_cap = binary_cap
        # How long a read waits for formats not built yet before answering with what exists.
        self.read_wait_s = read_wait_s
        # (uri, features) → (record, variants, omitted), for the record the catalog handed
        # out last: a newer record replaces the entry, so no record the catalog has dropped
        # is kept alive here. Insertion-ordered: the oldest goes first when full.
        self._negotiated: dict[tuple[str, Features], tuple[DocumentRecord, *Negotiated]] = {}
        self._negotiated_lock = threading.Lock()

    def forget(self, uris: Collection[str]) -> None:
        """Drop the negotiation outcomes of the documents at ``uris``: no read can ask for
        them again, and on a churning shelf they filled the memo (issue 24, item 17)."""
        with self._negotiated_lock:
            for key in [key for key in self._negotiated if key[0] in uris]:
                del self._negotiated[key]

    def require(self, ctx: RequestContext, uri: str) -> DocumentRecord:
        """The indexed document at ``uri``; the era's resource-not-found error if none.
        On the event loop only a cached entry will do (:class:`WouldBlock` otherwise)."""
        if not _could_be_indexed(uri):
            raise ctx.era.resource_not_found(uri)
        try:
            record = self.catalog.get(uri, cached_only=not ctx.may_block)
        except NotCached:
            raise WouldBlock from None
        if record is None or record.shelf not in self.shelves:
            raise ctx.era.resource_not_found(uri)
        return record

    def ocr_read(self, ctx: RequestContext, record: DocumentRecord) -> DocumentRecord:
        """``record`` once its OCR pass is done, when it waits for one (issue 26): the pass
        runs now, ahead of the queue, for as long as any read waits; then the read answers
        with what exists, and ``_meta`` says OCR is still pending."""
        if record.ocr != OcrState.PENDING:
            return record
        if not ctx.may_block:
            raise WouldBlock
        self.builder.ensure(
            record.id, [v.mime_type for v in record.derived], timeout=self.read_wait_s
        )
        return self.require(ctx, record.uri)

    def converted(self, ctx: RequestContext, record: DocumentRecord) -> DocumentRecord:
        """``record`` once the formats parts are cut from are built (or after the read wait)."""
        record = self.ocr_read(ctx, record)
        needed = [
            v.mime_type for v in record.derived if v.mime_type in PART_SOURCES and not v.built
        ]
        if not (record.pending or needed):
            return record
        if not ctx.may_block:
            raise WouldBlock
        self.builder.ensure(record.id, needed, timeout=self.read_wait_s)
        return self.require(ctx, record.uri)

    def variants(
        self, ctx: RequestContext, record: DocumentRecord
    ) -> tuple[list[VariantRecord], list[dict[str, str]]]:
        """The variants to return, ordered and selected by the client's feature tags (D5),
        and the ones left out with the reason.

        Negotiation only reorders or drops what the index holds for this document: it
        never grants access to anything else (content negotiation SEP, requirement 3).
        Its outcome is remembered per document and feature set, for the record it was
        worked out from: the catalog hands out the same record object until the document
        (or anything in the catalog) changes, and then a new one, whose outcome replaces it.
        """
        key = (record.uri, ctx.features)
        known = self._negotiated.get(key)
        if known is None or known[0] is not record:
            known = (record, *self._negotiate(ctx, record))
            with self._negotiated_lock:
                self._negotiated.pop(key, None)  # to the end: the oldest goes first
                self._negotiated[key] = known
                if len(self._negotiated) > NEGOTIATED_CACHE_SIZE:
                    self._negotiated.pop(next(iter(self._negotiated)))
        return list(known[1]), list(known[2])

    def _negotiate(self, ctx: RequestContext, record: DocumentRecord) -> Negotiated:
        by_mime = {v.mime_type: v for v in record.variants}
        candidates = [
            Variant(
                v.mime_type,
                Role.ORIGINAL if v.original else ROLE_BY_MIME_TYPE.get(v.mime_type, Role.ORIGINAL),
                v.size or 0,
                not is_textual(v.mime_type),
            )
            for v in record.variants
        ]
        selection = negotiate(candidates, ctx.features, binary_cap=self.binary_cap)
        omitted = tuple(
            [{"mimeType": o.mime_type, "reason": o.reason} for o in selection.omitted]
            + [
                {"mimeType": f.mime_type, "reason": f"{f.reason}: {f.message}"}
                for f in record.format_errors
            ]
        )
        return tuple(by_mime[v.mime_type] for v in selection.variants), omitted
