"""Recording a live session as a capture: portable paths, flushed lines, the same timeline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_adapters import project_capture
from acp_adapters.capture.format import capture_values
from acp_adapters.transport import ConnectionClosed

from .conftest import fake_agent

pytestmark = pytest.mark.anyio


def entries(path: Path) -> list[dict[str, Any]]:
    """A capture's lines, as the one capture reader reads them (cut at ``\n`` only)."""
    return [value for _, value in capture_values(path)]


def comparable(items: Any, workspace: Path) -> list[dict[str, Any]]:
    """Items as JSON, without times, with the workspace written as the capture writes it."""
    text = json.dumps(
        [
            {k: v for k, v in item.model_dump(mode="json").items() if not k.endswith("_at")}
            for item in items
        ]
    )
    return json.loads(text.replace(str(workspace), "<workspace>"))  # type: ignore[no-any-return]


async def test_a_recorded_session_projects_to_the_same_timeline(
    connect: Any, workspace: Path, tmp_path: Path
) -> None:
    capture = tmp_path / "edit.jsonl"
    async with connect(
        command=fake_agent("edit", str(workspace)),
        cwd=workspace,
        policy="full-access",
        record=capture,
    ) as session:
        await session.prompt("edit")
        live = session.timeline
    lines = entries(capture)
    # The files the edits name, as the client read them around each edit, are kept too, and
    # the checkpoints of the workspace with what they found changed.
    assert {line["dir"] for line in lines} == {
        "client->agent",
        "agent->client",
        "disk",
        "checkpoint",
        "change",
    }
    changes = [line for line in lines if line["dir"] == "change"]
    assert [(c["toolCallId"], c["path"]) for c in changes] == [
        ("edit-1", "<workspace>/existing.txt"),
        ("edit-2", "<workspace>/new.txt"),
    ]
    assert changes[0]["before"]["text"] == "alpha\nbeta\n"
    assert changes[0]["after"]["text"] == "alpha\nBETA changed\n"
    assert changes[1]["before"] is None
    disk = [line for line in lines if line["dir"] == "disk"]
    assert [(d["toolCallId"], d["path"], d["phase"], d["content"]) for d in disk] == [
        ("edit-1", "<workspace>/existing.txt", "before", "alpha\nbeta\n"),
        # The file as the client found it just before it served the agent's write.
        ("edit-1", "<workspace>/existing.txt", "write", "alpha\nbeta\n"),
        ("edit-1", "<workspace>/existing.txt", "after", "alpha\nBETA changed\n"),
        ("edit-2", "<workspace>/new.txt", "before", None),
        ("edit-2", "<workspace>/new.txt", "write", None),
        ("edit-2", "<workspace>/new.txt", "after", "brand new\n"),
    ]
    assert all(isinstance(line["t"], float) for line in lines)
    assert [line["t"] for line in lines] == sorted(line["t"] for line in lines)
    assert str(workspace) not in capture.read_text()
    new = next(m for line in lines if (m := line.get("msg", {})).get("method") == "session/new")
    assert new["params"]["cwd"] == "<workspace>"
    replayed = project_capture(capture)
    assert comparable(replayed, workspace) == comparable(live, workspace)


async def test_every_line_is_on_disk_before_a_crash(
    connect: Any, workspace: Path, tmp_path: Path
) -> None:
    capture = tmp_path / "crash.jsonl"
    async with connect(command=fake_agent("crash"), cwd=workspace, record=capture) as session:
        with pytest.raises(ConnectionClosed):
            await session.prompt("go")
        # Still inside the session: what was received is already written, and the exit.
        lines = entries(capture)
        said = [e["msg"] for e in lines if e.get("msg", {}).get("method") == "session/update"]
        assert said[-1]["params"]["update"]["content"]["text"] == "working"
        # The turn's last checkpoint (what the agent changed before it went) after its exit.
        # (The session's opening checkpoint is taken in the background: it may land late.)
        assert lines[-1]["dir"] == "checkpoint"
        assert lines[-1]["reason"] == "turn_end"
        exit_line = [line for line in lines if line["dir"] != "checkpoint"][-1]
        assert lines.index(exit_line) < len(lines) - 1
        assert exit_line["dir"] == "exit"
        assert exit_line["code"] == 3
        assert "the model went away" in exit_line["stderr"]
    replayed = project_capture(capture)
    error = replayed.items[-1]
    assert error.kind == "error"
    assert error.message == "the agent exited (exit status 3)"  # type: ignore[union-attr]


async def test_lines_that_are_not_json_are_kept_as_text(
    connect: Any, workspace: Path, tmp_path: Path
) -> None:
    capture = tmp_path / "faults.jsonl"
    async with connect(command=fake_agent("faults"), cwd=workspace, record=capture) as session:
        await session.prompt("go")
    raw = [e for e in entries(capture) if e["dir"] == "agent->client(raw)"]
    assert [e["raw"] for e in raw][:2] == [
        "this banner is not JSON",
        '{"jsonrpc": "2.0", "method": "session/upd',
    ]
    assert project_capture(capture).problems == []  # raw lines are not problems
    # A lone surrogate the agent sent is written as its escape: the capture is UTF-8.
    assert "\\ud800" in capture.read_text(encoding="utf-8")
    said = project_capture(capture).of_kind("assistant_message")[-1].text  # type: ignore[union-attr]
    assert said == "a lone surrogate: \ud800, still here"


def test_paths_are_written_as_marks(tmp_path: Path) -> None:
    from acp_adapters.capture.recorder import CaptureRecorder

    home = tmp_path / "home"
    workspace = home / "project"
    workspace.mkdir(parents=True)
    recorder = CaptureRecorder(tmp_path / "c.jsonl", workspace=workspace, home=home)
    recorder.close()
    assert recorder.portable(
        {f"{workspace}/a": [f"{home}/.config", f"{workspace}2/b", f"cd {workspace} && ls"]}
    ) == {"<workspace>/a": ["<home>/.config", "<home>/project2/b", "cd <workspace> && ls"]}
    # A folder is a mark where a path starts (a file URI's too), not inside a longer path.
    assert recorder.portable(
        [f"file://{workspace}/a", f"/mnt{workspace}/a", f"/backup{home}/x", f"x={workspace}"]
    ) == ["file://<workspace>/a", f"/mnt{workspace}/a", f"/backup{home}/x", "x=<workspace>"]


def test_the_agents_own_home_is_written_as_a_mark(workspace: Path, tmp_path: Path) -> None:
    """An agent started with another HOME (a fresh one, for its own configuration)."""
    from acp_adapters.capture.recorder import CaptureRecorder

    agent_home = tmp_path / "agent-home"
    recorder = CaptureRecorder(
        tmp_path / "c.jsonl", workspace=workspace, home=tmp_path / "me", agent_home=agent_home
    )
    recorder.close()
    said = {"output_file": f"{agent_home}/.grok/sessions/1.log", "cwd": str(workspace)}
    assert recorder.portable(said) == {
        "output_file": "<home>/.grok/sessions/1.log",
        "cwd": "<workspace>",
    }


async def test_disk_lines_carry_the_true_patch_and_a_broken_one_is_named(
    connect: Any, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "existing.txt").write_text("one\ntwo\nbeta\nfour\nfive\n")
    capture = tmp_path / "fragment.jsonl"
    async with connect(
        command=fake_agent("fragment", str(workspace)),
        cwd=workspace,
        record=capture,
        checkpoints=False,  # the disk lines alone
    ) as session:
        await session.prompt("edit")
        live = session.timeline
    (change,) = live.of_kind("file_change")
    assert change.patch_source == "disk"
    assert comparable(project_capture(capture), workspace) == comparable(live, workspace)

    lines = capture.read_text(encoding="utf-8").split("\n")  # a capture is cut at \n only
    (before,) = [n for n, line in enumerate(lines) if '"phase": "before"' in line]
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        "\n".join([*lines[:before], '{"dir": "disk", "phase": 3}', *lines[before + 1 :]])
    )
    projected = project_capture(broken)
    assert f"line {before + 1}: not a disk entry" in projected.problems
    (change,) = projected.of_kind("file_change")
    # Only the read as the edit completed is left (the first may have caught the file being
    # written): the agent's fragment is placed in it.
    expected = live.of_kind("file_change")[0].diff_str or ""
    assert change.diff_str == expected.replace(str(workspace), "<workspace>")


async def test_without_disk_patches_nothing_is_read_or_recorded(
    connect: Any, workspace: Path, tmp_path: Path
) -> None:
    capture = tmp_path / "edit.jsonl"
    async with connect(
        command=fake_agent("edit", str(workspace)),
        cwd=workspace,
        policy="full-access",
        record=capture,
        disk_patches=False,
    ) as session:
        turn = await session.prompt("edit")
    assert all(i.patch_source != "disk" for i in turn.items if i.kind == "file_change")  # type: ignore[union-attr]
    assert {line["dir"] for line in entries(capture)} == {"client->agent", "agent->client"}
