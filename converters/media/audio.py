"""Sound files (MP3, M4A/AAC, WAV, FLAC, Ogg Vorbis/Opus, AIFF, WMA) with tinytag.

tinytag (MIT, pure Python; mutagen, the usual choice, is GPL) reads the stream's
facts (duration, bitrate, sample rate, channels) and its tags (ID3, MP4 atoms,
Vorbis comments, RIFF INFO, ASF). What is said is not transcribed.
"""

from __future__ import annotations

import io
import math
from typing import Any

from docshelf.converters.base import ConversionError, ConversionResult, FailureReason, Source
from docshelf.converters.failures import describe
from docshelf.converters.media.report import MediaReport, clock, media_result, short_duration
from docshelf.converters.textutil import check_size, clean_text, collapse_whitespace

AUDIO_MIME_TYPES = frozenset(
    {
        "audio/mpeg",
        "audio/mp3",
        "audio/mp4",
        "audio/m4a",
        "audio/x-m4a",
        "audio/aac",
        "audio/wav",
        "audio/wave",
        "audio/x-wav",
        "audio/vnd.wave",
        "audio/flac",
        "audio/x-flac",
        "audio/ogg",
        "audio/opus",
        "audio/x-opus+ogg",
        "audio/vorbis",
        "audio/aiff",
        "audio/x-aiff",
        "audio/x-ms-wma",
    }
)
AUDIO_EXTENSIONS = frozenset(
    {".mp3", ".mp2", ".m4a", ".m4b", ".aac", ".wav", ".flac", ".ogg", ".oga", ".opus"}
    | {".spx", ".aiff", ".aif", ".aifc", ".wma"}
)
#: Sound files larger than this are not read (an album-length FLAC is ~400 MB).
MAX_AUDIO_BYTES = 1024 * 1024 * 1024
#: The tags shown, tinytag's name → ours, in the order a person reads them.
TAGS = {
    "title": "Title",
    "artist": "Artist",
    "album": "Album",
    "albumartist": "Album artist",
    "composer": "Composer",
    "year": "Year",
    "track": "Track",
    "disc": "Disc",
    "genre": "Genre",
    "comment": "Comment",
}
#: Codecs by the type tinytag reports ("audio/ogg; codecs=\"opus\"" → "Opus").
_CODECS = {
    "audio/mpeg": "MP3",
    "audio/flac": "FLAC",
    "audio/wav": "PCM",
    "audio/aiff": "PCM",
    "audio/mp4": "AAC",
    "audio/ogg": "Vorbis",
    "application/vnd.ms-asf": "WMA",
}
_CODEC_PARAMETERS = {
    "vorbis": "Vorbis",
    "opus": "Opus",
    "flac": "FLAC",
    "speex": "Speex",
    "alac": "ALAC",
    "ac-3": "AC-3",
    "ec-3": "E-AC-3",
    "3": "PCM (float)",
    "55": "MP3",
    "FFFE": "PCM",
    "1": "PCM",
}
_CHANNELS = {1: "mono", 2: "stereo"}


class AudioConverter:
    """Describes sound files from their stream facts and tags."""

    name = "audio"
    version = "1"

    def accepts(self, source: Source) -> bool:
        return source.base_mime_type in AUDIO_MIME_TYPES or source.extension in AUDIO_EXTENSIONS

    def convert(self, source: Source) -> ConversionResult:
        check_size(source.data, MAX_AUDIO_BYTES)
        from tinytag import TinyTag

        try:
            tag = TinyTag.get(source.filename or None, file_obj=io.BytesIO(source.data))
        except Exception as exc:  # UnsupportedFormatError, ParseError (wrapping anything)
            raise ConversionError(
                FailureReason.CORRUPT, f"not a readable sound file: {describe(exc)}"
            ) from exc
        if not (tag.duration or tag.samplerate or _tags(tag)):
            raise ConversionError(
                FailureReason.CORRUPT, "not a readable sound file: no sound stream and no tags"
            )
        return media_result(source, audio_report(tag))


def audio_report(tag: Any) -> MediaReport:
    """The report of a tinytag result."""
    tags = _tags(tag)
    duration = _finite(tag.duration)
    bitrate = _whole(tag.bitrate)
    codec = codec_name(tag.mime_type)
    stream = {
        "codec": codec,
        "mime_type": tag.mime_type,
        "duration_seconds": round(duration, 3) if duration else None,
        "duration": clock(duration) if duration else None,
        "bitrate_kbps": bitrate,
        "sample_rate": _whole(tag.samplerate),
        "channels": _whole(tag.channels),
        "bit_depth": _whole(tag.bitdepth),
        "lossless": tag.is_lossless,
    }
    data = {"kind": "audio"} | {k: v for k, v in stream.items() if v is not None}
    data |= {"tags": tags} if tags else {}
    data |= {"cover_image": True} if tag.images.any is not None else {}
    facts = [
        short_duration(duration) if duration else None,
        " ".join(filter(None, [codec, f"{bitrate} kbps" if bitrate else None])),
    ]
    sentence = ", ".join(["Audio", *filter(None, facts)])
    about = tags.get("title", "") + (f" by {tags['artist']}" if "artist" in tags else "")
    rows = [(label, _tag_text(tags, key)) for key, label in TAGS.items() if key != "title"]
    rows += stream_rows(stream)
    return MediaReport(
        title=tags.get("title"),
        description=f"{sentence}: {about.strip()}" if about.strip() else sentence,
        rows=rows,
        data=data,
        metadata={k: str(tags[k]) for k in ("artist", "album", "year", "genre") if k in tags}
        | ({"author": tags["artist"]} if "artist" in tags else {}),
    )


def stream_rows(stream: dict[str, Any]) -> list[tuple[str, str]]:
    """Table rows of a sound stream's facts (shared with video's sound track)."""
    channels = stream.get("channels")
    seconds = stream.get("duration_seconds")
    return [
        ("Duration", f"{seconds:g} s ({stream['duration']})" if seconds else ""),
        ("Codec", stream.get("codec") or ""),
        ("Bitrate", f"{stream['bitrate_kbps']} kbps" if stream.get("bitrate_kbps") else ""),
        ("Sample rate", f"{stream['sample_rate']} Hz" if stream.get("sample_rate") else ""),
        (
            "Channels",
            f"{channels} ({_CHANNELS[channels]})" if channels in _CHANNELS else str(channels or ""),
        ),
        ("Bit depth", f"{stream['bit_depth']} bit" if stream.get("bit_depth") else ""),
    ]


def codec_name(mime_type: str | None) -> str | None:
    """ "MP3", "AAC", "Opus"... from tinytag's type and its ``codecs`` parameter."""
    if not mime_type:
        return None
    base, _, parameters = mime_type.partition(";")
    codecs = parameters.partition("codecs=")[2].strip().strip('"')
    if codecs.startswith("mp4a"):
        return "AAC"
    return _CODEC_PARAMETERS.get(codecs) or _CODECS.get(base.strip()) or codecs or None


def _tags(tag: Any) -> dict[str, Any]:
    found = named_tags(tag)
    for key in ("track_total", "disc_total"):
        if isinstance(total := getattr(tag, key, None), int):
            found[key] = total
    return found


def named_tags(tag: Any) -> dict[str, Any]:
    """The :data:`TAGS` a tinytag result carries: numbers as they are, text cleaned."""
    found: dict[str, Any] = {}
    for key in TAGS:
        value = getattr(tag, key, None)
        if isinstance(value, int):
            found[key] = value
        elif isinstance(value, str) and (text := collapse_whitespace(clean_text(value))):
            found[key] = text
    return found


def _tag_text(tags: dict[str, Any], key: str) -> str:
    if key not in tags:
        return ""
    total = tags.get(f"{key}_total")
    return f"{tags[key]} of {total}" if total else str(tags[key])


def _finite(value: object) -> float | None:
    if not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        return None
    return float(value)


def _whole(value: object) -> int | None:
    """A positive number rounded; None for nothing, zero, or what rounds to zero."""
    number = _finite(value)
    return round(number) or None if number else None
