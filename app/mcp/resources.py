"""The resource methods: list, templates, read, and the SEP's ``resources/metadata``.

``Resource`` objects come from the index alone. Every ``contents[]`` entry of a
read carries the full Resource metadata of its representation (SEP
"Resource Contents Metadata and Multi-Format Semantics", §1 and §3): same URI,
one MIME type each, ``size`` of that representation.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from app.mcp import wire
from app.mcp.context import RequestContext
from app.mcp.cursor import InvalidCursor, decode_cursor, encode_cursor
from app.negotiation import Role, Variant, negotiate, parse_features
from converters.detect import is_textual
from storage.catalog import Catalog, DocumentRecord, VariantRecord
from storage.shelves import OutsideShelf, Shelf
from storage.store import RepresentationStore
from storage.uris import MAX_URI_LENGTH

# Which role a derived representation plays in negotiation (DESIGN D4/D5).
ROLE_BY_MIME = {
    "text/markdown": Role.MARKDOWN,
    "text/plain": Role.TEXT,
    "application/json": Role.JSON,
    "application/pdf": Role.PDF,
}
META_OMITTED = "dev.docshelf/omitted"


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
    resource: dict[str, Any] = {
        "uri": record.uri,
        "name": record.path,
        "title": record.title,
        "mimeType": variant.mime_type,
        "size": variant.size,
        "annotations": {"lastModified": _iso(record)},
        "_meta": {wire.META_DOCSHELF: document_meta},
    }
    if record.description:
        resource["description"] = record.description
    return resource


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
        store: RepresentationStore,
        shelves: Sequence[Shelf],
        *,
        page_size: int,
        binary_cap: int,
    ) -> None:
        self.catalog = catalog
        self.store = store
        self.shelves: Mapping[str, Shelf] = {shelf.name: shelf for shelf in shelves}
        self.page_size = page_size
        self.binary_cap = binary_cap

    def require(self, ctx: RequestContext, params: Mapping[str, Any]) -> DocumentRecord:
        uri = params.get("uri")
        if not isinstance(uri, str) or not uri:
            raise wire.McpError(wire.INVALID_PARAMS, "params.uri must be a non-empty string")
        if not _could_be_indexed(uri):
            raise ctx.era.resource_not_found(uri)
        record = self.catalog.get(uri)
        if record is None:
            raise ctx.era.resource_not_found(uri)
        return record

    def variants(
        self, ctx: RequestContext, record: DocumentRecord
    ) -> tuple[list[VariantRecord], list[dict[str, str]]]:
        """The variants to return, ordered and selected by the client's feature tags (D5),
        and the ones left out with the reason.

        Negotiation only reorders or drops what the index holds for this document: it
        never grants access to anything else (content negotiation SEP, requirement 3).
        """
        by_mime = {v.mime_type: v for v in record.variants}
        candidates = [
            Variant(
                v.mime_type,
                Role.ORIGINAL
                if v.store_key is None
                else ROLE_BY_MIME.get(v.mime_type, Role.ORIGINAL),
                v.size,
                not is_textual(v.mime_type),
            )
            for v in record.variants
        ]
        selection = negotiate(
            candidates, parse_features(ctx.client_capabilities), binary_cap=self.binary_cap
        )
        omitted = [{"mimeType": o.mime_type, "reason": o.reason} for o in selection.omitted]
        return [by_mime[v.mime_type] for v in selection.variants], omitted

    # -- methods ---------------------------------------------------------------------------

    def list(self, ctx: RequestContext, params: Mapping[str, Any]) -> dict[str, Any]:
        cursor = params.get("cursor")
        try:
            after = decode_cursor(cursor) if cursor is not None else None
        except InvalidCursor as exc:
            raise wire.McpError(wire.INVALID_PARAMS, f"Invalid cursor: {exc}") from exc
        records, more = self.catalog.page(after, self.page_size)
        result: dict[str, Any] = {"resources": [resource_object(r) for r in records]}
        if more and records:
            result["nextCursor"] = encode_cursor(records[-1].uri)
        return result

    def templates(self, ctx: RequestContext, params: Mapping[str, Any]) -> dict[str, Any]:
        cursor = params.get("cursor")
        if cursor is not None:
            raise wire.McpError(
                wire.INVALID_PARAMS, "Invalid cursor: the template list has one page"
            )
        return {
            "resourceTemplates": [
                {
                    "uriTemplate": f"docshelf://{name}/{{+path}}",
                    "name": name,
                    "title": f"Shelf {name}",
                    "description": f"Any document on the {name!r} shelf, by its path on the shelf",
                }
                for name in sorted(self.shelves)
            ]
        }

    def metadata(self, ctx: RequestContext, params: Mapping[str, Any]) -> dict[str, Any]:
        """SEP §2 ``resources/metadata``: one Resource per representation, from the index only."""
        record = self.require(ctx, params)
        variants, omitted = self.variants(ctx, record)
        return _with_omissions(
            {"metadata": [resource_object(record, v) for v in variants]}, omitted
        )

    def read(self, ctx: RequestContext, params: Mapping[str, Any]) -> dict[str, Any]:
        record = self.require(ctx, params)
        variants, omitted = self.variants(ctx, record)
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
        return _with_omissions({"contents": contents}, omitted)

    def _load(self, ctx: RequestContext, record: DocumentRecord, variant: VariantRecord) -> bytes:
        try:
            if variant.store_key is not None:
                return self.store.get(variant.store_key)
            return self.shelves[record.shelf].locate(record.path).read_bytes()
        except (OutsideShelf, KeyError, FileNotFoundError):
            # The file went away since it was indexed; the watcher will catch up.
            raise ctx.era.resource_not_found(record.uri) from None
        except OSError as exc:
            raise wire.McpError(
                wire.INTERNAL_ERROR, f"Cannot read {record.uri}: {exc.strerror}"
            ) from exc
