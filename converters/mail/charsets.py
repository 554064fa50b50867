"""Bytes in a declared (or undeclared, or unknown) charset to text, never failing.

Mail declares its charsets (MIME ``charset=``, RFC 2047 words, Outlook code pages),
and declares them wrongly often enough: an unknown name, a code page Python has no
codec for, bytes that do not fit. The declared one is tried first, through
:data:`CODE_PAGES` for Windows code page numbers, then UTF-8, then the encoding
detected from the bytes (:func:`converters.textutil.decode`), so that a message
always reads, at worst with a few ``�``.
"""

from __future__ import annotations

import codecs
import re

from docshelf.converters.base import ConversionError
from docshelf.converters.textutil import decode

#: Windows code pages (Outlook's PidTagMessageCodepage, PidTagInternetCodepage)
#: whose ``cpNNNN`` name Python does not know, by the codec it does know.
CODE_PAGES: dict[int, str] = {
    1200: "utf-16-le",
    1201: "utf-16-be",
    10000: "mac_roman",
    20127: "ascii",
    20866: "koi8_r",
    21866: "koi8_u",
    **{28590 + n: f"iso8859_{n}" for n in range(1, 16) if n != 12},
    50220: "iso2022_jp",
    50221: "iso2022_jp",
    50222: "iso2022_jp",
    51932: "euc_jp",
    51949: "euc_kr",
    52936: "hz",
    54936: "gb18030",
    65000: "utf_7",
    65001: "utf-8",
}

_SURROGATES = re.compile("[\udc80-\udcff]+")
_CODE_PAGE_NAME = re.compile(r"(?:cp|x-cp|windows-|ms)(\d+)")


def codec_for(charset: str | int | None) -> str | None:
    """Python's codec for a charset name or Windows code page, or None if it has none."""
    if charset is None:
        return None
    if isinstance(charset, int):
        name = CODE_PAGES.get(charset, f"cp{charset}")
    else:
        name = charset.strip().strip("\"'").lower()
        numbered = _CODE_PAGE_NAME.fullmatch(name)
        if numbered:
            name = CODE_PAGES.get(int(numbered[1]), f"cp{numbered[1]}")
    try:
        return codecs.lookup(name).name
    except (LookupError, ValueError):
        return None


def decode_bytes(data: bytes, charset: str | int | None = None) -> str:
    """``data`` as text: in ``charset`` if it fits, else UTF-8, else as detected."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    if data.startswith(codecs.BOM_UTF8):
        return data[3:].decode("utf-8", errors="replace")
    codec = codec_for(charset)
    for candidate in (codec, "utf-8"):
        if candidate:
            try:
                return data.decode(candidate)
            except (UnicodeDecodeError, LookupError):
                continue
    try:
        return decode(data).text  # undeclared or wrongly declared: what the bytes say
    except ConversionError:  # NUL bytes that are not UTF-16: text is what the mail promised
        return data.decode(codec or "cp1252", errors="replace")


def repair_surrogates(text: str) -> str:
    """Text the email package decoded with undecodable bytes escaped (``\\udcXX``), re-decoded.

    A header in an unknown charset comes back with its 8-bit bytes as lone
    surrogates, which cannot even be written as UTF-8.
    """
    return _SURROGATES.sub(
        lambda run: decode_bytes(run[0].encode("utf-8", errors="surrogateescape")), text
    )
