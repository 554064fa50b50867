"""The prompts' parsers, property-tested (issue 28, item 3).

``prompts/get`` params and a prompt's arguments (server/prompts "Error Handling": a bad
or missing argument is -32602, with a message naming it), a ``ref/prompt`` completion
request, what a typed document URI stands for, and the search a question becomes: each
either yields what it promises or refuses with its own error, never another exception.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docshelf.app.mcp import wire
from docshelf.app.mcp.completion import typed_path
from docshelf.app.mcp.params import CompleteParams, GetPromptParams
from docshelf.app.mcp.prompts import PROMPTS, STOPWORDS, search_query
from docshelf.storage.search import MAX_QUERY_CHARS, MAX_TERMS, InvalidQuery, parse_query
from docshelf.storage.uris import InvalidUri, build_uri

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=4,
)
# Generation, not the parsers, is what is slow on two shared cores.
PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = st.sampled_from([*PROMPTS, "other"]) | st.text(max_size=8)
ARGUMENT_NAMES = st.sampled_from(["uri", "uri_a", "uri_b", "question", "path_prefix", "x"])


def _refused(error: wire.McpError, prefix: str) -> None:
    assert error.code == wire.INVALID_PARAMS
    assert error.message.startswith(prefix), error.message
    error.message.encode("utf-8")  # said in text any client can read


@PROPERTY
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "name": NAMES | JSON,
            "arguments": st.dictionaries(ARGUMENT_NAMES | st.text(), st.text() | JSON) | JSON,
        },
    )
)
def test_get_params_are_a_name_and_string_arguments_or_32602(params: dict[str, Any]) -> None:
    try:
        parsed = GetPromptParams.parse("prompts/get", params)
    except wire.McpError as exc:
        _refused(exc, "prompts/get: ")
        return
    assert parsed.name == params["name"] and parsed.name
    assert parsed.arguments == (params.get("arguments") or {})
    assert all(isinstance(v, str) for v in parsed.arguments.values())


@PROPERTY
@given(st.sampled_from(list(PROMPTS.values())), st.dictionaries(ARGUMENT_NAMES, st.text()))
def test_a_prompts_arguments_are_known_and_complete_or_32602(
    prompt: Any, given_arguments: dict[str, str]
) -> None:
    names = {argument.name for argument in prompt.arguments}
    try:
        values = prompt.check(given_arguments)
    except wire.McpError as exc:
        _refused(exc, f"{prompt.name}: ")
        unknown = set(given_arguments) - names
        missing = [
            a.name
            for a in prompt.arguments
            if a.required and not given_arguments.get(a.name, "").strip()
        ]
        assert unknown or missing
        return
    assert set(given_arguments) <= names
    assert all(values[a.name] for a in prompt.arguments if a.required)
    assert all(value == value.strip() and value for value in values.values())


@PROPERTY
@given(
    st.fixed_dictionaries(
        {
            "ref": st.fixed_dictionaries(
                {"type": st.sampled_from(["ref/prompt", "ref/resource", "ref/other"])},
                optional={"name": NAMES | JSON, "uri": st.text() | JSON},
            )
            | JSON,
            "argument": st.fixed_dictionaries(
                {"name": ARGUMENT_NAMES | JSON, "value": st.text() | JSON}
            )
            | JSON,
        }
    )
)
def test_a_completion_names_a_prompt_or_a_template_or_is_32602(params: dict[str, Any]) -> None:
    try:
        parsed = CompleteParams.parse("completion/complete", params)
    except wire.McpError as exc:
        _refused(exc, "completion/complete: ")
        return
    if params["ref"]["type"] == "ref/prompt":
        assert parsed.prompt == params["ref"]["name"] and parsed.template is None
    else:
        assert parsed.template == params["ref"]["uri"] and parsed.prompt is None


SEGMENT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"),
    min_size=1,
    max_size=6,
).filter(lambda s: s not in (".", ".."))


@PROPERTY
@given(st.lists(SEGMENT, min_size=1, max_size=3), st.data())
def test_any_cut_of_a_document_uri_stands_for_a_prefix_of_its_path(
    segments: list[str], data: st.DataObject
) -> None:
    """What completion looks up for a typed URI: every prefix of a document's URI, even one
    cut inside a percent-escape or a UTF-8 character, stands for a prefix of its path — so
    the document is among the values offered."""
    path = "/".join(segments)
    try:
        uri = build_uri("shelf", path)
    except InvalidUri:
        return
    encoded = uri.removeprefix("docshelf://shelf/")
    assert typed_path(encoded) == path
    cut = data.draw(st.integers(0, len(encoded)))
    prefix = typed_path(encoded[:cut])
    assert prefix is not None and path.startswith(prefix)


@PROPERTY
@given(st.text(max_size=40))
def test_any_typed_text_is_a_path_prefix_or_none(typed: str) -> None:
    prefix = typed_path(typed)
    assert prefix is None or isinstance(prefix, str)


@PROPERTY
@given(st.text(max_size=700))
def test_a_question_becomes_a_query_the_search_takes_or_its_own_refusal(question: str) -> None:
    try:
        query = search_query(question)
    except InvalidQuery:
        assert not any(len(word) <= 400 for word in re.findall(r"\w+", question))
        return
    terms = parse_query(query)  # taken as it is
    assert len(query) <= MAX_QUERY_CHARS and len(terms) <= MAX_TERMS
    words = {word.lower() for word in re.findall(r"\w+", question)}
    assert set(re.findall(r"\w+", query)) <= words


@pytest.mark.parametrize(
    ("question", "query"),
    [
        ("Where is the blind text?", "blind text"),
        ("What is it?", "what is it"),  # nothing but function words: all of them
        ('How do I "back up" the SQLite file?', '"back up" sqlite file'),
        ("conf* files?", "conf* files"),
        ("nginx nginx NGINX", "nginx"),
    ],
)
def test_a_question_is_searched_without_its_function_words(question: str, query: str) -> None:
    assert search_query(question) == query
    assert "the" in STOPWORDS
