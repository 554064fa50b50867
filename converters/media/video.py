"""Films (MP4, MOV, M4V from their ISO boxes; WebM and MKV from their EBML): metadata only.

Duration, picture size, codecs and sound come from the container's own
headers (:mod:`converters.media.movie`, :mod:`converters.media.matroska`); an
MP4's tags (title, artist...) from tinytag. No frame is decoded and nothing
said is transcribed.
"""

from __future__ import annotations

import io
from typing import Any

from docshelf.converters.base import ConversionError, ConversionResult, FailureReason, Source
from docshelf.converters.media.audio import TAGS, named_tags, stream_rows
from docshelf.converters.media.isobmff import BoxError, Boxes, brands
from docshelf.converters.media.matroska import EBML_HEADER, EbmlError, read_matroska
from docshelf.converters.media.movie import Movie, Track, read_movie
from docshelf.converters.media.report import MediaReport, clock, media_result, short_duration
from docshelf.converters.textutil import check_size

VIDEO_MIME_TYPES = frozenset(
    {
        "video/mp4",
        "video/quicktime",
        "video/x-m4v",
        "video/webm",
        "video/x-matroska",
        "video/matroska",
    }
)
VIDEO_EXTENSIONS = frozenset({".mp4", ".m4v", ".mov", ".qt", ".webm", ".mkv"})
#: Films larger than this are not read (the conversion runner's own cap is lower by default).
MAX_VIDEO_BYTES = 4 * 1024 * 1024 * 1024
#: Codecs as people name them, by MP4 four-character code or Matroska codec ID.
CODECS = {
    "avc1": "H.264",
    "avc3": "H.264",
    "hvc1": "H.265",
    "hev1": "H.265",
    "av01": "AV1",
    "vp09": "VP9",
    "vp08": "VP8",
    "mp4v": "MPEG-4 Visual",
    "apch": "ProRes",
    "apcn": "ProRes",
    "apcs": "ProRes",
    "apco": "ProRes",
    "ap4h": "ProRes",
    "jpeg": "Motion JPEG",
    "mp4a": "AAC",
    "ac-3": "AC-3",
    "ec-3": "E-AC-3",
    "Opus": "Opus",
    "fLaC": "FLAC",
    "alac": "ALAC",
    "lpcm": "PCM",
    "sowt": "PCM",
    "twos": "PCM",
    ".mp3": "MP3",
    "V_MPEG4/ISO/AVC": "H.264",
    "V_MPEGH/ISO/HEVC": "H.265",
    "V_AV1": "AV1",
    "V_VP8": "VP8",
    "V_VP9": "VP9",
    "A_AAC": "AAC",
    "A_OPUS": "Opus",
    "A_VORBIS": "Vorbis",
    "A_FLAC": "FLAC",
    "A_AC3": "AC-3",
    "A_EAC3": "E-AC-3",
    "A_MPEG/L3": "MP3",
    "A_PCM/INT/LIT": "PCM",
}
#: Containers by ftyp major brand or EBML DocType; any other ISO brand is MPEG-4.
_CONTAINERS = {"qt": "QuickTime", "M4V": "MPEG-4 (M4V)", "webm": "WebM", "matroska": "Matroska"}


class VideoConverter:
    """Describes films from their container's headers."""

    name = "video"
    version = "1"

    def accepts(self, source: Source) -> bool:
        return source.base_mime_type in VIDEO_MIME_TYPES or source.extension in VIDEO_EXTENSIONS

    def convert(self, source: Source) -> ConversionResult:
        check_size(source.data, MAX_VIDEO_BYTES)
        data = source.data
        try:
            if data[:4] == EBML_HEADER.to_bytes(4, "big"):
                matroska = read_matroska(data)
                movie, tags = matroska.movie, {}
                container = _CONTAINERS.get(matroska.doc_type, matroska.doc_type)
                if matroska.title:
                    tags["title"] = matroska.title
            else:
                movie = read_movie(data)
                brand = next(iter(brands(Boxes(data))), "")
                container = _CONTAINERS.get(brand, "MPEG-4")
                tags = _mp4_tags(source)
        except (BoxError, EbmlError) as exc:
            raise ConversionError(FailureReason.CORRUPT, f"unreadable video: {exc}") from exc
        return media_result(source, video_report(movie, container, tags, len(data)))


def _mp4_tags(source: Source) -> dict[str, Any]:
    """An MP4's title, artist... (its ``ilst`` atoms), read by tinytag; none if it cannot."""
    from tinytag import TinyTag

    try:
        tag = TinyTag.get(file_obj=io.BytesIO(source.data), duration=False)
    except Exception:  # the boxes read fine; tags are a bonus
        return {}
    return named_tags(tag)


def video_report(movie: Movie, container: str, tags: dict[str, Any], size: int) -> MediaReport:
    """The report of a film: its tracks, duration, tags."""
    video = next((t for t in movie.tracks if t.kind == "video"), None)
    sound = next((t for t in movie.tracks if t.kind == "audio"), None)
    duration = movie.duration
    bitrate = round(size * 8 / duration / 1000) or None if duration else None
    kind = "video" if video else "audio" if sound else "media"
    picture = f"{video.width}×{video.height}" if video and video.width and video.height else None
    video_codec = _codec(video)
    audio_codec = _codec(sound)
    stream = {
        "duration_seconds": round(duration, 3) if duration else None,
        "duration": clock(duration) if duration else None,
        "bitrate_kbps": bitrate,
        "sample_rate": sound.sample_rate if sound else None,
        "channels": sound.channels if sound else None,
    }
    data: dict[str, Any] = {"kind": kind, "container": container}
    data |= {
        "width": video.width if video else None,
        "height": video.height if video else None,
        "video_codec": video_codec,
        "audio_codec": audio_codec,
        "created": movie.created,
    }
    data |= stream
    data = {key: value for key, value in data.items() if value not in (None, "")}
    data["tracks"] = [_track(track) for track in movie.tracks]
    data |= {"tags": tags} if tags else {}
    parts = [
        short_duration(duration) if duration else None,
        " ".join(filter(None, [picture, video_codec])),
        f"{audio_codec} audio" if video and audio_codec else audio_codec,
    ]
    sentence = ", ".join([kind.capitalize(), *filter(None, parts)])
    about = tags.get("title", "") + (f" by {tags['artist']}" if "artist" in tags else "")
    rows = [(label, str(tags.get(key, ""))) for key, label in TAGS.items() if key != "title"]
    rows += [
        ("Container", str(data.get("container", ""))),
        ("Dimensions", f"{picture} pixels" if picture else ""),
        ("Video codec", video_codec or ""),
        ("Created", movie.created or ""),
    ]
    rows += [(label, value) for label, value in stream_rows(stream | {"codec": audio_codec})]
    return MediaReport(
        title=tags.get("title"),
        description=f"{sentence}: {about.strip()}" if about.strip() else sentence,
        rows=[(("Audio codec" if label == "Codec" else label), value) for label, value in rows],
        data=data,
        metadata={"created": movie.created} if movie.created else {},
    )


def _codec(track: Track | None) -> str | None:
    if track is None or not track.codec:
        return None
    return CODECS.get(track.codec, track.codec)


def _track(track: Track) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": track.kind, "codec": track.codec, "codec_name": _codec(track)}
    out |= {"width": track.width, "height": track.height}
    out |= {"channels": track.channels, "sample_rate": track.sample_rate}
    return {key: value for key, value in out.items() if value is not None}
