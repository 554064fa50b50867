"""Links through redirectors, written to where they lead.

Search results and mail filters send every link through a page of their own
that counts the click and forwards it: Google ``/url?q=``, Bing
``/ck/a?u=a1<base64url>``, DuckDuckGo ``/l/?uddg=``, Facebook ``/l.php?u=``,
Outlook's Safe Links ``?url=``. The reader wants the target, not the tracker.
"""

from __future__ import annotations

import base64
from urllib.parse import parse_qsl, urljoin, urlsplit

#: Redirectors (search results, link shorteners of mail filters) by the path they
#: serve, and the query parameters that carry the target: Google ``/url?q=``, Bing
#: ``/ck/a?u=a1<base64url>``, DuckDuckGo ``/l/?uddg=``, Facebook ``/l.php?u=``.
REDIRECT_PATHS = frozenset({"/url", "/ck/a", "/l/", "/l.php", "/redirect", "/redir"})
REDIRECT_PARAMETERS = ("u", "url", "q", "uddg")
#: Outlook's Safe Links wrap every link of a mail in ``?url=``.
SAFE_LINKS_HOST = ".safelinks.protection.outlook.com"


def redirect_target(href: str) -> str:
    """Where a redirector's link leads (its ``http(s)`` target, or a page of its own site
    such as Bing's ``/search?q=``), else ``href`` itself."""
    parts = urlsplit(href)
    redirector = parts.path in REDIRECT_PATHS or (
        parts.hostname is not None and (parts.hostname.endswith(SAFE_LINKS_HOST))
    )
    if not redirector or not parts.query:
        return href
    for key, value in parse_qsl(parts.query):
        if key not in REDIRECT_PARAMETERS:
            continue
        if key == "u" and value.startswith("a1"):  # Bing: "a1" and the target in base64url
            try:
                value = base64.urlsafe_b64decode(value[2:] + "=" * (-len(value[2:]) % 4)).decode()
            except (ValueError, UnicodeDecodeError):
                continue
        if value.startswith(("http://", "https://", "javascript:")):  # the last: nowhere
            return value
        if value.startswith("/") and not value.startswith("//"):  # a page of the redirector's site
            return urljoin(href, value)
    return href
