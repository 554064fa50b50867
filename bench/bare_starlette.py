"""Floor 2 of ``python -m bench serve``: a bare Starlette endpoint returning the same bytes.

How fast the HTTP stack alone goes: one Starlette route under uvicorn that parses
the JSON-RPC body and answers with a read result encoded once at start (the same
``contents`` entry, ``uri``/``mimeType``/``text``, as the SDK reference returns).
It also answers ``initialize`` with a session id, the ``initialized`` notification
with 202 and ``DELETE`` with 204, so the benchmark's load generator talks to it
exactly as to the MCP servers. Nothing is looked up but a dict; no MCP checks.

uvicorn runs with uvloop and httptools (what docshelf runs on; both are its
dependencies), access log off: the cheapest HTTP this Python has.

    python -m bench.bare_starlette --root DIR --port PORT
"""

from __future__ import annotations

import argparse
import json
import uuid
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bench.shelf_files import served_files

INITIALIZE_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"resources": {}},
    "serverInfo": {"name": "bench-bare", "version": "1.0"},
}


def _encode(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def read_results(root: Path) -> dict[str, bytes]:
    """Per URI, its ``resources/read`` result as JSON bytes."""
    results = {}
    for file in served_files(root):
        entry = {"uri": file.uri, "mimeType": file.mime_type, "text": file.path.read_text()}
        results[file.uri] = _encode({"contents": [entry]})
    return results


def build_app(root: Path) -> Starlette:
    results = read_results(root)
    initialized = _encode(INITIALIZE_RESULT)

    async def mcp(request: Request) -> Response:
        if request.method == "DELETE":
            return Response(status_code=204)
        message = json.loads(await request.body())
        if "id" not in message:
            return Response(status_code=202)
        headers = {}
        if message["method"] == "initialize":
            result = initialized
            headers["Mcp-Session-Id"] = uuid.uuid4().hex
        else:
            result = results[message["params"]["uri"]]
        body = b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (_encode(message["id"]), result)
        return Response(body, media_type="application/json", headers=headers)

    return Starlette(routes=[Route("/mcp", mcp, methods=["POST", "DELETE"])])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True, help="the folder to serve")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    uvicorn.run(
        build_app(args.root),
        host="127.0.0.1",
        port=args.port,
        loop="auto",
        http="auto",
        access_log=False,
        log_level="warning",
    )


if __name__ == "__main__":
    main()
