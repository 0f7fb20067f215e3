"""A scripted agent for how runs end: silent, slow to open, huge, cancelled, questioning.

    python ending_agent.py SCENARIO [ARG]

Standard library only. Scenarios:

``mute``
    reads its input and never answers anything;
``no-session``
    answers ``initialize`` and never ``session/new``;
``huge``
    answers a prompt with one agent message chunk of ARG bytes (one line), then ends
    the turn ``end_turn``;
``deep``
    answers a prompt with a message chunk whose ``_meta`` nests ARG levels deep (a short
    line), then one that does not, then ends the turn;
``cancelled``
    streams a message, then waits for ``session/cancel`` and ends the turn
    ``cancelled`` (after ARG seconds, default 0, to be slow about it);
``ask``
    asks permission to run ``rm -rf build`` and ends the turn with what it was answered;
``write``
    asks the client to write ``notes.txt`` (``fs/write_text_file``), then ends the turn.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

SCENARIO = sys.argv[1] if len(sys.argv) > 1 else "mute"
ARG = sys.argv[2] if len(sys.argv) > 2 else ""
SESSION = "ending-session"


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def read() -> dict[str, Any] | None:
    line = sys.stdin.readline()
    return json.loads(line) if line else None


def update(body: dict[str, Any]) -> None:
    send({"method": "session/update", "params": {"sessionId": SESSION, "update": body}})


def say(text: str) -> None:
    update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def ask_client(request_id: int, method: str, params: dict[str, Any]) -> Any:
    """A request to the client; its answer (None for an error)."""
    send({"id": request_id, "method": method, "params": {"sessionId": SESSION, **params}})
    while (message := read()) is not None:
        if message.get("id") == request_id and "method" not in message:
            return message.get("result")
    sys.exit(0)


def turn(request_id: Any) -> None:
    if SCENARIO == "huge":
        say("x" * int(ARG))
    elif SCENARIO == "deep":
        nested: Any = 0
        for _ in range(int(ARG)):
            nested = [nested]
        content = {"type": "text", "text": "the hidden answer"}
        update({"sessionUpdate": "agent_message_chunk", "content": content, "_meta": nested})
        say("shown")
    elif SCENARIO == "cancelled":
        say("working on it")
        while (message := read()) is not None:
            if message.get("method") == "session/cancel":
                break
        time.sleep(float(ARG or 0))
        send({"id": request_id, "result": {"stopReason": "cancelled"}})
        return
    elif SCENARIO == "ask":
        call = {"toolCallId": "clean-1", "title": "rm -rf build", "kind": "execute"}
        update({"sessionUpdate": "tool_call", "status": "pending", **call})
        options = [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ]
        asked = {"toolCall": call, "options": options}
        answer = ask_client(900, "session/request_permission", asked)
        outcome = (answer or {}).get("outcome", {})
        say(f"answered: {outcome.get('optionId') or outcome.get('outcome')}")
    elif SCENARIO == "write":
        ask_client(901, "fs/write_text_file", {"path": ARG, "content": "written\n"})
        say("wrote it")
    send({"id": request_id, "result": {"stopReason": "end_turn"}})


def main() -> None:
    while (message := read()) is not None:
        method, request_id = message.get("method"), message.get("id")
        if SCENARIO == "mute" or request_id is None:
            continue
        if method == "initialize":
            answer = {"protocolVersion": 1, "agentCapabilities": {"loadSession": False}}
            send({"id": request_id, "result": answer})
        elif method == "session/new":
            if SCENARIO == "no-session":
                continue
            send({"id": request_id, "result": {"sessionId": SESSION}})
        elif method == "session/prompt":
            turn(request_id)
        else:
            send({"id": request_id, "error": {"code": -32601, "message": f"no {method}"}})


if __name__ == "__main__":
    main()
