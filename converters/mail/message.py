"""A mail message, whichever file it came from, and the one way it is written out.

Markdown: the subject as the ``#`` heading; a header block (``**From:**``,
``**To:**``, ``**Cc:**``, ``**Date:**``, ``**Subject:**``, one per line); the body
under ``## Content``; then the attachments (:mod:`converters.mail.attachments`).
An address is written ``address (Name)``, RFC 822's comment form, which needs no
Markdown escaping and keeps the address first. JSON ``data``: the same headers
structured (addresses as ``{"name", "address"}``, the date in ISO 8601), the body's
original format and the attachments.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from docshelf.converters.assemble import parsed_markdown_result
from docshelf.converters.base import ConversionResult, Source
from docshelf.converters.html.markdown import html_to_markdown
from docshelf.converters.mail.attachments import ATTACHMENT_LABEL, bounded
from docshelf.converters.markdown.converter import markdown_facts
from docshelf.converters.markdown.model import parse_markdown
from docshelf.converters.members import (
    ConvertedMember,
    Member,
    convert_members,
    demote_headings,
    member_entries,
    members_markdown,
)
from docshelf.converters.textutil import (
    DESCRIPTION_LIMIT,
    collapse_whitespace,
    escape_markdown_inline,
    markdown_heading,
    summarize,
    text_to_markdown,
)

CONTENT_HEADING = "Content"


@dataclass(frozen=True, slots=True)
class Address:
    name: str
    address: str

    @classmethod
    def of(cls, name: str | None, address: str | None) -> Address | None:
        """The address, or None when it has neither a name nor an address."""
        name, address = collapse_whitespace(name or ""), collapse_whitespace(address or "")
        found = cls("" if name == address else name, address)
        return found if found.name or found.address else None

    def display(self) -> str:
        if self.name and self.address and self.name != self.address:
            return f"{self.address} ({self.name})"
        return self.address or self.name

    def as_json(self) -> dict[str, str | None]:
        return {"name": self.name or None, "address": self.address or None}


@dataclass(frozen=True, slots=True)
class Body:
    """The message text as Markdown, and what it was written in (plain, html, rtf)."""

    markdown: str
    format: str

    @classmethod
    def of_text(cls, text: str) -> Body:
        return cls(text_to_markdown(text), "plain")

    @classmethod
    def of_html(cls, html: str) -> Body:
        """HTML through the HTML converter; its headings sit below ``## Content``."""
        return cls(demote_headings(html_to_markdown(html).markdown, 2), "html")


@dataclass(frozen=True, slots=True)
class Mail:
    subject: str | None = None
    sender: Address | None = None
    to: tuple[Address, ...] = ()
    cc: tuple[Address, ...] = ()
    date: datetime | None = None
    message_id: str | None = None
    body: Body | None = None
    attachments: tuple[Member, ...] = ()


def mail_result(source: Source, mail: Mail) -> ConversionResult:
    """The four formats of ``mail``; attachments that are documents become sections."""
    attached, omitted = bounded(mail.attachments)
    converted = convert_members(attached, level=2)
    markdown, parts = mail_markdown(mail, converted, omitted)
    document = parse_markdown(markdown)
    metadata = _metadata(mail)
    facts = dataclasses.replace(
        markdown_facts(document, metadata=metadata), title=mail.subject, description=_describe(mail)
    )
    data: dict[str, Any] = {
        "subject": mail.subject,
        "from": mail.sender.as_json() if mail.sender else None,
        "to": [address.as_json() for address in mail.to],
        "cc": [address.as_json() for address in mail.cc],
        "date": mail.date.isoformat() if mail.date else None,
        "message_id": mail.message_id,
        "body_format": mail.body.format if mail.body else None,
        "attachments": member_entries(converted, parts),
    }
    if omitted:
        data["attachments_omitted"] = omitted
    return parsed_markdown_result(
        source, facts, markdown, document, pdf_author=metadata.get("author"), data=data
    )


def mail_markdown(
    mail: Mail, attached: Sequence[ConvertedMember], omitted: int
) -> tuple[str, list[str | None]]:
    """The message's Markdown, and the part each attachment can be read as (None: listed only)."""
    blocks: list[str] = []
    if mail.subject:
        blocks.append(markdown_heading(1, mail.subject))
    header = [
        f"**{label}:** {escape_markdown_inline(value)}"
        for label, value in _header_values(mail)
        if value
    ]
    if header:
        blocks.append("\\\n".join(header))
    if mail.body and mail.body.markdown.strip():
        blocks.append(markdown_heading(2, CONTENT_HEADING))
        blocks.append(mail.body.markdown.strip())
    if not attached:
        return "\n\n".join(blocks) + "\n", []
    blocks.append(markdown_heading(2, "Attachments"))
    if omitted:
        blocks.append(f"{omitted} more attachments are not listed.")
    return members_markdown(attached, level=2, before="\n\n".join(blocks), label=ATTACHMENT_LABEL)


def _header_values(mail: Mail) -> list[tuple[str, str]]:
    return [
        ("From", mail.sender.display() if mail.sender else ""),
        ("To", _addresses(mail.to)),
        ("Cc", _addresses(mail.cc)),
        ("Date", _date(mail.date)),
        ("Subject", mail.subject or ""),
    ]


def _addresses(addresses: Sequence[Address]) -> str:
    return ", ".join(address.display() for address in addresses)


def _date(date: datetime | None) -> str:
    return date.isoformat(sep=" ") if date else ""


def _metadata(mail: Mail) -> dict[str, str]:
    values = {
        "author": mail.sender.display() if mail.sender else "",
        "to": _addresses(mail.to),
        "cc": _addresses(mail.cc),
        "date": mail.date.isoformat() if mail.date else "",
        "message_id": mail.message_id or "",
        "attachments": str(len(mail.attachments)) if mail.attachments else "",
    }
    return {key: value for key, value in values.items() if value}


def _describe(mail: Mail) -> str | None:
    """ "Email from Ann Smith, 2024-03-01: the first words of the body"."""
    who = (mail.sender.name or mail.sender.address) if mail.sender else ""
    lead = (
        "Email" + (f" from {who}" if who else "") + (f", {mail.date:%Y-%m-%d}" if mail.date else "")
    )
    text = parse_markdown(mail.body.markdown).text if mail.body else ""
    summary = summarize(text, max(40, DESCRIPTION_LIMIT - len(lead) - 2))
    return f"{lead}: {summary}" if summary else lead
