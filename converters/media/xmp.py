"""Title, description and author from an XMP packet (Adobe's RDF metadata in images).

Parsed with defusedxml (the packet is the file's, so untrusted). Each property
may be written as an element or as an attribute of ``rdf:Description``; a
language alternative (``rdf:Alt``) gives its ``x-default`` entry, a list
(``rdf:Seq``/``rdf:Bag``) its entries joined.
"""

from __future__ import annotations

from xml.etree.ElementTree import Element

#: Packets larger than this are left unread (a real one is a few kilobytes).
MAX_XMP_BYTES = 1024 * 1024

_RDF = "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}"
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_DC = "{http://purl.org/dc/elements/1.1/}"
#: Our key → the properties that say it, best first.
PROPERTIES = {
    "title": (f"{_DC}title", "{http://ns.adobe.com/photoshop/1.0/}Headline"),
    "description": (f"{_DC}description",),
    "author": (
        f"{_DC}creator",
        "{http://ns.adobe.com/pdf/1.3/}Author",
        "{http://ns.adobe.com/photoshop/1.0/}Author",
    ),
}


def read_xmp(packet: bytes | str | None) -> dict[str, str]:
    """The title, description and author the packet declares (absent ones left out)."""
    if not packet or len(packet) > MAX_XMP_BYTES:
        return {}
    from defusedxml import ElementTree

    raw = packet.encode("utf-8") if isinstance(packet, str) else packet
    raw = raw.strip(b"\0 \t\r\n")
    try:
        root = ElementTree.fromstring(raw)
    except Exception:  # a damaged packet says nothing; the image itself is still fine
        return {}
    found: dict[str, str] = {}
    for description in root.iter(f"{_RDF}Description"):
        values = {name: _value(child) for child in description if (name := child.tag)}
        values.update(description.attrib)
        for key, names in PROPERTIES.items():
            if key not in found:
                value = next((values[n] for n in names if values.get(n)), None)
                if value:
                    found[key] = value
    return found


def _value(element: Element) -> str:
    """An element's text, or its alternative's default, or its list's entries joined."""
    for container in element:
        items = [item for item in container if item.tag == f"{_RDF}li"]
        if container.tag == f"{_RDF}Alt" and items:
            default = next((i for i in items if i.get(_XML_LANG) == "x-default"), items[0])
            return _text(default)
        if container.tag in (f"{_RDF}Seq", f"{_RDF}Bag"):
            return "; ".join(text for item in items if (text := _text(item)))
    return _text(element)


def _text(element: Element) -> str:
    return " ".join((element.text or "").split())
