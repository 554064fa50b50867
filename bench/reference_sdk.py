"""The reference server of ``python -m bench serve``: a folder served by the official SDK.

What issue 13 measured docshelf against: an ``MCPServer`` of the official Python
SDK (``mcp``) with one ``FileResource`` per file, run the way the SDK runs itself
(``run("streamable-http")``: default uvicorn settings and log level, SSE
responses, 2025-11-25 sessions and 2026-07-28 requests on one endpoint). Nothing
here is tuned: it is the server a developer gets by following the SDK's
documentation, and the comparison is with that, not with the best the SDK could do.

URIs are ``bench://ref/<path>`` (``bench.shelf_files``); textual files are served as
text decoded from UTF-8, as docshelf returns a Markdown original, so a client reads
the same bytes from both servers.

Run as its own process from the checkout (it is not part of the product)::

    python -m bench.reference_sdk --root DIR --port PORT
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import FileResource

from bench.shelf_files import URI_PREFIX, served_files


def build_server(root: Path) -> MCPServer:
    """One ``FileResource`` per regular file under ``root``, as the SDK's docs show."""
    server = MCPServer("bench-reference")
    for file in served_files(root):
        name = file.uri.removeprefix(URI_PREFIX)
        server.add_resource(
            FileResource(uri=file.uri, name=name, path=file.path, mime_type=file.mime_type)
        )
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True, help="the folder to serve")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    build_server(args.root).run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
