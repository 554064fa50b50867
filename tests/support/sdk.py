"""The official Python SDK client (``mcp``) as our peer, plus the SEP's custom method."""

from __future__ import annotations

from typing import Any, Literal

import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from pydantic import ConfigDict

from tests.support.servers import child_env, docshelf_command


class MetadataParams(types.RequestParams):
    uri: str


class MetadataRequest(types.Request[MetadataParams, Literal["resources/metadata"]]):
    """SEP "Resource Contents Metadata" §2: ``resources/metadata``."""

    method: Literal["resources/metadata"] = "resources/metadata"
    params: MetadataParams


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


async def read_metadata(client: Client, uri: str) -> MetadataResult:
    return await client.session.send_request(
        MetadataRequest(params=MetadataParams(uri=uri)), MetadataResult
    )


def http_client(url: str, era: str, **kwargs: Any) -> Client:
    mode = "legacy" if era == "2025-11-25" else era
    return Client(url, mode=mode, cache=None, **kwargs)


def stdio_client(shelf: str, data_dir: str, mode: str = "auto", **kwargs: Any) -> Client:
    command = docshelf_command("stdio", "--root", shelf, "--data-dir", data_dir)
    params = StdioServerParameters(command=command[0], args=command[1:], env=child_env())
    return Client(params, mode=mode, cache=None, **kwargs)
