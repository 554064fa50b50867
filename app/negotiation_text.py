"""Content negotiation in words: the sentence the ``initialize`` result's ``instructions``
and ``server/discover`` give for what the policy (:mod:`app.negotiation`) makes of a read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from docshelf.app.negotiation import (
    DEFAULT_BINARY_CAP,
    DEFAULT_ORDER,
    Preferences,
    Variant,
    or_default,
    preferences,
    rank,
    size_text,
    word_list,
)
from docshelf.app.negotiation_features import NO_FEATURES, Features
from docshelf.converters.formats import DERIVED_FORMATS, Role

__all__ = ["describe", "describe_default"]

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
    prefs = preferences(chosen)
    if not features.declared:
        why = "the client did not declare the extension"
    elif not features.tags:
        why = "no features declared"
    else:
        why = "no declared feature changes resource output"
    if not prefs.active:
        return (
            f"Content negotiation: {why}, so resources/read returns every variant "
            f"in the default order: {word_list(_ranked_names(prefs))}."
        )
    outcome = _outcome(prefs, binary_cap)
    if chosen is not features:
        return f"Content negotiation: {why}, so this server's default applies: {outcome}."
    return f"Content negotiation: {outcome}."


def describe_default(default: Features, *, binary_cap: int = DEFAULT_BINARY_CAP) -> str:
    """The operator's default in one sentence, for any client (``server/discover``)."""
    outcome = _outcome(preferences(default), binary_cap)
    return (
        "Content negotiation: for a client that negotiates no feature, this server's default "
        f"applies: {outcome}."
    )


def _ranked_names(prefs: Preferences) -> list[str]:
    return [_ROLE_NAMES[_EVERY_ROLE[i].role] for i in rank(_EVERY_ROLE, prefs)]


def _outcome(prefs: Preferences, binary_cap: int) -> str:
    """What active preferences make of a read: "TAGS — resources/read returns ..."."""
    names = _ranked_names(prefs)
    if prefs.verbosity == "compact":
        outcome = (
            f"returns only the first available of {word_list(names, 'or')} "
            f"(binary variants over {size_text(binary_cap)} skipped)"
        )
    else:
        outcome = f"returns {names[0]} first, then {word_list(names[1:])}"
        if prefs.verbosity == "verbose":
            outcome += ", all variants included"
        else:
            outcome += (
                f"; binary variants over {size_text(binary_cap)} are left out "
                "unless verbosity=verbose"
            )
    return f"{', '.join(map(str, prefs.effective))} — resources/read {outcome}"
