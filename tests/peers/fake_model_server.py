"""A scripted, offline stand-in for the Anthropic and OpenAI model APIs.

Real coding agents (claude-agent-acp, codex-acp) are pointed at this server instead of the real
APIs so that their sessions run against 127.0.0.1 in tests. The server speaks three wire formats,
each streaming (SSE) or not depending on the request's ``"stream": true``:

* Anthropic Messages: ``POST /v1/messages`` (plus ``/v1/messages/count_tokens``);
* OpenAI Chat Completions: ``POST /v1/chat/completions``;
* OpenAI Responses: ``POST /v1/responses``.

Routing matches on the end of the path, so the ``/v1`` prefix (or any other prefix) is optional and
a query string such as ``?beta=true`` is ignored. Any ``GET`` answers with a small model list.

Every model call consumes the next step of a script::

    steps = [ToolCalls([ToolCall("Bash", {"command": "ls"})]), Text("all done")]
    with FakeModelServer(steps) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "dummy"}
        ...  # run the agent; for OpenAI clients use server.openai_base_url
        assert server.remaining == 0
        print(server.model_requests[-1].body)  # e.g. to check the tool result came back

When the script runs out, each further call answers ``Text("done")``. Instead of a list, ``steps``
may be a callable that receives the parsed request body and returns the step to answer with (or
``None`` for the default), which helps when an agent makes side calls (titles, summaries) that a
fixed list cannot anticipate.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal
from urllib.parse import urlsplit

__all__ = [
    "DEFAULT_STEP",
    "Api",
    "FakeModelServer",
    "RecordedRequest",
    "Step",
    "StepSource",
    "Text",
    "ToolCall",
    "ToolCalls",
]

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class Text:
    """A model turn that answers with plain text and ends the turn."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """One tool invocation; ``id`` is generated per API when left out.

    ``namespace``: the tool namespace the called function belongs to (OpenAI Responses,
    ``{"type": "namespace", "name": ..., "tools": [...]}`` in the request's ``tools``); the
    ``function_call`` item carries it. The other APIs have no namespaces and ignore it.
    """

    name: str
    arguments: JsonObject = field(default_factory=dict)
    id: str | None = None
    namespace: str | None = None


@dataclass(frozen=True)
class ToolCalls:
    """A model turn that asks the client to run one or more tools."""

    calls: Sequence[ToolCall]


Step = Text | ToolCalls
StepSource = Sequence[Step] | Callable[[JsonObject], Step | None]
Api = Literal["anthropic", "chat", "responses", "count_tokens", "models", "unknown"]

DEFAULT_STEP = Text("done")
_INPUT_TOKENS = 10


@dataclass(frozen=True)
class RecordedRequest:
    """One request as received; ``body`` is ``{}`` when absent or not a JSON object."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: JsonObject
    api: Api


def _pieces(text: str, count: int = 3) -> list[str]:
    """Split ``text`` into at most ``count`` non-empty chunks (one empty chunk for "")."""
    if not text:
        return [""]
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _token_estimate(text: str) -> int:
    return max(1, len(text) // 4)


def _step_output_tokens(step: Step) -> int:
    if isinstance(step, Text):
        return _token_estimate(step.text)
    return sum(_token_estimate(json.dumps(call.arguments)) + 1 for call in step.calls)


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


class _Ids:
    """Deterministic, unique-per-server identifiers, readable in logs."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)
        self._lock = threading.Lock()

    def new(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}_fake{next(self._counter):06d}"


# --- Anthropic Messages ---------------------------------------------------------------------


def _anthropic_block(call: ToolCall, ids: _Ids) -> JsonObject:
    return {
        "type": "tool_use",
        "id": call.id or ids.new("toolu"),
        "name": call.name,
        "input": call.arguments,
    }


def _anthropic_usage(output_tokens: int) -> JsonObject:
    return {
        "input_tokens": _INPUT_TOKENS,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _anthropic_message(step: Step, model: str, ids: _Ids) -> JsonObject:
    if isinstance(step, Text):
        content = [{"type": "text", "text": step.text}]
        stop_reason = "end_turn"
    else:
        content = [_anthropic_block(call, ids) for call in step.calls]
        stop_reason = "tool_use"
    return {
        "id": ids.new("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": _anthropic_usage(_step_output_tokens(step)),
    }


def _anthropic_events(step: Step, model: str, ids: _Ids) -> Iterator[tuple[str, JsonObject]]:
    final = _anthropic_message(step, model, ids)
    start = {**final, "content": [], "stop_reason": None, "usage": _anthropic_usage(1)}
    yield "message_start", {"type": "message_start", "message": start}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(final["content"]):
        if block["type"] == "text":
            opening: JsonObject = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in _pieces(block["text"])]
        else:
            opening = {**block, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": piece}
                for piece in _pieces(_dumps(block["input"]))
            ]
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": opening},
        )
        for delta in deltas:
            yield (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": final["stop_reason"], "stop_sequence": None},
            "usage": final["usage"],
        },
    )
    yield "message_stop", {"type": "message_stop"}


# --- OpenAI Chat Completions ----------------------------------------------------------------


def _chat_tool_calls(step: ToolCalls, ids: _Ids) -> list[JsonObject]:
    return [
        {
            "id": call.id or ids.new("call"),
            "type": "function",
            "function": {"name": call.name, "arguments": _dumps(call.arguments)},
        }
        for call in step.calls
    ]


def _chat_usage(step: Step) -> JsonObject:
    output = _step_output_tokens(step)
    return {
        "prompt_tokens": _INPUT_TOKENS,
        "completion_tokens": output,
        "total_tokens": _INPUT_TOKENS + output,
    }


def _chat_completion(step: Step, model: str, ids: _Ids) -> JsonObject:
    message: JsonObject = {"role": "assistant", "content": None}
    if isinstance(step, Text):
        message["content"] = step.text
        finish_reason = "stop"
    else:
        message["tool_calls"] = _chat_tool_calls(step, ids)
        finish_reason = "tool_calls"
    return {
        "id": ids.new("chatcmpl"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": _chat_usage(step),
    }


def _chat_chunks(
    step: Step, model: str, ids: _Ids, include_usage: bool
) -> Iterator[JsonObject | None]:
    """Yield chunk objects, then ``None`` for the ``[DONE]`` terminator."""
    completion_id = ids.new("chatcmpl")
    created = int(time.time())

    def chunk(delta: JsonObject, finish_reason: str | None = None) -> JsonObject:
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            ],
        }

    if isinstance(step, Text):
        yield chunk({"role": "assistant", "content": ""})
        for piece in _pieces(step.text):
            yield chunk({"content": piece})
        yield chunk({}, "stop")
    else:
        yield chunk({"role": "assistant", "content": None})
        for index, call in enumerate(_chat_tool_calls(step, ids)):
            function = call["function"]
            yield chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": function["name"], "arguments": ""},
                        }
                    ]
                }
            )
            for piece in _pieces(function["arguments"]):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        yield chunk({}, "tool_calls")
    if include_usage:
        yield {**chunk({}), "choices": [], "usage": _chat_usage(step)}
    yield None


# --- OpenAI Responses -----------------------------------------------------------------------


def _responses_output(step: Step, ids: _Ids) -> list[JsonObject]:
    if isinstance(step, Text):
        return [
            {
                "type": "message",
                "id": ids.new("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": step.text, "annotations": []}],
            }
        ]
    calls = []
    for call in step.calls:
        item: JsonObject = {
            "type": "function_call",
            "id": ids.new("fc"),
            "call_id": call.id or ids.new("call"),
            "name": call.name,
            "arguments": _dumps(call.arguments),
            "status": "completed",
        }
        if call.namespace is not None:
            item["namespace"] = call.namespace
        calls.append(item)
    return calls


def _response(
    response_id: str, model: str, status: str, output: list[JsonObject], usage: JsonObject | None
) -> JsonObject:
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": {},
    }


def _responses_usage(step: Step) -> JsonObject:
    output = _step_output_tokens(step)
    return {
        "input_tokens": _INPUT_TOKENS,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": _INPUT_TOKENS + output,
    }


def _responses_body(step: Step, model: str, ids: _Ids) -> JsonObject:
    output = _responses_output(step, ids)
    return _response(ids.new("resp"), model, "completed", output, _responses_usage(step))


def _responses_events(step: Step, model: str, ids: _Ids) -> Iterator[tuple[str, JsonObject]]:
    """Yield ``(event name, payload without sequence_number)`` in the real API's order."""
    response_id = ids.new("resp")
    output = _responses_output(step, ids)
    pending = _response(response_id, model, "in_progress", [], None)
    yield "response.created", {"response": pending}
    yield "response.in_progress", {"response": pending}
    for output_index, item in enumerate(output):
        at = {"item_id": item["id"], "output_index": output_index}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            opening = {**item, "status": "in_progress", "content": []}
            yield "response.output_item.added", {"output_index": output_index, "item": opening}
            part_at = {**at, "content_index": 0}
            empty_part = {"type": "output_text", "text": "", "annotations": []}
            yield "response.content_part.added", {**part_at, "part": empty_part}
            for piece in _pieces(text):
                yield "response.output_text.delta", {**part_at, "delta": piece, "logprobs": []}
            yield "response.output_text.done", {**part_at, "text": text, "logprobs": []}
            yield "response.content_part.done", {**part_at, "part": item["content"][0]}
        else:
            opening = {**item, "status": "in_progress", "arguments": ""}
            yield "response.output_item.added", {"output_index": output_index, "item": opening}
            for piece in _pieces(item["arguments"]):
                yield "response.function_call_arguments.delta", {**at, "delta": piece}
            yield (
                "response.function_call_arguments.done",
                {**at, "name": item["name"], "arguments": item["arguments"]},
            )
        yield "response.output_item.done", {"output_index": output_index, "item": item}
    completed = _response(response_id, model, "completed", output, _responses_usage(step))
    yield "response.completed", {"response": completed}


# --- Models list ----------------------------------------------------------------------------


def _models_list() -> JsonObject:
    # One body that satisfies the OpenAI and Anthropic list shapes; ``models`` is codex's own
    # /models shape, where an empty list makes codex keep its built-in presets.
    model = {
        "id": "fake-model",
        "object": "model",
        "type": "model",
        "created": 1_700_000_000,
        "created_at": "2024-01-01T00:00:00Z",
        "owned_by": "fake-model-server",
        "display_name": "Fake Model",
    }
    return {
        "object": "list",
        "data": [model],
        "has_more": False,
        "first_id": model["id"],
        "last_id": model["id"],
        "models": [],
    }


# --- HTTP plumbing --------------------------------------------------------------------------


def _classify(method: str, path: str) -> Api:
    if method == "GET":
        return "models"
    if method != "POST":
        return "unknown"
    trimmed = path.rstrip("/")
    if trimmed.endswith("/messages/count_tokens"):
        return "count_tokens"
    if trimmed.endswith("/messages"):
        return "anthropic"
    if trimmed.endswith("/chat/completions"):
        return "chat"
    if trimmed.endswith("/responses"):
        return "responses"
    return "unknown"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Idle keep-alive connections from agents would otherwise pin handler threads forever.
    timeout = 60
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def _serve(self) -> None:
        self._headers_sent = False
        try:
            self._dispatch()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as exc:
            self.close_connection = True
            if not self._headers_sent:
                error = {"type": "api_error", "message": f"fake model server: {exc!r}"}
                self._send_json(HTTPStatus.INTERNAL_SERVER_ERROR, {"type": "error", "error": error})

    def _read_body(self) -> JsonObject:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = self._read_chunked()
        else:
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = 0
            raw = self.rfile.read(length) if length > 0 else b""
        encoding = self.headers.get("Content-Encoding", "").lower()
        try:
            if encoding in ("gzip", "deflate"):
                raw = zlib.decompress(raw, zlib.MAX_WBITS | 32)
            parsed = json.loads(raw) if raw.strip() else {}
        except (ValueError, zlib.error):
            return {}
        return parsed if isinstance(parsed, dict) else {}

    def _read_chunked(self) -> bytes:
        data = bytearray()
        while True:
            size_line = self.rfile.readline().split(b";", 1)[0].strip()
            size = int(size_line or b"0", 16)
            if size == 0:
                # Skip optional trailers up to the blank line.
                while self.rfile.readline().strip():
                    pass
                return bytes(data)
            data += self.rfile.read(size)
            self.rfile.readline()

    def _dispatch(self) -> None:
        parts = urlsplit(self.path)
        body = self._read_body()
        api = _classify(self.command, parts.path)
        fake = self.server.fake
        fake._record(
            RecordedRequest(
                method=self.command,
                path=parts.path,
                query=parts.query,
                headers=dict(self.headers.items()),
                body=body,
                api=api,
            )
        )
        if api == "models":
            self._send_json(HTTPStatus.OK, _models_list())
            return
        if api == "count_tokens":
            self._send_json(HTTPStatus.OK, {"input_tokens": _INPUT_TOKENS})
            return
        if api == "unknown":
            error = {
                "type": "not_found_error",
                "message": f"no route for {self.command} {parts.path}",
            }
            self._send_json(HTTPStatus.NOT_FOUND, {"type": "error", "error": error})
            return

        step = fake._next_step(body)
        model = body.get("model")
        if not isinstance(model, str) or not model:
            model = "fake-model"
        stream = body.get("stream") is True
        ids = fake._ids
        if api == "anthropic":
            if stream:
                self._send_sse(
                    f"event: {name}\ndata: {_dumps(data)}\n\n"
                    for name, data in _anthropic_events(step, model, ids)
                )
            else:
                self._send_json(HTTPStatus.OK, _anthropic_message(step, model, ids))
        elif api == "chat":
            if stream:
                options = body.get("stream_options")
                include_usage = isinstance(options, dict) and options.get("include_usage") is True
                self._send_sse(
                    "data: [DONE]\n\n" if chunk is None else f"data: {_dumps(chunk)}\n\n"
                    for chunk in _chat_chunks(step, model, ids, include_usage)
                )
            else:
                self._send_json(HTTPStatus.OK, _chat_completion(step, model, ids))
        elif stream:
            self._send_sse(
                "event: {}\ndata: {}\n\n".format(
                    name, _dumps({"type": name, "sequence_number": number, **data})
                )
                for number, (name, data) in enumerate(_responses_events(step, model, ids))
            )
        else:
            self._send_json(HTTPStatus.OK, _responses_body(step, model, ids))

    def _send_json(self, status: HTTPStatus, payload: JsonObject) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_fake")
        self.end_headers()
        self._headers_sent = True
        self.wfile.write(data)
        self.wfile.flush()

    def _send_sse(self, events: Iterator[str]) -> None:
        # Rendering everything first lets us send a Content-Length, so keep-alive still works;
        # events are still written one at a time, as a real stream would deliver them.
        encoded = [event.encode() for event in events]
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(sum(len(event) for event in encoded)))
        self.send_header("request-id", "req_fake")
        self.end_headers()
        self._headers_sent = True
        for event in encoded:
            self.wfile.write(event)
            self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # The default backlog of 5 makes parallel clients wait out a one-second SYN retry.
    request_queue_size = 128
    fake: FakeModelServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (an agent killed mid-request) is not an error here."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class FakeModelServer:
    """Scripted model server on ``127.0.0.1``; use as a context manager.

    ``url`` is ``http://127.0.0.1:PORT`` (the Anthropic base URL); ``openai_base_url`` adds
    ``/v1``. ``requests`` lists every request received, in order; ``model_requests`` only those
    that consumed a step; ``remaining`` counts unconsumed scripted steps.
    """

    def __init__(self, steps: StepSource = ()) -> None:
        self._chooser: Callable[[JsonObject], Step | None] | None = None
        self._script: deque[Step] = deque()
        if callable(steps):
            self._chooser = steps
        else:
            self._script.extend(steps)
        self._lock = threading.Lock()
        self._ids = _Ids()
        self.requests: list[RecordedRequest] = []
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeModelServer is not running")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def model_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.api in ("anthropic", "chat", "responses")]

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._script)

    def start(self) -> FakeModelServer:
        if self._httpd is not None:
            raise RuntimeError("FakeModelServer is already running")
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.fake = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=f"fake-model-server:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_step(self, body: JsonObject) -> Step:
        with self._lock:
            if self._chooser is not None:
                return self._chooser(body) or DEFAULT_STEP
            return self._script.popleft() if self._script else DEFAULT_STEP
