"""The official Python SDK client (``mcp``) as our peer, plus the SEP's custom method."""

from __future__ import annotations

from typing import Any, Literal

import anyio
import mcp_types as types
from mcp import Client
from mcp.client import ClientExtension, advertise
from mcp.client.stdio import StdioServerParameters
from pydantic import ConfigDict, TypeAdapter

from tests.support import sep2093
from tests.support.servers import LEGACY, child_env, docshelf_command


class MetadataParams(types.RequestParams):
    uri: str


class MetadataRequest(types.Request[MetadataParams, Literal["resources/metadata"]]):
    """SEP "Resource Contents Metadata" §2: ``resources/metadata``."""

    method: Literal["resources/metadata"] = "resources/metadata"
    params: MetadataParams


class FolderListParams(types.PaginatedRequestParams):
    uri: str


class FolderListRequest(types.Request[FolderListParams, Literal["resources/list"]]):
    """SEP-2093 §4: ``resources/list`` scoped to the children of ``uri``."""

    method: Literal["resources/list"] = "resources/list"
    params: FolderListParams


class MetadataResult(types.Result):
    metadata: list[types.Resource]


class RichContents(types.Resource):
    """A contents entry as the SEP defines it: a full Resource plus ``text`` or ``blob``."""

    model_config = ConfigDict(extra="allow")
    text: str | None = None
    blob: str | None = None


class RichReadResult(types.Result):
    """``resources/read`` parsed keeping the SEP fields the SDK's own model drops."""

    model_config = ConfigDict(extra="allow")
    contents: list[RichContents]


async def next_event(subscription: Any, kind: type, timeout: float) -> object:
    """The next event of ``kind`` a ``Client.listen`` subscription yields (others are
    skipped); fails after ``timeout`` seconds, or if the subscription ends first."""
    with anyio.fail_after(timeout):
        async for event in subscription:
            if isinstance(event, kind):
                return event
    raise AssertionError("subscription ended")


async def read_metadata(client: Client, uri: str) -> MetadataResult:
    return await client.session.send_request(
        MetadataRequest(params=MetadataParams(uri=uri)), MetadataResult
    )


# A result exactly as the server sent it (after the SDK's own checks), for schema validation
# and byte-for-byte comparison.
RAW_RESULT: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])

CONTENT_NEGOTIATION = "io.modelcontextprotocol/content-negotiation"


async def raw_result(client: Client, request: types.Request[Any, Any]) -> dict[str, Any]:
    """Send ``request`` through the SDK and return its result as a plain JSON object."""
    return await client.session.send_request(request, RAW_RESULT)


async def raw_read(client: Client, uri: str) -> dict[str, Any]:
    """``resources/read`` with every field the server sent, SEP fields included."""
    request = types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=uri))
    return await raw_result(client, request)


async def raw_metadata(client: Client, uri: str) -> dict[str, Any]:
    """``resources/metadata`` (SEP "Resource Contents Metadata" §2) as a plain JSON object."""
    return await raw_result(client, MetadataRequest(params=MetadataParams(uri=uri)))


async def raw_folder_list(client: Client, uri: str, cursor: str | None = None) -> dict[str, Any]:
    """``resources/list {uri}`` (SEP-2093 §4) as a plain JSON object."""
    params = FolderListParams(uri=uri, cursor=cursor)
    return await raw_result(client, FolderListRequest(params=params))


def folders_extension() -> ClientExtension:
    """docshelf's SEP-2093 opt-in (``dev.docshelf/sep-2093``, empty settings) as an SDK
    extension ad: ``initialize`` capabilities in 2025-11-25, every request's ``_meta`` in
    2026-07-28."""
    return advertise(sep2093.EXTENSION, {})


def content_negotiation(features: list[Any], version: Any = "1.0") -> ClientExtension:
    """The content negotiation SEP's client settings, ``{"version", "features"}``, as an SDK
    extension ad (``initialize`` capabilities in 2025-11-25, every request's ``_meta`` in
    2026-07-28). ``features`` goes on the wire as given, malformed entries included."""
    return advertise(CONTENT_NEGOTIATION, {"version": version, "features": features})


def sdk_mode(era: str) -> str:
    """The SDK ``Client`` mode that speaks ``era``: its 2025-11-25 mode is called "legacy"."""
    return "legacy" if era == LEGACY else era


def http_client(url: str, era: str, **kwargs: Any) -> Client:
    return Client(url, mode=sdk_mode(era), cache=None, **kwargs)


def stdio_client(
    shelf: str,
    data_dir: str,
    mode: str = "auto",
    *,
    env: dict[str, str] | None = None,
    **kwargs: Any,
) -> Client:
    """The SDK client over ``docshelf stdio``; ``env``: ``DOCSHELF_*`` settings for it."""
    command = docshelf_command("stdio", "--root", shelf, "--data-dir", data_dir)
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=child_env(**(env or {}))
    )
    return Client(params, mode=mode, cache=None, **kwargs)


def roots_client(data_dir: str, *args: str, **kwargs: Any) -> Client:
    """The SDK client, 2025-11-25 (the era of roots), over ``docshelf stdio`` started with no
    shelf: the roots its ``list_roots_callback`` gives are the shelves. ``args``: more of
    the command line (``--root DIR`` gives a shelf after all)."""
    command = docshelf_command("stdio", "--data-dir", data_dir, *args)
    params = StdioServerParameters(command=command[0], args=command[1:], env=child_env())
    return Client(params, mode="legacy", cache=None, **kwargs)


def as_a_desktop_client(entry: dict[str, Any]) -> Client:
    """A client that starts ``entry`` (a configuration's ``command`` and ``args``) the way
    a desktop client does: a bare environment, another working directory."""
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env={"PATH": "/usr/bin:/bin"}, cwd="/"
    )
    return Client(params, mode="2026-07-28", cache=None)


async def names_once_listed(client: Client, name: str) -> set[str]:
    """The listed names once ``name`` is among them (indexing runs in the background)."""
    names: set[str] = set()
    while name not in names:
        names = {r.name for r in (await client.list_resources()).resources}
        await anyio.sleep(0.2)
    return names
