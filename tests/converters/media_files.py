"""Small media files built by hand for the media converter tests: no binary fixtures."""

from __future__ import annotations

import io
import struct
import wave

from PIL import Image, PngImagePlugin
from PIL.TiffImagePlugin import IFDRational

XMP = """<?xpacket begin='' id='W5M0MpCehiHzreSzNTczkc9d'?>
<x:xmpmeta xmlns:x='adobe:ns:meta/'>
<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>
<rdf:Description rdf:about='' xmlns:dc='http://purl.org/dc/elements/1.1/'>
<dc:title><rdf:Alt>
  <rdf:li xml:lang='de'>Leuchtturm</rdf:li>
  <rdf:li xml:lang='x-default'>Lighthouse at dusk</rdf:li>
</rdf:Alt></dc:title>
<dc:description><rdf:Alt>
  <rdf:li xml:lang='x-default'>The old lighthouse, seen from the pier.</rdf:li>
</rdf:Alt></dc:description>
<dc:creator><rdf:Seq><rdf:li>Ada Lovelace</rdf:li><rdf:li>Charles Babbage</rdf:li></rdf:Seq>
</dc:creator>
</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end='w'?>"""


def camera_exif(*, gps: bool = True) -> Image.Exif:
    """EXIF as a Canon would write it: camera, lens, date, orientation, exposure, GPS."""
    exif = Image.Exif()
    exif[0x010F] = "Canon"
    exif[0x0110] = "Canon EOS R5"
    exif[0x0112] = 6
    sub = exif.get_ifd(0x8769)
    sub[0x9003] = "2024:03:14 22:10:00"
    sub[0x9011] = "+01:00"
    sub[0x829A] = IFDRational(1, 250)
    sub[0x829D] = IFDRational(28, 10)
    sub[0x8827] = 400
    sub[0x920A] = IFDRational(50, 1)
    sub[0xA434] = "RF24-105mm F4 L IS USM"
    if gps:
        where = exif.get_ifd(0x8825)
        where[1] = "N"
        where[2] = (IFDRational(48, 1), IFDRational(51, 1), IFDRational(2988, 100))
        where[3] = "W"
        where[4] = (IFDRational(2, 1), IFDRational(17, 1), IFDRational(402, 10))
        where[5] = b"\x00"
        where[6] = IFDRational(35, 1)
    return exif


def jpeg(*, exif: Image.Exif | None = None, xmp: str | None = None, size=(64, 48)) -> bytes:
    out = io.BytesIO()
    extra = {"exif": exif.tobytes()} if exif is not None else {}
    extra |= {"xmp": xmp.encode()} if xmp else {}
    Image.new("RGB", size, "navy").save(out, "JPEG", dpi=(300, 300), **extra)
    return out.getvalue()


def png(*, xmp: str | None = None, size=(40, 30)) -> bytes:
    info = PngImagePlugin.PngInfo()
    if xmp:
        info.add_itxt("XML:com.adobe.xmp", xmp)
    out = io.BytesIO()
    Image.new("RGBA", size, "red").save(out, "PNG", pnginfo=info)
    return out.getvalue()


def gif(frames: int = 3) -> bytes:
    images = [Image.new("L", (10, 8), 80 * index) for index in range(frames)]
    out = io.BytesIO()
    images[0].save(out, "GIF", save_all=True, append_images=images[1:], duration=100, loop=0)
    return out.getvalue()


def png_header(width: int, height: int) -> bytes:
    """A PNG of the given size whose pixels are never there (one empty IDAT)."""
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b""))
        + chunk(b"IEND", b"")
    )


def wav_with_info(tags: dict[bytes, str], seconds: float = 0.5) -> bytes:
    """A 16-bit mono 8 kHz WAV (stdlib wave) with a LIST/INFO chunk of ``tags``."""
    out = io.BytesIO()
    with wave.open(out, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(8000)
        writer.writeframes(bytes(int(8000 * seconds) * 2))
    info = b"INFO"
    for key, value in tags.items():
        text = value.encode() + b"\0"
        text += b"\0" * (len(text) % 2)
        info += key + struct.pack("<I", len(text)) + text
    data = out.getvalue() + b"LIST" + struct.pack("<I", len(info)) + info
    return data[:4] + struct.pack("<I", len(data) - 8) + data[8:]


def flac(comments: dict[str, str], seconds: int = 3, rate: int = 44100) -> bytes:
    """A FLAC of only metadata blocks: STREAMINFO (length, rate) and a VORBIS_COMMENT."""
    samples = seconds * rate
    packed = (rate << 44) | (1 << 41) | (15 << 36) | samples  # stereo, 16 bit
    streaminfo = struct.pack(">HH", 4096, 4096) + bytes(6) + packed.to_bytes(8, "big") + bytes(16)
    vendor = b"docshelf tests"
    body = struct.pack("<I", len(vendor)) + vendor + struct.pack("<I", len(comments))
    for key, value in comments.items():
        entry = f"{key}={value}".encode()
        body += struct.pack("<I", len(entry)) + entry
    return (
        b"fLaC"
        + bytes([0]) + len(streaminfo).to_bytes(3, "big") + streaminfo
        + bytes([0x84]) + len(body).to_bytes(3, "big") + body
    )  # fmt: skip


def box(kind: bytes, *payloads: bytes) -> bytes:
    payload = b"".join(payloads)
    return struct.pack(">I", 8 + len(payload)) + kind + payload


def full(version: int = 0, flags: int = 0) -> bytes:
    return bytes([version]) + flags.to_bytes(3, "big")


def _stbl(entry: bytes) -> bytes:
    return box(b"minf", box(b"stbl", box(b"stsd", full(), struct.pack(">I", 1), entry)))


def _tkhd(width: int, height: int) -> bytes:
    return box(b"tkhd", full(), bytes(72), struct.pack(">II", width << 16, height << 16))


def mp4(seconds: float = 12.5, *, sound: bool = True) -> bytes:
    """ftyp + moov: an H.264 1920×1080 track and an AAC stereo 48 kHz one, no media data."""
    video_entry = box(b"avc1", bytes(24), struct.pack(">HH", 1920, 1080), bytes(50))
    video = box(
        b"trak",
        _tkhd(1920, 1080),
        box(b"mdia", box(b"hdlr", full(), bytes(4), b"vide", bytes(12)), _stbl(video_entry)),
    )
    audio_entry = box(b"mp4a", bytes(16), struct.pack(">HHHHI", 2, 16, 0, 0, 48000 << 16))
    audio = box(
        b"trak",
        _tkhd(0, 0),
        box(b"mdia", box(b"hdlr", full(), bytes(4), b"soun", bytes(12)), _stbl(audio_entry)),
    )
    created = 3_793_000_000  # seconds since 1904: 2024-03-10
    mvhd = box(
        b"mvhd",
        full(),
        struct.pack(">IIII", created, created, 1000, int(seconds * 1000)),
        bytes(80),
    )
    return box(b"ftyp", b"isom", bytes(4), b"isomavc1") + box(
        b"moov", mvhd, video, *([audio] if sound else [])
    )


def _ebml(element_id: int, payload: bytes) -> bytes:
    width = (element_id.bit_length() + 7) // 8
    # every size as 8 bytes: the marker byte 0x01, then seven bytes of length
    return element_id.to_bytes(width, "big") + b"\x01" + len(payload).to_bytes(7, "big") + payload


def webm(title: str = "Harbour timelapse") -> bytes:
    """EBML header + Segment(Info, Tracks: VP9 640×360 and Opus stereo 48 kHz)."""
    header = _ebml(0x1A45DFA3, _ebml(0x4282, b"webm"))
    info = _ebml(
        0x1549A966,
        _ebml(0x2AD7B1, (1_000_000).to_bytes(3, "big"))
        + _ebml(0x4489, struct.pack(">d", 5000.0))
        + _ebml(0x7BA9, title.encode()),
    )
    video = _ebml(
        0xAE,
        _ebml(0x83, b"\x01")
        + _ebml(0x86, b"V_VP9")
        + _ebml(
            0xE0, _ebml(0xB0, (640).to_bytes(2, "big")) + _ebml(0xBA, (360).to_bytes(2, "big"))
        ),
    )
    audio = _ebml(
        0xAE,
        _ebml(0x83, b"\x02")
        + _ebml(0x86, b"A_OPUS")
        + _ebml(0xE1, _ebml(0xB5, struct.pack(">f", 48000.0)) + _ebml(0x9F, b"\x02")),
    )
    return header + _ebml(0x18538067, info + _ebml(0x1654AE6B, video + audio))


def heic(exif: Image.Exif | None = None, width: int = 4032, height: int = 3024) -> bytes:
    """A HEIC's boxes: a primary hvc1 item with ispe and irot, and an Exif item in mdat."""
    payload = b"\0\0\0\x06" + (exif or Image.Exif()).tobytes()  # "Exif\0\0" then TIFF
    infe = [
        box(b"infe", full(2), struct.pack(">HH", 1, 0), b"hvc1", b"\0"),
        box(b"infe", full(2), struct.pack(">HH", 2, 0), b"Exif", b"\0"),
    ]
    ipco = box(
        b"ipco", box(b"ispe", full(), struct.pack(">II", width, height)), box(b"irot", b"\x01")
    )
    ipma = box(b"ipma", full(), struct.pack(">IHB", 1, 1, 2), bytes([0x81, 0x02]))

    def meta(offset: int) -> bytes:
        iloc = box(
            b"iloc",
            full(),
            bytes([0x44, 0x00]),
            struct.pack(">H", 1),
            struct.pack(">HHH", 2, 0, 1),
            struct.pack(">II", offset, len(payload)),
        )
        return box(
            b"meta",
            full(),
            box(b"hdlr", full(), bytes(4), b"pict", bytes(13)),
            box(b"pitm", full(), struct.pack(">H", 1)),
            box(b"iinf", full(), struct.pack(">H", len(infe)), *infe),
            iloc,
            box(b"iprp", ipco, ipma),
        )

    ftyp = box(b"ftyp", b"heic", bytes(4), b"mif1heic")
    offset = len(ftyp) + len(meta(0)) + 8
    return ftyp + meta(offset) + box(b"mdat", payload)
