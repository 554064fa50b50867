"""Files inside a document (a mail's attachments, later an archive's members) as its sections.

Each file is listed with its name, MIME type (detected from its content and name,
as the catalog would) and size. One that is a convertible document is converted
through the registry and becomes a section of its container, ``## Attachment:
report.pdf`` followed by its own Markdown with its headings demoted below that
heading, so it reads as a part (``?section=attachment-reportpdf``) and is
searched with the rest. Mail and archives inside are listed and never opened:
nothing recurses, so a bomb inside a bomb is only a line in a list. Everything is
bounded: how many files are listed and converted, the size of each, and the total.
A file that fails to convert is listed with the reason; its container still converts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from docshelf.converters.base import TEXT_MARKDOWN, ConversionError
from docshelf.converters.markdown.model import markdown_parser
from docshelf.converters.parts import headings_of, section_query
from docshelf.converters.textutil import (
    clean_text,
    collapse_whitespace,
    decode_text,
    escape_markdown_inline,
    markdown_heading,
)

#: Files listed; the rest are counted ("and 12 more").
MAX_LISTED = 500
#: Files converted into sections; the rest are listed only.
MAX_CONVERTED = 20
#: The largest file converted, and the most converted in all.
MAX_MEMBER_BYTES = 16 * 1024 * 1024
MAX_TOTAL_BYTES = 64 * 1024 * 1024
#: Mail and archives: listed, never opened (no recursion).
CONTAINER_TYPES = frozenset(
    {
        "message/rfc822",
        "application/vnd.ms-outlook",
        "application/x-ole-storage",
        "application/zip",
        "application/x-zip-compressed",
        "application/gzip",
        "application/x-gzip",
        "application/x-tar",
        "application/x-bzip2",
        "application/x-xz",
        "application/x-7z-compressed",
        "application/vnd.rar",
        "application/x-rar",
        "application/x-rar-compressed",
        "application/java-archive",
        "application/mbox",
    }
)
CONTAINER_EXTENSIONS = frozenset(
    {".eml", ".msg", ".mbox", ".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".jar"}
)


@dataclass(frozen=True, slots=True)
class Member:
    """A file inside the container; ``note`` says why it is only listed (an embedded message)."""

    name: str
    data: bytes
    note: str | None = None
    mime_type: str | None = None


@dataclass(frozen=True, slots=True)
class ConvertedMember:
    """A member as its container shows it: converted (``markdown``) or listed (``reason``)."""

    name: str
    mime_type: str
    size: int
    markdown: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Members:
    """The members listed, and how many more there were."""

    listed: tuple[ConvertedMember, ...]
    omitted: int = 0


def convert_members(members: Iterable[Member], *, heading_level: int = 2) -> Members:
    """Detect, bound and convert ``members``; converted Markdown sits below ``heading_level``."""
    listed: list[ConvertedMember] = []
    omitted = converted = total = 0
    for member in members:
        if len(listed) == MAX_LISTED:
            omitted += 1
            continue
        name = member_name(member.name)
        mime_type = member.mime_type or _detect(member.data, name)
        reason = member.note or _refusal(member, name, mime_type, converted, total)
        if reason is not None:
            listed.append(ConvertedMember(name, mime_type, len(member.data), reason=reason))
            continue
        converted += 1
        total += len(member.data)
        markdown, reason = _convert(member.data, mime_type, name)
        if markdown is not None:
            markdown = demote_headings(markdown, heading_level)
        listed.append(ConvertedMember(name, mime_type, len(member.data), markdown, reason))
    return Members(tuple(listed), omitted)


def member_name(name: str) -> str:
    """A member's file name without folders or control characters (``attachment`` if none)."""
    base = PurePosixPath(name.replace("\\", "/")).name
    return collapse_whitespace(clean_text(base)) or "attachment"


def _detect(data: bytes, name: str) -> str:
    from docshelf.converters.detect import HEAD_BYTES, detect_mime

    return detect_mime(data[:HEAD_BYTES], name)


def _refusal(member: Member, name: str, mime_type: str, converted: int, total: int) -> str | None:
    """Why ``member`` is listed and not converted, or None to convert it."""
    if not member.data:
        return "empty"
    if mime_type in CONTAINER_TYPES or PurePosixPath(name).suffix.lower() in CONTAINER_EXTENSIONS:
        return "listed only: attached mail and archives are not opened"
    if converted == MAX_CONVERTED:
        return f"listed only: over the limit of {MAX_CONVERTED} converted attachments"
    if len(member.data) > MAX_MEMBER_BYTES:
        return f"listed only: over the {MAX_MEMBER_BYTES}-byte limit for one attachment"
    if total + len(member.data) > MAX_TOTAL_BYTES:
        return f"listed only: over the {MAX_TOTAL_BYTES}-byte limit for all attachments"
    return None


def _convert(data: bytes, mime_type: str, name: str) -> tuple[str | None, str | None]:
    """The member's Markdown, or None and why not (the registry imports this package)."""
    from docshelf.converters.registry import convert

    try:
        representation = convert(data, mime_type, name).get(TEXT_MARKDOWN)
        if representation is None:  # a Markdown source is its own Markdown
            return decode_text(data), None
        return representation.data.decode("utf-8"), None
    except ConversionError as exc:
        return None, f"not converted ({exc.reason}): {exc.message}"


def demote_headings(markdown: str, by: int) -> str:
    """``markdown`` with its top-level headings ``by`` levels lower (at most level 6).

    Setext headings (underlined) become ATX ones, which carry any level.
    """
    lines = markdown.splitlines()
    tokens = markdown_parser().parse(markdown)
    edits: list[tuple[int, int, str]] = []
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.level != 0 or token.map is None:
            continue
        start, end = token.map
        level = min(6, int(token.tag[1]) + by)
        if token.markup.startswith("#"):
            text = lines[start].lstrip().lstrip("#")
            edits.append(
                (start, start + 1, "#" * level + (text if text.startswith(" ") else " " + text))
            )
        else:
            inline = tokens[index + 1].content
            edits.append((start, end, "#" * level + " " + collapse_whitespace(inline)))
    for start, end, line in reversed(edits):
        lines[start:end] = [line]
    return "\n".join(lines) + "\n"


def members_markdown(members: Members, *, label: str, level: int = 2) -> str:
    """The listing (``## Attachments``) and one section per converted member."""
    if not members.listed:
        return ""
    items = [_listing_line(member) for member in members.listed]
    if members.omitted:
        items.append(f"- … and {members.omitted} more")
    out = [markdown_heading(level, f"{label}s"), "\n".join(items)]
    for member in members.listed:
        if member.markdown is not None:
            out.append(markdown_heading(level, f"{label}: {member.name}"))
            out.append(member.markdown.strip() or "*(empty)*")
    return "\n\n".join(out) + "\n"


def _listing_line(member: ConvertedMember) -> str:
    line = (
        f"- {escape_markdown_inline(member.name)} ({member.mime_type}, {human_size(member.size)})"
    )
    return line + (f": {escape_markdown_inline(member.reason)}" if member.reason else "")


def member_entries(members: Members, markdown: str, *, label: str, level: int = 2) -> list[Any]:
    """The JSON entries of ``members``; a converted one names its part in ``markdown``."""
    wanted = iter(
        f"{label}: {member.name}" for member in members.listed if member.markdown is not None
    )
    slugs: list[str] = []
    title = next(wanted, None)
    for heading in headings_of(markdown):
        if title is not None and heading.level == level and heading.title == title:
            slugs.append(heading.slug)
            title = next(wanted, None)
    parts = iter(slugs)
    entries: list[Any] = []
    for member in members.listed:
        entry: dict[str, Any] = {
            "name": member.name,
            "mime_type": member.mime_type,
            "size": member.size,
            "converted": member.markdown is not None,
        }
        if member.markdown is not None:
            slug = next(parts, None)
            if slug is not None:
                entry["part"] = f"?{section_query(slug)}"
        if member.reason:
            entry["reason"] = member.reason
        entries.append(entry)
    return entries


def human_size(size: int) -> str:
    """``size`` bytes as people read it: 812 bytes, 12.3 KB, 4.1 MB."""
    if size < 1024:
        return f"{size} byte{'s' if size != 1 else ''}"
    value = float(size)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            break
    return f"{value:.1f} {unit}"
