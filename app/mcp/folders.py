"""Folders as listable resources: SEP-2093 "Resource Contents Metadata and Resource
Capabilities" (draft), the protocol side.

A folder is the resource ``docshelf://SHELF/PATH/`` (``docshelf://SHELF/``: the shelf's
root), found in the index (:mod:`storage.folders`) while a document lies below it.

- §2 "Per-Resource capabilities": every Resource this service hands a client that
  declared :data:`wire.EXTENSION_FOLDERS` carries ``capabilities`` — a folder
  ``{"list": true, "subscribe": true}``, a document or a part ``{"list": false,
  "subscribe": true}``. Clients that did not declare it see no such field.
- §4 "Extend resources/list with URI Scoping": ``resources/list {uri: FOLDER}`` lists
  the folder's direct children, documents and sub-folders, paged, for any client. A
  client that declared the extension gets the shelves' root folders from an unscoped
  ``resources/list`` ("its default resource list"); any other keeps the flat list of
  every document.
- §5 "For Listable Resources": reading a folder returns its first page of children, each
  under its own URI with its own metadata and a short Markdown card as ``text``; the
  result's ``_meta`` says where ``resources/list`` carries on.
- §3 ``resources/metadata`` of a folder: the folder's Resource.

Everything that is not a folder goes to :class:`ResourceService` as before.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from docshelf.app.mcp import parts, wire
from docshelf.app.mcp.context import RequestContext, WouldBlock
from docshelf.app.mcp.cursor import InvalidCursor, decode_cursor, encode_cursor
from docshelf.app.mcp.documents import resource_object
from docshelf.app.mcp.params import ListResourcesParams, PageParams, UriParams
from docshelf.app.mcp.resources import ResourceService
from docshelf.storage.catalog import DocumentRecord
from docshelf.storage.folders import Child, FolderIndex
from docshelf.storage.models import DocumentState
from docshelf.storage.uris import InvalidUri, build_uri, folder_uri, parse_folder_uri

# SEP §6: "For listable resources, mimeType MAY indicate the container type (e.g.,
# inode/directory)".
FOLDER_MIME_TYPE = "inode/directory"
CARD_MIME_TYPE = "text/markdown"
# Documents below a folder are counted up to this many: a count reads an index entry per
# document, and a read counts below each of up to a page of folders.
COUNTED = 1_000
# Which array of each method's result holds its Resources (§2: "Servers SHOULD set
# capabilities on all resources").
RESOURCE_ARRAYS = {
    "resources/list": "resources",
    "resources/read": "contents",
    "resources/metadata": "metadata",
}


def is_folder_uri(uri: str) -> bool:
    """Whether ``uri`` has a folder's form (a document's never ends in a slash)."""
    return uri.endswith("/") and "?" not in uri


def capabilities_of(uri: str) -> dict[str, bool]:
    """SEP §2 ``ResourceCapabilities`` of the resource at ``uri``: only folders list; every
    resource can be subscribed to (a part's subscriber hears of its document's changes)."""
    return {"list": is_folder_uri(uri), "subscribe": True}


def folder_resource(shelf: str, prefix: str) -> dict[str, Any]:
    """The Resource of the folder ``prefix`` (``""``: the root) on ``shelf``. No ``size``,
    and no ``lastModified``: the newest document below a folder would cost a read of every
    row below it."""
    path = prefix.rstrip("/")
    return {
        "uri": folder_uri(shelf, path),
        "name": path.rpartition("/")[2] or shelf,
        "title": path if path else f"Shelf {shelf}",
        "mimeType": FOLDER_MIME_TYPE,
        "_meta": {wire.META_FOLDER: {"shelf": shelf, "path": prefix}},
    }


class FolderService:
    """``resources/list``, ``resources/read`` and ``resources/metadata`` as the kernel's
    method table calls them: folders here, the rest by ``resources``."""

    def __init__(self, resources: ResourceService) -> None:
        self.resources = resources
        self.index = FolderIndex(resources.catalog.database)

    # -- methods ---------------------------------------------------------------------------

    def list_resources(self, ctx: RequestContext, params: ListResourcesParams) -> dict[str, Any]:
        if params.uri is not None:
            result = self._children(ctx, params.uri, params.cursor)
        elif ctx.folders:
            result = self._roots(params.cursor)
        else:
            result = self.resources.list_resources(ctx, PageParams(params.cursor))
        return _described(ctx, "resources/list", result)

    def read(self, ctx: RequestContext, params: UriParams) -> dict[str, Any]:
        if not is_folder_uri(params.uri):
            return _described(ctx, "resources/read", self.resources.read(ctx, params))
        shelf, prefix = self._require(ctx, params.uri)
        children, more = self.index.children(shelf, prefix, None, self.resources.page_size)
        folders = [child.key for child in children if child.folder]
        counts = self.index.counts(shelf, folders, COUNTED + 1)
        contents = self._cards(shelf, children, counts) or [self._empty_card(shelf, prefix)]
        folder = {"shelf": shelf, "path": prefix}
        result: dict[str, Any] = {"contents": contents, "_meta": {wire.META_FOLDER: folder}}
        if more:
            # SEP §5: "NOT guaranteed to be complete"; "clients SHOULD use resources/list".
            result["_meta"][wire.META_NEXT_CURSOR] = _cursor(shelf, children[-1])
        return _described(ctx, "resources/read", result)

    def metadata(self, ctx: RequestContext, params: UriParams) -> dict[str, Any]:
        if not is_folder_uri(params.uri):
            return _described(ctx, "resources/metadata", self.resources.metadata(ctx, params))
        shelf, prefix = self._require(ctx, params.uri)
        resource = folder_resource(shelf, prefix)
        _count(resource, self.index.count(shelf, prefix, COUNTED + 1))
        return _described(ctx, "resources/metadata", {"metadata": [resource]})

    def subscription_uri(self, ctx: RequestContext, uri: str) -> str:
        """What ``resources/subscribe`` keeps for ``uri``: a folder as it is (its subscriber
        hears of every document added, changed or removed below it), else what
        :meth:`ResourceService.subscription_uri` keeps."""
        if not is_folder_uri(uri):
            return self.resources.subscription_uri(ctx, uri)
        self._require(ctx, uri)
        return uri

    # -- folders ---------------------------------------------------------------------------

    def _require(self, ctx: RequestContext, uri: str) -> tuple[str, str]:
        """(shelf, path prefix) of the folder at ``uri``; the era's resource-not-found error
        (2025-11-25 -32002, 2026-07-28 -32602) saying why if there is none."""
        if not ctx.may_block:
            raise WouldBlock
        try:
            shelf, prefix = parse_folder_uri(uri)
        except InvalidUri:
            raise ctx.era.resource_not_found(
                uri,
                f"Resource not found: {_short(uri)} is not a folder URI this server makes "
                "(docshelf://SHELF/ or docshelf://SHELF/PATH/, each path segment "
                "percent-encoded as in the documents' URIs)",
            ) from None
        if shelf not in self.resources.shelves:
            raise ctx.era.resource_not_found(
                uri,
                f"Resource not found: there is no shelf {shelf!r}; the shelves are "
                f"{', '.join(sorted(self.resources.shelves))}",
            )
        self.resources.first_pass()
        if prefix and not self.index.exists(shelf, prefix):
            raise ctx.era.resource_not_found(
                uri,
                f"Resource not found: no document lies below {_short(uri)}; list "
                f"docshelf://{shelf}/ to see the shelf's folders",
            )
        return shelf, prefix

    def _children(self, ctx: RequestContext, uri: str, cursor: str | None) -> dict[str, Any]:
        """SEP §4: the direct children of the folder ``uri``, one page."""
        if not is_folder_uri(uri):
            raise wire.McpError(
                wire.INVALID_PARAMS,
                f"resources/list: {_short(uri)} cannot be listed: only folders can "
                '(URIs ending in "/", with capabilities.list true, such as '
                "docshelf://SHELF/); read a document with resources/read",
                {"uri": uri},
            )
        shelf, prefix = self._require(ctx, uri)
        after = _resume_after(uri, shelf, prefix, cursor) if cursor is not None else None
        children, more = self.index.children(shelf, prefix, after, self.resources.page_size)
        resources = self._resources(shelf, children)
        result: dict[str, Any] = {"resources": resources}
        if more:
            result["nextCursor"] = _cursor(shelf, children[-1])
        return result

    def _roots(self, cursor: str | None) -> dict[str, Any]:
        """The unscoped list of a client that declared the extension: the shelves' roots."""
        after = _decoded(cursor) if cursor is not None else ""
        size = self.resources.page_size
        shelves = [s for s in sorted(self.resources.shelves) if folder_uri(s, "") > after]
        result: dict[str, Any] = {"resources": [folder_resource(s, "") for s in shelves[:size]]}
        if len(shelves) > size:
            result["nextCursor"] = encode_cursor(folder_uri(shelves[size - 1], ""))
        return result

    def _resources(self, shelf: str, children: list[Child]) -> list[dict[str, Any]]:
        """The Resources of ``children``: a folder's, or the document's as the flat list has
        it. A document removed since the scan is left out."""
        records = self._records(shelf, children, outlines=False)
        resources = []
        for child in children:
            if child.folder:
                resources.append(folder_resource(shelf, child.key))
            elif (record := records.get(child.key)) is not None:
                resources.append(resource_object(record))
        return resources

    def _records(
        self, shelf: str, children: list[Child], *, outlines: bool
    ) -> dict[str, DocumentRecord]:
        files = [child.key for child in children if not child.folder]
        catalog = self.resources.catalog
        return {r.path: r for r in catalog.at_paths(shelf, files, outlines=outlines)}

    # -- a folder's read: its children, each with a card (SEP §5) ---------------------------

    def _cards(
        self, shelf: str, children: list[Child], counts: dict[str, int]
    ) -> list[dict[str, Any]]:
        records = self._records(shelf, children, outlines=True)
        contents = []
        for child in children:
            if child.folder:
                entry = folder_resource(shelf, child.key)
                _count(entry, counts[child.key])
                entry["text"] = _folder_card(entry, counts[child.key])
            elif (record := records.get(child.key)) is not None:
                entry = resource_object(record)
                entry.pop("size", None)  # the document's, not the card's
                entry["text"] = _document_card(record, entry["annotations"]["lastModified"])
            else:
                continue
            entry["mimeType"] = CARD_MIME_TYPE
            contents.append(entry)
        return contents

    def _empty_card(self, shelf: str, prefix: str) -> dict[str, Any]:
        """The one entry of an empty shelf's root (or of a folder whose documents all went
        since its listing): never an empty ``contents``, which 2026-07-28 server/resources
        "Error Handling" reserves for a resource that does not exist."""
        entry = folder_resource(shelf, prefix)
        entry["mimeType"] = CARD_MIME_TYPE
        entry["text"] = f"## {entry['title']}\n\nNo documents here yet.\n"
        return entry


def _described(ctx: RequestContext, method: str, result: dict[str, Any]) -> dict[str, Any]:
    """SEP §2: each Resource in ``result`` with its ``capabilities``, for a client that
    declared the extension (others get the result as before)."""
    if ctx.folders:
        for resource in result.get(RESOURCE_ARRAYS[method], ()):
            resource["capabilities"] = capabilities_of(resource["uri"])
    return result


def _document_card(record: DocumentRecord, modified: str) -> str:
    """What a folder's read says of a document: enough to choose what to read next."""
    lines = [
        f"## {record.title}",
        "",
        f"- URI: {record.uri}",
        f"- Path: {record.path}",
        f"- Type: {record.mime_type}",
        f"- Size: {record.size:,} bytes",
    ]
    addressable = parts.document_parts(record) or {}
    if "pages" in addressable:
        lines.append(f"- Pages: {addressable['pages']['count']}")
    if outline := addressable.get("outline"):
        more = " or more" if addressable.get("outlineTruncated") else ""
        lines.append(f"- Sections: {len(outline)}{more}")
    lines.append(f"- Modified: {modified}")
    if record.state == DocumentState.PENDING:
        lines.append("- State: pending (its formats are being built)")
    elif record.error_reason:
        lines.append(f"- State: {record.state}, {record.error_reason}: {record.error_message}")
    return "\n".join(lines) + "\n"


def _count(resource: dict[str, Any], documents: int) -> None:
    """Say in a folder's ``_meta`` how many documents lie below it, as counted (a count
    past :data:`COUNTED` is ``COUNTED + 1``: "more than")."""
    meta = resource["_meta"][wire.META_FOLDER]
    meta["documents"] = min(documents, COUNTED)
    if documents > COUNTED:
        meta["documentsAtLeast"] = True


def _folder_card(resource: dict[str, Any], documents: int) -> str:
    uri = resource["uri"]
    if documents > COUNTED:
        below = f"More than {COUNTED:,} documents lie"
    else:
        below = f"{documents:,} document{' lies' if documents == 1 else 's lie'}"
    return (
        f"## {resource['name']}/\n\n- URI: {uri}\n- Folder: {resource['title']}/\n"
        f"- {below} below it; list its children with resources/list "
        f'{{"uri": "{uri}"}}\n'
    )


def _decoded(cursor: str) -> str:
    try:
        return decode_cursor(cursor)
    except InvalidCursor as exc:
        raise wire.McpError(wire.INVALID_PARAMS, f"Invalid cursor: {exc}") from exc


def _resume_after(uri: str, shelf: str, prefix: str, cursor: str) -> str:
    """The child key (storage.folders.Child) a cursor of the folder ``uri`` names: the
    cursor carries the URI of the last child listed, which only this folder's listing made."""
    after = _decoded(cursor)
    rest = after[len(uri) :] if after.startswith(uri) else ""
    name = rest.removesuffix("/")
    try:
        key = prefix + unquote(name, errors="strict") + rest[len(name) :]
        canonical = bool(name) and "/" not in name and _child_uri(shelf, key) == after
    except (UnicodeDecodeError, InvalidUri):
        canonical = False
    if not canonical:
        raise wire.McpError(
            wire.INVALID_PARAMS,
            f"Invalid cursor: it does not continue the listing of {_short(uri)}; "
            "start again without a cursor",
        )
    return key


def _cursor(shelf: str, last: Child) -> str:
    """The cursor of the page that ends with the child ``last``: its URI (cursor.py)."""
    return encode_cursor(_child_uri(shelf, last.key))


def _child_uri(shelf: str, key: str) -> str:
    """The URI of the child ``key``: a folder's (a trailing slash) or a document's."""
    return folder_uri(shelf, key[:-1]) if key.endswith("/") else build_uri(shelf, key)


def _short(uri: str) -> str:
    """``uri`` for an error message: a client's string, so bounded."""
    return uri if len(uri) <= 200 else uri[:200] + "…"
