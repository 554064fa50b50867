"""Pictures (PNG, JPEG, TIFF, WebP, GIF, BMP, AVIF with Pillow; HEIC/HEIF from their boxes).

Nothing is decoded: Pillow's ``open`` reads the header (size, mode, frames,
dpi, EXIF, XMP) and that is all a picture's metadata needs. HEIC has no decoder
under a licence docshelf can ship, so its facts come from its boxes
(:mod:`converters.media.heif`). Pillow refuses to *open* a picture of more than
twice ``MAX_IMAGE_PIXELS`` (a decompression-bomb guard for decoding, which this
converter never does); such a picture is opened through its format's reader
directly, so a huge scan is still described.

GPS coordinates are where a photo was taken, often someone's home: they are
read only when the operator sets ``DOCSHELF_IMAGE_GPS=1``. The setting is part
of :attr:`ImageConverter.version`, so turning it on or off converts again.
"""

from __future__ import annotations

import io
import math
import os
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from docshelf.converters.base import ConversionError, ConversionResult, FailureReason, Source
from docshelf.converters.failures import describe
from docshelf.converters.media.heif import read_heif
from docshelf.converters.media.isobmff import BoxError, Boxes, brands, looks_like_isobmff
from docshelf.converters.media.picture_text import read_text, with_text
from docshelf.converters.media.report import MediaReport, media_result
from docshelf.converters.media.xmp import read_xmp
from docshelf.converters.textutil import check_size, clean_text, collapse_whitespace

if TYPE_CHECKING:
    from PIL import Image

IMAGE_MIME_TYPES = frozenset(
    {
        "image/png",
        "image/apng",
        "image/jpeg",
        "image/pjpeg",
        "image/tiff",
        "image/webp",
        "image/gif",
        "image/bmp",
        "image/x-bmp",
        "image/x-ms-bmp",
        "image/avif",
        "image/heic",
        "image/heif",
        "image/heic-sequence",
        "image/heif-sequence",
    }
)
IMAGE_EXTENSIONS = frozenset(
    {".png", ".apng", ".jpg", ".jpeg", ".jpe", ".jfif", ".tif", ".tiff", ".webp", ".gif", ".bmp"}
    | {".avif", ".heic", ".heif", ".hif"}
)
#: Images larger than this are not read (the conversion runner's own cap is lower by default).
MAX_IMAGE_BYTES = 512 * 1024 * 1024
#: Pillow's names of the formats it decodes, which OCR can read (HEIC it cannot)...
OCR_FORMATS = frozenset({"PNG", "JPEG", "MPO", "TIFF", "WEBP", "GIF", "BMP", "AVIF"})
#: ...when the picture has at most this many pixels (decoding a bigger one to shrink it
#: for OCR would take more memory than a worker has).
OCR_MAX_PIXELS = 120_000_000
#: The setting that lets GPS coordinates into the conversions (app/settings.py: image_gps).
GPS_SETTING = "DOCSHELF_IMAGE_GPS"
#: What pydantic reads as true for a bool setting (app/settings.py validates it at start).
_TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})

_EXIF_IFD, _GPS_IFD = 0x8769, 0x8825
_IFD0 = {
    "description": 0x010E,
    "make": 0x010F,
    "model": 0x0110,
    "orientation": 0x0112,
    "modified": 0x0132,
    "artist": 0x013B,
    "copyright": 0x8298,
    "xmp": 0x02BC,
    "xp_title": 0x9C9B,
    "xp_comment": 0x9C9C,
    "xp_author": 0x9C9D,
    "xp_subject": 0x9C9F,
}
_EXIF = {
    "exposure_time": 0x829A,
    "f_number": 0x829D,
    "iso": 0x8827,
    "taken": 0x9003,
    "digitized": 0x9004,
    "offset": 0x9011,
    "focal_length": 0x920A,
    "focal_length_35mm": 0xA405,
    "lens_make": 0xA433,
    "lens_model": 0xA434,
}
#: EXIF orientation, as exiftool names it.
ORIENTATIONS = {
    1: "Horizontal (normal)",
    2: "Mirror horizontal",
    3: "Rotate 180",
    4: "Mirror vertical",
    5: "Mirror horizontal and rotate 270 CW",
    6: "Rotate 90 CW",
    7: "Mirror horizontal and rotate 90 CW",
    8: "Rotate 270 CW",
}
#: What cameras write into ImageDescription when nobody described the picture.
_CAMERA_PLACEHOLDER = re.compile(
    r"(?i)^(?:[\w-]+ )?(?:digital (?:still )?camera|dsc|default|image|picture|untitled)$"
)
_EXIF_DATE = re.compile(r"^(\d{4}):(\d{2}):(\d{2})[ T](\d{2}):(\d{2}):(\d{2})")
_OFFSET = re.compile(r"^[+-]\d{2}:\d{2}$")
#: HEIF brands named as people know them.
_HEIF_BRANDS = {"heic": "HEIC", "heix": "HEIC", "heim": "HEIC", "heis": "HEIC", "avif": "AVIF"}


def gps_enabled() -> bool:
    """Whether the operator lets GPS coordinates into conversions (``DOCSHELF_IMAGE_GPS``)."""
    return os.environ.get(GPS_SETTING, "").strip().lower() in _TRUE


class ImageConverter:
    """Describes pictures from their metadata: size, camera, date, XMP; GPS on request."""

    name = "image"

    @property
    def version(self) -> str:
        """ "2", or "2+gps" when GPS is read: a different setting is a different conversion."""
        return "2+gps" if gps_enabled() else "2"

    def accepts(self, source: Source) -> bool:
        return source.base_mime_type in IMAGE_MIME_TYPES or source.extension in IMAGE_EXTENSIONS

    def convert(self, source: Source) -> ConversionResult:
        check_size(source.data, MAX_IMAGE_BYTES)
        # Pillow warns of damaged tags ("Truncated File Read") as it reads: what survives is
        # read, what does not is left out, and the worker's log gets no traceback-like noise.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            picture = read_picture(source.data)
        report = picture.report(with_gps=gps_enabled())
        if picture.ocr_readable and source.ocr:
            report = with_text(report, read_text(source.data, picture))
        elif picture.ocr_readable:
            report = replace(report, ocr_pages=(1,))
        return media_result(source, report)


@dataclass(slots=True)
class Picture:
    """What a picture's header says."""

    format: str
    width: int | None
    height: int | None
    mode: str | None = None
    frames: int = 1
    dpi: tuple[float, float] | None = None
    exif: Mapping[str, Any] = field(default_factory=dict)
    gps: Mapping[str, float] = field(default_factory=dict)
    xmp: Mapping[str, str] = field(default_factory=dict)
    rotation: int = 0  # HEIF: degrees counter-clockwise to display it
    pillow: bool = True  # Pillow reads it (HEIF's facts come from its boxes instead)

    @property
    def ocr_readable(self) -> bool:
        """Whether OCR can read it: Pillow decodes its format, and it is not too big to."""
        return (
            self.pillow
            and self.format in OCR_FORMATS
            and bool(self.width and self.height)
            and (self.width or 0) * (self.height or 0) <= OCR_MAX_PIXELS
        )

    def report(self, *, with_gps: bool) -> MediaReport:
        exif, xmp = self.exif, self.xmp
        title = xmp.get("title") or exif.get("title")
        author = xmp.get("author") or exif.get("author")
        size = f"{self.width}×{self.height}" if self.width and self.height else None
        data: dict[str, Any] = {
            "kind": "image",
            "format": self.format,
            "width": self.width,
            "height": self.height,
        }
        data |= {"mode": self.mode} if self.mode else {}
        data |= {"frames": self.frames, "animated": self.frames > 1}
        data |= {"dpi": list(self.dpi)} if self.dpi else {}
        data |= {"rotation": self.rotation} if self.rotation else {}
        data |= {"exif": dict(exif)} if exif else {}
        data |= {"xmp": dict(xmp)} if xmp else {}
        gps = self.gps if with_gps else {}
        data |= {"gps": dict(gps)} if gps else {}
        rows = [
            ("Author", author or ""),
            (
                "Format",
                self.format + (f", animated, {self.frames} frames" if self.frames > 1 else ""),
            ),
            ("Dimensions", f"{size} pixels" if size else ""),
            ("Colour mode", self.mode or ""),
            ("Resolution", _dpi(self.dpi)),
            ("Rotation", f"{self.rotation}° counter-clockwise" if self.rotation else ""),
            *_exif_rows(exif),
            ("GPS", _gps(gps)),
        ]
        metadata = {
            key: str(value)
            for key, value in (
                ("author", author),
                ("created", exif.get("taken_at")),
                ("camera", exif.get("camera")),
                ("width", self.width),
                ("height", self.height),
                ("format", self.format),
            )
            if value
        }
        return MediaReport(
            title=title,
            description=xmp.get("description") or self._sentence(size),
            rows=rows,
            data=data,
            metadata=metadata,
        )

    def _sentence(self, size: str | None) -> str:
        """ "Photo taken 2024-03-14 with Canon EOS R5, 1615×1967", or "PNG image, 64×64"."""
        taken, camera = self.exif.get("taken_at"), self.exif.get("camera")
        if taken or camera:
            lead = "Photo" + (f" taken {taken[:10]}" if taken else "")
            lead += f" with {camera}" if camera else ""
        else:
            lead = f"{'Animated ' if self.frames > 1 else ''}{self.format} image"
        extras = [size] if size else []
        extras += [f"{self.frames} frames"] if self.frames > 1 else []
        return ", ".join([lead, *extras])


def read_picture(data: bytes) -> Picture:
    """The header facts of an image; :class:`ConversionError` (corrupt) if it is none."""
    from PIL import Image

    try:
        image = _open(data)
    except Exception as exc:
        if looks_like_isobmff(data[:16]):
            return _heif_picture(data)
        raise ConversionError(
            FailureReason.CORRUPT, f"not a readable image: {describe(exc)}"
        ) from exc
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Corrupt EXIF data": what survives is still read
            exif = image.getexif()
    except Exception:  # damaged EXIF: the picture is still there, its EXIF is not
        exif = Image.Exif()
    raw_xmp = image.info.get("xmp") or exif.get(_IFD0["xmp"])
    dpi = image.info.get("dpi")
    return Picture(
        format=image.format or "image",
        width=image.width,
        height=image.height,
        mode=image.mode,
        frames=_frames(image),
        dpi=_pair(dpi),
        exif=exif_facts(exif),
        gps=gps_facts(exif),
        xmp=read_xmp(raw_xmp if isinstance(raw_xmp, bytes | str) else None),
    )


def _open(data: bytes) -> Image.Image:
    """The image, header read; its pixel data checked where that is cheap (PNG's CRCs)."""
    from PIL import Image

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        try:
            Image.open(io.BytesIO(data)).verify()  # walks a PNG's chunks to IEND: truncation
            return Image.open(io.BytesIO(data))
        except Image.DecompressionBombError:
            return _open_unguarded(data)


def _open_unguarded(data: bytes) -> Image.Image:
    """Open with the format's own reader, past ``Image.open``'s pixel-count guard.

    The guard is against decoding a bomb; this converter decodes nothing, and
    the header of a 200-megapixel scan is as small as any other.
    """
    from PIL import Image

    Image.init()
    head = data[:16]
    for format_id in Image.ID:
        factory, accept = Image.OPEN[format_id]
        if accept is None or accept(head):
            try:
                return factory(io.BytesIO(data), "")
            except (SyntaxError, IndexError, TypeError, OSError, ValueError):
                continue
    raise ConversionError(FailureReason.CORRUPT, "not a readable image")


def _frames(image: Image.Image) -> int:
    try:
        return max(1, int(getattr(image, "n_frames", 1)))
    except Exception:  # a frame past the first is damaged: count what opens
        return 1


def _heif_picture(data: bytes) -> Picture:
    from PIL import Image

    try:
        heif = read_heif(data)
        names = brands(Boxes(data))
    except BoxError as exc:
        raise ConversionError(FailureReason.CORRUPT, f"unreadable HEIF image: {exc}") from exc
    exif = Image.Exif()
    if heif.exif:
        try:
            exif.load(heif.exif)
        except Exception:
            exif = Image.Exif()
    brand = next((_HEIF_BRANDS[b] for b in names if b in _HEIF_BRANDS), "HEIF")
    return Picture(
        format=brand,
        width=heif.width,
        height=heif.height,
        exif=exif_facts(exif),
        gps=gps_facts(exif),
        xmp=read_xmp(heif.xmp),
        rotation=heif.rotation,
        pillow=False,
    )


def exif_facts(exif: Image.Exif) -> dict[str, Any]:
    """Camera, lens, date taken, orientation and exposure from EXIF (absent ones left out)."""
    sub = _sub_ifd(exif, _EXIF_IFD)
    make, model = _text(exif.get(_IFD0["make"])), _text(exif.get(_IFD0["model"]))
    lens = _text(sub.get(_EXIF["lens_model"]))
    orientation = _integer(exif.get(_IFD0["orientation"]))
    description = _text(exif.get(_IFD0["description"]))
    facts: dict[str, Any] = {
        "title": _utf16(exif.get(_IFD0["xp_title"]))
        or (None if _CAMERA_PLACEHOLDER.match(description or "") else description),
        "author": _text(exif.get(_IFD0["artist"])) or _utf16(exif.get(_IFD0["xp_author"])),
        "copyright": _text(exif.get(_IFD0["copyright"])),
        "make": make,
        "model": model,
        "camera": camera_name(make, model),
        "lens": lens,
        "taken_at": _iso_date(
            sub.get(_EXIF["taken"]) or sub.get(_EXIF["digitized"]), sub.get(_EXIF["offset"])
        ),
        "orientation": orientation if orientation in ORIENTATIONS else None,
        "exposure_time": _number(sub.get(_EXIF["exposure_time"])),
        "f_number": _number(sub.get(_EXIF["f_number"])),
        "iso": _integer(sub.get(_EXIF["iso"])),
        "focal_length": _number(sub.get(_EXIF["focal_length"])),
        "focal_length_35mm": _integer(sub.get(_EXIF["focal_length_35mm"])),
    }
    return {key: value for key, value in facts.items() if value}


def gps_facts(exif: Image.Exif) -> dict[str, float]:
    """Latitude and longitude in signed degrees, altitude in metres (absent ones left out)."""
    gps = _sub_ifd(exif, _GPS_IFD)
    facts: dict[str, float] = {}
    for key, value_tag, ref_tag, negative, limit in (
        ("latitude", 2, 1, "S", 90),
        ("longitude", 4, 3, "W", 180),
    ):
        degrees = _degrees(gps.get(value_tag))
        if degrees is not None and abs(degrees) <= limit:
            sign = -1 if _text(gps.get(ref_tag)) == negative else 1
            facts[key] = round(sign * degrees, 6)
    altitude = _number(gps.get(6))
    if altitude is not None and facts:
        below = gps.get(5) in (1, b"\x01")
        facts["altitude"] = round(-altitude if below else altitude, 2)
    return facts


def camera_name(make: str | None, model: str | None) -> str | None:
    """ "Canon EOS R5" from make "Canon" and model "Canon EOS R5"; the make said once."""
    if not model:
        return make
    if not make or model.lower().startswith(make.split()[0].lower()):
        return model
    return f"{make} {model}"


def _sub_ifd(exif: Image.Exif, tag: int) -> Mapping[int, Any]:
    try:
        return exif.get_ifd(tag)
    except Exception:  # a damaged sub-directory: the rest of EXIF still stands
        return {}


def _text(value: object) -> str | None:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        return None
    return collapse_whitespace(clean_text(value.replace("\x00", " "))) or None


def _utf16(value: object) -> str | None:
    """Windows' XP* tags: UTF-16LE bytes (Pillow may give a tuple of byte values)."""
    if isinstance(value, tuple) and all(isinstance(b, int) and 0 <= b < 256 for b in value):
        value = bytes(value)
    return _text(value.decode("utf-16-le", "replace")) if isinstance(value, bytes) else None


def _number(value: object) -> float | None:
    if isinstance(value, tuple) and value:
        value = value[0]
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    return round(number, 6) if math.isfinite(number) else None


def _integer(value: object) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number.is_integer() else None


def _degrees(value: object) -> float | None:
    """Degrees, minutes, seconds (three rationals) as decimal degrees."""
    if not isinstance(value, tuple) or len(value) != 3:
        return None
    parts = [_number(part) for part in value]
    if any(part is None or part < 0 for part in parts):
        return None
    degrees, minutes, seconds = (part or 0.0 for part in parts)
    return degrees + minutes / 60 + seconds / 3600


def _iso_date(value: object, offset: object) -> str | None:
    """EXIF's "2024:03:14 22:10:00" (and "+01:00") as ISO 8601; None if it is no date."""
    text = _text(value)
    match = _EXIF_DATE.match(text or "")
    if match is None:
        return None
    try:
        year, month, day, hour, minute, second = (int(part) for part in match.groups())
        moment = datetime(year, month, day, hour, minute, second)
    except ValueError:  # "0000:00:00 00:00:00", a 31st of February
        return None
    zone = _text(offset)
    return moment.isoformat() + (zone if zone and _OFFSET.match(zone) else "")


def _pair(value: object) -> tuple[float, float] | None:
    if not isinstance(value, tuple) or len(value) != 2:
        return None
    x, y = _number(value[0]), _number(value[1])
    return (round(x, 2), round(y, 2)) if x and y else None


def _dpi(dpi: tuple[float, float] | None) -> str:
    if dpi is None:
        return ""
    x, y = (f"{v:g}" for v in dpi)
    return f"{x} dpi" if x == y else f"{x}×{y} dpi"


def _exif_rows(exif: Mapping[str, Any]) -> list[tuple[str, str]]:
    focal_35 = exif.get("focal_length_35mm")
    in_35mm = f" ({focal_35} mm in 35 mm film)" if focal_35 else ""
    shown: list[tuple[str, str, Callable[[Any], str]]] = [
        ("Camera", "camera", str),
        ("Lens", "lens", str),
        ("Taken", "taken_at", str),
        ("Orientation", "orientation", ORIENTATIONS.__getitem__),
        ("Exposure", "exposure_time", _exposure),
        ("Aperture", "f_number", lambda f: f"f/{f:g}"),
        ("ISO", "iso", str),
        ("Focal length", "focal_length", lambda mm: f"{mm:g} mm{in_35mm}"),
        ("Copyright", "copyright", str),
    ]
    return [(label, show(exif[key])) for label, key, show in shown if key in exif]


def _exposure(seconds: float) -> str:
    """1/250 s, or 2.5 s."""
    if 0 < seconds < 1:
        return f"1/{round(1 / seconds)} s"
    return f"{seconds:g} s"


def _gps(gps: Mapping[str, float]) -> str:
    if "latitude" not in gps or "longitude" not in gps:
        return ""
    where = f"{gps['latitude']:.6f}, {gps['longitude']:.6f}"
    return where + (f", {gps['altitude']:g} m" if "altitude" in gps else "")
