"""Web pages without their landmarks of navigation: the article a reader came for.

markitdown keeps a page's navigation (menus, sidebars, language lists, footers of links),
and docshelf leaves it out (issue 26, class 12). Recall measured against markitdown's
output of the whole page would count that chrome as words docshelf lost, so the suite's
reference for a web page is markitdown's output of the page with its navigation
landmarks removed, as HTML and ARIA define them: ``nav``, ``aside``, a ``header`` or
``footer`` of the page (not of an article or section), and anything whose ``role`` is
navigation, search, banner, contentinfo or complementary; and the two kinds of chrome
the issue names that carry their own markup: language menus (lists whose links all name
an ``hreflang``) and skip links ("Skip to content", "Jump to content"). Nothing of
docshelf's own rules is used: the reference is markitdown's, on the page less what the
standards and the issue call navigation.
"""

from __future__ import annotations

import io
import zipfile

from bs4 import BeautifulSoup, Tag

LANDMARK_ROLES = frozenset({"navigation", "search", "banner", "contentinfo", "complementary"})
_SECTIONING = ("article", "section", "main")
HTML_SUFFIXES = (".html", ".htm", ".xhtml")


def _is_landmark(element: Tag) -> bool:
    if element.name in ("nav", "aside"):
        return True
    if element.name in ("ul", "ol"):
        links = element.find_all("a")
        return bool(links) and all(link.get("hreflang") for link in links)
    if element.name == "a":
        return element.get_text(" ", strip=True).lower().startswith(("skip to", "jump to"))
    if element.name in ("header", "footer"):
        return element.find_parent(_SECTIONING) is None
    return str(element.get("role") or "").strip().lower() in LANDMARK_ROLES


def without_landmarks(html: bytes) -> bytes:
    """``html`` less its navigation landmarks."""
    soup = BeautifulSoup(html, "html.parser")
    for element in soup.find_all(_is_landmark):
        if not element.decomposed:
            element.decompose()
    return str(soup).encode("utf-8")


def zip_without_landmarks(data: bytes) -> bytes:
    """A ZIP whose web pages are :func:`without_landmarks`, every other member as it was."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            member = source.read(info)
            if info.filename.lower().endswith(HTML_SUFFIXES):
                member = without_landmarks(member)
            target.writestr(info, member)
    return out.getvalue()
