"""The disk reads around an agent's edits are bounded, and stay inside the session's folders.

For an edit's true patch the client reads each file the tool call names, as it starts
and as it completes. The agent chooses those names: thousands of them, or files outside
the workspace, or a file too large to hold. The client reads a few of them, never one
outside, never more than it can hold; and what it could not read makes no wrong patch.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_adapters import FileChangeItem, diff_patch
from acp_adapters.client.agent_requests import DISK_PATHS, DISK_READ_LIMIT

from .scripts import Script

pytestmark = pytest.mark.anyio

MIB = 1024 * 1024
SECRET = "OUTSIDE: the client must never read this"


def disk_lines(capture: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in capture.read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line.get("dir") == "disk"]


def edit(call_id: str, status: str, **fields: Any) -> dict[str, Any]:
    kind = "tool_call" if status == "pending" else "tool_call_update"
    body = {"sessionUpdate": kind, "toolCallId": call_id, "status": status, **fields}
    if kind == "tool_call":
        body = {"title": "edit many files", "kind": "edit", **body}
    return {"update": body}


async def play(
    connect: Any, workspace: Path, steps: list[dict[str, Any]], **options: Any
) -> tuple[Any, Path]:
    script = Script(workspace.parent / "agent", steps)
    capture = workspace.parent / "capture.jsonl"
    async with connect(command=script.command, cwd=workspace, record=capture, **options) as session:
        with anyio.fail_after(60):
            turn = await session.prompt("go")
    assert turn.stop_reason == "end_turn"
    return session, capture


async def test_an_edit_naming_ten_thousand_paths_reads_a_few_per_phase(
    connect: Any, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for n in range(40):
        (workspace / f"f{n}.txt").write_text(f"file {n}\n", encoding="utf-8")
    located = [{"path": f"f{n}.txt"} for n in range(10_000)]
    raw = {
        "path": str(workspace / "raw.txt"),
        "changes": {str(workspace / f"g{n}.txt"): {} for n in range(10_000)},
    }
    more = [{"path": str(workspace / f"h{n}.txt")} for n in range(10_000)]
    steps = [
        edit("many", "pending", locations=located, rawInput=raw),
        edit("many", "in_progress", locations=more),
        edit("many", "in_progress", rawInput={"path": "again.txt"}),
        edit("many", "completed"),
    ]
    session, capture = await play(connect, workspace, steps, policy="read-only")
    reads = [line for line in disk_lines(capture) if line["toolCallId"] == "many"]
    per_phase = Counter(line["phase"] for line in reads)
    assert 0 < per_phase["before"] <= DISK_PATHS, per_phase
    assert 0 < per_phase["after"] <= DISK_PATHS, per_phase
    assert set(per_phase) == {"before", "after"}
    # Each file once per phase, and the same files after as before.
    before = [line["path"] for line in reads if line["phase"] == "before"]
    after = [line["path"] for line in reads if line["phase"] == "after"]
    assert len(set(before)) == len(before)
    assert sorted(before) == sorted(after)
    # What it read, it read inside the workspace, and truly.
    assert "<workspace>/f0.txt" in before
    first = next(line for line in reads if line["path"] == "<workspace>/f0.txt")
    assert first["content"] == "file 0\n"
    # The session went on: the edit is in its timeline, done.
    (item,) = [i for i in session.timeline if i.tool_call_id == "many"]
    assert item.status == "completed"


async def test_paths_outside_the_workspace_are_never_read(connect: Any, tmp_path: Path) -> None:
    root = tmp_path / "deep"
    workspace = root / "ws"
    workspace.mkdir(parents=True)
    (workspace / "inside.txt").write_text("inside\n", encoding="utf-8")
    (tmp_path / "x").write_text(SECRET, encoding="utf-8")  # ../../x from the workspace
    (root / "y").write_text(SECRET, encoding="utf-8")
    (workspace / "link.txt").symlink_to(tmp_path / "x")
    outside = ["/etc/passwd", "../../x", str(root / "y"), f"{workspace}/../y", "link.txt"]
    steps = [
        edit(
            "out",
            "pending",
            locations=[{"path": p} for p in [*outside, "inside.txt"]],
            rawInput={"file_path": "/etc/passwd", "path": "../../x"},
            content=[{"type": "diff", "path": "../../x", "oldText": "OUT", "newText": "IN"}],
        ),
        edit("out", "completed"),
    ]
    session, capture = await play(connect, workspace, steps, policy="read-only")
    reads = disk_lines(capture)
    assert {(line["path"], line["phase"]) for line in reads} == {
        ("<workspace>/inside.txt", "before"),
        ("<workspace>/inside.txt", "after"),
    }
    text = capture.read_text(encoding="utf-8")
    assert SECRET not in text
    assert "root:" not in text  # /etc/passwd's first line
    for item in session.timeline:
        assert SECRET not in item.model_dump_json()


def _big_file(workspace: Path) -> Path:
    big = workspace / "big.txt"
    line = "line of a large file, long enough to fill it quickly\n"
    big.write_text(line * (20 * MIB // len(line) + 1), encoding="utf-8")
    assert big.stat().st_size > DISK_READ_LIMIT
    return big


def _big_edit(tmp_path: Path) -> tuple[Path, Path, dict[str, Any], list[dict[str, Any]]]:
    """A workspace with a file too large to read, and an edit of a fragment of it that the
    agent reports (pending, then completed) and never makes."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    big = _big_file(workspace)
    fragment = {"type": "diff", "path": str(big), "oldText": "line of", "newText": "LINE OF"}
    steps = [
        edit("big", "pending", content=[fragment], locations=[{"path": str(big)}]),
        edit("big", "completed"),
    ]
    return workspace, big, fragment, steps


async def test_an_edit_of_a_file_too_large_to_read_makes_no_wrong_patch(
    connect: Any, tmp_path: Path
) -> None:
    workspace, big, fragment, steps = _big_edit(tmp_path)
    # The disk reads alone (a session without checkpoints): the checkpoints would know.
    session, capture = await play(connect, workspace, steps, policy="read-only", checkpoints=False)
    reads = [line for line in disk_lines(capture) if line["toolCallId"] == "big"]
    assert {line["phase"] for line in reads} == {"before", "after"}
    for line in reads:
        assert line["path"] == "<workspace>/big.txt"
        assert line.get("unreadable") is True, line
        assert line["content"] is None
    (change,) = [i for i in session.timeline if isinstance(i, FileChangeItem)]
    # The file's patch is not known: the agent's own is kept (as the agent's), never one
    # that says the file was created, emptied or is whatever the client did not read.
    assert change.patch_source == "agent"
    assert change.diff_str == diff_patch([{**fragment}])
    assert change.operations == {str(big): "modify"}


async def test_the_checkpoints_know_a_file_too_large_to_read_did_not_change(
    connect: Any, tmp_path: Path
) -> None:
    workspace, big, _, steps = _big_edit(tmp_path)
    session, _ = await play(connect, workspace, steps, policy="read-only")
    (change,) = [i for i in session.timeline if isinstance(i, FileChangeItem)]
    # Too large for a text in the timeline, not for a hash: the file is as it was.
    assert change.patch_source == "checkpoint"
    assert (change.diff_str, change.diff_omitted_reason) == (None, "unchanged")
    sides = change.checkpoint[str(big.resolve())]
    assert sides.before == sides.after
    assert sides.before is not None
    assert sides.before.size == big.stat().st_size


async def test_a_write_over_a_file_too_large_to_read_makes_no_wrong_patch(
    connect: Any, tmp_path: Path
) -> None:
    """The client could not read the file it was about to write over: the write's patch
    is not known, and is not "created from nothing"."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    big = _big_file(workspace)
    steps = [
        edit("w", "pending", locations=[{"path": str(big)}]),
        {"request": "fs/write_text_file", "params": {"path": str(big), "content": "small\n"}},
        edit("w", "completed"),
    ]
    session, capture = await play(connect, workspace, steps, policy="full-access")
    assert big.read_text(encoding="utf-8") == "small\n"  # the write was served
    (found,) = [line for line in disk_lines(capture) if line["phase"] == "write"]
    assert found["unreadable"] is True
    assert found["content"] is None
    (change,) = [i for i in session.timeline if isinstance(i, FileChangeItem)]
    assert change.patch_source != "client_fs"
    assert not (change.diff_str or "").startswith("--- /dev/null")
