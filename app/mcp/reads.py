"""What ``resources/read`` answers for a document, and what every read shares: which
formats it picks, how bytes travel (``text`` or base64 ``blob``), what it leaves out and
why (``_meta``), and its errors."""

from __future__ import annotations

import base64
import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from docshelf.app.mcp import wire
from docshelf.app.mcp.context import RequestContext, WouldBlock
from docshelf.app.mcp.documents import Documents, resource_object
from docshelf.converters.formats import is_textual
from docshelf.storage.builder import FormatBuilder
from docshelf.storage.catalog import DocumentRecord, NotCached, VariantRecord
from docshelf.storage.document_bytes import DocumentBytes, FormatLost, Unreadable

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
# A read above this many bytes takes one of the few large-read slots.
LARGE_READ_BYTES = 8 * 1024 * 1024
# A read of at most this many bytes of a cached document is answered on the event loop: its
# files are read there too (from the page cache, typically, in microseconds), where a thread
# hand-off would cost more than the read.
INLINE_READ_BYTES = 256 * 1024

Omitted = list[dict[str, str]]
_V = TypeVar("_V")


def with_omissions(result: dict[str, Any], omitted: Omitted) -> dict[str, Any]:
    """Say in ``_meta`` which variants negotiation left out, and why."""
    if omitted:
        result["_meta"] = {META_OMITTED: omitted}
    return result


def best(ordered: Sequence[_V], pick: str, mime_of: Callable[[_V], str]) -> list[_V]:
    """The first of ``ordered``, or under ``BEST_TEXT`` the first textual one if any."""
    if pick == BEST_TEXT:
        textual = [item for item in ordered if is_textual(mime_of(item))]
        return textual[:1] or list(ordered[:1])
    return list(ordered[:1])


def content(resource: dict[str, Any], data: bytes) -> dict[str, Any]:
    """A ``contents[]`` entry: ``resource`` with ``data`` as text if its type is textual
    and the bytes are UTF-8, else as a base64 blob."""
    resource["size"] = len(data)
    if is_textual(resource["mimeType"]):
        with contextlib.suppress(UnicodeDecodeError):
            resource["text"] = data.decode("utf-8")
            return resource
    resource["blob"] = base64.b64encode(data).decode("ascii")
    return resource


@contextlib.contextmanager
def storage_errors(ctx: RequestContext, uri: str) -> Iterator[None]:
    """Answer storage's failures to read the document at ``uri`` as the era says."""
    try:
        yield
    except NotCached:
        raise WouldBlock from None  # the index moved on, or a file is lost: not for the loop
    except Unreadable as exc:
        if exc.gone:  # the watcher will catch up
            raise ctx.era.resource_not_found(uri) from None
        raise wire.McpError(wire.INTERNAL_ERROR, f"Cannot read {uri}: {exc.reason}") from exc
    except FormatLost as exc:
        raise wire.McpError(
            wire.INTERNAL_ERROR,
            f"Internal error: {exc}",
            {"uri": exc.uri, "mimeType": exc.mime_type},
        ) from None


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
        {"uri": uri, "mimeType": mime_type, "offered": list(offered)},
    )


def over_cap(mime_type: str, size: int, cap: int, advice: str = "") -> dict[str, str]:
    """The omission of a format that would take a read over its ``cap``."""
    return {
        "mimeType": mime_type,
        "reason": f"{mb(size)} would take this read over its {mb(cap)} cap{advice}",
    }


def mb(size: int) -> str:
    """A size for people: MB from a tenth of one, KB below."""
    return f"{size / 1_048_576:.1f} MB" if size >= 104_858 else f"{size / 1024:.1f} KB"


class DocumentReads:
    """``resources/read`` of a whole document: its negotiated formats, built first if they
    are not yet (for as long as a read waits), within the read cap."""

    def __init__(
        self,
        documents: Documents,
        stored: DocumentBytes,
        builder: FormatBuilder,
        *,
        max_read_bytes: int,
        build_timeout_s: float,
        large_reads: int,
    ) -> None:
        self.documents = documents
        self.stored = stored
        self.builder = builder
        self.max_read_bytes = max_read_bytes
        self.build_timeout_s = build_timeout_s
        self._large_reads = threading.BoundedSemaphore(large_reads)

    def read(self, ctx: RequestContext, uri: str, pick: str | None) -> dict[str, Any]:
        documents = self.documents
        record = documents.ocr_read(ctx, documents.require(ctx, uri))
        variants, omitted = self._picked(record, *documents.variants(ctx, record), pick)
        if not all(v.built for v in variants):  # a pending document's formats are not built
            if not ctx.may_block:
                raise WouldBlock
            # Formats not built yet are built now, ahead of the queue (DESIGN D11, D12), for
            # as long as a read waits; then the read answers with what exists.
            needed = [v.mime_type for v in variants if not v.original]
            self.builder.ensure(record.id, needed, timeout=documents.read_wait_s)
            record = documents.require(ctx, uri)
            negotiated, omitted = documents.variants(ctx, record)
            omitted.extend(
                {"mimeType": v.mime_type, "reason": BEING_BUILT} for v in negotiated if not v.built
            )
            built = [v for v in negotiated if v.built]
            variants, omitted = self._picked(record, built, omitted, pick)
            if not all(v.built for v in variants):  # the one format asked for is not there yet
                raise still_converting(uri, f"to {pick}")
        fitting, over = self._fit(record, variants)
        omitted.extend(over)
        size = sum(v.size or 0 for v in fitting)
        if size > INLINE_READ_BYTES and not ctx.may_block:
            raise WouldBlock
        with self._read_slot(size), storage_errors(ctx, record.uri):
            contents = [
                content(
                    resource_object(record, v), self.stored.load(record, v, may_block=ctx.may_block)
                )
                for v in fitting
            ]
        return with_omissions({"contents": contents}, omitted)

    def _picked(
        self,
        record: DocumentRecord,
        negotiated: list[VariantRecord],
        omitted: Omitted,
        pick: str | None,
    ) -> tuple[list[VariantRecord], Omitted]:
        if pick is None:
            return negotiated, omitted
        if pick in (BEST, BEST_TEXT):
            return best(negotiated, pick, lambda v: v.mime_type), []
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

    def _fit(
        self, record: DocumentRecord, variants: Sequence[VariantRecord]
    ) -> tuple[list[VariantRecord], Omitted]:
        """The variants that fit the read cap together, in order, and the ones left out.

        One read holds its whole answer in memory several times over (bytes,
        base64, JSON), so what it may return is capped (issue 16, item 12).
        """
        kept: list[VariantRecord] = []
        omitted: Omitted = []
        total = 0
        advice = "; ask for it alone with format="
        for variant in variants:
            size = variant.size or 0
            if total + size > self.max_read_bytes:
                omitted.append(over_cap(variant.mime_type, size, self.max_read_bytes, advice))
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
