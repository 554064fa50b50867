"""What a Matroska or WebM file says about itself: duration, title, tracks.

Matroska is EBML: each element is a variable-length ID, a variable-length size,
then its payload, which for master elements is further elements. The facts are
at the start of the ``Segment``: ``Info`` (time scale, duration, title, date)
and ``Tracks`` (type, codec, picture size, channels, sample rate). Reading stops
at the first ``Cluster`` (the media itself); elements are counted
(:data:`MAX_ELEMENTS`) and the reader descends only the fixed path it needs.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from docshelf.converters.media.movie import Movie, Track

#: Elements one file may make the reader walk.
MAX_ELEMENTS = 100_000
#: Bytes of a string element read (titles, codec IDs).
MAX_TEXT_BYTES = 4096

EBML_HEADER = 0x1A45DFA3
_SEGMENT, _INFO, _TRACKS, _CLUSTER = 0x18538067, 0x1549A966, 0x1654AE6B, 0x1F43B675
_TIMESCALE, _DURATION, _TITLE, _DATE = 0x2AD7B1, 0x4489, 0x7BA9, 0x4461
_TRACK_ENTRY, _TRACK_TYPE, _CODEC = 0xAE, 0x83, 0x86
_VIDEO, _WIDTH, _HEIGHT = 0xE0, 0xB0, 0xBA
_AUDIO, _RATE, _CHANNELS = 0xE1, 0xB5, 0x9F
_TRACK_KINDS = {1: "video", 2: "audio", 3: "complex", 16: "logo", 17: "subtitles", 18: "buttons"}
_EPOCH_2001 = datetime(2001, 1, 1, tzinfo=UTC)


class EbmlError(ValueError):
    """The element structure is broken."""


@dataclass(frozen=True, slots=True)
class _Element:
    id: int
    body: int
    end: int


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self._walked = 0

    def _vint(self, position: int, end: int, keep_marker: bool) -> tuple[int, int, bool]:
        """A variable-length number at ``position``: its value, its length, whether all ones."""
        if position >= end:
            raise EbmlError(f"an element cut short at offset {position}")
        first = self.data[position]
        length = 9 - first.bit_length() if first else 9
        if length > 8 or position + length > end:
            raise EbmlError(f"a malformed element header at offset {position}")
        raw = int.from_bytes(self.data[position : position + length], "big")
        marker = 1 << (7 * length)
        payload = raw - marker
        return (raw if keep_marker else payload), length, payload == marker - 1

    def children(self, start: int, end: int) -> Iterator[_Element]:
        position = start
        while position < end:
            self._walked += 1
            if self._walked > MAX_ELEMENTS:
                raise EbmlError(f"more than {MAX_ELEMENTS} elements")
            element_id, id_length, _ = self._vint(position, end, True)
            size, size_length, unsized = self._vint(position + id_length, end, False)
            body = position + id_length + size_length
            if unsized:
                size = end - body  # "unknown size": runs to the end of its parent
            if size > end - body:
                raise EbmlError(
                    f"element {element_id:X} at offset {position} claims {size} bytes"
                    f" where {end - body} remain"
                )
            yield _Element(element_id, body, body + size)
            position = body + size

    def unsigned(self, element: _Element) -> int:
        """An unsigned integer element (0 when wider than 8 bytes: no real value is)."""
        if element.end - element.body > 8:
            return 0
        return int.from_bytes(self.data[element.body : element.end], "big")

    def number(self, element: _Element) -> float | None:
        raw = self.data[element.body : element.end]
        if len(raw) == 4:
            return float(struct.unpack(">f", raw)[0])
        if len(raw) == 8:
            return float(struct.unpack(">d", raw)[0])
        return None

    def text(self, element: _Element) -> str:
        """A string element, at most :data:`MAX_TEXT_BYTES` of it."""
        raw = self.data[element.body : min(element.end, element.body + MAX_TEXT_BYTES)]
        return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class Matroska:
    doc_type: str  # "webm", "matroska"
    title: str | None
    movie: Movie


def read_matroska(data: bytes) -> Matroska:
    """Info and tracks of the first segment; :class:`EbmlError` if the file is not EBML."""
    reader = _Reader(data)
    top = reader.children(0, len(data))
    header = next(top, None)
    if header is None or header.id != EBML_HEADER:
        raise EbmlError("no EBML header: not a Matroska or WebM file")
    doc_type = next(
        (reader.text(e) for e in reader.children(header.body, header.end) if e.id == 0x4282),
        "matroska",
    )
    segment = next((e for e in top if e.id == _SEGMENT), None)
    if segment is None:
        raise EbmlError("no Segment element")
    scale, duration, title, created = 1_000_000, None, None, None
    tracks: list[Track] = []
    for element in reader.children(segment.body, segment.end):
        if element.id == _CLUSTER:
            break
        if element.id == _INFO:
            for field in reader.children(element.body, element.end):
                if field.id == _TIMESCALE:
                    scale = reader.unsigned(field) or scale
                elif field.id == _DURATION:
                    duration = reader.number(field)
                elif field.id == _TITLE:
                    title = reader.text(field).strip() or None
                elif field.id == _DATE and field.end - field.body == 8:
                    nanoseconds = int.from_bytes(data[field.body : field.end], "big", signed=True)
                    created = _date(nanoseconds)
        elif element.id == _TRACKS:
            tracks.extend(
                _track(reader, entry)
                for entry in reader.children(element.body, element.end)
                if entry.id == _TRACK_ENTRY
            )
    seconds = (
        duration * scale / 1e9 if duration and math.isfinite(duration) and duration > 0 else None
    )
    return Matroska(doc_type, title, Movie(seconds, created, tuple(tracks)))


def _date(nanoseconds: int) -> str | None:
    try:
        moment = _EPOCH_2001 + timedelta(microseconds=nanoseconds // 1000)
    except OverflowError:
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _track(reader: _Reader, entry: _Element) -> Track:
    kind, codec = "unknown", None
    width = height = channels = rate = None
    for field in reader.children(entry.body, entry.end):
        if field.id == _TRACK_TYPE:
            kind = _TRACK_KINDS.get(reader.unsigned(field), "unknown")
        elif field.id == _CODEC:
            codec = reader.text(field) or None
        elif field.id in (_VIDEO, _AUDIO):
            for detail in reader.children(field.body, field.end):
                if detail.id == _WIDTH:
                    width = reader.unsigned(detail) or None
                elif detail.id == _HEIGHT:
                    height = reader.unsigned(detail) or None
                elif detail.id == _CHANNELS:
                    channels = reader.unsigned(detail) or None
                elif detail.id == _RATE:
                    frequency = reader.number(detail)
                    rate = round(frequency) if frequency and 0 < frequency < 1e7 else None
    return Track(kind, codec, width, height, channels, rate)
