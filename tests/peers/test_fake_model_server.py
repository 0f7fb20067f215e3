"""Wire-level checks of the fake model server, using only the standard library as a client."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from .fake_model_server import (
    DEFAULT_STEP,
    FakeModelServer,
    Step,
    StepSource,
    Text,
    ToolCall,
    ToolCalls,
)

ARGS = {"command": "ls -la", "nested": {"n": [1, 2, 3]}, "unicode": 'héllo "quoted"'}
TOOL_STEP = ToolCalls([ToolCall("Bash", ARGS), ToolCall("Read", {"path": "a.txt"}, id="given")])

ANTHROPIC_TEXT_ORDER = [
    "message_start",
    "ping",
    "content_block_start",
    *["content_block_delta"] * 3,
    "content_block_stop",
    "message_delta",
    "message_stop",
]


class Reply:
    def __init__(self, status: int, headers: dict[str, str], raw: bytes) -> None:
        self.status = status
        self.headers = headers
        self.raw = raw

    def json(self) -> Any:
        return json.loads(self.raw)

    def sse(self) -> list[tuple[str | None, str]]:
        """Split an SSE body into ``(event name or None, data)`` pairs."""
        assert self.headers["content-type"].startswith("text/event-stream")
        text = self.raw.decode()
        assert text.endswith("\n\n")
        events = []
        for block in text.split("\n\n")[:-1]:
            name = None
            data = []
            for line in block.split("\n"):
                key, _, value = line.partition(": ")
                if key == "event":
                    name = value
                else:
                    assert key == "data", line
                    data.append(value)
            events.append((name, "\n".join(data)))
        return events

    def named_events(self) -> list[tuple[str, dict[str, Any]]]:
        events = []
        for name, data in self.sse():
            assert name is not None
            payload = json.loads(data)
            assert payload["type"] == name
            events.append((name, payload))
        return events


def request(
    server: FakeModelServer,
    method: str,
    path: str,
    body: Any = None,
    *,
    raw: bytes | None = None,
    conn: http.client.HTTPConnection | None = None,
) -> Reply:
    own = conn is None
    connection = conn or http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        payload = raw if raw is not None else None if body is None else json.dumps(body).encode()
        headers = {"x-api-key": "dummy", "Authorization": "Bearer dummy"}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=payload, headers=headers)
        response = connection.getresponse()
        data = response.read()
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, data)
    finally:
        if own:
            connection.close()


def post(server: FakeModelServer, path: str, body: Any = None) -> Reply:
    return request(server, "POST", path, body)


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer([Text("first answer"), TOOL_STEP]) as running:
        yield running


# --- Anthropic Messages ---------------------------------------------------------------------


def test_anthropic_non_streaming_text_then_tools(server: FakeModelServer) -> None:
    text = post(server, "/v1/messages", {"model": "claude-x", "messages": []})
    assert text.status == 200
    message = text.json()
    assert message["type"] == "message"
    assert message["role"] == "assistant"
    assert message["model"] == "claude-x"
    assert message["content"] == [{"type": "text", "text": "first answer"}]
    assert message["stop_reason"] == "end_turn"
    assert message["usage"]["input_tokens"] > 0

    tools = post(server, "/messages?beta=true", {"messages": []}).json()
    assert tools["stop_reason"] == "tool_use"
    first, second = tools["content"]
    assert first["type"] == "tool_use"
    assert first["id"].startswith("toolu_")
    assert (first["name"], first["input"]) == ("Bash", ARGS)
    assert (second["id"], second["name"], second["input"]) == ("given", "Read", {"path": "a.txt"})


def test_anthropic_streaming_text(server: FakeModelServer) -> None:
    reply = post(server, "/v1/messages?beta=true", {"model": "claude-x", "stream": True})
    events = reply.named_events()
    assert [name for name, _ in events] == ANTHROPIC_TEXT_ORDER
    start = events[0][1]["message"]
    assert (start["role"], start["content"], start["stop_reason"]) == ("assistant", [], None)
    assert start["model"] == "claude-x"
    assert events[2][1] == {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    deltas = [payload["delta"] for name, payload in events if name == "content_block_delta"]
    assert {delta["type"] for delta in deltas} == {"text_delta"}
    assert "".join(delta["text"] for delta in deltas) == "first answer"
    message_delta = events[-2][1]
    assert message_delta["delta"]["stop_reason"] == "end_turn"
    assert message_delta["usage"]["output_tokens"] > 0


def test_anthropic_streaming_tool_use(server: FakeModelServer) -> None:
    post(server, "/v1/messages", {})
    events = post(server, "/v1/messages", {"stream": True}).named_events()
    names = [name for name, _ in events]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 2
    blocks: dict[int, dict[str, Any]] = {}
    open_index = None
    for name, payload in events[2:-2]:
        if name == "content_block_start":
            assert open_index is None
            open_index = payload["index"]
            block = payload["content_block"]
            assert block["type"] == "tool_use"
            assert block["input"] == {}
            blocks[open_index] = {**block, "json": ""}
        elif name == "content_block_delta":
            assert payload["index"] == open_index
            assert payload["delta"]["type"] == "input_json_delta"
            blocks[open_index]["json"] += payload["delta"]["partial_json"]
        else:
            assert name == "content_block_stop"
            assert payload["index"] == open_index
            open_index = None
    assert sorted(blocks) == [0, 1]
    assert blocks[0]["name"] == "Bash"
    assert blocks[0]["id"].startswith("toolu_")
    assert json.loads(blocks[0]["json"]) == ARGS
    assert (blocks[1]["id"], json.loads(blocks[1]["json"])) == ("given", {"path": "a.txt"})
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_count_tokens_and_models_do_not_consume_steps(server: FakeModelServer) -> None:
    counted = post(server, "/v1/messages/count_tokens?beta=true", {"messages": []})
    assert counted.json() == {"input_tokens": 10}
    for path in ("/v1/models", "/models?client_version=1.0", "/v1/models/claude-x"):
        listing = request(server, "GET", path).json()
        assert listing["object"] == "list"
        assert listing["data"][0]["id"]
        assert listing["data"][0]["type"] == "model"
    assert server.remaining == 2
    assert server.model_requests == []


# --- OpenAI Chat Completions ----------------------------------------------------------------


def test_chat_non_streaming(server: FakeModelServer) -> None:
    text = post(server, "/v1/chat/completions", {"model": "gpt-x", "messages": []}).json()
    assert text["object"] == "chat.completion"
    assert text["model"] == "gpt-x"
    choice = text["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": "first answer"}
    assert choice["finish_reason"] == "stop"
    assert text["usage"]["total_tokens"] > 0

    tools = post(server, "/chat/completions", {"messages": []}).json()
    choice = tools["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] is None
    first, second = choice["message"]["tool_calls"]
    assert first["id"].startswith("call_")
    assert first["type"] == "function"
    assert first["function"]["name"] == "Bash"
    assert json.loads(first["function"]["arguments"]) == ARGS
    assert second["id"] == "given"


def chat_stream(reply: Reply) -> list[dict[str, Any]]:
    events = reply.sse()
    assert all(name is None for name, _ in events)
    assert events[-1][1] == "[DONE]"
    chunks = [json.loads(data) for _, data in events[:-1]]
    assert all(chunk["object"] == "chat.completion.chunk" for chunk in chunks)
    assert len({chunk["id"] for chunk in chunks}) == 1
    return chunks


def test_chat_streaming_text(server: FakeModelServer) -> None:
    chunks = chat_stream(post(server, "/v1/chat/completions", {"stream": True}))
    deltas = [chunk["choices"][0]["delta"] for chunk in chunks]
    assert deltas[0]["role"] == "assistant"
    assert "".join(delta.get("content") or "" for delta in deltas) == "first answer"
    assert [c["choices"][0]["finish_reason"] for c in chunks[:-1]] == [None] * (len(chunks) - 1)
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_chat_streaming_tool_calls_with_usage(server: FakeModelServer) -> None:
    post(server, "/v1/chat/completions", {})
    body = {"stream": True, "stream_options": {"include_usage": True}}
    chunks = chat_stream(post(server, "/v1/chat/completions", body))
    usage_chunk = chunks.pop()
    assert usage_chunk["choices"] == []
    assert usage_chunk["usage"]["completion_tokens"] > 0
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for part in chunk["choices"][0]["delta"].get("tool_calls", []):
            call = calls.setdefault(part["index"], {"id": "", "name": "", "arguments": ""})
            if "id" in part:
                assert call["id"] == ""
                call["id"] = part["id"]
                assert part["type"] == "function"
            call["name"] += part["function"].get("name", "")
            call["arguments"] += part["function"].get("arguments", "")
    assert sorted(calls) == [0, 1]
    assert calls[0]["id"].startswith("call_")
    assert calls[0]["name"] == "Bash"
    assert json.loads(calls[0]["arguments"]) == ARGS
    assert (calls[1]["id"], calls[1]["name"]) == ("given", "Read")
    assert json.loads(calls[1]["arguments"]) == {"path": "a.txt"}


# --- OpenAI Responses -----------------------------------------------------------------------


def test_responses_non_streaming(server: FakeModelServer) -> None:
    text = post(server, "/v1/responses", {"model": "gpt-x", "input": []}).json()
    assert text["id"].startswith("resp_")
    assert (text["object"], text["status"], text["model"]) == ("response", "completed", "gpt-x")
    (message,) = text["output"]
    assert message["type"] == "message"
    assert message["id"].startswith("msg_")
    assert (message["role"], message["status"]) == ("assistant", "completed")
    assert message["content"] == [
        {"type": "output_text", "text": "first answer", "annotations": []}
    ]
    usage = text["usage"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert usage["input_tokens_details"] == {"cached_tokens": 0}
    assert usage["output_tokens_details"] == {"reasoning_tokens": 0}

    tools = post(server, "/responses", {"input": []}).json()
    first, second = tools["output"]
    assert first["type"] == "function_call"
    assert first["id"].startswith("fc_")
    assert first["call_id"].startswith("call_")
    assert first["status"] == "completed"
    assert first["name"] == "Bash"
    assert json.loads(first["arguments"]) == ARGS
    assert second["call_id"] == "given"


def responses_stream(reply: Reply) -> list[tuple[str, dict[str, Any]]]:
    events = reply.named_events()
    assert [payload["sequence_number"] for _, payload in events] == list(range(len(events)))
    assert [name for name, _ in events[:2]] == ["response.created", "response.in_progress"]
    assert events[-1][0] == "response.completed"
    response_ids = {payload["response"]["id"] for name, payload in events if "response" in payload}
    assert len(response_ids) == 1
    assert events[0][1]["response"]["status"] == "in_progress"
    assert events[-1][1]["response"]["status"] == "completed"
    return events


def test_responses_streaming_text(server: FakeModelServer) -> None:
    events = responses_stream(post(server, "/v1/responses", {"stream": True, "model": "gpt-x"}))
    names = [name for name, _ in events]
    assert names == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        *["response.output_text.delta"] * 3,
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    added = events[2][1]
    assert added["output_index"] == 0
    assert added["item"]["type"] == "message"
    assert added["item"]["content"] == []
    item_id = added["item"]["id"]
    for _, payload in events[3:-2]:
        assert (payload["item_id"], payload["output_index"], payload["content_index"]) == (
            item_id,
            0,
            0,
        )
    assert events[3][1]["part"] == {"type": "output_text", "text": "", "annotations": []}
    text = "".join(p["delta"] for name, p in events if name == "response.output_text.delta")
    assert text == "first answer"
    assert events[7][1]["text"] == "first answer"
    assert events[8][1]["part"]["text"] == "first answer"
    done_item = events[9][1]["item"]
    assert done_item["id"] == item_id
    assert done_item["status"] == "completed"
    final = events[-1][1]["response"]
    assert final["output"] == [done_item]
    assert final["model"] == "gpt-x"
    assert final["usage"]["output_tokens"] > 0


def test_responses_streaming_function_calls(server: FakeModelServer) -> None:
    post(server, "/v1/responses", {})
    events = responses_stream(post(server, "/v1/responses", {"stream": True}))
    per_item: dict[int, list[str]] = {}
    arguments: dict[int, str] = {}
    done_items = []
    for name, payload in events[2:-1]:
        index = payload["output_index"]
        per_item.setdefault(index, []).append(name)
        if name == "response.output_item.added":
            item = payload["item"]
            assert (item["type"], item["arguments"]) == ("function_call", "")
            arguments[index] = ""
            item_id = item["id"]
        else:
            assert name == "response.output_item.done" or payload["item_id"] == item_id
        if name == "response.function_call_arguments.delta":
            arguments[index] += payload["delta"]
        if name == "response.function_call_arguments.done":
            assert payload["arguments"] == arguments[index]
        if name == "response.output_item.done":
            assert payload["item"]["id"] == item_id
            assert payload["item"]["arguments"] == arguments[index]
            done_items.append(payload["item"])
    for names in per_item.values():
        assert names[0] == "response.output_item.added"
        assert set(names[1:-2]) == {"response.function_call_arguments.delta"}
        assert names[-2:] == ["response.function_call_arguments.done", "response.output_item.done"]
    assert sorted(per_item) == [0, 1]
    assert json.loads(arguments[0]) == ARGS
    assert (done_items[0]["name"], done_items[1]["call_id"]) == ("Bash", "given")
    assert events[-1][1]["response"]["output"] == done_items


def test_a_namespaced_call_carries_its_namespace_in_responses_only() -> None:
    call = ToolCall("probe_echo", {"text": "hi"}, id="c1", namespace="mcp__probe")
    with FakeModelServer([ToolCalls([call])] * 4) as running:
        (item,) = post(running, "/v1/responses", {}).json()["output"]
        assert (item["namespace"], item["name"], item["call_id"]) == (
            "mcp__probe",
            "probe_echo",
            "c1",
        )
        events = responses_stream(post(running, "/v1/responses", {"stream": True}))
        added, done = events[2][1]["item"], events[-2][1]["item"]
        assert added["namespace"] == done["namespace"] == "mcp__probe"
        (block,) = post(running, "/v1/messages", {}).json()["content"]
        assert "namespace" not in block
        assert block["name"] == "probe_echo"
        (chat,) = post(running, "/v1/chat/completions", {}).json()["choices"][0]["message"][
            "tool_calls"
        ]
        assert "namespace" not in chat["function"]
    # A call without a namespace has none.
    with FakeModelServer([TOOL_STEP]) as running:
        items = post(running, "/v1/responses", {}).json()["output"]
        assert ["namespace" in item for item in items] == [False, False]


# --- Script, recording, robustness ----------------------------------------------------------


def test_steps_are_consumed_in_order_across_apis_then_done() -> None:
    steps: list[Step] = [Text("one"), Text("two"), Text("three")]
    with FakeModelServer(steps) as server:
        assert server.remaining == 3
        first = post(server, "/v1/responses", {"input": "hi"}).json()
        second = post(server, "/v1/messages", {"messages": [{"role": "user", "content": "hi"}]})
        third = post(server, "/v1/chat/completions", {"messages": []}).json()
        assert server.remaining == 0
        fourth = post(server, "/v1/messages", {"stream": True}).named_events()
        assert first["output"][0]["content"][0]["text"] == "one"
        assert second.json()["content"][0]["text"] == "two"
        assert third["choices"][0]["message"]["content"] == "three"
        fallback = "".join(p["delta"].get("text", "") for n, p in fourth if "delta" in p)
        assert fallback == DEFAULT_STEP.text == "done"

        recorded = server.requests
        assert [(r.method, r.path, r.api) for r in recorded] == [
            ("POST", "/v1/responses", "responses"),
            ("POST", "/v1/messages", "anthropic"),
            ("POST", "/v1/chat/completions", "chat"),
            ("POST", "/v1/messages", "anthropic"),
        ]
        assert recorded[1].body["messages"][0]["content"] == "hi"
        assert recorded[0].headers["x-api-key"] == "dummy"
        assert server.model_requests == recorded


def test_callable_chooses_step_from_request_body() -> None:
    def choose(body: dict[str, Any]) -> Step | None:
        if body.get("tools"):
            return ToolCalls([ToolCall("lookup", {"q": body["tools"][0]})])
        return Text("plain") if body.get("model") else None

    source: StepSource = choose
    with FakeModelServer(source) as server:
        tool = post(server, "/v1/responses", {"tools": ["x"]}).json()["output"][0]
        assert (tool["name"], json.loads(tool["arguments"])) == ("lookup", {"q": "x"})
        plain = post(server, "/v1/chat/completions", {"model": "m"}).json()
        assert plain["choices"][0]["message"]["content"] == "plain"
        default = post(server, "/v1/messages", {}).json()
        assert default["content"][0]["text"] == "done"


def test_concurrent_calls_consume_each_step_once() -> None:
    steps: list[Step] = [Text(f"step {i}") for i in range(20)]
    answers: list[str] = []
    lock = threading.Lock()
    with FakeModelServer(steps) as server:

        def call() -> None:
            text = post(server, "/v1/messages", {}).json()["content"][0]["text"]
            with lock:
                answers.append(text)

        threads = [threading.Thread(target=call) for _ in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(answers) == sorted(step.text for step in steps if isinstance(step, Text))
        assert server.remaining == 0


def test_lenient_input_and_errors_do_not_kill_the_server(server: FakeModelServer) -> None:
    missing = post(server, "/v1/messages")
    assert missing.json()["content"][0]["text"] == "first answer"
    assert server.requests[-1].body == {}
    garbage = request(server, "POST", "/v1/chat/completions", raw=b"{not json")
    assert garbage.json()["choices"][0]["finish_reason"] == "tool_calls"
    listing = request(server, "POST", "/v1/responses", raw=b"[1, 2]")
    assert listing.json()["output"][0]["content"][0]["text"] == "done"

    unknown = post(server, "/v1/embeddings", {"input": "x"})
    assert unknown.status == 404
    assert unknown.json()["error"]["type"] == "not_found_error"
    deleted = request(server, "DELETE", "/v1/messages")
    assert deleted.status == 404

    extra = {"model": "m", "stream": False, "metadata": {"user_id": "u"}, "unknown": [1]}
    assert post(server, "/v1/messages", extra).status == 200


def test_chunked_request_body_and_keep_alive(server: FakeModelServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        body = json.dumps({"model": "chunky", "stream": True}).encode()
        conn.request("POST", "/v1/messages", body=iter([body[:5], body[5:]]), encode_chunked=True)
        response = conn.getresponse()
        reply = Reply(200, {k.lower(): v for k, v in response.getheaders()}, response.read())
        assert reply.named_events()[0][1]["message"]["model"] == "chunky"
        # The same connection must still be usable after a streamed reply.
        again = request(server, "POST", "/v1/responses", {"stream": True}, conn=conn)
        assert again.named_events()[-1][0] == "response.completed"
    finally:
        conn.close()


def test_server_stops_on_exit() -> None:
    with FakeModelServer() as server:
        port = server.port
        assert server.url == f"http://127.0.0.1:{port}"
        assert server.openai_base_url == f"http://127.0.0.1:{port}/v1"
        assert post(server, "/v1/messages", {}).json()["content"][0]["text"] == "done"
    with pytest.raises(RuntimeError):
        _ = server.url
    with (
        pytest.raises(ConnectionRefusedError),
        socket.create_connection(("127.0.0.1", port), timeout=1),
    ):
        pass
