"""A mail's attachments: which are converted into sections of the message, within bounds.

Attachments are members of the message (:mod:`converters.members`, as an archive's
files are of the archive): each is listed with its name, type and size, and one
that is a convertible document becomes a section, ``## Attachment: report.pdf``,
readable as a part (``?section=attachment-reportpdf``) and searched with the
rest. Mail and archives inside are listed and never opened: nothing recurses, so
a bomb inside a bomb is only a line in a list. How many attachments are
converted, the size of each and their total are bounded; one that fails to
convert is listed with the reason, and the message still converts.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

from docshelf.converters.detect import HEAD_BYTES, detect_mime
from docshelf.converters.members import Member
from docshelf.converters.textutil import clean_text, collapse_whitespace

#: Attachments listed; the rest are counted ("and 12 more").
MAX_LISTED = 500
#: Attachments converted into sections; the rest are listed only.
MAX_CONVERTED = 20
#: The largest attachment converted, and the most converted in all.
MAX_MEMBER_BYTES = 16 * 1024 * 1024
MAX_TOTAL_BYTES = 64 * 1024 * 1024
#: The heading of an attachment's section is this and its name.
ATTACHMENT_LABEL = "Attachment: "
#: Mail and archives: listed, never opened (no recursion).
CONTAINER_TYPES = frozenset(
    {
        "message/rfc822",
        "application/vnd.ms-outlook",
        "application/x-ole-storage",
        "application/zip",
        "application/gzip",
        "application/x-tar",
        "application/x-bzip2",
        "application/x-xz",
        "application/x-7z-compressed",
        "application/vnd.rar",
        "application/java-archive",
        "application/mbox",
    }
)
CONTAINER_EXTENSIONS = frozenset(
    {".eml", ".msg", ".mbox", ".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".jar"}
)
NOT_OPENED = "attached mail and archives are not opened"


def attachment(
    name: str, data: bytes, *, note: str | None = None, mime_type: str | None = None
) -> Member:
    """An attachment called ``name`` (folders and control characters dropped); ``note``:
    why it is only listed. Its type is detected from its bytes and name, as the catalog would."""
    name = member_name(name)
    mime_type = mime_type or detect_mime(data[:HEAD_BYTES], name)
    return Member(name, len(data), data, note, mime_type)


def bounded(attachments: Iterable[Member]) -> tuple[list[Member], int]:
    """``attachments`` with those over the bounds only listed, and how many were left out."""
    kept: list[Member] = []
    omitted = converted = total = 0
    for member in attachments:
        if len(kept) == MAX_LISTED:
            omitted += 1
            continue
        reason = member.skipped or _refusal(member, converted, total)
        if reason is not None:
            kept.append(Member(member.path, member.size, None, reason, member.mime_type))
            continue
        converted += 1
        total += member.size or 0
        kept.append(member)
    return kept, omitted


def member_name(name: str) -> str:
    """An attachment's file name without folders or control characters (``attachment`` if none)."""
    base = PurePosixPath(name.replace("\\", "/")).name
    return collapse_whitespace(clean_text(base)) or "attachment"


def _refusal(member: Member, converted: int, total: int) -> str | None:
    """Why ``member`` is listed and not converted, or None to convert it."""
    size = member.size or 0
    if not member.data:
        return "empty"
    suffix = PurePosixPath(member.path).suffix.lower()
    if member.mime_type in CONTAINER_TYPES or suffix in CONTAINER_EXTENSIONS:
        return NOT_OPENED
    if converted == MAX_CONVERTED:
        return f"over the limit of {MAX_CONVERTED} converted attachments"
    if size > MAX_MEMBER_BYTES:
        return f"over the {MAX_MEMBER_BYTES}-byte limit for one attachment"
    if total + size > MAX_TOTAL_BYTES:
        return f"over the {MAX_TOTAL_BYTES}-byte limit for all attachments"
    return None
