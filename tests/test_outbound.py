"""Requests the server sends its client, matched to their answers by id (app.mcp.outbound).

2025-11-25 basic "Requests" and "Responses": ids the sender has not used before in the
session, answered by a result or an error carrying the same id. Run on a real event
loop; what the server side writes is kept in order and checked against the schema.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from docshelf.app.mcp.outbound import ClientError, ClientRequests, NoAnswer
from tests.support.schema import validate
from tests.support.servers import LEGACY

pytestmark = pytest.mark.anyio

WAIT = 30  # seconds: never reached, the answers come at once


class Wire:
    """What the server side writes, kept in order."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def __call__(self, message: dict[str, Any]) -> None:
        self.sent.append(message)


async def test_each_request_is_matched_to_its_own_answer() -> None:
    wire = Wire()
    requests = ClientRequests(wire)
    results: dict[int, dict[str, Any]] = {}

    async def ask(n: int) -> None:
        results[n] = await requests.request("roots/list", None, timeout_s=WAIT)

    async with anyio.create_task_group() as tasks:
        for n in range(3):
            tasks.start_soon(ask, n)
        while len(wire.sent) < 3:
            await anyio.sleep(0)
        for message in reversed(wire.sent):
            validate(LEGACY, "ListRootsRequest", message)
            answer = {"roots": [{"uri": f"file:///{message['id']}"}]}
            assert requests.settle({"jsonrpc": "2.0", "id": message["id"], "result": answer})
    ids = [m["id"] for m in wire.sent]
    assert len(set(ids)) == 3 and all(i.startswith("docshelf-") for i in ids)
    assert [results[n]["roots"][0]["uri"] for n in range(3)] == [f"file:///{i}" for i in ids]
    assert requests.waiting == 0


async def test_an_unanswered_request_ends_in_no_answer_and_its_late_answer_is_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    wire = Wire()
    requests = ClientRequests(wire)
    with pytest.raises(NoAnswer, match=r"the client did not answer roots/list within 0\.05 s"):
        await requests.request("roots/list", None, timeout_s=0.05)
    assert requests.waiting == 0
    with caplog.at_level(logging.WARNING):
        late = {"jsonrpc": "2.0", "id": wire.sent[0]["id"], "result": {"roots": []}}
        assert not requests.settle(late)
    assert "which no request of ours is waiting for" in caplog.text


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (
            {"error": {"code": -32601, "message": "Method not found"}},
            "the client answered roots/list with error -32601: Method not found",
        ),
        (
            {"error": "broken"},
            "the client answered roots/list with an error that is not an object: 'broken'",
        ),
        (
            {"result": [1]},
            "the client answered roots/list with a result that is not an object: [1]",
        ),
    ],
    ids=["error", "error-not-an-object", "result-not-an-object"],
)
async def test_an_error_answer_is_a_client_error(answer: dict[str, Any], message: str) -> None:
    wire = Wire()
    requests = ClientRequests(wire)
    caught: list[ClientError] = []

    async def ask() -> None:
        try:
            await requests.request("roots/list", None, timeout_s=WAIT)
        except ClientError as exc:
            caught.append(exc)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(ask)
        while not wire.sent:
            await anyio.sleep(0)
        requests.settle({"jsonrpc": "2.0", "id": wire.sent[0]["id"], **answer})
    assert [str(exc) for exc in caught] == [message]
