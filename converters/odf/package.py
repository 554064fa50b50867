"""An OpenDocument package: its content, its metadata, its list styles.

An ODF file (.odt, .odp, .ods) is a ZIP of XML parts: ``content.xml`` holds the
body, ``meta.xml`` the title, author, dates and language, ``styles.xml`` the
named styles. The package is checked by :func:`converters.package.open_package`
before anything is inflated, and every part is parsed with defusedxml (no
entities, no external references). odfpy is not used: its modules are LGPL and
GPL only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element

from docshelf.converters.base import ConversionError, FailureReason
from docshelf.converters.failures import conversion_failure, describe
from docshelf.converters.package import open_package, optional_member, read_member
from docshelf.converters.textutil import collapse_whitespace

#: Compressed size refused outright.
MAX_ODF_BYTES = 128 * 1024 * 1024
#: What the package may unpack to (its pictures included).
MAX_ODF_UNPACKED = 256 * 1024 * 1024
#: The largest XML part parsed: a tree takes several times its text in memory.
MAX_XML_BYTES = 64 * 1024 * 1024

OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
PRESENTATION = "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"
STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
SVG = "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
META = "urn:oasis:names:tc:opendocument:xmlns:meta:1.0"
XLINK = "http://www.w3.org/1999/xlink"
DC = "http://purl.org/dc/elements/1.1/"
MANIFEST = "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"


def q(namespace: str, name: str) -> str:
    """The ElementTree name of ``name`` in ``namespace``."""
    return f"{{{namespace}}}{name}"


#: meta.xml element → docshelf metadata key.
_META = {
    q(DC, "title"): "title",
    q(DC, "subject"): "subject",
    q(DC, "description"): "description",
    q(META, "initial-creator"): "author",
    q(DC, "creator"): "last_modified_by",
    q(META, "creation-date"): "created",
    q(DC, "date"): "modified",
    q(DC, "language"): "language",
}


@dataclass(frozen=True, slots=True)
class OdfPackage:
    """What a converter needs of an ODF file."""

    content: Element
    metadata: Mapping[str, str]
    #: List style name → the levels (1-based) it numbers rather than bullets.
    numbered_levels: Mapping[str, frozenset[int]] = field(default_factory=dict)
    #: Paragraph style name → its parent style, to find headings set as styled paragraphs.
    parent_styles: Mapping[str, str] = field(default_factory=dict)

    def body(self, kind: str) -> Element:
        """``office:body/office:<kind>`` (``text``, ``presentation``), ``corrupt`` if absent."""
        body = self.content.find(f"{q(OFFICE, 'body')}/{q(OFFICE, kind)}")
        if body is None:
            found = self.content.find(q(OFFICE, "body"))
            other = [child.tag.rpartition("}")[2] for child in (found if found is not None else ())]
            holds = f"; it holds office:{other[0]}" if other else ""
            raise ConversionError(
                FailureReason.CORRUPT, f"the ODF file has no office:{kind}{holds}"
            )
        return body


def open_odf(data: bytes, kind: str) -> OdfPackage:
    """Read the ODF package ``data`` (``kind``: "ODT", "ODP", for messages)."""
    if len(data) > MAX_ODF_BYTES:
        raise ConversionError(
            FailureReason.TOO_LARGE,
            f"{len(data)} bytes is over the {MAX_ODF_BYTES}-byte limit for {kind} files",
        )
    with open_package(data, kind, max_unpacked=MAX_ODF_UNPACKED) as package:
        manifest = optional_member(package, "META-INF/manifest.xml", kind)
        if manifest is not None and _encrypted(_parse(manifest, "META-INF/manifest.xml", kind)):
            raise ConversionError(FailureReason.ENCRYPTED, f"the {kind} file needs a password")
        content_xml = read_member(package, "content.xml", kind, limit=MAX_XML_BYTES)
        content = _parse(content_xml, "content.xml", kind)
        meta = optional_member(package, "meta.xml", kind, limit=MAX_XML_BYTES)
        styles = optional_member(package, "styles.xml", kind, limit=MAX_XML_BYTES)
    # Named styles (styles.xml) first: a content.xml automatic style of the same name wins.
    style_roots = [_parse(styles, "styles.xml", kind)] if styles else []
    style_roots.append(content)
    return OdfPackage(
        content=content,
        metadata=_metadata(_parse(meta, "meta.xml", kind)) if meta else {},
        numbered_levels=_numbered_levels(style_roots),
        parent_styles=_parent_styles(style_roots),
    )


def _parse(data: bytes, name: str, kind: str) -> Element:
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import ParseError, fromstring

    try:
        return fromstring(data)
    except (ParseError, DefusedXmlException, ValueError) as exc:
        raise conversion_failure(exc, f"{name} of the {kind} file: {describe(exc)}") from exc


def _encrypted(manifest: Element) -> bool:
    """Whether the manifest says a part is encrypted (then content.xml is ciphertext)."""
    return next(manifest.iter(q(MANIFEST, "encryption-data")), None) is not None


def _metadata(meta: Element) -> dict[str, str]:
    found: dict[str, str] = {}
    office_meta = meta.find(q(OFFICE, "meta"))
    for element in office_meta if office_meta is not None else ():
        key = _META.get(element.tag)
        text = collapse_whitespace("".join(element.itertext()))
        if key and text:
            found.setdefault(key, text)
    keywords = [collapse_whitespace("".join(k.itertext())) for k in meta.iter(q(META, "keyword"))]
    if any(keywords):
        found["keywords"] = ", ".join(k for k in keywords if k)
    return found


def _numbered_levels(roots: Iterable[Element]) -> dict[str, frozenset[int]]:
    numbered: dict[str, frozenset[int]] = {}
    for root in roots:
        for style in root.iter(q(TEXT, "list-style")):
            levels = frozenset(
                integer(level.get(q(TEXT, "level")), 1)
                for level in style.iter(q(TEXT, "list-level-style-number"))
            )
            numbered[style.get(q(STYLE, "name"), "")] = levels
    return numbered


def _parent_styles(roots: Iterable[Element]) -> dict[str, str]:
    parents: dict[str, str] = {}
    for root in roots:
        for style in root.iter(q(STYLE, "style")):
            name, parent = style.get(q(STYLE, "name")), style.get(q(STYLE, "parent-style-name"))
            if name and parent:
                parents[name] = parent
    return parents


def integer(value: str | None, default: int) -> int:
    """An integer attribute's value, ``default`` when it is absent or no integer."""
    try:
        return int(value or "")
    except ValueError:
        return default
