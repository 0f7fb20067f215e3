"""JSON-RPC 2.0 on stdin and stdout for the scripted ACP agents, standard library only.

The agents that docs/cli.md runs must work after the README's plain install (no test
extra, so no official SDK); those that were built on the SDK speak through this module,
which writes what the SDK's agent side wrote (``acp.run_agent``, agent-client-protocol
0.12.1), byte for byte: compact JSON, one message a line, in the SDK's key order;
requests to the client numbered from 0; errors ``{"code", "message", "data"}``; a
method the agent lacks answered -32601 with ``{"method": ...}``; an exception in a
handler answered -32603 with ``{"details": ...}``; a client's error answer to the
agent's request raised in the handler as :class:`RpcError` (so a turn that does not
catch it ends with that same error); stdin's end ends the agent. A request the SDK's
models refuse (a field missing or of the wrong type) is refused -32602 here too, its data
a plain description rather than pydantic's; a line that is not a JSON object is skipped.

An agent runs it as ``Connection().serve(requests, notifications)``, each handler taking
the request's params (an object) and returning the result. The ACP shapes at the end
(``text_chunk``, ``tool_call``, ...) are the SDK's helpers as they reach the wire.

Its agents import it by putting their own folder on ``sys.path``: they run as
``python tests/agents/NAME.py``, from any folder.
"""

from __future__ import annotations

import asyncio
import json
import sys
import traceback
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

Params = dict[str, Any]
Handler = Callable[[Params], Awaitable[Any]]

#: The longest line read at once; a longer one is read in pieces, as the SDK does.
LINE_LIMIT = 50 * 1024 * 1024


class RpcError(Exception):
    """A JSON-RPC error: raised by a handler to answer with it, or raised to the handler
    when the client answered the agent's request with it."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    @classmethod
    def invalid_params(cls, data: Any = None) -> RpcError:
        return cls(-32602, "Invalid params", data)

    @classmethod
    def method_not_found(cls, method: Any) -> RpcError:
        return cls(-32601, "Method not found", {"method": method})

    def wire(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "data": self.data}


class Connection:
    """The agent's side of one client: its requests served, its own requests and
    notifications sent."""

    def __init__(self) -> None:
        self._next_id = 0
        self._waiting: dict[Any, asyncio.Future[Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    # --- to the client ----------------------------------------------------------------------

    def _send(self, message: dict[str, Any]) -> None:
        # One write a message, of a whole line, so that concurrent handlers never interleave.
        sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
        sys.stdout.flush()

    async def request(self, method: str, params: Params) -> Any:
        """Ask the client; its result, or its error raised as :class:`RpcError`."""
        request_id = self._next_id
        self._next_id += 1
        answer = self._waiting[request_id] = asyncio.get_running_loop().create_future()
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        try:
            return await answer
        finally:
            self._waiting.pop(request_id, None)

    async def notify(self, method: str, params: Params) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def update(self, session_id: str, update: dict[str, Any]) -> None:
        """A ``session/update`` notification."""
        await self.notify("session/update", {"sessionId": session_id, "update": update})

    # --- from the client --------------------------------------------------------------------

    def serve(
        self, requests: Mapping[str, Handler], notifications: Mapping[str, Handler] | None = None
    ) -> None:
        """Serve the client on stdin and stdout until stdin ends."""
        asyncio.run(self._serve(requests, notifications or {}))

    async def _serve(
        self, requests: Mapping[str, Handler], notifications: Mapping[str, Handler]
    ) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := await _read_line(reader):
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                print(
                    f"stdio_rpc: a line that is not JSON, skipped: {line[:80]!r}", file=sys.stderr
                )
                continue
            if isinstance(message, dict):
                self._receive(message, requests, notifications)
        # The client is gone: what still runs (a turn that waits) ends with the agent.
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _receive(
        self,
        message: dict[str, Any],
        requests: Mapping[str, Handler],
        notifications: Mapping[str, Handler],
    ) -> None:
        method = message.get("method")
        if method is not None:
            # Each request runs on its own, as with the SDK: a turn that waits for
            # session/cancel, or for the client's answer, does not hold the others up.
            job = (
                self._answer(message, requests)
                if "id" in message
                else self._notified(message, notifications)
            )
            task = asyncio.ensure_future(job)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif "id" in message:
            self._answered(message)

    async def _answer(self, message: dict[str, Any], requests: Mapping[str, Handler]) -> None:
        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        method = message["method"]
        try:
            handler = requests.get(method) if isinstance(method, str) else None
            if handler is None:
                raise RpcError.method_not_found(method)
            params = message.get("params")
            if not isinstance(params, dict):
                raise RpcError.invalid_params({"errors": ["params: an object is required"]})
            answer["result"] = await handler(params)
        except RpcError as error:
            answer["error"] = error.wire()
        except Exception as error:
            traceback.print_exc()
            answer["error"] = RpcError(-32603, "Internal error", {"details": str(error)}).wire()
        self._send(answer)

    async def _notified(
        self, message: dict[str, Any], notifications: Mapping[str, Handler]
    ) -> None:
        method, params = message["method"], message.get("params")
        handler = notifications.get(method) if isinstance(method, str) else None
        if handler is None or not isinstance(params, dict):
            return  # a notification is never answered, not even to say it was not understood
        try:
            await handler(params)
        except Exception:
            traceback.print_exc()

    def _answered(self, message: dict[str, Any]) -> None:
        try:
            waiting = self._waiting.pop(message["id"], None)
        except TypeError:  # an id that is no key (a list, an object): no request of ours
            return
        if waiting is None or waiting.done():
            return
        if "result" in message:
            waiting.set_result(message["result"])
        elif "error" in message:
            error = message["error"] if isinstance(message["error"], dict) else {}
            waiting.set_exception(
                RpcError(
                    error.get("code", -32603), error.get("message", "Error"), error.get("data")
                )
            )
        else:
            waiting.set_result(None)


async def _read_line(reader: asyncio.StreamReader) -> bytes:
    """The next line, however long; at the end, what is left (``b""`` once all is read)."""
    chunks: list[bytes] = []
    ended = False
    while not ended:
        chunk, ended = await _read_piece(reader)
        chunks.append(chunk)
    return b"".join(chunks)


async def _read_piece(reader: asyncio.StreamReader) -> tuple[bytes, bool]:
    """A piece of the next line, and whether the line (or the input) ends with it."""
    try:
        return await reader.readuntil(b"\n"), True
    except asyncio.LimitOverrunError as overrun:  # longer than the limit: this much of it
        return await reader.readexactly(overrun.consumed), False
    except asyncio.IncompleteReadError as end:
        return end.partial, True


# --- reading params -------------------------------------------------------------------------


def string(params: Params, key: str) -> str:
    """The string ``params[key]``; a request without it is refused, as the SDK refuses it."""
    value = params.get(key)
    if not isinstance(value, str):
        raise RpcError.invalid_params({"errors": [f"{key}: a string is required"]})
    return value


PROMPT_BLOCKS = ("text", "image", "audio", "resource_link", "resource")


def prompt_text(params: Params) -> str:
    """The text of a ``session/prompt``: its text blocks' text, joined (the other kinds of
    block carry none); a prompt that is no list of content blocks is refused."""
    string(params, "sessionId")
    blocks = params.get("prompt")
    if not isinstance(blocks, list):
        raise RpcError.invalid_params({"errors": ["prompt: a list is required"]})
    words = []
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") not in PROMPT_BLOCKS:
            raise RpcError.invalid_params({"errors": ["prompt: content blocks are required"]})
        if block["type"] == "text":
            words.append(string(block, "text"))
    return "".join(words)


# --- ACP shapes, as the SDK's helpers write them --------------------------------------------


def answer_initialize(name: str, version: str, capabilities: dict[str, Any]) -> dict[str, Any]:
    """An ``initialize`` answer for ACP v1."""
    return {
        "protocolVersion": 1,
        "agentCapabilities": capabilities,
        "agentInfo": {"name": name, "version": version},
    }


def text_chunk(words: str) -> dict[str, Any]:
    """An ``agent_message_chunk`` of text."""
    return {"content": {"text": words, "type": "text"}, "sessionUpdate": "agent_message_chunk"}


def diff(path: str, new_text: str, old_text: str | None = None) -> dict[str, Any]:
    """A diff tool call content (a whole new file without ``old_text``)."""
    content: dict[str, Any] = {"path": path}
    if old_text is not None:
        content["oldText"] = old_text
    content.update(newText=new_text, type="diff")
    return content


def _present(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


def tool_call(
    tool_call_id: str,
    title: str,
    *,
    kind: str | None = None,
    status: str | None = None,
    content: list[dict[str, Any]] | None = None,
    locations: list[dict[str, Any]] | None = None,
    raw_input: Any = None,
) -> dict[str, Any]:
    """A ``tool_call`` update (``start_tool_call``)."""
    return {
        **_present(
            toolCallId=tool_call_id,
            title=title,
            kind=kind,
            status=status,
            content=content,
            locations=locations,
            rawInput=raw_input,
        ),
        "sessionUpdate": "tool_call",
    }


def tool_call_update(
    tool_call_id: str, *, status: str | None = None, content: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A ``tool_call_update`` update (``update_tool_call``)."""
    return {
        **_present(toolCallId=tool_call_id, status=status, content=content),
        "sessionUpdate": "tool_call_update",
    }
