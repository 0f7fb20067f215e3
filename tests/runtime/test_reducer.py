"""The reducer: both versions into one state, with each version's update semantics."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from acp_adapters.runtime import DiffV1, DiffV2, Reducer, SessionState, UnknownContent


def _reducer(version: int = 1) -> Reducer:
    return Reducer(SessionState(version=version))


def _apply(reducer: Reducer, *updates: dict[str, Any]) -> Reducer:
    for update in updates:
        reducer.apply_notification({"sessionId": "s1", "update": update})
    return reducer


def _state(version: int, *updates: dict[str, Any]) -> dict[str, Any]:
    return _apply(_reducer(version), *updates).state.snapshot()


# --- v1 and v2 equivalents give the same state ------------------------------------------------

TEXT = {"type": "text", "text": "hello "}
MORE = {"type": "text", "text": "world"}

PAIRS: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
    "agent message chunks": (
        [
            {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": TEXT},
            {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": MORE},
        ],
        [
            {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": TEXT},
            {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": MORE},
        ],
    ),
    "thought and user chunks": (
        [
            {"sessionUpdate": "agent_thought_chunk", "messageId": "t1", "content": TEXT},
            {"sessionUpdate": "user_message_chunk", "messageId": "u1", "content": MORE},
        ],
        [
            {"sessionUpdate": "agent_thought_chunk", "messageId": "t1", "content": TEXT},
            {"sessionUpdate": "user_message_chunk", "messageId": "u1", "content": MORE},
        ],
    ),
    "whole message against chunks": (
        [
            {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": TEXT},
            {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": MORE},
        ],
        [{"sessionUpdate": "agent_message", "messageId": "m1", "content": [TEXT, MORE]}],
    ),
    "tool call then updates": (
        [
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "Edit a.py",
                "kind": "edit",
                "status": "pending",
                "locations": [{"path": "/ws/a.py"}],
                "rawInput": {"path": "/ws/a.py"},
            },
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t1",
                "status": "completed",
                "content": [{"type": "content", "content": MORE}],
            },
        ],
        [
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t1",
                "title": "Edit a.py",
                "kind": "edit",
                "status": "pending",
                "locations": [{"path": "/ws/a.py"}],
                "rawInput": {"path": "/ws/a.py"},
            },
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t1",
                "status": "completed",
                "content": [{"type": "content", "content": MORE}],
            },
        ],
    ),
    "content list against content chunks": (
        [
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "Run",
                "kind": "execute",
                "content": [
                    {"type": "content", "content": TEXT},
                    {"type": "terminal", "terminalId": "term-1"},
                ],
            }
        ],
        [
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t1",
                "title": "Run",
                "kind": "execute",
            },
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "t1",
                "content": {"type": "content", "content": TEXT},
            },
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "t1",
                "content": {"type": "terminal", "terminalId": "term-1"},
            },
        ],
    ),
    "plan": (
        [
            {
                "sessionUpdate": "plan",
                "entries": [{"content": "read", "priority": "high", "status": "completed"}],
            }
        ],
        [
            {
                "sessionUpdate": "plan_update",
                "plan": {
                    "type": "items",
                    "planId": "plan",
                    "entries": [{"content": "read", "priority": "high", "status": "completed"}],
                },
            }
        ],
    ),
    "commands": (
        [
            {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [
                    {"name": "init", "description": "Set up", "input": {"hint": "[path]"}},
                    {"name": "help", "description": "Help"},
                ],
            }
        ],
        [
            {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [
                    {
                        "name": "init",
                        "description": "Set up",
                        "input": {"type": "text", "hint": "[path]"},
                    },
                    {"name": "help", "description": "Help"},
                ],
            }
        ],
    ),
    "config options": (
        [
            {
                "sessionUpdate": "config_option_update",
                "configOptions": [
                    {
                        "id": "model",
                        "name": "Model",
                        "type": "select",
                        "currentValue": "fast",
                        "options": [
                            {"value": "fast", "name": "Fast"},
                            {"value": "slow", "name": "Slow"},
                        ],
                    }
                ],
            }
        ],
        [
            {
                "sessionUpdate": "config_option_update",
                "configOptions": [
                    {
                        "configId": "model",
                        "name": "Model",
                        "type": "select",
                        "currentValue": "fast",
                        "options": [
                            {"value": "fast", "name": "Fast"},
                            {"value": "slow", "name": "Slow"},
                        ],
                    }
                ],
            }
        ],
    ),
    "session info and usage": (
        [
            {"sessionUpdate": "session_info_update", "title": "Fix it", "updatedAt": "2026-11-30"},
            {
                "sessionUpdate": "usage_update",
                "used": 10,
                "size": 100,
                "cost": {"amount": 0.5, "currency": "USD"},
            },
        ],
        [
            {"sessionUpdate": "session_info_update", "title": "Fix it", "updatedAt": "2026-11-30"},
            {
                "sessionUpdate": "usage_update",
                "used": 10,
                "size": 100,
                "cost": {"amount": 0.5, "currency": "USD"},
            },
        ],
    ),
}


@pytest.mark.parametrize("name", PAIRS)
def test_a_v1_update_and_its_v2_equivalent_give_the_same_state(name: str) -> None:
    first, second = PAIRS[name]
    assert _state(1, *first) == _state(2, *second)
    assert _state(1, *first)["unknown"] == []


# --- semantics ----------------------------------------------------------------------------------


def test_v1_update_for_an_unknown_id_creates_the_tool_call() -> None:
    state = _apply(
        _reducer(1),
        {"sessionUpdate": "tool_call_update", "toolCallId": "t9", "status": "in_progress"},
    ).state
    assert state.tool_calls["t9"].status == "in_progress"
    assert state.tool_calls["t9"].kind == "other"


def test_v1_fields_present_replace_and_null_leaves_them() -> None:
    state = _apply(
        _reducer(1),
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t",
            "title": "A",
            "content": [{"type": "content", "content": TEXT}],
        },
        {"sessionUpdate": "tool_call_update", "toolCallId": "t", "title": None, "content": None},
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t",
            "locations": [{"path": "/x", "line": 3}],
        },
    ).state
    call = state.tool_calls["t"]
    assert call.title == "A"
    assert len(call.content) == 1
    assert call.locations[0].line == 3
    state = _apply(
        _reducer(1), {"sessionUpdate": "tool_call_update", "toolCallId": "t", "content": []}
    ).state
    assert state.tool_calls["t"].content == ()


def test_v2_update_omitted_unchanged_null_cleared_value_replaced() -> None:
    reducer = _apply(
        _reducer(2),
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t",
            "title": "A",
            "kind": "edit",
            "rawInput": {"x": 1},
            "content": [{"type": "content", "content": TEXT}],
        },
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t",
            "title": None,
            "status": "in_progress",
        },
    )
    call = reducer.state.tool_calls["t"]
    assert (call.title, call.kind, call.status, call.raw_input) == (
        None,
        "edit",
        "in_progress",
        {"x": 1},
    )
    assert len(call.content) == 1
    _apply(
        reducer,
        {"sessionUpdate": "tool_call_update", "toolCallId": "t", "content": None, "kind": 7},
    )
    call = reducer.state.tool_calls["t"]
    assert call.content == ()
    assert call.kind == "edit"  # a malformed value leaves the field as it was


def test_chunks_without_message_id_continue_their_message_until_something_else_comes() -> None:
    state = _apply(
        _reducer(1),
        {"sessionUpdate": "agent_message_chunk", "content": TEXT},
        {"sessionUpdate": "agent_message_chunk", "content": MORE},
        {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x"},
        {"sessionUpdate": "agent_message_chunk", "content": MORE},
        {"sessionUpdate": "agent_thought_chunk", "content": TEXT},
        {"sessionUpdate": "agent_message_chunk", "content": TEXT},
    ).state
    assert [(m.role, m.text) for m in state.messages.values()] == [
        ("agent", "hello world"),
        ("agent", "world"),
        ("thought", "hello "),
        ("agent", "hello "),
    ]


def test_non_text_blocks_are_kept_in_order() -> None:
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    state = _apply(
        _reducer(2),
        {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": TEXT},
        {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": image},
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m",
            "content": {"type": "hologram", "x": 1},
        },
    ).state
    assert [b.type for b in state.messages["m"].blocks] == ["text", "image", "hologram"]


def test_diff_variants_are_kept_side_by_side() -> None:
    v1_state = _apply(
        _reducer(1),
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t",
            "title": "w",
            "content": [{"type": "diff", "path": "/a", "newText": "x"}],
        },
    ).state
    v2_state = _apply(
        _reducer(2),
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t",
            "content": [
                {
                    "type": "diff",
                    "changes": [{"operation": "add", "path": "/a"}],
                    "patch": {"format": "git_patch", "text": "p"},
                },
                {"type": "future", "x": 1},
            ],
        },
    ).state
    (v1_diff,) = v1_state.tool_calls["t"].content
    assert isinstance(v1_diff, DiffV1)
    assert v1_diff.old_text is None
    v2_diff, unknown = v2_state.tool_calls["t"].content
    assert isinstance(v2_diff, DiffV2)
    assert v2_diff.changes[0].operation == "add"
    assert isinstance(unknown, UnknownContent)
    assert unknown.raw == {"type": "future", "x": 1}


def test_v2_turn_state_and_terminal_output() -> None:
    half = "é".encode()  # two bytes, sent in two chunks
    reducer = _apply(
        _reducer(2),
        {"sessionUpdate": "state_update", "state": "running"},
        {"sessionUpdate": "terminal_update", "terminalId": "term", "command": "ls", "cwd": "/ws"},
        {
            "sessionUpdate": "terminal_output_chunk",
            "terminalId": "term",
            "data": base64.b64encode(b"caf" + half[:1]).decode(),
        },
        {
            "sessionUpdate": "terminal_output_chunk",
            "terminalId": "term",
            "data": base64.b64encode(half[1:]).decode(),
        },
        {"sessionUpdate": "terminal_update", "terminalId": "term", "exitStatus": {"exitCode": 0}},
    )
    state = reducer.state
    assert state.turn_state.state == "running"
    terminal = state.terminals["term"]
    assert terminal.text == "café"
    assert (terminal.exited, terminal.exit_code, terminal.command) == (True, 0, "ls")
    _apply(
        reducer,
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "term",
            "output": {"data": base64.b64encode(b"new").decode()},
        },
    )
    assert state.terminals["term"].text == "new"
    _apply(reducer, {"sessionUpdate": "state_update", "state": "requires_action"})
    assert state.turn_state.state == "requires_action"
    _apply(reducer, {"sessionUpdate": "state_update", "state": "idle", "stopReason": "max_tokens"})
    assert (state.turn_state.state, state.turn_state.stop_reason) == ("idle", "max_tokens")


def test_v2_plans_are_kept_by_id() -> None:
    entry = {"content": "x", "priority": "low", "status": "pending"}
    state = _apply(
        _reducer(2),
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "a", "entries": [entry]},
        },
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "b", "entries": [entry, entry]},
        },
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "a", "entries": []}},
    ).state
    assert {k: len(p.entries) for k, p in state.plans.items()} == {"a": 0, "b": 2}


@pytest.mark.parametrize(
    ("version", "update"),
    [
        (
            2,
            {
                "sessionUpdate": "notice",
                "severity": "warning",
                "title": "Claude reported a warning",
            },
        ),
        (1, {"sessionUpdate": "notice", "severity": "warning", "title": "t"}),
        (1, {"sessionUpdate": "tool_call", "toolCallId": "t"}),  # no title: invalid in v1
        (2, {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "text": "# plan"}}),
        (2, {"sessionUpdate": "state_update", "state": "hibernating"}),
        (1, "not even an object"),
    ],
)
def test_what_is_not_understood_is_kept_as_unknown(version: int, update: Any) -> None:
    reducer = _reducer(version)
    reducer.apply_notification({"sessionId": "s", "update": update})
    (unknown,) = reducer.state.unknown
    assert unknown.raw in (update, {"sessionId": "s", "update": update})
    assert unknown.reason


def test_turn_end_closes_unfinished_tool_calls() -> None:
    reducer = _apply(
        _reducer(1),
        {"sessionUpdate": "tool_call", "toolCallId": "a", "title": "x", "status": "in_progress"},
        {"sessionUpdate": "tool_call", "toolCallId": "b", "title": "y", "status": "completed"},
    )
    reducer.end_turn("cancelled")
    assert dict(reducer.state.ended_tool_calls) == {"a": "cancelled"}


def test_permission_requests_create_the_tool_call_they_name() -> None:
    reducer = _reducer(1)
    reducer.apply_permission_request(
        "7",
        {
            "sessionId": "s",
            "toolCall": {
                "toolCallId": "t",
                "kind": "edit",
                "content": [{"type": "diff", "path": "/a", "newText": "x"}],
            },
            "options": [{"optionId": "ok", "name": "Yes", "kind": "allow_once"}],
        },
    )
    call = reducer.state.tool_calls["t"]
    assert call.kind == "edit"
    assert not call.reported
    reducer.apply_permission_answer("7", {"outcome": {"outcome": "selected", "optionId": "ok"}})
    permission = reducer.state.permissions["7"]
    assert (permission.outcome, permission.option_kind) == ("selected", "allow_once")
    _apply(reducer, {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Edit"})
    assert reducer.state.tool_calls["t"].reported


def test_v2_permission_subjects() -> None:
    reducer = _reducer(2)
    reducer.apply_permission_request(
        "1",
        {
            "sessionId": "s",
            "title": "Run ls?",
            "subject": {"type": "command", "command": "ls", "cwd": "/ws", "toolCallId": "t"},
            "options": [{"optionId": "y", "name": "Yes", "kind": "allow_once"}],
        },
    )
    assert reducer.state.permissions["1"].tool_call_id == "t"
    reducer.apply_permission_request(
        "2",
        {
            "sessionId": "s",
            "title": "Edit?",
            "subject": {"type": "tool_call", "toolCall": {"toolCallId": "u", "kind": "edit"}},
            "options": [],
        },
    )
    assert reducer.state.tool_calls["u"].kind == "edit"


def test_file_writes_belong_to_the_tool_call_editing_that_path() -> None:
    reducer = _apply(
        _reducer(1),
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "old",
            "title": "x",
            "status": "completed",
            "locations": [{"path": "/a"}],
        },
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "w",
            "title": "Write",
            "kind": "edit",
            "rawInput": {"path": "/a"},
        },
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "other",
            "title": "x",
            "rawInput": {"path": "/b"},
        },
    )
    reducer.apply_file_read("/a", "1\n")
    reducer.apply_file_write("/a", "2\n")
    reducer.apply_file_write("/c", "3\n")
    view = reducer.state.view()
    assert [e.tool_call_id for e in view.writes_of("w")] == ["w"]
    assert view.file_before("/a", 10_000).content == "2\n"
    assert [e.tool_call_id for e in view.files] == [None, "w", None]


@pytest.mark.parametrize("version", [1, 2])
def _diff(version: int, text: str) -> dict[str, Any]:
    if version == 1:
        return {"type": "diff", "path": "/ws/new.txt", "oldText": None, "newText": text}
    return {
        "type": "diff",
        "changes": [{"operation": "add", "path": "/ws/new.txt"}],
        "patch": {"format": "git_patch", "text": f"+{text}"},
    }


@pytest.mark.parametrize("version", [1, 2])
def test_diffs_replaced_by_other_content_are_still_known(version: int) -> None:
    """A refused edit's last update may replace its diff with the error text only."""
    refusal = {"type": "content", "content": {"type": "text", "text": "refused"}}
    reducer = _apply(
        _reducer(version),
        {"sessionUpdate": "tool_call_update", "toolCallId": "t", "kind": "edit"},
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t",
            "content": [_diff(version, "brand new\n")],
        },
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t",
            "status": "failed",
            "content": [refusal],
        },
    )
    call = reducer.state.tool_calls["t"]
    assert [type(item).__name__ for item in call.content] == ["ContentItem"]
    (reported,) = call.diffs_reported
    assert isinstance(reported, DiffV1 | DiffV2)
    # Content without a diff never clears what was reported; a newer diff replaces it.
    _apply(
        reducer,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t",
            "content": [_diff(version, "newer\n")],
        },
    )
    (newer,) = reducer.state.tool_calls["t"].diffs_reported
    assert newer != reported
