"""Documents and their parts embedded in a prompt, within the read cap (issue 28, item 3).

A prompt quotes what it is about as embedded resources (2025-11-25 server/prompts
"Embedded Resources"; the ACP content blocks of the seeds describe the same form): the
text of a document or of one of its parts under that part's own URI, so that the model
can cite it and read on where the prompt stops. What one ``prompts/get`` embeds is
bounded like what one ``resources/read`` returns (``DOCSHELF_MAX_READ_MB``): a document
whose Markdown fits is embedded whole; a longer one part by part — page ranges of a
paginated document, sections of any other — in document order until the budget is spent,
and what is left out is named by URI. Parts, not whole books.

Every read goes through :class:`~app.mcp.resources.ResourceService`, so a document still
converting, a part that does not exist and the read cap behave as in ``resources/read``.
A prompt is for a model: it embeds Markdown (plain text where a document has none).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from docshelf.app.mcp import wire
from docshelf.app.mcp.context import RequestContext
from docshelf.app.mcp.parts import split_uri
from docshelf.app.mcp.reads import mb, still_converting
from docshelf.app.mcp.resources import ResourceService
from docshelf.app.mcp.tools import embedded_resource
from docshelf.converters import TEXT_MARKDOWN, TEXT_PLAIN
from docshelf.converters.parts import MAX_PART_PAGES, pages_query, section_query, unique_slugs
from docshelf.storage.catalog import DocumentRecord
from docshelf.storage.models import DocumentState
from docshelf.storage.search import SearchHit

#: Reads of parts one prompt makes at most: each cuts its part from the whole document's
#: Markdown, so a prompt over a long document with a large budget stays bounded in time.
MAX_PART_READS = 64
#: URIs one prompt names as left out at most (a 2,000-page book has 40 page ranges).
MAX_LISTED = 100

# Why something is not embedded, as the prompt says it.
OVER_BUDGET = "over the budget of this prompt"
TOO_MANY_READS = f"past the {MAX_PART_READS} parts one prompt reads"
PENDING = "still being converted; it can be read once it is ready"
PARTLY = "embedded through its sub-sections only (its text before them is not)"
NO_TEXT = "no text to embed (its conversion failed)"
CHANGED = "changed since it was indexed; search again"
#: The order reasons are listed in.
_REASONS = (PARTLY, OVER_BUDGET, TOO_MANY_READS, PENDING, NO_TEXT, CHANGED)
_NO_TEXT_STATES = (DocumentState.FAILED, DocumentState.UNSUPPORTED)


@dataclass(slots=True)
class Budget:
    """Bytes of text a prompt (or one document of it) may still embed."""

    left: int

    def take(self, size: int) -> bool:
        """Spend ``size`` bytes if they fit."""
        if size > self.left:
            return False
        self.left -= size
        return True


@dataclass(frozen=True, slots=True)
class Target:
    """A document (or one part of it) a prompt's argument names, checked and converted."""

    uri: str  # as given: the document's URI or a part's
    record: DocumentRecord
    mime_type: str  # the format embedded: Markdown, else plain text
    size: int | None  # that format's size for a whole document; None for a part

    @property
    def is_part(self) -> bool:
        return self.uri != self.record.uri


@dataclass(slots=True)
class Embedded:
    """What a prompt embeds, and what it leaves out (URI, why)."""

    blocks: list[dict[str, Any]] = field(default_factory=list)
    left_out: list[tuple[str, str]] = field(default_factory=list)
    whole: bool = False  # one document, embedded whole

    def add(self, entry: dict[str, Any]) -> None:
        self.blocks.append({"type": "resource", "resource": embedded_resource(entry)})


def no_text(record: DocumentRecord) -> wire.McpError:
    """-32602: the document names nothing a prompt can quote (its conversion failed, or no
    converter reads it); ``data.reason`` says why."""
    why = record.error_reason or str(record.state)
    detail = f"{why}: {record.error_message}" if record.error_message else why
    return wire.McpError(
        wire.INVALID_PARAMS,
        f"{record.uri} has no text to embed ({detail}); its original can still be read "
        "with resources/read",
        {"uri": record.uri, "reason": why},
    )


class Embedder:
    """Reads for one ``prompts/get``: targets checked, documents and hits embedded."""

    def __init__(self, resources: ResourceService, ctx: RequestContext) -> None:
        self.resources = resources
        self.ctx = ctx
        self.reads = 0

    # -- what an argument names --------------------------------------------------------------

    def target(self, uri: str) -> Target:
        """The document or part ``uri`` names, its document converted (within the read
        wait). Raises what ``resources/read`` raises for a URI that names nothing, or a
        document still converting; :func:`no_text` for one with no text."""
        document_uri, query = split_uri(uri)
        record = self.resources.documents.require(self.ctx, document_uri)
        if record.state in _NO_TEXT_STATES:
            raise no_text(record)
        record = self.resources.documents.converted(self.ctx, record)
        if record.pending:
            raise still_converting(uri, "to be embedded in a prompt")
        if record.state in _NO_TEXT_STATES:
            raise no_text(record)
        if query is not None:
            self.resources.parts.require(self.ctx, uri)  # the part exists
            return Target(uri, record, TEXT_MARKDOWN, None)
        by_type = {v.mime_type: v for v in record.variants}
        variant = by_type.get(TEXT_MARKDOWN) or by_type.get(TEXT_PLAIN)
        if variant is None:
            raise no_text(record)
        return Target(uri, record, variant.mime_type, variant.size)

    # -- one document --------------------------------------------------------------------------

    def document(self, target: Target, budget: Budget) -> Embedded:
        """``target`` whole if it fits ``budget``; a document that does not, part by part in
        document order until the budget is spent. A part that does not fit is left out."""
        embedded = Embedded()
        if target.is_part:
            entry = self.read(target.uri, target.mime_type)
            if entry is not None and budget.take(entry["size"]):
                embedded.add(entry)
            else:
                embedded.left_out.append((target.uri, OVER_BUDGET))
            return embedded
        if target.size is not None and target.size <= budget.left:
            entry = self.read(target.uri, target.mime_type)
            if entry is not None and budget.take(entry["size"]):
                embedded.add(entry)
                embedded.whole = True
                return embedded
        record = target.record
        if target.mime_type != TEXT_MARKDOWN:  # parts are cut from the Markdown
            embedded.left_out.append((record.uri, OVER_BUDGET))
        elif record.page_count:
            self._pages(record, target.size or 0, budget, embedded)
        elif record.outline:
            _Sections(self, record, budget, embedded).walk()
        else:
            embedded.left_out.append((record.uri, OVER_BUDGET))  # nothing smaller to embed
        return embedded

    def _pages(self, record: DocumentRecord, size: int, budget: Budget, embedded: Embedded) -> None:
        """Page ranges from page 1, each as many pages as the budget left is estimated to
        hold (at most a part's 50); a range that turns out too large is read again shorter,
        from what it measured, down to one page. The pages left out are named in ranges a
        read can return."""
        pages = record.page_count or 0
        per_page = max(1, size // pages)
        first, why = 1, OVER_BUDGET
        while first <= pages and budget.left > 0:
            if self.reads >= MAX_PART_READS:
                why = TOO_MANY_READS
                break
            count = min(MAX_PART_PAGES, pages - first + 1, max(1, budget.left // per_page))
            entry = self.read(f"{record.uri}?{pages_query(first, first + count - 1)}")
            measured = entry["size"] if entry is not None else self.resources.max_read_bytes + 1
            if entry is not None and budget.take(measured):
                embedded.add(entry)
                first += count
                continue
            if count == 1:
                break
            per_page = max(per_page + 1, -(-measured // count))
        # Named in ranges one read can return: three quarters of the cap, by the estimate.
        step = min(MAX_PART_PAGES, max(1, self.resources.max_read_bytes * 3 // 4 // per_page))
        for start in range(first, pages + 1, step):
            end = min(pages, start + step - 1)
            embedded.left_out.append((f"{record.uri}?{pages_query(start, end)}", why))

    # -- search hits ---------------------------------------------------------------------------

    def hits(self, hits: Sequence[SearchHit], budget: Budget) -> Embedded:
        """The parts (or documents) that matched, best first, each once: nothing inside a
        document or section already embedded, and no whole document some part of which
        is. A document still being converted is named, not waited for."""
        embedded = Embedded()
        covered: set[str] = set()  # embedded, or inside what is
        whole: set[str] = set()  # documents embedded whole
        partly: set[str] = set()  # documents some part of which is embedded
        for hit in hits:
            if hit.uri in covered or hit.document_uri in whole:
                continue
            if not hit.part and hit.document_uri in partly:
                continue
            covered.add(hit.uri)
            try:
                record = self.resources.documents.require(self.ctx, hit.document_uri)
            except wire.McpError:
                continue  # deleted since the search
            entry, why = self._hit(hit, record, budget)
            if entry is None:
                embedded.left_out.append((hit.uri, why))
                continue
            embedded.add(entry)
            (partly if hit.part else whole).add(hit.document_uri)
            covered.update(_inside(record, hit.part))
        return embedded

    def _hit(
        self, hit: SearchHit, record: DocumentRecord, budget: Budget
    ) -> tuple[dict[str, Any] | None, str]:
        """The read of what ``hit`` names, its size taken from ``budget``; or None and why."""
        if record.pending:
            return None, PENDING
        if record.state in _NO_TEXT_STATES:
            return None, NO_TEXT
        if self.reads >= MAX_PART_READS:
            return None, TOO_MANY_READS
        if hit.part:
            try:
                entry = self.read(hit.uri)
            except wire.McpError:  # its parts changed with the document
                return None, CHANGED
        else:
            variant = next((v for v in record.variants if v.mime_type == TEXT_MARKDOWN), None)
            if variant is None or variant.size is None:
                return None, NO_TEXT
            if variant.size > budget.left:
                return None, OVER_BUDGET
            entry = self.read(record.uri, TEXT_MARKDOWN)
        if entry is None or not budget.take(entry["size"]):
            return None, OVER_BUDGET
        return entry, ""

    def read(self, uri: str, mime_type: str = TEXT_MARKDOWN) -> dict[str, Any] | None:
        """One format of a document or part through ``resources/read``'s path; None when
        the read cap left it out."""
        self.reads += 1
        contents = self.resources.read_formats(self.ctx, uri, mime_type)["contents"]
        return contents[0] if contents else None


class _Sections:
    """A document's sections in order, each embedded whole if it fits; one that does not is
    embedded through its sub-sections, if it has any (a section holds its sub-sections,
    down to the next heading of its level). The first that fits in no way spends the
    budget: it and every section after it are left out."""

    def __init__(
        self, embedder: Embedder, record: DocumentRecord, budget: Budget, embedded: Embedded
    ) -> None:
        self.embedder = embedder
        self.record = record
        self.budget = budget
        self.embedded = embedded
        self.uris, self.children = _section_tree(record)
        self.stopped: str | None = None

    def walk(self, siblings: Sequence[int] | None = None) -> None:
        for index in self.children[-1] if siblings is None else siblings:
            uri = self.uris[index]
            if self.stopped is None and self.embedder.reads >= MAX_PART_READS:
                self.stopped = TOO_MANY_READS
            if self.stopped is not None:
                self.embedded.left_out.append((uri, self.stopped))
                continue
            entry = self.embedder.read(uri)
            if entry is not None and self.budget.take(entry["size"]):
                self.embedded.add(entry)
                continue
            if not self.children[index]:
                self.stopped = OVER_BUDGET
                self.embedded.left_out.append((uri, OVER_BUDGET))
                continue
            blocks, left_out = len(self.embedded.blocks), len(self.embedded.left_out)
            self.walk(self.children[index])
            if len(self.embedded.blocks) > blocks:
                self.embedded.left_out.insert(left_out, (uri, PARTLY))
            else:  # nothing of it fitted: name the section, not each of its sub-sections
                del self.embedded.left_out[left_out:]
                self.embedded.left_out.append((uri, self.stopped or OVER_BUDGET))


def _section_tree(record: DocumentRecord) -> tuple[list[str], dict[int, list[int]]]:
    """The part URI of each outline entry, and each entry's direct sub-sections (-1: the
    top level), from the entries' levels as the part reader cuts sections."""
    titles = [title for title, _, _ in record.outline]
    uris = [f"{record.uri}?{section_query(slug)}" for slug in unique_slugs(titles)]
    children: dict[int, list[int]] = defaultdict(list)
    open_sections: list[int] = []
    for index, (_, level, _) in enumerate(record.outline):
        while open_sections and record.outline[open_sections[-1]][1] >= level:
            open_sections.pop()
        children[open_sections[-1] if open_sections else -1].append(index)
        open_sections.append(index)
    return uris, children


def _inside(record: DocumentRecord, part: str) -> set[str]:
    """The URIs an embedded section covers besides its own: its sub-sections, as far as
    the outline says."""
    if not part or record.page_count or not record.outline:
        return set()
    uris, children = _section_tree(record)
    try:
        start = uris.index(f"{record.uri}?{part}")
    except ValueError:
        return set()
    found: set[str] = set()
    pending = list(children[start])
    while pending:
        index = pending.pop()
        found.add(uris[index])
        pending.extend(children[index])
    return found


def left_out_text(left_out: Sequence[tuple[str, str]], budget: int) -> str | None:
    """The text block that names what a prompt left out, by reason; None if nothing."""
    if not left_out:
        return None
    by_reason: dict[str, list[str]] = defaultdict(list)
    for uri, why in left_out:
        by_reason[why].append(uri)
    lines = [
        "Not embedded in this prompt (read any of these with resources/read or the "
        "read_document tool if you need it):"
    ]
    listed = 0
    for why in _REASONS:
        uris = by_reason.get(why, [])
        if not uris:
            continue
        shown = uris[: max(0, MAX_LISTED - listed)]
        listed += len(shown)
        label = f"{why} ({mb_budget(budget)})" if why == OVER_BUDGET else why
        lines.append("")
        lines.append(f"{label}:")
        lines.extend(f"- {uri}" for uri in shown)
        if len(shown) < len(uris):
            lines.append(f"- and {len(uris) - len(shown)} more")
    return "\n".join(lines)


def mb_budget(budget: int) -> str:
    """A budget as the prompt states it, naming the setting that decides it."""
    return f"{mb(budget)}, DOCSHELF_MAX_READ_MB"
