"""A web page's chrome, told apart from its article.

Pages wrap their text in site navigation, search boxes, language menus, skip
links, cookie banners and footers of links; written as Markdown, that chrome
came before the article (Wikipedia's "Main menu", 150 language links) and
became its description. The rules follow the page's own landmarks (WAI-ARIA,
and the HTML elements that map to them), not any one site:

- navigation is dropped wherever it stands, inside the ``main`` landmark or
  outside it (what lies outside ``main`` is not dropped for that alone: a
  documentation page's copyright line is the page's own text): ``<nav>``, ``role="navigation"``
  or ``"search"``, a site-wide ``<header>`` (banner) holding no heading, a
  site-wide ``<footer>`` (contentinfo; these roles only outside sectioning
  elements, where pages misuse them: Bing marks each result's caption so), an
  ``<aside>`` made mostly of links, a list of links to the page in other
  languages (``hreflang``), skip links ("Skip to content", "Jump to
  navigation") and cookie or consent banners (by their ``id``/``class``, or
  a dialog that names cookies).

:func:`lead_paragraph` is the content's first paragraph of prose: the
description of a page that declares none.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from docshelf.converters.textutil import collapse_whitespace

if TYPE_CHECKING:
    from docshelf.converters.html.markdown import Element

NAVIGATION_ROLES = frozenset({"navigation", "search"})
#: Elements inside which a ``header``/``footer`` belongs to a section, not to the site
#: (HTML-AAM: they map to banner/contentinfo only outside these).
SECTIONING = frozenset({"article", "aside", "main", "nav", "section"})
#: Share of an ``aside``'s text in links above which it is a menu, not a note.
LINK_DENSITY = 0.5
#: Links in a list of which most carry ``hreflang``: a language menu.
MIN_LANGUAGE_LINKS = 3
#: A lead paragraph has at least this many characters (not "Edit", not a date line).
MIN_LEAD_CHARACTERS = 40
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_SKIP_LINK = re.compile(r"^\s*(?:skip|jump)\s+to\b", re.IGNORECASE)
_CONSENT = re.compile(r"cookie|consent|gdpr|onetrust|cookiebot", re.IGNORECASE)
_CONSENT_MAX_CHARACTERS = 3000


def drop_chrome(root: Element) -> None:
    """Remove navigation, banners, menus and skip links from below ``root`` (module rules)."""
    stack: list[tuple[Element, bool]] = [(root, False)]
    while stack:
        element, sectioned = stack.pop()
        inner = sectioned or element.tag in SECTIONING
        kept: list[Element | str] = []
        for child in element.children:
            if isinstance(child, str):
                kept.append(child)
            elif not _chrome(child, inner):
                kept.append(child)
                stack.append((child, inner))
        element.children = kept


def lead_paragraph(content: Element) -> str | None:
    """The text of the first ``<p>`` of prose in ``content`` (outside tables, lists,
    quotes, figures and notes), or None."""
    stack: list[Element] = [content]
    while stack:
        element = stack.pop()
        if element.hidden or element.tag in ("table", "ul", "ol", "blockquote", "figure"):
            continue
        if _role(element) == "note":
            continue
        if element.tag == "p":
            text = collapse_whitespace(element.text())
            if len(text) >= MIN_LEAD_CHARACTERS:
                return text
            continue
        stack.extend(reversed([child for child in element.children if not isinstance(child, str)]))
    return None


def _chrome(element: Element, sectioned: bool) -> bool:
    tag, role = element.tag, _role(element)
    if tag == "nav" or role in NAVIGATION_ROLES:
        return True
    if (tag == "footer" or role == "contentinfo") and not sectioned:
        return True  # a site's footer; one inside an article (or a misused role) is kept
    if (tag == "header" or role == "banner") and not sectioned:
        return not any(inner.tag in _HEADINGS for inner in element.iter())
    if tag == "aside" or role == "complementary":
        return _link_density(element) >= LINK_DENSITY
    if tag in ("ul", "ol", "menu"):
        return _language_menu(element)
    if tag == "a":
        return element.attrs.get("href", "").startswith("#") and bool(
            _SKIP_LINK.match(element.text())
        )
    return _consent_banner(element)


def _role(element: Element) -> str:
    return element.attrs.get("role", "").strip().lower()


def _link_density(element: Element) -> float:
    text = len(collapse_whitespace(element.text()))
    if not text:
        return 1.0
    linked = sum(
        len(collapse_whitespace(inner.text())) for inner in element.iter() if inner.tag == "a"
    )
    return linked / text


def _language_menu(element: Element) -> bool:
    links = [inner for inner in element.iter() if inner.tag == "a"]
    tagged = sum(1 for link in links if link.attrs.get("hreflang", "").strip())
    return tagged >= MIN_LANGUAGE_LINKS and tagged >= 0.8 * len(links)


def _consent_banner(element: Element) -> bool:
    names = f"{element.attrs.get('id', '')} {element.attrs.get('class', '')}"
    label = element.attrs.get("aria-label", "")
    dialog = _role(element) in ("dialog", "alertdialog") and _CONSENT.search(label)
    if not (dialog or _CONSENT.search(names)):
        return False
    if element.tag in ("body", "html", "main", "article"):
        return False
    return len(collapse_whitespace(element.text())) <= _CONSENT_MAX_CHARACTERS
