"""Capture lines for tests: a recorded session built message by message."""

from __future__ import annotations

import json
from typing import Any


def session_lines(*messages: tuple[str, dict[str, Any]]) -> list[str]:
    """Capture lines of ``(direction, message)`` pairs, at time 0."""
    return [json.dumps({"dir": d, "t": 0.0, "msg": {"jsonrpc": "2.0", **m}}) for d, m in messages]


def one_turn(*updates: dict[str, Any]) -> list[str]:
    """A capture of one v1 turn: the prompt, the agent's ``updates``, the end of the turn."""
    session = {"sessionId": "s"}
    return session_lines(
        ("client->agent", {"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        ("agent->client", {"id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {}}}),
        ("client->agent", {"id": 1, "method": "session/new", "params": {"cwd": "<workspace>"}}),
        ("agent->client", {"id": 1, "result": session}),
        (
            "client->agent",
            {"id": 2, "method": "session/prompt", "params": {**session, "prompt": []}},
        ),
        *(
            ("agent->client", {"method": "session/update", "params": {**session, "update": u}})
            for u in updates
        ),
        ("agent->client", {"id": 2, "result": {"stopReason": "end_turn"}}),
    )
