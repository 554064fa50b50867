"""The official Python SDK client lists and reads the shelf: HTTP in both eras, and stdio."""

from __future__ import annotations

import base64
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.support.schema import validate
from tests.support.sdk import RichReadResult, http_client, read_metadata, stdio_client
from tests.support.servers import LEGACY, MODERN, NOT_FOUND, RunningServer

pytestmark = pytest.mark.anyio

ERAS = [MODERN, LEGACY]


async def list_all(client: Client) -> list[types.Resource]:
    resources: list[types.Resource] = []
    cursor = None
    while True:
        page = await client.list_resources(cursor=cursor)
        resources += page.resources
        cursor = page.next_cursor
        if cursor is None:
            return resources


async def rich_read(client: Client, uri: str) -> RichReadResult:
    request = types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=uri))
    return await client.session.send_request(request, RichReadResult)


def wire(model: types.Result | types.Resource) -> dict:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


@pytest.mark.parametrize("era", ERAS)
async def test_sdk_lists_every_document_over_http(shelf_server: RunningServer, era: str) -> None:
    async with http_client(shelf_server.url, era) as client:
        resources = await list_all(client)
    names = {r.name for r in resources}
    assert {"notes.txt", "data.json", "table.csv", "page.html", "guides/field-guide.md"} <= names
    assert "papers/libreoffice-writer-password.pdf" in names  # encrypted: still listed
    for resource in resources:
        validate(era, "Resource", wire(resource))
        assert resource.annotations is not None and resource.annotations.last_modified


@pytest.mark.parametrize("era", ERAS)
async def test_sdk_reads_text_and_pdf_with_sep_metadata(
    shelf_server: RunningServer, era: str
) -> None:
    async with http_client(shelf_server.url, era) as client:
        text = await client.read_resource("docshelf://shelf/notes.txt")
        assert text.contents[0].text == "Plain notes.\nSecond line.\n"
        pdf = await rich_read(client, "docshelf://shelf/papers/pdflatex-4-pages.pdf")
    validate(era, "ReadResourceResult", wire(pdf))
    original = pdf.contents[0]
    assert original.mime_type == "application/pdf"
    assert original.blob is not None
    assert base64.b64decode(original.blob)[:5] == b"%PDF-"
    for entry in pdf.contents:
        assert entry.uri == "docshelf://shelf/papers/pdflatex-4-pages.pdf"
        assert entry.name and entry.title and entry.size is not None
        data = (
            base64.b64decode(entry.blob) if entry.blob is not None else (entry.text or "").encode()
        )
        assert entry.size == len(data)


@pytest.mark.parametrize("era", ERAS)
async def test_sdk_resources_metadata_matches_read(shelf_server: RunningServer, era: str) -> None:
    uri = "docshelf://shelf/guides/field-guide.md"
    async with http_client(shelf_server.url, era) as client:
        # The read first: it builds the formats not built yet (the rendered PDF), which have
        # no size until then (DESIGN D11).
        read = await rich_read(client, uri)
        metadata = await read_metadata(client, uri)
    assert [m.mime_type for m in metadata.metadata] == [c.mime_type for c in read.contents]
    assert [m.size for m in metadata.metadata] == [c.size for c in read.contents]
    assert metadata.metadata[0].title == "Field Guide"


@pytest.mark.parametrize("era", ERAS)
async def test_sdk_sees_the_era_specific_not_found_code(
    shelf_server: RunningServer, era: str
) -> None:
    async with http_client(shelf_server.url, era) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource("docshelf://shelf/nope.md")
        assert caught.value.error.code == NOT_FOUND[era]
        templates = await client.list_resource_templates()
    assert (
        templates.resource_templates[0].uri_template == "docshelf://shelf/{+path}{?pages,section}"
    )


async def test_sdk_auto_mode_discovers_the_modern_era(shelf_server: RunningServer) -> None:
    async with Client(shelf_server.url, cache=None) as client:
        assert client.server_info is not None and client.server_info.name == "docshelf"
        assert await list_all(client)


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy", "auto"])
async def test_sdk_over_stdio_lists_reads_and_gets_metadata(
    indexed_shelf: tuple[Path, Path], mode: str
) -> None:
    shelf, data = indexed_shelf
    with anyio.fail_after(60):
        async with stdio_client(str(shelf), str(data), mode=mode) as client:
            resources = await list_all(client)
            assert "notes.txt" in {r.name for r in resources}
            read = await client.read_resource("docshelf://shelf/data.json")
            metadata = await read_metadata(client, "docshelf://shelf/data.json")
            with pytest.raises(MCPError) as caught:
                await client.read_resource("docshelf://shelf/missing.txt")
    assert read.contents[0].mime_type == "application/json"
    assert metadata.metadata[0].size == (shelf / "data.json").stat().st_size
    assert caught.value.error.code == (-32002 if mode == "legacy" else -32602)
