"""What an MP4/MOV/M4V file says about its movie: duration, tracks, sizes, codecs.

The facts sit in the ``moov`` box: ``mvhd`` (time scale and duration, creation
time), and per track ``tkhd`` (display width and height), ``mdia/hdlr`` (video,
sound, text...) and ``mdia/minf/stbl/stsd`` (the codec's four-character code,
an audio track's channels and sample rate).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from docshelf.converters.media.isobmff import Box, BoxError, Boxes, fourcc

#: Seconds from 1904-01-01 (QuickTime's epoch) to 1970-01-01.
_EPOCH_1904 = datetime(1904, 1, 1, tzinfo=UTC)
#: Handler types, as a person calls the track.
TRACK_KINDS = {
    "vide": "video",
    "soun": "audio",
    "text": "text",
    "sbtl": "subtitles",
    "subt": "subtitles",
    "clcp": "subtitles",
    "meta": "metadata",
    "tmcd": "timecode",
    "hint": "hint",
}


@dataclass(frozen=True, slots=True)
class Track:
    kind: str  # "video", "audio", ... (TRACK_KINDS), else the handler's code
    codec: str | None = None  # the sample entry's four-character code
    width: int | None = None
    height: int | None = None
    channels: int | None = None
    sample_rate: int | None = None


@dataclass(frozen=True, slots=True)
class Movie:
    duration: float | None
    created: str | None  # ISO 8601, UTC
    tracks: tuple[Track, ...]


def read_movie(data: bytes) -> Movie:
    """The movie of an ISO media file; :class:`BoxError` if its boxes are broken or it has none."""
    boxes = Boxes(data)
    moov = boxes.first(boxes.top(), b"moov")
    if moov is None:
        raise BoxError("no movie box (moov): not a movie, or cut short before it")
    duration = created = None
    tracks: list[Track] = []
    for box in boxes.inside(moov):
        if box.kind == b"mvhd":
            duration, created = _movie_header(boxes, box)
        elif box.kind == b"trak":
            tracks.append(_track(boxes, box))
    if not tracks:
        raise BoxError("the movie box (moov) holds no tracks")
    return Movie(duration, created, tuple(tracks))


def _movie_header(boxes: Boxes, mvhd: Box) -> tuple[float | None, str | None]:
    (version,) = boxes.unpack(mvhd, 0, "B")
    if version == 1:
        creation, _modified, scale, length = boxes.unpack(mvhd, 4, "QQIQ")
    else:
        creation, _modified, scale, length = boxes.unpack(mvhd, 4, "IIII")
    unknown = 0xFFFFFFFF if version == 0 else 0xFFFFFFFFFFFFFFFF
    duration = length / scale if scale and length != unknown else None
    return duration, _timestamp(creation)


def _timestamp(seconds: int) -> str | None:
    """A creation time as ISO 8601; None when unset (0) or beyond any real date."""
    if not 0 < seconds < 2**33:
        return None
    return (_EPOCH_1904 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _track(boxes: Boxes, trak: Box) -> Track:
    width = height = None
    handler, entry = "", None
    for box in boxes.inside(trak):
        if box.kind == b"tkhd":
            width, height = _track_size(boxes, box)
        elif box.kind == b"mdia":
            handler, entry = _media(boxes, box)
    kind = TRACK_KINDS.get(handler, handler or "unknown")
    if entry is None:
        return Track(kind, width=width, height=height)
    codec = fourcc(entry.kind)
    if kind == "video" and not (width and height) and entry.end - entry.body >= 28:
        width, height = boxes.unpack(entry, 24, "HH")  # the coded size
    if kind == "audio" and entry.end - entry.body >= 28:
        channels, _bits, _predefined, _reserved, rate = boxes.unpack(entry, 16, "HHHHI")
        return Track(kind, codec, channels=channels or None, sample_rate=(rate >> 16) or None)
    return Track(kind, codec, width or None, height or None)


def _track_size(boxes: Boxes, tkhd: Box) -> tuple[int | None, int | None]:
    """Display width and height (16.16 fixed point) at the end of ``tkhd``."""
    (version,) = boxes.unpack(tkhd, 0, "B")
    width, height = boxes.unpack(tkhd, 88 if version == 1 else 76, "II")
    return (width >> 16) or None, (height >> 16) or None


def _media(boxes: Boxes, mdia: Box) -> tuple[str, Box | None]:
    """The handler type and the first sample entry of a track's media box."""
    handler, entry = "", None
    for box in boxes.inside(mdia):
        if box.kind == b"hdlr":
            handler = fourcc(boxes.payload(box, 8, 4))
        elif box.kind == b"minf":
            stbl = boxes.first(boxes.inside(box), b"stbl")
            stsd = boxes.first(boxes.inside(stbl), b"stsd") if stbl else None
            if stsd is not None:
                entry = next(boxes.inside(stsd, 8), None)  # after version, flags, count
    return handler, entry
