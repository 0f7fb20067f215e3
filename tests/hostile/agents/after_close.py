"""An agent (v1) that keeps talking to a session after the client closed it.

    python after_close.py [close]

Each ``session/new`` opens ``s1``, then ``s2``, ... A ``session/prompt`` gets one
``agent_message_chunk`` ("live text"), then the late messages below for every session
prompted before, then a chunk "marker" (once it is in the timeline, the late ones were
read), then the turn's end. The late messages, as if the session were still open: five
chunks ("late text N"), a tool call, a plan, a permission request and a
``terminal/create`` (their answers are not waited for). They are sent for a session on
its ``session/close`` (offered when given ``close``; else the client only cancels a turn,
and the agent is told nothing), and for every prompted session once stdin ends (the
client shuts the agent down). Standard library only.
"""

from __future__ import annotations

import json
import sys
from typing import Any

OFFERS_CLOSE = sys.argv[1:] == ["close"]
SESSIONS: list[str] = []
#: The sessions that had a turn, in order.
PROMPTED: list[str] = []
NEXT_ID = [5000]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def update(session: str, body: dict[str, Any]) -> None:
    send({"method": "session/update", "params": {"sessionId": session, "update": body}})


def chunk(session: str, text: str) -> None:
    update(
        session,
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
    )


def request(method: str, params: dict[str, Any]) -> None:
    """A request whose answer is not waited for (read and dropped by the main loop)."""
    NEXT_ID[0] += 1
    send({"id": NEXT_ID[0], "method": method, "params": params})


def late(sessions: list[str]) -> None:
    """Everything an agent could send for a session, for each of ``sessions``."""
    for session in sessions:
        for number in range(5):
            chunk(session, f"late text {number}")
        update(
            session,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": f"late-{session}",
                "title": "late tool call",
                "kind": "execute",
                "status": "in_progress",
            },
        )
        update(
            session,
            {
                "sessionUpdate": "plan",
                "entries": [{"content": "late plan", "priority": "high", "status": "pending"}],
            },
        )
        request(
            "session/request_permission",
            {
                "sessionId": session,
                "toolCall": {"toolCallId": f"late-{session}", "title": "late"},
                "options": [{"optionId": "y", "name": "Yes", "kind": "allow_once"}],
            },
        )
        request("terminal/create", {"sessionId": session, "command": "echo late"})


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if method == "initialize":
            capabilities: dict[str, Any] = {"loadSession": False}
            if OFFERS_CLOSE:
                capabilities["sessionCapabilities"] = {"close": {}}
            send(
                {
                    "id": request_id,
                    "result": {"protocolVersion": 1, "agentCapabilities": capabilities},
                }
            )
        elif method == "session/new":
            SESSIONS.append(f"s{len(SESSIONS) + 1}")
            send({"id": request_id, "result": {"sessionId": SESSIONS[-1]}})
        elif method == "session/close":
            send({"id": request_id, "result": {}})
            late([str(params.get("sessionId"))])
        elif method == "session/prompt":
            session = str(params.get("sessionId"))
            chunk(session, "live text")
            late([earlier for earlier in PROMPTED if earlier != session])
            PROMPTED.append(session)
            chunk(session, "marker")
            send({"id": request_id, "result": {"stopReason": "end_turn"}})
        elif request_id is not None and method is not None:
            send({"id": request_id, "error": {"code": -32601, "message": "not here"}})
    # The client closed this side (it shuts the agent down): one last word for each.
    late(PROMPTED)


if __name__ == "__main__":
    main()
