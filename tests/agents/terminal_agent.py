"""A v1 ACP agent that runs a script of terminal requests, for the client's terminal tests.

    python terminal_agent.py STEPS_JSON WORKSPACE

On ``session/prompt`` it plays the steps in order and writes every answer it gets
to ``WORKSPACE/answers.jsonl`` (``{"name": ..., "answer": ...}`` a line). A step:

* ``{"name": N, "method": M, "params": P}``: send request M; ``"terminal": N2`` in P
  is replaced by ``"terminalId"`` from the answer to step N2;
* ``{"until_file": F}``: wait until the workspace file F holds a process id;
* ``{"until_gone": F}``: wait until the process whose id F holds has ended
  (a zombie has ended: its parent just has not collected it yet);
* ``{"sleep": S}``: wait S seconds;
* ``{"end_turn": true}``: answer the prompt now; the steps after it run once the
  turn is over, while the client may be closing the session.

The turn ends after the last step unless a step ended it. Standard library only.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any

STEPS: list[dict[str, Any]] = json.loads(sys.argv[1])
WORKSPACE = Path(sys.argv[2])
ANSWERS = WORKSPACE / "answers.jsonl"
INBOX: deque[dict[str, Any]] = deque()
SESSION = "terminal-session"
NEXT_ID = [0]
WAIT_SECONDS = 20


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def read() -> dict[str, Any] | None:
    if INBOX:
        return INBOX.popleft()
    line = sys.stdin.readline()
    return json.loads(line) if line else None


def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Send a request to the client and wait for its answer (other messages wait in line)."""
    NEXT_ID[0] += 1
    request_id = NEXT_ID[0]
    send({"id": request_id, "method": method, "params": {"sessionId": SESSION, **params}})
    held: list[dict[str, Any]] = []
    while True:
        line = sys.stdin.readline()
        if not line:  # the client closed: no answer will come
            record("client-closed", None)
            sys.exit(0)
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == request_id and "method" not in message:
            INBOX.extend(held)
            return message
        held.append(message)


def record(name: str, answer: Any) -> None:
    with ANSWERS.open("a") as answers:
        answers.write(json.dumps({"name": name, "answer": answer}) + "\n")


def process_id(file: str) -> int:
    deadline = time.monotonic() + WAIT_SECONDS
    path = WORKSPACE / file
    while time.monotonic() < deadline:
        text = path.read_text().strip() if path.exists() else ""
        if text.isdigit():
            return int(text)
        time.sleep(0.01)
    raise SystemExit(f"{file} holds no process id")


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    with_state = stat.read_text() if stat.exists() else ""
    return not with_state or with_state.rsplit(")", 1)[1].split()[0] != "Z"


def until_gone(file: str) -> None:
    pid = process_id(file)
    deadline = time.monotonic() + WAIT_SECONDS
    while running(pid):
        if time.monotonic() > deadline:
            raise SystemExit(f"process {pid} still runs")
        time.sleep(0.01)


def turn(prompt_id: Any) -> None:
    answered = False
    terminal_ids: dict[str, Any] = {}
    for step in STEPS:
        if step.get("end_turn"):
            send({"id": prompt_id, "result": {"stopReason": "end_turn"}})
            answered = True
        elif "until_file" in step:
            process_id(step["until_file"])
        elif "until_gone" in step:
            until_gone(step["until_gone"])
        elif "sleep" in step:
            time.sleep(step["sleep"])
        else:
            params = dict(step.get("params", {}))
            if "terminal" in params:
                params["terminalId"] = terminal_ids[params.pop("terminal")]
            answer = request(step["method"], params)
            record(step["name"], answer)
            terminal_ids[step["name"]] = answer.get("result", {}).get("terminalId")
    if not answered:
        send({"id": prompt_id, "result": {"stopReason": "end_turn"}})


def main() -> None:
    while (message := read()) is not None:
        method, msg_id = message.get("method"), message.get("id")
        if method == "initialize":
            send(
                {
                    "id": msg_id,
                    "result": {
                        "protocolVersion": 1,
                        "agentCapabilities": {},
                        "agentInfo": {"name": "terminal-agent", "version": "0.1"},
                    },
                }
            )
        elif method == "session/new":
            send({"id": msg_id, "result": {"sessionId": SESSION}})
        elif method == "session/prompt":
            turn(msg_id)
        elif method is not None and msg_id is not None:
            send({"id": msg_id, "error": {"code": -32601, "message": f"no method {method}"}})


if __name__ == "__main__":
    main()
