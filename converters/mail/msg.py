"""Outlook messages (``.msg``): an OLE2 compound file of MAPI properties, read with olefile.

olefile (BSD) gives the storages and streams; the MAPI layout (MS-OXMSG) is read
here. A property is a stream ``__substg1.0_IIIITTTT`` (id, type) when it is a
string or binary, or a 16-byte entry of ``__properties_version1.0`` when it is
fixed-size (integers, times). Strings are ``001F`` (UTF-16LE) or ``001E`` (8-bit,
in the message's code page: :data:`~converters.mail.charsets.CODE_PAGES` maps the
Windows code pages Python has no codec name for).

The sender's address is PidTagSenderSmtpAddress, else PidTagSenderEmailAddress
when it is an SMTP address (an Exchange one is an X.500 path); recipients come
from the recipient storages (type 1 To, 2 Cc), else from PidTagDisplayTo/Cc,
which hold names only. The body is PidTagBody, else PidTagHtml, else the
compressed RTF (:mod:`converters.mail.rtfbody`), whose encapsulated HTML goes
through the HTML converter and other RTF through the RTF converter's reader.
Attached files go to :mod:`converters.mail.attachments`; an attached Outlook
message is a storage, not bytes, and is listed with its subject only.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from docshelf.converters.base import ConversionError, ConversionResult, FailureReason, Source
from docshelf.converters.failures import conversion_failure, describe
from docshelf.converters.mail.attachments import NOT_OPENED, attachment
from docshelf.converters.mail.charsets import decode_bytes
from docshelf.converters.mail.message import Address, Body, Mail, mail_result
from docshelf.converters.mail.rtfbody import decompress_rtf, encapsulated_html, is_encapsulated_html
from docshelf.converters.members import Member
from docshelf.converters.textutil import check_size

MSG_MIME_TYPES = frozenset({"application/vnd.ms-outlook"})
MSG_EXTENSIONS = frozenset({".msg"})
OLE_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
#: Recipients and attachments read (MS-OXMSG caps attachments at 2048 too).
MAX_RECIPIENTS = 2048
MAX_ATTACHMENTS = 2048

SUBJECT, BODY, HTML, RTF_COMPRESSED = 0x0037, 0x1000, 0x1013, 0x1009
SENDER_NAME, SENDER_ADDRESS, SENDER_SMTP = 0x0C1A, 0x0C1F, 0x5D01
SENT_REPRESENTING_NAME, SENT_REPRESENTING_ADDRESS = 0x0042, 0x0065
DISPLAY_TO, DISPLAY_CC = 0x0E04, 0x0E03
SUBMIT_TIME, DELIVERY_TIME = 0x0039, 0x0E06
MESSAGE_ID = 0x1035
MESSAGE_CODEPAGE, INTERNET_CODEPAGE = 0x3FFD, 0x3FDE
RECIPIENT_TYPE, DISPLAY_NAME, EMAIL_ADDRESS, SMTP_ADDRESS = 0x0C15, 0x3001, 0x3003, 0x39FE
ATTACH_LONG_FILENAME, ATTACH_FILENAME, ATTACH_DATA, ATTACH_MIME = 0x3707, 0x3704, 0x3701, 0x370E

_UNICODE, _STRING8, _BINARY = 0x001F, 0x001E, 0x0102
_INT32, _SYSTIME = 0x0003, 0x0040
_FILETIME_EPOCH = datetime(1601, 1, 1, tzinfo=UTC)
_ENTRY = struct.Struct("<HHI8s")  # type, id, flags, value


class MsgConverter:
    """Converts Outlook messages."""

    name = "msg"
    version = "1"

    def accepts(self, source: Source) -> bool:
        return source.base_mime_type in MSG_MIME_TYPES or source.extension in MSG_EXTENSIONS

    def convert(self, source: Source) -> ConversionResult:
        check_size(source.data)
        if not source.data.startswith(OLE_SIGNATURE):
            raise ConversionError(
                FailureReason.CORRUPT, "not an Outlook message: not an OLE2 compound file"
            )
        try:
            mail = read_msg(source.data)
        except ConversionError:
            raise
        except Exception as exc:  # olefile raises OSError, struct.error, IndexError ...
            raise conversion_failure(exc, f"unreadable Outlook message: {describe(exc)}") from exc
        return mail_result(source, mail)


class _Storage:
    """The properties of one storage: the message, a recipient, an attachment."""

    def __init__(self, ole: Any, path: list[str], header_size: int, codepage: int | None) -> None:
        self.ole, self.path, self.codepage = ole, path, codepage
        self.fixed: dict[int, tuple[int, bytes]] = {}
        properties = [*path, "__properties_version1.0"]
        if ole.exists("/".join(properties)):
            table = ole.openstream(properties).read()
            for offset in range(header_size, len(table) - _ENTRY.size + 1, _ENTRY.size):
                kind, ident, _flags, value = _ENTRY.unpack_from(table, offset)
                self.fixed[ident] = (kind, value)

    def _stream(self, ident: int, kind: int) -> bytes | None:
        name = [*self.path, f"__substg1.0_{ident:04X}{kind:04X}"]
        return self.ole.openstream(name).read() if self.ole.exists("/".join(name)) else None

    def string(self, ident: int) -> str | None:
        unicode = self._stream(ident, _UNICODE)
        if unicode is not None:
            return unicode.decode("utf-16-le", errors="replace").rstrip("\x00") or None
        eight_bit = self._stream(ident, _STRING8)
        if eight_bit is not None:
            return decode_bytes(eight_bit.rstrip(b"\x00"), self.codepage).strip() or None
        return None

    def binary(self, ident: int) -> bytes | None:
        return self._stream(ident, _BINARY)

    def integer(self, ident: int) -> int | None:
        kind, value = self.fixed.get(ident, (0, b""))
        return struct.unpack_from("<i", value)[0] if kind == _INT32 else None

    def time(self, ident: int) -> datetime | None:
        kind, value = self.fixed.get(ident, (0, b""))
        if kind != _SYSTIME:
            return None
        ticks = struct.unpack_from("<Q", value)[0]
        try:
            return _FILETIME_EPOCH + timedelta(microseconds=ticks // 10)
        except OverflowError:
            return None

    def children(self, prefix: str, limit: int) -> Iterator[_Storage]:
        """The recipient or attachment storages below this one, in order."""
        names = sorted(
            {
                entry[len(self.path)]
                for entry in self.ole.listdir(streams=True, storages=True)
                if len(entry) > len(self.path)
                and entry[: len(self.path)] == self.path
                and entry[len(self.path)].startswith(prefix)
            }
        )
        for name in names[:limit]:
            yield _Storage(self.ole, [*self.path, name], 8, self.codepage)


def read_msg(data: bytes) -> Mail:
    """The :class:`Mail` in an Outlook message's bytes (olefile's errors escape)."""
    import olefile

    with olefile.OleFileIO(io.BytesIO(data)) as ole:
        return _mail(_Storage(ole, [], 32, None))


def _mail(message: _Storage) -> Mail:
    message.codepage = message.integer(MESSAGE_CODEPAGE) or message.integer(INTERNET_CODEPAGE)
    recipients = list(message.children("__recip_version1.0_", MAX_RECIPIENTS))
    to, cc = _recipients(recipients, 1), _recipients(recipients, 2)
    return Mail(
        subject=message.string(SUBJECT),
        sender=_sender(message),
        to=to or _display_names(message.string(DISPLAY_TO)),
        cc=cc or _display_names(message.string(DISPLAY_CC)),
        date=message.time(SUBMIT_TIME) or message.time(DELIVERY_TIME),
        message_id=message.string(MESSAGE_ID),
        body=_body(message),
        attachments=tuple(
            _attachment(a) for a in message.children("__attach_version1.0_", MAX_ATTACHMENTS)
        ),
    )


def _sender(message: _Storage) -> Address | None:
    addresses = (
        message.string(SENDER_SMTP),
        message.string(SENDER_ADDRESS),
        message.string(SENT_REPRESENTING_ADDRESS),
    )
    address = next((a for a in addresses if a and "@" in a), None) or addresses[1]
    return Address.of(
        message.string(SENDER_NAME) or message.string(SENT_REPRESENTING_NAME), address
    )


def _recipients(recipients: list[_Storage], kind: int) -> tuple[Address, ...]:
    found = (
        Address.of(r.string(DISPLAY_NAME), r.string(SMTP_ADDRESS) or r.string(EMAIL_ADDRESS))
        for r in recipients
        if r.integer(RECIPIENT_TYPE) == kind
    )
    return tuple(address for address in found if address is not None)


def _display_names(names: str | None) -> tuple[Address, ...]:
    found = (Address.of(name, None) for name in (names or "").split(";"))
    return tuple(address for address in found if address is not None)


def _body(message: _Storage) -> Body | None:
    text = message.string(BODY)
    if text and text.strip():
        return Body.of_text(text.replace("\r\n", "\n"))
    html = message.binary(HTML)
    if html:
        return Body.of_html(decode_bytes(html, message.integer(INTERNET_CODEPAGE)))
    html_text = message.string(HTML)
    if html_text:
        return Body.of_html(html_text)
    compressed = message.binary(RTF_COMPRESSED)
    if not compressed:
        return None
    try:
        rtf = decompress_rtf(compressed).decode("latin-1")
    except ValueError:
        return None
    if is_encapsulated_html(rtf):
        return Body.of_html(encapsulated_html(rtf))
    from docshelf.converters.rtf import rtf_markdown

    return Body(rtf_markdown(rtf).markdown, "rtf")


def _attachment(storage: _Storage) -> Member:
    name = (
        storage.string(ATTACH_LONG_FILENAME)
        or storage.string(ATTACH_FILENAME)
        or storage.string(DISPLAY_NAME)
        or "attachment"
    )
    data = storage.binary(ATTACH_DATA)
    if data is not None:
        return attachment(name, data)
    embedded = [*storage.path, f"__substg1.0_{ATTACH_DATA:04X}000D"]
    if storage.ole.exists("/".join(embedded)):
        inner = _Storage(storage.ole, embedded, 24, storage.codepage)
        subject = inner.string(SUBJECT)
        return attachment(
            f"{subject or name}.msg",
            b"",
            note=NOT_OPENED,
            mime_type="application/vnd.ms-outlook",
        )
    return attachment(name, b"", note="not a file (a link or an OLE object)")
