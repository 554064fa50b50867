"""Pictures, sound and films: described from their metadata (converters/media/).

Every file is built here (Pillow, the stdlib ``wave`` module, boxes and EBML by
hand: tests/converters/media_files.py); markitdown's test.jpg and test.mp3 are
read when the peer suites are there.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docshelf.converters import ConversionError, ConversionResult, convert, find_converter
from docshelf.converters.media.image import ImageConverter
from docshelf.converters.media.isobmff import MAX_BOXES
from tests.support.markitdown_vectors import NEEDS_PEERS, TEST_FILES
from tests.support.results import text_of as text

from . import media_files as files


def data_of(result: ConversionResult) -> dict[str, Any]:
    document = json.loads(text(result, "application/json"))
    assert isinstance(document["data"], dict)
    return document["data"]


def refused(data: bytes, mime_type: str, filename: str) -> ConversionError:
    with pytest.raises(ConversionError) as caught:
        convert(data, mime_type, filename).produce()
    return caught.value


@pytest.mark.parametrize(
    ("mime_type", "filename", "expected"),
    [
        ("image/png", "a.png", "image"),
        ("image/jpeg", "a.JPG", "image"),
        ("application/octet-stream", "IMG_0001.HEIC", "image"),
        ("image/avif", "a.avif", "image"),
        ("audio/mpeg", "a.mp3", "audio"),
        ("video/mp4", "voice.m4a", "audio"),  # libmagic calls an .m4a video/mp4
        ("audio/x-wav", "a.wav", "audio"),
        ("application/octet-stream", "a.opus", "audio"),
        ("video/mp4", "a.mp4", "video"),
        ("video/quicktime", "a.mov", "video"),
        ("video/webm", "a.webm", "video"),
        ("application/octet-stream", "a.mkv", "video"),
    ],
)
def test_the_registry_sends_media_to_the_media_converters(
    mime_type: str, filename: str, expected: str
) -> None:
    converter = find_converter(mime_type, filename)
    assert converter is not None and converter.name == expected


def test_svg_is_not_a_picture_to_describe() -> None:
    converter = find_converter("image/svg+xml", "logo.svg")
    assert converter is None or converter.name != "image"


# --- images ----------------------------------------------------------------------------


def test_a_photo_is_described_by_its_camera_date_and_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DOCSHELF_IMAGE_GPS", raising=False)
    result = convert(files.jpeg(exif=files.camera_exif()), "image/jpeg", "IMG_0001.jpg")
    assert result.facts.title is None
    assert result.facts.description == "Photo taken 2024-03-14 with Canon EOS R5, 64×48"
    markdown = text(result, "text/markdown")
    assert not markdown.startswith("#")  # no title: no heading
    assert "| Camera | Canon EOS R5 |" in markdown
    assert "| Taken | 2024-03-14T22:10:00+01:00 |" in markdown
    assert "| Exposure | 1/250 s |" in markdown and "| Aperture | f/2.8 |" in markdown
    assert "| Orientation | Rotate 90 CW |" in markdown
    plain = text(result, "text/plain")
    assert "Lens: RF24-105mm F4 L IS USM\n" in plain and "ISO: 400\n" in plain
    data = data_of(result)
    assert data["width"] == 64 and data["height"] == 48 and data["dpi"] == [300.0, 300.0]
    assert data["exif"] == {
        "make": "Canon",
        "model": "Canon EOS R5",
        "camera": "Canon EOS R5",
        "lens": "RF24-105mm F4 L IS USM",
        "taken_at": "2024-03-14T22:10:00+01:00",
        "orientation": 6,
        "exposure_time": 0.004,
        "f_number": 2.8,
        "iso": 400,
        "focal_length": 50.0,
    }
    assert result.facts.metadata["created"] == "2024-03-14T22:10:00+01:00"


def test_gps_is_left_out_unless_the_setting_lets_it_in(monkeypatch: pytest.MonkeyPatch) -> None:
    photo = files.jpeg(exif=files.camera_exif(gps=True))
    converter = ImageConverter()
    monkeypatch.delenv("DOCSHELF_IMAGE_GPS", raising=False)
    without = convert(photo, "image/jpeg", "a.jpg")
    assert "gps" not in data_of(without) and "48.85" not in text(without, "text/markdown")
    assert converter.version == "2"
    monkeypatch.setenv("DOCSHELF_IMAGE_GPS", "1")
    with_gps = convert(photo, "image/jpeg", "a.jpg")
    assert data_of(with_gps)["gps"] == {"latitude": 48.8583, "longitude": -2.2945, "altitude": 35.0}
    assert "| GPS | 48.858300, -2.294500, 35 m |" in text(with_gps, "text/markdown")
    assert converter.version == "2+gps"  # the cache key changes: toggling converts again


def test_xmp_gives_the_title_description_and_author() -> None:
    result = convert(files.png(xmp=files.XMP), "image/png", "lighthouse.png")
    assert result.facts.title == "Lighthouse at dusk"  # x-default, not the German entry
    assert result.facts.description == "The old lighthouse, seen from the pier."
    markdown = text(result, "text/markdown")
    assert markdown.startswith("# Lighthouse at dusk\n\nThe old lighthouse, seen from the pier.\n")
    assert "| Author | Ada Lovelace; Charles Babbage |" in markdown
    assert data_of(result)["xmp"]["author"] == "Ada Lovelace; Charles Babbage"
    assert [entry.title for entry in result.facts.outline] == ["Lighthouse at dusk"]
    segments = result.segments()
    assert segments[0].part == "section=lighthouse-at-dusk" and "40×30" in segments[0].text


def test_an_animated_gif_counts_its_frames() -> None:
    result = convert(files.gif(3), "image/gif", "spinner.gif")
    assert result.facts.description == "Animated GIF image, 10×8, 3 frames"
    data = data_of(result)
    assert data["frames"] == 3 and data["animated"] is True and data["mode"] == "P"


def test_a_huge_picture_is_described_from_its_header() -> None:
    """100 000 × 100 000 is far past Pillow's decompression-bomb guard; nothing is decoded."""
    result = convert(files.png_header(100_000, 100_000), "image/png", "scan.png")
    assert result.facts.description == "PNG image, 100000×100000"


def test_heic_metadata_comes_from_its_boxes() -> None:
    result = convert(files.heic(files.camera_exif(gps=False)), "image/heic", "IMG_0002.HEIC")
    assert result.facts.description == "Photo taken 2024-03-14 with Canon EOS R5, 4032×3024"
    data = data_of(result)
    assert (data["format"], data["width"], data["height"]) == ("HEIC", 4032, 3024)
    assert data["rotation"] == 90 and data["exif"]["lens"] == "RF24-105mm F4 L IS USM"


@pytest.mark.parametrize(
    ("data", "filename", "message"),
    [
        (files.png()[:-20], "cut.png", "not a readable image: OSError: Truncated File Read"),
        (b"GIF89a" + bytes(3), "stub.gif", "not a readable image"),
        (b"\x00" * 64, "zeros.jpg", "not a readable image: UnidentifiedImageError"),
    ],
)
def test_a_broken_picture_is_corrupt(data: bytes, filename: str, message: str) -> None:
    error = refused(data, "image/png", filename)
    assert error.reason == "corrupt" and error.message.startswith(message)


def test_a_heic_whose_item_lies_about_its_place_is_corrupt() -> None:
    heic = bytearray(files.heic(files.camera_exif()))
    at = heic.index(b"iloc") + 4 + 4 + 2 + 2 + 6  # the Exif extent's offset
    heic[at : at + 4] = (len(heic) + 100).to_bytes(4, "big")
    error = refused(bytes(heic), "image/heic", "a.heic")
    assert error.reason == "corrupt"
    assert error.message == "unreadable HEIF image: a metadata item lies outside the file"


# --- sound -----------------------------------------------------------------------------


def test_a_wav_reads_its_info_tags() -> None:
    wav = files.wav_with_info({b"INAM": "Dawn chorus", b"IART": "The Birds", b"IPRD": "Spring"})
    result = convert(wav, "audio/x-wav", "dawn.wav")
    assert result.facts.title == "Dawn chorus"
    assert result.facts.description == "Audio, 0.5 s, PCM 128 kbps: Dawn chorus by The Birds"
    assert result.facts.metadata["author"] == "The Birds"
    markdown = text(result, "text/markdown")
    assert markdown.startswith("# Dawn chorus\n")
    assert "| Album | Spring |" in markdown and "| Sample rate | 8000 Hz |" in markdown
    data = data_of(result)
    assert data["duration_seconds"] == 0.5 and data["duration"] == "0:00:00"
    assert (data["channels"], data["bit_depth"], data["codec"]) == (1, 16, "PCM")
    assert data["tags"] == {"title": "Dawn chorus", "artist": "The Birds", "album": "Spring"}


def test_a_flac_reads_its_vorbis_comments() -> None:
    comments = {"TITLE": "Flac Title é", "ARTIST": "Someone", "TRACKNUMBER": "3"}
    comments |= {"TRACKTOTAL": "12", "DATE": "2021", "GENRE": "Jazz"}
    result = convert(files.flac(comments), "audio/flac", "song.flac")
    assert result.facts.description == "Audio, 3.0 s, FLAC: Flac Title é by Someone"
    plain = text(result, "text/plain")
    assert plain.startswith("Flac Title é\n")
    assert "Track: 3 of 12\n" in plain and "Duration: 3 s (0:00:03)\n" in plain
    assert data_of(result)["tags"]["track_total"] == 12


@pytest.mark.parametrize(
    ("data", "filename"),
    [
        (bytes(range(256)) * 4, "random.mp3"),
        (b"RIFF\x10\x00\x00\x00WAVEfmt ", "cut.wav"),
        (b"fLaC\x00\x00", "cut.flac"),
    ],
)
def test_a_broken_sound_file_is_corrupt(data: bytes, filename: str) -> None:
    error = refused(data, "application/octet-stream", filename)
    assert error.reason == "corrupt" and error.message.startswith("not a readable sound file:")


@NEEDS_PEERS
def test_markitdowns_mp3_yardstick() -> None:
    result = convert((TEST_FILES / "test.mp3").read_bytes(), "audio/mpeg", "test.mp3")
    markdown = text(result, "text/markdown")
    for value in (
        "f67a499e-a7d0-4ca3-a49b-358bd934ae3e",
        "Artist Name Test String",
        "Album Name Test String",
        "48000",
    ):
        assert value in markdown


@NEEDS_PEERS
def test_markitdowns_jpg_yardstick() -> None:
    result = convert((TEST_FILES / "test.jpg").read_bytes(), "image/jpeg", "test.jpg")
    markdown = text(result, "text/markdown")
    for value in (
        "AutoGen Authors",
        "AutoGen: Enabling Next-Gen LLM Applications via Multi-Agent Conversation",
        "AutoGen enables diverse LLM-based applications",
        "1615",
        "1967",
        "2024-03-14T22:10:00",
    ):
        assert value in markdown


# --- films -----------------------------------------------------------------------------


def test_an_mp4_is_described_from_its_boxes() -> None:
    result = convert(files.mp4(), "video/mp4", "clip.mp4")
    assert result.facts.title is None
    assert result.facts.description == "Video, 12.5 s, 1920×1080 H.264, AAC audio"
    data = data_of(result)
    assert data["container"] == "MPEG-4" and data["created"] == "2024-03-11T11:06:40Z"
    assert data["tracks"] == [
        {"kind": "video", "codec": "avc1", "codec_name": "H.264", "width": 1920, "height": 1080},
        {
            "kind": "audio",
            "codec": "mp4a",
            "codec_name": "AAC",
            "channels": 2,
            "sample_rate": 48000,
        },
    ]
    assert "| Duration | 12.5 s (0:00:12) |" in text(result, "text/markdown")


def test_a_webm_is_described_from_its_ebml() -> None:
    result = convert(files.webm(), "video/webm", "harbour.webm")
    assert result.facts.title == "Harbour timelapse"
    assert result.facts.description == "Video, 5.0 s, 640×360 VP9, Opus audio: Harbour timelapse"
    data = data_of(result)
    assert (data["container"], data["width"], data["height"]) == ("WebM", 640, 360)
    assert (data["video_codec"], data["audio_codec"], data["sample_rate"]) == ("VP9", "Opus", 48000)


def test_an_mp4_whose_box_lies_about_its_length_is_corrupt() -> None:
    movie = bytearray(files.mp4())
    at = movie.index(b"mvhd") - 4
    movie[at : at + 4] = (10_000).to_bytes(4, "big")
    error = refused(bytes(movie), "video/mp4", "lie.mp4")
    assert error.reason == "corrupt"
    assert error.message.startswith("unreadable video: box 'mvhd' at offset")
    assert "claims 10000 bytes" in error.message


def test_deeply_nested_and_countless_boxes_are_refused_quickly() -> None:
    nested = b""
    for _ in range(10_000):
        nested = files.box(b"moov", nested)
    many = files.box(b"ftyp", b"isom", bytes(4)) + files.box(b"free") * (MAX_BOXES + 1)
    started = time.perf_counter()
    assert refused(nested, "video/mp4", "deep.mp4").message == (
        "unreadable video: the movie box (moov) holds no tracks"
    )
    assert refused(many, "video/mp4", "many.mp4").message == (
        f"unreadable video: more than {MAX_BOXES} boxes"
    )
    assert time.perf_counter() - started < 2


def test_a_movie_without_a_moov_box_is_corrupt() -> None:
    error = refused(
        files.box(b"ftyp", b"isom", bytes(4)) + files.box(b"mdat"), "video/mp4", "a.mp4"
    )
    assert error.message == (
        "unreadable video: no movie box (moov): not a movie, or cut short before it"
    )


# --- only ConversionError, whatever the bytes ------------------------------------------

_SEEDS = {
    "clip.mp4": files.mp4(),
    "harbour.webm": files.webm(),
    "photo.heic": files.heic(files.camera_exif()),
    "photo.jpg": files.jpeg(exif=files.camera_exif(), xmp=files.XMP),
    "song.flac": files.flac({"TITLE": "x"}),
    "dawn.wav": files.wav_with_info({b"INAM": "x"}),
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(_SEEDS)),
    cuts=st.lists(st.tuples(st.integers(0, 4000), st.binary(min_size=1, max_size=8)), max_size=4),
    end=st.integers(1, 5000),
)
def test_damaged_media_raise_only_conversion_errors(
    name: str, cuts: list[tuple[int, bytes]], end: int
) -> None:
    data = bytearray(_SEEDS[name])
    for at, patch in cuts:
        at %= len(data)
        data[at : at + len(patch)] = patch
    try:
        result = convert(bytes(data[:end]), "application/octet-stream", name)
        json.loads(text(result, "application/json"))
    except ConversionError as error:
        assert error.reason in {"corrupt", "too_large"}
