"""Internet mail (RFC 5322 / MIME ``.eml``), read with the standard library's ``email`` package.

Headers come back RFC 2047-decoded (``policy.default``); a header in an unknown
charset keeps its bytes, re-decoded by :func:`~converters.mail.charsets.repair_surrogates`.
Parts are walked here rather than with ``get_body``/``walk``, which recurse: a
message nested thousands of multiparts deep must be refused, not crash. The body
is the first inline ``text/plain`` part, else the first inline ``text/html`` one;
transfer encodings (base64, quoted-printable) are undone by ``get_payload(decode=True)``
and the charset by :func:`~converters.mail.charsets.decode_bytes`, which falls
back gracefully on an unknown or wrong one. Parts with a file name or an
``attachment`` disposition, and attached messages, are the attachments.
A file saved as UTF-16 (with a byte-order mark) is read as the text it holds.
"""

from __future__ import annotations

import codecs
import email
import email.utils
from datetime import datetime
from email.message import EmailMessage, Message

from docshelf.converters.base import ConversionError, ConversionResult, FailureReason, Source
from docshelf.converters.mail.attachments import attachment
from docshelf.converters.mail.charsets import decode_bytes, repair_surrogates
from docshelf.converters.mail.message import Address, Body, Mail, mail_result
from docshelf.converters.members import Member
from docshelf.converters.textutil import check_size, collapse_whitespace

EML_MIME_TYPES = frozenset({"message/rfc822"})
EML_EXTENSIONS = frozenset({".eml"})
#: How deep multiparts may nest, and how many parts a message may have.
MAX_DEPTH = 32
MAX_PARTS = 2000
#: Headers at least one of which a message has; bytes with none are not mail.
_MESSAGE_HEADERS = ("from", "to", "subject", "date", "message-id", "received", "mime-version")


class EmlConverter:
    """Converts Internet mail messages."""

    name = "eml"
    version = "1"

    def accepts(self, source: Source) -> bool:
        return source.base_mime_type in EML_MIME_TYPES or source.extension in EML_EXTENSIONS

    def convert(self, source: Source) -> ConversionResult:
        check_size(source.data)
        return mail_result(source, read_eml(source.data))


def read_eml(data: bytes) -> Mail:
    """The :class:`Mail` in ``data``; ``corrupt`` when it holds no message headers."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        data = data.decode("utf-16", errors="replace").encode("utf-8")
    import email.policy  # its header registry costs a few ms: only when reading mail

    message = email.message_from_bytes(data, policy=email.policy.default)
    keys = {key.lower() for key in message}
    if not keys.intersection(_MESSAGE_HEADERS):
        raise ConversionError(FailureReason.CORRUPT, "not an e-mail message: no mail headers")
    assert isinstance(message, EmailMessage)
    plain, html, attachments = _parts(message)
    body: Body | None = None
    if plain is not None:
        body = Body.of_text(_text(plain))
    elif html is not None:
        body = Body.of_html(_text(html))
    senders = _addresses(message, "from")
    return Mail(
        subject=_header(message, "subject"),
        sender=senders[0] if senders else None,
        to=_addresses(message, "to"),
        cc=_addresses(message, "cc"),
        date=_date(message),
        message_id=_header(message, "message-id"),
        body=body,
        attachments=tuple(attachments),
    )


def _parts(message: Message) -> tuple[Message | None, Message | None, list[Member]]:
    """The plain body part, the HTML body part, and the attachments, walking without recursion."""
    plain: Message | None = None
    html: Message | None = None
    attachments: list[Member] = []
    stack: list[tuple[Message, int]] = [(message, 0)]
    count = 0
    while stack:
        part, depth = stack.pop()
        count += 1
        if depth > MAX_DEPTH or count > MAX_PARTS:
            raise ConversionError(
                FailureReason.TOO_LARGE,
                f"message over {MAX_DEPTH} levels of nested parts or {MAX_PARTS} parts",
            )
        content_type = part.get_content_type()
        if (part.is_multipart() and part.get_content_maintype() != "message") or not depth:
            children = part.get_payload()
            if isinstance(children, list):
                stack.extend(
                    (child, depth + 1) for child in reversed(children) if isinstance(child, Message)
                )
                continue
        filename = _filename(part)
        attached = filename or part.get_content_disposition() == "attachment"
        if attached or part.get_content_maintype() == "message":
            attachments.append(_attachment(part, content_type, filename))
        elif content_type == "text/plain" and plain is None:
            plain = part
        elif content_type == "text/html" and html is None:
            html = part
    return plain, html, attachments


def _filename(part: Message) -> str | None:
    try:
        name = part.get_filename()
    except Exception:  # the email package's parameter parser on a malformed header
        return None
    return repair_surrogates(collapse_whitespace(name)) if name else None


def _attachment(part: Message, content_type: str, filename: str | None) -> Member:
    data = _payload(part)
    if content_type == "message/rfc822":
        subject = _attached_subject(part)
        name = filename or (f"{subject}.eml" if subject else "message.eml")
        return attachment(name, data, mime_type=content_type)
    extension = content_type.rpartition("/")[2] if filename is None else ""
    return attachment(filename or f"attachment.{extension}", data)


def _payload(part: Message) -> bytes:
    """A leaf's bytes with its transfer encoding undone (an attached message as written)."""
    try:
        if part.get_content_maintype() == "message":
            return part.as_bytes()
        payload = part.get_payload(decode=True)
    except Exception:  # malformed transfer encodings, bodies the generator cannot write
        return b""
    return payload if isinstance(payload, bytes) else b""


def _attached_subject(part: Message) -> str | None:
    inner = part.get_payload()
    if isinstance(inner, list) and inner and isinstance(inner[0], EmailMessage):
        return _header(inner[0], "subject")
    return None


def _text(part: Message) -> str:
    return decode_bytes(_payload(part), part.get_content_charset())


def _header(message: Message, name: str) -> str | None:
    """A header's decoded text, or None; malformed headers come back as best they can."""
    try:
        value = message.get(name)
    except Exception:  # the header value parser on malformed input
        value = None
    if value is None:
        return None
    return collapse_whitespace(repair_surrogates(str(value))) or None


def _addresses(message: Message, name: str) -> tuple[Address, ...]:
    """The addresses of an address header (groups flattened); a broken one as written."""
    try:
        header = message.get(name)
        found = [(a.display_name, a.addr_spec) for a in getattr(header, "addresses", ())]
    except Exception:  # the address parser on malformed input
        raw = _header(message, name)
        found = email.utils.getaddresses([raw]) if raw else []
    addresses = (
        Address.of(repair_surrogates(name), repair_surrogates(address)) for name, address in found
    )
    return tuple(address for address in addresses if address is not None)


def _date(message: Message) -> datetime | None:
    try:
        found = getattr(message.get("date"), "datetime", None)
    except Exception:  # the date parser on malformed input
        return None
    return found if isinstance(found, datetime) else None
