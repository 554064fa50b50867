"""MIME detection decides a file's type from its content and its name together.

Issue "Nothing lost, nothing leaked, never wedged", item 7: libmagic called 20 of
51 Markdown files of a real documentation folder ``application/javascript``
(any ``import { X } from "..."`` line does it), and docshelf listed them as
JavaScript. The files in ``tests/data/detect`` reproduce each way libmagic gets a
text file's kind wrong, and each way a file's name lies about binary content.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import magic
import pytest

from docshelf.converters.csv_ import CSV_EXTENSIONS
from docshelf.converters.detect import (
    CONTAINER_EXTENSIONS,
    DETECTION_VERSION,
    EXTENSION_TYPES,
    HEAD_BYTES,
    TEXT_SIGNATURE_TYPES,
    detect_mime,
)
from docshelf.converters.formats import is_textual
from docshelf.converters.html.converter import HTML_EXTENSIONS
from docshelf.converters.json_ import JSON_EXTENSIONS
from docshelf.converters.markdown.converter import MARKDOWN_EXTENSIONS
from docshelf.converters.registry import find_converter
from docshelf.converters.text import TEXT_EXTENSIONS
from tests.support.paths import SPEC

DATA = Path(__file__).parent / "data" / "detect"

#: (file in tests/data/detect, what libmagic alone says of its head, what docshelf must say)
CASES = [
    # Markdown: the extension decides whatever text libmagic thinks it sees.
    ("markdown-atx.md", "text/plain", "text/markdown"),
    ("markdown-front-matter.md", "application/javascript", "text/markdown"),
    ("markdown-code-first.md", "application/javascript", "text/markdown"),
    ("markdown-rust-example.md", "text/x-c", "text/markdown"),
    ("page.mdx", "application/javascript", "text/markdown"),
    ("empty.md", "application/x-empty", "text/markdown"),
    # The other textual families.
    ("semicolons.csv", "text/plain", "text/csv"),
    ("bom.json", "text/plain", "application/json"),
    ("script-first.html", "application/javascript", "text/html"),
    ("fragment.html", "text/plain", "text/html"),
    ("inkscape.svg", "text/html", "image/svg+xml"),
    ("tool.py", "text/plain", "text/x-python"),
    ("widget.js", "text/plain", "text/javascript"),
    ("widget.ts", "application/javascript", "text/x-typescript"),
    ("notes.txt", "application/javascript", "text/plain"),
    # Bytes with no signature libmagic knows: the name is all there is to go on.
    ("utf16-no-bom.txt", "application/octet-stream", "text/plain"),
    ("damaged.pdf", "application/octet-stream", "application/pdf"),
    # A format's signature wins over a name that lies, in both directions.
    ("really-a-pdf.md", "application/pdf", "application/pdf"),
    ("really-postscript.md", "application/postscript", "application/postscript"),
    ("really-rtf.txt", "text/rtf", "text/rtf"),
    ("really-a-png.svg", "image/png", "image/png"),
    (
        "really-a-docx.txt",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ),
    ("stream.ts", "video/MP2T", "video/mp2t"),
    ("really-text.pdf", "text/plain", "text/plain"),
]


def head_of(name: str) -> bytes:
    """What the indexer hands to detection: the first :data:`HEAD_BYTES` of the file."""
    return (DATA / name).read_bytes()[:HEAD_BYTES]


def libmagic_alone(head: bytes) -> str:
    return magic.from_buffer(head, mime=True) if head else "application/x-empty"


@pytest.mark.parametrize(("name", "libmagic_says", "expected"), CASES)
def test_type_is_decided_by_content_and_extension_together(
    name: str, libmagic_says: str, expected: str
) -> None:
    assert detect_mime(head_of(name), name) == expected


@pytest.mark.parametrize(("name", "libmagic_says", "expected"), CASES)
def test_each_file_still_shows_libmagic_what_it_was_chosen_for(
    name: str, libmagic_says: str, expected: str
) -> None:
    """The table proves something only while libmagic still says what it lists.

    If this fails after a libmagic upgrade, the file no longer reproduces the
    case it stands for: find content that does, or drop the row.
    """
    assert libmagic_alone(head_of(name)) == libmagic_says, f"libmagic {magic.version()}"


@pytest.mark.parametrize("name", ["README.MD", "Notes.Markdown", "PAGE.MDX"])
def test_extensions_are_matched_without_regard_to_case(name: str) -> None:
    assert detect_mime(head_of("markdown-front-matter.md"), name) == "text/markdown"


def test_an_empty_file_without_a_known_extension_is_plain_text() -> None:
    assert detect_mime(b"", "NOTES") == "text/plain"


def test_every_type_the_table_names_is_textual() -> None:
    assert [mime for mime in EXTENSION_TYPES.values() if not is_textual(mime)] == []


def test_every_extension_a_converter_claims_is_in_the_table() -> None:
    """Detection and the converters agree on which extensions name a text format."""
    claimed = (
        MARKDOWN_EXTENSIONS | CSV_EXTENSIONS | HTML_EXTENSIONS | JSON_EXTENSIONS | TEXT_EXTENSIONS
    )
    assert sorted(claimed - EXTENSION_TYPES.keys()) == []


@pytest.mark.parametrize(("extension", "mime_type"), sorted(EXTENSION_TYPES.items()))
def test_the_detected_type_alone_picks_the_converter(extension: str, mime_type: str) -> None:
    """What a listing says a file is and what converts it never disagree."""
    assert find_converter(mime_type, "file") is find_converter(mime_type, f"file{extension}")


#: The fingerprint of the extension table each DETECTION_VERSION shipped with.
#: A row never changes: a table that detects files differently is a new version.
TABLE_FINGERPRINTS = {2: "8265cfd34f7e246b", 3: "d04bba9a2b2b3a60"}


def test_a_changed_table_comes_with_a_new_detection_version() -> None:
    """The indexer re-detects unchanged files only when DETECTION_VERSION moves."""
    table = json.dumps(
        [
            sorted(EXTENSION_TYPES.items()),
            sorted(TEXT_SIGNATURE_TYPES),
            sorted((name, sorted(rows.items())) for name, rows in CONTAINER_EXTENSIONS.items()),
        ]
    )
    fingerprint = hashlib.sha256(table.encode()).hexdigest()[:16]
    assert TABLE_FINGERPRINTS.get(DETECTION_VERSION) == fingerprint, (
        "the detection table changed: bump DETECTION_VERSION and add its fingerprint "
        f"{fingerprint} here"
    )


def test_every_spec_page_gets_the_type_its_extension_names() -> None:
    """Real documentation nobody here wrote: the MCP specification pages.

    ``seeds/002_*.txt`` is text libmagic calls JavaScript, ``server_resources.mdx``
    Markdown it calls C, and the heads of ``schema.json`` are not whole JSON.
    """
    if not SPEC.is_dir():
        pytest.skip(
            f"the shared spec pages are not at {SPEC}: set DOCSHELF_SHARED to the shared "
            "folder, or put it at ../shared beside the checkout"
        )
    expected_by_suffix = {
        ".md": "text/markdown",
        ".mdx": "text/markdown",
        ".txt": "text/plain",
        ".json": "application/json",
    }
    pages = sorted(path for path in SPEC.rglob("*") if path.suffix in expected_by_suffix)
    assert any(path.suffix == ".mdx" for path in pages)
    wrong = {
        str(path.relative_to(SPEC)): detected
        for path in pages
        if (detected := detect_mime(path.read_bytes()[:HEAD_BYTES], path.name))
        != expected_by_suffix[path.suffix]
    }
    assert wrong == {}
