"""The wire models keep the schemas' rules: malformed values are dropped or defaulted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from acp_adapters.protocol import parse_notification, v1, v2

CAPTURES = Path(__file__).parents[1] / "data" / "captures"


def _update(version: int, update: dict[str, Any]) -> Any:
    return parse_notification({"sessionId": "s", "update": update}, version).update  # type: ignore[arg-type]


def _tool_call(**fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit", **fields}


def test_a_malformed_field_with_default_on_error_takes_its_default() -> None:
    call = _update(1, _tool_call(kind="teleport", status=42, locations="nowhere", rawInput=None))
    assert call.kind == "other"
    assert call.status == "pending"
    assert call.locations == []
    assert call.title == "Edit"


def test_a_malformed_list_item_is_dropped_and_the_others_kept() -> None:
    content = [
        {"type": "diff", "path": "/a", "newText": "x"},
        {"type": "diff", "path": 7, "newText": "x"},  # path must be a string
        {"type": "content", "content": {"type": "text", "text": "hi"}},
        "not an object",
    ]
    call = _update(1, _tool_call(content=content))
    assert [item.type for item in call.content] == ["diff", "content"]
    assert call.content[0].path == "/a"
    assert call.content[0].old_text is None


def test_a_malformed_strict_field_invalidates_the_message() -> None:
    with pytest.raises(ValidationError):
        _update(1, _tool_call(title=None))  # title is required and strict
    with pytest.raises(ValidationError):
        _update(1, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text"}})


def test_v1_unions_are_closed() -> None:
    with pytest.raises(ValidationError):
        _update(1, {"sessionUpdate": "notice", "severity": "warning", "title": "t"})
    call = _update(1, _tool_call(content=[{"type": "hologram", "data": 1}]))
    assert call.content == []  # an unknown content type is an invalid item: dropped
    with pytest.raises(ValidationError):
        _update(1, {"sessionUpdate": "tool_call_updated", "toolCallId": "t"})


def test_v2_unions_and_enums_are_open_and_round_trip() -> None:
    notice = {
        "sessionUpdate": "notice",
        "severity": "warning",
        "title": "Claude reported a warning",
    }
    update = _update(2, notice)
    assert isinstance(update, v2.SessionUpdateOther)
    assert update.to_wire() == notice
    call = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t",
        "kind": "teleport",
        "status": "paused",
        "content": [{"type": "hologram", "data": [1, 2]}, {"type": "terminal", "terminalId": "x"}],
    }
    parsed = _update(2, call)
    assert parsed.kind == "teleport"
    assert parsed.status == "paused"
    assert isinstance(parsed.content[0], v2.ToolCallContentOther)
    assert parsed.to_wire() == call


def test_meta_and_unknown_keys_are_kept_and_round_trip() -> None:
    for version in (1, 2):
        chunk = {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "hi", "_meta": {"a": 1}, "x-extra": [1]},
            "messageId": "m1",
            "_meta": {"claudeCode": {"toolName": "Write"}},
            "future": {"field": True},
        }
        update = _update(version, chunk)
        assert update.meta == {"claudeCode": {"toolName": "Write"}}
        assert update.to_wire() == chunk
    malformed_meta = _update(1, _tool_call(_meta="not an object"))
    assert malformed_meta.meta is None


def test_v2_messages_need_a_message_id() -> None:
    with pytest.raises(ValidationError):
        _update(
            2, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
        )
    assert _update(
        1, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    )


def test_v2_nested_state_update() -> None:
    idle = _update(2, {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
    assert isinstance(idle, v2.IdleStateUpdate)
    assert idle.stop_reason == "end_turn"
    odd = _update(2, {"sessionUpdate": "state_update", "state": "sleeping"})
    assert isinstance(odd, v2.StateUpdateOther)
    assert odd.state == "sleeping"
    bad_reason = _update(2, {"sessionUpdate": "state_update", "state": "idle", "stopReason": 3})
    assert bad_reason.stop_reason is None


def test_v2_diff_changes() -> None:
    diff = {
        "type": "diff",
        "changes": [
            {"operation": "move", "oldPath": "/a", "path": "/b", "fileType": "text"},
            {"operation": "add"},  # invalid (no path): dropped
            {"operation": "chmod", "path": "/c"},  # unknown operation: kept
        ],
        "patch": {"format": "git_patch", "text": "diff --git a/b b/b\n"},
    }
    parsed = TypeAdapter(v2.ToolCallContent).validate_python(diff)
    assert [c.operation for c in parsed.changes] == ["move", "chmod"]
    assert parsed.changes[0].old_path == "/a"
    assert parsed.patch.text == "diff --git a/b b/b\n"
    assert TypeAdapter(v2.ToolCallContent).validate_python({**diff, "patch": 5}).patch is None


def _captured_updates() -> list[tuple[str, int, dict[str, Any]]]:
    found = []
    for path in sorted(CAPTURES.glob("*.jsonl")):
        version = 1
        for line in path.read_text(encoding="utf-8").splitlines():
            message = json.loads(line)["msg"]
            result = message.get("result")
            if isinstance(result, dict) and "protocolVersion" in result:
                # A v2 answer has v2's shape ("info"); echo agents answer 2 with a v1 body.
                version = 2 if result["protocolVersion"] == 2 and "info" in result else 1
            if message.get("method") == "session/update":
                found.append((path.name, version, message["params"]))
    return found


def test_every_captured_update_parses_and_round_trips() -> None:
    updates = _captured_updates()
    assert len(updates) > 150
    assert {version for _, version, _ in updates} == {1, 2}
    for name, version, params in updates:
        assert parse_notification(params, version).to_wire() == params, name  # type: ignore[arg-type]


def test_v1_and_v2_models_are_distinct() -> None:
    assert v1.SCHEMA_VERSION == "1.21.0"
    assert v2.SCHEMA_VERSION == "2.0.0-alpha.3"
    assert not hasattr(v1, "UpdateSessionNotification")
