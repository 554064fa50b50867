"""Outlook's RTF bodies: compressed RTF (MS-OXRTFCP) and HTML encapsulated in RTF (MS-OXRTFEX).

A ``.msg`` without a plain or HTML body keeps it as PidTagRtfCompressed: a 16-byte
header (sizes, ``LZFu`` compressed or ``MELA`` stored, CRC) then LZ77 tokens
over a 4 KB window preloaded with a fixed RTF prefix. Decompressing cannot grow
more than ~8.5 times the input (each control byte and two-byte reference yields
at most 17 bytes per 2), so it needs no other bound. The CRC is not checked: a
damaged body still reads as far as it goes.

Outlook writes an HTML message's body as RTF marked ``\\fromhtml1``: the HTML's
tags sit in ``{\\*\\htmltagN ...}`` groups and its text in the open, while
``\\htmlrtf`` ... ``\\htmlrtf0`` brackets RTF meant only for RTF readers. Taking
the tags and the open text, and skipping the rest, gives back the HTML.
"""

from __future__ import annotations

import re
import struct

from docshelf.converters.mail.charsets import decode_bytes

_DICTIONARY = (
    b"{\\rtf1\\ansi\\mac\\deff0\\deftab720{\\fonttbl;}{\\f0\\fnil \\froman \\fswiss \\fmodern "
    b"\\fscript \\fdecor MS Sans SerifSymbolArialTimes New RomanCourier{\\colortbl\\red0\\green0"
    b"\\blue0\r\n\\par \\pard\\plain\\f0\\fs20\\b\\i\\u\\tab\\tx"
)
_WINDOW = 4096
_HEADER = struct.Struct("<II4sI")

_TOKEN = re.compile(
    r"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?|\\'([0-9a-fA-F]{2})|\\([^a-zA-Z])|([{}])|([^\\{}]+)"
)
#: Groups whose text is never the message's (besides ``\*`` destinations).
_SKIPPED = frozenset({"fonttbl", "colortbl", "stylesheet", "info", "pict", "listtable"})
_CHARACTERS = {"par": "\r\n", "line": "\r\n", "tab": "\t", "emdash": "\u2014", "endash": "\u2013"}


def decompress_rtf(data: bytes) -> bytes:
    """The RTF in a PidTagRtfCompressed value; ValueError when it is not one."""
    if len(data) < _HEADER.size:
        raise ValueError("compressed RTF shorter than its header")
    compressed_size, raw_size, kind, _crc = _HEADER.unpack_from(data)
    body = data[_HEADER.size : 4 + compressed_size]
    if kind == b"MELA":
        return body[:raw_size]
    if kind != b"LZFu":
        raise ValueError(f"unknown compressed RTF kind {kind!r}")
    window = bytearray(_DICTIONARY.ljust(_WINDOW, b" "))
    write = len(_DICTIONARY)
    out = bytearray()
    position = 0
    while position < len(body):
        control = body[position]
        position += 1
        for bit in range(8):
            if position >= len(body):
                break
            if not control & (1 << bit):
                offset, length = -1, 1
            elif position + 1 < len(body):
                reference = body[position] << 8 | body[position + 1]
                position += 1
                offset, length = reference >> 4, (reference & 15) + 2
                if offset == write:  # the end marker
                    return bytes(out)
            else:
                return bytes(out)
            for k in range(length):  # byte by byte: a reference may copy what it writes
                byte = body[position] if offset < 0 else window[(offset + k) % _WINDOW]
                window[write] = byte
                write = (write + 1) % _WINDOW
                out.append(byte)
            position += 1
    return bytes(out)


def is_encapsulated_html(rtf: str) -> bool:
    """Whether ``rtf`` (latin-1 decoded) is an HTML body Outlook wrapped in RTF."""
    return "\\fromhtml" in rtf[:2048]


def encapsulated_html(rtf: str) -> str:
    """The HTML inside an ``\\fromhtml1`` RTF body (``rtf`` decoded as latin-1)."""
    codepage: str | int = "cp1252"
    out: list[str] = []
    pending = bytearray()  # \'xx bytes, decoded together (multi-byte code pages)
    # Per group: (skipping everything, inside an htmltag, \htmlrtf suppression)
    state = (False, False, False)
    stack: list[tuple[bool, bool, bool]] = []
    skip_chars = 0
    uc = 1
    for word, argument, hexbyte, symbol, brace, text in _TOKEN.findall(rtf):
        if pending and not hexbyte:
            out.append(decode_bytes(bytes(pending), codepage))
            pending.clear()
        skipping, in_tag, suppressed = state
        if brace == "{":
            stack.append(state)
        elif brace == "}":
            state = stack.pop() if stack else state
        elif symbol == "*":
            state = (True, in_tag, suppressed)
        elif word:
            if word == "htmltag":
                state = (False, True, suppressed)
            elif word == "htmlrtf":
                state = (skipping, in_tag, argument != "0")
            elif word in _SKIPPED or word == "mhtmltag":
                state = (True, in_tag, suppressed)
            elif word == "ansicpg" and argument.isdigit():
                codepage = int(argument)
            elif word == "uc" and argument.isdigit():
                uc = int(argument)
            elif not skipping and (in_tag or not suppressed):
                if word == "u" and argument:
                    out.append(chr(int(argument) % 0x10000))
                    skip_chars = uc
                    continue
                out.append(_CHARACTERS.get(word, ""))
        elif skipping or (suppressed and not in_tag):
            pass
        elif hexbyte:
            if skip_chars:
                skip_chars -= 1
            else:
                pending.append(int(hexbyte, 16))
        elif symbol:
            out.append(symbol if symbol in "\\{}" else "")
        elif text:
            text = text.replace("\r", "").replace("\n", "")
            out.append(text[skip_chars:])
            skip_chars = max(0, skip_chars - len(text))
    if pending:
        out.append(decode_bytes(bytes(pending), codepage))
    return "".join(out)
