"""A hostile agent at the JSON-RPC layer: ids JSON-RPC does not allow, NaN, lines that cost
gigabytes to parse, floods of requests. The connection answers or drops each, and goes on."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from acp_adapters import _json
from acp_adapters.transport import Connection, Problem
from acp_adapters.transport.jsonrpc import DEFAULT_MAX_ELEMENTS, DEFAULT_MAX_PENDING_REQUESTS
from byte_streams import Chunks, Sink

pytestmark = pytest.mark.anyio

Handler = Callable[[str, Any, Any], Awaitable[Any]]


async def echo(method: str, params: Any, request_id: Any) -> Any:
    return {"method": method, "id": request_id}


async def ignore(method: str, params: Any) -> None:
    pass


async def serve(
    chunks: list[bytes],
    on_request: Handler = echo,
    *,
    notes: list[Any] | None = None,
    **options: Any,
) -> tuple[list[Any], list[Problem]]:
    """Serve the agent's ``chunks`` to their end; what the client answered, and the problems."""
    sink = Sink()
    problems: list[Problem] = []

    async def on_notification(method: str, params: Any) -> None:
        if notes is not None:
            notes.append((method, params))

    connection = Connection(
        Chunks(chunks),
        sink,
        on_request=on_request,
        on_notification=on_notification,
        on_problem=problems.append,
        **options,
    )
    async with anyio.create_task_group() as task_group:
        await connection.serve(task_group)
    return sink.messages(), problems


def line(text: str) -> bytes:
    return text.encode() + b"\n"


# --- ids ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "request_id", ["NaN", "Infinity", "-Infinity", "1e400", "1.5", "1.0", '{"a":1}', "[1]", "true"]
)
async def test_a_request_with_an_id_json_rpc_does_not_allow_is_refused_and_not_handled(
    request_id: str,
) -> None:
    handled: list[Any] = []

    async def on_request(method: str, params: Any, rid: Any) -> Any:
        handled.append(rid)
        return {}

    sent = [line(f'{{"jsonrpc":"2.0","id":{request_id},"method":"fs/read_text_file"}}')]
    answers, problems = await serve(
        [*sent, line('{"jsonrpc":"2.0","id":2,"method":"m"}')], on_request
    )
    # Refusals go out from the writer task: the two answers may come in either order.
    refused, after = sorted(answers, key=lambda answer: answer["id"] is not None)
    assert refused["id"] is None
    assert refused["error"]["code"] == -32600
    assert "result" not in refused
    assert handled == [2]  # the next request is handled as ever
    assert after == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert problems


@pytest.mark.parametrize("request_id", ['"x"', "7", "-3", "0", "null", "12345678901234567890"])
async def test_strings_integers_and_null_are_ids_echoed_as_sent(request_id: str) -> None:
    answers, problems = await serve([line(f'{{"jsonrpc":"2.0","id":{request_id},"method":"m"}}')])
    (answer,) = answers
    expected = json.loads(request_id)
    assert answer == {"jsonrpc": "2.0", "id": expected, "result": {"method": "m", "id": expected}}
    assert type(answer["id"]) is type(expected)
    assert problems == []


async def test_nan_inside_a_request_refuses_it_with_its_own_id() -> None:
    sent = line('{"jsonrpc":"2.0","id":5,"method":"fs/write_text_file","params":{"x":NaN}}')
    answers, _ = await serve([sent])
    assert answers == [
        {
            "jsonrpc": "2.0",
            "id": 5,
            "error": {"code": -32600, "message": "invalid request: NaN and Infinity are not JSON"},
        }
    ]


async def test_nan_in_a_notification_is_not_json_and_never_reaches_the_handler() -> None:
    notes: list[Any] = []
    sent = [
        line('{"jsonrpc":"2.0","method":"session/update","params":{"x":NaN}}'),
        line('{"jsonrpc":"2.0","method":"session/update","params":{"x":1e999}}'),
        line('{"jsonrpc":"2.0","method":"session/update","params":{"x":1.5}}'),
    ]
    answers, problems = await serve(sent, notes=notes)
    assert notes == [("session/update", {"x": 1.5})]
    assert [p.kind for p in problems] == ["not_json", "not_json"]
    assert answers == []


def test_the_json_writer_never_writes_nan_or_infinity_and_the_reader_refuses_them() -> None:
    for number in (float("nan"), float("inf"), float("-inf")):
        with pytest.raises(ValueError, match="not JSON compliant"):
            _json.dumps({"x": [number]})
    for text in ("NaN", "[Infinity]", '{"a": -Infinity}', "1e400", "-1e400"):
        with pytest.raises(_json.NotFiniteError):
            _json.loads(text)
        with pytest.raises(_json.NotFiniteError):
            _json.loads(text.encode())
    assert _json.loads("[1.5, 1e300, -0.0]") == [1.5, 1e300, -0.0]


async def test_an_answer_a_handler_cannot_write_as_json_is_an_internal_error() -> None:
    async def on_request(method: str, params: Any, request_id: Any) -> Any:
        return {"value": float("nan")}

    answers, problems = await serve([line('{"jsonrpc":"2.0","id":1,"method":"m"}')], on_request)
    (answer,) = answers
    assert answer["id"] == 1
    assert answer["error"]["code"] == -32603
    assert [p.kind for p in problems] == ["handler_error"]


async def test_a_request_with_nan_in_its_params_is_not_sent() -> None:
    sink = Sink()
    connection = Connection(Chunks([]), sink, on_request=echo, on_notification=ignore)
    async with anyio.create_task_group() as task_group:
        with pytest.raises(ValueError, match="not JSON compliant"):
            await connection.request("session/prompt", {"x": float("nan")})
        with pytest.raises(ValueError, match="not JSON compliant"):
            await connection.notify("session/cancel", {"x": float("inf")})
        await connection.serve(task_group)
    assert sink.sent == b""


async def test_a_batch_answers_every_request_also_one_with_a_method_that_is_no_string() -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": 2, "method": "m"},
        {"jsonrpc": "2.0", "id": 2.5, "method": "m"},
    ]
    answers, _ = await serve([line(json.dumps(batch))])
    (together,) = answers  # one array, in the order the answers were ready
    by_id = {answer["id"]: answer for answer in together}
    assert sorted(by_id, key=str) == [2, None]
    assert "result" in by_id[2]
    assert by_id[None]["error"]["code"] == -32600


# --- big lines ------------------------------------------------------------------------------


def bomb(elements: int) -> bytes:
    """A notification whose params are ``elements`` empty objects: 3 bytes each."""
    items = b"[" + b"{}," * (elements - 1) + b"{}]"
    return b'{"jsonrpc":"2.0","method":"session/update","params":' + items + b"}\n"


async def test_a_line_of_too_many_values_is_dropped_and_reported_and_the_session_goes_on() -> None:
    notes: list[Any] = []
    after = line('{"jsonrpc":"2.0","method":"after","params":{}}')
    answers, problems = await serve([bomb(DEFAULT_MAX_ELEMENTS + 10) + after], notes=notes)
    assert notes == [("after", {})]
    assert [p.kind for p in problems] == ["too_many_elements"]
    assert answers == []


async def test_the_bound_is_configurable_and_counts_values_not_bytes() -> None:
    notes: list[Any] = []
    big_string = json.dumps({"jsonrpc": "2.0", "method": "write", "params": {"c": "x" * 5_000_000}})
    escapes = json.dumps({"jsonrpc": "2.0", "method": "escapes", "params": ['\\"{[,' * 200_000]})
    # Counted: the arrays and objects, the strings, and the items after a comma.
    few = json.dumps({"jsonrpc": "2.0", "method": "few", "params": [1] * 990})
    many = json.dumps({"jsonrpc": "2.0", "method": "many", "params": [{}] * 600})
    chunks = [line(text) for text in (big_string, escapes, few, many)]
    _, problems = await serve(chunks, notes=notes, max_elements=1000)
    assert [method for method, _ in notes] == ["write", "escapes", "few"]
    assert [p.kind for p in problems] == ["too_many_elements"]


async def test_a_file_of_30_mib_in_one_write_is_one_value() -> None:
    content = 'line of text, with "quotes", [brackets] and {braces}\n' * 600_000
    request = {"jsonrpc": "2.0", "id": 1, "method": "fs/write_text_file", "params": {"c": content}}
    seen: list[int] = []

    async def on_request(method: str, params: Any, request_id: Any) -> Any:
        seen.append(len(params["c"]))
        return {}

    _, problems = await serve([line(json.dumps(request))], on_request)
    assert seen == [len(content)]
    assert len(content) > 30 * 2**20
    assert problems == []


async def test_counting_a_long_line_lets_the_other_tasks_run() -> None:
    """The count goes in steps, with the event loop between them: other sessions go on."""
    ticks = 0
    counting = anyio.Event()
    done = anyio.Event()

    async def ticker() -> None:
        nonlocal ticks
        await counting.wait()
        while not done.is_set():
            ticks += 1
            await anyio.lowlevel.checkpoint()

    class Start(Chunks):
        async def receive(self, max_bytes: int = 65536) -> bytes:
            if self.chunks:
                counting.set()
            return await super().receive(max_bytes)

    connection = Connection(
        Start([bomb(DEFAULT_MAX_ELEMENTS * 2)]),  # one chunk: no read in between
        Sink(),
        on_request=echo,
        on_notification=ignore,
    )
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(ticker)
        await connection.serve(task_group)
        done.set()
    assert ticks >= DEFAULT_MAX_ELEMENTS // _json.COUNT_STEP


@pytest.mark.parametrize(
    "text",
    [
        b'"' * 1_000_000,  # strings side by side: each is a value
        b'"' + b'\\"' * 1_000_000,  # a string that never ends
        b'"' + b"\\" * 1_000_001 + b'"',
        b"[" * 10 + b"1," * 1_000_000,
    ],
    ids=["quotes", "unterminated", "backslashes", "numbers"],
)
def test_the_count_stops_past_the_limit_whatever_the_text(text: bytes) -> None:
    counted = list(_json.count_elements(text, 1000))
    assert len(counted) == 1  # no step report: it stopped before the first
    assert counted[-1] <= 1001


# --- floods of requests ---------------------------------------------------------------------


async def test_requests_past_the_limit_are_refused_at_once_without_a_task() -> None:
    release = anyio.Event()
    handled: list[Any] = []

    async def on_request(method: str, params: Any, request_id: Any) -> Any:
        handled.append(request_id)
        await release.wait()
        return {"ok": request_id}

    total = DEFAULT_MAX_PENDING_REQUESTS + 50
    flood = b"".join(
        line(json.dumps({"jsonrpc": "2.0", "id": i, "method": "session/request_permission"}))
        for i in range(total)
    )
    sink = Sink()
    connection = Connection(Chunks([flood]), sink, on_request=on_request, on_notification=ignore)
    async with anyio.create_task_group() as task_group:
        await connection.serve(task_group)
        await anyio.wait_all_tasks_blocked()
        refused = sink.messages()
        release.set()
    assert len(handled) == DEFAULT_MAX_PENDING_REQUESTS
    assert [m["id"] for m in refused] == list(range(DEFAULT_MAX_PENDING_REQUESTS, total))
    assert refused[0]["error"] == {
        "code": -32000,
        "message": f"too many requests in progress (limit {DEFAULT_MAX_PENDING_REQUESTS})",
    }
    answered = sink.messages()[len(refused) :]
    assert sorted(m["id"] for m in answered) == list(range(DEFAULT_MAX_PENDING_REQUESTS))


async def test_a_request_after_the_flood_drained_is_handled_again() -> None:
    gates: list[anyio.Event] = []

    async def on_request(method: str, params: Any, request_id: Any) -> Any:
        if request_id == "first":
            gate = anyio.Event()
            gates.append(gate)
            await gate.wait()
        return {}

    class Paced(Chunks):
        """The second request comes only once the first was answered."""

        async def receive(self, max_bytes: int = 65536) -> bytes:
            if len(self.chunks) == 1:
                while not gates:
                    await anyio.sleep(0.001)
                gates[0].set()
                while b'"first"' not in sink.sent:
                    await anyio.sleep(0.001)
            return await super().receive(max_bytes)

    first = line('{"jsonrpc":"2.0","id":"first","method":"m"}')
    refused = line('{"jsonrpc":"2.0","id":"refused","method":"m"}')
    again = line('{"jsonrpc":"2.0","id":"again","method":"m"}')
    sink = Sink()
    connection = Connection(
        Paced([first + refused, again]),
        sink,
        on_request=on_request,
        on_notification=ignore,
        max_pending_requests=1,
    )
    async with anyio.create_task_group() as task_group:
        await connection.serve(task_group)
    outcome = {m["id"]: "result" in m for m in sink.messages()}
    assert outcome == {"refused": False, "first": True, "again": True}
