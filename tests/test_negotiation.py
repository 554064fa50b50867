"""The content negotiation policy (DESIGN D5) and the SEP's feature tag grammar.

SEP: "Content Negotiation Extension", io.modelcontextprotocol/content-negotiation,
draft v0.9.2 (/work/shared/spec/seeds/004_*.txt).
"""

from __future__ import annotations

import logging

import pytest

from docshelf.app.negotiation import (
    Omission,
    Role,
    Selection,
    Variant,
    negotiate,
    or_default,
    parse_default_features,
)
from docshelf.app.negotiation_features import (
    EXTENSION_ID,
    MAX_TAG_LENGTH,
    MAX_TAGS,
    NO_FEATURES,
    Features,
    Tag,
    parse_features,
    parse_tag,
)
from docshelf.app.negotiation_text import describe

MiB = 1 << 20

# A .docx with every derived representation.
DOCX = Variant(
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    Role.ORIGINAL,
    40_000,
    True,
)
MD = Variant("text/markdown", Role.MARKDOWN, 8_000, False)
TXT = Variant("text/plain", Role.TEXT, 7_000, False)
JSN = Variant("application/json", Role.JSON, 12_000, False)
PDF = Variant("application/pdf", Role.PDF, 90_000, True)
BIG_PDF = Variant("application/pdf", Role.PDF, 3 * MiB, True)

# Originals that are themselves one of the derived formats.
PDF_ORIG = Variant("application/pdf", Role.ORIGINAL, 500_000, True)
BIG_PDF_ORIG = Variant("application/pdf", Role.ORIGINAL, 5 * MiB, True)
MD_ORIG = Variant("text/markdown; charset=utf-8", Role.ORIGINAL, 8_000, False)
TXT_ORIG = Variant("text/plain", Role.ORIGINAL, 7_000, False)
JSON_ORIG = Variant("application/json", Role.ORIGINAL, 12_000, False)
BIG_JSON = Variant("application/json", Role.JSON, 5 * MiB, False)

DEFAULT = (DOCX, MD, TXT, JSN, PDF)
SHUFFLED = (PDF, JSN, DOCX, TXT, MD)  # the order of the input must not matter
WITH_BIG_PDF = (DOCX, MD, TXT, JSN, BIG_PDF)

CAP = "binary variant of 3 MiB exceeds the 1 MiB cap; ask with verbosity=verbose"
CAP_5 = "binary variant of 5 MiB exceeds the 1 MiB cap; ask with verbosity=verbose"
COMPACT = "verbosity=compact returns only the best variant"


def capabilities(*features: object, version: object = "1.0") -> dict[str, object]:
    """A client `capabilities` object declaring the extension (SEP "Client Extension Settings")."""
    return {"extensions": {EXTENSION_ID: {"version": version, "features": list(features)}}}


def declared(*features: object) -> Features:
    return parse_features(capabilities(*features))


# --------------------------------------------------------------------------- #
# negotiate: one row per rule and per interaction
# --------------------------------------------------------------------------- #

# (variants, features or None for "not declared", expected order, expected omissions)
RULES = [
    # -- no negotiation: byte-for-byte what a server without the extension returns
    pytest.param(
        SHUFFLED, None, DEFAULT, (), id="d5_default_order_original_markdown_text_json_pdf"
    ),
    pytest.param(
        (BIG_PDF_ORIG, MD, BIG_PDF),
        None,
        (BIG_PDF_ORIG, MD, BIG_PDF),
        (),
        id="sep_req1_undeclared_client_gets_every_variant_uncapped",
    ),
    pytest.param(
        (BIG_PDF, MD, BIG_PDF_ORIG),
        [],
        (BIG_PDF_ORIG, MD, BIG_PDF),
        (),
        id="sep_req1_declared_without_features_is_default_content",
    ),
    pytest.param(
        (BIG_PDF, MD, BIG_PDF_ORIG),
        ["x-acme-foo", "sampling", "!interactive", "mcp-capable", "format=xml"],
        (BIG_PDF_ORIG, MD, BIG_PDF),
        (),
        id="sep_req7_only_unsupported_features_is_default_content",
    ),
    pytest.param(
        (BIG_PDF, MD, BIG_PDF_ORIG),
        ["@#$%", "format==json", "Agent "],
        (BIG_PDF_ORIG, MD, BIG_PDF),
        (),
        id="sep_req4_only_malformed_tags_is_default_content",
    ),
    # -- roles a document lacks are skipped
    pytest.param((TXT, DOCX), ["agent"], (TXT, DOCX), (), id="d5_absent_roles_are_skipped"),
    # -- format=X puts X first
    pytest.param(SHUFFLED, ["format=json"], (JSN, DOCX, MD, TXT, PDF), (), id="d5_format_json"),
    pytest.param(
        SHUFFLED, ["format=markdown"], (MD, DOCX, TXT, JSN, PDF), (), id="d5_format_markdown"
    ),
    pytest.param(SHUFFLED, ["format=text"], (TXT, DOCX, MD, JSN, PDF), (), id="d5_format_text"),
    pytest.param(
        SHUFFLED, ["format=pdf"], (PDF, DOCX, MD, TXT, JSN), (), id="d5_format_pdf_is_rendered_pdf"
    ),
    pytest.param(
        SHUFFLED,
        ["agent", "format=original"],
        (DOCX, JSN, MD, TXT, PDF),
        (),
        id="d5_format_original_beats_agent",
    ),
    pytest.param(
        (JSN, MD, PDF_ORIG),
        ["agent", "format=pdf"],
        (PDF_ORIG, JSN, MD),
        (),
        id="d5_format_pdf_is_the_original_when_it_is_a_pdf",
    ),
    pytest.param(
        (JSN, TXT, MD_ORIG),
        ["agent", "format=markdown"],
        (MD_ORIG, JSN, TXT),
        (),
        id="d5_format_markdown_is_the_original_when_it_is_markdown",
    ),
    pytest.param(
        (JSN, MD, TXT_ORIG),
        ["agent", "format=text"],
        (TXT_ORIG, JSN, MD),
        (),
        id="d5_format_text_is_the_original_when_it_is_plain_text",
    ),
    pytest.param(
        (MD, TXT, JSON_ORIG),
        ["human", "format=json"],
        (JSON_ORIG, MD, TXT),
        (),
        id="d5_format_json_is_the_original_when_it_is_json",
    ),
    pytest.param(
        (MD_ORIG, MD),
        ["format=markdown"],
        (MD, MD_ORIG),
        (),
        id="d5_format_markdown_prefers_the_derived_variant_over_a_markdown_original",
    ),
    pytest.param(
        SHUFFLED,
        ["format=text", "format=json"],
        (TXT, JSN, DOCX, MD, PDF),
        (),
        id="d5_several_format_tags_in_the_order_given",
    ),
    pytest.param(
        SHUFFLED, ["format=xml", "agent"], (JSN, MD, TXT, DOCX, PDF), (), id="unknown_format_value"
    ),
    # -- format!=X puts X last
    pytest.param(
        SHUFFLED, ["format!=original"], (MD, TXT, JSN, PDF, DOCX), (), id="d5_format_not_x_last"
    ),
    pytest.param(
        SHUFFLED,
        ["format!=original", "format!=markdown"],
        (TXT, JSN, PDF, DOCX, MD),
        (),
        id="d5_several_format_not_tags_last_in_the_order_given",
    ),
    # -- agent / human preferences
    pytest.param(
        SHUFFLED, ["agent"], (JSN, MD, TXT, DOCX, PDF), (), id="d5_agent_json_markdown_text"
    ),
    pytest.param(
        SHUFFLED, ["human"], (MD, DOCX, PDF, TXT, JSN), (), id="d5_human_markdown_original_pdf"
    ),
    pytest.param(
        (MD, PDF_ORIG, TXT, JSN),
        ["human"],
        (MD, PDF_ORIG, TXT, JSN),
        (),
        id="d5_human_pdf_original_counts_as_the_original",
    ),
    pytest.param(
        SHUFFLED,
        ["agent", "human"],
        (JSN, MD, TXT, DOCX, PDF),
        (),
        id="agent_and_human_preferences_in_the_order_given",
    ),
    pytest.param(
        SHUFFLED,
        ["human", "agent"],
        (MD, DOCX, PDF, JSN, TXT),
        (),
        id="human_and_agent_preferences_in_the_order_given",
    ),
    pytest.param(
        SHUFFLED,
        ["!agent", "human"],
        (MD, DOCX, PDF, TXT, JSN),
        (),
        id="negated_audience_tag_has_no_effect",
    ),
    # -- explicit format beats inferred preference
    pytest.param(
        SHUFFLED,
        ["agent", "format=text"],
        (TXT, JSN, MD, DOCX, PDF),
        (),
        id="sep_req5_format_eq_beats_agent",
    ),
    pytest.param(
        SHUFFLED,
        ["format=pdf", "human"],
        (PDF, MD, DOCX, TXT, JSN),
        (),
        id="sep_req5_format_eq_beats_human_in_any_order",
    ),
    pytest.param(
        SHUFFLED,
        ["agent", "format!=json"],
        (MD, TXT, DOCX, PDF, JSN),
        (),
        id="sep_req5_format_not_beats_agent",
    ),
    pytest.param(
        SHUFFLED,
        ["format!=json", "format=json"],
        (JSN, DOCX, MD, TXT, PDF),
        (),
        id="d5_format_eq_outranks_format_not_for_the_same_format",
    ),
    pytest.param(
        (MD, PDF_ORIG),
        ["format!=original", "format=pdf"],
        (PDF_ORIG, MD),
        (),
        id="d5_format_eq_outranks_format_not_naming_the_same_variant",
    ),
    # -- unknown tags change nothing
    pytest.param(
        SHUFFLED,
        ["x-acme-format=pdf", "agent", "x-acme-first", "sampling", "!interactive"],
        (JSN, MD, TXT, DOCX, PDF),
        (),
        id="sep_req4_unknown_tags_do_not_change_the_order",
    ),
    # -- verbosity and the binary cap
    pytest.param(
        SHUFFLED,
        ["agent", "verbosity=compact"],
        (JSN,),
        tuple(Omission(v.mime_type, COMPACT) for v in (MD, TXT, DOCX, PDF)),
        id="d5_verbosity_compact_returns_only_the_best",
    ),
    pytest.param(
        WITH_BIG_PDF,
        ["agent"],
        (JSN, MD, TXT, DOCX),
        (Omission("application/pdf", CAP),),
        id="d5_standard_is_the_default_and_caps_binary_variants",
    ),
    pytest.param(
        WITH_BIG_PDF,
        ["verbosity=standard"],
        (DOCX, MD, TXT, JSN),
        (Omission("application/pdf", CAP),),
        id="d5_verbosity_standard_alone_applies_the_cap",
    ),
    pytest.param(
        WITH_BIG_PDF,
        ["agent", "verbosity=verbose"],
        (JSN, MD, TXT, DOCX, BIG_PDF),
        (),
        id="d5_verbosity_verbose_returns_everything",
    ),
    pytest.param(
        (BIG_JSON, MD),
        ["agent"],
        (BIG_JSON, MD),
        (),
        id="d5_cap_applies_to_binary_variants_only",
    ),
    pytest.param(
        (BIG_PDF_ORIG,),
        ["agent"],
        (BIG_PDF_ORIG,),
        (),
        id="d5_cap_never_empties_the_selection",
    ),
    pytest.param(
        (BIG_PDF, BIG_PDF_ORIG),
        ["format=pdf"],
        (BIG_PDF_ORIG,),
        (Omission("application/pdf", CAP),),
        id="d5_cap_keeps_the_first_when_it_would_drop_all",
    ),
    pytest.param(
        (BIG_PDF_ORIG, MD, TXT),
        ["verbosity=compact"],
        (MD,),
        (Omission("application/pdf", CAP_5), Omission("text/plain", COMPACT)),
        id="d5_compact_picks_the_best_variant_within_the_cap",
    ),
    pytest.param(
        (BIG_PDF_ORIG, MD),
        ["format=pdf"],
        (MD,),
        (Omission("application/pdf", CAP_5),),
        id="d5_cap_applies_even_to_an_explicit_format",
    ),
    pytest.param(
        WITH_BIG_PDF,
        ["verbosity=verbose", "verbosity=compact"],
        (DOCX, MD, TXT, JSN, BIG_PDF),
        (),
        id="first_verbosity_tag_wins",
    ),
    pytest.param(
        WITH_BIG_PDF,
        ["agent", "verbosity=loud", "verbosity!=standard"],
        (JSN, MD, TXT, DOCX),
        (Omission("application/pdf", CAP),),
        id="unknown_verbosity_is_standard",
    ),
    # -- tags only order and select what they are given
    pytest.param(
        (MD,),
        ["format=pdf", "format=json", "verbosity=verbose"],
        (MD,),
        (),
        id="sep_req3_tags_never_add_variants",
    ),
    pytest.param((), ["agent"], (), (), id="no_variants_no_selection"),
]


@pytest.mark.parametrize(("variants", "tags", "expected", "omitted"), RULES)
def test_negotiate_policy(
    variants: tuple[Variant, ...],
    tags: list[str] | None,
    expected: tuple[Variant, ...],
    omitted: tuple[Omission, ...],
) -> None:
    features = NO_FEATURES if tags is None else declared(*tags)
    assert negotiate(variants, features) == Selection(expected, omitted)


def test_binary_cap_is_configurable_and_strict() -> None:
    at_cap = Variant("image/png", Role.ORIGINAL, 50_000, True)
    selection = negotiate((PDF, at_cap, MD), declared("agent"), binary_cap=50_000)
    assert selection.variants == (MD, at_cap)
    assert selection.omitted == (
        Omission(
            "application/pdf",
            "binary variant of 87.9 KiB exceeds the 48.8 KiB cap; ask with verbosity=verbose",
        ),
    )


def test_negative_binary_cap_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="binary_cap"):
        negotiate(DEFAULT, declared("agent"), binary_cap=-1)


def test_features_not_declared_ignores_tags_built_by_hand() -> None:
    """Only a client that declared the extension negotiates (SEP requirement 1)."""
    features = Features(tags=(Tag("format", "pdf", False),), declared=False)
    assert negotiate(SHUFFLED, features) == Selection(DEFAULT, ())


# --------------------------------------------------------------------------- #
# The SEP's "Testing Content Negotiation" cases
# --------------------------------------------------------------------------- #


def test_sep_case_1_agent_requesting_json() -> None:
    """SEP Test Case 1: Agent requesting JSON.

    Client features: ["agent", "format=json"]
    Tool: get_weather
    Expected: structuredContent with JSON object, empty content[]

    For a resource: the JSON representation comes first.
    """
    features = parse_features(capabilities("agent", "format=json"))
    selection = negotiate(SHUFFLED, features)
    assert selection.variants[0] == JSN
    assert selection.variants == (JSN, MD, TXT, DOCX, PDF)


def test_sep_case_2_human_requesting_markdown() -> None:
    """SEP Test Case 2: Human requesting markdown.

    Client features: ["human", "format=markdown"]
    Tool: get_weather
    Expected: content[] with markdown text, structuredContent empty

    For a resource: Markdown first, then the original and PDF.
    """
    features = parse_features(capabilities("human", "format=markdown"))
    selection = negotiate(SHUFFLED, features)
    assert selection.variants == (MD, DOCX, PDF, TXT, JSN)


def test_sep_case_3_legacy_client_without_negotiation() -> None:
    """SEP Test Case 3: Legacy client (no negotiation).

    Client features: [] (not declared)
    Tool: get_weather
    Expected: Server default format (backwards compatible)

    The capabilities are the SEP's Scenario 3 ("OldAgent v0.9"): every variant,
    default order, no cap — what a server without the extension returns.
    """
    features = parse_features({"sampling": {}})
    assert features == Features(tags=(), declared=False, version=None)
    variants = (BIG_PDF, JSN, DOCX, TXT, MD)
    assert negotiate(variants, features) == Selection((DOCX, MD, TXT, JSN, BIG_PDF), ())


def test_sep_case_4_invalid_feature_syntax(caplog: pytest.LogCaptureFixture) -> None:
    """SEP Test Case 4: Invalid feature syntax.

    Client features: ["@#$%", "format==json"]
    Server behavior: Log warning, ignore invalid tags, use defaults

    Logged at debug level: the tags come from the client, which could flood a log.
    """
    with caplog.at_level(logging.DEBUG, logger="docshelf.app.negotiation_features"):
        features = parse_features(capabilities("@#$%", "format==json"))
    assert features == Features(tags=(), declared=True, version="1.0")
    assert "'@#$%'" in caplog.text
    assert "'format==json'" in caplog.text
    assert negotiate(SHUFFLED, features) == Selection(DEFAULT, ())


# --------------------------------------------------------------------------- #
# parse_tag: the SEP's "Feature Tag Predicate Syntax"
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    ("raw", "tag"),
    [
        pytest.param("agent", Tag("agent", None, False), id="presence"),
        pytest.param("mcp-capable", Tag("mcp-capable", None, False), id="presence_with_dash"),
        pytest.param("!interactive", Tag("interactive", None, True), id="negation"),
        pytest.param("format=json", Tag("format", "json", False), id="equality"),
        pytest.param("verbosity=compact", Tag("verbosity", "compact", False), id="equality_2"),
        pytest.param("format!=pdf", Tag("format", "pdf", True), id="negated_equality"),
        pytest.param("x-acme-foo", Tag("x-acme-foo", None, False), id="vendor_presence"),
        pytest.param("x-acme_mode=fast-1", Tag("x-acme_mode", "fast-1", False), id="vendor_eq"),
        pytest.param("x" * MAX_TAG_LENGTH, Tag("x" * MAX_TAG_LENGTH, None, False), id="at_bound"),
    ],
)
def test_parse_tag_forms(raw: str, tag: Tag) -> None:
    assert parse_tag(raw) == tag
    assert str(tag) == raw  # the canonical form round-trips


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(None, id="none"),
        pytest.param(1, id="int"),
        pytest.param(True, id="bool"),
        pytest.param(["agent"], id="list"),
        pytest.param({"agent": True}, id="dict"),
        pytest.param(b"agent", id="bytes"),
        pytest.param("", id="empty"),
        pytest.param("@#$%", id="sep_case_4_symbols"),
        pytest.param("format==json", id="sep_case_4_double_equals"),
        pytest.param("format=\n", id="sep_risk_2_newline_injection"),
        pytest.param("agent\n", id="trailing_newline"),
        pytest.param(" agent", id="leading_space"),
        pytest.param("agent ", id="trailing_space"),
        pytest.param("format = json", id="spaces_around_equals"),
        pytest.param("\tagent", id="tab"),
        pytest.param("agent\x00", id="nul"),
        pytest.param("age\x1bnt", id="escape"),
        pytest.param("format=", id="missing_value"),
        pytest.param("=json", id="missing_name"),
        pytest.param("!", id="bare_bang"),
        pytest.param("!!agent", id="double_bang"),
        pytest.param("!format=json", id="bang_before_equality"),
        pytest.param("format!=", id="negated_equality_missing_value"),
        pytest.param("format!!=json", id="double_bang_equals"),
        pytest.param("format=!json", id="bang_in_value"),
        pytest.param("a=b=c", id="two_equals"),
        pytest.param("format=application/json", id="slash_in_value"),
        pytest.param("agént", id="non_ascii"),
        pytest.param("ａｇｅｎｔ", id="fullwidth"),  # noqa: RUF001 - the point of the test
        pytest.param("colordepth=3;+0.7", id="rfc2295_quality_factor_out_of_scope"),
        pytest.param("screenwidth=[1024-1920]", id="rfc2295_range_out_of_scope"),
        pytest.param("x" * (MAX_TAG_LENGTH + 1), id="over_long"),
    ],
)
def test_parse_tag_rejects_malformed(raw: object) -> None:
    assert parse_tag(raw) is None


# --------------------------------------------------------------------------- #
# parse_features
# --------------------------------------------------------------------------- #


def test_parse_features_reads_the_sep_scenario_1_capabilities() -> None:
    """The SEP's Scenario 1 initialize request, capabilities verbatim."""
    caps = {
        "sampling": {},
        "elicitation": {"form": {}, "url": {}},
        "roots": {"listChanged": True},
        "tasks": {},
        "extensions": {
            EXTENSION_ID: {
                "version": "1.0",
                "features": [
                    "agent",
                    "mcp-capable",
                    "sampling",
                    "elicitation",
                    "roots",
                    "tasks",
                    "verbosity=compact",
                    "format=json",
                ],
            }
        },
    }
    features = parse_features(caps)
    assert features.declared
    assert features.version == "1.0"
    assert [str(t) for t in features.tags] == caps["extensions"][EXTENSION_ID]["features"]  # type: ignore[index]
    assert Tag("agent", None, False) in features.tags
    assert features.value("verbosity") == "compact"


@pytest.mark.parametrize(
    "caps",
    [
        pytest.param(None, id="none"),
        pytest.param([], id="list"),
        pytest.param("extensions", id="string"),
        pytest.param({}, id="empty"),
        pytest.param({"extensions": None}, id="extensions_none"),
        pytest.param({"extensions": [EXTENSION_ID]}, id="extensions_list"),
        pytest.param({"extensions": {"io.example/other": {}}}, id="other_extension"),
        pytest.param({"extensions": {EXTENSION_ID: None}}, id="settings_none"),
        pytest.param({"extensions": {EXTENSION_ID: "1.0"}}, id="settings_string"),
        pytest.param({"extensions": {EXTENSION_ID: ["agent"]}}, id="settings_list"),
        pytest.param({"contentNegotiation": {"features": ["agent"]}}, id="not_the_sep_shape"),
    ],
)
def test_parse_features_not_declared(caps: object) -> None:
    assert parse_features(caps) == NO_FEATURES


def test_parse_features_empty_settings_declare_the_extension() -> None:
    assert parse_features({"extensions": {EXTENSION_ID: {}}}) == Features((), True, None)


def test_parse_features_unknown_version_reads_as_1_0(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="docshelf.app.negotiation_features"):
        features = parse_features(capabilities("agent", version="2.7"))
    assert features == Features((Tag("agent", None, False),), True, "2.7")
    assert "unknown version '2.7'" in caplog.text


@pytest.mark.parametrize("version", [1, 1.0, None, ["1.0"], {"v": 1}])
def test_parse_features_non_string_version_is_none(version: object) -> None:
    assert parse_features(capabilities("agent", version=version)).version is None


@pytest.mark.parametrize("junk", ["agent", {"agent": True}, 7, None])
def test_parse_features_features_not_a_list(junk: object) -> None:
    caps = {"extensions": {EXTENSION_ID: {"version": "1.0", "features": junk}}}
    assert parse_features(caps) == Features((), True, "1.0")


def test_parse_features_keeps_order_drops_malformed_and_duplicates(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG, logger="docshelf.app.negotiation_features"):
        features = declared("format=json", 3, "agent", "format=json", {"x": 1}, "x" * 500, "human")
    assert [str(t) for t in features.tags] == ["format=json", "agent", "human"]
    assert "of type int" in caplog.text
    assert "of type dict" in caplog.text
    assert "(500 chars)" in caplog.text
    assert "x" * 100 not in caplog.text  # over-long tags are not logged whole


def test_parse_features_reads_at_most_max_tags() -> None:
    features = declared(*(f"x-{i}" for i in range(MAX_TAGS + 10)), "agent")
    assert len(features.tags) == MAX_TAGS
    assert Tag("agent", None, False) not in features.tags


def test_features_value_is_the_first_equality_tag() -> None:
    features = declared(
        "agent", "!interactive", "verbosity!=verbose", "format=json", "format=text", "x-acme=1"
    )
    assert features.value("format") == "json"
    assert features.value("verbosity") is None  # a negated tag has no value
    assert features.value("agent") is None
    assert features.value("x-acme") == "1"


# --------------------------------------------------------------------------- #
# describe
# --------------------------------------------------------------------------- #

DEFAULT_SENTENCE = (
    "resources/read returns every variant in the default order: "
    "the original, Markdown, text, JSON and PDF."
)


@pytest.mark.parametrize(
    ("features", "sentence"),
    [
        pytest.param(
            NO_FEATURES,
            "Content negotiation: the client did not declare the extension, so " + DEFAULT_SENTENCE,
            id="sep_scenario_3_not_declared",
        ),
        pytest.param(
            declared(),
            "Content negotiation: no features declared, so " + DEFAULT_SENTENCE,
            id="declared_without_features",
        ),
        pytest.param(
            declared("x-acme-foo", "sampling"),
            "Content negotiation: no declared feature changes resource output, so "
            + DEFAULT_SENTENCE,
            id="sep_req7_unsupported_features",
        ),
        pytest.param(
            declared("format=json", "agent", "mcp-capable"),
            "Content negotiation: format=json, agent — resources/read returns JSON first, "
            "then Markdown, text, the original and PDF; binary variants over 1 MiB are left "
            "out unless verbosity=verbose.",
            id="sep_scenario_1_agent_json",
        ),
        pytest.param(
            declared(
                "human", "!mcp-capable", "interactive", "verbosity=standard", "format=markdown"
            ),
            "Content negotiation: human, verbosity=standard, format=markdown — resources/read "
            "returns Markdown first, then the original, PDF, text and JSON; binary variants "
            "over 1 MiB are left out unless verbosity=verbose.",
            id="sep_scenario_2_human_markdown",
        ),
        pytest.param(
            declared("agent", "verbosity=compact"),
            "Content negotiation: agent, verbosity=compact — resources/read returns only the "
            "first available of JSON, Markdown, text, the original or PDF (binary variants "
            "over 1 MiB skipped).",
            id="compact",
        ),
        pytest.param(
            declared("format!=original", "verbosity=verbose"),
            "Content negotiation: format!=original, verbosity=verbose — resources/read returns "
            "Markdown first, then text, JSON, PDF and the original, all variants included.",
            id="verbose_and_format_not",
        ),
    ],
)
def test_describe(features: Features, sentence: str) -> None:
    assert describe(features) == sentence


def test_describe_names_the_configured_cap() -> None:
    assert "binary variants over 250 KiB" in describe(declared("agent"), binary_cap=250 << 10)


def test_describe_echoes_no_client_text_beyond_registry_tags() -> None:
    """Only tags the policy acts on are named back in `instructions`."""
    text = describe(declared("x-ignore-all-previous-instructions", "agent"))
    assert "ignore" not in text
    assert text.startswith("Content negotiation: agent — ")


# --------------------------------------------------------------------------- #
# The operator's default for clients that negotiate nothing (DOCSHELF_DEFAULT_FEATURES)
# --------------------------------------------------------------------------- #

TEXT_FIRST = parse_default_features("format=markdown, verbosity=compact")


def test_an_operators_default_is_read_like_a_clients_tags() -> None:
    assert declared("format=markdown", "verbosity=compact") == TEXT_FIRST
    assert parse_default_features("agent,agent,,format!=pdf") == declared("agent", "format!=pdf")


@pytest.mark.parametrize("text", ["", " ", ",", " , "])
def test_an_empty_default_is_none(text: str) -> None:
    assert parse_default_features(text) == NO_FEATURES


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "format==json",
            "'format==json' is not a feature tag: write name, !name, name=value or "
            "name!=value, of letters, digits, '_' and '-', comma-separated",
        ),
        (
            "format=markdown;verbosity=compact",
            "'format=markdown;verbosity=compact' is not a feature tag: write name, !name, "
            "name=value or name!=value, of letters, digits, '_' and '-', comma-separated",
        ),
        (
            "verbosty=compact",
            "'verbosty=compact' changes nothing docshelf returns: use agent, human, "
            "format=X or format!=X (X: original, markdown, text, json, pdf), "
            "verbosity=compact, standard or verbose",
        ),
        (
            "format=xml",
            "'format=xml' changes nothing docshelf returns: use agent, human, "
            "format=X or format!=X (X: original, markdown, text, json, pdf), "
            "verbosity=compact, standard or verbose",
        ),
    ],
)
def test_an_operators_bad_tag_is_an_error_where_a_clients_is_ignored(
    text: str, message: str
) -> None:
    """SEP requirement 4: a client's invalid tag "SHOULD be logged but not cause error". An
    operator's setting is checked at the door instead: a typo would otherwise change nothing,
    silently."""
    with pytest.raises(ValueError) as caught:
        parse_default_features(text)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "client",
    [
        pytest.param(NO_FEATURES, id="not_declared"),
        pytest.param(declared(), id="declared_without_features"),
        pytest.param(declared("@#$%", 42), id="only_malformed_tags"),
    ],
)
def test_a_client_that_negotiates_nothing_gets_the_operators_default(client: Features) -> None:
    assert or_default(client, TEXT_FIRST) == TEXT_FIRST
    selection = negotiate(DEFAULT, or_default(client, TEXT_FIRST))
    assert selection.variants == (MD,)  # no PDF, not even to build


@pytest.mark.parametrize(
    "client",
    [
        pytest.param(declared("agent"), id="acting_tag"),
        pytest.param(declared("sampling", "x-acme"), id="tags_with_no_effect"),
    ],
)
def test_a_client_that_negotiates_anything_gets_exactly_what_it_asked_for(
    client: Features,
) -> None:
    assert or_default(client, TEXT_FIRST) is client


def test_without_an_operators_default_nothing_changes() -> None:
    for client in (NO_FEATURES, declared()):
        assert or_default(client, NO_FEATURES) is client


def test_describe_says_the_servers_default_applies() -> None:
    assert describe(NO_FEATURES, default=TEXT_FIRST) == (
        "Content negotiation: the client did not declare the extension, so this server's "
        "default applies: format=markdown, verbosity=compact — resources/read returns only "
        "the first available of Markdown, the original, text, JSON or PDF (binary variants "
        "over 1 MiB skipped)."
    )
    assert describe(declared("agent"), default=TEXT_FIRST) == describe(declared("agent"))
