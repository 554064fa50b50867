"""Content negotiation: which representations of a document to return, in which order.

Implements the server side of the SEP "Content Negotiation Extension"
(``io.modelcontextprotocol/content-negotiation``, draft v0.9.2) for docshelf's
resources (DESIGN D5). The module is pure: it parses the client's feature tags
and orders/selects among the variants it is given. It does no I/O and never
grants access to anything: it can only reorder or leave out variants it was
handed (SEP requirement 3, "MUST NOT Use Features as Authentication").

The policy is data (``DEFAULT_ORDER``, ``AUDIENCE_PREFERENCES``,
``FORMAT_MIME_TYPES``, ``VERBOSITY_LEVELS``) read by one function, ``_rank``.
What it knows of each format (its role, the types an original of it may have,
its place in the default order) comes from the converters' format table,
:data:`docshelf.converters.formats.DERIVED_FORMATS`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

from docshelf.converters.formats import DERIVED_FORMATS, TEXTUAL_ROLES, Role

__all__ = [
    "AUDIENCE_PREFERENCES",
    "DEFAULT_BINARY_CAP",
    "DEFAULT_ORDER",
    "EXTENSION_ID",
    "FORMAT_MIME_TYPES",
    "KNOWN_VERSIONS",
    "MAX_TAGS",
    "MAX_TAG_LENGTH",
    "NO_FEATURES",
    "VERBOSITY_LEVELS",
    "Features",
    "Omission",
    "Role",
    "Selection",
    "Tag",
    "ToolResultStyle",
    "Variant",
    "describe",
    "describe_default",
    "negotiate",
    "or_default",
    "parse_default_features",
    "parse_features",
    "parse_tag",
    "shapes_output",
    "tool_result_style",
]

_log = logging.getLogger(__name__)
_T = TypeVar("_T")

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

DEFAULT_BINARY_CAP: Final = 1 << 20


@dataclass(frozen=True, slots=True)
class Variant:
    """One representation of a document.

    The file as stored on the shelf has role ``ORIGINAL`` whatever its type
    (a PDF original is ``ORIGINAL``, not ``PDF``); derived representations have
    their own role.
    """

    mime_type: str
    role: Role
    size: int  # bytes of this representation
    is_binary: bool


# --------------------------------------------------------------------------- #
# Feature tags
# --------------------------------------------------------------------------- #


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


# --------------------------------------------------------------------------- #
# Policy (DESIGN D5) as data
# --------------------------------------------------------------------------- #

# With no features: the order a server without the extension returns.
DEFAULT_ORDER: Final[tuple[Role, ...]] = (
    Role.ORIGINAL,
    *(f.role for f in sorted(DERIVED_FORMATS, key=lambda f: f.default_rank)),
)

# Presence tags that express an inferred preference. Several: concatenated in
# the order the client gave them. Explicit `format=` / `format!=` beat these
# (SEP requirement 5).
AUDIENCE_PREFERENCES: Final[Mapping[str, tuple[Role, ...]]] = {
    "agent": (Role.JSON, Role.MARKDOWN, Role.TEXT),
    "human": (Role.MARKDOWN, Role.ORIGINAL, Role.PDF),
}

# When a document has no derived variant of a role, its original stands in for
# that role if the original is of that type (a Markdown file *is* the Markdown).
# For PDF the original wins even over a rendered PDF (`_ORIGINAL_FIRST`).
FORMAT_MIME_TYPES: Final[Mapping[Role, frozenset[str]]] = {
    f.role: f.mime_types for f in DERIVED_FORMATS
}
_ORIGINAL_FIRST: Final = frozenset(f.role for f in DERIVED_FORMATS if f.original_first)

# `verbosity=` values. `standard` is the default once a client acts through
# the extension: binary variants over the cap are left out. `compact` also
# keeps only the first variant; `verbose` keeps everything.
VERBOSITY_LEVELS: Final = ("compact", "standard", "verbose")
_DEFAULT_VERBOSITY: Final = "standard"

_FORMATS: Final[Mapping[str, Role]] = {role.value: role for role in Role}


@dataclass(frozen=True, slots=True)
class _Preferences:
    """The part of a client's features this policy acts on."""

    first: tuple[Role, ...]  # format=X, in the order given
    last: tuple[Role, ...]  # format!=X, in the order given, minus any in `first`
    inferred: tuple[Role, ...]  # agent / human preferences, in the order given
    verbosity: str  # one of VERBOSITY_LEVELS
    effective: tuple[Tag, ...]  # the tags that produced the above

    @property
    def active(self) -> bool:
        return bool(self.effective)


def shapes_output(features: Features) -> bool:
    """Whether these features change what ``negotiate`` returns compared with no features.

    Results shaped by features are not the same for every client, which matters to
    caches keyed on the request alone (see ``app.mcp.context.cache_hints``).
    """
    return _preferences(features).active


def _preferences(features: Features) -> _Preferences:
    first: list[Role] = []
    last: list[Role] = []
    inferred: list[Role] = []
    verbosity: str | None = None
    effective: list[Tag] = []
    if features.declared:
        for tag in features.tags:
            if tag.name == "format" and tag.value is not None and tag.value in _FORMATS:
                role = _FORMATS[tag.value]
                (last if tag.negated else first).append(role)
            elif tag.name in AUDIENCE_PREFERENCES and tag.value is None and not tag.negated:
                inferred.extend(AUDIENCE_PREFERENCES[tag.name])
            elif (
                tag.name == "verbosity"
                and not tag.negated
                and tag.value in VERBOSITY_LEVELS
                and verbosity is None
            ):
                verbosity = tag.value
            else:
                continue  # unknown or no effect on resources (SEP requirement 4, 7)
            effective.append(tag)
    return _Preferences(
        first=_unique(first),
        last=tuple(role for role in _unique(last) if role not in first),  # format= wins
        inferred=_unique(inferred),
        verbosity=verbosity or _DEFAULT_VERBOSITY,
        effective=tuple(effective),
    )


def _unique(items: Sequence[_T]) -> tuple[_T, ...]:
    return tuple(dict.fromkeys(items))


def _essence(mime_type: str) -> str:
    return mime_type.split(";", 1)[0].strip().lower()


def _resolve(role: Role, variants: Sequence[Variant]) -> int | None:
    """Index of the variant that serves `role`, or None if the document has none."""
    derived = next((i for i, v in enumerate(variants) if v.role == role), None)
    if role is Role.ORIGINAL:
        return derived
    original = next(
        (
            i
            for i, v in enumerate(variants)
            if v.role == Role.ORIGINAL and _essence(v.mime_type) in FORMAT_MIME_TYPES[role]
        ),
        None,
    )
    if role in _ORIGINAL_FIRST:
        return original if original is not None else derived
    return derived if derived is not None else original


def _rank(variants: Sequence[Variant], prefs: _Preferences) -> list[int]:
    """The policy: indices of `variants` in the order to return them.

    1. the default order (stable for variants of the same role);
    2. agent/human preferences move their roles to the front;
    3. explicit ``format=X`` moves X in front of those (requirement 5);
    4. explicit ``format!=X`` moves X to the end, even past an inferred preference.
    """
    default = sorted(range(len(variants)), key=lambda i: DEFAULT_ORDER.index(variants[i].role))

    def resolved(roles: tuple[Role, ...]) -> list[int]:
        found = (_resolve(role, variants) for role in roles)
        return list(_unique([i for i in found if i is not None]))

    explicit = resolved(prefs.first)
    tail = [i for i in resolved(prefs.last) if i not in explicit]
    head = list(_unique(explicit + [i for i in resolved(prefs.inferred) if i not in tail]))
    middle = [i for i in default if i not in head and i not in tail]
    return head + middle + tail


# --------------------------------------------------------------------------- #
# The operator's default for clients that negotiate nothing
# --------------------------------------------------------------------------- #


def parse_default_features(text: str) -> Features:
    """An operator's default features: comma-separated tags in the client's own syntax.

    SEP requirement 4 has a client's malformed tag ignored, and requirement 7 a tag the
    server does not act on; an operator's setting is checked at the door instead, since
    either would otherwise change nothing without a word. ``ValueError`` names the first
    bad tag. An empty text is no default (:data:`NO_FEATURES`).
    """
    tags: list[Tag] = []
    for raw in (part.strip() for part in text.split(",")):
        if not raw:
            continue
        tag = parse_tag(raw)
        if tag is None:
            raise ValueError(
                f"{raw!r} is not a feature tag: write name, !name, name=value or name!=value, "
                "of letters, digits, '_' and '-', comma-separated"
            )
        if not _preferences(Features((tag,), declared=True)).active:
            raise ValueError(
                f"{raw!r} changes nothing docshelf returns: use "
                f"{', '.join(AUDIENCE_PREFERENCES)}, format=X or format!=X "
                f"(X: {', '.join(_FORMATS)}), verbosity={_join(VERBOSITY_LEVELS, 'or')}"
            )
        if tag not in tags:
            tags.append(tag)
    if not tags:
        return NO_FEATURES
    return Features(tuple(tags), declared=True, version=next(iter(KNOWN_VERSIONS)))


def or_default(features: Features, default: Features) -> Features:
    """The client's features, or the operator's ``default`` if the client negotiated nothing.

    Nothing: the extension not declared, or declared without one well-formed tag. A client
    that sent any tag gets exactly what its tags ask for, and one whose tags have no effect
    the built-in default, as requirement 7 says ("same as non-negotiating servers").
    """
    return default if default.tags and not features.tags else features


# --------------------------------------------------------------------------- #
# Negotiation
# --------------------------------------------------------------------------- #


@dataclass(frozen=True, slots=True)
class Omission:
    """A variant left out of a selection, and why (for the client to read)."""

    mime_type: str
    reason: str


@dataclass(frozen=True, slots=True)
class Selection:
    variants: tuple[Variant, ...]  # in the order to return
    omitted: tuple[Omission, ...]  # in negotiated order


def negotiate(
    variants: Sequence[Variant],
    features: Features,
    *,
    binary_cap: int = DEFAULT_BINARY_CAP,
) -> Selection:
    """Order and select among a document's variants for a client's features.

    A client that did not declare the extension, or declared no tag this policy
    acts on (SEP requirement 7: "If a client declares unsupported features,
    servers MUST respond with default content"), gets every variant in the
    default order, exactly as a server without the extension. Otherwise the
    order follows ``_rank``; unless ``verbosity=verbose``, binary variants larger
    than ``binary_cap`` bytes are left out; ``verbosity=compact`` keeps only the
    first. The result is never empty when ``variants`` is not.
    """
    if binary_cap < 0:
        raise ValueError(f"binary_cap must be >= 0 bytes, got {binary_cap}")
    prefs = _preferences(features)
    if not prefs.active:
        order = _rank(variants, _preferences(NO_FEATURES))
        return Selection(tuple(variants[i] for i in order), ())

    order = _rank(variants, prefs)
    reasons: dict[int, str] = {}
    if prefs.verbosity != "verbose":
        for i in order:
            v = variants[i]
            if v.is_binary and v.size > binary_cap:
                reasons[i] = (
                    f"binary variant of {_size(v.size)} exceeds the {_size(binary_cap)} cap; "
                    "ask with verbosity=verbose"
                )
        if order and len(reasons) == len(order):
            del reasons[order[0]]  # never empty: keep the best even if over the cap
    kept = [i for i in order if i not in reasons]
    if prefs.verbosity == "compact":
        for i in kept[1:]:
            reasons[i] = "verbosity=compact returns only the best variant"
        kept = kept[:1]
    return Selection(
        variants=tuple(variants[i] for i in kept),
        omitted=tuple(Omission(variants[i].mime_type, reasons[i]) for i in order if i in reasons),
    )


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n} bytes"


# --------------------------------------------------------------------------- #
# Describing the outcome (initialize result's `instructions`)
# --------------------------------------------------------------------------- #

_ROLE_NAMES: Final[Mapping[Role, str]] = {
    Role.ORIGINAL: "the original",
    **{f.role: f.name for f in DERIVED_FORMATS},
}

# One variant of every role, with an original of no particular type, so the
# described order is the one for a document that has all of them.
_EVERY_ROLE: Final = tuple(
    Variant("application/octet-stream" if role is Role.ORIGINAL else "", role, 0, False)
    for role in DEFAULT_ORDER
)


def describe(
    features: Features,
    *,
    binary_cap: int = DEFAULT_BINARY_CAP,
    default: Features = NO_FEATURES,
) -> str:
    """One sentence for the ``initialize`` result's ``instructions``.

    It names only tags this policy acts on, so no client-chosen text other than
    a registry tag is echoed back. ``default``: the operator's, for a client that
    negotiated nothing (:func:`or_default`).
    """
    chosen = or_default(features, default)
    prefs = _preferences(chosen)
    if not features.declared:
        why = "the client did not declare the extension"
    elif not features.tags:
        why = "no features declared"
    else:
        why = "no declared feature changes resource output"
    if not prefs.active:
        return (
            f"Content negotiation: {why}, so resources/read returns every variant "
            f"in the default order: {_join(_ranked_names(prefs))}."
        )
    outcome = _outcome(prefs, binary_cap)
    if chosen is not features:
        return f"Content negotiation: {why}, so this server's default applies: {outcome}."
    return f"Content negotiation: {outcome}."


def describe_default(default: Features, *, binary_cap: int = DEFAULT_BINARY_CAP) -> str:
    """The operator's default in one sentence, for any client (``server/discover``)."""
    outcome = _outcome(_preferences(default), binary_cap)
    return (
        "Content negotiation: for a client that negotiates no feature, this server's default "
        f"applies: {outcome}."
    )


def _ranked_names(prefs: _Preferences) -> list[str]:
    return [_ROLE_NAMES[_EVERY_ROLE[i].role] for i in _rank(_EVERY_ROLE, prefs)]


def _outcome(prefs: _Preferences, binary_cap: int) -> str:
    """What active preferences make of a read: "TAGS — resources/read returns ..."."""
    names = _ranked_names(prefs)
    if prefs.verbosity == "compact":
        outcome = (
            f"returns only the first available of {_join(names, 'or')} "
            f"(binary variants over {_size(binary_cap)} skipped)"
        )
    else:
        outcome = f"returns {names[0]} first, then {_join(names[1:])}"
        if prefs.verbosity == "verbose":
            outcome += ", all variants included"
        else:
            outcome += (
                f"; binary variants over {_size(binary_cap)} are left out unless verbosity=verbose"
            )
    return f"{', '.join(map(str, prefs.effective))} — resources/read {outcome}"


@dataclass(frozen=True, slots=True)
class ToolResultStyle:
    """How a tool result is shaped for a client (SEP "Tool Results"): an agent or a
    ``format=json`` client gets the structured result first, a human or ``format=markdown``
    client a readable Markdown text first; ``verbosity=compact`` asks for less of it."""

    structured_first: bool
    compact: bool


def tool_result_style(features: Features) -> ToolResultStyle:
    """The style for ``features``; the first tag that names an audience or format wins."""
    structured_first = False
    if features.declared:
        for tag in features.tags:
            if tag.negated:
                continue
            if tag.name in ("agent", "human") and tag.value is None:
                structured_first = tag.name == "agent"
                break
            if tag.name == "format" and tag.value in TEXTUAL_ROLES:
                structured_first = tag.value == "json"
                break
    return ToolResultStyle(structured_first, compact=features.value("verbosity") == "compact")


def _join(words: Sequence[str], last: str = "and") -> str:
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} {last} {words[-1]}"
