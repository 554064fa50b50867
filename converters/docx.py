"""Word documents (DOCX), through mammoth's semantic HTML.

mammoth (BSD-2, pure Python, actively maintained) maps Word styles to
headings, lists and tables instead of copying visual formatting, which is
exactly the structure the other formats need; its HTML then takes the HTML
path (:func:`converters.html.convert_html`). Images are left out (no data URIs
bloating the Markdown) and external files are never read. Title, author and
dates come from the package's core properties (``docProps/core.xml``).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping
from xml.etree import ElementTree

import mammoth

from converters.base import ConversionError, ConversionResult, base_mime_type
from converters.html import convert_html
from converters.textutil import check_size, collapse_whitespace

DOCX_MIME_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
#: Compressed size refused outright, and uncompressed size of all parts (zip bombs).
MAX_DOCX_BYTES = 128 * 1024 * 1024
MAX_UNPACKED_BYTES = 512 * 1024 * 1024

_CORE_PROPERTIES = "docProps/core.xml"
_NAMESPACES = {
    "dc": "http://purl.org/dc/elements/1.1/",
    "dcterms": "http://purl.org/dc/terms/",
    "cp": "http://schemas.openxmlformats.org/package/2006/metadata/core-properties",
}
#: Core property → docshelf metadata key.
_PROPERTIES = {
    "dc:title": "title",
    "dc:creator": "author",
    "dc:subject": "subject",
    "dc:description": "description",
    "cp:keywords": "keywords",
    "dc:language": "language",
    "dcterms:created": "created",
    "dcterms:modified": "modified",
    "cp:lastModifiedBy": "last_modified_by",
}


class DocxConverter:
    """Converts Word (OOXML) documents with mammoth."""

    name = "docx"
    version = "3"

    def accepts(self, mime_type: str, extension: str) -> bool:
        return base_mime_type(mime_type) == DOCX_MIME_TYPE or extension == ".docx"

    def convert(self, data: bytes, mime_type: str, filename: str) -> ConversionResult:
        check_size(data, MAX_DOCX_BYTES)
        properties = core_properties(_open_package(data))
        return convert_html(
            _docx_html(data),
            mime_type,
            title=properties.get("title"),
            description=properties.get("description") or properties.get("subject"),
            language=properties.get("language"),
            metadata=properties,
        )


def _open_package(data: bytes) -> zipfile.ZipFile:
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise ConversionError("corrupt", f"not a DOCX (ZIP) package: {exc}") from exc
    unpacked = sum(info.file_size for info in package.infolist())
    if unpacked > MAX_UNPACKED_BYTES:
        raise ConversionError("too_large", f"the package unpacks to {unpacked} bytes")
    return package


def _docx_html(data: bytes) -> str:
    try:
        result = mammoth.convert_to_html(
            io.BytesIO(data),
            convert_image=mammoth.images.img_element(lambda image: {}),
            external_file_access=False,
        )
    except Exception as exc:
        # mammoth reports a broken package with whatever its ZIP and XML
        # readers raise (KeyError for a missing part, ExpatError, ...).
        raise ConversionError("corrupt", f"unreadable DOCX: {type(exc).__name__}: {exc}") from exc
    return str(result.value)


def core_properties(package: zipfile.ZipFile) -> Mapping[str, str]:
    """Title, author, dates ... from ``docProps/core.xml`` (empty when absent or broken)."""
    try:
        root = ElementTree.fromstring(package.read(_CORE_PROPERTIES))
    except (KeyError, ElementTree.ParseError, zipfile.BadZipFile, OSError, ValueError):
        return {}
    properties: dict[str, str] = {}
    for qualified, key in _PROPERTIES.items():
        element = root.find(qualified, _NAMESPACES)
        text = collapse_whitespace(element.text or "") if element is not None else ""
        if text:
            properties[key] = text
    return properties
