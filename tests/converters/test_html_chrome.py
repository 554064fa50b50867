"""Web page chrome (issue 26, class 12): navigation, menus, banners are not the article."""

from __future__ import annotations

from docshelf.converters import convert
from tests.support.results import markdown_of

ARTICLE = (
    "Shelving is the craft of holding books upright on boards, and this article "
    "tells how libraries have done it since the thirteenth century."
)
WIKI_LIKE = f"""<!DOCTYPE html><html lang="en"><head><title>Shelving - Wiki</title></head>
<body>
<a class="skip-link" href="#content">Jump to content</a>
<div id="cookie-banner" class="consent">We use cookies. <a href="/privacy">Accept all</a></div>
<header class="site-header"><a href="/">Home</a> <a href="/login">Log in</a></header>
<nav role="navigation" aria-label="Site"><div>Main menu</div>
  <button>move to sidebar</button><ul><li><a href="/random">Random page</a></li></ul></nav>
<main id="content">
  <h1>Shelving</h1>
  <div class="lang-menu"><ul>
    <li><a href="https://de.example.org/Regal" hreflang="de" lang="de">Deutsch</a></li>
    <li><a href="https://fr.example.org/Etag" hreflang="fr" lang="fr">Français</a></li>
    <li><a href="https://es.example.org/Est" hreflang="es" lang="es">Español</a></li>
  </ul></div>
  <nav aria-label="Contents"><ul><li><a href="#History">History</a></li></ul></nav>
  <div id="siteSub">From the Wiki</div>
  <p>{ARTICLE}</p>
  <h2 id="History">History</h2>
  <p>Chained books came first.</p>
  <aside class="related"><a href="/a">Related A</a> <a href="/b">Related B</a></aside>
  <aside class="note">A sidebar note that is prose, with only <a href="/x">one link</a> in a
  sentence long enough to be text.</aside>
  <div role="navigation" class="navbox"><a href="/boxes">Boxes</a></div>
</main>
<footer><ul><li><a href="/about">About</a></li><li><a href="/terms">Terms</a></li></ul></footer>
</body></html>"""


def test_chrome_is_dropped_and_the_article_kept() -> None:
    result = convert(WIKI_LIKE.encode(), "text/html", "shelving.html")
    markdown = markdown_of(result)
    for chrome in (
        "Jump to content",
        "cookies",
        "Log in",
        "Main menu",
        "move to sidebar",
        "Random page",
        "Deutsch",
        "Related A",
        "Boxes",
        "Terms",
    ):
        assert chrome not in markdown, chrome
    assert markdown.startswith("# Shelving\n")
    assert ARTICLE in markdown and "Chained books came first." in markdown
    assert "A sidebar note that is prose" in markdown
    assert result.facts.description == ARTICLE


def test_a_page_without_landmarks_is_whole() -> None:
    page = "<html><body><header><h1>Notes</h1></header><p>Plain page.</p></body></html>"
    markdown = markdown_of(convert(page.encode(), "text/html", "notes.html"))
    assert "# Notes" in markdown and "Plain page." in markdown


def test_serp_tracking_links_lead_to_their_targets() -> None:
    page = (
        "<html><body><main><h1>Results</h1>"
        '<p><a href="https://www.bing.com/ck/a?!&&p=1f&u=a1aHR0cHM6Ly9leGFtcGxlLm9yZy9h&ntb=1">A</a>'
        ' <a href="https://www.facebook.com/l.php?u=https%3A%2F%2Fexample.org%2Fb&h=x">B</a>'
        ' <a href="https://www.google.com/url?q=https://example.org/c&sa=U">C</a></p>'
        "</main></body></html>"
    )
    markdown = markdown_of(convert(page.encode(), "text/html", "serp.html"))
    assert "[A](https://example.org/a)" in markdown
    assert "[B](https://example.org/b)" in markdown
    assert "[C](https://example.org/c)" in markdown
