"""Content negotiation's feature tags: their grammar, and reading them from a client.

The client side of the SEP "Content Negotiation Extension"
(``io.modelcontextprotocol/content-negotiation``, draft v0.9.2) as docshelf
reads it: the extension's settings in a client's capabilities, and each tag
parsed by the SEP's "Feature Tag Predicate Syntax". Nothing here decides what a
tag does (that is :mod:`app.negotiation`); anything malformed is dropped, never
raised, since it comes from the client.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = [
    "EXTENSION_ID",
    "KNOWN_VERSIONS",
    "MAX_TAGS",
    "MAX_TAG_LENGTH",
    "NO_FEATURES",
    "Features",
    "Tag",
    "parse_features",
    "parse_tag",
]

_log = logging.getLogger(__name__)

EXTENSION_ID: Final = "io.modelcontextprotocol/content-negotiation"

# SEP: 'Current version: "1.0"'. Any other version string is read as 1.0 where
# its tags parse (the SEP says breaking changes get a new extension id).
KNOWN_VERSIONS: Final = frozenset({"1.0"})

# The SEP sets no length limit. A tag longer than this is dropped as malformed;
# the longest registry tag ("verbosity=standard") is 18 characters.
MAX_TAG_LENGTH: Final = 128

# The SEP expects "~5-20 typical" tags. Only this many entries of `features`
# are read; the rest are dropped (and logged), so a huge list costs nothing.
MAX_TAGS: Final = 64


@dataclass(frozen=True, slots=True)
class Tag:
    """One parsed feature tag.

    ======================  ==========  ==========  =========
    form                    name        value       negated
    ======================  ==========  ==========  =========
    ``agent``               agent       None        False
    ``!interactive``        interactive None        True
    ``format=json``         format      json        False
    ``format!=pdf``         format      pdf         True
    ======================  ==========  ==========  =========

    Vendor tags (``x-acme-foo``, ``x-acme-mode=fast``) are ordinary presence or
    equality tags.
    """

    name: str
    value: str | None
    negated: bool

    def __str__(self) -> str:
        if self.value is None:
            return f"!{self.name}" if self.negated else self.name
        return f"{self.name}{'!=' if self.negated else '='}{self.value}"


# The SEP's grammar, "Feature Tag Predicate Syntax" (quoted):
#
#   Feature tags support three syntactic forms (inspired by RFC 2295):
#   1. Presence (simple boolean)
#        "agent"              <- Tag present
#        "!interactive"       <- Tag absent (negation via !)
#   2. Equality (key=value comparison)
#        "format=json"        <- format equals json
#        "verbosity=compact"  <- verbosity equals compact
#   3. Negation of Equality (key!=value)
#        "format!=xml"        <- format is not xml
#
# and the only character class it gives, from its reference helper
# `parseFeature`:
#
#   if (/^[a-zA-Z0-9_-]+$/.test(tag)) { return { type: 'presence', tag }; }
#
# Written out, with that class used for every name and value (the helper's
# looser equality branch would accept "format=\n", which the SEP's "Risk 2:
# Tag Injection" says must be ignored):
#
#   token   = 1*( ALPHA / DIGIT / "_" / "-" )
#   tag     = token              ; presence          "agent"
#           / "!" token          ; negation          "!interactive"
#           / token "=" token    ; equality          "format=json"
#           / token "!=" token   ; negated equality  "format!=pdf"
#
# plus a length bound of MAX_TAG_LENGTH characters. Matching is exact and
# case-sensitive, as in the SEP's helpers (`features.includes(...)`).
_TOKEN: Final = r"[A-Za-z0-9_-]+"
_TAG_RE: Final = re.compile(
    rf"(?P<bang>!)?(?P<name>{_TOKEN})|(?P<key>{_TOKEN})(?P<op>!?=)(?P<value>{_TOKEN})"
)


def parse_tag(raw: object) -> Tag | None:
    """Parse one feature tag; ``None`` if it is malformed. Never raises.

    Malformed: anything not a ``str``, longer than ``MAX_TAG_LENGTH``, or not
    matching the grammar above (``""``, ``"@#$%"``, ``"format==json"``,
    ``"format=\\n"``, ``" agent"``, ``"!format=json"``, ``"a=b=c"``, ...).
    """
    if not isinstance(raw, str) or len(raw) > MAX_TAG_LENGTH:
        return None
    match = _TAG_RE.fullmatch(raw)
    if match is None:
        return None
    if match["name"] is not None:
        return Tag(name=str(match["name"]), value=None, negated=match["bang"] is not None)
    return Tag(name=str(match["key"]), value=str(match["value"]), negated=match["op"] == "!=")


@dataclass(frozen=True, slots=True)
class Features:
    """What a client declared for this extension.

    ``declared`` is True when the client's capabilities carried the extension
    at all (even with no tags); ``tags`` holds the well-formed tags in the order
    given, without duplicates.
    """

    tags: tuple[Tag, ...] = ()
    declared: bool = False
    version: str | None = None

    def value(self, name: str) -> str | None:
        """Value of the first ``name=value`` tag, or ``None``."""
        return next(
            (
                t.value
                for t in self.tags
                if t.name == name and t.value is not None and not t.negated
            ),
            None,
        )


NO_FEATURES: Final = Features()


def parse_features(client_capabilities: object) -> Features:
    """Read the extension's settings from a client's ``capabilities`` object.

    ``client_capabilities`` is the whole capabilities object as sent in
    ``initialize`` or in ``_meta["io.modelcontextprotocol/clientCapabilities"]``.
    The settings live at ``capabilities["extensions"][EXTENSION_ID]`` and are
    ``{"version": "1.0", "features": ["agent", "format=json", ...]}`` (SEP,
    "Client Extension Settings"). Never raises: anything of the wrong shape
    reads as "not declared", malformed tags are dropped with a debug log line.
    """
    if not isinstance(client_capabilities, Mapping):
        return NO_FEATURES
    extensions = client_capabilities.get("extensions")
    if not isinstance(extensions, Mapping):
        return NO_FEATURES
    settings = extensions.get(EXTENSION_ID)
    if not isinstance(settings, Mapping):
        if settings is not None:
            _log.debug("content negotiation: ignoring settings of type %s", type(settings).__name__)
        return NO_FEATURES

    version = settings.get("version")
    if not isinstance(version, str):
        if version is not None:
            _log.debug("content negotiation: ignoring version of type %s", type(version).__name__)
        version = None
    elif version not in KNOWN_VERSIONS:
        _log.debug("content negotiation: unknown version %s, reading as 1.0", _preview(version))

    raw_tags = settings.get("features", ())
    if not isinstance(raw_tags, list | tuple):
        _log.debug("content negotiation: ignoring features of type %s", type(raw_tags).__name__)
        raw_tags = ()
    if len(raw_tags) > MAX_TAGS:
        _log.debug(
            "content negotiation: reading only the first %d of %d feature tags",
            MAX_TAGS,
            len(raw_tags),
        )

    tags: list[Tag] = []
    for raw in raw_tags[:MAX_TAGS]:
        tag = parse_tag(raw)
        if tag is None:
            _log.debug("content negotiation: dropping malformed feature tag %s", _preview(raw))
        elif tag not in tags:
            tags.append(tag)
    features = Features(tags=tuple(tags), declared=True, version=version)
    _log.debug(
        "content negotiation: client declared version %s, features [%s]",
        version,
        ", ".join(map(str, features.tags)),
    )
    return features


def _preview(raw: object) -> str:
    """A short, single-line, log-safe rendering of a client-supplied value."""
    if not isinstance(raw, str):
        return f"of type {type(raw).__name__}"
    if len(raw) > 40:
        return f"{raw[:40]!r}... ({len(raw)} chars)"
    return repr(raw)
