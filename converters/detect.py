"""MIME type detection from a file's first bytes and its name.

libmagic is right about binary formats but calls Markdown and CSV (and often
JSON or HTML fragments) ``text/plain``; for text it reports, the file extension
breaks the tie (DESIGN §4).
"""

from __future__ import annotations

import mimetypes
from functools import lru_cache
from pathlib import PurePosixPath

import magic

HEAD_BYTES = 8192

# Extensions that decide the type of a file libmagic only knows as generic text.
TEXT_EXTENSIONS: dict[str, str] = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".mdx": "text/markdown",
    ".json": "application/json",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".html": "text/html",
    ".htm": "text/html",
    ".txt": "text/plain",
    ".rst": "text/x-rst",
    ".xml": "application/xml",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
}
_GENERIC = {
    "text/plain",
    "application/octet-stream",
    "text/x-file",
    "application/x-empty",
    "inode/x-empty",
    "application/csv",
    "text/x-Algol68",
    "text/x-script.python",
}


@lru_cache(maxsize=1)
def _magic() -> magic.Magic:
    return magic.Magic(mime=True)


def detect_mime(head: bytes, filename: str) -> str:
    """The MIME type of a file whose first bytes are ``head``."""
    extension = PurePosixPath(filename).suffix.lower()
    detected = _magic().from_buffer(head[:HEAD_BYTES]) if head else "application/x-empty"
    if detected.startswith("text/") or detected in _GENERIC or detected == "application/json":
        by_extension = TEXT_EXTENSIONS.get(extension)
        if by_extension:
            return by_extension
        if detected in _GENERIC and detected != "text/plain":
            guessed, _ = mimetypes.guess_type(filename, strict=False)
            return guessed or ("text/plain" if detected == "application/x-empty" else detected)
    return detected


def is_textual(mime_type: str) -> bool:
    """Whether content of this type is sent as ``text`` rather than a base64 ``blob``."""
    return (
        mime_type.startswith("text/")
        or mime_type
        in {
            "application/json",
            "application/xml",
            "application/yaml",
            "application/javascript",
        }
        or mime_type.endswith(("+json", "+xml"))
    )
