"""A hostile ACP v1 agent for the flood benchmark: each turn, everything that used to cost memory
or stall the event loop, at once.

    python hostile_agent.py WORKSPACE

Standard library only. It answers ``initialize`` and ``session/new``; on each
``session/prompt`` it sends, without waiting between them:

* one line of 48 MiB of tiny JSON objects (``[{}, {}, ...]``, under the 50 MiB line limit);
* 20 ``fs/read_text_file`` requests for ``WORKSPACE/big.txt`` (30 MiB), pipelined;
* 30 ``tool_call`` notifications of edits that name ``WORKSPACE/seven.txt`` (7 MiB);
* 2,000 ``session/request_permission`` requests, pipelined;
* 20,000 ``agent_message_chunk`` updates;

then waits for every answer and ends the turn ``end_turn``. The benchmark makes the two
files before it starts the agent.
"""

from __future__ import annotations

import json
import sys
from typing import Any

WORKSPACE = sys.argv[1]
SESSION = "hostile-session"
OUT = sys.stdout.buffer


def line(message: dict[str, Any]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode()


def update(body: dict[str, Any]) -> bytes:
    return line({"method": "session/update", "params": {"sessionId": SESSION, "update": body}})


def turn_lines(turn: int) -> tuple[list[bytes], set[str]]:
    """The lines of one hostile turn, and the ids of the requests among them."""
    lines = [b"[" + b"{}," * (48 * 1024 * 1024 // 3) + b"{}]\n"]
    ids = 0
    for _ in range(20):
        ids += 1
        params = {"sessionId": SESSION, "path": f"{WORKSPACE}/big.txt"}
        lines.append(line({"id": f"{turn}-{ids}", "method": "fs/read_text_file", "params": params}))
    edit = {
        "sessionUpdate": "tool_call",
        "title": "edit seven.txt",
        "kind": "edit",
        "status": "in_progress",
        "content": [
            {"type": "diff", "path": f"{WORKSPACE}/seven.txt", "oldText": "a", "newText": "b"}
        ],
    }
    lines.extend(update({**edit, "toolCallId": f"edit-{turn}-{n}"}) for n in range(30))
    options = [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}]
    for n in range(2000):
        ids += 1
        call = {"toolCallId": f"ask-{turn}-{n}", "title": "run", "kind": "execute"}
        params = {"sessionId": SESSION, "toolCall": call, "options": options}
        lines.append(
            line({"id": f"{turn}-{ids}", "method": "session/request_permission", "params": params})
        )
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x" * 40}}
    lines.extend(update(chunk) for _ in range(20_000))
    return lines, {f"{turn}-{n}" for n in range(1, ids + 1)}


def main() -> None:
    turn = 0
    while True:
        raw = sys.stdin.readline()
        if not raw:
            return
        message = json.loads(raw)
        method, request_id = message.get("method"), message.get("id")
        if method == "initialize":
            OUT.write(
                line({"id": request_id, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
            )
        elif method == "session/new":
            OUT.write(line({"id": request_id, "result": {"sessionId": SESSION}}))
        elif method == "session/prompt":
            turn += 1
            lines, waiting = turn_lines(turn)
            for chunk in lines:
                OUT.write(chunk)
                OUT.flush()
            while waiting:  # every answer, whatever it says
                answer = sys.stdin.readline()
                if not answer:
                    return
                received = json.loads(answer)
                if isinstance(received, dict) and "method" not in received:
                    waiting.discard(received.get("id"))
            OUT.write(line({"id": request_id, "result": {"stopReason": "end_turn"}}))
        OUT.flush()


if __name__ == "__main__":
    main()
