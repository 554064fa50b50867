"""The resource methods: list, templates, read, and the SEP's ``resources/metadata``.

``Resource`` objects come from the index alone. Every ``contents[]`` entry of a
read carries the full Resource metadata of its representation (SEP
"Resource Contents Metadata and Multi-Format Semantics", §1 and §3): same URI,
one MIME type each, ``size`` of that representation.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from docshelf.app.mcp import parts, wire
from docshelf.app.mcp.context import RequestContext, WouldBlock
from docshelf.app.mcp.cursor import InvalidCursor, decode_cursor, encode_cursor
from docshelf.app.mcp.params import PageParams, UriParams
from docshelf.app.negotiation import Role, Variant, negotiate
from docshelf.app.negotiation_features import Features
from docshelf.converters import ConversionError
from docshelf.converters.formats import ROLE_BY_MIME_TYPE, is_textual
from docshelf.storage.builder import FormatBuilder
from docshelf.storage.catalog import Catalog, DocumentRecord, NotCached, VariantRecord
from docshelf.storage.events import ChangeSet
from docshelf.storage.models import OcrState
from docshelf.storage.shelves import AnyShelf, NotRegularFile, OutsideShelf, ShelfSet
from docshelf.storage.store import Store
from docshelf.storage.uris import MAX_URI_LENGTH, document_of

META_OMITTED = "dev.docshelf/omitted"
#: Why a format is not in a read whose wait for it ran out (issue "Nothing lost on a first
#: read"): it goes on building, and ``resources/updated`` says when it is there.
BEING_BUILT = (
    "being built; notifications/resources/updated tells this document's subscribers "
    "when it is ready"
)
#: ``read_formats(pick=BEST)``: only the format negotiation puts first; ``BEST_TEXT``: the
#: first of those a model can read as text (a PDF's Markdown rather than the PDF itself).
BEST = "best"
BEST_TEXT = "best-text"

log = logging.getLogger(__name__)
_V = TypeVar("_V")
# A read above this many bytes takes one of the few large-read slots.
LARGE_READ_BYTES = 8 * 1024 * 1024
# A read of at most this many bytes of a cached document is answered on the event loop: its
# files are read there too (from the page cache, typically, in microseconds), where a thread
# hand-off would cost more than the read.
INLINE_READ_BYTES = 256 * 1024
# Negotiation outcomes remembered (see ResourceService.variants).
NEGOTIATED_CACHE_SIZE = 4096


def _iso(record: DocumentRecord) -> str:
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
        "annotations": {"lastModified": _iso(record)},
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


def _with_omissions(result: dict[str, Any], omitted: list[dict[str, str]]) -> dict[str, Any]:
    """Say in ``_meta`` which variants negotiation left out, and why."""
    if omitted:
        result["_meta"] = {META_OMITTED: omitted}
    return result


def _could_be_indexed(uri: str) -> bool:
    """Whether the index could hold ``uri``: the indexer stores only percent-encoded
    printable ASCII of at most ``MAX_URI_LENGTH`` characters. Anything else is not found
    without a query — the databases cannot even compare a NUL (PostgreSQL) or a lone
    surrogate (SQLite) — and a 4 MiB "URI" costs no index lookup."""
    return len(uri) <= MAX_URI_LENGTH and uri.isascii() and uri.isprintable()


class ResourceService:
    def __init__(
        self,
        catalog: Catalog,
        store: Store,
        shelves: ShelfSet | Sequence[AnyShelf],
        *,
        page_size: int,
        binary_cap: int,
        builder: FormatBuilder,
        max_read_bytes: int,
        build_timeout_s: float,
        read_wait_s: float,
        large_reads: int = 2,
        catalogued: threading.Event | None = None,
        first_list_wait_s: float = 15.0,
    ) -> None:
        self.catalogued = catalogued
        self.first_list_wait_s = first_list_wait_s
        self.builder = builder
        self.max_read_bytes = max_read_bytes
        self._large_reads = threading.BoundedSemaphore(large_reads)
        self.build_timeout_s = build_timeout_s
        # How long a read waits for formats not built yet before answering with what exists.
        self.read_wait_s = read_wait_s
        self.catalog = catalog
        self.store = store
        self.shelves = ShelfSet.of(shelves)  # the process's own: a stdio server's roots change it
        self.page_size = page_size
        self.binary_cap = binary_cap
        # (uri, features) → (record, variants, omitted), for the record the catalog handed
        # out last: a newer record replaces the entry, so no record the catalog has dropped
        # is kept alive here. Insertion-ordered: the oldest goes first when full.
        self._negotiated: dict[
            tuple[str, Features],
            tuple[DocumentRecord, tuple[VariantRecord, ...], tuple[dict[str, str], ...]],
        ] = {}
        self._negotiated_lock = threading.Lock()
        self._parts_cache = parts.PartCache()

    def forget(self, changes: ChangeSet) -> None:
        """Drop what the caches hold of documents that changed or are gone (an event-bus
        hook): no read can ask for those parts or outcomes again, and on a churning shelf
        they filled the caches, a serving process growing for hours (issue 24, item 17)."""
        gone = changes.changed | changes.removed
        if not gone:
            return
        with self._negotiated_lock:
            for key in [key for key in self._negotiated if key[0] in gone]:
                del self._negotiated[key]
        self._parts_cache.forget(lambda key: document_of(key[1]) in gone)  # type: ignore[index]

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

    def _negotiate(
        self, ctx: RequestContext, record: DocumentRecord
    ) -> tuple[tuple[VariantRecord, ...], tuple[dict[str, str], ...]]:
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

    # -- methods ---------------------------------------------------------------------------

    def list(self, ctx: RequestContext, params: PageParams) -> dict[str, Any]:
        try:
            after = decode_cursor(params.cursor) if params.cursor is not None else None
        except InvalidCursor as exc:
            raise wire.McpError(wire.INVALID_PARAMS, f"Invalid cursor: {exc}") from exc
        self.first_pass()
        records, more = self.catalog.page(after, self.page_size, self.shelves.bound())
        result: dict[str, Any] = {"resources": [resource_object(r) for r in records]}
        if more and records:
            result["nextCursor"] = encode_cursor(records[-1].uri)
        return result

    def first_pass(self) -> None:
        """On a fresh shelf, wait (briefly) for the first catalog pass: most desktop clients
        list once on connect, and a list answered before it would be empty."""
        if self.catalogued is not None and not self.catalogued.is_set():
            self.catalogued.wait(self.first_list_wait_s)

    def catalog_complete(self) -> bool:
        """Whether the shelves' first catalog pass is done (or an index from before was
        there): until then, files not catalogued yet are missing from every answer."""
        return self.catalogued is None or self.catalogued.is_set()

    def templates(self, ctx: RequestContext, params: PageParams) -> dict[str, Any]:
        if params.cursor is not None:
            raise wire.McpError(
                wire.INVALID_PARAMS, "Invalid cursor: the template list has one page"
            )
        return {
            "resourceTemplates": [
                {
                    # RFC 6570: {+path} keeps the path's slashes; {?pages,section} is the
                    # form-style query that names a part (app.mcp.parts).
                    "uriTemplate": f"docshelf://{name}/{{+path}}{{?pages,section}}",
                    "name": name,
                    "title": f"Shelf {name}",
                    "description": (
                        f"Any document on the {name!r} shelf, by its path on the shelf; "
                        "?pages=3 or ?pages=3-5 (at most 50) for pages of a PDF, "
                        "?section=slug for the section under a heading"
                    ),
                }
                for name in sorted(self.shelves)
            ]
        }

    def metadata(self, ctx: RequestContext, params: UriParams) -> dict[str, Any]:
        """SEP §2 ``resources/metadata``: one Resource per representation, from the index only."""
        if "?" in params.uri:
            return self._part_metadata(ctx, params.uri)
        record = self.require(ctx, params.uri)
        variants, omitted = self.variants(ctx, record)
        described = [resource_object(record, v) for v in variants]
        # Issue #10: the document's _meta says how to address its pages and sections.
        addressable = parts.document_parts(record)
        if addressable is not None:
            for resource in described:
                resource["_meta"][wire.META_DOCSHELF]["parts"] = addressable
        return _with_omissions({"metadata": described}, omitted)

    def read(self, ctx: RequestContext, params: UriParams) -> dict[str, Any]:
        return self.read_formats(ctx, params.uri)

    def read_formats(
        self, ctx: RequestContext, uri: str, pick: str | None = None
    ) -> dict[str, Any]:
        """A ``resources/read`` result for a document or a part: every negotiated format,
        or only one (``pick``: a MIME type, or :data:`BEST` for the negotiated first).
        A MIME type the document is not offered in is -32602 naming the ones it is."""
        if "?" in uri:
            return self._read_part(ctx, uri, pick)
        record = self._ocr_read(ctx, self.require(ctx, uri))
        variants, omitted = self._picked(record, *self.variants(ctx, record), pick)
        if not all(v.built for v in variants):  # a pending document's formats are not built
            if not ctx.may_block:
                raise WouldBlock
            # Formats not built yet are built now, ahead of the queue (DESIGN D11, D12), for
            # as long as a read waits; then the read answers with what exists.
            needed = [v.mime_type for v in variants if not v.original]
            self.builder.ensure(record.id, needed, timeout=self.read_wait_s)
            record = self.require(ctx, uri)
            negotiated, omitted = self.variants(ctx, record)
            omitted.extend(
                {"mimeType": v.mime_type, "reason": BEING_BUILT} for v in negotiated if not v.built
            )
            built = [v for v in negotiated if v.built]
            variants, omitted = self._picked(record, built, omitted, pick)
            if not all(v.built for v in variants):  # the one format asked for is not there yet
                raise still_converting(uri, f"to {pick}")
        fitting, over_cap = self._fit(record, variants)
        omitted.extend(over_cap)
        size = sum(v.size or 0 for v in fitting)
        if size > INLINE_READ_BYTES and not ctx.may_block:
            raise WouldBlock
        with self._read_slot(size):
            contents = self._contents(ctx, record, fitting)
        return _with_omissions({"contents": contents}, omitted)

    def _picked(
        self,
        record: DocumentRecord,
        negotiated: builtins.list[VariantRecord],
        omitted: builtins.list[dict[str, str]],
        pick: str | None,
    ) -> tuple[builtins.list[VariantRecord], builtins.list[dict[str, str]]]:
        if pick is None:
            return negotiated, omitted
        if pick in (BEST, BEST_TEXT):
            return _best(negotiated, pick, lambda v: v.mime_type), []
        chosen = [v for v in record.variants if v.mime_type == pick]
        if not chosen:
            raise format_unavailable(record.uri, pick, [v.mime_type for v in record.variants])
        return chosen, []

    @contextlib.contextmanager
    def _read_slot(self, size: int) -> Iterator[None]:
        """Let only a few large reads hold their answer in memory at once (issue 16, item 12)."""
        if size < LARGE_READ_BYTES:
            yield
            return
        if not self._large_reads.acquire(timeout=self.build_timeout_s):
            raise wire.McpError(
                wire.INTERNAL_ERROR, "Server busy: too many large reads at once; retry shortly"
            )
        try:
            yield
        finally:
            self._large_reads.release()

    def _contents(
        self, ctx: RequestContext, record: DocumentRecord, variants: Sequence[VariantRecord]
    ) -> builtins.list[dict[str, Any]]:
        contents = []
        for variant in variants:
            data = self._load(ctx, record, variant)
            entry = resource_object(record, variant)
            entry["size"] = len(data)
            if is_textual(variant.mime_type):
                try:
                    entry["text"] = data.decode("utf-8")
                except UnicodeDecodeError:
                    entry["blob"] = base64.b64encode(data).decode("ascii")
            else:
                entry["blob"] = base64.b64encode(data).decode("ascii")
            contents.append(entry)
        return contents

    def _fit(
        self, record: DocumentRecord, variants: Sequence[VariantRecord]
    ) -> tuple[Sequence[VariantRecord], Sequence[dict[str, str]]]:
        """The variants that fit the read cap together, in order, and the ones left out.

        One read holds its whole answer in memory several times over (bytes,
        base64, JSON), so what it may return is capped (issue 16, item 12).
        """
        kept: builtins.list[VariantRecord] = []
        omitted: builtins.list[dict[str, str]] = []
        total = 0
        for variant in variants:
            size = variant.size or 0
            if total + size > self.max_read_bytes:
                omitted.append(
                    {
                        "mimeType": variant.mime_type,
                        "reason": f"{mb(size)} would take this read over its "
                        f"{mb(self.max_read_bytes)} cap; ask for it alone with format=",
                    }
                )
                continue
            kept.append(variant)
            total += size
        if not kept:
            sizes = ", ".join(f"{v.mime_type} {mb(v.size or 0)}" for v in variants)
            raise wire.McpError(
                wire.INVALID_PARAMS,
                f"Every format of {record.uri} is over the {mb(self.max_read_bytes)} read cap "
                f"({sizes}); the operator can raise DOCSHELF_MAX_READ_MB",
                {"uri": record.uri, "maxReadBytes": self.max_read_bytes},
            )
        return kept, omitted

    def _load(self, ctx: RequestContext, record: DocumentRecord, variant: VariantRecord) -> bytes:
        if variant.original:
            return self._load_original(ctx, record)
        data = self._stored(variant.store_key, record.uri, variant.mime_type, ctx.may_block)
        if data is None:
            # Never "not found" for a document that exists (issue 16, item 2): the row we
            # held may have been replaced by a re-index meanwhile (then the index names
            # another key), or the stored file was lost (then it is rebuilt).
            mime = [variant.mime_type]
            log.warning("stored %s of %s is missing; rebuilding it", mime[0], record.uri)
            self.builder.ensure(record.id, mime, rebuild=mime, timeout=self.build_timeout_s)
            data = self._stored(None, record.uri, variant.mime_type, True)
        if data is None:
            raise wire.McpError(
                wire.INTERNAL_ERROR,
                f"Internal error: the stored {variant.mime_type} of {record.uri} is missing "
                "and could not be rebuilt",
                {"uri": record.uri, "mimeType": variant.mime_type},
            )
        return data

    def _stored(self, key: str | None, uri: str, mime_type: str, may_block: bool) -> bytes | None:
        """The stored bytes under ``key``, else under the key the index names now; None
        if neither is on disk. The index is asked only when ``key`` is missing."""
        if key is not None:
            with contextlib.suppress(FileNotFoundError):
                return self.store.get(key)
        if not may_block:
            raise WouldBlock  # the index moved on, or the file is lost: not a job for the loop
        current = self._current_key(uri, mime_type)
        if current is not None and current != key:
            with contextlib.suppress(FileNotFoundError):
                return self.store.get(current)
        return None

    def _current_key(self, uri: str, mime_type: str) -> str | None:
        fresh = self.catalog.get(uri, fresh=True)
        keys = (v.store_key for v in fresh.derived if v.mime_type == mime_type) if fresh else ()
        return next((k for k in keys if k), None)

    def _load_original(self, ctx: RequestContext, record: DocumentRecord, cap: int = 0) -> bytes:
        shelf = self.shelves.get(record.shelf)
        if shelf is None:
            raise ctx.era.resource_not_found(record.uri)
        try:
            return shelf.read(record.path, limit=cap or self.max_read_bytes).data
        except (OutsideShelf, NotRegularFile, FileNotFoundError):
            # Gone, or no longer a regular file on the shelf; the watcher will catch up.
            raise ctx.era.resource_not_found(record.uri) from None
        except OSError as exc:
            raise wire.McpError(
                wire.INTERNAL_ERROR, f"Cannot read {record.uri}: {exc.strerror}"
            ) from exc

    # -- parts (app.mcp.parts) ----------------------------------------------------------------

    def require_part(self, ctx: RequestContext, uri: str) -> parts.Part:
        """The part ``uri`` names; the era's resource-not-found error, with the reason in
        ``data``, if its document or the part does not exist.

        Which parts exist is known once the document is converted (its pages, its
        headings): a document still waiting for that is converted now, as a whole-document
        read would do (issue "Nothing lost on a first read"), for as long as a read waits;
        past that, :func:`still_converting`.
        """
        document_uri, query = parts.split_uri(uri)
        record = self.converted(ctx, self.require(ctx, document_uri))
        if record.pending:
            raise still_converting(uri, "to know its parts")
        try:
            return parts.check(record, parts.parse_query(query or ""), uri)
        except parts.PartNotFound as exc:
            error = ctx.era.resource_not_found(uri)
            error.data = {"uri": uri, "reason": exc.reason}
            raise error from None

    def _ocr_read(self, ctx: RequestContext, record: DocumentRecord) -> DocumentRecord:
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
        record = self._ocr_read(ctx, record)
        needed = [v.mime_type for v in record.derived if v.mime_type in _SOURCES and not v.built]
        if not (record.pending or needed):
            return record
        if not ctx.may_block:
            raise WouldBlock
        self.builder.ensure(record.id, needed, timeout=self.read_wait_s)
        return self.require(ctx, record.uri)

    def subscription_uri(self, ctx: RequestContext, uri: str) -> str:
        """What ``resources/subscribe`` keeps for ``uri``: the document's URI, or a part's
        (its subscriber hears about every change to the document). A part of a document
        still being converted past the read wait is kept as given: the document exists,
        and its subscriber hears when it is converted."""
        if "?" not in uri:
            return self.require(ctx, uri).uri
        try:
            return self.require_part(ctx, uri).uri
        except StillConverting:
            return uri

    def _part_variants(
        self, ctx: RequestContext, part: parts.Part
    ) -> tuple[builtins.list[str], builtins.list[dict[str, str]]]:
        """The part's formats in negotiated order, and those left out. A part's format is the
        document's original role when it has the original's type (a PDF's pages, a Markdown
        file's section)."""
        candidates = [
            Variant(
                mime,
                Role.ORIGINAL if mime == part.document.mime_type else ROLE_BY_MIME_TYPE[mime],
                0,
                not is_textual(mime),
            )
            for mime in parts.PART_FORMATS
        ]
        candidates.sort(key=lambda v: v.role is not Role.ORIGINAL)
        selection = negotiate(candidates, ctx.features, binary_cap=self.binary_cap)
        omitted = [{"mimeType": o.mime_type, "reason": o.reason} for o in selection.omitted]
        return [v.mime_type for v in selection.variants], omitted

    def _part_resource(self, part: parts.Part, mime_type: str) -> dict[str, Any]:
        record = part.document
        return {
            "uri": part.uri,
            "name": f"{record.path}?{part.query.query}",
            "title": part.title,
            "mimeType": mime_type,
            "annotations": {"lastModified": _iso(record)},
            "_meta": {
                wire.META_DOCSHELF: {"shelf": record.shelf, "path": record.path, "part": part.meta}
            },
        }

    def _part_metadata(self, ctx: RequestContext, uri: str) -> dict[str, Any]:
        part = self.require_part(ctx, uri)
        formats, omitted = self._part_variants(ctx, part)
        return _with_omissions(
            {"metadata": [self._part_resource(part, mime) for mime in formats]}, omitted
        )

    def _read_part(self, ctx: RequestContext, uri: str, pick: str | None) -> dict[str, Any]:
        if not ctx.may_block:
            raise WouldBlock  # parts are made from files: a worker thread's job
        part = self.require_part(ctx, uri)
        record = part.document
        formats, omitted = self._part_variants(ctx, part)
        if pick in (BEST, BEST_TEXT):
            formats, omitted = _best(formats, pick, str), []
        elif pick is not None:
            if pick not in parts.PART_FORMATS:
                raise format_unavailable(uri, pick, builtins.list(parts.PART_FORMATS))
            formats, omitted = [pick], []

        def load(mime_type: str) -> bytes:
            if mime_type == record.mime_type:  # cut from it whole: the part is what is capped
                return self._load_original(ctx, record, max(self.max_read_bytes, record.size))
            variant = next((v for v in record.derived if v.mime_type == mime_type), None)
            if variant is None or not variant.built:
                raise parts.PartNotFound(f"{record.path} has no {mime_type} format to cut from")
            return self._load(ctx, record, variant)

        made = parts.producers(part, load)
        contents: builtins.list[dict[str, Any]] = []
        total = 0
        try:
            for mime in formats:
                data = self._parts_cache.get((record.id, uri, mime), record.sha256)
                if data is None:
                    data = made[mime]()
                    self._parts_cache.put((record.id, uri, mime), record.sha256, data)
                if total + len(data) > self.max_read_bytes:
                    omitted.append(
                        {
                            "mimeType": mime,
                            "reason": f"{mb(len(data))} would take this read "
                            f"over its {mb(self.max_read_bytes)} cap",
                        }
                    )
                    continue
                total += len(data)
                entry = self._part_resource(part, mime)
                entry["size"] = len(data)
                if is_textual(mime):
                    entry["text"] = data.decode("utf-8")
                else:
                    entry["blob"] = base64.b64encode(data).decode("ascii")
                contents.append(entry)
        except parts.PartNotFound as exc:
            error = ctx.era.resource_not_found(uri)
            error.data = {"uri": uri, "reason": exc.reason}
            raise error from None
        except ConversionError as exc:
            raise wire.McpError(
                wire.INTERNAL_ERROR,
                f"Cannot make {uri}: {exc.message}",
                {"uri": uri, "reason": exc.reason},
            ) from exc
        return _with_omissions({"contents": contents}, omitted)


_SOURCES = frozenset(parts.SOURCE_FORMATS)


def _best(ordered: Sequence[_V], pick: str, mime_of: Callable[[_V], str]) -> builtins.list[_V]:
    """The first of ``ordered``, or under ``BEST_TEXT`` the first textual one if any."""
    if pick == BEST_TEXT:
        textual = [item for item in ordered if is_textual(mime_of(item))]
        return textual[:1] or builtins.list(ordered[:1])
    return builtins.list(ordered[:1])


class StillConverting(wire.McpError):
    """What a request needs is still being converted after the read wait."""


def still_converting(uri: str, what: str) -> StillConverting:
    """-32603 (JSON-RPC has no "retry later"): the document is being converted ``what``
    (for instance "to know its parts"); ``data.reason`` is ``pending``."""
    return StillConverting(
        wire.INTERNAL_ERROR,
        f"{uri} is still being converted {what}; retry in a few seconds, or subscribe "
        "to it to hear when it is ready",
        {"uri": uri, "reason": "pending"},
    )


def format_unavailable(uri: str, mime_type: str, offered: Sequence[str]) -> wire.McpError:
    return wire.McpError(
        wire.INVALID_PARAMS,
        f"{uri} is not offered as {mime_type}; it is offered as {', '.join(offered)}",
        {"uri": uri, "mimeType": mime_type, "offered": builtins.list(offered)},
    )


def mb(size: int) -> str:
    """A size for people: MB from a tenth of one, KB below."""
    return f"{size / 1_048_576:.1f} MB" if size >= 104_858 else f"{size / 1024:.1f} KB"
