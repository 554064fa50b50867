"""What a search answer says about what it could not read (issue 28, "honest search").

The catalog comes first and conversion after (DESIGN D11), so a search may run while
documents are listed but their text is not in the index yet, or never will be; an
answer that does not say so reads as "nothing matches" where the truth is "not yet" or
"not by its text". Every ``search_documents`` answer therefore carries the counts of
:func:`storage.completeness.completeness` within its own filters, whether the first
catalog pass is done, and the same in sentences (``notice``, and the last paragraph of
the Markdown shape), so that the JSON and the Markdown answers say it alike (the
content negotiation SEP's "Tool Results").
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from docshelf.storage.completeness import Completeness, completeness
from docshelf.storage.database import Database
from docshelf.storage.search import Filters

#: The members of a search's ``outputSchema`` (server/tools "Output Schema") that say what
#: it could not read; ``notice`` is there only when there is something to say.
COMPLETENESS_PROPERTIES: dict[str, dict[str, Any]] = {
    "pending": {
        "type": "integer",
        "minimum": 0,
        "description": "Documents still waiting for conversion: their text is not searched "
        "yet, only their titles and paths",
    },
    "unsearchable": {
        "type": "integer",
        "minimum": 0,
        "description": "Documents that could not be converted (failed, or no converter reads "
        "the type): searched by title and path only",
    },
    "ocrPending": {
        "type": "integer",
        "minimum": 0,
        "description": "Documents whose scanned pages wait for OCR: the text on those pages is "
        "not searched yet",
    },
    "catalogComplete": {
        "type": "boolean",
        "description": "false while the shelf's first catalog pass runs: files not catalogued "
        "yet are not searched at all",
    },
}
NOTICE_PROPERTY = {
    "notice": {
        "type": "string",
        "description": "What the search could not read, in sentences; absent when it read "
        "everything",
    }
}


def what_was_not_read(
    database: Database, filters: Filters, shelves: Collection[str], catalogued: bool
) -> dict[str, Any]:
    """The members of a search's structured result that say what it could not read,
    counted within ``filters`` (a filter on the only shelf there is filters nothing and is
    left out: the count without filters never leaves its index)."""
    if filters.shelf is not None and len(shelves) == 1:
        filters = Filters(None, filters.mime_type, filters.path_prefix, filters.served)
    unread = completeness(database, filters)
    members: dict[str, Any] = {
        "pending": unread.pending,
        "unsearchable": unread.unsearchable,
        "ocrPending": unread.ocr_pending,
        "catalogComplete": catalogued,
    }
    notice = completeness_notice(unread, catalogued)
    if notice:
        members["notice"] = notice
    return members


def completeness_notice(unread: Completeness, catalogued: bool) -> str | None:
    """What a search did not read, in sentences (None when it read everything)."""
    sentences = []
    if not catalogued:
        sentences.append(
            "The shelf is still being catalogued: files not catalogued yet are not searched at all."
        )
    if unread.pending:
        sentences.append(
            f"{_documents(unread.pending)} still waiting for conversion: until then a search "
            f"finds {_them(unread.pending)} by title and path only; search again shortly."
        )
    if unread.unsearchable:
        sentences.append(
            f"{_documents(unread.unsearchable)} not searched by content (conversion failed or "
            f"no converter reads the type): a search finds {_them(unread.unsearchable)} by "
            "title and path only."
        )
    if unread.ocr_pending:
        sentences.append(
            f"{_documents(unread.ocr_pending, 'has', 'have')} scanned pages waiting for OCR: "
            "the text on those pages is not searched yet."
        )
    return " ".join(sentences) or None


def _documents(count: int, one: str = "is", many: str = "are") -> str:
    """ "1 document is", "2,500 documents are"."""
    return f"{count:,} document{'s' if count != 1 else ''} {one if count == 1 else many}"


def _them(count: int) -> str:
    return "it" if count == 1 else "them"
