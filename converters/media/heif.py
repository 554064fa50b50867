"""What a HEIF/HEIC image says about itself, without decoding it.

No HEVC decoder is available under a licence docshelf can ship (pillow-heif's
wheels are GPLv2, pi-heif's LGPLv3), so HEIC pixels stay unread. The metadata is
all in boxes: ``meta`` holds the items (``iinf``), where each item's bytes are
(``iloc``), which item is the picture (``pitm``), and its properties (``iprp``:
``ispe`` width and height, ``irot`` rotation); the EXIF block is an item of type
``Exif`` and the XMP packet a ``mime`` item of type ``application/rdf+xml``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from docshelf.converters.media.isobmff import Box, BoxError, Boxes, Cursor, fourcc

#: Items read from one file (a photo has a few dozen: tiles, thumbnails, metadata).
MAX_ITEMS = 10_000
#: Extents of all items together (a tiled photo has one per tile).
MAX_EXTENTS = 100_000
#: Bytes of one metadata item (EXIF, XMP) read at most.
MAX_ITEM_BYTES = 4 * 1024 * 1024
_XMP_TYPE = "application/rdf+xml"


@dataclass(frozen=True, slots=True)
class Heif:
    width: int | None
    height: int | None
    rotation: int  # degrees counter-clockwise, as irot says
    codec: str | None  # the primary item's type: "hvc1" (HEVC), "av01", "grid", ...
    exif: bytes | None  # TIFF bytes, ready for PIL.Image.Exif.load
    xmp: bytes | None


@dataclass(slots=True)
class _Item:
    kind: str = ""
    content_type: str = ""
    extents: tuple[tuple[int, int], ...] = ()
    in_idat: bool = False
    properties: tuple[int, ...] = ()


def read_heif(data: bytes) -> Heif:
    """The primary image's size and rotation, and the file's EXIF and XMP."""
    boxes = Boxes(data)
    meta = boxes.first(boxes.top(), b"meta")
    if meta is None:
        raise BoxError("no meta box: not a HEIF image")
    items: dict[int, _Item] = {}
    primary, properties, idat = None, [], None
    for box in boxes.inside(meta, 4):
        if box.kind == b"pitm":
            (version,) = boxes.unpack(box, 0, "B")
            (primary,) = boxes.unpack(box, 4, "I" if version else "H")
        elif box.kind == b"iinf":
            _item_infos(boxes, box, items)
        elif box.kind == b"iloc":
            _locations(boxes, box, items)
        elif box.kind == b"iprp":
            properties = _properties(boxes, box, items)
        elif box.kind == b"idat":
            idat = box
    item = items.get(primary) if primary is not None else None
    if item is None:
        raise BoxError("no primary item (pitm) among the items")
    width = height = None
    rotation = 0
    for index in item.properties:
        if 0 < index <= len(properties):
            prop = properties[index - 1]
            if prop.kind == b"ispe":
                width, height = boxes.unpack(prop, 4, "II")
            elif prop.kind == b"irot":
                rotation = (boxes.unpack(prop, 0, "B")[0] & 3) * 90
    exif = _item_bytes(data, idat, _first(items, lambda i: i.kind == "Exif"))
    if exif is not None and len(exif) >= 4:
        skip = int.from_bytes(exif[:4], "big")  # the TIFF header's offset after the field
        exif = exif[4 + skip :] if 4 + skip < len(exif) else None
    xmp = _item_bytes(data, idat, _first(items, lambda i: i.content_type == _XMP_TYPE))
    return Heif(width or None, height or None, rotation, item.kind or None, exif, xmp)


def _first(items: dict[int, _Item], test: Callable[[_Item], bool]) -> _Item | None:
    return next((item for item in items.values() if test(item)), None)


def _item(items: dict[int, _Item], item_id: int) -> _Item:
    if item_id not in items and len(items) >= MAX_ITEMS:
        raise BoxError(f"more than {MAX_ITEMS} items")
    return items.setdefault(item_id, _Item())


def _item_infos(boxes: Boxes, iinf: Box, items: dict[int, _Item]) -> None:
    (version,) = boxes.unpack(iinf, 0, "B")
    for infe in boxes.inside(iinf, 6 if version == 0 else 8):
        if infe.kind != b"infe":
            continue
        (entry_version,) = boxes.unpack(infe, 0, "B")
        if entry_version < 2:
            continue  # versions 0 and 1 predate item types: no images in them
        id_layout = "I" if entry_version >= 3 else "H"
        (item_id,) = boxes.unpack(infe, 4, id_layout)
        at = 4 + (4 if entry_version >= 3 else 2) + 2  # after the protection index
        item = _item(items, item_id)
        item.kind = fourcc(boxes.payload(infe, at, 4))
        if item.kind == "mime":
            strings = boxes.data[infe.body + at + 4 : infe.end].split(b"\0")
            if len(strings) > 1:
                item.content_type = strings[1].decode("ascii", "replace")


def _locations(boxes: Boxes, iloc: Box, items: dict[int, _Item]) -> None:
    """Each item's extents (offset, length) in the file, or in ``idat``."""
    (version,) = boxes.unpack(iloc, 0, "B")
    read = Cursor(boxes, iloc, 4)
    sizes, more = read.number(1), read.number(1)
    offset_size, length_size, base_size = sizes >> 4, sizes & 15, more >> 4
    index_size = more & 15 if version in (1, 2) else 0
    id_size = 4 if version == 2 else 2
    extents_left = MAX_EXTENTS
    for _ in range(read.number(id_size)):
        item_id = read.number(id_size)
        method = read.number(2) & 15 if version in (1, 2) else 0
        read.number(2)  # data reference index
        base = read.number(base_size)
        count = read.number(2)
        extents_left -= count
        if extents_left < 0:
            raise BoxError(f"more than {MAX_EXTENTS} item extents")
        extents = []
        for _ in range(count):
            read.number(index_size)
            offset = read.number(offset_size)
            extents.append((base + offset, read.number(length_size)))
        item = _item(items, item_id)
        item.extents, item.in_idat = tuple(extents), method == 1


def _properties(boxes: Boxes, iprp: Box, items: dict[int, _Item]) -> list[Box]:
    """The property boxes (``ipco``, 1-based as ``ipma`` counts), each item's recorded."""
    found: list[Box] = []
    for box in boxes.inside(iprp):
        if box.kind == b"ipco":
            found = list(boxes.inside(box))
        elif box.kind == b"ipma":
            read = Cursor(boxes, box)
            version, flags = read.number(1), read.number(3)
            size, mask = (2, 0x7FFF) if flags & 1 else (1, 0x7F)
            count = read.number(4)
            if count > MAX_ITEMS:
                raise BoxError(f"more than {MAX_ITEMS} items with properties")
            for _ in range(count):
                item_id = read.number(4 if version >= 1 else 2)
                associations = read.number(1)
                _item(items, item_id).properties = tuple(
                    read.number(size) & mask for _ in range(associations)
                )
    return found


def _item_bytes(data: bytes, idat: Box | None, item: _Item | None) -> bytes | None:
    """An item's bytes, its extents joined; None when they fall outside the file."""
    if item is None or not item.extents:
        return None
    base, end = (idat.body, idat.end) if item.in_idat and idat else (0, len(data))
    total = sum(length for _, length in item.extents)
    if total > MAX_ITEM_BYTES:
        return None
    pieces = []
    for offset, length in item.extents:
        start = base + offset
        if length == 0:  # "to the end of the file": no metadata item is that
            return None
        if start + length > end:
            raise BoxError("a metadata item lies outside the file")
        pieces.append(data[start : start + length])
    return b"".join(pieces)
