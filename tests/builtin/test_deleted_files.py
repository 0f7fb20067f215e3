"""A file an agent deletes itself shows as deleted, with every line it had removed: the disk
read as the delete started held it, the read as it completed found nothing."""

from __future__ import annotations

import json

import pluggy

from acp_adapters import FileChangeItem, project_capture
from capture_lines import one_turn

PATH = "<workspace>/old.txt"


def _disk(phase: str, content: str | None) -> str:
    read = {"toolCallId": "d", "path": PATH, "phase": phase, "content": content}
    return json.dumps({"dir": "disk", "t": 0, **read})


def _deleted(kind: str, pm: pluggy.PluginManager) -> list[FileChangeItem]:
    started = {
        "sessionUpdate": "tool_call",
        "toolCallId": "d",
        "title": "Delete old.txt",
        "kind": kind,
        "status": "in_progress",
        "locations": [{"path": PATH}],
    }
    done = {"sessionUpdate": "tool_call_update", "toolCallId": "d", "status": "completed"}
    lines = one_turn(started, done)
    # The client's reads around it, as a live session records them after each update.
    lines[6:6] = [_disk("before", "one\ntwo\n")]
    lines[8:8] = [_disk("after", None)]
    return [i for i in project_capture(lines, pm=pm) if isinstance(i, FileChangeItem)]


def test_a_file_gone_after_a_delete_is_deleted_with_its_lines(pm: pluggy.PluginManager) -> None:
    (change,) = _deleted("delete", pm)
    assert change.operations == {PATH: "delete"}
    assert change.patch_source == "disk"
    assert (change.diff_str or "").startswith(f"--- {PATH}\n+++ /dev/null\n")
    assert (change.additions, change.deletions) == (0, 2)
    body = (change.diff_str or "").splitlines()[3:]
    assert body == [f"-{line}" for line in "one\ntwo\n".splitlines()]


def test_a_file_gone_after_an_edit_is_no_deletion(pm: pluggy.PluginManager) -> None:
    """An edit that leaves no file behind is not read as a deletion (nothing says it was)."""
    (change,) = _deleted("edit", pm)
    assert change.operations != {PATH: "delete"}
    assert change.patch_source != "disk"
