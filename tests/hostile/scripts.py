"""Running the scripted agent of the hostile tests: a script in, the client's answers out."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

AGENT = Path(__file__).parent / "agents" / "scripted.py"


class Script:
    """A script for ``agents/scripted.py`` in ``folder``, and the answers the client gave."""

    def __init__(self, folder: Path, steps: list[dict[str, Any]]) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "script.json"
        self.answers_path = folder / "answers.json"
        self.path.write_text(json.dumps(steps), encoding="utf-8")

    @property
    def command(self) -> list[str]:
        return [sys.executable, str(AGENT), str(self.path), str(self.answers_path)]

    def answers(self) -> list[dict[str, Any]]:
        if not self.answers_path.exists():
            return []
        answers: list[dict[str, Any]] = json.loads(self.answers_path.read_text(encoding="utf-8"))
        return answers


def run_shell(command: str, **extra: Any) -> dict[str, Any]:
    """A ``terminal/create`` step running ``command`` as a shell line, then waiting for it."""
    return {"request": "terminal/create", "params": {"command": command, **extra}}


#: An agent (v1, standard library) whose every turn runs ``ON_PROMPT(send, read)`` before it
#: ends the turn ``end_turn``: ``send`` writes a message (buffered; flushed after the turn),
#: ``read`` reads the next message from the client.
PIPELINING_AGENT = """
import json, sys
out = sys.stdout.buffer
def send(m):
    out.write((json.dumps({"jsonrpc": "2.0", **m}) + "\\n").encode())
def read():
    return json.loads(sys.stdin.readline())
for raw in sys.stdin:
    m = json.loads(raw)
    if m.get("method") == "initialize":
        send({"id": m["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}}})
    elif m.get("method") == "session/new":
        send({"id": m["id"], "result": {"sessionId": "s"}})
    elif m.get("method") == "session/prompt":
        ON_PROMPT(send, read)
        send({"id": m["id"], "result": {"stopReason": "end_turn"}})
    out.flush()
"""


def pipelining_agent(folder: Path, on_prompt: str) -> list[str]:
    """The command of an agent whose turns run ``on_prompt`` (Python source defining
    ``ON_PROMPT(send, read)``): requests it sends all at once, before it reads any answer."""
    agent = folder / "pipelining_agent.py"
    agent.write_text(on_prompt + PIPELINING_AGENT, encoding="utf-8")
    return [sys.executable, str(agent)]
