"""A write the client served that no tool call ever owned is an edit all the same: at the end
of its turn it gets a file_change of its own, with the file as it was just before."""

from __future__ import annotations

import json
from typing import Any

import pluggy

from acp_adapters import FileChangeItem, project_capture
from capture_lines import session_lines
from diff_helpers import apply_patch

PATH = "<workspace>/notes.txt"
SESSION = {"sessionId": "s"}


def _capture(*middle: tuple[str, dict[str, Any]], found: str | None = "old\n") -> list[str]:
    lines = session_lines(
        ("client->agent", {"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        ("agent->client", {"id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {}}}),
        ("client->agent", {"id": 1, "method": "session/new", "params": {"cwd": "<workspace>"}}),
        ("agent->client", {"id": 1, "result": SESSION}),
        (
            "client->agent",
            {"id": 2, "method": "session/prompt", "params": {**SESSION, "prompt": []}},
        ),
    )
    disk = {"dir": "disk", "t": 0, "toolCallId": None, "path": PATH, "phase": "write"}
    write = session_lines(
        (
            "agent->client",
            {
                "id": 7,
                "method": "fs/write_text_file",
                "params": {**SESSION, "path": PATH, "content": "new\n"},
            },
        ),
    )
    answered = session_lines(("client->agent", {"id": 7, "result": {}}))
    lines += [*write, json.dumps({**disk, "content": found}), *answered]
    lines += session_lines(*middle)
    lines += session_lines(("agent->client", {"id": 2, "result": {"stopReason": "end_turn"}}))
    return lines


def _changes(lines: list[str], pm: pluggy.PluginManager) -> list[FileChangeItem]:
    return [i for i in project_capture(lines, pm=pm) if isinstance(i, FileChangeItem)]


def test_a_write_no_tool_call_owned_is_shown_with_its_true_patch(pm: pluggy.PluginManager) -> None:
    (change,) = _changes(_capture(), pm)
    assert change.tool_call_id is None
    assert change.patch_source == "client_fs"
    assert change.status == "completed"
    assert change.diff_str is not None
    assert apply_patch(change.diff_str, {PATH: "old\n"}) == {PATH: "new\n"}


def test_a_write_of_a_new_file_is_a_creation(pm: pluggy.PluginManager) -> None:
    (change,) = _changes(_capture(found=None), pm)
    assert change.operations == {PATH: "add"}
    assert (change.diff_str or "").startswith("--- /dev/null")


def test_a_write_a_later_tool_call_claims_is_shown_once(pm: pluggy.PluginManager) -> None:
    update = {
        "sessionUpdate": "tool_call",
        "toolCallId": "e",
        "title": "Write notes.txt",
        "kind": "edit",
        "status": "completed",
        "locations": [{"path": "notes.txt"}],
    }
    claimed = (
        "agent->client",
        {"method": "session/update", "params": {**SESSION, "update": update}},
    )
    (change,) = _changes(_capture(claimed), pm)
    assert change.tool_call_id == "e"
    assert change.patch_source == "client_fs"


def test_a_write_whose_file_was_never_known_shows_no_guess(pm: pluggy.PluginManager) -> None:
    lines = [line for line in _capture() if '"dir": "disk"' not in line]
    assert _changes(lines, pm) == []
