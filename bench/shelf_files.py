"""The benchmark's files as the reference servers name them (``bench://ref/<path>``).

Shared by the SDK reference server, the bare Starlette floor and the harness, so
the three agree on every URI and MIME type without the floor importing the SDK.
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from pathlib import Path

URI_PREFIX = "bench://ref/"

# The types of the benchmark's shelves, whatever the machine's mimetypes database says.
MIME_TYPES = {".md": "text/markdown", ".txt": "text/plain"}


@dataclass(frozen=True)
class ServedFile:
    uri: str
    path: Path  # absolute
    mime_type: str


def served_files(root: Path) -> list[ServedFile]:
    """Every regular file under ``root``, in path order."""
    root = root.resolve()
    files = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        mime = MIME_TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0]
        uri = URI_PREFIX + path.relative_to(root).as_posix()
        files.append(ServedFile(uri, path, mime or "application/octet-stream"))
    return files
