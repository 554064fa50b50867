"""Malformed JSON-RPC thrown at both transports: a spec error or a 4xx, never a 5xx or a crash.

Hypothesis builds messages with every field of the wrong type or missing (jsonrpc,
id, method, params and what is inside params: ``_meta``, cursors, URIs,
capabilities, listen filters), then mangles their bytes: deep nesting, large
strings within the 4 MiB limit, invalid UTF-8, lone surrogates, truncation,
random bytes. Each goes to a real ``docshelf serve`` (POST /mcp, with headers
that match, mismatch or are missing) and to a real ``docshelf stdio``; after
each, the server must still answer a valid request. One server process per
test, so the whole file runs in seconds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.json_text import nested
from tests.support.schema import validate
from tests.support.servers import LEGACY, MODERN, RawClient, RunningServer, modern_meta, serve
from tests.support.stdio import RawStdio, stdio_process

# JSON-RPC 2.0 and MCP error codes (2026-07-28 basic/index "Error Codes", HeaderMismatch,
# UnsupportedProtocolVersion; 2025-11-25 resource not found).
SPEC_CODES = {-32700, -32600, -32601, -32602, -32603, -32002, -32020, -32022}
EXAMPLES = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

METHODS = [
    "initialize",
    "ping",
    "server/discover",
    "resources/list",
    "resources/read",
    "resources/metadata",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "subscriptions/listen",
    "notifications/initialized",
    "notifications/cancelled",
    "tools/list",
    "tools/call",
    "completion/complete",
]
URIS = [
    "docshelf://shelf/notes.txt",
    "docshelf://shelf/guide.md",
    "docshelf://shelf/../x",
    "docshelf://shelf/guides/field-guide.md?section=field-guide",
    "docshelf://shelf/papers/pdflatex-4-pages.pdf?pages=2-9",
]
MISSING: Any = object()  # a field left out


# -- what to send ------------------------------------------------------------------------------

json_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_leaves,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
request_ids = st.integers() | st.text(max_size=10) | json_values
metas = json_values | st.fixed_dictionaries(
    {},
    optional={
        "io.modelcontextprotocol/protocolVersion": st.sampled_from([MODERN, LEGACY, "1999-01-01"])
        | json_values,
        "io.modelcontextprotocol/clientCapabilities": st.just({}) | json_values,
        "io.modelcontextprotocol/clientInfo": json_values,
    },
)
params = (
    st.just(MISSING)
    | json_values
    | st.fixed_dictionaries(
        {},
        optional={
            "_meta": metas | st.just(modern_meta()),
            "cursor": json_values,
            "uri": st.sampled_from(URIS) | json_values,
            "protocolVersion": st.sampled_from([LEGACY, MODERN]) | json_values,
            "capabilities": st.just({}) | json_values,
            "clientInfo": json_values,
            "notifications": json_values
            | st.fixed_dictionaries(
                {},
                optional={
                    "resourcesListChanged": json_values,
                    "resourceSubscriptions": st.lists(
                        st.sampled_from(URIS) | json_values, max_size=5
                    )
                    | json_values,
                },
            ),
            "requestId": request_ids,
            # tools/call and completion/complete
            "name": st.sampled_from(["search_documents", "read_document", "list_documents"])
            | json_values,
            "arguments": json_values
            | st.fixed_dictionaries(
                {},
                optional={
                    "query": json_values,
                    "uri": st.sampled_from(URIS) | json_values,
                    "limit": json_values,
                    "format": json_values,
                    # list_documents
                    "type": json_values,
                    "sort": json_values,
                    "cursor": json_values,
                    "modified_after": json_values,
                },
            ),
            "ref": json_values
            | st.just({"type": "ref/resource", "uri": "docshelf://shelf/{+path}{?pages,section}"}),
            "argument": json_values,
        },
    )
)


@st.composite
def messages(draw: st.DrawFn) -> Any:
    """A JSON-RPC-shaped value with any field wrong, or any JSON value at all."""
    if draw(st.integers(0, 9)) == 0:
        return draw(json_values)
    fields = {
        "jsonrpc": draw(
            st.just("2.0") | st.sampled_from(["1.0", 2.0, None, MISSING]) | json_values
        ),
        "id": draw(request_ids | st.just(MISSING)),
        "method": draw(
            st.sampled_from(METHODS) | st.text(max_size=20) | json_values | st.just(MISSING)
        ),
        "params": draw(params),
    }
    if draw(st.booleans()):
        fields[draw(st.sampled_from(["result", "error"]))] = draw(json_values)
    return {k: v for k, v in fields.items() if v is not MISSING}


@st.composite
def payloads(draw: st.DrawFn) -> tuple[bytes, Any]:
    """The bytes to send, and the message they started from."""
    message = draw(messages())
    text = json.dumps(message).encode()
    mangle = draw(st.integers(0, 7))
    if mangle == 1:  # deep nesting, inside a well-formed envelope
        depth = draw(st.sampled_from([63, 64, 65, 1_000, 5_000, 100_000]) | st.integers(1, 200))
        text = (
            b'{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"_meta":'
            + json.dumps(modern_meta()).encode()
            + b',"cursor":'
            + nested(depth, leaf="").encode()
            + b"}}"
        )
    elif mangle == 2:  # a large string, within the 4 MiB limit
        size = draw(st.integers(0, 1 << 20))
        padded = dict(message) if isinstance(message, dict) else {"value": message}
        padded["pad"] = "x" * size
        text = json.dumps(padded).encode()
    elif mangle == 3:  # invalid UTF-8 somewhere
        at = draw(st.integers(0, len(text)))
        text = (
            text[:at]
            + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"]))
            + text[at:]
        )
    elif mangle == 4:  # a lone surrogate, escaped as JSON allows
        text = text.replace(b'"2.0"', b'"2.0","x":"\\ud800"', 1).replace(
            b'"id": "', b'"id": "\\udfff', 1
        )
    elif mangle == 5:  # cut short
        text = text[: draw(st.integers(0, max(0, len(text) - 1)))]
    elif mangle == 6:  # not JSON at all
        text = draw(st.binary(max_size=200))
    return text, message


# -- what to accept ----------------------------------------------------------------------------


def check_message(message: Any) -> None:
    """A message the server sent: a schema-valid response or notification; errors use spec codes."""
    assert isinstance(message, dict), message
    if "method" in message:
        validate(MODERN, "JSONRPCNotification", message)
    elif "error" in message:
        validate(MODERN, "JSONRPCErrorResponse", message)
        assert message["error"]["code"] in SPEC_CODES, message
    else:
        era = MODERN if "resultType" in message.get("result", {}) else LEGACY
        validate(era, "JSONRPCResultResponse", message)


# -- Streamable HTTP -----------------------------------------------------------------------------


def small_shelf(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "notes.txt").write_text("Plain notes.\n")
    (root / "guide.md").write_text("# Guide\n\nText.\n")
    return root


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    base = tmp_path_factory.mktemp("fuzz-http")
    with serve(small_shelf(base / "shelf"), base / "data") as server:
        yield server


@pytest.fixture(scope="module")
def fuzz_client(fuzz_server: RunningServer) -> Iterator[tuple[RawClient, str]]:
    raw = RawClient(fuzz_server.url)
    raw.http = httpx.Client(timeout=30)
    yield raw, raw.initialize()
    raw.close()


# Visible ASCII: what an HTTP client will put in a header at all.
header_text = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=30)


@st.composite
def http_headers(draw: st.DrawFn, message: Any, session: str) -> dict[str, str]:
    method = message.get("method") if isinstance(message, dict) else None
    headers = {
        "Content-Type": draw(st.just("application/json") | header_text),
        "Accept": draw(st.just("application/json, text/event-stream") | header_text),
    }
    choices = {
        "MCP-Protocol-Version": st.sampled_from([MODERN, LEGACY]) | header_text,
        "Mcp-Method": (
            st.just(method)
            if isinstance(method, str) and method and all("!" <= c <= "~" for c in method)
            else st.nothing()
        )
        | header_text,
        "Mcp-Session-Id": st.just(session) | header_text,
        "Mcp-Name": st.sampled_from(URIS) | header_text,
    }
    for name, values in choices.items():
        if draw(st.booleans()):
            headers[name] = draw(values)
    return headers


@EXAMPLES
@given(data=st.data())
def test_http_answers_malformed_json_rpc_with_spec_errors_and_keeps_serving(
    fuzz_client: tuple[RawClient, str], data: st.DataObject
) -> None:
    raw, session = fuzz_client
    body, message = data.draw(payloads(), label="payload")
    headers = data.draw(http_headers(message, session), label="headers")
    with raw.http.stream("POST", raw.url, content=body, headers=headers) as response:
        assert response.status_code < 500, (response.status_code, response.read())
        kind = response.headers.get("content-type", "")
        if kind.startswith("text/event-stream"):
            assert response.status_code == 200
            first = next(line for line in response.iter_lines() if line.startswith("data:"))
            check_message(json.loads(first[5:]))
        else:
            response.read()
            if response.status_code == 202:
                assert response.content == b""
            elif kind.startswith("application/json") and response.content:
                check_message(response.json())
    alive = raw.modern("server/discover")
    assert alive.status_code == 200, alive.text


# -- stdio ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fuzz_stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawStdio]:
    base = tmp_path_factory.mktemp("fuzz-stdio")
    shelf, data = small_shelf(base / "shelf"), base / "data"
    with stdio_process(shelf, data) as process:
        yield process


@EXAMPLES
@given(payload=payloads())
def test_stdio_answers_malformed_json_rpc_with_spec_errors_and_keeps_serving(
    fuzz_stdio: RawStdio, payload: tuple[bytes, Any]
) -> None:
    body, _message = payload
    fuzz_stdio.send_line(body.replace(b"\n", b" "))
    sentinel = f"alive-{fuzz_stdio.next_id()}"
    fuzz_stdio.send(
        {
            "jsonrpc": "2.0",
            "id": sentinel,
            "method": "server/discover",
            "params": {"_meta": modern_meta()},
        }
    )
    # Requests run concurrently: whatever arrives before the sentinel's answer (this payload's
    # answer, or a slower one from before) must be a valid message.
    while True:
        message = fuzz_stdio.receive(timeout=30)
        check_message(message)
        if message.get("id") == sentinel:
            assert "result" in message, message
            break
    assert fuzz_stdio.process.poll() is None, fuzz_stdio.log()[-4000:]
