"""A PDF's outline (bookmarks) with their pages, resolving only the destinations it uses.

pypdf's ``reader.outline`` first resolves every named destination in the
document. LaTeX's hyperref names one for every section, equation, theorem and
page, so for a 117-page lecture script that was 2,400 objects read and ~80 ms
(as long as PDFium takes for all its page text) to find the pages of 35
bookmarks. This walks the same pypdf objects but looks each name up in the
name tree (by its /Limits) only when a bookmark uses it.

It reads what pypdf's outline reads: /Title; a GoTo action's /D, else /Dest
(or its /D); a destination array's page; a name or string through the
catalog's /Dests, else its /Names /Dests tree. Damaged outlines give what
could be read: cycles and depth are bounded, errors end the branch.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pypdf import PdfReader
from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject

from docshelf.converters.base import OutlineEntry
from docshelf.converters.pdf.meta import READ_ERRORS
from docshelf.converters.textutil import collapse_whitespace

#: At most this many bookmarks are read: a malformed outline can be huge or loop.
MAX_OUTLINE_ENTRIES = 5000
#: Deeper outlines or name trees are malformed.
MAX_DEPTH = 64


def read_outline(reader: PdfReader) -> tuple[OutlineEntry, ...]:
    """Bookmarks as outline entries, in document order, children one level deeper."""
    try:
        catalog: Any = reader.trailer["/Root"].get_object()
        outlines = _resolved(catalog.get("/Outlines"))
        if not isinstance(outlines, DictionaryObject):
            return ()
        first = _resolved(outlines.get("/First"))
    except READ_ERRORS:
        return ()
    destinations = _NamedDestinations(catalog)
    pages = _PageNumbers(reader)
    entries: list[OutlineEntry] = []
    for level, item in _items(first, 1, set()):
        if len(entries) >= MAX_OUTLINE_ENTRIES:
            break
        try:
            title = collapse_whitespace(str(_resolved(item.get("/Title")) or ""))
            if title:
                page = pages.number(destinations.array(_destination(item)))
                entries.append(OutlineEntry(title=title, level=level, page=page))
        except READ_ERRORS:
            continue
    return tuple(entries)


def _resolved(value: Any) -> Any:
    return value.get_object() if isinstance(value, IndirectObject) else value


def _items(node: Any, level: int, seen: set[int]) -> Iterator[tuple[int, DictionaryObject]]:
    """Outline items depth first: an item, its children (one level deeper), its next sibling."""
    if level > MAX_DEPTH:
        return
    while isinstance(node, DictionaryObject) and id(node) not in seen:
        if len(seen) >= 4 * MAX_OUTLINE_ENTRIES:
            return
        seen.add(id(node))
        yield level, node
        try:
            children = _resolved(node.get("/First"))
            yield from _items(children, level + 1, seen)
            node = _resolved(node.get("/Next"))
        except READ_ERRORS:
            return


def _destination(item: DictionaryObject) -> Any:
    """A GoTo action's /D, else /Dest (or the /D of a /Dest dictionary)."""
    action = _resolved(item.get("/A"))
    if action is not None:
        if isinstance(action, DictionaryObject) and action.get("/S") == "/GoTo":
            return _resolved(action.get("/D"))
        return None
    destination = _resolved(item.get("/Dest"))
    if isinstance(destination, DictionaryObject):
        return _resolved(destination.get("/D"))
    return destination


class _NamedDestinations:
    """Destination arrays of names, looked up on demand and remembered."""

    def __init__(self, catalog: Any) -> None:
        self._dests: DictionaryObject | None = None
        self._tree: DictionaryObject | None = None
        try:
            dests = _resolved(catalog.get("/Dests"))
            if isinstance(dests, DictionaryObject):
                self._dests = dests
            else:
                names = _resolved(catalog.get("/Names"))
                if isinstance(names, DictionaryObject):
                    tree = _resolved(names.get("/Dests"))
                    self._tree = tree if isinstance(tree, DictionaryObject) else None
        except READ_ERRORS:
            pass
        self._found: dict[str, Any] = {}

    def array(self, destination: Any) -> ArrayObject | None:
        """``destination`` itself when it is an array, else the array it names."""
        if isinstance(destination, ArrayObject):
            return destination
        if not isinstance(destination, str):
            return None
        name = str(destination)
        if name not in self._found:
            self._found[name] = self._look_up(name)
        value = _resolved(self._found[name])
        if isinstance(value, DictionaryObject):
            value = _resolved(value.get("/D"))
        return value if isinstance(value, ArrayObject) else None

    def _look_up(self, name: str) -> Any:
        if self._dests is not None:
            return self._dests.get(name)
        if self._tree is None:
            return None
        found = _in_tree(self._tree, name, narrow=True, depth=0, seen=set())
        if found is None:  # /Limits missing or not in the order we compare: search it all
            found = _in_tree(self._tree, name, narrow=False, depth=0, seen=set())
        return found


def _in_tree(node: Any, name: str, *, narrow: bool, depth: int, seen: set[int]) -> Any:
    """The value under ``name`` in a name tree; ``narrow`` follows /Limits only."""
    node = _resolved(node)
    if not isinstance(node, DictionaryObject) or depth > MAX_DEPTH or id(node) in seen:
        return None
    seen.add(id(node))
    names = _resolved(node.get("/Names"))
    if isinstance(names, ArrayObject):
        for index in range(0, len(names) - 1, 2):
            if str(names[index]) == name:
                return names[index + 1]
        return None
    kids = _resolved(node.get("/Kids"))
    if not isinstance(kids, ArrayObject):
        return None
    for kid in kids:
        kid = _resolved(kid)
        limits = _resolved(kid.get("/Limits")) if isinstance(kid, DictionaryObject) else None
        outside = (
            isinstance(limits, ArrayObject)
            and len(limits) == 2
            and not str(limits[0]) <= name <= str(limits[1])
        )
        if narrow and outside:
            continue
        found = _in_tree(kid, name, narrow=narrow, depth=depth + 1, seen=seen)
        if found is not None:
            return found
    return None


class _PageNumbers:
    """1-based page numbers of page objects (the page tree is read on first use)."""

    def __init__(self, reader: PdfReader) -> None:
        self._reader = reader
        self._by_object: dict[int, int] | None = None

    def number(self, array: ArrayObject | None) -> int | None:
        if array is None or len(array) < 2 or not isinstance(array[0], IndirectObject):
            return None
        if self._by_object is None:
            try:
                self._by_object = {
                    page.indirect_reference.idnum: index
                    for index, page in enumerate(self._reader.pages, start=1)
                    if page.indirect_reference is not None
                }
            except READ_ERRORS:
                self._by_object = {}
        return self._by_object.get(array[0].idnum)
