"""``completion/complete`` for the shelves' resource template (server/utilities/completion).

``docshelf://{shelf}/{+path}{?pages,section}``: ``path`` completes to the
indexed paths of that shelf starting with what was typed; ``section``, once
``path`` is known (``context.arguments``), to the document's section slugs;
``pages`` to its page numbers. At most 100 values, with ``total`` and
``hasMore`` ("Completion Results").
"""

from __future__ import annotations

from typing import Any

from docshelf.app.mcp import wire
from docshelf.app.mcp.context import RequestContext, WouldBlock
from docshelf.app.mcp.params import CompleteParams
from docshelf.app.mcp.resources import ResourceService
from docshelf.converters.parts import unique_slugs
from docshelf.storage.catalog import NotCached
from docshelf.storage.uris import InvalidUri, build_uri

MAX_VALUES = 100  # "MUST NOT exceed 100 items"


class Completer:
    def __init__(self, resources: ResourceService) -> None:
        self.resources = resources

    @property
    def templates(self) -> dict[str, str]:
        """Template → shelf, for the shelves served now (a stdio server's roots change)."""
        return {
            f"docshelf://{name}/{{+path}}{{?pages,section}}": name
            for name in self.resources.shelves
        }

    def complete(self, ctx: RequestContext, params: CompleteParams) -> dict[str, Any]:
        shelf = self.templates.get(params.template)
        if shelf is None:
            raise wire.McpError(
                wire.INVALID_PARAMS,
                f"completion/complete: no resource template {params.template!r}; "
                "see resources/templates/list",
            )
        if params.argument == "path":
            if not ctx.may_block:
                raise WouldBlock  # a range scan of the index
            values, total = self.resources.catalog.paths(shelf, params.value, MAX_VALUES)
            return _result(values, total)
        if params.argument in ("section", "pages"):
            record = self._document(ctx, shelf, params.context.get("path"))
            if record is None:
                return _result([], 0)
            if params.argument == "section":
                slugs = unique_slugs(title for title, _, _ in record.outline)
                matching = [s for s in slugs if s.startswith(params.value)]
            else:
                pages = (str(n) for n in range(1, (record.page_count or 0) + 1))
                matching = [p for p in pages if p.startswith(params.value)]
            return _result(matching[:MAX_VALUES], len(matching))
        raise wire.McpError(
            wire.INVALID_PARAMS,
            f"completion/complete: the template has no argument {params.argument!r} "
            "(it has path, pages and section)",
        )

    def _document(self, ctx: RequestContext, shelf: str, path: str | None) -> Any:
        if not path:
            return None  # nothing to complete against until the path is chosen
        try:
            uri = build_uri(shelf, path)
        except InvalidUri:
            return None
        try:
            return self.resources.catalog.get(uri, cached_only=not ctx.may_block)
        except NotCached:
            raise WouldBlock from None


def _result(values: list[str], total: int) -> dict[str, Any]:
    return {"completion": {"values": values, "total": total, "hasMore": total > len(values)}}
