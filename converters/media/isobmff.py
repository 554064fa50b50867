"""A bounded reader of ISO base media files (MP4, MOV, M4V, HEIF/HEIC, AVIF): boxes only.

Every box is a 32-bit size and a four-character type, then its payload; some
payloads are further boxes. Nothing here decodes media: the readers follow the
few fixed paths they need (``moov/trak/mdia/hdlr``, ``meta/iloc``...), so the
depth they descend is bounded by the code itself, and :class:`Boxes` counts
every box it walks (:data:`MAX_BOXES`), so a file of a million empty boxes costs
no more than that count. A size that does not fit its parent is a lie and the
file is corrupt (:class:`BoxError`), never an out-of-range read.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

#: Boxes one file may make the reader walk, at every level together.
MAX_BOXES = 100_000


class BoxError(ValueError):
    """The box structure is broken: a size that lies, a box cut short."""


@dataclass(frozen=True, slots=True)
class Box:
    """One box: its type, and where its payload starts and it ends in the file."""

    kind: bytes
    body: int
    end: int


class Boxes:
    """Walks the boxes of ``data``, counting them against :data:`MAX_BOXES`."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._walked = 0

    def children(self, start: int, end: int) -> Iterator[Box]:
        """The boxes laid end to end from ``start`` to ``end``."""
        data, position = self.data, start
        while position < end:
            self._walked += 1
            if self._walked > MAX_BOXES:
                raise BoxError(f"more than {MAX_BOXES} boxes")
            if end - position < 8:
                raise BoxError(f"a box header cut short at offset {position}")
            size, kind = struct.unpack_from(">I4s", data, position)
            header = 8
            if size == 1:
                if end - position < 16:
                    raise BoxError(f"a box header cut short at offset {position}")
                (size,) = struct.unpack_from(">Q", data, position + 8)
                header = 16
            elif size == 0:  # "to the end of the file"
                size = end - position
            if kind == b"uuid":
                header += 16
            if size < header or size > end - position:
                raise BoxError(
                    f"box {_name(kind)!r} at offset {position} claims {size} bytes"
                    f" where {end - position} remain"
                )
            yield Box(kind, position + header, position + size)
            position += size

    def top(self) -> Iterator[Box]:
        """The file's top-level boxes."""
        return self.children(0, len(self.data))

    def inside(self, box: Box, skip: int = 0) -> Iterator[Box]:
        """The boxes in ``box``'s payload, after ``skip`` bytes (a full box's 4)."""
        return self.children(box.body + skip, box.end)

    def first(self, boxes: Iterator[Box], kind: bytes) -> Box | None:
        """The first of ``boxes`` of type ``kind``."""
        return next((box for box in boxes if box.kind == kind), None)

    def payload(self, box: Box, offset: int, length: int) -> bytes:
        """``length`` bytes at ``offset`` into ``box``'s payload; short payloads are lies."""
        start = box.body + offset
        if offset < 0 or start + length > box.end:
            raise BoxError(f"box {_name(box.kind)!r} is too short for its fields")
        return self.data[start : start + length]

    def unpack(self, box: Box, offset: int, layout: str) -> tuple[int, ...]:
        """Big-endian fields of ``layout`` (struct syntax) at ``offset`` into the payload."""
        fmt = ">" + layout
        return struct.unpack(fmt, self.payload(box, offset, struct.calcsize(fmt)))


def _name(kind: bytes) -> str:
    return kind.decode("latin-1")


def fourcc(kind: bytes) -> str:
    """A four-character code as text, trailing spaces dropped (``"qt  "`` → ``"qt"``)."""
    return _name(kind).rstrip(" \x00")


def brands(boxes: Boxes) -> tuple[str, ...]:
    """The ``ftyp`` box's major brand, then its compatible ones; empty if there is none."""
    first = next(boxes.top(), None)
    if first is None or first.kind != b"ftyp":
        return ()
    payload = boxes.data[first.body : first.end]
    major = [payload[:4]]
    compatible = [payload[i : i + 4] for i in range(8, len(payload) - 3, 4)]
    return tuple(dict.fromkeys(fourcc(b) for b in major + compatible if len(b) == 4))


def looks_like_isobmff(head: bytes) -> bool:
    """Whether ``head`` opens with an ``ftyp`` box, as every ISO media file does."""
    return len(head) >= 12 and head[4:8] == b"ftyp"


class Cursor:
    """Reads big-endian numbers of varying width one after another from a box's payload."""

    def __init__(self, boxes: Boxes, box: Box, at: int = 0) -> None:
        self.boxes, self.box, self.at = boxes, box, at

    def number(self, size: int) -> int:
        """The next ``size``-byte number (0 bytes: 0, as ISO fields of width 0 mean)."""
        if not 0 <= size <= 8:
            raise BoxError(f"a field of {size} bytes in box {_name(self.box.kind)!r}")
        value = int.from_bytes(self.boxes.payload(self.box, self.at, size), "big")
        self.at += size
        return value
