"""The official Python SDK client lists docshelf's prompts, gets them and completes their
arguments (issue 28, item 3): over Streamable HTTP and stdio, in both protocol eras.

The peer is ``tests.support.peers``' one client per transport and era for the module, over
``make_shelf``'s sample shelf. The SDK parses every result with its own models (messages,
embedded resources, completions); each is also fetched as sent and validated against the
era's ``schema.json``.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from tests.support.peers import Peer
from tests.support.schema import validate
from tests.support.sdk import raw_result
from tests.support.servers import NOT_FOUND
from tests.support.shelves import MARKDOWN

pytestmark = pytest.mark.anyio

GUIDE = "docshelf://shelf/guides/field-guide.md"
PDF = "docshelf://shelf/papers/pdflatex-4-pages.pdf"
NOTES = "docshelf://shelf/notes.txt"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so the module-scoped ``peer`` (tests.support.peers) may be async."""
    return "asyncio"


async def get(peer: Peer, name: str, arguments: dict[str, str]) -> types.GetPromptResult:
    """``prompts/get`` through the SDK, after the same request as sent has passed the schema."""
    request = types.GetPromptRequest(
        params=types.GetPromptRequestParams(name=name, arguments=arguments)
    )
    validate(peer.era, "GetPromptResult", await raw_result(peer.client, request))
    return await peer.client.get_prompt(name, arguments)


def resources(result: types.GetPromptResult) -> list[types.TextResourceContents]:
    """The embedded resources of a prompt's messages, in order (all text)."""
    found = []
    for message in result.messages:
        assert message.role == "user"
        if isinstance(message.content, types.EmbeddedResource):
            assert isinstance(message.content.resource, types.TextResourceContents)
            found.append(message.content.resource)
    return found


def texts(result: types.GetPromptResult) -> list[str]:
    return [m.content.text for m in result.messages if isinstance(m.content, types.TextContent)]


async def complete(peer: Peer, prompt: str, argument: str, value: str) -> types.Completion:
    ref = types.PromptReference(name=prompt)
    request = types.CompleteRequest(
        params=types.CompleteRequestParams(
            ref=ref, argument=types.CompletionArgument(name=argument, value=value)
        )
    )
    validate(peer.era, "CompleteResult", await raw_result(peer.client, request))
    return (await peer.client.complete(ref, {"name": argument, "value": value})).completion


async def test_lists_the_three_prompts_with_their_arguments(peer: Peer) -> None:
    validate(
        peer.era, "ListPromptsResult", await raw_result(peer.client, types.ListPromptsRequest())
    )
    listed = await peer.client.list_prompts()
    assert listed.next_cursor is None
    prompts = {prompt.name: prompt for prompt in listed.prompts}
    assert set(prompts) == {"summarize_document", "compare_documents", "answer_from_shelf"}
    arguments: dict[str, Any] = {
        name: [(a.name, a.required) for a in prompt.arguments or []]
        for name, prompt in prompts.items()
    }
    assert arguments["answer_from_shelf"] == [("question", True), ("path_prefix", False)]
    assert all(prompt.title and prompt.description for prompt in prompts.values())


async def test_summarize_embeds_the_document_as_a_resource(peer: Peer) -> None:
    result = await get(peer, "summarize_document", {"uri": GUIDE})
    [document] = resources(result)
    assert (document.uri, document.mime_type) == (GUIDE, "text/markdown")
    assert document.text == MARKDOWN
    assert texts(result)[0].startswith(
        f"Summarize the document \u201cField Guide\u201d ({GUIDE}): "
    )


async def test_compare_embeds_both(peer: Peer) -> None:
    result = await get(peer, "compare_documents", {"uri_a": GUIDE, "uri_b": NOTES})
    assert [resource.uri for resource in resources(result)] == [GUIDE, NOTES]


async def test_answer_from_shelf_embeds_the_pages_that_matched(peer: Peer) -> None:
    result = await get(peer, "answer_from_shelf", {"question": "What is gefburn?"})
    pages = [resource.uri for resource in resources(result)]
    assert pages and all(uri.startswith(f"{PDF}?pages=") for uri in pages)
    assert all("gefburn" in resource.text for resource in resources(result))
    nothing = await get(
        peer, "answer_from_shelf", {"question": "What is gefburn?", "path_prefix": "guides/"}
    )
    assert resources(nothing) == [] and "found nothing" in texts(nothing)[0]


async def test_prompt_errors_are_32602_or_the_eras_not_found(peer: Peer) -> None:
    with pytest.raises(MCPError) as unknown:
        await peer.client.get_prompt("write_a_poem", {})
    assert unknown.value.error.code == -32602
    assert unknown.value.error.message.startswith("prompts/get: unknown prompt 'write_a_poem'")
    with pytest.raises(MCPError) as missing:
        await peer.client.get_prompt("compare_documents", {"uri_a": GUIDE})
    assert missing.value.error.code == -32602
    assert missing.value.error.message.startswith("compare_documents: argument uri_b is required")
    with pytest.raises(MCPError) as not_found:
        await peer.client.get_prompt("summarize_document", {"uri": "docshelf://shelf/nope.md"})
    assert not_found.value.error.code == NOT_FOUND[peer.era]
    # The session carries on.
    assert resources(await get(peer, "summarize_document", {"uri": NOTES}))


async def test_completes_document_uris_and_folders(peer: Peer) -> None:
    guides = await complete(peer, "summarize_document", "uri", "docshelf://shelf/guides/")
    assert (guides.values, guides.total, guides.has_more) == ([GUIDE], 1, False)
    papers = await complete(peer, "compare_documents", "uri_b", "docshelf://shelf/papers/pdf")
    assert papers.values == [PDF]
    folders = await complete(peer, "answer_from_shelf", "path_prefix", "pa")
    assert folders.values == ["page.html", "papers/"]
    assert (await complete(peer, "answer_from_shelf", "question", "wh")).values == []
    with pytest.raises(MCPError) as unknown:
        await complete(peer, "write_a_poem", "topic", "")
    assert unknown.value.error.code == -32602
