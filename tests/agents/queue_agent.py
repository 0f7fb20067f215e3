"""A scripted ACP v1 agent for threads driven from a queue (standard library only).

    python queue_agent.py

Each prompt it runs is logged, as two JSON lines ``{"event": "start" | "end", "pid",
"cwd", "session", "prompt", "t"}``, to the file ``$QUEUE_AGENT_LOG`` (appended to, one
``write`` each: several processes share it), so that a test can check that no two agents
ever ran a turn of one thread (one folder) at once, and that no prompt ran twice.

* ``session/new`` makes ``q-<pid>-1``...; ``session/load`` and ``session/resume`` (both
  offered) take any id and answer at once (no history is replayed: the client has it).
* A prompt ``sleep S ...`` sleeps S seconds (a float) before it answers; any prompt is
  answered with one message ``done: <the prompt's text>`` and ``end_turn``.
* ``crash`` exits (status 3) mid-turn.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

LOG = os.environ.get("QUEUE_AGENT_LOG")
_sessions = 0


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def log(event: str, session: str, prompt: str) -> None:
    if not LOG:
        return
    line = json.dumps(
        {
            "event": event,
            "pid": os.getpid(),
            "cwd": os.getcwd(),
            "session": session,
            "prompt": prompt,
            "t": time.time(),
        }
    )
    fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def text_of(prompt: Any) -> str:
    if not isinstance(prompt, list):
        return ""
    return " ".join(block.get("text", "") for block in prompt if isinstance(block, dict)).strip()


def answer(request: dict[str, Any]) -> None:
    global _sessions
    method, params, rid = request.get("method"), request.get("params") or {}, request.get("id")
    if method == "initialize":
        send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {
                    "protocolVersion": 1,
                    "agentInfo": {"name": "queue-agent", "version": "1.0"},
                    "agentCapabilities": {
                        "loadSession": True,
                        "sessionCapabilities": {"resume": {}},
                    },
                },
            }
        )
    elif method == "session/new":
        _sessions += 1
        send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": f"q-{os.getpid()}-{_sessions}"}})
    elif method in ("session/load", "session/resume"):
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif method == "session/prompt":
        session, words = str(params.get("sessionId")), text_of(params.get("prompt"))
        log("start", session, words)
        if words == "crash":
            sys.exit(3)
        parts = words.split()
        if len(parts) >= 2 and parts[0] == "sleep":
            time.sleep(float(parts[1]))
        send(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": session,
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": f"done: {words}"},
                    },
                },
            }
        )
        log("end", session, words)
        send({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}})
    elif rid is not None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}})


def main() -> None:
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        if isinstance(request, dict) and "method" in request:
            answer(request)


if __name__ == "__main__":
    main()
