"""XML from untrusted files, parsed with defusedxml.

Entity declarations (billion laughs, external entities) and DTD tricks are
refused by defusedxml before they expand; anything the parser cannot read is
``corrupt`` with the parser's own words. Sizes are the caller's to bound.
"""

from __future__ import annotations

from xml.etree.ElementTree import Element

from docshelf.converters.failures import conversion_failure, describe


def parse_xml(data: bytes | str, what: str) -> Element:
    """The root element of ``data``; ``corrupt`` (naming ``what``) unless safe, well-formed XML."""
    import defusedxml
    import defusedxml.ElementTree

    try:
        return defusedxml.ElementTree.fromstring(data)
    except (SyntaxError, defusedxml.DefusedXmlException, ValueError, RecursionError) as exc:
        raise conversion_failure(exc, f"{what} is not well-formed XML: {describe(exc)}") from exc


def local_name(element: Element) -> str:
    """The element's tag without its ``{namespace}``."""
    return element.tag.rpartition("}")[2] if isinstance(element.tag, str) else ""


def namespace(element: Element) -> str:
    """The element's namespace URI ("" when it has none)."""
    tag = element.tag if isinstance(element.tag, str) else ""
    return tag[1:].partition("}")[0] if tag.startswith("{") else ""


def child_text(element: Element, tag: str) -> str | None:
    """The stripped text of ``element``'s first child ``tag`` (``{uri}name``), None when empty."""
    child = element.find(tag)
    text = "".join(child.itertext()).strip() if child is not None else ""
    return text or None
