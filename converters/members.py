"""The files inside a container (an archive's members, a mail's attachments) as its sections.

A container's members are parts of the container, not documents of their own:
each member is converted with the same converters as a file on the shelf, and
its Markdown becomes a section under a heading naming it (``## docs/a.md``),
its own headings demoted below that heading (capped at level 6), so that
``?section=<slug of the member's path>`` reads one member and the search rows
are per member. A table lists every member first: its path, type, size and
what happened to it (converted, or listed only and why).

The container's reader decides which members to hand over with their bytes
(:class:`Member`: ``data``) and which only to list (``skipped``: an unsafe path,
a member too large, a link); this module converts the first and renders both.
A member's Markdown that could escape its section (an unclosed code fence or
HTML comment swallowing the headings after it) is replaced by its plain text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from docshelf.converters.base import TEXT_MARKDOWN, TEXT_PLAIN, ConversionError
from docshelf.converters.detect import HEAD_BYTES, detect_mime
from docshelf.converters.failures import describe
from docshelf.converters.markdown.model import markdown_parser
from docshelf.converters.parts import headings_of, section_query
from docshelf.converters.textutil import (
    clean_text,
    decode_text,
    markdown_heading,
    markdown_table,
    text_to_markdown,
)

#: The deepest heading Markdown has: demoted headings stop there.
DEEPEST_HEADING = 6

# The container prefix of a line (block quotes, list markers) before an ATX heading's "#"s.
_ATX = re.compile(r"^((?:[ \t]*(?:>|[-+*]|\d{1,9}[.)]))*[ \t]*)(#{1,6})(?=[ \t]|$)")
_CONTAINER = re.compile(r"^(?:[ \t]*(?:>|[-+*]|\d{1,9}[.)]))*[ \t]*")


@dataclass(frozen=True, slots=True)
class Member:
    """One member of a container, as its reader hands it over.

    ``data`` is its bytes when it is to be converted; otherwise ``skipped`` says
    why it is only listed. ``mime_type``: its type if the reader knows it (else
    detected from ``data`` and the name). ``details``: members of its JSON entry
    particular to the container (a ZIP's compressed size).
    """

    path: str
    size: int | None
    data: bytes | None = None
    skipped: str | None = None
    mime_type: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ConvertedMember:
    """What became of a member: its Markdown block (None when only listed) and why not."""

    member: Member
    mime_type: str | None
    markdown: str | None
    reason: str | None
    title: str | None = None


def convert_member(member: Member, *, demote: int) -> ConvertedMember:
    """Convert ``member`` with the converter the registry picks for it.

    Its headings are demoted by ``demote`` levels. Any failure of the member's
    converter lists the member with the reason and affects no other member;
    only running out of memory propagates (the runner's ``too_large``).
    """
    from docshelf.converters import registry  # the registry imports the archive converter

    data = member.data
    if data is None:
        return ConvertedMember(member, member.mime_type, None, member.skipped or "not read")
    mime_type = member.mime_type or detect_mime(data[:HEAD_BYTES], member.path)
    filename = PurePosixPath(member.path).name
    if registry.find_converter(mime_type, filename) is None:
        return ConvertedMember(member, mime_type, None, f"no converter for {mime_type}")
    try:
        result = registry.convert(data, mime_type, filename)
        markdown = _markdown_of(result.get(TEXT_MARKDOWN), data)
        plain = result.get(TEXT_PLAIN)
        block = member_block(markdown, demote, plain.data.decode("utf-8") if plain else None)
    except ConversionError as exc:
        return ConvertedMember(member, mime_type, None, f"{exc.reason}: {exc.message}")
    except MemoryError:
        raise
    except Exception as exc:  # a converter's bug stays in its member's row
        return ConvertedMember(member, mime_type, None, f"converter error: {describe(exc)}")
    return ConvertedMember(member, mime_type, block, None, result.facts.title)


def _markdown_of(representation: Any, data: bytes) -> str:
    """The member's Markdown: derived, or its own bytes when the member is Markdown."""
    return representation.data.decode("utf-8") if representation else decode_text(data)


def member_block(markdown: str, demote: int, plain: str | None = None) -> str:
    """``markdown`` fit to stand under a member heading.

    Front matter is dropped (mid-document, its ``---`` lines would make a
    heading of the line above) and every heading is demoted by ``demote``
    levels. If the result could still swallow what follows it or holds a
    heading no deeper than the member's own, its plain text (``plain``, else
    the Markdown) is used, escaped.
    """
    block = demote_headings(markdown, demote).strip("\n")
    if _self_contained(block, demote):
        return block
    return text_to_markdown(plain if plain is not None else markdown).strip("\n")


def demote_headings(markdown: str, by: int) -> str:
    """``markdown`` without front matter and with each heading ``by`` levels deeper (max 6)."""
    tokens = markdown_parser().parse(markdown)
    lines = markdown.splitlines()
    edits: list[tuple[int, int, list[str]]] = []
    for index, token in enumerate(tokens):
        if token.map is None:
            continue
        start, end = token.map
        if token.type == "front_matter":
            edits.append((start, end, []))
        elif token.type == "heading_open":
            level = min(DEEPEST_HEADING, int(token.tag[1]) + by)
            if token.markup.startswith("#"):
                line = lines[start]
                hashes = _ATX.match(line)
                if hashes:
                    line = hashes.group(1) + "#" * level + line[hashes.end() :]
                edits.append((start, start + 1, [line]))
            else:  # setext: its text lines and the underline become one ATX line
                text = " ".join(tokens[index + 1].content.split("\n"))
                prefix = _CONTAINER.match(lines[start])
                lead = prefix.group(0) if prefix else ""
                edits.append((start, end, [f"{lead}{'#' * level} {text.strip()}"]))
    for start, end, replacement in reversed(edits):
        lines[start:end] = replacement
    return "\n".join(lines)


def _self_contained(block: str, demote: int) -> bool:
    """Whether a heading written after ``block`` is still a heading, and ``block`` has none
    at or above the member heading's level."""
    probe = "Member section probe"
    tokens = markdown_parser().parse(f"{block}\n\n{'#' * demote} {probe}\n")
    headings = [
        (int(token.tag[1]), tokens[index + 1].content)
        for index, token in enumerate(tokens)
        if token.type == "heading_open"
    ]
    return (
        bool(headings)
        and headings[-1] == (demote, probe)
        and all(level > demote for level, _ in headings[:-1])
    )


def convert_members(members: Iterable[Member], *, level: int) -> list[ConvertedMember]:
    """Each of ``members`` converted in turn (see :func:`convert_member`).

    Members are taken one at a time, so a reader may stream them (a tar holds
    only the current member's bytes). Their sections sit at heading ``level``.
    """
    return [convert_member(member, demote=level) for member in members]


def members_markdown(
    converted: Sequence[ConvertedMember], *, level: int, before: str = "", label: str = ""
) -> tuple[str, list[str | None]]:
    """The Markdown: ``before``, the member table, then one section per converted member,
    headed by ``label`` and its path (``## Attachment: report.pdf``).

    Returns it and, per member, the part (``?section=...``) that reads it, or
    None for a member only listed.
    """
    table = markdown_table(
        ["Path", "Type", "Size", "Result"],
        [
            [
                display_path(c.member.path),
                c.mime_type or "",
                "" if c.member.size is None else human_size(c.member.size),
                "converted" if c.markdown is not None else f"listed only: {c.reason}",
            ]
            for c in converted
        ],
    )
    chunks = [chunk.strip("\n") for chunk in (before, table) if chunk.strip()]
    heading_lines: list[int | None] = []
    line = sum(chunk.count("\n") + 2 for chunk in chunks)
    for c in converted:
        if c.markdown is None:
            heading_lines.append(None)
            continue
        heading_lines.append(line)
        section = markdown_heading(level, label + display_path(c.member.path))
        if c.markdown:
            section += "\n\n" + c.markdown
        chunks.append(section)
        line += section.count("\n") + 2
    markdown = "\n\n".join(chunks) + "\n"
    slug_at = {heading.first_line: heading.slug for heading in headings_of(markdown)}
    parts = [
        None if at is None or at not in slug_at else f"?{section_query(slug_at[at])}"
        for at in heading_lines
    ]
    return markdown, parts


def member_entries(
    converted: Sequence[ConvertedMember], parts: Sequence[str | None]
) -> list[dict[str, Any]]:
    """The JSON ``data`` entry of each member: path, size, type, converted or why not, part."""
    return [
        {
            "path": c.member.path,
            "size": c.member.size,
            **c.member.details,
            "type": c.mime_type,
            "converted": c.markdown is not None,
            **({"title": c.title} if c.title else {}),
            **({"part": part} if part else {"reason": c.reason}),
        }
        for c, part in zip(converted, parts, strict=True)
    ]


def display_path(path: str) -> str:
    """A member's path as one clean line of text (control characters dropped)."""
    return " ".join(clean_text(path).split("\n")) or "(no name)"


def human_size(size: int) -> str:
    """``1.4 MB``, ``512 bytes``: a size as people read it (decimal units)."""
    if size < 1000:
        return f"{size} byte" + ("" if size == 1 else "s")
    value = float(size)
    for unit in ("KB", "MB", "GB", "TB"):
        value /= 1000
        if value < 999.95 or unit == "TB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")
