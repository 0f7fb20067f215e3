"""A scripted ACP agent (v1) for the hostile tests: it plays a script, and writes down its answers.

    python scripted.py SCRIPT.json ANSWERS.json

``SCRIPT.json`` is a list of steps played on each ``session/prompt``: ``{"request":
METHOD, "params": {...}}`` sends a request and waits for its answer (``sessionId``
is filled in), ``{"notify": METHOD, "params": {...}}`` sends a notification,
``{"update": {...}}`` sends a ``session/update`` of this session, ``{"symlink": [TARGET,
NAME]}`` makes (or remakes) the link NAME itself, in its folder, as an agent's own tools do; a
``terminalId`` of ``"$terminal"`` is the id of the terminal the client made last. The turn then
ends ``end_turn``. Every answer the client gave is appended to ``ANSWERS.json``
(a JSON list, rewritten after each answer), so a test can read what the client
said. Standard library only: it stands for an agent nobody here controls.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

with open(sys.argv[1], encoding="utf-8") as _script:
    SCRIPT: list[dict[str, Any]] = json.load(_script)
ANSWERS_PATH = sys.argv[2]
SESSION = "scripted-session"
ANSWERS: list[dict[str, Any]] = []
NEXT_ID = [1000]
TERMINAL = [""]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def wait_answer(request_id: int) -> dict[str, Any] | None:
    while True:
        line = sys.stdin.readline()
        if not line:
            return None
        message = json.loads(line)
        if message.get("id") == request_id and "method" not in message:
            return message


def play() -> None:
    for step in SCRIPT:
        if "request" in step:
            NEXT_ID[0] += 1
            params = {"sessionId": SESSION, **step.get("params", {})}
            if params.get("terminalId") == "$terminal":  # the terminal made last
                params["terminalId"] = TERMINAL[0]
            send({"id": NEXT_ID[0], "method": step["request"], "params": params})
            answer = wait_answer(NEXT_ID[0])
            if answer is None:
                sys.exit(0)
            ANSWERS.append({"method": step["request"], **answer})
            result = answer.get("result")
            if isinstance(result, dict) and isinstance(result.get("terminalId"), str):
                TERMINAL[0] = result["terminalId"]
            with open(ANSWERS_PATH, "w", encoding="utf-8") as handle:
                json.dump(ANSWERS, handle)
        elif "symlink" in step:
            target, name = step["symlink"]
            if os.path.lexists(name):
                os.unlink(name)
            os.symlink(target, name)
        elif "notify" in step:
            send({"method": step["notify"], "params": step.get("params", {})})
        elif "update" in step:
            send(
                {
                    "method": "session/update",
                    "params": {"sessionId": SESSION, "update": step["update"]},
                }
            )


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if method == "initialize":
            send({"id": request_id, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new":
            send({"id": request_id, "result": {"sessionId": SESSION}})
        elif method == "session/prompt":
            play()
            send({"id": request_id, "result": {"stopReason": "end_turn"}})
        elif request_id is not None and method is not None:
            send({"id": request_id, "error": {"code": -32601, "message": "not here"}})


if __name__ == "__main__":
    main()
