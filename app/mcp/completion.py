"""``completion/complete`` (server/utilities/completion) for the shelves' resource template
and the prompts' arguments.

``docshelf://{shelf}/{+path}{?pages,section}``: ``path`` completes to the
indexed paths of that shelf starting with what was typed; ``section``, once
``path`` is known (``context.arguments``), to the document's section slugs;
``pages`` to its page numbers.

A prompt's (app.mcp.prompts) document arguments complete to the URIs of documents
starting with what was typed, its ``path_prefix`` to the paths and folders below what
was typed; free text (``question``) to nothing. At most 100 values, with ``total`` where
it is known and ``hasMore`` ("Completion Results").
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from docshelf.app.mcp import wire
from docshelf.app.mcp.context import RequestContext, WouldBlock
from docshelf.app.mcp.params import CompleteParams
from docshelf.app.mcp.prompts import PROMPTS, Completes, unknown_prompt
from docshelf.app.mcp.resources import ResourceService
from docshelf.converters.parts import unique_slugs
from docshelf.storage.catalog import NotCached
from docshelf.storage.uris import PREFIX, InvalidUri, build_uri

MAX_VALUES = 100  # "MUST NOT exceed 100 items"
#: Paths read to find the folders and files below a typed path prefix: a folder of more
#: files than this before the next one leaves ``total`` unknown (``hasMore`` says so).
FOLDER_SCAN = 1000
# A percent-escape cut short at the end of what was typed ("%", "%C").
_PARTIAL_ESCAPE = re.compile(r"%[0-9A-Fa-f]?$")
_LAST_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}$")


def typed_path(typed: str) -> str | None:
    """The path prefix a typed, percent-encoded URI path stands for, to look up in the
    index: an escape cut short at the end is dropped, and so are the escapes of a UTF-8
    character not typed to its end. None if it is no percent-encoded UTF-8 at all.

    Only a search key: what completion offers are URIs built from indexed paths
    (storage.uris), never this."""
    typed = _PARTIAL_ESCAPE.sub("", typed)
    for _ in range(4):  # a UTF-8 character is at most four escapes long
        try:
            return unquote(typed, errors="strict")
        except UnicodeDecodeError:
            typed = _LAST_ESCAPE.sub("", typed)
    return None


def _next_level(path: str, prefix: str) -> str:
    """``path`` up to and including the first ``/`` after ``prefix``: a folder, or the
    file itself if none follows."""
    slash = path.find("/", len(prefix))
    return path if slash < 0 else path[: slash + 1]


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
        if params.prompt is not None:
            return self._prompt(ctx, params.prompt, params)
        shelf = self.templates.get(params.template or "")
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

    # -- prompts' arguments -----------------------------------------------------------------

    def _prompt(self, ctx: RequestContext, name: str, params: CompleteParams) -> dict[str, Any]:
        prompt = PROMPTS.get(name)
        if prompt is None:
            raise unknown_prompt(name, "completion/complete")
        argument = prompt.argument(params.argument)
        if argument is None:
            raise wire.McpError(
                wire.INVALID_PARAMS,
                f"completion/complete: the prompt {name!r} has no argument "
                f"{params.argument!r} (it has "
                f"{', '.join(a.name for a in prompt.arguments)})",
            )
        if argument.completes is Completes.NOTHING:
            return _result([], 0)
        if not ctx.may_block:
            raise WouldBlock  # range scans of the index
        if argument.completes is Completes.PATH:
            return self._folders(params.value)
        return self._document_uris(params.value)

    def _document_uris(self, typed: str) -> dict[str, Any]:
        """The URIs of documents starting with ``typed``: on every shelf whose root URI
        starts with it, or on the one whose root it starts with (the rest decoded to a
        path prefix for the path range scan)."""
        values: list[str] = []
        total = 0
        for shelf in sorted(self.resources.shelves):
            root = f"{PREFIX}{shelf}/"
            if root.startswith(typed):
                prefix: str | None = ""
            elif typed.startswith(root) and "?" not in typed:  # documents, not parts
                prefix = typed_path(typed[len(root) :])
            else:
                continue
            if prefix is None:
                continue
            paths, count = self.resources.catalog.paths(shelf, prefix, MAX_VALUES - len(values))
            values.extend(build_uri(shelf, path) for path in paths)
            total += count
        return _result(values, total)

    def _folders(self, typed: str) -> dict[str, Any]:
        """The folders and files one level below ``typed``, on every shelf (a
        ``path_prefix`` searches them all): ``guides/`` for ``gu``."""
        found: set[str] = set()
        complete = True
        for shelf in sorted(self.resources.shelves):
            paths, count = self.resources.catalog.paths(shelf, typed, FOLDER_SCAN)
            found.update(_next_level(path, typed) for path in paths)
            complete = complete and count <= len(paths)
        values = sorted(found)
        return _result(values[:MAX_VALUES], len(values) if complete else None)


def _result(values: list[str], total: int | None) -> dict[str, Any]:
    """A ``CompleteResult``; ``total`` None where it is not known (then there are more)."""
    completion: dict[str, Any] = {"values": values}
    if total is None:
        completion["hasMore"] = True
    else:
        completion["total"] = total
        completion["hasMore"] = total > len(values)
    return {"completion": completion}
