"""A scripted ACP v1 agent that floods the client with ``session/update`` notifications.

    python flood_agent.py N

Standard library only (no SDK), so every client it is benchmarked against reads exactly
the same bytes. It answers ``initialize`` with protocol version 1 (whatever the client
asked for), ``session/new`` with a session id, and each ``session/prompt`` with N
``session/update`` notifications followed by ``{"stopReason": "end_turn"}``. Any other
request gets error -32601; notifications and answers from the client are ignored. It exits
at the end of its input.

The updates are a realistic mix (see :func:`updates`): mostly ``agent_message_chunk`` text
chunks of 40 characters, all with one ``messageId``; in every 50 updates a ``tool_call``
(kind ``read``, a title and a location) followed by the ``tool_call_update`` that completes
it; in every 500 a ``plan`` update. The lines are built when the session is created and
written in large buffered batches, so the agent is not what the benchmark measures.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, Final

SESSION_ID: Final = "flood-session-1"
MESSAGE_ID: Final = "flood-message-1"
CHUNK_CHARS: Final = 40
TOOL_EVERY: Final = 50
PLAN_EVERY: Final = 500
#: Bytes handed to the pipe per write.
BATCH_BYTES: Final = 1 << 20
INITIALIZE_RESULT: Final = {
    "protocolVersion": 1,
    "agentCapabilities": {},
    "agentInfo": {"name": "flood-agent", "version": "1"},
}
WORDS: Final = ("alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta")


@dataclass(frozen=True)
class Expected:
    """What a client should make of one prompt's updates."""

    updates: int
    chunks: int
    text_chars: int
    tool_calls: int
    plans: int


def chunk_text(index: int) -> str:
    """The text of the chunk sent as update ``index``: exactly ``CHUNK_CHARS`` characters."""
    words = " ".join(WORDS[(index + k) % len(WORDS)] for k in range(8))
    return f"{index:07d} {words}"[: CHUNK_CHARS - 1].ljust(CHUNK_CHARS - 1) + " "


def updates(count: int, cwd: str = "/flood") -> Iterator[dict[str, Any]]:
    """The ``update`` objects of one prompt's ``count`` notifications, in order, one by one.

    Update ``i`` is a ``tool_call`` when ``i % 50 == 48``, the ``tool_call_update``
    completing it when ``i % 50 == 49``, a ``plan`` when ``i % 500 == 250``, and a text
    chunk otherwise.
    """
    for i in range(count):
        slot = i % TOOL_EVERY
        call = f"call-{i // TOOL_EVERY}"
        if slot == TOOL_EVERY - 2:
            path = f"{cwd}/src/module_{i // TOOL_EVERY}.py"
            yield {
                "sessionUpdate": "tool_call",
                "toolCallId": call,
                "title": f"Read src/module_{i // TOOL_EVERY}.py",
                "kind": "read",
                "status": "in_progress",
                "locations": [{"path": path, "line": 1}],
                "rawInput": {"path": path},
            }
        elif slot == TOOL_EVERY - 1:
            yield {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call,
                "status": "completed",
                "content": [
                    {"type": "content", "content": {"type": "text", "text": "120 lines read"}}
                ],
            }
        elif i % PLAN_EVERY == PLAN_EVERY // 2:
            done = i // PLAN_EVERY
            yield {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": f"Step {step}: look at part {step} of the code",
                        "priority": "medium",
                        "status": "completed" if step <= done else "pending",
                    }
                    for step in range(1, 5)
                ],
            }
        else:
            yield {
                "sessionUpdate": "agent_message_chunk",
                "messageId": MESSAGE_ID,
                "content": {"type": "text", "text": chunk_text(i)},
            }


def expected(count: int) -> Expected:
    """The counts a client should see for ``count`` updates (see :func:`updates`)."""
    kinds: dict[str, int] = {}
    text_chars = 0
    for update in updates(count):  # one at a time: a client's peak RSS is measured after
        kind = update["sessionUpdate"]
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind == "agent_message_chunk":
            text_chars += len(update["content"]["text"])
    return Expected(
        updates=count,
        chunks=kinds.get("agent_message_chunk", 0),
        text_chars=text_chars,
        tool_calls=kinds.get("tool_call", 0),
        plans=kinds.get("plan", 0),
    )


def encode(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


def build_flood(count: int, cwd: str) -> bytes:
    """The ``session/update`` lines of one prompt, as one blob."""
    return b"".join(
        encode(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": SESSION_ID, "update": update},
            }
        )
        for update in updates(count, cwd)
    )


def write_batched(out: BinaryIO, *blobs: bytes) -> None:
    """Write ``blobs`` in slices of ``BATCH_BYTES``, then flush."""
    for data in blobs:
        view = memoryview(data)
        for start in range(0, len(view), BATCH_BYTES):
            out.write(view[start : start + BATCH_BYTES])
    out.flush()


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    flood = b""
    for line in stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if "id" not in message or not isinstance(method, str):
            continue  # a notification (session/cancel, ...) or an answer: nothing to do
        if method == "initialize":
            write_batched(
                stdout, encode({"jsonrpc": "2.0", "id": request_id, "result": INITIALIZE_RESULT})
            )
        elif method == "session/new":
            params = message.get("params") or {}
            flood = build_flood(count, str(params.get("cwd", "/flood")))
            result = {"sessionId": SESSION_ID}
            write_batched(stdout, encode({"jsonrpc": "2.0", "id": request_id, "result": result}))
        elif method == "session/prompt":
            answer = {"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "end_turn"}}
            write_batched(stdout, flood, encode(answer))
        else:
            error = {"code": -32601, "message": f"method not found: {method}"}
            write_batched(stdout, encode({"jsonrpc": "2.0", "id": request_id, "error": error}))


if __name__ == "__main__":
    main()
