"""Content negotiation: which representations of a document to return, in which order.

Implements the server side of the SEP "Content Negotiation Extension"
(``io.modelcontextprotocol/content-negotiation``, draft v0.9.2) for docshelf's
resources (DESIGN D5): given a client's features (parsed by
:mod:`app.negotiation_features`), it orders and selects among the variants it
is given. The module is pure. It does no I/O and never grants access to
anything: it can only reorder or leave out variants it was handed (SEP
requirement 3, "MUST NOT Use Features as Authentication").
:mod:`app.negotiation_text` says the outcome in words.

The policy is data (``DEFAULT_ORDER``, ``AUDIENCE_PREFERENCES``,
``FORMAT_MIME_TYPES``, ``VERBOSITY_LEVELS``) read by one function, ``rank``.
What it knows of each format (its role, the types an original of it may have,
its place in the default order) comes from the converters' format table,
:data:`docshelf.converters.formats.DERIVED_FORMATS`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

from docshelf.app.negotiation_features import KNOWN_VERSIONS, NO_FEATURES, Features, Tag, parse_tag
from docshelf.converters.formats import DERIVED_FORMATS, TEXTUAL_ROLES, Role

__all__ = [
    "AUDIENCE_PREFERENCES",
    "DEFAULT_BINARY_CAP",
    "DEFAULT_ORDER",
    "FORMAT_MIME_TYPES",
    "VERBOSITY_LEVELS",
    "Omission",
    "Preferences",
    "Role",
    "Selection",
    "ToolResultStyle",
    "Variant",
    "negotiate",
    "or_default",
    "parse_default_features",
    "preferences",
    "rank",
    "shapes_output",
    "size_text",
    "tool_result_style",
    "word_list",
]

_T = TypeVar("_T")

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
class Preferences:
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
    return preferences(features).active


def preferences(features: Features) -> Preferences:
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
    return Preferences(
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


def rank(variants: Sequence[Variant], prefs: Preferences) -> list[int]:
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
        if not preferences(Features((tag,), declared=True)).active:
            raise ValueError(
                f"{raw!r} changes nothing docshelf returns: use "
                f"{', '.join(AUDIENCE_PREFERENCES)}, format=X or format!=X "
                f"(X: {', '.join(_FORMATS)}), verbosity={word_list(VERBOSITY_LEVELS, 'or')}"
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
    order follows ``rank``; unless ``verbosity=verbose``, binary variants larger
    than ``binary_cap`` bytes are left out; ``verbosity=compact`` keeps only the
    first. The result is never empty when ``variants`` is not.
    """
    if binary_cap < 0:
        raise ValueError(f"binary_cap must be >= 0 bytes, got {binary_cap}")
    prefs = preferences(features)
    if not prefs.active:
        order = rank(variants, preferences(NO_FEATURES))
        return Selection(tuple(variants[i] for i in order), ())

    order = rank(variants, prefs)
    reasons: dict[int, str] = {}
    if prefs.verbosity != "verbose":
        for i in order:
            v = variants[i]
            if v.is_binary and v.size > binary_cap:
                reasons[i] = (
                    f"binary variant of {size_text(v.size)} exceeds the "
                    f"{size_text(binary_cap)} cap; ask with verbosity=verbose"
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


def size_text(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n} bytes"


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


def word_list(words: Sequence[str], last: str = "and") -> str:
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} {last} {words[-1]}"
