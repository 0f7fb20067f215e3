"""What the checkpoints found is the truth under every file change: from a session's traffic
(its ``checkpoint`` and ``change`` lines), whatever else the agent, the client's reads or a
plugin say of the edit."""

from __future__ import annotations

import hashlib
from typing import Any

from acp_adapters import FileChangeItem, Provider, hookimpl, project_capture
from acp_adapters.testing import plugin_manager

WS = "/ws"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _side(text: str | None, mode: int = 0o644) -> dict[str, Any] | None:
    if text is None:
        return None
    return {"kind": "file", "mode": mode, "size": len(text), "oid": _sha(text), "text": text}


def _session(*turn: dict[str, Any]) -> list[dict[str, Any]]:
    def out(message: dict[str, Any]) -> dict[str, Any]:
        return {"dir": "client->agent", "t": 0, "msg": {"jsonrpc": "2.0", **message}}

    def back(message: dict[str, Any]) -> dict[str, Any]:
        return {"dir": "agent->client", "t": 0, "msg": {"jsonrpc": "2.0", **message}}

    return [
        out({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}}),
        back({"id": 1, "result": {"protocolVersion": 1, "agentInfo": {"name": "fake-agent"}}}),
        out({"id": 2, "method": "session/new", "params": {"cwd": WS, "mcpServers": []}}),
        back({"id": 2, "result": {"sessionId": "s"}}),
        {"dir": "checkpoint", "t": 0, "id": "c0", "reason": "turn_start", "turn": 1},
        out({"id": 3, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}}),
        *turn,
        back({"id": 3, "result": {"stopReason": "end_turn"}}),
    ]


def _update(update: dict[str, Any]) -> dict[str, Any]:
    return {
        "dir": "agent->client",
        "t": 0,
        "msg": {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s", "update": update},
        },
    }


def _edit_completed(diff: dict[str, Any]) -> dict[str, Any]:
    return _update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "e1",
            "title": "Edit a.py",
            "kind": "edit",
            "status": "completed",
            "content": [diff],
        }
    )


def _changed(path: str, before: str | None, after: str | None, call: str | None) -> list[Any]:
    checkpoint = f"tool:{call}" if call else "c1"
    return [
        {
            "dir": "checkpoint",
            "t": 0,
            "id": checkpoint,
            "reason": "tool_call" if call else "turn_end",
            "turn": 1,
            "toolCallId": call,
        },
        {
            "dir": "change",
            "t": 0,
            "checkpoint": checkpoint,
            "toolCallId": call,
            "path": path,
            "movedFrom": None,
            "before": _side(before),
            "after": _side(after),
        },
    ]


class ProviderPatches:
    """A provider plugin that says what its agent's edit was (a patch of its own)."""

    @hookimpl
    def register_providers(self, register: Any) -> None:
        register(Provider(id="fake", name="Fake", agent_names=("fake-agent",)))

    @hookimpl
    def project_file_change(self, provider: Provider, tool_call: Any) -> FileChangeItem | None:
        if provider.id != "fake":
            return None
        patch = f"--- {WS}/a.py\n+++ {WS}/a.py\n@@ -1,1 +1,1 @@\n-a = 1\n+a = 3\n"
        return FileChangeItem(
            title="the provider's title",
            paths=(f"{WS}/a.py",),
            diff_str=patch,
            patch_source="provider_meta",
        )


def test_a_plugins_patch_gives_way_to_the_workspaces_change() -> None:
    diff = {"type": "diff", "path": f"{WS}/a.py", "oldText": "a = 1\n", "newText": "a = 3\n"}
    lines = _session(_edit_completed(diff), *_changed(f"{WS}/a.py", "a = 1\n", "a = 2\n", "e1"))
    pm = plugin_manager(ProviderPatches())
    (change,) = project_capture(lines, pm=pm).of_kind("file_change")
    assert change.title == "the provider's title"  # the rest of the item is the plugin's
    assert change.patch_source == "checkpoint"
    assert change.diff_str == f"--- {WS}/a.py\n+++ {WS}/a.py\n@@ -1,1 +1,1 @@\n-a = 1\n+a = 2\n"
    assert change.patch_note == "the provider_meta's patch is not the workspace's change"
    # Without the checkpoint, the plugin's patch stands.
    (alone,) = project_capture(lines[:-2] + lines[-1:], pm=pm).of_kind("file_change")
    assert (alone.patch_source, alone.patch_note) == ("provider_meta", None)


def test_an_agents_report_that_the_files_do_not_show_is_no_change() -> None:
    diff = {"type": "diff", "path": f"{WS}/a.py", "oldText": None, "newText": "a = 1\n"}
    lines = _session(_edit_completed(diff), *_changed(f"{WS}/a.py", "a = 0\n", "a = 1\n", "e1"))
    (change,) = project_capture(lines).of_kind("file_change")
    # The agent said it created a.py; the workspace had it before: a modification.
    assert change.operations == {f"{WS}/a.py": "modify"}
    assert change.diff_str is not None
    assert change.diff_str.startswith(f"--- {WS}/a.py\n")


def test_a_change_no_tool_call_claimed_is_an_item_of_its_own() -> None:
    lines = _session(*_changed(f"{WS}/made.txt", None, "by a shell\n", None))
    (change,) = project_capture(lines).of_kind("file_change")
    assert (change.tool_call_id, change.tool_kind, change.status) == (
        None,
        "unattributed",
        "completed",
    )
    assert change.operations == {f"{WS}/made.txt": "add"}
    assert change.title == f"created {WS}/made.txt"


def test_bad_checkpoint_lines_are_left_out_and_named() -> None:
    bad = [
        {"dir": "checkpoint", "t": 0, "id": 7, "reason": "turn_end"},
        {"dir": "checkpoint", "t": 0, "id": "x", "reason": "sometime"},
        {"dir": "change", "t": 0, "checkpoint": "x", "path": "", "before": None, "after": None},
        {"dir": "change", "t": 0, "checkpoint": "x", "path": "/ws/a", "after": {"kind": "dir"}},
        {
            "dir": "change",
            "t": 0,
            "checkpoint": "x",
            "path": "/ws/a",
            "after": {"kind": "file", "mode": -1},
        },
    ]
    timeline = project_capture(_session(*bad))
    assert timeline.of_kind("file_change") == []
    assert len(timeline.problems) == len(bad)
    assert all(
        "not a checkpoint entry" in p or "not a change entry" in p for p in timeline.problems
    )
