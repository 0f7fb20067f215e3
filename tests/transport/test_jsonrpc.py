"""The JSON-RPC connection on its own, over in-memory byte streams."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from acp_adapters.transport import Connection, ConnectionClosed
from acp_adapters.transport.jsonrpc import INBOX_MESSAGES
from byte_streams import Chunks, Sink

pytestmark = pytest.mark.anyio


def note(index: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "method": "n", "params": {"i": index}}).encode() + b"\n"


@pytest.mark.parametrize("count", [1, INBOX_MESSAGES - 1, INBOX_MESSAGES, 3 * INBOX_MESSAGES + 7])
@pytest.mark.parametrize("chunking", ["one chunk", "a chunk a line"])
async def test_every_notification_is_handled_in_order_up_to_the_end(
    count: int, chunking: str
) -> None:
    lines = [note(i) for i in range(count)]
    chunks = [b"".join(lines)] if chunking == "one chunk" else lines
    seen: list[int] = []
    drained: list[int] = []

    async def on_notification(method: str, params: Any) -> None:
        seen.append(params["i"])
        await anyio.lowlevel.checkpoint()  # the reader may go on meanwhile, and reach the end

    async def on_request(method: str, params: Any, request_id: Any) -> Any:
        raise AssertionError("no request was sent")

    connection = Connection(
        Chunks(chunks),
        Sink(),
        on_request=on_request,
        on_notification=on_notification,
        on_drained=lambda: drained.append(len(seen)),
    )
    async with anyio.create_task_group() as task_group:
        await connection.serve(task_group)  # ends, without error, when the output ends
    assert seen == list(range(count))
    assert drained
    assert drained[-1] == count  # a last catch-up once everything was handled


async def test_a_request_waiting_when_the_output_ends_fails_with_the_closing_error() -> None:
    connection = Connection(
        Chunks([note(0)]),
        Sink(),
        on_request=lambda *args: None,  # type: ignore[arg-type,return-value]
        on_notification=lambda *args: anyio.lowlevel.checkpoint(),
    )
    failure: list[BaseException] = []

    async def ask() -> None:
        try:
            await connection.request("session/prompt", {})
        except ConnectionClosed as error:
            failure.append(error)

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(ask)
        await connection.serve(task_group)
        connection.fail_pending(ConnectionClosed("gone", 3, "the end of stderr"))
    (error,) = failure
    assert isinstance(error, ConnectionClosed)
    assert error.exit_status == 3
