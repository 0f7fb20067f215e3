"""One connection, several sessions: a capture's traffic read for one session is that
session's traffic alone, however the sessions' messages interleave (a property), and a
session's traffic never leaks into another's."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from acp_adapters import capture_sessions, project_capture

INITIALIZE = [
    {
        "dir": "client->agent",
        "msg": {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": 1},
        },
    },
    {
        "dir": "agent->client",
        "msg": {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {"protocolVersion": 1, "agentCapabilities": {}},
        },
    },
]


def session_lines(name: str, base: int, words: list[str], *, opening: str) -> list[dict[str, Any]]:
    """One session's traffic: opened (new, load or resume), then a turn per word, each with
    the agent's reply streamed in two chunks and a tool call."""
    session_id = f"session-{name}"
    lines: list[dict[str, Any]] = []

    def out(message: dict[str, Any]) -> None:
        lines.append({"dir": "client->agent", "msg": {"jsonrpc": "2.0", **message}})

    def back(message: dict[str, Any]) -> None:
        lines.append({"dir": "agent->client", "msg": {"jsonrpc": "2.0", **message}})

    params: dict[str, Any] = {"cwd": f"/work/{name}", "mcpServers": []}
    if opening != "session/new":
        params["sessionId"] = session_id
    out({"id": base, "method": opening, "params": params})
    back({"id": base, "result": {"sessionId": session_id} if opening == "session/new" else {}})
    for number, word in enumerate(words, start=1):
        prompt_id = base + number
        out(
            {
                "id": prompt_id,
                "method": "session/prompt",
                "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": word}]},
            }
        )
        for piece in (f"{name} says ", word):
            back(
                {
                    "method": "session/update",
                    "params": {
                        "sessionId": session_id,
                        "update": {
                            "sessionUpdate": "agent_message_chunk",
                            "content": {"type": "text", "text": piece},
                        },
                    },
                }
            )
        back(
            {
                "method": "session/update",
                "params": {
                    "sessionId": session_id,
                    "update": {
                        "sessionUpdate": "tool_call",
                        "toolCallId": f"call-{number}",
                        "title": f"look at {word}",
                        "kind": "read",
                        "status": "completed",
                    },
                },
            }
        )
        back({"id": prompt_id, "result": {"stopReason": "end_turn"}})
    return lines


def shape(lines: list[dict[str, Any]], session_id: str | None = None) -> list[tuple[Any, ...]]:
    timeline = project_capture(lines, session_id=session_id)
    return [
        (item.id, item.kind, item.turn, item.ordinal, getattr(item, "text", None), item.session_id)
        for item in timeline
    ]


words = st.lists(st.sampled_from(["apples", "pears", "plums", "figs"]), min_size=1, max_size=4)
openings = st.sampled_from(["session/new", "session/load", "session/resume"])


@settings(max_examples=60, deadline=None)
@given(
    first=words,
    second=words,
    first_opening=openings,
    second_opening=openings,
    picks=st.lists(st.booleans(), min_size=80, max_size=80),
)
def test_a_session_read_from_interleaved_traffic_is_that_session_alone(
    first: list[str],
    second: list[str],
    first_opening: str,
    second_opening: str,
    picks: list[bool],
) -> None:
    a = session_lines("a", 100, first, opening=first_opening)
    b = session_lines("b", 200, second, opening=second_opening)
    merged: list[dict[str, Any]] = list(INITIALIZE)
    left, right = list(a), list(b)
    for pick in picks:  # an interleaving that keeps each session's own order
        if left and (pick or not right):
            merged.append(left.pop(0))
        elif right:
            merged.append(right.pop(0))
    merged += left + right
    alone_a, alone_b = shape(INITIALIZE + a), shape(INITIALIZE + b)
    assert shape(merged, "session-a") == alone_a
    assert shape(merged, "session-b") == alone_b
    assert {row[5] for row in alone_b} == {"session-b"}
    # The first opened is the default, and both are listed in the order they opened.
    opened = capture_sessions(merged)
    assert sorted(opened) == ["session-a", "session-b"]
    assert shape(merged) == (alone_a if opened[0] == "session-a" else alone_b)


def test_an_update_for_another_session_never_reaches_this_one() -> None:
    a = session_lines("a", 100, ["apples"], opening="session/new")
    stray = {
        "dir": "agent->client",
        "msg": {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "session-b",
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "not yours"},
                },
            },
        },
    }
    lines = INITIALIZE + a[:2] + [stray] + a[2:]
    assert "not yours" not in str(shape(lines, "session-a"))
    assert shape(lines, "session-a") == shape(INITIALIZE + a)
