"""An ACP 1 agent that misbehaves on purpose: ``python hostile_agent.py SCENARIO``.

* ``ask-then-exit``: asks a permission (its title holds a terminal escape) and exits
  with status 3 while the question waits, its stderr ending with an escape too;
* ``escapes``: streams a message that holds terminal escapes, then ends the turn.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

SCENARIO = sys.argv[1]
SESSION = "hostile-session"
#: Sets the terminal's title (OSC 0), and rings the bell.
TITLE_ESCAPE = "\x1b]0;owned\x07"


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def update(update: dict[str, Any]) -> None:
    send({"method": "session/update", "params": {"sessionId": SESSION, "update": update}})


def turn(prompt_id: Any) -> None:
    if SCENARIO == "ask-then-exit":
        options = [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ]
        call = {"toolCallId": "t1", "title": f"edit {TITLE_ESCAPE}x", "kind": "edit"}
        send(
            {
                "id": "ask-1",
                "method": "session/request_permission",
                "params": {"sessionId": SESSION, "toolCall": call, "options": options},
            }
        )
        time.sleep(0.5)  # the question is on the screen, waiting for its answer
        sys.stderr.write(f"fatal: {TITLE_ESCAPE}gone\n")
        sys.stderr.flush()
        sys.exit(3)
    for chunk in ("safe ", f"then {TITLE_ESCAPE}", "\x1b[2Jcleared\n"):
        update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": chunk}})
    send({"id": prompt_id, "result": {"stopReason": "end_turn"}})


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, message_id = message.get("method"), message.get("id")
        if method == "initialize":
            info = {"name": "hostile-agent", "version": "0.1"}
            result = {"protocolVersion": 1, "agentCapabilities": {}, "agentInfo": info}
            send({"id": message_id, "result": result})
        elif method == "session/new":
            send({"id": message_id, "result": {"sessionId": SESSION}})
        elif method == "session/prompt":
            turn(message_id)


if __name__ == "__main__":
    main()
