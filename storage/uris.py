"""Resource URIs: ``docshelf://{shelf}/{path}`` (DESIGN D3).

``shelf`` is the configured name of a root folder and sits in the URI's
authority; ``path`` is the store-relative POSIX path, percent-encoded segment by
segment (RFC 3986 §3.3). A URI depends only on the shelf name and the relative
path, so it is stable across restarts and reindexing.

A URI is never parsed back into a path: the server looks the exact string up
in the index, which holds only what :func:`build_uri` made for files found on
a shelf. Any other spelling (``..``, empty or ``.`` segments, encoded slashes,
lower-case escapes) is simply not found, so no URI can name a file outside its
shelf, and :func:`build_uri` refuses paths that would make such segments.

File names are whatever the file system allows. A name with a backslash, a
newline or another control character is served under its percent-encoded URI
(``a%5Cb.md``, ``new%0Aline.md``); a name that is not valid UTF-8 cannot be
stored as text in the index or written in a URI, so the indexer refuses it with
the reason ``invalid_name`` and serves the rest of the shelf (issue 16, item 5).

A *folder* is ``docshelf://{shelf}/{path}/``: the URI its files share up to their
last slash, so a folder's URI is a prefix of every URI below it (SEP-2093 listable
resources; ``docshelf://{shelf}/`` is the shelf's root). :func:`parse_folder_uri` is
the one place a URI is read back into a path — a folder has no row to look up — and
it takes only the spelling :func:`folder_uri` makes, so the rule above holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import quote, unquote

SCHEME = "docshelf"
PREFIX = f"{SCHEME}://"

# RFC 3986 pchar minus "%" (which quote() produces itself): unreserved, sub-delims, ":" and "@".
_SEGMENT_SAFE = "-._~!$&'()*+,;=:@"
# PostgreSQL caps a btree index entry at 2704 bytes and URIs are unique-indexed; a longer
# URI is refused (and reported) rather than failing a whole index pass.
MAX_URI_LENGTH = 2048
_SHELF_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?$")
_FORBIDDEN_IN_SEGMENT = re.compile(r"[\x00/]")


class InvalidUri(ValueError):
    """A shelf name or path that no docshelf resource URI can carry."""


def is_valid_shelf_name(name: str) -> bool:
    """Shelf names are lowercase host-like labels, so the URI authority is canonical."""
    return bool(_SHELF_NAME.match(name))


def shelf_name_for(folder_name: str) -> str:
    """Derive a valid shelf name from a folder name ("My Docs" → "my-docs")."""
    name = re.sub(r"[^a-z0-9._-]+", "-", folder_name.lower()).strip("-._")
    return name[:64].rstrip("-._") or "shelf"


def _check_segments(path: str) -> list[str]:
    segments = path.split("/")
    for segment in segments:
        if segment in ("", ".", ".."):
            raise InvalidUri(f"path segment {segment!r} is not allowed in {path!r}")
        if _FORBIDDEN_IN_SEGMENT.search(segment):
            raise InvalidUri(f"path segment {segment!r} contains a NUL or a slash")
        try:
            segment.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidUri(f"the name {printable(segment)!r} is not valid UTF-8") from exc
    return segments


def printable(path: str) -> str:
    """``path`` as it can be shown and stored: undecodable bytes as ``\\xNN``."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def build_uri(shelf: str, path: str) -> str:
    """The URI of ``path`` (relative, POSIX) on ``shelf``."""
    if not is_valid_shelf_name(shelf):
        raise InvalidUri(f"invalid shelf name {shelf!r}")
    segments = _check_segments(path)
    return PREFIX + shelf + "/" + "/".join(quote(s, safe=_SEGMENT_SAFE) for s in segments)


def document_of(uri: str) -> str:
    """The document a URI names: itself, or the document a part URI (``…?pages=3``) is
    part of. A document URI holds no literal ``?``: a file name's is percent-encoded."""
    return uri.partition("?")[0]


def folder_uri(shelf: str, path: str) -> str:
    """The URI of the folder ``path`` (relative, POSIX, no trailing slash; ``""`` for the
    shelf's root) on ``shelf``: its files' URIs up to their last slash."""
    if not path:
        if not is_valid_shelf_name(shelf):
            raise InvalidUri(f"invalid shelf name {shelf!r}")
        return PREFIX + shelf + "/"
    return build_uri(shelf, path) + "/"


def parse_folder_uri(uri: str) -> tuple[str, str]:
    """(shelf, path prefix) of a folder URI: ``""`` for the root, else the folder's path
    with a trailing slash, the prefix of the paths below it. :class:`InvalidUri` for
    anything :func:`folder_uri` would not have made (a document's URI, other spellings of
    a folder's: dot or empty segments, encoded slashes, lower-case escapes)."""
    if not (uri.startswith(PREFIX) and uri.endswith("/") and _could_be_made(uri)):
        raise InvalidUri(f"{uri[:80]!r} is not a docshelf folder URI")
    shelf, _, rest = uri[len(PREFIX) :].partition("/")
    try:
        path = "/".join(unquote(s, errors="strict") for s in rest[:-1].split("/")) if rest else ""
        canonical = folder_uri(shelf, path)
    except (UnicodeDecodeError, InvalidUri):
        canonical = None
    if canonical != uri:
        raise InvalidUri(f"{uri[:80]!r} is not a docshelf folder URI as the server spells them")
    return shelf, path + "/" if path else ""


def folders_above(uri: str) -> Iterator[str]:
    """The URIs of the folders ``uri`` (a document's or a part's) lies in, the shelf's root
    first: ``docshelf://s/a/b.md`` → ``docshelf://s/``, ``docshelf://s/a/``."""
    document = document_of(uri)
    end = document.find("/", len(PREFIX))
    while end != -1:
        yield document[: end + 1]
        end = document.find("/", end + 1)


def _could_be_made(uri: str) -> bool:
    """What :func:`build_uri` makes is printable ASCII of at most ``MAX_URI_LENGTH``."""
    return len(uri) <= MAX_URI_LENGTH + 1 and uri.isascii() and uri.isprintable()
