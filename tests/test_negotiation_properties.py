"""Properties of the negotiation module that must hold for any input."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from docshelf.app.negotiation import DEFAULT_ORDER, Role, Variant, negotiate
from docshelf.app.negotiation_features import (
    EXTENSION_ID,
    MAX_TAG_LENGTH,
    NO_FEATURES,
    Features,
    parse_features,
    parse_tag,
)

# Anything json.loads can produce (plus tuples, which a Python caller might pass).
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: (
        st.lists(children, max_size=5)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=30,
)

# Tags drawn from the registry, the policy's vocabulary, vendor tags and noise.
VOCABULARY = [
    "agent",
    "human",
    "!agent",
    "mcp-capable",
    "!interactive",
    "sampling",
    "format=json",
    "format=markdown",
    "format=text",
    "format=pdf",
    "format=original",
    "format=xml",
    "format!=json",
    "format!=markdown",
    "format!=text",
    "format!=pdf",
    "format!=original",
    "verbosity=compact",
    "verbosity=standard",
    "verbosity=verbose",
    "x-acme-foo",
    "@#$%",
    "format==json",
]
tag_values = st.sampled_from(VOCABULARY) | st.text(max_size=20) | json_values

MIME_TYPES = [
    "application/pdf",
    "text/markdown",
    "text/plain",
    "application/json",
    "image/png",
    "application/octet-stream",
]
variants = st.builds(
    Variant,
    mime_type=st.sampled_from(MIME_TYPES),
    role=st.sampled_from(list(Role)),
    size=st.integers(min_value=0, max_value=4 << 20),
    is_binary=st.booleans(),
)
declared_features = st.lists(tag_values, max_size=8).map(
    lambda tags: parse_features({"extensions": {EXTENSION_ID: {"features": tags}}})
)
any_features = st.just(NO_FEATURES) | declared_features


@given(st.text() | json_values)
def test_parse_tag_never_raises(raw: object) -> None:
    tag = parse_tag(raw)
    if tag is not None:
        assert isinstance(raw, str)
        assert len(raw) <= MAX_TAG_LENGTH
        assert str(tag) == raw  # a well-formed tag has exactly one reading


@given(
    st.from_regex(
        r"!?[A-Za-z0-9_-]{1,40}|[A-Za-z0-9_-]{1,40}!?=[A-Za-z0-9_-]{1,40}", fullmatch=True
    )
)
def test_every_string_in_the_grammar_parses(raw: str) -> None:
    tag = parse_tag(raw)
    assert tag is not None
    assert str(tag) == raw


@given(json_values)
def test_parse_features_never_raises_on_any_capabilities(caps: object) -> None:
    assert isinstance(parse_features(caps), Features)


@given(json_values, json_values)
def test_parse_features_never_raises_on_any_settings(version: object, features: object) -> None:
    caps = {"extensions": {EXTENSION_ID: {"version": version, "features": features}}}
    parsed = parse_features(caps)
    assert parsed.declared
    assert all(parse_tag(str(tag)) == tag for tag in parsed.tags)


@given(st.lists(variants, max_size=8), any_features)
def test_negotiate_selects_a_permutation_of_a_subset(
    given_variants: list[Variant], features: Features
) -> None:
    selection = negotiate(given_variants, features)
    chosen = Counter(selection.variants)
    assert chosen <= Counter(given_variants)  # nothing added, nothing duplicated
    # everything left out is accounted for
    assert len(selection.variants) + len(selection.omitted) == len(given_variants)
    left_out = Counter(given_variants) - chosen
    assert Counter(o.mime_type for o in selection.omitted) == Counter(
        v.mime_type for v in left_out.elements()
    )
    if given_variants:
        assert selection.variants


@given(st.lists(variants, max_size=8), st.lists(tag_values, max_size=8))
def test_compact_returns_exactly_one(given_variants: list[Variant], tags: list[object]) -> None:
    # the first verbosity tag wins, so this client is compact whatever else it says
    features = parse_features(
        {"extensions": {EXTENSION_ID: {"features": ["verbosity=compact", *tags]}}}
    )
    selection = negotiate(given_variants, features)
    assert len(selection.variants) == min(1, len(given_variants))


@given(st.lists(variants, max_size=8))
def test_no_features_is_the_default_order_of_everything(given_variants: list[Variant]) -> None:
    expected = tuple(sorted(given_variants, key=lambda v: DEFAULT_ORDER.index(v.role)))
    for features in (NO_FEATURES, Features(declared=True)):
        selection = negotiate(given_variants, features)
        assert selection.variants == expected
        assert selection.omitted == ()


one_per_role = st.lists(variants, unique_by=lambda v: v.role, max_size=len(Role))


@given(one_per_role.flatmap(lambda vs: st.tuples(st.just(vs), st.permutations(vs))), any_features)
def test_negotiation_is_independent_of_input_order(
    lists: tuple[list[Variant], list[Variant]], features: Features
) -> None:
    """Roles and features decide the order, not how the caller listed the variants."""
    given_variants, shuffled = lists
    assert negotiate(given_variants, features) == negotiate(shuffled, features)
